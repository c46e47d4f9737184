// uuid4(): 122 random bits from the kernel's CSPRNG (getrandom), so ids are unpredictable and
// need no seeded generator shared between threads. The bits are fetched 32 ids at a time into a
// per-thread pool (a syscall per id showed up in the agent cycle's profile); a forked child
// drops the pool it inherited, so parent and child never hand out the same id.
#include <pthread.h>
#include <sys/random.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "tollgate/error.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {

constexpr std::size_t kIdBytes = 16;
constexpr std::size_t kPoolBytes = 32 * kIdBytes;

// Bumped in a forked child: every pool filled before the fork is stale there.
std::atomic<std::uint64_t> g_fork_generation{0};

void fill_from_kernel(std::uint8_t* data, std::size_t size) {
  std::size_t filled = 0;
  while (filled < size) {
    ssize_t n = getrandom(data + filled, size - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error::Internal(std::string("getrandom failed: ") + std::strerror(errno));
    }
    filled += static_cast<std::size_t>(n);
  }
}

struct RandomPool {
  std::array<std::uint8_t, kPoolBytes> bytes{};
  std::size_t used = kPoolBytes;  // empty until first use
  std::uint64_t generation = 0;

  void take(std::uint8_t* out) {
    static std::once_flag at_fork;
    std::call_once(at_fork, [] {
      pthread_atfork(nullptr, nullptr,
                     [] { g_fork_generation.fetch_add(1, std::memory_order_relaxed); });
    });
    const std::uint64_t now = g_fork_generation.load(std::memory_order_relaxed);
    if (used + kIdBytes > bytes.size() || generation != now) {
      fill_from_kernel(bytes.data(), bytes.size());
      used = 0;
      generation = now;
    }
    std::memcpy(out, bytes.data() + used, kIdBytes);
    std::memset(bytes.data() + used, 0, kIdBytes);  // a handed-out id leaves no copy behind
    used += kIdBytes;
  }
};

}  // namespace

std::string uuid4() {
  std::array<std::uint8_t, kIdBytes> bytes{};
  thread_local RandomPool pool;
  pool.take(bytes.data());
  bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0F) | 0x40);  // version 4
  bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3F) | 0x80);  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0x0F];
  }
  return out;
}

}  // namespace tollgate
