#include "server/jwt.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "server/auth.h"
#include "core/sha256.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

constexpr std::size_t kMaxTokenSize = 16 * 1024;
constexpr std::size_t kMinHs256Secret = 32;  // RFC 7518 3.2: at least the hash's size
constexpr int kMinRsaBits = 2048;

// Owners of OpenSSL objects.
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};
struct BnFree {
  void operator()(BIGNUM* p) const { BN_free(p); }
};
struct ParamBldFree {
  void operator()(OSSL_PARAM_BLD* p) const { OSSL_PARAM_BLD_free(p); }
};
struct ParamFree {
  void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct EcdsaSigFree {
  void operator()(ECDSA_SIG* p) const { ECDSA_SIG_free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Bignum = std::unique_ptr<BIGNUM, BnFree>;

int base64url_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

// Base64url without padding (RFC 7515 2); nullopt for any other character, a length that is
// no encoding's, or bits left over that are not zero.
std::optional<std::string> base64url_decode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  std::uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    const int value = base64url_value(c);
    if (value < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  if ((buffer & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

std::optional<Json> json_object(const std::string& text) {
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!value.is_object()) return std::nullopt;
  return value;
}

const unsigned char* bytes(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// ---------------------------------------------------------------- keys of the JWKS file

std::string member(const Json& key, const char* name, const std::string& at) {
  if (!key.contains(name)) throw Error::InvalidArgument(at + "." + name + ": required");
  if (!key[name].is_string()) throw Error::InvalidArgument(at + "." + name + ": must be a string");
  return key[name].get<std::string>();
}

std::string decoded_member(const Json& key, const char* name, const std::string& at) {
  auto decoded = base64url_decode(member(key, name, at));
  if (!decoded || decoded->empty())
    throw Error::InvalidArgument(at + "." + name + ": must be base64url without padding");
  return *decoded;
}

Pkey pkey_from(const char* type, OSSL_PARAM_BLD* builder, const std::string& at) {
  std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(builder));
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(
      EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* raw = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) <= 0 ||
      EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) <= 0) {
    throw Error::InvalidArgument(at + ": not a valid " + type + " public key");
  }
  Pkey key(raw);
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> check(
      EVP_PKEY_CTX_new_from_pkey(nullptr, raw, nullptr));
  if (!check || EVP_PKEY_public_check(check.get()) != 1)
    throw Error::InvalidArgument(at + ": not a valid " + type + " public key");
  return key;
}

Pkey rsa_key(const Json& jwk, const std::string& at) {
  const std::string n = decoded_member(jwk, "n", at);
  const std::string e = decoded_member(jwk, "e", at);
  Bignum bn_n(BN_bin2bn(bytes(n), static_cast<int>(n.size()), nullptr));
  Bignum bn_e(BN_bin2bn(bytes(e), static_cast<int>(e.size()), nullptr));
  std::unique_ptr<OSSL_PARAM_BLD, ParamBldFree> builder(OSSL_PARAM_BLD_new());
  if (!bn_n || !bn_e || !builder ||
      !OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) ||
      !OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get())) {
    throw Error::InvalidArgument(at + ": not a valid RSA public key");
  }
  Pkey key = pkey_from("RSA", builder.get(), at);
  if (EVP_PKEY_get_bits(key.get()) < kMinRsaBits) {
    throw Error::InvalidArgument(at + ".n: an RSA key of " +
                                 std::to_string(EVP_PKEY_get_bits(key.get())) + " bits (at least " +
                                 std::to_string(kMinRsaBits) + ")");
  }
  return key;
}

Pkey ec_key(const Json& jwk, const std::string& at) {
  const std::string crv = member(jwk, "crv", at);
  if (crv != "P-256")
    throw Error::InvalidArgument(at + ".crv: '" + crv + "' is not supported (expected P-256)");
  const std::string x = decoded_member(jwk, "x", at);
  const std::string y = decoded_member(jwk, "y", at);
  if (x.size() != 32) throw Error::InvalidArgument(at + ".x: must be 32 bytes for P-256");
  if (y.size() != 32) throw Error::InvalidArgument(at + ".y: must be 32 bytes for P-256");
  const std::string point = std::string(1, '\x04') + x + y;  // uncompressed SEC1 point
  std::unique_ptr<OSSL_PARAM_BLD, ParamBldFree> builder(OSSL_PARAM_BLD_new());
  if (!builder ||
      !OSSL_PARAM_BLD_push_utf8_string(builder.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1",
                                       0) ||
      !OSSL_PARAM_BLD_push_octet_string(builder.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                        point.size())) {
    throw Error::InvalidArgument(at + ": not a valid EC public key");
  }
  return pkey_from("EC", builder.get(), at);
}

Json read_jwks(const std::string& path) {
  const std::string at = "auth.jwt.jwks_file";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error::InvalidArgument(at + ": cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  Json jwks = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (jwks.is_discarded()) throw Error::InvalidArgument(at + ": '" + path + "' is not JSON");
  if (!jwks.is_object() || !jwks.contains("keys") || !jwks["keys"].is_array())
    throw Error::InvalidArgument(at + ": must be a JWKS object with a \"keys\" list");
  return jwks;
}

// A JSON number of seconds as an integer (fractions are cut); nullopt for anything else.
std::optional<std::int64_t> seconds_of(const Json& value) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (d > -9e15 && d < 9e15) return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

}  // namespace

struct JwtVerifier::Key {
  std::string kid;  // "" when the JWKS gives none
  std::string alg;  // "RS256" or "ES256"
  Pkey pkey;
};

bool looks_like_jwt(std::string_view credential) {
  std::size_t parts = 1;
  std::size_t length = 0;
  for (char c : credential) {
    if (c == '.') {
      if (length == 0) return false;
      ++parts;
      length = 0;
    } else if (base64url_value(c) < 0) {
      return false;
    } else {
      ++length;
    }
  }
  return parts == 3 && length > 0;
}

JwtVerifier::JwtVerifier(const JwtOptions& options) : options_(options) {
  if (!options.jwks_file.empty()) {
    const Json jwks = read_jwks(options.jwks_file);
    std::set<std::string> kids;
    for (std::size_t i = 0; i < jwks["keys"].size(); ++i) {
      const Json& jwk = jwks["keys"][i];
      const std::string at = "auth.jwt.jwks_file: keys[" + std::to_string(i) + "]";
      if (!jwk.is_object()) throw Error::InvalidArgument(at + ": must be an object");
      if (jwk.contains("use") && jwk["use"] != "sig") continue;  // an encryption key
      const std::string kty = member(jwk, "kty", at);
      auto key = std::make_unique<Key>();
      if (kty == "RSA") {
        key->alg = "RS256";
        key->pkey = rsa_key(jwk, at);
      } else if (kty == "EC") {
        key->alg = "ES256";
        key->pkey = ec_key(jwk, at);
      } else {
        throw Error::InvalidArgument(at + ".kty: '" + kty +
                                     "' is not supported (expected RSA or EC)");
      }
      if (jwk.contains("alg") && jwk["alg"] != key->alg) {
        throw Error::InvalidArgument(at + ".alg: must be " + key->alg + " for a key of kty " + kty);
      }
      if (jwk.contains("kid")) {
        key->kid = member(jwk, "kid", at);
        if (!kids.insert(key->kid).second)
          throw Error::InvalidArgument(at + ".kid: '" + key->kid + "' is declared twice");
      }
      if (std::find(algorithms_.begin(), algorithms_.end(), key->alg) == algorithms_.end())
        algorithms_.push_back(key->alg);
      keys_.push_back(std::move(key));
    }
    if (keys_.empty()) throw Error::InvalidArgument("auth.jwt.jwks_file: holds no signing key");
  }
  if (!options.secret_env.empty()) {
    const std::string at = "auth.jwt.hs256_secret_env";
    const char* secret = std::getenv(options.secret_env.c_str());
    if (secret == nullptr || *secret == '\0')
      throw Error::InvalidArgument(at + ": environment variable " + options.secret_env +
                                   " is not set");
    hs256_secret_ = secret;
    if (hs256_secret_.size() < kMinHs256Secret) {
      throw Error::InvalidArgument(at + ": the secret in " + options.secret_env + " has " +
                                   std::to_string(hs256_secret_.size()) + " bytes (at least " +
                                   std::to_string(kMinHs256Secret) + ")");
    }
    algorithms_.push_back("HS256");
  }
}

JwtVerifier::~JwtVerifier() = default;

const JwtVerifier::Key* JwtVerifier::key_for(const std::string& alg, const std::string* kid,
                                             std::string& refusal) const {
  if (kid != nullptr) {
    for (const auto& key : keys_) {
      if (key->kid != *kid) continue;
      if (key->alg != alg) {
        refusal = "token key id names a key that is not for " + alg;
        return nullptr;
      }
      return key.get();
    }
    refusal = "token key id is not in the key set";
    return nullptr;
  }
  const Key* found = nullptr;
  for (const auto& key : keys_) {
    if (key->alg != alg) continue;
    if (found != nullptr) {
      refusal = "token has no key id and the key set holds more than one " + alg + " key";
      return nullptr;
    }
    found = key.get();
  }
  if (found == nullptr) refusal = "token has no key id and the key set holds no " + alg + " key";
  return found;
}

namespace {

bool hs256_verifies(const std::string& secret, std::string_view input,
                    const std::string& signature) {
  const std::array<unsigned char, 32> mac = core::hmac_sha256(secret, input);
  return signature.size() == mac.size() &&
         CRYPTO_memcmp(mac.data(), signature.data(), mac.size()) == 0;
}

// A JWS ES256 signature (r || s, 32 bytes each) as the DER ECDSA-Sig-Value EVP expects.
std::optional<std::string> es256_der(const std::string& raw) {
  if (raw.size() != 64) return std::nullopt;
  std::unique_ptr<ECDSA_SIG, EcdsaSigFree> sig(ECDSA_SIG_new());
  BIGNUM* r = BN_bin2bn(bytes(raw), 32, nullptr);
  BIGNUM* s = BN_bin2bn(bytes(raw) + 32, 32, nullptr);
  if (!sig || r == nullptr || s == nullptr || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return std::nullopt;
  }
  unsigned char* der = nullptr;
  const int size = i2d_ECDSA_SIG(sig.get(), &der);
  if (size <= 0) return std::nullopt;
  std::string out(reinterpret_cast<const char*>(der), static_cast<std::size_t>(size));
  OPENSSL_free(der);
  return out;
}

bool pkey_verifies(EVP_PKEY* pkey, std::string_view input, const std::string& signature) {
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, pkey) != 1)
    return false;
  return EVP_DigestVerify(ctx.get(), bytes(signature), signature.size(),
                          reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
}

bool audience_holds(const Json& aud, const std::string& audience) {
  if (aud.is_string()) return aud.get<std::string>() == audience;
  if (!aud.is_array()) return false;
  return std::any_of(aud.begin(), aud.end(), [&](const Json& one) {
    return one.is_string() && one.get<std::string>() == audience;
  });
}

}  // namespace

