// Who may call the server: API keys, 401s, thread ownership across users and roles, CORS and
// safe binding — over real HTTP on 127.0.0.1.
#include <gtest/gtest.h>

#include <filesystem>

#include "server/auth.h"
#include "server/http_test_client.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"
#include "tollgate/server.h"

namespace tollgate::server {
namespace {

using testing::http_call;

GraphRegistry actor_graphs() {
  GraphRegistry registry;
  registry.add("actors", [](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
    StateGraph g;
    g.add_node("ask", [](const State&, Runtime& rt) -> NodeResult {
      return Json{{"answer", rt.interrupt("Proceed?")}};
    });
    g.add_node("act", [](const State&, Runtime& rt) -> NodeResult {
      return Json{{"started_by", rt.started_by().id}, {"decided_by", rt.decided_by().id}};
    });
    g.add_edge(START, "ask").add_edge("ask", "act").add_edge("act", END);
    CompileOptions options;
    options.checkpointer = std::move(saver);
    return g.compile(options);
  });
  return registry;
}

AuthUser user(std::string id, std::vector<std::string> roles) {
  return AuthUser{id, "", std::move(roles), core::sha256_hex("key-" + id)};
}

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::filesystem::temp_directory_path() /
          ("tollgate_auth_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove_db();
  }
  void TearDown() override {
    server_.reset();
    remove_db();
  }
  void remove_db() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_.string() + suffix);
  }
  ServerOptions options_with_users() {
    ServerOptions options;
    options.port = 0;
    options.db_path = db_.string();
    options.checkpointer = make_memory_saver();
    options.heartbeat_seconds = 0;
    options.auth.users = {user("alice", {"user"}), user("bob", {"user"}),
                          user("rita", {"reviewer"}), user("ada", {"admin"})};
    return options;
  }
  void start(ServerOptions options) {
    server_ = std::make_unique<Server>(std::move(options), actor_graphs());
    server_->start();
  }
  void start() { start(options_with_users()); }

  // A call as `who` (its key "key-<who>"); "" sends no credential.
  testing::ClientResponse call(const std::string& who, const std::string& method,
                               const std::string& target, const Json& body = Json(),
                               std::map<std::string, std::string> headers = {}) {
    if (!who.empty()) headers["x-api-key"] = "key-" + who;
    return http_call(server_->port(), method, target, body.is_null() ? "" : body.dump(), headers);
  }
  std::string new_thread(const std::string& who) {
    auto response = call(who, "POST", "/threads", Json::object());
    EXPECT_EQ(response.status, 200) << response.body;
    return response.json()["thread_id"].get<std::string>();
  }
  // A thread of `who` paused on its review.
  std::string paused_thread(const std::string& who) {
    std::string thread = new_thread(who);
    auto run = call(who, "POST", "/threads/" + thread + "/runs/wait",
                    {{"assistant_id", "actors"}, {"input", Json::object()}});
    EXPECT_EQ(run.status, 200) << run.body;
    return thread;
  }
  std::size_t visible_threads(const std::string& who) {
    return call(who, "POST", "/threads/search", Json::object()).json().size();
  }

  std::filesystem::path db_;
  std::unique_ptr<Server> server_;
};

// ------------------------------------------------------------------------------ API keys

TEST_F(AuthTest, WithoutACredentialTheApiIs401AndNothingIsCreated) {
  start();
  auto response = call("", "POST", "/threads", Json::object());
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(response.header("www-authenticate"), "Bearer");
  EXPECT_EQ(visible_threads("ada"), 0u);
}

TEST_F(AuthTest, AWrongKeyIs401) {
  start();
  auto response = http_call(server_->port(), "GET", "/threads/search", "",
                            {{"x-api-key", "key-mallory"}});
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(response.json()["detail"], "Invalid API key");
}

TEST_F(AuthTest, AKeyWorksAsABearerTokenToo) {
  start();
  auto response = http_call(server_->port(), "POST", "/threads", "{}",
                            {{"authorization", "Bearer key-alice"}});
  EXPECT_EQ(response.status, 200) << response.body;
}

TEST_F(AuthTest, OkAndInfoAnswerWithoutACredentialAndInfoSaysAuthIsOn) {
  start();
  EXPECT_EQ(call("", "GET", "/ok").status, 200);
  auto info = call("", "GET", "/info");
  ASSERT_EQ(info.status, 200);
  EXPECT_EQ(info.json()["auth"]["enabled"], true);
  EXPECT_TRUE(info.json()["auth"]["identity"].is_null());
}

TEST_F(AuthTest, InfoNamesWhomAValidKeyIdentifies) {
  start();
  auto info = call("rita", "GET", "/info").json();
  EXPECT_EQ(info["auth"]["identity"]["id"], "rita");
  EXPECT_EQ(info["auth"]["identity"]["roles"], Json::array({"reviewer"}));
}

