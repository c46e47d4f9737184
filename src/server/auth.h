// The auth step of the server (docs/security.md): who a request comes from, proved by an API
// key or a JWT, sent as x-api-key: <credential> or Authorization: Bearer <credential>. With
// auth.jwt configured, a credential of three base64url parts joined by dots is checked as a
// JWT (server/jwt.h), anything else as a key. Keys are kept as SHA-256 digests and compared in
// constant time.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sha256.h"  // sha256_hex: what auth.users[].api_key_sha256 holds
#include "server/http_types.h"
#include "server/identity.h"
#include "tollgate/server.h"

namespace tollgate::server {

class JwtVerifier;

// The roles an identity may have: "user", "reviewer", "admin".
const std::vector<std::string>& known_roles();

// Checks what the options say before anything is served: users with an id, known roles,
// 64-hex-digit digests, no id or digest twice, a JWT section with issuer and audience and a
// key source. Throws Error(kInvalidArgument) naming the field ("auth.users[0].roles[1]: ...").
void validate_auth_options(const AuthOptions& options);

// Whether `host` names the loopback interface ("127.0.0.1", "::1", "localhost", 127.0.0.0/8).
bool is_loopback_host(const std::string& host);

// Thread-safety: immutable once built; authenticate() may be called from any thread.
class Authenticator {
 public:
  // Validates `options` (validate_auth_options) and loads the JWT keys (JwtVerifier); throws
  // Error naming the field.
  explicit Authenticator(const AuthOptions& options);
  ~Authenticator();

  // The identity the request's credential proves; nullopt when it has none or a wrong one,
  // with `refusal` saying which (never the credential).
  std::optional<Identity> authenticate(const HttpRequest& request, std::string& refusal) const;

 private:
  struct KeyUser {
    std::array<unsigned char, 32> digest;
    Identity identity;
  };
  std::optional<Identity> by_api_key(std::string_view key) const;

  std::vector<KeyUser> users_;
  std::unique_ptr<JwtVerifier> jwt_;  // null without auth.jwt
};

}  // namespace tollgate::server
