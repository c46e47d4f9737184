// OpenAI Chat Completions, and through a base URL every server that speaks it (OpenRouter,
// Fireworks, Baseten, vLLM, llama.cpp server, Ollama's /v1).
#include "models/ai_message.h"
#include "models/providers.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"

namespace tollgate::models {
namespace {

Json to_openai_message(const Json& message, size_t index) {
  const std::string type = message_type(message, index);
  const Json content = message.value("content", Json(""));
  if (type == "system") return {{"role", "system"}, {"content", content_text(content)}};
  if (type == "human") {
    Json out = {{"role", "user"},
                {"content", content.is_array() ? content : Json(content_text(content))}};
    if (message.contains("name") && message["name"].is_string()) out["name"] = message["name"];
    return out;
  }
  if (type == "tool") {
    return {{"role", "tool"},
            {"tool_call_id", tool_call_id_of(message, index)},
            {"content", content_text(content)}};
  }
  // ai
  Json out = {{"role", "assistant"}, {"content", content_text(content)}};
  const Json calls = message_tool_calls(message);
  if (calls.is_array() && !calls.empty()) {
    Json openai_calls = Json::array();
    for (const auto& call : calls) {
      openai_calls.push_back({{"id", call.value("id", "")},
                              {"type", "function"},
                              {"function",
                               {{"name", call.value("name", "")},
                                {"arguments", call.value("args", Json::object()).dump()}}}});
    }
    out["tool_calls"] = std::move(openai_calls);
    if (out["content"] == "") out["content"] = nullptr;
  }
  return out;
}

void record_usage(AiMessageBuilder& builder, const Json& usage) {
  if (!usage.is_object()) return;
  Json input_details = Json::object();
  Json output_details = Json::object();
  if (auto d = usage.find("prompt_tokens_details"); d != usage.end() && d->is_object()) {
    if (d->contains("cached_tokens") && (*d)["cached_tokens"].is_number_integer()) {
      input_details["cache_read"] = (*d)["cached_tokens"];
    }
  }
  if (auto d = usage.find("completion_tokens_details"); d != usage.end() && d->is_object()) {
    if (d->contains("reasoning_tokens") && (*d)["reasoning_tokens"].is_number_integer()) {
      output_details["reasoning"] = (*d)["reasoning_tokens"];
    }
  }
  builder.set_usage(usage.value("prompt_tokens", 0L), usage.value("completion_tokens", 0L),
                    std::move(input_details), std::move(output_details));
}

class OpenAiChatModel final : public ProviderChatModel {
 public:
  using ProviderChatModel::ProviderChatModel;

  Json invoke(const ChatRequest& request, const TokenCallback* on_chunk) override {
    const bool stream = on_chunk != nullptr;
    Json body = build_request_body([&] { return build_body(request, stream); });
    AiMessageBuilder builder(random_id("run-"), config_.provider, config_.model, on_chunk);
    const std::string url = config_.base_url + "/chat/completions";
    if (!stream) {
      fetch_answer(config_, url, bearer_headers(), body,
                   [&](const Json& answer) { read_full_response(answer, builder); });
      return builder.finish();
    }
    bool done = false;
    stream_sse(config_, url, bearer_headers(), body,
               [&](const std::string&, const std::string& data) {
                 if (done) return;
                 if (data == "[DONE]") {
                   done = true;
                   return;
                 }
                 read_stream_chunk(parse_provider_json(config_, data), builder);
               });
    // Some compatible servers omit [DONE]; a finish_reason also marks a complete reply.
    require_complete_stream(config_, done || !builder.finish_reason().empty());
    return builder.finish();
  }

