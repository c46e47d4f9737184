// JSON Web Tokens as credentials: tokens signed here with keys OpenSSL generates in the test
// (RS256, ES256, HS256), checked by JwtVerifier and by the Authenticator.
#include "server/jwt.h"

#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "server/auth.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

constexpr std::int64_t kNow = 1'800'000'000;
constexpr const char* kSecretEnv = "TOLLGATE_JWT_TEST_SECRET";
const std::string kSecret = "0123456789abcdef0123456789abcdef-test-secret";

std::string base64url(std::string_view data) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char c : data) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(alphabet[(buffer >> bits) & 0x3F]);
    }
  }
  if (bits > 0) out.push_back(alphabet[(buffer << (6 - bits)) & 0x3F]);
  return out;
}

std::string bn_bytes(const BIGNUM* bn, int size = 0) {
  std::string out(static_cast<std::size_t>(size > 0 ? size : BN_num_bytes(bn)), '\0');
  BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size()));
  return out;
}

std::string bn_param(EVP_PKEY* key, const char* name, int size = 0) {
  BIGNUM* bn = nullptr;
  EXPECT_EQ(EVP_PKEY_get_bn_param(key, name, &bn), 1) << name;
  std::string out = bn_bytes(bn, size);
  BN_free(bn);
  return out;
}

// A key pair generated for the test, with its public half as a JWK.
struct TestKey {
  explicit TestKey(const std::string& alg_) : alg(alg_) {
    key = alg == "RS256" ? EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(2048))
                         : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
    EXPECT_NE(key, nullptr);
  }
  ~TestKey() { EVP_PKEY_free(key); }
  TestKey(const TestKey&) = delete;
  TestKey& operator=(const TestKey&) = delete;

  Json jwk(const std::string& kid = "") const {
    Json out = alg == "RS256" ? Json{{"kty", "RSA"},
                                     {"n", base64url(bn_param(key, OSSL_PKEY_PARAM_RSA_N))},
                                     {"e", base64url(bn_param(key, OSSL_PKEY_PARAM_RSA_E))}}
                              : Json{{"kty", "EC"},
                                     {"crv", "P-256"},
                                     {"x", base64url(bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, 32))},
                                     {"y", base64url(bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, 32))}};
    if (!kid.empty()) out["kid"] = kid;
    return out;
  }

  // The JWS signature of `input`: PKCS#1 v1.5 for RS256, r || s for ES256.
  std::string sign(const std::string& input) const {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EXPECT_EQ(EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key), 1);
    std::size_t size = 0;
    const auto* data = reinterpret_cast<const unsigned char*>(input.data());
    EXPECT_EQ(EVP_DigestSign(ctx, nullptr, &size, data, input.size()), 1);
    std::string signature(size, '\0');
    EXPECT_EQ(EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(signature.data()), &size, data,
                             input.size()),
              1);
    signature.resize(size);
    EVP_MD_CTX_free(ctx);
    if (alg == "RS256") return signature;
    const auto* der = reinterpret_cast<const unsigned char*>(signature.data());
    ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &der, static_cast<long>(signature.size()));
    std::string raw = bn_bytes(ECDSA_SIG_get0_r(sig), 32) + bn_bytes(ECDSA_SIG_get0_s(sig), 32);
    ECDSA_SIG_free(sig);
    return raw;
  }

  std::string alg;
  EVP_PKEY* key = nullptr;
};

std::string hs256(const std::string& secret, const std::string& input) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  std::size_t size = 0;
  EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, secret.data(), secret.size(),
            reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, sizeof mac,
            &size);
  return std::string(reinterpret_cast<const char*>(mac), size);
}

Json good_claims() {
  return Json{{"iss", "https://id.example.com"},
              {"aud", "tollgate"},
              {"sub", "alice"},
              {"name", "Alice"},
              {"exp", kNow + 600},
              {"iat", kNow - 10}};
}

std::string signing_input(const Json& header, const Json& claims) {
  return base64url(header.dump()) + "." + base64url(claims.dump());
}

std::string token(const TestKey& key, const Json& claims, const std::string& kid = "") {
  Json header{{"alg", key.alg}, {"typ", "JWT"}};
  if (!kid.empty()) header["kid"] = kid;
  const std::string input = signing_input(header, claims);
  return input + "." + base64url(key.sign(input));
}

std::string hs256_token(const Json& claims, const std::string& secret = kSecret) {
  const std::string input = signing_input(Json{{"alg", "HS256"}, {"typ", "JWT"}}, claims);
  return input + "." + base64url(hs256(secret, input));
}

class JwtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tollgate_jwt_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    ::setenv(kSecretEnv, kSecret.c_str(), 1);
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    ::unsetenv(kSecretEnv);
  }

  std::string write_jwks(const Json& keys) {
    const auto path = dir_ / "jwks.json";
    std::ofstream(path) << Json{{"keys", keys}}.dump();
    return path.string();
  }
  JwtOptions options(const Json& keys, bool hs256 = false) {
    JwtOptions jwt;
    jwt.issuer = "https://id.example.com";
    jwt.audience = "tollgate";
    if (!keys.empty()) jwt.jwks_file = write_jwks(keys);
    if (hs256) jwt.secret_env = kSecretEnv;
    return jwt;
  }
  // What `verifier` says of `t` at kNow: the identity's id, or "refused: <reason>".
  static std::string check(const JwtVerifier& verifier, const std::string& t) {
    std::string refusal;
    auto identity = verifier.verify(t, kNow, refusal);
    return identity ? identity->id : "refused: " + refusal;
  }
  static std::string start_error(const JwtOptions& jwt) {
    try {
      JwtVerifier verifier(jwt);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  // Generated once for the file: an RSA key takes a while.
  static const TestKey& shared_key(const std::string& alg) {
    static const TestKey rsa("RS256");
    static const TestKey ec("ES256");
    return alg == "RS256" ? rsa : ec;
  }

  std::filesystem::path dir_;
  const TestKey& rsa_ = shared_key("RS256");
  const TestKey& ec_ = shared_key("ES256");
};

TEST_F(JwtTest, ValidRs256TokenProvesItsSubject) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk("r1")})));
  std::string refusal;
  auto identity = verifier.verify(token(rsa_, good_claims(), "r1"), kNow, refusal);
  ASSERT_TRUE(identity) << refusal;
  EXPECT_EQ(identity->id, "alice");
  EXPECT_EQ(identity->name, "Alice");
  EXPECT_EQ(identity->roles, std::vector<std::string>{"user"});
  EXPECT_TRUE(identity->authenticated);
}

TEST_F(JwtTest, ValidEs256TokenProvesItsSubject) {
  JwtVerifier verifier(options(Json::array({ec_.jwk("e1")})));
  EXPECT_EQ(check(verifier, token(ec_, good_claims(), "e1")), "alice");
}

TEST_F(JwtTest, ValidHs256TokenProvesItsSubject) {
  JwtVerifier verifier(options(Json::array(), /*hs256=*/true));
  EXPECT_EQ(check(verifier, hs256_token(good_claims())), "alice");
}

TEST_F(JwtTest, TokenWithoutKidUsesTheOnlyKeyOfItsType) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk("r1"), ec_.jwk("e1")})));
  EXPECT_EQ(check(verifier, token(ec_, good_claims())), "alice");
  EXPECT_EQ(check(verifier, token(rsa_, good_claims())), "alice");
}

TEST_F(JwtTest, TokenWithoutKidIsRefusedWhenTwoKeysCouldSignIt) {
  TestKey other("RS256");
  JwtVerifier verifier(options(Json::array({rsa_.jwk("r1"), other.jwk("r2")})));
  EXPECT_EQ(check(verifier, token(rsa_, good_claims())),
            "refused: token has no key id and the key set holds more than one RS256 key");
  EXPECT_EQ(check(verifier, token(other, good_claims(), "r2")), "alice");
}

TEST_F(JwtTest, WrongSignatureIsRefused) {
  TestKey stranger("RS256");
  JwtVerifier verifier(options(Json::array({rsa_.jwk("r1")})));
  EXPECT_EQ(check(verifier, token(stranger, good_claims(), "r1")),
            "refused: token signature does not verify");
}

TEST_F(JwtTest, EditedClaimsNoLongerVerify) {
  JwtVerifier verifier(options(Json::array({ec_.jwk()})));
  const std::string signed_token = token(ec_, good_claims());
  Json claims = good_claims();
  claims["sub"] = "mallory";
  const std::size_t first = signed_token.find('.');
  const std::size_t second = signed_token.find('.', first + 1);
  const std::string forged =
      signed_token.substr(0, first + 1) + base64url(claims.dump()) + signed_token.substr(second);
  EXPECT_EQ(check(verifier, forged), "refused: token signature does not verify");
}

TEST_F(JwtTest, Hs256TokenWithAnotherSecretIsRefused) {
  JwtVerifier verifier(options(Json::array(), /*hs256=*/true));
  EXPECT_EQ(check(verifier, hs256_token(good_claims(), kSecret + "x")),
            "refused: token signature does not verify");
}

