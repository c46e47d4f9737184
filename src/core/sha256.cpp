#include "core/sha256.h"

#include <openssl/evp.h>

#include "core/hex.h"
#include "tollgate/error.h"

namespace tollgate::core {

namespace {

// The provider's SHA-256, fetched once: EVP_sha256() names the algorithm, which OpenSSL 3
// looks up in its providers again at every digest. Never freed (it lives as long as the
// process, like OpenSSL's own tables).
const EVP_MD* sha256_md() {
  static const EVP_MD* const md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched != nullptr ? fetched : EVP_sha256();
  }();
  return md;
}

}  // namespace

std::array<unsigned char, 32> sha256(std::string_view bytes) {
  std::array<unsigned char, 32> digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, sha256_md(), nullptr) != 1 ||
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
