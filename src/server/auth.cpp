#include "server/auth.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <set>

#include "core/hex.h"
#include "core/sha256.h"
#include "server/jwt.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

// The 32 bytes of a 64-hex-digit digest; nullopt when it is not one.
std::optional<std::array<unsigned char, 32>> digest_from_hex(const std::string& hex) {
  if (hex.size() != 64) return std::nullopt;
  std::array<unsigned char, 32> digest{};
  for (std::size_t i = 0; i < digest.size(); ++i) {
    const int byte = core::hex_byte_at(hex, 2 * i);
    if (byte < 0) return std::nullopt;
    digest[i] = static_cast<unsigned char>(byte);
  }
  return digest;
}

std::string trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return std::string(text);
}

// What the request presents: x-api-key, else the token of "Authorization: Bearer <token>".
std::string presented_credential(const HttpRequest& request, bool& bearer) {
  bearer = false;
  std::string key = trimmed(request.header("x-api-key"));
  if (!key.empty()) return key;
  const std::string authorization = trimmed(request.header("authorization"));
  constexpr std::string_view kBearer = "bearer ";
  if (authorization.size() > kBearer.size()) {
    std::string scheme = authorization.substr(0, kBearer.size());
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (scheme == kBearer) {
      bearer = true;
      return trimmed(std::string_view(authorization).substr(kBearer.size()));
    }
  }
  return "";
}

}  // namespace

const std::vector<std::string>& known_roles() {
  static const std::vector<std::string> roles = {"user", "reviewer", "admin"};
  return roles;
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

void validate_auth_options(const AuthOptions& options) {
  std::set<std::string> ids;
  std::set<std::string> digests;
  for (std::size_t i = 0; i < options.users.size(); ++i) {
    const AuthUser& user = options.users[i];
    const std::string at = "auth.users[" + std::to_string(i) + "]";
    if (user.id.empty()) throw Error::InvalidArgument(at + ".id: required");
    if (user.id.rfind("system:", 0) == 0) {  // the server's own timers act as system:<what>
      throw Error::InvalidArgument(at + ".id: '" + user.id +
                                   "' must not start with 'system:' (the server's own identities)");
    }
    if (!ids.insert(user.id).second)
      throw Error::InvalidArgument(at + ".id: '" + user.id + "' is declared twice");
    if (user.roles.empty())
      throw Error::InvalidArgument(at + ".roles: required (user, reviewer or admin)");
    for (std::size_t r = 0; r < user.roles.size(); ++r) {
      if (std::find(known_roles().begin(), known_roles().end(), user.roles[r]) ==
          known_roles().end()) {
        throw Error::InvalidArgument(at + ".roles[" + std::to_string(r) + "]: unknown role '" +
                                     user.roles[r] + "' (expected user, reviewer, admin)");
      }
    }
    if (!digest_from_hex(user.api_key_sha256)) {
      throw Error::InvalidArgument(at +
                                   ".api_key_sha256: must be 64 hex digits (the SHA-256 of the "
                                   "key, e.g. from `printf %s KEY | sha256sum`)");
    }
    std::string lower = user.api_key_sha256;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!digests.insert(lower).second)
      throw Error::InvalidArgument(at + ".api_key_sha256: another user has the same key");
  }
  if (options.jwt) {
    const JwtOptions& jwt = *options.jwt;
    if (jwt.issuer.empty()) throw Error::InvalidArgument("auth.jwt.issuer: required");
    if (jwt.audience.empty()) throw Error::InvalidArgument("auth.jwt.audience: required");
    if (jwt.jwks_file.empty() && jwt.secret_env.empty())
      throw Error::InvalidArgument("auth.jwt: needs jwks_file or hs256_secret_env");
    if (jwt.subject_claim.empty()) throw Error::InvalidArgument("auth.jwt.subject_claim: empty");
    if (jwt.roles_claim.empty()) throw Error::InvalidArgument("auth.jwt.roles_claim: empty");
    if (jwt.clock_skew_seconds < 0)
      throw Error::InvalidArgument("auth.jwt.clock_skew_seconds: must not be negative");
  }
}

Authenticator::Authenticator(const AuthOptions& options) {
  validate_auth_options(options);
  if (options.jwt) jwt_ = std::make_unique<JwtVerifier>(*options.jwt);
  for (const AuthUser& user : options.users) {
    users_.push_back(KeyUser{*digest_from_hex(user.api_key_sha256),
                             Identity{user.id, user.name, user.roles, true}});
  }
}

Authenticator::~Authenticator() = default;

std::optional<Identity> Authenticator::by_api_key(std::string_view key) const {
  const std::array<unsigned char, 32> digest = core::sha256(key);
  const KeyUser* found = nullptr;
  // Every digest is compared, each in constant time, so the time taken says nothing of which
  // (if any) matched.
  for (const KeyUser& user : users_) {
    if (CRYPTO_memcmp(user.digest.data(), digest.data(), digest.size()) == 0) found = &user;
  }
  if (found == nullptr) return std::nullopt;
  return found->identity;
}

std::optional<Identity> Authenticator::authenticate(const HttpRequest& request,
                                                    std::string& refusal) const {
  bool bearer = false;
  const std::string credential = presented_credential(request, bearer);
  (void)bearer;
  if (credential.empty()) {
    refusal = jwt_ ? "Authentication required: send an API key or a token as x-api-key or "
                     "Authorization: Bearer"
                   : "Authentication required: send an API key as x-api-key or "
                     "Authorization: Bearer";
    return std::nullopt;
  }
  // A JWT-shaped credential is only ever a token when tokens are configured: it is not also
  // tried as a key, so a refusal names what failed in the token.
  if (jwt_ && looks_like_jwt(credential)) return jwt_->verify(credential, refusal);
  if (auto identity = by_api_key(credential)) return identity;
  refusal = "Invalid API key";
  return std::nullopt;
}

}  // namespace tollgate::server
