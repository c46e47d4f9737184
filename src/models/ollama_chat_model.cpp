// Ollama's native /api/chat: OpenAI-like roles, tool call arguments as JSON objects (not text),
// newline-delimited JSON when streaming.
#include <map>

#include "models/ai_message.h"
#include "models/providers.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"

namespace tollgate::models {
namespace {

class OllamaChatModel final : public ProviderChatModel {
 public:
  using ProviderChatModel::ProviderChatModel;

  Json invoke(const ChatRequest& request, const TokenCallback* on_chunk) override {
    const bool stream = on_chunk != nullptr;
    Json body = build_request_body([&] { return build_body(request, stream); });
    AiMessageBuilder builder(random_id("run-"), config_.provider, config_.model, on_chunk);
    const std::string url = config_.base_url + "/api/chat";
    auto read = [&](const Json& line) { read_line(line, builder); };
    if (!stream) {
      fetch_answer(config_, url, bearer_headers(), body, read);
      return builder.finish();
    }
    stream_ndjson(config_, url, bearer_headers(), body, read);
    require_complete_stream(config_, !builder.finish_reason().empty());
    return builder.finish();
  }

 private:
  Json build_body(const ChatRequest& request, bool stream) const {
    Json messages = Json::array();
    std::map<std::string, std::string> tool_names;  // tool_call_id -> name
    for (size_t i = 0; i < request.messages.size(); ++i) {
      const Json& message = request.messages[i];
      const std::string type = message_type(message, i);
      const std::string text = content_text(message.value("content", Json("")));
      if (type == "system") {
        messages.push_back({{"role", "system"}, {"content", text}});
      } else if (type == "human") {
        messages.push_back({{"role", "user"}, {"content", text}});
      } else if (type == "tool") {
        const std::string id = tool_call_id_of(message, i);
        Json out = {{"role", "tool"}, {"content", text}};
        std::string name = message.contains("name") && message["name"].is_string()
                               ? message["name"].get<std::string>()
                               : tool_names[id];
        if (!name.empty()) out["tool_name"] = name;
        messages.push_back(std::move(out));
      } else {  // ai
        Json out = {{"role", "assistant"}, {"content", text}};
        const Json calls = message_tool_calls(message);
        if (!calls.empty()) {
          Json ollama_calls = Json::array();
          for (const auto& call : calls) {
            tool_names[call.value("id", "")] = call.value("name", "");
            ollama_calls.push_back({{"function",
                                     {{"name", call.value("name", "")},
                                      {"arguments", call.value("args", Json::object())}}}});
          }
          out["tool_calls"] = std::move(ollama_calls);
        }
        messages.push_back(std::move(out));
      }
    }
    Json body = {{"model", config_.model}, {"messages", std::move(messages)}, {"stream", stream}};
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
    Json options = Json::object();
    if (sampling.temperature) options["temperature"] = *sampling.temperature;
    if (sampling.max_tokens) options["num_predict"] = *sampling.max_tokens;
    if (!sampling.stop.is_null()) options["stop"] = sampling.stop;
    if (!options.empty()) body["options"] = std::move(options);
    return body;
  }

  // One NDJSON line of a stream, or the whole non-streamed answer (same shape).
  void read_line(const Json& line, AiMessageBuilder& builder) const {
    if (line.contains("error")) {
      throw Error::Unavailable(config_.provider + ": " + provider_error_message(line.dump()));
    }
    const Json message = line.value("message", Json::object());
    if (message.contains("content") && message["content"].is_string()) {
      builder.add_text(message["content"].get<std::string>());
    }
    for (const auto& call : message.value("tool_calls", Json::array())) {
      const Json function = call.value("function", Json::object());
      Json args = function.value("arguments", Json::object());
      if (args.is_string()) {  // some models put the JSON text here
        Json parsed = Json::parse(args.get<std::string>(), nullptr, false);
        if (!parsed.is_discarded()) args = std::move(parsed);
      }
      builder.add_complete_tool_call(call.value("id", ""), function.value("name", ""), args);
    }
    if (line.value("done", false)) {
      // Older servers send no done_reason; "done" alone still ends the reply.
      const bool has_reason = line.contains("done_reason") && line["done_reason"].is_string();
      builder.set_finish_reason(has_reason ? line["done_reason"].get<std::string>() : "stop");
      builder.set_usage(line.value("prompt_eval_count", 0L), line.value("eval_count", 0L));
    }
  }
};

}  // namespace

std::unique_ptr<ChatModel> make_ollama_chat_model(ProviderConfig config) {
  return std::make_unique<OllamaChatModel>(std::move(config));
}

}  // namespace tollgate::models
