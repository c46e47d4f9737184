#include "core/sha256.h"

#include <openssl/evp.h>

#include "core/hex.h"
#include "tollgate/error.h"

namespace tollgate::core {

std::array<unsigned char, 32> sha256(std::string_view bytes) {
  std::array<unsigned char, 32> digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != digest.size()) {
    throw Error::Internal("SHA-256 failed");
  }
  return digest;
}

std::string sha256_hex(std::string_view bytes) {
  std::string out;
  out.reserve(64);
  for (unsigned char byte : sha256(bytes)) append_hex(out, byte, 2);
  return out;
}

std::array<unsigned char, 32> hmac_sha256(std::string_view key, std::string_view bytes) {
  std::array<unsigned char, 32> mac{};
  std::size_t size = 0;
  if (EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(), key.size(),
                reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), mac.data(),
                mac.size(), &size) == nullptr ||
      size != mac.size()) {
    throw Error::Internal("HMAC-SHA256 failed");
  }
  return mac;
}

std::string hmac_sha256_hex(std::string_view key, std::string_view bytes) {
  std::string out;
  out.reserve(64);
  for (unsigned char byte : hmac_sha256(key, bytes)) core::append_hex(out, byte, 2);
  return out;
}

}  // namespace tollgate::core
