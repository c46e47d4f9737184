#include "models/provider_client.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "tollgate/error.h"

namespace tollgate::models {
namespace {

using std::chrono::milliseconds;

bool is_retryable_status(long status) {
  return status == 408 || status == 409 || status == 429 || status >= 500;
}

// The wait a server asked for: "retry-after-ms" (OpenAI) or "retry-after" in seconds.
// HTTP-date values are not honoured; the exponential backoff applies then.
std::optional<milliseconds> retry_after(const HttpResponse& response) {
  auto parse = [](const std::string& text, double scale) -> std::optional<milliseconds> {
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !(value >= 0) || !std::isfinite(value)) {
      return std::nullopt;
    }
    return milliseconds(static_cast<long long>(value * scale));
  };
  if (auto it = response.headers.find("retry-after-ms"); it != response.headers.end()) {
    if (auto v = parse(it->second, 1.0)) return v;
  }
  if (auto it = response.headers.find("retry-after"); it != response.headers.end()) {
    return parse(it->second, 1000.0);
  }
  return std::nullopt;
}

std::string describe_failure(const ProviderConfig& config, const HttpResponse& response) {
  if (!response.transport_error.empty()) {
    if (response.timed_out) {
      return config.provider + ": request timed out after " +
             std::to_string(config.options.timeout.count()) + " ms (" + response.transport_error +
             ")";
    }
    return config.provider + ": could not reach " + config.base_url + ": " +
           response.transport_error;
  }
  return config.provider + ": HTTP " + std::to_string(response.status) + ": " +
         provider_error_message(response.body);
}

}  // namespace

std::string provider_error_message(const std::string& body) {
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_array() && !parsed.empty()) parsed = parsed.front();  // Gemini streams errors so
  if (parsed.is_object()) {
    if (auto e = parsed.find("error"); e != parsed.end()) {
      if (e->is_string()) return e->get<std::string>();
      if (e->is_object() && e->contains("message") && (*e)["message"].is_string()) {
        return (*e)["message"].get<std::string>();
      }
    }
    if (auto m = parsed.find("message"); m != parsed.end() && m->is_string()) {
      return m->get<std::string>();
    }
    if (auto d = parsed.find("detail"); d != parsed.end() && d->is_string()) {
      return d->get<std::string>();
    }
  }
  std::string raw = body.size() > 500 ? body.substr(0, 500) + "..." : body;
  return raw.empty() ? "(empty response body)" : raw;
}

void require_complete_stream(const ProviderConfig& config, bool complete) {
  if (!complete) {
    throw Error::Unavailable(config.provider +
                             ": the stream ended before the reply was complete (connection closed "
                             "early)");
  }
}

Json parse_provider_json(const ProviderConfig& config, const std::string& text) {
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    throw Error::Unavailable(config.provider +
                             ": the response is not valid JSON: " + text.substr(0, 200));
  }
  return parsed;
}

HttpResponse post_json(const ProviderConfig& config, const std::string& url, HeaderList headers,
                       const Json& body, const HttpDataSink* on_data) {
  const ModelOptions& options = config.options;
  HttpRequest request;
  request.url = url;
  request.headers = std::move(headers);
  request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back(
      "Accept", on_data != nullptr ? "text/event-stream, application/json" : "application/json");
  for (const auto& [name, value] : options.headers) request.headers.emplace_back(name, value);
  request.body = body.dump();
  request.timeout = options.timeout;
  request.connect_timeout = options.connect_timeout;

  const int attempts = 1 + std::max(0, options.max_retries);
  milliseconds backoff = options.initial_backoff;
  for (int attempt = 1;; ++attempt) {
    HttpResponse response = http_post(request, on_data);
    const bool transport_failed = !response.transport_error.empty();
    if (!transport_failed && response.status >= 200 && response.status < 300) return response;

    if (!transport_failed && (response.status == 401 || response.status == 403)) {
      throw Error::Unavailable(config.provider + ": authentication failed (HTTP " +
                               std::to_string(response.status) +
                               "): " + provider_error_message(response.body));
    }
    if (!transport_failed && !is_retryable_status(response.status)) {
      throw Error::InvalidArgument(config.provider + ": request rejected (HTTP " +
                                   std::to_string(response.status) +
                                   "): " + provider_error_message(response.body));
    }
    if (response.streamed_any) {
      throw Error::Unavailable(describe_failure(config, response) +
                               " (the stream broke off after it had started)");
    }
    if (attempt >= attempts) {
      throw Error::Unavailable(describe_failure(config, response) + " (gave up after " +
                               std::to_string(attempt) +
                               (attempt == 1 ? " attempt)" : " attempts)"));
    }
    milliseconds wait = std::min(retry_after(response).value_or(backoff), options.max_backoff);
    if (options.sleep) {
      options.sleep(wait);
    } else {
      std::this_thread::sleep_for(wait);
    }
    backoff = std::min(backoff * 2, options.max_backoff);
  }
}

}  // namespace tollgate::models
