#include "core/ids.h"

#include <openssl/sha.h>
#include <pthread.h>
#include <sys/random.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <random>

#include "core/hex.h"
#include "tollgate/error.h"

namespace tollgate::core {
namespace {

// ------------------------------------------------------------------------------ randomness

// Bumped in a forked child: every pool and generator filled before the fork is stale there.
std::atomic<std::uint64_t> g_fork_generation{0};

std::uint64_t fork_generation() {
  // A function-local static costs a check of one byte after the first call; std::call_once
  // cost ~15 ns on every call, on a path taken for every id.
  [[maybe_unused]] static const bool registered = [] {
    return pthread_atfork(nullptr, nullptr,
                          [] { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }) == 0;
  }();
  return g_fork_generation.load(std::memory_order_relaxed);
}

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

// Random bytes fetched from the kernel 512 at a time: a syscall per id showed up in the agent
// cycle's profile.
class RandomPool {
 public:
  // Copies `size` (at most 16) fresh random bytes to `out`.
  void take(std::uint8_t* out, std::size_t size) {
    assert(size <= 16);
    const std::uint64_t generation = fork_generation();
    if (used_ + size > bytes_.size() || generation_ != generation) {
      fill_from_kernel(bytes_.data(), bytes_.size());
      used_ = 0;
      generation_ = generation;
    }
    std::memcpy(out, bytes_.data() + used_, size);
    std::memset(bytes_.data() + used_, 0, size);  // a handed-out id leaves no copy behind
    used_ += size;
  }

 private:
  std::array<std::uint8_t, 32 * 16> bytes_{};
  std::size_t used_ = bytes_.size();  // empty until first use
  std::uint64_t generation_ = 0;
};

void random_bytes(std::uint8_t* out, std::size_t size) {
  thread_local RandomPool pool;
  pool.take(out, size);
}

// 64 bits that must differ between threads and processes but need not be secret (a
// checkpoint id's node): a per-thread generator seeded from the kernel, and seeded again in a
// forked child. Kernel bytes cost about 20 ns each, too much for an id every step.
std::uint64_t fast_random_bits() {
  struct Generator {
    std::mt19937_64 engine;
    std::uint64_t generation = 0;
    bool seeded = false;
  };
  thread_local Generator generator;
  const std::uint64_t generation = fork_generation();
  if (!generator.seeded || generator.generation != generation) {
    std::array<std::uint8_t, 8> seed{};
    random_bytes(seed.data(), seed.size());
    std::uint64_t value = 0;
    for (std::uint8_t byte : seed) value = (value << 8) | byte;
    generator.engine.seed(value);
    generator.generation = generation;
    generator.seeded = true;
  }
  return generator.engine();
}

// ----------------------------------------------------------------------------------- time

std::int64_t nanos_since_epoch(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(clock.now().time_since_epoch())
      .count();
}

// Raises `last` to a value above it: `candidate` when that is greater, else last + 1.
std::uint64_t next_increasing(std::atomic<std::uint64_t>& last, std::uint64_t candidate) {
  std::uint64_t previous = last.load(std::memory_order_relaxed);
  while (true) {
    const std::uint64_t next = candidate > previous ? candidate : previous + 1;
    if (last.compare_exchange_weak(previous, next, std::memory_order_relaxed)) return next;
  }
}

// 100-nanosecond intervals between the Gregorian epoch (1582-10-15) and the Unix epoch.
constexpr std::int64_t kGregorianOffset = 0x01B21DD213814000LL;

}  // namespace

// ------------------------------------------------------------------------------------ ids

std::string format_uuid(const std::array<std::uint8_t, 16>& bytes) {
  std::string out(36, '-');
  std::size_t at = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) ++at;  // past the dash
    put_hex(out.data() + at, bytes[i], 2);
    at += 2;
  }
  return out;
}

std::string uuid4() {
  std::array<std::uint8_t, 16> bytes{};
  random_bytes(bytes.data(), bytes.size());
  bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0F) | 0x40);  // version 4
  bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3F) | 0x80);  // RFC 4122 variant
  return format_uuid(bytes);
}

std::string uuid5(std::string_view namespace_uuid, std::string_view name) {
  assert(is_uuid(namespace_uuid));
  std::string data;
  data.reserve(16 + name.size());
  for (std::size_t i = 0; i < namespace_uuid.size(); ++i) {
    if (namespace_uuid[i] == '-') continue;
    data.push_back(static_cast<char>(hex_byte_at(namespace_uuid, i)));
    ++i;
  }
  data.append(name);
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  std::array<std::uint8_t, 16> bytes{};
  std::memcpy(bytes.data(), digest, bytes.size());
  bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0F) | 0x50);  // version 5
  bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3F) | 0x80);
  return format_uuid(bytes);
}

std::string uuid7(const Clock& clock) {
  // The last id's (millisecond << 12 | counter): one word, so ordering needs no lock.
  static std::atomic<std::uint64_t> last{0};
  constexpr std::int64_t kMaxMillis = (std::int64_t{1} << 48) - 1;
  const std::int64_t millis = std::clamp<std::int64_t>(now_millis(clock), 0, kMaxMillis);
  std::array<std::uint8_t, 10> random{};
  random_bytes(random.data(), random.size());
  // A new millisecond starts its counter low and random, leaving room to count up.
  const std::uint64_t start = ((random[8] << 8) | random[9]) & 0x3FF;
  const std::uint64_t stamp =
      next_increasing(last, (static_cast<std::uint64_t>(millis) << 12) | start);
  const std::uint64_t time = stamp >> 12;
  const std::uint64_t counter = stamp & 0xFFF;
  std::array<std::uint8_t, 16> bytes{};
  for (std::size_t i = 0; i < 6; ++i) {
    bytes[i] = static_cast<std::uint8_t>(time >> (40 - 8 * i));
  }
  bytes[6] = static_cast<std::uint8_t>(0x70 | (counter >> 8));  // version 7
  bytes[7] = static_cast<std::uint8_t>(counter & 0xFF);
  std::memcpy(bytes.data() + 8, random.data(), 8);
  bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3F) | 0x80);
  return format_uuid(bytes);
}

std::string checkpoint_id(std::int64_t step, const Clock& clock) {
  static std::atomic<std::uint64_t> last{0};
  const std::int64_t intervals = nanos_since_epoch(clock) / 100 + kGregorianOffset;
  const std::uint64_t ts =
      next_increasing(last, static_cast<std::uint64_t>(std::max<std::int64_t>(intervals, 0))) &
      0x0FFFFFFFFFFFFFFFULL;  // 60 bits
  const auto time_high = static_cast<std::uint32_t>(ts >> 28);
  const auto time_mid = static_cast<std::uint16_t>((ts >> 12) & 0xFFFF);
  const auto time_low_and_version = static_cast<std::uint16_t>(0x6000 | (ts & 0x0FFF));
  const auto clock_sequence =
      static_cast<std::uint16_t>(0x8000 | (static_cast<std::uint64_t>(step) & 0x3FFF));
  // "%08x-%04x-%04x-%04x-%012llx", formatted by hand (snprintf showed in profiles).
  std::string id(36, '-');
  put_hex(id.data(), time_high, 8);
  put_hex(id.data() + 9, time_mid, 4);
  put_hex(id.data() + 14, time_low_and_version, 4);
  put_hex(id.data() + 19, clock_sequence, 4);
  put_hex(id.data() + 24, fast_random_bits() & 0xFFFFFFFFFFFFULL, 12);
  return id;
}

bool is_uuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
    } else if (hex_value(text[i]) < 0) {
      return false;
    }
  }
  return true;
}

}  // namespace tollgate::core
