// The HTTP providers, constructed by init_chat_model from a resolved ProviderConfig. Each returns
// a ChatModel that is safe to invoke concurrently (it holds only its immutable configuration).
#pragma once

#include <memory>

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

// The tool_call_id of a tool message; throws kInvalidArgument when it is missing.
std::string tool_call_id_of(const Json& message, size_t index);

}  // namespace tollgate::models
