// What every HTTP provider shares: where it lives, how it authenticates, and one JSON POST with
// retries (exponential backoff, Retry-After honoured) and errors mapped to tollgate::Error.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "models/http_client.h"
#include "tollgate/chat_model.h"

namespace tollgate::models {

struct ProviderConfig {
  std::string provider;  // "openai", "openrouter", "anthropic", "google_genai", "ollama", ...
  std::string model;
  std::string base_url;           // without a trailing slash
  std::string api_key;            // may be empty (local servers)
  bool default_endpoint = false;  // base_url is the provider's own public API, not a stand-in
  ModelOptions options;  // timeouts, retries, sampling defaults, extra headers, injected sleep
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// POSTs `body` as JSON to `url`. Retries 408/409/429/5xx answers and connection failures up to
// options.max_retries times; a stream that already delivered data is never retried (its chunks
// were seen). Returns the 2xx response; throws kUnavailable (unreachable, timed out, 401/403,
// retries exhausted) or kInvalidArgument (other 4xx), quoting the provider's error message.
// Thread-safe: uses nothing but its arguments.
HttpResponse post_json(const ProviderConfig& config, const std::string& url, HeaderList headers,
                       const Json& body, const HttpDataSink* on_data = nullptr);

// The human-readable message in a provider error body ({"error":{"message"}}, {"error":"..."},
// {"message":"..."}, Gemini's [{"error":...}]), or the raw body when it is not JSON.
std::string provider_error_message(const std::string& body);

// Throws kUnavailable when a stream ended without its provider's end marker: the connection
// closed early and the reply is truncated.
void require_complete_stream(const ProviderConfig& config, bool complete);

// Parses a JSON document received from the provider; throws kUnavailable naming the provider
// when it is not valid JSON (a provider fault, not the caller's).
Json parse_provider_json(const ProviderConfig& config, const std::string& text);

}  // namespace tollgate::models
