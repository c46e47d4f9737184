// SHA-256 (OpenSSL): the digests of API keys, of review records, of the audit hash chain and
// of tool calls (their idempotency keys); HMAC-SHA256, the signature of webhook deliveries.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace tollgate::core {

std::array<unsigned char, 32> sha256(std::string_view bytes);
// The digest as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);
// HMAC-SHA256 of `bytes` under `key` (JWT HS256, webhook signatures); _hex: 64 lowercase digits.
std::array<unsigned char, 32> hmac_sha256(std::string_view key, std::string_view bytes);
std::string hmac_sha256_hex(std::string_view key, std::string_view bytes);

}  // namespace tollgate::core
