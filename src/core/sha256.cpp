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

}  // namespace tollgate::core
