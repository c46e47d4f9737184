// Anthropic Messages API: system prompt as the top-level "system" field, tool calls as tool_use
// content blocks, tool results as tool_result blocks inside user turns.
#include "models/ai_message.h"
#include "models/providers.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"

namespace tollgate::models {
namespace {

constexpr long kDefaultMaxTokens = 4096;
constexpr const char* kApiVersion = "2023-06-01";

Json as_blocks(const Json& content) {
  if (content.is_array()) return content;
  Json blocks = Json::array();
  std::string text = content_text(content);
  if (!text.empty()) blocks.push_back({{"type", "text"}, {"text", text}});
  return blocks;
}

// Appends a turn, merging it into the previous one when the role repeats (Anthropic expects
// user and assistant turns to alternate; parallel tool results form one user turn).
void append_turn(Json& messages, const std::string& role, Json blocks) {
  if (blocks.empty()) return;
  if (!messages.empty() && messages.back()["role"] == role) {
    Json& previous = messages.back()["content"];
    for (auto& block : blocks) previous.push_back(std::move(block));
    return;
  }
  messages.push_back({{"role", role}, {"content", std::move(blocks)}});
}

void record_usage(AiMessageBuilder& builder, const Json& usage, long output_tokens) {
  const long cache_read = usage.value("cache_read_input_tokens", 0L);
  const long cache_creation = usage.value("cache_creation_input_tokens", 0L);
  Json input_details = Json::object();
  if (cache_read > 0) input_details["cache_read"] = cache_read;
  if (cache_creation > 0) input_details["cache_creation"] = cache_creation;
  builder.set_usage(usage.value("input_tokens", 0L) + cache_read + cache_creation, output_tokens,
                    std::move(input_details));
}

class AnthropicChatModel final : public ProviderChatModel {
 public:
  using ProviderChatModel::ProviderChatModel;

  Json invoke(const ChatRequest& request, const TokenCallback* on_chunk) override {
    const bool stream = on_chunk != nullptr;
    Json body = build_request_body([&] { return build_body(request, stream); });
    AiMessageBuilder builder(random_id("run-"), config_.provider, config_.model, on_chunk);
    HeaderList headers = {{"anthropic-version", kApiVersion}};
    if (!config_.api_key.empty()) headers.emplace_back("x-api-key", config_.api_key);
    const std::string url = config_.base_url + "/v1/messages";
    if (!stream) {
      fetch_answer(config_, url, std::move(headers), body,
                   [&](const Json& answer) { read_full_response(answer, builder); });
      return builder.finish();
    }
    Json start_usage = Json::object();
    long output_tokens = 0;
    stream_sse(config_, url, std::move(headers), body,
               [&](const std::string& event, const std::string& data) {
                 read_stream_event(event, parse_provider_json(config_, data), builder, start_usage,
                                   output_tokens);
               });
    require_complete_stream(config_, !builder.finish_reason().empty());
    record_usage(builder, start_usage, output_tokens);
    return builder.finish();
  }

