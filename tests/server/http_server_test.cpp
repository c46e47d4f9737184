// The HTTP front end over raw sockets on 127.0.0.1: requests over a limit or badly framed are
// answered before the connection closes, nothing a handler or a streamed body throws ends
// the server, and a handler that waits holds up no other connection.
#include "server/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "server/http_test_client.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

namespace net = boost::asio;

// Sends `bytes` as they are, then reads until the server closes the connection. With
// `half_close` the client shuts its sending side first, as a client that sent all it had.
std::string raw_exchange(std::uint16_t port, const std::string& bytes, bool half_close = true) {
  net::io_context io;
  net::ip::tcp::socket socket(io);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  boost::system::error_code ec;
  net::write(socket, net::buffer(bytes), ec);
  if (half_close) socket.shutdown(net::ip::tcp::socket::shutdown_send, ec);
  std::string received;
  char chunk[4096];
  while (true) {
    std::size_t n = socket.read_some(net::buffer(chunk), ec);
    received.append(chunk, n);
    if (ec) break;
  }
  return received;
}

// The status of the first response in `received`, 0 when there is none.
int status_of(const std::string& received) {
  if (received.rfind("HTTP/1.1 ", 0) != 0 || received.size() < 12) return 0;
  return std::stoi(received.substr(9, 3));
}

std::string body_of(const std::string& received) {
  std::size_t end = received.find("\r\n\r\n");
  return end == std::string::npos ? "" : received.substr(end + 4);
}

// A stream whose head gate throws (as a bug in an API's gate would).
class HeadThrows : public StreamBody {
 public:
  bool head_ready(HttpResponse&) override { throw std::logic_error("gate broke"); }
  Poll poll(std::string&) override { return Poll::kDone; }
  void set_waker(std::function<void()>) override {}
};

// A stream that sends one event, then throws on the next poll.
class PollThrows : public StreamBody {
 public:
  bool head_ready(HttpResponse&) override { return true; }
  Poll poll(std::string& out) override {
    if (polls_++ > 0) throw std::runtime_error("poll broke");
    out += "data: 1\n\n";
    return Poll::kData;
  }
  void set_waker(std::function<void()>) override {}

 private:
  int polls_ = 0;
};

// A stream whose head is decided by a settle on the handler pool (as a gate that reads the
// store): the first settle wakes the stream and says "not ready", the second answers.
class SettledHead : public StreamBody {
 public:
  explicit SettledHead(bool throws = false) : throws_(throws) {}
  bool head_ready(HttpResponse& head) override {
    head.settle = [this]() -> std::optional<HttpResponse> {
      if (throws_) throw std::runtime_error("settle broke");
      if (++settles_ == 1) {
        wake_();  // comes while this settle is under way
        return std::nullopt;
      }
      return HttpResponse::json({{"settles", settles_.load()}});
    };
    return true;
  }
  Poll poll(std::string&) override { return Poll::kDone; }
  void set_waker(std::function<void()> wake) override { wake_ = std::move(wake); }

 private:
  bool throws_;
  std::atomic<int> settles_{0};
  std::function<void()> wake_;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.add("GET", "/ok", [](HttpRequest&) { return HttpResponse::json({{"ok", true}}); });
    router_.add("GET", "/shared", [this](HttpRequest&) {
      HttpResponse response = HttpResponse::json_shared(shared_text_, 201);
      response.add_header("X-Kept", "yes");
      return response;
    });
    // Parses, copies and prints the body, as the API handlers do.
    router_.add("POST", "/echo", [](HttpRequest& request) {
      Json body = request.json_body();
      Json copy = body;
      return HttpResponse::json(Json{{"echo", copy}});
    });
    router_.add("GET", "/head-throws", [](HttpRequest&) {
      HttpResponse response;
      response.stream = std::make_shared<HeadThrows>();
      return response;
    });
    router_.add("GET", "/poll-throws", [](HttpRequest&) {
      HttpResponse response;
      response.content_type = "text/event-stream";
      response.stream = std::make_shared<PollThrows>();
      return response;
    });
    router_.add("GET", "/settled", [](HttpRequest&) {
      HttpResponse response;
      response.stream = std::make_shared<SettledHead>();
      return response;
    });
    router_.add("GET", "/settle-throws", [](HttpRequest&) {
      HttpResponse response;
      response.stream = std::make_shared<SettledHead>(true);
      return response;
    });
    HttpServerOptions options;
    options.port = 0;
    options.heartbeat_seconds = 0;
    server_ = std::make_unique<HttpServer>(router_, options);
    server_->start();
  }

  std::string exchange(const std::string& bytes, bool half_close = true) {
    return raw_exchange(server_->port(), bytes, half_close);
  }
  bool still_serving() { return testing::http_call(server_->port(), "GET", "/ok").status == 200; }

  Router router_;
  std::unique_ptr<HttpServer> server_;
  std::shared_ptr<const std::string> shared_text_ =
      std::make_shared<const std::string>(R"({"kept":")" + std::string(100000, 'x') + R"("})");
};

