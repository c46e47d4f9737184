// parse_auth_options: the `auth` section of a config file into AuthOptions.
#include "server/auth.h"
#include "server/config_fields.h"
#include "tollgate/error.h"

namespace tollgate {
namespace {

using server::object_at;
using server::only_keys;
using server::string_at;
using server::strings_at;

AuthUser parse_user(const Json& value, const std::string& at) {
  const Json& user = object_at(value, at);
  only_keys(user, at, {"id", "name", "roles", "api_key_sha256"});
  return AuthUser{string_at(user, "id", at), string_at(user, "name", at),
                  strings_at(user, "roles", at), string_at(user, "api_key_sha256", at)};
}

JwtOptions parse_jwt(const Json& value, const std::filesystem::path& base_dir) {
  const std::string at = "auth.jwt";
  const Json& jwt = object_at(value, at);
  only_keys(jwt, at,
            {"issuer", "audience", "jwks_file", "hs256_secret_env", "subject_claim",
             "roles_claim", "name_claim", "clock_skew_seconds"});
  JwtOptions options;
  options.issuer = string_at(jwt, "issuer", at);
  options.audience = string_at(jwt, "audience", at);
  options.jwks_file = string_at(jwt, "jwks_file", at);
  if (!options.jwks_file.empty() && std::filesystem::path(options.jwks_file).is_relative())
    options.jwks_file = (base_dir / options.jwks_file).lexically_normal().string();
  options.secret_env = string_at(jwt, "hs256_secret_env", at);
  options.subject_claim = string_at(jwt, "subject_claim", at, options.subject_claim);
  options.roles_claim = string_at(jwt, "roles_claim", at, options.roles_claim);
  options.name_claim = string_at(jwt, "name_claim", at, options.name_claim);
  if (jwt.contains("clock_skew_seconds")) {
    if (!jwt["clock_skew_seconds"].is_number_integer())
      throw Error::InvalidArgument(at + ".clock_skew_seconds: must be an integer");
    options.clock_skew_seconds = jwt["clock_skew_seconds"].get<int>();
  }
  return options;
}

}  // namespace

AuthOptions parse_auth_options(const Json& section, const std::filesystem::path& base_dir) {
  const Json& auth = object_at(section, "auth");
  only_keys(auth, "auth", {"users", "jwt", "cors_origins"});
  AuthOptions options;
  if (auth.contains("users")) {
    if (!auth["users"].is_array()) throw Error::InvalidArgument("auth.users: must be a list");
    for (std::size_t i = 0; i < auth["users"].size(); ++i)
      options.users.push_back(parse_user(auth["users"][i], "auth.users[" + std::to_string(i) + "]"));
  }
  if (auth.contains("jwt")) options.jwt = parse_jwt(auth["jwt"], base_dir);
  options.cors_origins = strings_at(auth, "cors_origins", "auth");
  server::validate_auth_options(options);
  return options;
}

}  // namespace tollgate