TEST_F(JwtTest, ExpiredTokenIsRefused) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk()})));
  Json claims = good_claims();
  claims["exp"] = kNow - 61;
  EXPECT_EQ(check(verifier, token(rsa_, claims)), "refused: token expired");
}

TEST_F(JwtTest, ExpiryWithinTheClockSkewIsAccepted) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk()})));
  Json claims = good_claims();
  claims["exp"] = kNow - 30;
  EXPECT_EQ(check(verifier, token(rsa_, claims)), "alice");
}

TEST_F(JwtTest, TokenWithoutExpIsRefused) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk()})));
  Json claims = good_claims();
  claims.erase("exp");
  EXPECT_EQ(check(verifier, token(rsa_, claims)), "refused: token has no exp claim");
}

TEST_F(JwtTest, TokenNotYetValidIsRefused) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk()})));
  Json claims = good_claims();
  claims["nbf"] = kNow + 120;
  EXPECT_EQ(check(verifier, token(rsa_, claims)), "refused: token not valid yet");
}

TEST_F(JwtTest, WrongIssuerIsRefused) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk()})));
  Json claims = good_claims();
  claims["iss"] = "https://evil.example.com";
  EXPECT_EQ(check(verifier, token(rsa_, claims)),
            "refused: token issuer is not 'https://id.example.com'");
}

TEST_F(JwtTest, WrongAudienceIsRefused) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk()})));
  Json claims = good_claims();
  claims["aud"] = Json::array({"billing", "mail"});
  EXPECT_EQ(check(verifier, token(rsa_, claims)),
            "refused: token audience does not include 'tollgate'");
}

TEST_F(JwtTest, AudienceListHoldingTheAudienceIsAccepted) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk()})));
  Json claims = good_claims();
  claims["aud"] = Json::array({"billing", "tollgate"});
  EXPECT_EQ(check(verifier, token(rsa_, claims)), "alice");
}

TEST_F(JwtTest, AlgNoneIsRefused) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk()}), /*hs256=*/true));
  const std::string unsigned_token =
      signing_input(Json{{"alg", "none"}, {"typ", "JWT"}}, good_claims()) + ".";
  EXPECT_EQ(check(verifier, unsigned_token),
            "refused: token is not three base64url parts joined by dots");
  const std::string with_signature = unsigned_token + base64url("x");
  EXPECT_EQ(check(verifier, with_signature),
            "refused: token algorithm is not accepted (accepted: RS256, HS256)");
}

TEST_F(JwtTest, AlgorithmNotConfiguredIsRefused) {
  // HS256 signed with the RSA key's public modulus: the classic key-confusion forgery.
  JwtVerifier verifier(options(Json::array({rsa_.jwk()})));
  const std::string forged = hs256_token(good_claims(), rsa_.jwk()["n"].get<std::string>());
  EXPECT_EQ(check(verifier, forged), "refused: token algorithm is not accepted (accepted: RS256)");
  EXPECT_EQ(check(verifier, token(ec_, good_claims())),
            "refused: token algorithm is not accepted (accepted: RS256)");
}

TEST_F(JwtTest, UnknownKidIsRefused) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk("r1")})));
  EXPECT_EQ(check(verifier, token(rsa_, good_claims(), "r9")),
            "refused: token key id is not in the key set");
}

TEST_F(JwtTest, MalformedPartsAreRefused) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk()})));
  const std::string good = token(rsa_, good_claims());
  EXPECT_EQ(check(verifier, "a.b"), "refused: token is not three base64url parts joined by dots");
  EXPECT_EQ(check(verifier, good + ".x"),
            "refused: token is not three base64url parts joined by dots");
  EXPECT_EQ(check(verifier, "a=.b.c"),
            "refused: token is not three base64url parts joined by dots");
  EXPECT_EQ(check(verifier, "A.b.c"), "refused: token is not valid base64url");
  EXPECT_EQ(check(verifier, base64url("not json") + "." + base64url("{}") + ".c2ln"),
            "refused: token header is not a JSON object");
  EXPECT_EQ(check(verifier, base64url("{\"typ\":\"JWT\"}") + "." + base64url("{}") + ".c2ln"),
            "refused: token header has no alg");
}

TEST_F(JwtTest, RolesClaimMapsToKnownRoles) {
  JwtOptions jwt = options(Json::array({rsa_.jwk()}));
  jwt.roles_claim = "groups";
  jwt.subject_claim = "email";
  JwtVerifier verifier(jwt);
  Json claims = good_claims();
  claims["email"] = "alice@example.com";
  claims["groups"] = Json::array({"reviewer", "wizard", "admin", 7});
  std::string refusal;
  auto identity = verifier.verify(token(rsa_, claims), kNow, refusal);
  ASSERT_TRUE(identity) << refusal;
  EXPECT_EQ(identity->id, "alice@example.com");
  EXPECT_EQ(identity->roles, (std::vector<std::string>{"reviewer", "admin"}));
}