TEST_F(AuthTest, WithoutAuthInfoSaysAuthIsOff) {
  ServerOptions options = options_with_users();
  options.auth.users.clear();
  start(options);
  EXPECT_EQ(call("", "GET", "/info").json()["auth"]["enabled"], false);
}

TEST_F(AuthTest, AnUnknownRoleStopsTheServerFromStarting) {
  ServerOptions options = options_with_users();
  options.auth.users.push_back(user("eve", {"boss"}));
  Server server(options, actor_graphs());
  try {
    server.start();
    ADD_FAILURE() << "started with an unknown role";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("auth.users[4].roles[0]: unknown role 'boss'"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(AuthTest, AUserNamedAsASystemIdentityStopsTheServerFromStarting) {
  ServerOptions options = options_with_users();
  options.auth.users.push_back(user("system:timeout", {"admin"}));
  Server server(options, actor_graphs());
  try {
    server.start();
    ADD_FAILURE() << "started with a user named system:timeout";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("auth.users[4].id: 'system:timeout' must not start with "
                                         "'system:'"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(AuthTest, KeysAreReadFromTheConfigSectionAsDigests) {
  Json section = Json::parse(R"({"users": [{"id": "alice", "name": "Alice", "roles": ["reviewer"],
                                            "api_key_sha256": ")" +
                             core::sha256_hex("s3cret") + R"("}]})");
  AuthOptions parsed = parse_auth_options(section, ".");
  ASSERT_EQ(parsed.users.size(), 1u);
  EXPECT_EQ(parsed.users[0].name, "Alice");
  EXPECT_TRUE(parsed.enabled());
}

TEST_F(AuthTest, AKeyInPlainTextInTheConfigIsRefusedNamingTheField) {
  Json section = Json::parse(
      R"({"users": [{"id": "alice", "roles": ["user"], "api_key_sha256": "s3cret"}]})");
  try {
    parse_auth_options(section, ".");
    ADD_FAILURE() << "accepted a key that is not a digest";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("auth.users[0].api_key_sha256: must be 64 hex digits"),
              std::string::npos)
        << e.what();
  }
}

// ------------------------------------------------------------------------------ ownership

TEST_F(AuthTest, AThreadBelongsToItsCreator) {
  start();
  std::string thread = new_thread("alice");
  EXPECT_EQ(call("alice", "GET", "/threads/" + thread).json()["metadata"]["owner"], "alice");
}

TEST_F(AuthTest, AnotherUsersThreadIsNotFoundOnEveryRoute) {
  start();
  std::string thread = paused_thread("alice");
  for (auto [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/threads/" + thread},
           {"GET", "/threads/" + thread + "/state"},
           {"GET", "/threads/" + thread + "/history"},
           {"POST", "/threads/" + thread + "/history"},
           {"GET", "/threads/" + thread + "/runs"},
           {"PATCH", "/threads/" + thread},
           {"DELETE", "/threads/" + thread},
           {"GET", "/audit?thread_id=" + thread}}) {
    EXPECT_EQ(call("bob", method, path, Json::object()).status, 404) << method << " " << path;
  }
  EXPECT_EQ(visible_threads("bob"), 0u);
  EXPECT_EQ(call("bob", "POST", "/threads/count", Json::object()).json(), 0);
  EXPECT_EQ(call("alice", "GET", "/threads/" + thread).status, 200);
}

TEST_F(AuthTest, AUserCannotRunOrDecideOnAnotherUsersThread) {
  start();
  std::string thread = paused_thread("alice");
  auto resume = call("bob", "POST", "/threads/" + thread + "/runs/wait",
                     {{"assistant_id", "actors"}, {"command", {{"resume", "yes"}}}});
  EXPECT_EQ(resume.status, 404);
  EXPECT_EQ(call("alice", "GET", "/threads/" + thread).json()["status"], "interrupted");
}

TEST_F(AuthTest, AReviewerSeesAPendingReviewDecidesItAndTheRunKnowsWhoDid) {
  start();
  std::string thread = paused_thread("alice");
  EXPECT_EQ(visible_threads("rita"), 1u);
  auto resume = call("rita", "POST", "/threads/" + thread + "/runs/wait",
                     {{"assistant_id", "actors"}, {"command", {{"resume", "yes"}}}});
  ASSERT_EQ(resume.status, 200) << resume.body;
  EXPECT_EQ(resume.json()["started_by"], "alice");
  EXPECT_EQ(resume.json()["decided_by"], "rita");
}

TEST_F(AuthTest, AReviewerDoesNotSeeThreadsWithoutAPendingReview) {
  start();
  std::string thread = new_thread("alice");
  EXPECT_EQ(visible_threads("rita"), 0u);
  EXPECT_EQ(call("rita", "GET", "/threads/" + thread).status, 404);
}

TEST_F(AuthTest, AReviewerMayNotChangeAThreadItReviews) {
  start();
  std::string thread = paused_thread("alice");
  auto patch = call("rita", "PATCH", "/threads/" + thread, {{"metadata", {{"x", 1}}}});
  EXPECT_EQ(patch.status, 403);
  auto input = call("rita", "POST", "/threads/" + thread + "/runs/wait",
                    {{"assistant_id", "actors"}, {"input", Json::object()}});
  EXPECT_EQ(input.status, 403);
}

TEST_F(AuthTest, AnAdminSeesEveryThread) {
  start();
  new_thread("alice");
  new_thread("bob");
  EXPECT_EQ(visible_threads("ada"), 2u);
  EXPECT_EQ(visible_threads("alice"), 1u);
}

TEST_F(AuthTest, AClientCannotGiveItsThreadToSomeoneElse) {
  start();
  auto created = call("alice", "POST", "/threads", {{"metadata", {{"owner", "bob"}}}});
  std::string thread = created.json()["thread_id"];
  EXPECT_EQ(created.json()["metadata"]["owner"], "alice");
  auto patched = call("alice", "PATCH", "/threads/" + thread, {{"metadata", {{"owner", "bob"}}}});
  EXPECT_EQ(patched.json()["metadata"]["owner"], "alice");
  EXPECT_EQ(visible_threads("bob"), 0u);
}

TEST_F(AuthTest, OnlyAnAdminMayCreateAssistants) {
  start();
  Json body = {{"graph_id", "actors"}};
  EXPECT_EQ(call("alice", "POST", "/assistants", body).status, 403);
  EXPECT_EQ(call("ada", "POST", "/assistants", body).status, 200);
}

// ------------------------------------------------------------------------------ CORS

TEST_F(AuthTest, APageOfAForeignOriginCannotPostAndNothingIsCreated) {
  start();
  auto response = call("ada", "POST", "/threads", Json::object(),
                       {{"origin", "https://evil.example"}});
  EXPECT_EQ(response.status, 403);
  EXPECT_EQ(response.header("access-control-allow-origin"), "");
  EXPECT_EQ(visible_threads("ada"), 0u);
}

TEST_F(AuthTest, APreflightFromAForeignOriginIsRefused) {
  start();
  auto response = call("", "OPTIONS", "/threads", Json(),
                       {{"origin", "https://evil.example"},
                        {"access-control-request-headers", "content-type,x-api-key"}});
  EXPECT_EQ(response.status, 403);
  EXPECT_EQ(response.header("access-control-allow-origin"), "");
}

TEST_F(AuthTest, ALoopbackOriginIsAllowedByDefaultAndEchoed) {
  start();
  auto response = call("ada", "POST", "/threads/search", Json::object(), {{"origin", "http://localhost:5173"}});
  EXPECT_EQ(response.header("access-control-allow-origin"), "http://localhost:5173");
  EXPECT_EQ(response.header("vary"), "Origin");
}

TEST_F(AuthTest, ConfiguredOriginsReplaceTheLoopbackDefault) {
  ServerOptions options = options_with_users();
  options.auth.cors_origins = {"https://review.example.com"};
  start(options);
  EXPECT_EQ(call("ada", "POST", "/threads", Json::object(),
                 {{"origin", "https://review.example.com"}})
                .status,
            200);
  EXPECT_EQ(call("ada", "POST", "/threads", Json::object(), {{"origin", "http://localhost:5173"}})
                .status,
            403);
}

TEST_F(AuthTest, WithoutAuthARequestForANonLoopbackHostNameIsRefused) {
  ServerOptions options = options_with_users();
  options.auth.users.clear();
  start(options);
  auto response = call("", "POST", "/threads/search", Json::object(), {{"host", "rebound.example:2024"}});
  EXPECT_EQ(response.status, 403);
  EXPECT_EQ(call("", "POST", "/threads/search", Json::object()).status, 200);
}

// ------------------------------------------------------------------------------ binding

TEST_F(AuthTest, ANonLoopbackHostWithoutAuthRefusesToStart) {
  ServerOptions options = options_with_users();
  options.auth.users.clear();
  options.host = "0.0.0.0";
  Server server(options, actor_graphs());
  try {
    server.start();
    ADD_FAILURE() << "listened on every interface without auth";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--insecure-no-auth"), std::string::npos) << e.what();
  }
}

TEST(LoopbackHost, NamesOfTheLoopbackInterfaceAreLoopback) {
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.1.2.3"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("192.168.1.10"));
  EXPECT_FALSE(is_loopback_host("example.com"));
}

}  // namespace
}  // namespace tollgate::server
