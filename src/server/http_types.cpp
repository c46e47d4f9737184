#include "server/http_types.h"

#include "server/wire_format.h"
#include "tollgate/error.h"
#include "tollgate/json_parse.h"

namespace tollgate::server {

std::optional<std::string> HttpRequest::query_value(const std::string& name) const {
  auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> HttpRequest::query_values(const std::string& name) const {
  std::vector<std::string> values;
  auto [begin, end] = query.equal_range(name);
  for (auto it = begin; it != end; ++it) values.push_back(it->second);
  return values;
}

std::string HttpRequest::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

Json HttpRequest::json_body(const Json& empty_value) const {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return empty_value;
  return parse_json(body, "Request body");
}

HttpResponse HttpResponse::json(const Json& value, int status) {
  return json_text(event_json(value), status);  // Json::dump(-1, ' ', false, replace), faster
}

HttpResponse HttpResponse::json_text(std::string text, int status) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(text);
  return response;
}

HttpResponse HttpResponse::json_shared(std::shared_ptr<const std::string> text, int status) {
  HttpResponse response;
  response.status = status;
  response.shared_body = std::move(text);
  return response;
}

HttpResponse HttpResponse::error(int status, const std::string& message) {
  return json(Json{{"detail", message}}, status);
}

HttpResponse HttpResponse::empty(int status) {
  HttpResponse response;
  response.status = status;
  response.content_type.clear();
  return response;
}

}  // namespace tollgate::server
