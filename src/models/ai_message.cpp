#include "models/ai_message.h"

#include "tollgate/error.h"
#include "tollgate/messages.h"

namespace tollgate::models {

std::string message_type(const Json& message, size_t index) {
  // Named only when refused: a request asks this of every message of the conversation.
  const auto where = [index] { return "messages[" + std::to_string(index) + "]"; };
  if (!message.is_object()) throw Error::InvalidArgument(where() + " must be an object");
  const std::string type = tollgate::message_type(message);
  if (type.empty()) throw Error::InvalidArgument(where() + ".type is missing");
  if (type == "human" || type == "ai" || type == "system" || type == "tool") return type;
  if (type == "developer") return "system";
  throw Error::InvalidArgument(where() + ".type '" + type +
                               "' is not one of human, ai, system, tool");
}

std::string content_text(const Json& content) {
  return tollgate::content_text(content);
}

std::string random_id(std::string_view prefix) {
  return std::string(prefix) + uuid4();
}

Json empty_ai_message(const std::string& id) {
  // Member by member: an initializer list copies every member twice on its way in.
  Json message = Json::object();
  auto& members = message.get_ref<Json::object_t&>();
  members.emplace("type", "ai");
  members.emplace("id", id);
  members.emplace("content", "");
  members.emplace("tool_calls", Json::array());
  members.emplace("invalid_tool_calls", Json::array());
  members.emplace("additional_kwargs", Json::object());
  members.emplace("response_metadata", Json::object());
  return message;
}

namespace {

Json chunk_skeleton_of(const std::string& id) {
  Json chunk = empty_ai_message(id);
  chunk.get_ref<Json::object_t&>().emplace("tool_call_chunks", Json::array());
  return chunk;
}

}  // namespace

void stream_message_as_chunks(const Json& message, const TokenCallback& on_chunk) {
  // One chunk, its content and tool call chunks set for each call and emptied again after it:
  // the callback sees each chunk whole, and the skeleton is built once per message.
  Json chunk = chunk_skeleton_of(message.value("id", ""));
  Json& chunk_content = chunk["content"];
  Json& chunk_calls = chunk["tool_call_chunks"];
  const Json& content = message.contains("content") ? message["content"] : null_json();
  if (content.is_string()) {
    const std::string& text = content.get_ref<const std::string&>();
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find_first_of(" \n\t", start);
      end = end == std::string::npos ? text.size() : text.find_first_not_of(" \n\t", end);
      if (end == std::string::npos) end = text.size();
      chunk_content.get_ref<std::string&>().assign(text, start, end - start);
      on_chunk(chunk);
      start = end;
    }
    chunk_content = "";
  } else if (!content.is_null()) {
    chunk_content = content;
    on_chunk(chunk);
    chunk_content = "";
  }
  int index = 0;
  for (const auto& call : message.value("tool_calls", Json::array())) {
    chunk_calls = Json::array({Json{{"index", index++},
                                    {"id", call.value("id", Json())},
                                    {"name", call.value("name", Json())},
                                    {"args", call.value("args", Json::object()).dump()},
                                    {"type", "tool_call_chunk"}}});
    on_chunk(chunk);
  }
  chunk_calls = Json::array();
  chunk["response_metadata"] = message.value("response_metadata", Json::object());
  if (message.contains("usage_metadata")) chunk["usage_metadata"] = message["usage_metadata"];
  on_chunk(chunk);
}

AiMessageBuilder::AiMessageBuilder(std::string id, std::string provider, std::string model_name,
                                   const TokenCallback* on_chunk)
    : id_(std::move(id)),
      provider_(std::move(provider)),
      model_name_(std::move(model_name)),
      on_chunk_(on_chunk) {}

Json AiMessageBuilder::chunk_skeleton() const {
  return chunk_skeleton_of(id_);
}

void AiMessageBuilder::emit(Json chunk) {
  if (on_chunk_ != nullptr && *on_chunk_) (*on_chunk_)(chunk);
}

void AiMessageBuilder::add_text(std::string_view delta) {
  if (delta.empty()) return;
  content_.append(delta);
  if (on_chunk_ == nullptr) return;
  Json chunk = chunk_skeleton();
  chunk["content"] = std::string(delta);
  emit(std::move(chunk));
}

