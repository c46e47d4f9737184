// The HTTP providers, constructed by init_chat_model from a resolved ProviderConfig. Each returns
// a ChatModel that is safe to invoke concurrently (it holds only its immutable configuration).
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "models/provider_client.h"
#include "tollgate/error.h"

namespace tollgate::models {

// OpenAI Chat Completions: POST {base_url}/chat/completions. Also every OpenAI-compatible server.
std::unique_ptr<ChatModel> make_openai_chat_model(ProviderConfig config);
// Anthropic Messages: POST {base_url}/v1/messages.
std::unique_ptr<ChatModel> make_anthropic_chat_model(ProviderConfig config);
// Gemini: POST {base_url}/v1beta/models/{model}:generateContent (streamGenerateContent?alt=sse).
std::unique_ptr<ChatModel> make_gemini_chat_model(ProviderConfig config);
// Ollama: POST {base_url}/api/chat (NDJSON stream).
std::unique_ptr<ChatModel> make_ollama_chat_model(ProviderConfig config);

// Request options merged over the model's defaults: "temperature", "max_tokens", "stop".
struct SamplingOptions {
  std::optional<double> temperature;
  std::optional<long> max_tokens;
  Json stop;  // null or an array of strings
};
// Throws kInvalidArgument naming options.<key> when a value has the wrong type.
SamplingOptions sampling_options(const ModelOptions& defaults, const Json& request_options);

// Runs `build` (which turns the caller's messages into a provider body), reporting JSON type
// errors in those messages as kInvalidArgument.
template <class Build>
Json build_request_body(Build&& build) {
  try {
    return build();
  } catch (const Json::exception& e) {
    throw Error::InvalidArgument(std::string("messages: a field has the wrong type: ") + e.what());
  }
}

// Runs `read` (which interprets the provider's answer), reporting JSON type errors in that
// answer as kUnavailable: a malformed answer is the provider's fault.
template <class Read>
void read_provider_answer(const ProviderConfig& config, Read&& read) {
  try {
    read();
  } catch (const Json::exception& e) {
    throw Error::Unavailable(config.provider + ": unexpected response shape: " + e.what());
  }
}

// What every HTTP provider model holds: its immutable configuration, named "provider:model".
class ProviderChatModel : public ChatModel {
 public:
  explicit ProviderChatModel(ProviderConfig config) : config_(std::move(config)) {}
  std::string name() const final { return config_.provider + ":" + config_.model; }

 protected:
  // `Authorization: Bearer <key>` when a key is configured (OpenAI-style servers).
  HeaderList bearer_headers() const;

  const ProviderConfig config_;
};

// POSTs `body` and hands the whole JSON answer to `read`. Parse and shape errors in the answer
// are the provider's fault (kUnavailable naming it); HTTP failures as post_json.
void fetch_answer(const ProviderConfig& config, const std::string& url, HeaderList headers,
                  const Json& body, const std::function<void(const Json& answer)>& read);

// POSTs `body` for a Server-Sent Events answer: `on_event` gets each event's name ("message"
// when absent) and data text as it arrives; errors it raises from Json are kUnavailable.
void stream_sse(
    const ProviderConfig& config, const std::string& url, HeaderList headers, const Json& body,
    const std::function<void(const std::string& event, const std::string& data)>& on_event);

// POSTs `body` for a newline-delimited JSON answer: `on_line` gets each non-blank line, parsed.
void stream_ndjson(const ProviderConfig& config, const std::string& url, HeaderList headers,
                   const Json& body, const std::function<void(const Json& line)>& on_line);

// The tool_call_id of a tool message; throws kInvalidArgument when it is missing.
std::string tool_call_id_of(const Json& message, size_t index);

}  // namespace tollgate::models