TEST_F(HttpServerTest, APlainRequestIsServed) {
  std::string received = exchange("GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_of(received), 200);
  EXPECT_EQ(Json::parse(body_of(received)), Json({{"ok", true}}));
}

TEST_F(HttpServerTest, ASharedBodyIsSentWholeWithItsStatusAndHeaders) {
  std::string received = exchange("GET /shared HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_of(received), 201);
  EXPECT_NE(received.find("Content-Length: " + std::to_string(shared_text_->size()) + "\r\n"),
            std::string::npos);
  EXPECT_NE(received.find("X-Kept: yes\r\n"), std::string::npos);
  EXPECT_EQ(body_of(received), *shared_text_);
  // The text is the handler's still, untouched, for the next answer.
  EXPECT_EQ(shared_text_->size(), 100011u);
  EXPECT_TRUE(still_serving());
}

// Defect 11: an oversized request line was dropped without a status.
TEST_F(HttpServerTest, ATargetOverTheLimitIs414) {
  std::string received =
      exchange("GET /" + std::string(10 * 1024, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(status_of(received), 414);
  EXPECT_NE(body_of(received).find("Request target too long"), std::string::npos);
  EXPECT_TRUE(still_serving());
}

TEST_F(HttpServerTest, ATargetOverTheHeaderLimitIs414) {
  std::string received =
      exchange("GET /" + std::string(100 * 1024, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(status_of(received), 414);
}

// Defect 11: oversized header fields were dropped without a status.
TEST_F(HttpServerTest, HeadersOverTheLimitAre431) {
  std::string request = "GET /ok HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 100; ++i) request += "X-Filler-" + std::to_string(i) + ": " + std::string(1000, 'v') + "\r\n";
  request += "\r\n";
  std::string received = exchange(request);
  EXPECT_EQ(status_of(received), 431);
  EXPECT_NE(body_of(received).find("Request header fields too large"), std::string::npos);
  EXPECT_TRUE(still_serving());
}

// Defect 11: bad framing closed the connection without a status.
TEST_F(HttpServerTest, AMalformedRequestLineIs400) {
  EXPECT_EQ(status_of(exchange("NOT A REQUEST\r\n\r\n")), 400);
  EXPECT_EQ(status_of(exchange("GET /ok HTTP/9.x\r\n\r\n")), 400);
}

TEST_F(HttpServerTest, AMalformedHeaderIs400) {
  EXPECT_EQ(status_of(exchange("GET /ok HTTP/1.1\r\nNo colon here\r\n\r\n")), 400);
}

TEST_F(HttpServerTest, BadChunkedEncodingIs400) {
  std::string received = exchange(
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n");
  EXPECT_EQ(status_of(received), 400);
  EXPECT_TRUE(still_serving());
}

TEST_F(HttpServerTest, AContentLengthThatIsNotANumberIs400) {
  EXPECT_EQ(status_of(exchange("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n{}")),
            400);
}

TEST_F(HttpServerTest, AClientClosingMidRequestGetsNoAnswerAndTheServerGoesOn) {
  EXPECT_EQ(exchange("GET /ok HTTP/1.1\r\nHost:"), "");
  EXPECT_TRUE(still_serving());
}

// Defect 2: ~400 KB of brackets overflowed the stack when the parsed body was copied or printed.
TEST_F(HttpServerTest, AVeryDeepBodyIs400NamingTheLimit) {
  const std::string deep(400 * 1024, '[');
  auto response = testing::http_call(server_->port(), "POST", "/echo", deep);
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.json()["detail"], "Request body nests deeper than 256 levels");
  std::string objects;
  for (int i = 0; i < 80000; ++i) objects += "{\"a\":";
  EXPECT_EQ(testing::http_call(server_->port(), "POST", "/echo", objects).status, 400);
  EXPECT_TRUE(still_serving());
}

TEST_F(HttpServerTest, ABodyAtTheDepthLimitIsServed) {
  const std::string body = std::string(256, '[') + std::string(256, ']');
  EXPECT_EQ(testing::http_call(server_->port(), "POST", "/echo", body).status, 200);
}

TEST_F(HttpServerTest, AStreamWhoseHeadGateThrowsIs500) {
  auto response = testing::http_call(server_->port(), "GET", "/head-throws");
  EXPECT_EQ(response.status, 500);
  EXPECT_NE(response.json()["detail"].get<std::string>().find("gate broke"), std::string::npos);
  EXPECT_TRUE(still_serving());
}

TEST_F(HttpServerTest, AStreamWhosePollThrowsEndsItsConnectionOnly) {
  // The connection stays open from the client's side: only the server ends it.
  std::string received = exchange("GET /poll-throws HTTP/1.1\r\nHost: x\r\n\r\n", false);
  EXPECT_EQ(status_of(received), 200);
  EXPECT_NE(received.find("data: 1"), std::string::npos);
  EXPECT_EQ(received.find("\r\n0\r\n\r\n"), std::string::npos);  // no terminating chunk
  EXPECT_TRUE(still_serving());
}

TEST_F(HttpServerTest, AHeadSettledOnTheHandlerPoolIsSentAndANotYetWaitsForTheNextWake) {
  auto response = testing::http_call(server_->port(), "GET", "/settled");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.json(), Json({{"settles", 2}}));
  EXPECT_TRUE(still_serving());
}

TEST_F(HttpServerTest, AHeadWhoseSettleThrowsIs500) {
  auto response = testing::http_call(server_->port(), "GET", "/settle-throws");
  EXPECT_EQ(response.status, 500);
  EXPECT_NE(response.json()["detail"].get<std::string>().find("settle broke"), std::string::npos);
  EXPECT_TRUE(still_serving());
}

// Handlers run on the handler pool, not on the I/O threads: with one I/O thread, a handler
// waiting (as on a database lock) leaves the server answering other connections.
TEST(HttpServerHandlers, AWaitingHandlerDoesNotHoldUpOtherConnections) {
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  Router router;
  router.add("GET", "/ok", [](HttpRequest&) { return HttpResponse::json({{"ok", true}}); });
  router.add("GET", "/wait", [&](HttpRequest&) {
    entered.set_value();
    released.wait();
    return HttpResponse::json({{"waited", true}});
  });
  HttpServerOptions options;
  options.threads = 1;
  options.handler_threads = 2;
  options.heartbeat_seconds = 0;
  HttpServer server(router, options);
  server.start();
  const std::uint16_t port = server.port();

  auto waiting = std::async(std::launch::async,
                            [port] { return testing::http_call(port, "GET", "/wait").status; });
  entered.get_future().wait();
  auto other = std::async(std::launch::async,
                          [port] { return testing::http_call(port, "GET", "/ok").status; });
  // Not a measure of speed: a generous bound so that a server that does hold the request up
  // fails the test instead of hanging it.
  const bool answered = other.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  release.set_value();
  ASSERT_TRUE(answered) << "/ok was not answered while /wait's handler waited";
  EXPECT_EQ(other.get(), 200);
  EXPECT_EQ(waiting.get(), 200);
}

}  // namespace
}  // namespace tollgate::server
