// Whole HTTP requests: the bytes a client sends, through the request parser with the server's
// limits (smaller here, so inputs reach them), the refusals of what cannot be served, and the
// router with every API route and the console's files. Up to four pipelined requests a run.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <cstdint>
#include <string_view>

#include "api_fixture.h"
#include "server/request_reader.h"

namespace {

namespace http = boost::beast::http;
using tollgate::server::RequestParser;

const tollgate::server::RequestLimits kLimits{
    .max_body_bytes = 16 << 10, .max_header_bytes = 4 << 10, .max_target_bytes = 1 << 10};

// Feeds `rest` to `parser` until a request is complete or the bytes run out (then the client
// is taken to have closed). Consumes what the parser used. A parser that asks for more after
// being offered every byte left is told the input ended: offering it the same bytes again, with
// nothing new, breaks Beast's contract (as the server's reads never do: they put only after
// reading more), and its chunk parser asserts on it.
boost::beast::error_code parse_one(RequestParser& parser, std::string_view& rest) {
  boost::beast::error_code ec;
  while (!parser.is_done()) {
    const std::size_t used = parser.put(boost::asio::buffer(rest.data(), rest.size()), ec);
    rest.remove_prefix(used);
    if (ec == http::error::need_more || (!ec && used == 0 && !parser.is_done())) {
      ec = {};
      parser.put_eof(ec);
      break;
    }
    if (ec) break;
  }
  return ec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& fixture = tollgate::fuzz::ApiFixture::get();
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < 4 && !rest.empty(); ++i) {
    RequestParser parser;
    tollgate::server::apply_limits(parser, kLimits);
    parser.eager(true);
    const boost::beast::error_code ec = parse_one(parser, rest);
    if (ec) {
      (void)tollgate::server::refusal_for_read_error(ec, rest, kLimits);
      return 0;
    }
    if (tollgate::server::refusal_for_request(parser.get(), kLimits)) return 0;
    const bool keep_alive = parser.get().keep_alive();
    tollgate::server::HttpRequest request = tollgate::server::to_http_request(parser.get());
    if (request.method != "OPTIONS") (void)fixture.handle(std::move(request));
    if (!keep_alive) return 0;
  }
  return 0;
}
