#include "server/ids.h"

#include <openssl/sha.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <random>

#include "core/hex.h"

namespace tollgate::server {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string format_uuid(const std::array<unsigned char, 16>& bytes) {
  std::string out;
  out.reserve(36);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0x0f]);
  }
  return out;
}

using core::hex_value;

// Guards the generator and the last (millis, counter) pair that keeps ids ordered.
std::mutex uuid7_mutex;

}  // namespace

std::string new_uuid7() {
  static std::mt19937_64 rng{std::random_device{}()};
  static std::int64_t last_millis = 0;
  static std::uint32_t counter = 0;
  std::array<unsigned char, 16> bytes{};
  std::uint64_t random_bits = 0;
  std::int64_t millis = now_millis();
  std::uint32_t sequence = 0;
  {
    std::lock_guard lock(uuid7_mutex);
    if (millis <= last_millis) {
      millis = last_millis;
      ++counter;
      if (counter > 0xfff) {  // 4096 ids in one millisecond: borrow the next one
        ++millis;
        counter = 0;
      }
    } else {
      counter = static_cast<std::uint32_t>(rng() & 0x3ff);  // leave room to count up
    }
    last_millis = millis;
    sequence = counter;
    random_bits = rng();
  }
  for (int i = 0; i < 6; ++i) {
    bytes[static_cast<std::size_t>(i)] = static_cast<unsigned char>(millis >> (40 - 8 * i));
  }
  bytes[6] = static_cast<unsigned char>(0x70 | ((sequence >> 8) & 0x0f));
  bytes[7] = static_cast<unsigned char>(sequence & 0xff);
  for (std::size_t i = 8; i < 16; ++i) {
    bytes[i] = static_cast<unsigned char>(random_bits >> (8 * (i - 8)));
  }
  bytes[8] = static_cast<unsigned char>(0x80 | (bytes[8] & 0x3f));
  return format_uuid(bytes);
}

std::string uuid5(std::string_view namespace_uuid, std::string_view name) {
  std::string data;
  for (std::size_t i = 0; i + 1 < namespace_uuid.size(); ++i) {
    if (namespace_uuid[i] == '-') continue;
    data.push_back(
        static_cast<char>(hex_value(namespace_uuid[i]) * 16 + hex_value(namespace_uuid[i + 1])));
    ++i;
  }
  data.append(name);
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < 16; ++i) bytes[i] = digest[i];
  bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0f) | 0x50);
  bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3f) | 0x80);
  return format_uuid(bytes);
}

std::string system_assistant_id(std::string_view graph_id) {
  // The DNS namespace of RFC 4122 with 0x21 in place of 0x10: what the reference uses.
  return uuid5("6ba7b821-9dad-11d1-80b4-00c04fd430c8", graph_id);
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

std::int64_t now_millis() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string iso_timestamp(std::int64_t millis) {
  std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(millis % 1000));
  return buffer;
}

}  // namespace tollgate::server
