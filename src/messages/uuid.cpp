// uuid4(): 122 random bits from the kernel (getrandom), so ids are unpredictable and need no
// seeded generator shared between threads.
#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "tollgate/error.h"
#include "tollgate/messages.h"

namespace tollgate {

std::string uuid4() {
  std::array<std::uint8_t, 16> bytes{};
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    ssize_t n = getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error::Internal(std::string("getrandom failed: ") + std::strerror(errno));
    }
    filled += static_cast<std::size_t>(n);
  }
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
