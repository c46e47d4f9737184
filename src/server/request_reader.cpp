#include "server/request_reader.h"

#include <boost/beast/http/error.hpp>
#include <cctype>

#include "core/percent.h"

namespace tollgate::server {

namespace http = boost::beast::http;

namespace {

void parse_target(std::string_view target, HttpRequest& request) {
  std::size_t q = target.find('?');
  request.path = core::percent_decode(target.substr(0, q));
  if (q == std::string_view::npos) return;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    if (!pair.empty()) {
      std::size_t eq = pair.find('=');
      std::string key = core::percent_decode(pair.substr(0, eq), true);
      std::string value =
          eq == std::string_view::npos ? "" : core::percent_decode(pair.substr(eq + 1), true);
      request.query.emplace(std::move(key), std::move(value));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
}

bool is_http_error(const boost::beast::error_code& ec) {
  return ec.category() == make_error_code(http::error::bad_method).category();
}

HttpResponse too_long_target(const RequestLimits& limits) {
  return HttpResponse::error(414, "Request target too long: the limit is " +
                                      std::to_string(limits.max_target_bytes) + " bytes");
}

}  // namespace

void apply_limits(RequestParser& parser, const RequestLimits& limits) {
  parser.body_limit(limits.max_body_bytes);
  parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
}

std::optional<HttpResponse> refusal_for_read_error(const boost::beast::error_code& ec,
                                                   std::string_view unparsed,
                                                   const RequestLimits& limits) {
  if (!is_http_error(ec)) return std::nullopt;  // the socket's: reset, timeout, shut down
  if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec == http::error::short_read) {
    return std::nullopt;  // the client closed the connection
  }
  if (ec == http::error::body_limit) {
    return HttpResponse::error(413, "Request body too large: the limit is " +
                                        std::to_string(limits.max_body_bytes) + " bytes");
  }
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    // Header fields are the fault only when the request line fits in the target limit.
    const std::size_t line_end = unparsed.find("\r\n");
    const std::size_t line = line_end == std::string_view::npos ? unparsed.size() : line_end;
    if (line > limits.max_target_bytes) return too_long_target(limits);
    return HttpResponse::error(431, "Request header fields too large: the limit is " +
                                        std::to_string(limits.max_header_bytes) + " bytes");
  }
  return HttpResponse::error(400, "Bad request: " + ec.message());
}

std::optional<HttpResponse> refusal_for_request(
    const http::request<http::string_body>& message, const RequestLimits& limits) {
  if (message.target().size() > limits.max_target_bytes) return too_long_target(limits);
  return std::nullopt;
}

HttpRequest to_http_request(http::request<http::string_body>& message) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  parse_target(std::string_view(message.target().data(), message.target().size()), request);
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers[name] = std::string(field.value());
  }
  request.body = std::move(message.body());
  return request;
}

}  // namespace tollgate::server
