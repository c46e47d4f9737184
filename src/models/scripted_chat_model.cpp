// The scripted model: replays a fixed list of replies, for tests and data-driven scenarios.
#include <mutex>

#include "models/ai_message.h"
#include "tollgate/chat_model.h"
#include "tollgate/error.h"

namespace tollgate {
namespace {

// Turns script entry `n` (1-based) into a complete AI message dict with deterministic ids.
Json complete_reply(const Json& reply, size_t n, const std::string& model_name) {
  const std::string id = "scripted-" + std::to_string(n);
  Json message = models::empty_ai_message(id);
  if (reply.is_string()) {
    message["content"] = reply;
  } else {
    for (const auto& [key, value] : reply.items()) message[key] = value;
    message["type"] = "ai";
    if (!message["id"].is_string() || message["id"].get<std::string>().empty()) message["id"] = id;
    if (message["content"].is_null()) message["content"] = "";
    Json calls = Json::array();
    size_t i = 0;
    for (auto call : message.value("tool_calls", Json::array())) {
      if (!call.contains("id") || !call["id"].is_string()) {
        call["id"] = "call_" + std::to_string(n) + "_" + std::to_string(i);
      }
      if (!call.contains("args")) call["args"] = Json::object();
      call["type"] = "tool_call";
      calls.push_back(std::move(call));
      ++i;
    }
    message["tool_calls"] = std::move(calls);
  }
  Json& meta = message["response_metadata"];
  if (!meta.is_object()) meta = Json::object();
  if (!meta.contains("model_name")) meta["model_name"] = model_name;
  if (!meta.contains("finish_reason")) {
    meta["finish_reason"] = message["tool_calls"].empty() ? "stop" : "tool_calls";
  }
  return message;
}

void validate_script(const std::vector<Json>& replies) {
  for (size_t i = 0; i < replies.size(); ++i) {
    const Json& reply = replies[i];
    const std::string where = "script[" + std::to_string(i) + "]";
    if (reply.is_string()) continue;
    if (!reply.is_object())
      throw Error::InvalidArgument(where + " must be text or an AI message object");
    if (reply.contains("tool_calls")) {
      if (!reply["tool_calls"].is_array())
        throw Error::InvalidArgument(where + ".tool_calls must be an array");
      for (size_t j = 0; j < reply["tool_calls"].size(); ++j) {
        const Json& call = reply["tool_calls"][j];
        const std::string call_where = where + ".tool_calls[" + std::to_string(j) + "]";
        if (!call.is_object() || !call.contains("name") || !call["name"].is_string()) {
          throw Error::InvalidArgument(call_where + ".name must be a string");
        }
        if (call.contains("args") && !call["args"].is_object()) {
          throw Error::InvalidArgument(call_where + ".args must be an object");
        }
      }
    }
  }
}

}  // namespace

struct ScriptedChatModel::State {
  std::string model_name;
  std::vector<Json> replies;
  mutable std::mutex mutex;  // guards next and requests
  size_t next = 0;
  std::vector<ChatRequest> requests;
};

ScriptedChatModel::ScriptedChatModel(std::vector<Json> replies, std::string model_name)
    : state_(std::make_unique<State>()) {
  validate_script(replies);
  state_->model_name = std::move(model_name);
  state_->replies = std::move(replies);
}

ScriptedChatModel::~ScriptedChatModel() = default;

std::string ScriptedChatModel::name() const {
  return state_->model_name;
}

Json ScriptedChatModel::invoke(const ChatRequest& request, const TokenCallback* on_chunk) {
  Json message;
  {
    std::lock_guard lock(state_->mutex);
    state_->requests.push_back(request);
    if (state_->next >= state_->replies.size()) {
      throw Error::Internal("scripted model '" + state_->model_name + "': script exhausted: all " +
                            std::to_string(state_->replies.size()) +
                            " replies were used and another call came");
    }
    const size_t n = ++state_->next;
    message = complete_reply(state_->replies[n - 1], n, state_->model_name);
  }
  if (on_chunk != nullptr && *on_chunk) models::stream_message_as_chunks(message, *on_chunk);
  return message;
}

std::vector<ChatRequest> ScriptedChatModel::requests() const {
  std::lock_guard lock(state_->mutex);
  return state_->requests;
}

size_t ScriptedChatModel::remaining() const {
  std::lock_guard lock(state_->mutex);
  return state_->replies.size() - state_->next;
}

}  // namespace tollgate
