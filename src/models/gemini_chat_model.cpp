// Google Gemini (generateContent / streamGenerateContent?alt=sse): "contents" of user/model turns
// made of parts, the system prompt as systemInstruction, tool calls as functionCall parts and
// tool results as functionResponse parts.
#include <map>

#include "models/ai_message.h"
#include "models/providers.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"

namespace tollgate::models {
namespace {

// Where a reply keeps the thoughtSignature of each function call (by tool call id): Gemini's
// thinking models refuse a later request whose functionCall parts come back without them.
constexpr const char* kThoughtSignatures = "gemini_thought_signatures";

// Gemini accepts an OpenAPI subset of JSON Schema; these keywords make it refuse the request.
Json gemini_schema(const Json& schema) {
  if (schema.is_array()) {
    Json out = Json::array();
    for (const auto& item : schema) out.push_back(gemini_schema(item));
    return out;
  }
  if (!schema.is_object()) return schema;
  Json out = Json::object();
  for (const auto& [key, value] : schema.items()) {
    if (key == "$schema" || key == "additionalProperties" || key == "$id") continue;
    // "properties" maps names to schemas: keep every name, clean every schema.
    if (key == "properties" && value.is_object()) {
      Json props = Json::object();
      for (const auto& [prop, sub] : value.items()) props[prop] = gemini_schema(sub);
      out[key] = std::move(props);
    } else {
      out[key] = gemini_schema(value);
    }
  }
  return out;
}

void append_turn(Json& contents, const std::string& role, Json parts) {
  if (parts.empty()) return;
  if (!contents.empty() && contents.back()["role"] == role) {
    for (auto& part : parts) contents.back()["parts"].push_back(std::move(part));
    return;
  }
  contents.push_back({{"role", role}, {"parts", std::move(parts)}});
}

Json text_parts(const Json& content) {
  Json parts = Json::array();
  std::string text = content_text(content);
  if (!text.empty()) parts.push_back({{"text", text}});
  return parts;
}

class GeminiChatModel final : public ProviderChatModel {
 public:
  using ProviderChatModel::ProviderChatModel;

  Json invoke(const ChatRequest& request, const TokenCallback* on_chunk) override {
    const bool stream = on_chunk != nullptr;
    Json body = build_request_body([&] { return build_body(request); });
    AiMessageBuilder builder(random_id("run-"), config_.provider, config_.model, on_chunk);
    HeaderList headers;
    if (!config_.api_key.empty()) headers.emplace_back("x-goog-api-key", config_.api_key);
    const std::string base = config_.base_url + "/v1beta/models/" + config_.model;
    if (!stream) {
      fetch_answer(config_, base + ":generateContent", std::move(headers), body,
                   [&](const Json& answer) { read_response(answer, builder); });
      return builder.finish();
    }
    stream_sse(config_, base + ":streamGenerateContent?alt=sse", std::move(headers), body,
               [&](const std::string&, const std::string& data) {
                 read_response(parse_provider_json(config_, data), builder);
               });
    require_complete_stream(config_, !builder.finish_reason().empty());
    return builder.finish();
  }

