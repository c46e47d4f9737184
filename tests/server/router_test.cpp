#include "server/router.h"

#include <gtest/gtest.h>

#include "tollgate/error.h"

namespace tollgate::server {
namespace {

HttpRequest request(std::string method, std::string path, std::string body = "") {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.body = std::move(body);
  return r;
}

Json body_of(const HttpResponse& response) {
  return Json::parse(response.body);
}

TEST(RouterTest, CapturesPathParametersInOrder) {
  Router router;
  router.add("GET", "/threads/:thread_id/runs/:run_id",
             [](HttpRequest& r) { return HttpResponse::json(r.params); });
  auto r = request("GET", "/threads/t1/runs/r1");
  EXPECT_EQ(body_of(router.dispatch(r)), Json({"t1", "r1"}));
}

TEST(RouterTest, UnknownPathIs404WithDetail) {
  Router router;
  auto r = request("GET", "/nope");
  HttpResponse response = router.dispatch(r);
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(body_of(response)["detail"], "Not found");
}

TEST(RouterTest, KnownPathWithOtherMethodIs405) {
  Router router;
  router.add("GET", "/ok", [](HttpRequest&) { return HttpResponse::json({{"ok", true}}); });
  auto r = request("DELETE", "/ok");
  EXPECT_EQ(router.dispatch(r).status, 405);
}

TEST(RouterTest, MalformedJsonBodyIs400NamingTheProblem) {
  Router router;
  router.add("POST", "/threads", [](HttpRequest& r) { return HttpResponse::json(r.json_body()); });
  auto r = request("POST", "/threads", "{\"metadata\":");
  HttpResponse response = router.dispatch(r);
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(body_of(response)["detail"].get<std::string>().find("not valid JSON"),
            std::string::npos);
}

TEST(RouterTest, ErrorCodesMapToTheirHttpStatus) {
  Router router;
  router.add("GET", "/conflict",
             [](HttpRequest&) -> HttpResponse { throw Error::Conflict("nothing to resume"); });
  router.add("GET", "/refused",
             [](HttpRequest&) -> HttpResponse { throw Error::Unprocessable("decision refused"); });
  auto conflict = request("GET", "/conflict");
  auto refused = request("GET", "/refused");
  HttpResponse a = router.dispatch(conflict);
  HttpResponse b = router.dispatch(refused);
  EXPECT_EQ(a.status, 409);
  EXPECT_EQ(body_of(a)["detail"], "nothing to resume");
  EXPECT_EQ(b.status, 422);
}

TEST(RouterTest, AJsonTypeErrorInsideAHandlerIsA500NotTheClientsFault) {
  Router router;
  router.add("GET", "/bug", [](HttpRequest&) -> HttpResponse {
    Json number = 1;
    return HttpResponse::json(number.get<std::string>());
  });
  auto r = request("GET", "/bug");
  HttpResponse response = router.dispatch(r);
  EXPECT_EQ(response.status, 500);
  EXPECT_NE(body_of(response)["detail"].get<std::string>().find("Internal error"),
            std::string::npos);
}

TEST(RouterTest, AnExceptionOfTheGetFallbackIsAnswered) {
  Router router;
  router.set_get_fallback(
      [](HttpRequest&) -> HttpResponse { throw std::runtime_error("file system says no"); });
  auto r = request("GET", "/some/page");
  EXPECT_EQ(router.dispatch(r).status, 500);
}

TEST(RouterTest, ANonStandardExceptionIsAnswered) {
  Router router;
  router.add("GET", "/odd", [](HttpRequest&) -> HttpResponse { throw 42; });
  auto r = request("GET", "/odd");
  EXPECT_EQ(router.dispatch(r).status, 500);
}

TEST(RouterTest, EmptyBodyIsTheEmptyValue) {
  auto r = request("POST", "/x", "  \n");
  EXPECT_EQ(r.json_body(), Json::object());
}

// An auth step that knows one key, "k-alice", for alice.
AuthStep alice_key_step() {
  return [](const HttpRequest& r, std::string& refusal) -> std::optional<Identity> {
    if (r.header("x-api-key") == "k-alice") return Identity{"alice", "", {"user"}, true};
    refusal = "Invalid API key";
    return std::nullopt;
  };
}

Handler who_is_asking() {
  return [](HttpRequest& r) { return HttpResponse::json({{"id", r.identity.id}}); };
}

TEST(RouterAuthTest, WithoutAnAuthStepEveryRequestIsTheLocalUser) {
  Router router;
  router.add("GET", "/who", who_is_asking());
  auto r = request("GET", "/who");
  EXPECT_EQ(body_of(router.dispatch(r))["id"], "local");
}

TEST(RouterAuthTest, TheAuthStepSetsTheIdentityBeforeTheHandlerRuns) {
  Router router;
  router.set_auth_step(alice_key_step());
  router.add("GET", "/who", who_is_asking());
  auto r = request("GET", "/who");
  r.headers["x-api-key"] = "k-alice";
  EXPECT_EQ(body_of(router.dispatch(r))["id"], "alice");
}

TEST(RouterAuthTest, ARefusedRequestIs401AndTheHandlerNeverRuns) {
  Router router;
  router.set_auth_step(alice_key_step());
  bool ran = false;
  router.add("POST", "/threads", [&ran](HttpRequest&) {
    ran = true;
    return HttpResponse::json(Json::object());
  });
  auto r = request("POST", "/threads");
  r.headers["x-api-key"] = "wrong";
  HttpResponse response = router.dispatch(r);
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(body_of(response)["detail"], "Invalid API key");
  EXPECT_FALSE(ran);
}

TEST(RouterAuthTest, AnUnknownPathIs401NotNotFoundWithoutACredential) {
  Router router;
  router.set_auth_step(alice_key_step());
  auto r = request("DELETE", "/nope");
  EXPECT_EQ(router.dispatch(r).status, 401);
}

TEST(RouterAuthTest, OpenRoutesAndTheGetFallbackNeedNoCredential) {
  Router router;
  router.set_auth_step(alice_key_step());
  router.add_open("GET", "/info", who_is_asking());
  router.set_get_fallback([](HttpRequest&) { return HttpResponse::json("console"); });
  auto info = request("GET", "/info");
  HttpResponse response = router.dispatch(info);
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(body_of(response)["id"], "");
  auto file = request("GET", "/index.html");
  EXPECT_EQ(router.dispatch(file).status, 200);
}

}  // namespace
}  // namespace tollgate::server
