// JSON Web Tokens (RFC 7519, compact JWS) as credentials of `tollgate serve` (docs/security.md):
// RS256 and ES256 with the public keys of a JWKS file, HS256 with a secret read from an
// environment variable. A token proves an identity when its signature verifies with a
// configured key and its claims hold: exp (required), nbf and iat (optional) within the clock
// skew, iss equal to the issuer, aud holding the audience.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/identity.h"
#include "tollgate/server.h"

namespace tollgate::server {

// Whether `credential` has the shape of a compact JWS: three non-empty base64url parts joined
// by two dots. Only the shape: nothing is decoded or verified.
bool looks_like_jwt(std::string_view credential);

// Thread-safety: immutable once built; verify() may be called from any thread.
class JwtVerifier {
 public:
  // Loads the JWKS file and reads the HS256 secret once. Throws Error(kInvalidArgument) naming
  // the field: "auth.jwt.jwks_file: keys[1].crv: 'P-384' is not supported (expected P-256)",
  // "auth.jwt.hs256_secret_env: environment variable TOLLGATE_JWT_SECRET is not set".
  explicit JwtVerifier(const JwtOptions& options);
  ~JwtVerifier();
  JwtVerifier(const JwtVerifier&) = delete;
  JwtVerifier& operator=(const JwtVerifier&) = delete;

  // The identity `token` proves at `now_seconds` (seconds since the Unix epoch); nullopt with
  // `refusal` naming what failed ("token expired", "token signature does not verify"), never
  // quoting the token.
  std::optional<Identity> verify(std::string_view token, std::int64_t now_seconds,
                                 std::string& refusal) const;
  // The same at the system clock's time.
  std::optional<Identity> verify(std::string_view token, std::string& refusal) const;

  // The algorithms tokens may use: "RS256" / "ES256" when the JWKS holds such keys, "HS256"
  // when a secret is configured.
  const std::vector<std::string>& algorithms() const { return algorithms_; }

 private:
  struct Key;
  const Key* key_for(const std::string& alg, const std::string* kid, std::string& refusal) const;
  std::optional<Identity> identity_from(const Json& claims, std::int64_t now_seconds,
                                        std::string& refusal) const;

  JwtOptions options_;
  std::vector<std::unique_ptr<Key>> keys_;
  std::string hs256_secret_;
  std::vector<std::string> algorithms_;
};

}  // namespace tollgate::server