 private:
  Json build_body(const ChatRequest& request, bool stream) const {
    Json messages = Json::array();
    for (size_t i = 0; i < request.messages.size(); ++i) {
      messages.push_back(to_openai_message(request.messages[i], i));
    }
    Json body = {{"model", config_.model}, {"messages", std::move(messages)}};
    if (!request.tools.empty()) {
      Json tools = Json::array();
      for (const auto& tool : request.tools) {
        tools.push_back({{"type", "function"},
                         {"function",
                          {{"name", tool.name},
                           {"description", tool.description},
                           {"parameters", tool.parameters}}}});
      }
      body["tools"] = std::move(tools);
    }
    SamplingOptions sampling = sampling_options(config_.options, request.options);
    if (sampling.temperature) body["temperature"] = *sampling.temperature;
    if (sampling.max_tokens) {
      // OpenAI itself replaced max_tokens (reasoning models refuse it); compatible servers
      // (vLLM, llama.cpp, OpenRouter, ...) still read the old name.
      const bool openai_itself = config_.provider == "openai" && config_.default_endpoint;
      body[openai_itself ? "max_completion_tokens" : "max_tokens"] = *sampling.max_tokens;
    }
    if (!sampling.stop.is_null()) body["stop"] = sampling.stop;
    if (stream) {
      body["stream"] = true;
      body["stream_options"] = {{"include_usage", true}};
    }
    return body;
  }

  void read_full_response(const Json& response, AiMessageBuilder& builder) const {
    const Json choices = response.value("choices", Json::array());
    if (!choices.is_array() || choices.empty() || !choices[0].is_object()) {
      throw Error::Unavailable(config_.provider + ": the response has no choices");
    }
    const Json& choice = choices[0];
    const Json message = choice.value("message", Json::object());
    if (message.contains("content") && message["content"].is_string()) {
      builder.add_text(message["content"].get<std::string>());
    }
    const Json calls = message.value("tool_calls", Json::array());
    int index = 0;
    for (const auto& call : calls.is_array() ? calls : Json::array()) {
      const Json function = call.value("function", Json::object());
      builder.start_tool_call(index, call.value("id", ""), function.value("name", ""));
      builder.add_tool_args(index, function.value("arguments", ""));
      ++index;
    }
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
      builder.set_finish_reason(choice["finish_reason"].get<std::string>());
    }
    record_usage(builder, response.value("usage", Json()));
    if (response.contains("id") && response["id"].is_string())
      builder.set_metadata("id", response["id"]);
  }

  void read_stream_chunk(const Json& chunk, AiMessageBuilder& builder) const {
    if (chunk.contains("error")) {
      throw Error::Unavailable(config_.provider +
                               ": stream error: " + provider_error_message(chunk.dump()));
    }
    if (chunk.contains("usage")) record_usage(builder, chunk["usage"]);
    if (chunk.contains("id") && chunk["id"].is_string()) builder.set_metadata("id", chunk["id"]);
    const Json choices = chunk.value("choices", Json::array());
    if (!choices.is_array() || choices.empty() || !choices[0].is_object()) return;
    const Json& choice = choices[0];
    const Json delta = choice.value("delta", Json::object());
    if (delta.contains("content") && delta["content"].is_string()) {
      builder.add_text(delta["content"].get<std::string>());
    }
    if (delta.contains("tool_calls") && delta["tool_calls"].is_array()) {
      for (const auto& call : delta["tool_calls"]) {
        const int index = call.value("index", 0);
        const Json function = call.value("function", Json::object());
        const std::string id =
            call.contains("id") && call["id"].is_string() ? call["id"].get<std::string>() : "";
        const std::string name = function.contains("name") && function["name"].is_string()
                                     ? function["name"].get<std::string>()
                                     : "";
        if (!id.empty() || !name.empty()) builder.start_tool_call(index, id, name);
        if (function.contains("arguments") && function["arguments"].is_string()) {
          builder.add_tool_args(index, function["arguments"].get<std::string>());
        }
      }
    }
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
      builder.set_finish_reason(choice["finish_reason"].get<std::string>());
    }
  }
};

}  // namespace

std::unique_ptr<ChatModel> make_openai_chat_model(ProviderConfig config) {
  return std::make_unique<OpenAiChatModel>(std::move(config));
}

}  // namespace tollgate::models