std::optional<Identity> JwtVerifier::verify(std::string_view token, std::string& refusal) const {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return verify(token, std::chrono::duration_cast<std::chrono::seconds>(now).count(), refusal);
}

std::optional<Identity> JwtVerifier::verify(std::string_view token, std::int64_t now_seconds,
                                            std::string& refusal) const {
  if (token.size() > kMaxTokenSize) {
    refusal = "token is too long";
    return std::nullopt;
  }
  if (!looks_like_jwt(token)) {
    refusal = "token is not three base64url parts joined by dots";
    return std::nullopt;
  }
  const std::size_t first = token.find('.');
  const std::size_t second = token.find('.', first + 1);
  const std::string_view signing_input = token.substr(0, second);
  auto header_text = base64url_decode(token.substr(0, first));
  auto claims_text = base64url_decode(token.substr(first + 1, second - first - 1));
  auto signature = base64url_decode(token.substr(second + 1));
  if (!header_text || !claims_text || !signature) {
    refusal = "token is not valid base64url";
    return std::nullopt;
  }
  auto header = json_object(*header_text);
  if (!header) {
    refusal = "token header is not a JSON object";
    return std::nullopt;
  }
  if (!header->contains("alg") || !(*header)["alg"].is_string()) {
    refusal = "token header has no alg";
    return std::nullopt;
  }
  const std::string alg = (*header)["alg"].get<std::string>();
  if (std::find(algorithms_.begin(), algorithms_.end(), alg) == algorithms_.end()) {
    std::string accepted;
    for (const auto& a : algorithms_) accepted += (accepted.empty() ? "" : ", ") + a;
    refusal = "token algorithm is not accepted (accepted: " + accepted + ")";
    return std::nullopt;
  }
  if (header->contains("typ")) {
    const Json& typ = (*header)["typ"];
    std::string lower = typ.is_string() ? typ.get<std::string>() : "";
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower != "jwt" && lower != "at+jwt") {
      refusal = "token type is not JWT";
      return std::nullopt;
    }
  }
  if (header->contains("crit")) {  // RFC 7515 4.1.11: no extension is understood here
    refusal = "token header has crit extensions this server does not understand";
    return std::nullopt;
  }

  bool verifies = false;
  if (alg == "HS256") {
    verifies = hs256_verifies(hs256_secret_, signing_input, *signature);
  } else {
    std::string kid;
    const bool has_kid = header->contains("kid");
    if (has_kid) {
      if (!(*header)["kid"].is_string()) {
        refusal = "token header kid is not a string";
        return std::nullopt;
      }
      kid = (*header)["kid"].get<std::string>();
    }
    const Key* key = key_for(alg, has_kid ? &kid : nullptr, refusal);
    if (key == nullptr) return std::nullopt;
    if (alg == "ES256") {
      auto der = es256_der(*signature);
      verifies = der && pkey_verifies(key->pkey.get(), signing_input, *der);
    } else {
      verifies = pkey_verifies(key->pkey.get(), signing_input, *signature);
    }
  }
  if (!verifies) {
    refusal = "token signature does not verify";
    return std::nullopt;
  }
  auto claims = json_object(*claims_text);
  if (!claims) {
    refusal = "token claims are not a JSON object";
    return std::nullopt;
  }
  return identity_from(*claims, now_seconds, refusal);
}