 private:
  Json build_body(const ChatRequest& request, bool stream) const {
    std::string system;
    Json messages = Json::array();
    for (size_t i = 0; i < request.messages.size(); ++i) {
      const Json& message = request.messages[i];
      const std::string type = message_type(message, i);
      const Json content = message.value("content", Json(""));
      if (type == "system") {
        if (!system.empty()) system += "\n\n";
        system += content_text(content);
      } else if (type == "human") {
        append_turn(messages, "user", as_blocks(content));
      } else if (type == "tool") {
        Json result = {{"type", "tool_result"},
                       {"tool_use_id", tool_call_id_of(message, i)},
                       {"content", content_text(content)}};
        if (message.value("status", "") == "error") result["is_error"] = true;
        append_turn(messages, "user", Json::array({std::move(result)}));
      } else {  // ai
        // Only the text: tool_use blocks a stored reply may carry in its content are rebuilt
        // from tool_calls below, and sending both would duplicate the ids.
        Json blocks = as_blocks(Json(content_text(content)));
        for (const auto& call : message_tool_calls(message)) {
          blocks.push_back({{"type", "tool_use"},
                            {"id", call.value("id", "")},
                            {"name", call.value("name", "")},
                            {"input", call.value("args", Json::object())}});
        }
        append_turn(messages, "assistant", std::move(blocks));
      }
    }
    SamplingOptions sampling = sampling_options(config_.options, request.options);
    Json body = {{"model", config_.model},
                 {"max_tokens", sampling.max_tokens.value_or(kDefaultMaxTokens)},
                 {"messages", std::move(messages)}};
    if (!system.empty()) body["system"] = system;
    if (!request.tools.empty()) {
      Json tools = Json::array();
      for (const auto& tool : request.tools) {
        tools.push_back({{"name", tool.name},
                         {"description", tool.description},
                         {"input_schema", tool.parameters}});
      }
      body["tools"] = std::move(tools);
    }
    if (sampling.temperature) body["temperature"] = *sampling.temperature;
    if (!sampling.stop.is_null()) body["stop_sequences"] = sampling.stop;
    if (stream) body["stream"] = true;
    return body;
  }

  void read_full_response(const Json& response, AiMessageBuilder& builder) const {
    if (!response.is_object() || !response.contains("content") || !response["content"].is_array()) {
      throw Error::Unavailable(config_.provider + ": the response has no content");
    }
    for (const auto& block : response["content"]) {
      const std::string type = block.value("type", "");
      if (type == "text") {
        builder.add_text(block.value("text", ""));
      } else if (type == "tool_use") {
        builder.add_complete_tool_call(block.value("id", ""), block.value("name", ""),
                                       block.value("input", Json::object()));
      }
    }
    if (response.contains("stop_reason") && response["stop_reason"].is_string()) {
      builder.set_finish_reason(response["stop_reason"].get<std::string>());
    }
    if (response.contains("id")) builder.set_metadata("id", response["id"]);
    const Json usage = response.value("usage", Json::object());
    record_usage(builder, usage, usage.value("output_tokens", 0L));
  }

  void read_stream_event(const std::string& event, const Json& data, AiMessageBuilder& builder,
                         Json& start_usage, long& output_tokens) const {
    const std::string type = data.value("type", event);
    if (type == "error") {
      throw Error::Unavailable(config_.provider +
                               ": stream error: " + provider_error_message(data.dump()));
    }
    if (type == "message_start") {
      const Json message = data.value("message", Json::object());
      if (message.contains("id")) builder.set_metadata("id", message["id"]);
      start_usage = message.value("usage", Json::object());
      output_tokens = start_usage.value("output_tokens", 0L);
    } else if (type == "content_block_start") {
      const Json block = data.value("content_block", Json::object());
      const int index = data.value("index", 0);
      if (block.value("type", "") == "tool_use") {
        builder.start_tool_call(index, block.value("id", ""), block.value("name", ""));
      } else if (block.value("type", "") == "text") {
        builder.add_text(block.value("text", ""));
      }
    } else if (type == "content_block_delta") {
      const Json delta = data.value("delta", Json::object());
      const std::string delta_type = delta.value("type", "");
      if (delta_type == "text_delta") {
        builder.add_text(delta.value("text", ""));
      } else if (delta_type == "input_json_delta") {
        builder.add_tool_args(data.value("index", 0), delta.value("partial_json", ""));
      }
    } else if (type == "message_delta") {
      const Json delta = data.value("delta", Json::object());
      if (delta.contains("stop_reason") && delta["stop_reason"].is_string()) {
        builder.set_finish_reason(delta["stop_reason"].get<std::string>());
      }
      const Json usage = data.value("usage", Json::object());
      output_tokens = usage.value("output_tokens", output_tokens);
    }
    // ping, content_block_stop, message_stop carry nothing we need.
  }
};

}  // namespace

std::unique_ptr<ChatModel> make_anthropic_chat_model(ProviderConfig config) {
  return std::make_unique<AnthropicChatModel>(std::move(config));
}

}  // namespace tollgate::models