TEST_F(JwtTest, OnlyUnknownRolesLeaveTheUserRole) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk()})));
  Json claims = good_claims();
  claims["roles"] = Json::array({"wizard"});
  std::string refusal;
  auto identity = verifier.verify(token(rsa_, claims), kNow, refusal);
  ASSERT_TRUE(identity) << refusal;
  EXPECT_EQ(identity->roles, std::vector<std::string>{"user"});
}

TEST_F(JwtTest, SystemSubjectIsRefused) {
  JwtVerifier verifier(options(Json::array({rsa_.jwk()})));
  Json claims = good_claims();
  claims["sub"] = "system:timeout";
  EXPECT_EQ(check(verifier, token(rsa_, claims)),
            "refused: token subject must not start with 'system:'");
}

TEST_F(JwtTest, BadJwksIsAnErrorAtStartNamingTheField) {
  Json p384 = ec_.jwk();
  p384["crv"] = "P-384";
  EXPECT_EQ(start_error(options(Json::array({rsa_.jwk(), p384}))),
            "auth.jwt.jwks_file: keys[1].crv: 'P-384' is not supported (expected P-256)");
  Json no_n = rsa_.jwk();
  no_n.erase("n");
  EXPECT_EQ(start_error(options(Json::array({no_n}))), "auth.jwt.jwks_file: keys[0].n: required");
  Json off_curve = ec_.jwk();
  off_curve["y"] = off_curve["x"];
  EXPECT_EQ(start_error(options(Json::array({off_curve}))),
            "auth.jwt.jwks_file: keys[0]: not a valid EC public key");
  EXPECT_EQ(start_error(options(Json::array({rsa_.jwk("k"), ec_.jwk("k")}))),
            "auth.jwt.jwks_file: keys[1].kid: 'k' is declared twice");
}

TEST_F(JwtTest, MissingSecretVariableIsAnErrorAtStart) {
  ::unsetenv(kSecretEnv);
  EXPECT_EQ(
      start_error(options(Json::array(), /*hs256=*/true)),
      std::string("auth.jwt.hs256_secret_env: environment variable ") + kSecretEnv + " is not set");
}

TEST_F(JwtTest, JwksFileResolvesAgainstTheConfigFolder) {
  write_jwks(Json::array({rsa_.jwk()}));
  const Json section = {{"jwt",
                         {{"issuer", "https://id.example.com"},
                          {"audience", "tollgate"},
                          {"jwks_file", "jwks.json"}}}};
  AuthOptions auth = parse_auth_options(section, dir_);
  ASSERT_TRUE(auth.jwt);
  EXPECT_EQ(auth.jwt->jwks_file, (dir_ / "jwks.json").string());
  JwtVerifier verifier(*auth.jwt);
  EXPECT_EQ(verifier.algorithms(), std::vector<std::string>{"RS256"});
}

TEST_F(JwtTest, AuthenticatorTakesTokensFromBearerOrApiKeyAndKeysBesideThem) {
  AuthOptions auth;
  auth.users = {AuthUser{"bob", "", {"user"}, core::sha256_hex("key-bob")}};
  auth.jwt = options(Json::array({rsa_.jwk()}));
  Authenticator authenticator(auth);
  Json claims = good_claims();
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  claims["exp"] = now + 600;
  claims["iat"] = now;
  const std::string t = token(rsa_, claims);
  std::string refusal;
  HttpRequest bearer;
  bearer.headers["authorization"] = "Bearer " + t;
  EXPECT_EQ(authenticator.authenticate(bearer, refusal).value_or(Identity{}).id, "alice")
      << refusal;
  HttpRequest api_key;
  api_key.headers["x-api-key"] = t;
  EXPECT_EQ(authenticator.authenticate(api_key, refusal).value_or(Identity{}).id, "alice")
      << refusal;
  HttpRequest key;
  key.headers["x-api-key"] = "key-bob";
  EXPECT_EQ(authenticator.authenticate(key, refusal).value_or(Identity{}).id, "bob") << refusal;
  HttpRequest stale;
  claims["exp"] = now - 3600;
  stale.headers["authorization"] = "Bearer " + token(rsa_, claims);
  EXPECT_FALSE(authenticator.authenticate(stale, refusal));
  EXPECT_EQ(refusal, "token expired");
}

}  // namespace
}  // namespace tollgate::server