std::optional<Identity> JwtVerifier::identity_from(const Json& claims, std::int64_t now,
                                                   std::string& refusal) const {
  const std::int64_t skew = options_.clock_skew_seconds;
  if (!claims.contains("exp")) {
    refusal = "token has no exp claim";
    return std::nullopt;
  }
  const auto exp = seconds_of(claims["exp"]);
  if (!exp) {
    refusal = "token exp claim is not a number";
    return std::nullopt;
  }
  if (now >= *exp + skew) {
    refusal = "token expired";
    return std::nullopt;
  }
  for (const char* name : {"nbf", "iat"}) {
    if (!claims.contains(name)) continue;
    const auto at = seconds_of(claims[name]);
    if (!at) {
      refusal = std::string("token ") + name + " claim is not a number";
      return std::nullopt;
    }
    if (*at > now + skew) {
      refusal = std::string(name) == "nbf" ? "token not valid yet" : "token issued in the future";
      return std::nullopt;
    }
  }
  if (!claims.contains("iss") || claims["iss"] != options_.issuer) {
    refusal = "token issuer is not '" + options_.issuer + "'";
    return std::nullopt;
  }
  if (!claims.contains("aud") || !audience_holds(claims["aud"], options_.audience)) {
    refusal = "token audience does not include '" + options_.audience + "'";
    return std::nullopt;
  }
  const std::string& subject_claim = options_.subject_claim;
  if (!claims.contains(subject_claim) || !claims[subject_claim].is_string() ||
      claims[subject_claim].get<std::string>().empty()) {
    refusal = "token has no '" + subject_claim + "' claim (a string)";
    return std::nullopt;
  }
  Identity identity;
  identity.id = claims[subject_claim].get<std::string>();
  identity.authenticated = true;
  if (identity.id.rfind("system:", 0) == 0) {  // the server's own timers act as system:<what>
    refusal = "token subject must not start with 'system:'";
    return std::nullopt;
  }
  if (claims.contains(options_.name_claim) && claims[options_.name_claim].is_string())
    identity.name = claims[options_.name_claim].get<std::string>();
  if (claims.contains(options_.roles_claim)) {
    Json roles = claims[options_.roles_claim];
    if (roles.is_string()) roles = Json::array({roles});
    if (!roles.is_array()) {
      refusal = "token claim '" + options_.roles_claim + "' is not a list of role names";
      return std::nullopt;
    }
    for (const Json& role : roles) {
      if (!role.is_string()) continue;
      const std::string name = role.get<std::string>();
      const auto& known = known_roles();
      if (std::find(known.begin(), known.end(), name) != known.end() && !identity.has_role(name))
        identity.roles.push_back(name);
    }
  }
  if (identity.roles.empty()) identity.roles = {"user"};
  return identity;
}

}  // namespace tollgate::server
