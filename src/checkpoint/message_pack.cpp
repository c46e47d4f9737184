#include "checkpoint/message_pack.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace tollgate::checkpoint_internal::message_pack {
namespace {

std::uint64_t length_header(std::size_t length, std::size_t fix_limit, bool has_8_bit_form) {
  if (length <= fix_limit) return 1;
  if (has_8_bit_form && length <= 0xFF) return 2;
  if (length <= 0xFFFF) return 3;
  return 5;
}

}  // namespace

std::uint64_t unsigned_size(std::uint64_t n) {
  if (n < 128) return 1;
  if (n <= 0xFF) return 2;
  if (n <= 0xFFFF) return 3;
  if (n <= 0xFFFFFFFFULL) return 5;
  return 9;
}

std::uint64_t integer_size(std::int64_t n) {
  if (n >= 0) return unsigned_size(static_cast<std::uint64_t>(n));
  if (n >= -32) return 1;
  if (n >= INT8_MIN) return 2;
  if (n >= INT16_MIN) return 3;
  if (n >= INT32_MIN) return 5;
  return 9;
}

std::uint64_t float_size(double n) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wfloat-equal"
  const bool fits_float = n >= static_cast<double>(std::numeric_limits<float>::lowest()) &&
                          n <= static_cast<double>(std::numeric_limits<float>::max()) &&
                          static_cast<double>(static_cast<float>(n)) == n;
#pragma GCC diagnostic pop
  return fits_float ? 5 : 9;
}

std::uint64_t string_size(std::size_t length) {
  return length_header(length, 31, true) + length;
}

std::uint64_t binary_size(std::size_t length) {
  return (length <= 0xFF ? 2 : length <= 0xFFFF ? 3 : 5) + length;
}

std::uint64_t container_header_size(std::size_t count) {
  return length_header(count, 15, false);
}

// ------------------------------------------------------------------------------- Writer

void Writer::marked(std::uint32_t marker, std::uint64_t n, int bytes) {
  byte(marker);
  for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) byte((n >> shift) & 0xFF);
}

void Writer::length(std::size_t n, std::uint32_t fix, std::size_t fix_limit,
                    std::uint32_t marker8, std::uint32_t marker16, std::uint32_t marker32) {
  if (n <= fix_limit) return byte(fix | static_cast<std::uint32_t>(n));
  if (marker8 != 0 && n <= 0xFF) return marked(marker8, n, 1);
  if (n <= 0xFFFF) return marked(marker16, n, 2);
  marked(marker32, n, 4);
}

void Writer::string(std::string_view text) {
  length(text.size(), 0xA0, 31, 0xD9, 0xDA, 0xDB);
  out_ = std::copy(text.begin(), text.end(), out_);
}

void Writer::binary(const std::uint8_t* data, std::size_t length) {
  if (length <= 0xFF) {
    marked(0xC4, length, 1);
  } else if (length <= 0xFFFF) {
    marked(0xC5, length, 2);
  } else {
    marked(0xC6, length, 4);
  }
  out_ = std::copy(data, data + length, out_);
}

void Writer::unsigned_integer(std::uint64_t n) {
  if (n < 128) return byte(static_cast<std::uint32_t>(n));
  if (n <= 0xFF) return marked(0xCC, n, 1);
  if (n <= 0xFFFF) return marked(0xCD, n, 2);
  if (n <= 0xFFFFFFFFULL) return marked(0xCE, n, 4);
  marked(0xCF, n, 8);
}

void Writer::integer(std::int64_t n) {
  if (n >= 0) return unsigned_integer(static_cast<std::uint64_t>(n));
  const auto bits = static_cast<std::uint64_t>(n);  // two's complement
  if (n >= -32) return byte(static_cast<std::uint32_t>(bits & 0xFF));
  if (n >= INT8_MIN) return marked(0xD0, bits, 1);
  if (n >= INT16_MIN) return marked(0xD1, bits, 2);
  if (n >= INT32_MIN) return marked(0xD2, bits, 4);
  marked(0xD3, bits, 8);
}

