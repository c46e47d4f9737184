// A blocking HTTP/1.1 client for the server tests (127.0.0.1 only), plus an SSE parser.
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <map>
#include <string>
#include <vector>

#include "tollgate/json.h"

namespace tollgate::server::testing {

struct ClientResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  Json json() const { return Json::parse(body); }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

inline ClientResponse http_call(std::uint16_t port, const std::string& method,
                                const std::string& target, const std::string& body = "",
                                const std::map<std::string, std::string>& headers = {}) {
  namespace net = boost::asio;
  namespace http = boost::beast::http;
  net::io_context io;
  net::ip::tcp::socket socket(io);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  http::request<http::string_body> request(http::string_to_verb(method), target, 11);
  request.set(http::field::host, "127.0.0.1");
  if (!body.empty()) request.set(http::field::content_type, "application/json");
  for (const auto& [name, value] : headers) request.set(name, value);
  request.body() = body;
  request.prepare_payload();
  http::write(socket, request);
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  boost::beast::error_code ec;
  http::read(socket, buffer, parser, ec);
  ClientResponse out;
  if (ec && ec != http::error::end_of_stream) {
    out.status = -1;
    out.body = ec.message();
    return out;
  }
  auto& message = parser.get();
  out.status = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(field.value());
  }
  out.body = message.body();
  return out;
}

struct SseEvent {
  std::string event;
  Json data;
  std::string id;
};

inline std::vector<SseEvent> parse_sse(const std::string& text) {
  std::vector<SseEvent> events;
  SseEvent current;
  bool any = false;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) {
      if (any) events.push_back(current);
      current = SseEvent{};
      any = false;
    } else if (line[0] == ':') {
      continue;
    } else if (line.rfind("event: ", 0) == 0) {
      current.event = line.substr(7);
      any = true;
    } else if (line.rfind("data: ", 0) == 0) {
      current.data = Json::parse(line.substr(6));
      any = true;
    } else if (line.rfind("id: ", 0) == 0) {
      current.id = line.substr(4);
    }
  }
  return events;
}

}  // namespace tollgate::server::testing
