// SHA-256 (OpenSSL): the digests of API keys, of review records and of the audit hash chain.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace tollgate::server {

std::array<unsigned char, 32> sha256(std::string_view bytes);
// The digest as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace tollgate::server