void Writer::float_number(double n) {
  if (float_size(n) == 5) {
    std::uint32_t bits = 0;
    const auto narrow = static_cast<float>(n);
    std::memcpy(&bits, &narrow, sizeof bits);
    return marked(0xCA, bits, 4);
  }
  std::uint64_t bits = 0;
  std::memcpy(&bits, &n, sizeof bits);
  marked(0xCB, bits, 8);
}

// ------------------------------------------------------------------------------- Reader

std::uint8_t Reader::byte() {
  if (at_ == end_) throw Mismatch();
  return *at_++;
}

std::uint64_t Reader::big_endian(int bytes) {
  if (end_ - at_ < bytes) throw Mismatch();
  std::uint64_t n = 0;
  for (int i = 0; i < bytes; ++i) n = (n << 8) | *at_++;
  return n;
}

std::size_t Reader::container(std::uint8_t fix, std::uint8_t fix_limit, std::uint8_t marker16,
                              std::uint8_t marker32, std::size_t bytes_per_item) {
  const std::uint8_t b = byte();
  std::size_t count = 0;
  if (b >= fix && b <= fix + fix_limit) {
    count = b - fix;
  } else if (b == marker16) {
    count = big_endian(2);
  } else if (b == marker32) {
    count = big_endian(4);
  } else {
    throw Mismatch();
  }
  // Each item takes a byte at least: a count the rest cannot hold is damage, refused before a
  // caller sizes anything by it.
  if (count > static_cast<std::size_t>(end_ - at_) / bytes_per_item) throw Mismatch();
  return count;
}

std::size_t Reader::map_header() {
  return container(0x80, 15, 0xDE, 0xDF, 2);
}

std::size_t Reader::array_header() {
  return container(0x90, 15, 0xDC, 0xDD, 1);
}

std::string_view Reader::string() {
  const std::uint8_t b = byte();
  std::size_t length = 0;
  if (b >= 0xA0 && b <= 0xBF) {
    length = b - 0xA0;
  } else if (b == 0xD9) {
    length = big_endian(1);
  } else if (b == 0xDA) {
    length = big_endian(2);
  } else if (b == 0xDB) {
    length = big_endian(4);
  } else {
    throw Mismatch();
  }
  return take(length);
}

std::string_view Reader::binary() {
  const std::uint8_t b = byte();
  if (b < 0xC4 || b > 0xC6) throw Mismatch();
  return take(big_endian(b == 0xC4 ? 1 : b == 0xC5 ? 2 : 4));
}

std::string_view Reader::take(std::size_t length) {
  if (static_cast<std::size_t>(end_ - at_) < length) throw Mismatch();
  std::string_view bytes(reinterpret_cast<const char*>(at_), length);
  at_ += length;
  return bytes;
}

std::uint64_t Reader::unsigned_integer() {
  if (at_ != end_ && *at_ == 0xCF) {
    ++at_;
    return big_endian(8);
  }
  const std::int64_t n = integer();
  if (n < 0) throw Mismatch();
  return static_cast<std::uint64_t>(n);
}

std::int64_t Reader::integer() {
  const std::uint8_t b = byte();
  if (b <= 0x7F) return b;
  if (b >= 0xE0) return static_cast<std::int8_t>(b);
  switch (b) {
    case 0xCC: return static_cast<std::int64_t>(big_endian(1));
    case 0xCD: return static_cast<std::int64_t>(big_endian(2));
    case 0xCE: return static_cast<std::int64_t>(big_endian(4));
    case 0xCF: {
      const std::uint64_t n = big_endian(8);
      if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) throw Mismatch();
      return static_cast<std::int64_t>(n);
    }
    case 0xD0: return static_cast<std::int8_t>(big_endian(1));
    case 0xD1: return static_cast<std::int16_t>(big_endian(2));
    case 0xD2: return static_cast<std::int32_t>(big_endian(4));
    case 0xD3: return static_cast<std::int64_t>(big_endian(8));
    default: throw Mismatch();
  }
}

}  // namespace tollgate::checkpoint_internal::message_pack