void AiMessageBuilder::start_tool_call(int index, const std::string& id, const std::string& name) {
  auto& call = tool_calls_[index];
  if (!id.empty()) call.id = id;
  if (!name.empty()) call.name = name;
  if (on_chunk_ == nullptr) return;
  Json chunk = chunk_skeleton();
  chunk["tool_call_chunks"].push_back({{"index", index},
                                       {"id", id.empty() ? Json() : Json(id)},
                                       {"name", name.empty() ? Json() : Json(name)},
                                       {"args", ""},
                                       {"type", "tool_call_chunk"}});
  emit(std::move(chunk));
}

void AiMessageBuilder::add_tool_args(int index, std::string_view fragment) {
  if (fragment.empty()) return;
  tool_calls_[index].args.append(fragment);
  if (on_chunk_ == nullptr) return;
  Json chunk = chunk_skeleton();
  chunk["tool_call_chunks"].push_back({{"index", index},
                                       {"id", nullptr},
                                       {"name", nullptr},
                                       {"args", std::string(fragment)},
                                       {"type", "tool_call_chunk"}});
  emit(std::move(chunk));
}

std::string AiMessageBuilder::add_complete_tool_call(const std::string& id, const std::string& name,
                                                     const Json& args) {
  const int index = tool_calls_.empty() ? 0 : tool_calls_.rbegin()->first + 1;
  auto& call = tool_calls_[index];
  call.id = id.empty() ? random_id("call_") : id;
  call.name = name;
  call.args = args.is_null() ? "{}" : args.dump();
  if (on_chunk_ == nullptr) return call.id;
  Json chunk = chunk_skeleton();
  chunk["tool_call_chunks"].push_back({{"index", index},
                                       {"id", call.id},
                                       {"name", call.name},
                                       {"args", call.args},
                                       {"type", "tool_call_chunk"}});
  emit(std::move(chunk));
  return call.id;
}

void AiMessageBuilder::set_usage(long input_tokens, long output_tokens, Json input_details,
                                 Json output_details) {
  usage_ = Json{{"input_tokens", input_tokens},
                {"output_tokens", output_tokens},
                {"total_tokens", input_tokens + output_tokens},
                {"input_token_details", std::move(input_details)},
                {"output_token_details", std::move(output_details)}};
}

Json AiMessageBuilder::response_metadata() const {
  Json meta = extra_metadata_;
  meta["model_name"] = model_name_;
  meta["model_provider"] = provider_;
  if (!finish_reason_.empty()) meta["finish_reason"] = finish_reason_;
  return meta;
}

Json AiMessageBuilder::finish() {
  if (on_chunk_ != nullptr) {
    Json chunk = chunk_skeleton();
    chunk["response_metadata"] = response_metadata();
    if (!usage_.is_null()) chunk["usage_metadata"] = usage_;
    emit(std::move(chunk));
  }
  Json message = empty_ai_message(id_);
  message["content"] = content_;
  for (auto& [index, call] : tool_calls_) {
    if (call.id.empty()) call.id = random_id("call_");
    Json args = Json::object();
    std::string error;
    if (!call.args.empty()) {
      args = Json::parse(call.args, nullptr, /*allow_exceptions=*/false);
      if (args.is_discarded()) {
        error = "Function " + call.name + " arguments:\n\n" + call.args + "\n\nare not valid JSON.";
      } else if (!args.is_object()) {
        error = "Function " + call.name + " arguments must be a JSON object";
      }
    }
    if (!error.empty()) {
      message["invalid_tool_calls"].push_back({{"id", call.id},
                                               {"name", call.name},
                                               {"args", call.args},
                                               {"error", error},
                                               {"type", "invalid_tool_call"}});
    } else {
      message["tool_calls"].push_back(
          {{"id", call.id}, {"name", call.name}, {"args", args}, {"type", "tool_call"}});
    }
  }
  message["response_metadata"] = response_metadata();
  message["additional_kwargs"] = additional_kwargs_;
  if (!usage_.is_null()) message["usage_metadata"] = usage_;
  return message;
}

}  // namespace tollgate::models