 private:
  Json build_body(const ChatRequest& request) const {
    std::string system;
    Json contents = Json::array();
    std::map<std::string, std::string> tool_names;  // tool_call_id -> name, for functionResponse
    for (size_t i = 0; i < request.messages.size(); ++i) {
      const Json& message = request.messages[i];
      const std::string type = message_type(message, i);
      const Json content = message.value("content", Json(""));
      if (type == "system") {
        if (!system.empty()) system += "\n\n";
        system += content_text(content);
      } else if (type == "human") {
        append_turn(contents, "user", text_parts(content));
      } else if (type == "ai") {
        Json parts = text_parts(content);
        const Json kwargs = message.value("additional_kwargs", Json::object());
        const Json signatures =
            kwargs.is_object() ? kwargs.value(kThoughtSignatures, Json::object()) : Json::object();
        for (const auto& call : message_tool_calls(message)) {
          const std::string name = call.value("name", "");
          const std::string id = call.value("id", "");
          tool_names[id] = name;
          Json part = {
              {"functionCall", {{"name", name}, {"args", call.value("args", Json::object())}}}};
          if (signatures.is_object() && signatures.contains(id)) {
            part["thoughtSignature"] = signatures[id];
          }
          parts.push_back(std::move(part));
        }
        append_turn(contents, "model", std::move(parts));
      } else {  // tool
        const std::string id = tool_call_id_of(message, i);
        std::string name = message.contains("name") && message["name"].is_string()
                               ? message["name"].get<std::string>()
                               : tool_names[id];
        if (name.empty()) {
          throw Error::InvalidArgument("messages[" + std::to_string(i) +
                                       "].name is required: no earlier tool call has id " + id);
        }
        const std::string text = content_text(content);
        Json response = Json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (!response.is_object()) {
          response = {{message.value("status", "") == "error" ? "error" : "result", text}};
        }
        append_turn(
            contents, "user",
            Json::array({{{"functionResponse", {{"name", name}, {"response", response}}}}}));
      }
    }
    Json body = {{"contents", std::move(contents)}};
    if (!system.empty()) body["systemInstruction"] = {{"parts", Json::array({{{"text", system}}})}};
    if (!request.tools.empty()) {
      Json declarations = Json::array();
      for (const auto& tool : request.tools) {
        Json declaration = {{"name", tool.name}, {"description", tool.description}};
        const Json params = gemini_schema(tool.parameters);
        if (params.is_object() && !params.value("properties", Json::object()).empty()) {
          declaration["parameters"] = params;
        }
        declarations.push_back(std::move(declaration));
      }
      body["tools"] = Json::array({{{"functionDeclarations", std::move(declarations)}}});
    }
    SamplingOptions sampling = sampling_options(config_.options, request.options);
    Json generation = Json::object();
    if (sampling.temperature) generation["temperature"] = *sampling.temperature;
    if (sampling.max_tokens) generation["maxOutputTokens"] = *sampling.max_tokens;
    if (!sampling.stop.is_null()) generation["stopSequences"] = sampling.stop;
    if (!generation.empty()) body["generationConfig"] = std::move(generation);
    return body;
  }

  // A whole response, or one streamed piece of it (same shape; text parts are deltas).
  void read_response(const Json& response, AiMessageBuilder& builder) const {
    if (response.contains("error")) {
      throw Error::Unavailable(config_.provider +
                               ": stream error: " + provider_error_message(response.dump()));
    }
    const Json candidates = response.value("candidates", Json::array());
    if (candidates.is_array() && !candidates.empty() && candidates[0].is_object()) {
      const Json& candidate = candidates[0];
      const Json parts = candidate.value("content", Json::object()).value("parts", Json::array());
      for (const auto& part : parts) {
        if (part.value("thought", false)) continue;
        if (part.contains("text") && part["text"].is_string()) {
          builder.add_text(part["text"].get<std::string>());
        } else if (part.contains("functionCall") && part["functionCall"].is_object()) {
          const Json& call = part["functionCall"];
          const std::string id = builder.add_complete_tool_call(
              call.value("id", ""), call.value("name", ""), call.value("args", Json::object()));
          if (part.contains("thoughtSignature")) {
            builder.additional_kwargs()[kThoughtSignatures][id] = part["thoughtSignature"];
          }
        }
      }
      if (candidate.contains("finishReason") && candidate["finishReason"].is_string()) {
        builder.set_finish_reason(candidate["finishReason"].get<std::string>());
      }
    } else if (auto feedback = response.find("promptFeedback");
               feedback != response.end() && feedback->contains("blockReason")) {
      builder.set_finish_reason((*feedback)["blockReason"].get<std::string>());
    }
    if (auto usage = response.find("usageMetadata");
        usage != response.end() && usage->is_object()) {
      const long thoughts = usage->value("thoughtsTokenCount", 0L);
      Json input_details = Json::object();
      Json output_details = Json::object();
      if (usage->contains("cachedContentTokenCount")) {
        input_details["cache_read"] = (*usage)["cachedContentTokenCount"];
      }
      if (thoughts > 0) output_details["reasoning"] = thoughts;
      builder.set_usage(usage->value("promptTokenCount", 0L),
                        usage->value("candidatesTokenCount", 0L) + thoughts,
                        std::move(input_details), std::move(output_details));
    }
    if (response.contains("modelVersion"))
      builder.set_metadata("model_version", response["modelVersion"]);
    if (response.contains("responseId")) builder.set_metadata("id", response["responseId"]);
  }
};

}  // namespace

std::unique_ptr<ChatModel> make_gemini_chat_model(ProviderConfig config) {
  return std::make_unique<GeminiChatModel>(std::move(config));
}

}  // namespace tollgate::models
