#include "keepalive_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <stdexcept>

namespace tollgate::bench::http_load {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

struct KeepAliveClient::Impl {
  std::string host;
  std::string port;
  net::io_context io;
  std::optional<tcp::socket> socket;
  beast::flat_buffer buffer;

  void connect() {
    tcp::resolver resolver(io);
    socket.emplace(io);
    net::connect(*socket, resolver.resolve(host, port));
    socket->set_option(tcp::no_delay(true));
    buffer.clear();
  }

  void disconnect() {
    if (!socket) return;
    beast::error_code ignored;
    socket->shutdown(tcp::socket::shutdown_both, ignored);
    socket->close(ignored);
    socket.reset();
  }
};

KeepAliveClient::KeepAliveClient(std::string host, std::uint16_t port)
    : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(host);
  impl_->port = std::to_string(port);
}

KeepAliveClient::~KeepAliveClient() {
  impl_->disconnect();
}

Reply KeepAliveClient::request(const char* method, const std::string& target,
                               const std::string& json_body) {
  http::request<http::string_body> request(http::string_to_verb(method), target, 11);
  request.set(http::field::host, impl_->host);
  request.keep_alive(true);
  if (!json_body.empty()) {
    request.set(http::field::content_type, "application/json");
    request.body() = json_body;
  }
  request.prepare_payload();

  // One retry on a fresh connection: the server may have closed an idle keep-alive one.
  for (int attempt = 0;; ++attempt) {
    if (!impl_->socket) impl_->connect();
    beast::error_code ec;
    http::write(*impl_->socket, request, ec);
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    if (!ec) http::read(*impl_->socket, impl_->buffer, parser, ec);
    if (ec) {
      impl_->disconnect();
      if (attempt == 0) continue;
      throw std::runtime_error(std::string(method) + " " + target + ": " + ec.message());
    }
    auto& response = parser.get();
    Reply reply{static_cast<int>(response.result_int()), std::move(response.body())};
    if (!response.keep_alive()) impl_->disconnect();
    return reply;
  }
}

}  // namespace tollgate::bench::http_load
