// The request/answer exchange the HTTP providers share: one POST, then the whole JSON answer or
// its stream (SSE or NDJSON) handed to the provider's reader.
#include "models/providers.h"
#include "models/stream_parsers.h"

namespace tollgate::models {

HeaderList ProviderChatModel::bearer_headers() const {
  HeaderList headers;
  if (!config_.api_key.empty()) headers.emplace_back("Authorization", "Bearer " + config_.api_key);
  return headers;
}

void fetch_answer(const ProviderConfig& config, const std::string& url, HeaderList headers,
                  const Json& body, const std::function<void(const Json& answer)>& read) {
  HttpResponse response = post_json(config, url, std::move(headers), body);
  read_provider_answer(config, [&] { read(parse_provider_json(config, response.body)); });
}

void stream_sse(
    const ProviderConfig& config, const std::string& url, HeaderList headers, const Json& body,
    const std::function<void(const std::string& event, const std::string& data)>& on_event) {
  SseParser parser([&](const std::string& event, const std::string& data) {
    read_provider_answer(config, [&] { on_event(event, data); });
  });
  HttpDataSink sink = [&](std::string_view piece) { parser.feed(piece); };
  post_json(config, url, std::move(headers), body, &sink);
  parser.finish();
}

void stream_ndjson(const ProviderConfig& config, const std::string& url, HeaderList headers,
                   const Json& body, const std::function<void(const Json& line)>& on_line) {
  LineSplitter lines([&](std::string_view line) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) return;
    read_provider_answer(config, [&] { on_line(parse_provider_json(config, std::string(line))); });
  });
  HttpDataSink sink = [&](std::string_view piece) { lines.feed(piece); };
  post_json(config, url, std::move(headers), body, &sink);
  lines.finish();
}

}  // namespace tollgate::models
