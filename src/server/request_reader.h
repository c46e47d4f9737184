// From the bytes of a connection to an HttpRequest: the limits the parser enforces, the
// request a parsed message carries, and the answer a request gets when it cannot be served
// (too large, malformed) before its connection closes, as HTTP servers answer them.
// Pure functions of their inputs; the HTTP front end and the fuzz targets share them.
#pragma once

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "server/http_types.h"

namespace tollgate::server {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

struct RequestLimits {
  std::size_t max_body_bytes = 4 << 20;     // larger bodies: 413
  std::size_t max_header_bytes = 64 << 10;  // the request line and the header fields: 431
  std::size_t max_target_bytes = 8 << 10;   // the request target (path and query): 414
};

// Sets the parser's header and body limits.
void apply_limits(RequestParser& parser, const RequestLimits& limits);

// The answer to a request the parser refused with `ec`, given the bytes it had not consumed:
// 413 for a body over the limit, 414 when the request line alone passes the target limit, 431
// for other headers over the limit, 400 for bad framing (a malformed request line, header or
// chunk). nullopt when there is nobody to answer: the client closed or stopped mid-request.
std::optional<HttpResponse> refusal_for_read_error(const boost::beast::error_code& ec,
                                                   std::string_view unparsed,
                                                   const RequestLimits& limits);

// A parsed request's refusal: 414 for a target over the limit; nullopt when it may be served.
std::optional<HttpResponse> refusal_for_request(
    const boost::beast::http::request<boost::beast::http::string_body>& message,
    const RequestLimits& limits);

// The request a parsed message carries: method, decoded path and query, lower-case header
// names; the body is moved out of `message`.
HttpRequest to_http_request(boost::beast::http::request<boost::beast::http::string_body>& message);

}  // namespace tollgate::server
