#include "models/fake_http_server.h"

// Asio's scheduler trips GCC 12's -Wnull-dereference after inlining; the code is not ours.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include <algorithm>
#include <boost/asio.hpp>
#include <cctype>

namespace tollgate::testing {

namespace asio = boost::asio;
using asio::ip::tcp;

ScriptedResponse ScriptedResponse::json(int status, const Json& body) {
  ScriptedResponse r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}};
  r.body_parts = {body.dump()};
  return r;
}

ScriptedResponse ScriptedResponse::sse(const std::vector<std::string>& data_events) {
  std::vector<std::string> pieces;
  for (const auto& data : data_events) pieces.push_back("data: " + data + "\n\n");
  return raw_sse(std::move(pieces));
}

ScriptedResponse ScriptedResponse::raw_sse(std::vector<std::string> framed_pieces) {
  ScriptedResponse r;
  r.headers = {{"Content-Type", "text/event-stream"}};
  r.body_parts = std::move(framed_pieces);
  return r;
}

ScriptedResponse ScriptedResponse::ndjson(const std::vector<Json>& lines) {
  ScriptedResponse r;
  r.headers = {{"Content-Type", "application/x-ndjson"}};
  for (const auto& line : lines) r.body_parts.push_back(line.dump() + "\n");
  return r;
}

struct FakeHttpServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  unsigned short port = acceptor.local_endpoint().port();
  std::atomic<bool> stopping{false};
  mutable std::mutex mutex;  // guards responses and requests
  std::deque<ScriptedResponse> responses;
  std::vector<RecordedRequest> requests;
  std::thread thread;

  void serve() {
    while (!stopping) {
      tcp::socket socket(io);
      boost::system::error_code ec;
      acceptor.accept(socket, ec);
      if (stopping) break;
      if (ec) continue;
      handle(socket);
    }
  }

  static std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  }

  void handle(tcp::socket& socket) {
    boost::system::error_code ec;
    std::string data;
    asio::read_until(socket, asio::dynamic_buffer(data), "\r\n\r\n", ec);
    if (ec) return;
    const size_t head_end = data.find("\r\n\r\n");
    RecordedRequest request;
    std::string head = data.substr(0, head_end);
    size_t line_end = head.find("\r\n");
    std::string request_line = head.substr(0, line_end);
    size_t sp1 = request_line.find(' ');
    size_t sp2 = request_line.find(' ', sp1 + 1);
    request.method = request_line.substr(0, sp1);
    request.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t next = head.find("\r\n", pos);
      if (next == std::string::npos) next = head.size();
      std::string line = head.substr(pos, next - pos);
      if (size_t colon = line.find(':'); colon != std::string::npos) {
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        request.headers[lower(line.substr(0, colon))] = value;
      }
      pos = next + 2;
    }
    size_t length = 0;
    if (auto it = request.headers.find("content-length"); it != request.headers.end()) {
      length = std::stoul(it->second);
    }
    request.body = data.substr(head_end + 4);
    if (request.body.size() < length) {
      std::string rest(length - request.body.size(), '\0');
      asio::read(socket, asio::buffer(rest), ec);
      if (ec) return;
      request.body += rest;
    }

    ScriptedResponse response;
    {
      std::lock_guard lock(mutex);
      requests.push_back(request);
      if (responses.empty()) {
        response = ScriptedResponse::json(
            500, Json{{"error", {{"message", "fake server: no scripted response left"}}}});
      } else {
        response = std::move(responses.front());
        responses.pop_front();
      }
    }
    const auto deadline = std::chrono::steady_clock::now() + response.delay;
    while (!stopping && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::string head_out = "HTTP/1.1 " + std::to_string(response.status) + " Scripted\r\n";
    for (const auto& [name, value] : response.headers) head_out += name + ": " + value + "\r\n";
    head_out += "Connection: close\r\n\r\n";
    asio::write(socket, asio::buffer(head_out), ec);
    for (const auto& part : response.body_parts) {
      if (ec) break;
      asio::write(socket, asio::buffer(part), ec);
      // A pause between pieces so the client sees them arrive separately, as with a real stream.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }
};

FakeHttpServer::FakeHttpServer() : impl_(std::make_unique<Impl>()) {
  impl_->thread = std::thread([this] { impl_->serve(); });
}

FakeHttpServer::~FakeHttpServer() {
  impl_->stopping = true;
  // Wake the blocking accept() with a connection of our own.
  boost::system::error_code ec;
  asio::io_context io;
  tcp::socket waker(io);
  waker.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), impl_->port), ec);
  impl_->thread.join();
}

void FakeHttpServer::enqueue(ScriptedResponse response) {
  std::lock_guard lock(impl_->mutex);
  impl_->responses.push_back(std::move(response));
}

std::string FakeHttpServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(impl_->port);
}

std::vector<RecordedRequest> FakeHttpServer::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->requests;
}

}  // namespace tollgate::testing
