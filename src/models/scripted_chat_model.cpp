// The scripted models: ScriptedChatModel replays a fixed list of replies (tests, data-driven
// scenarios); ScriptedConversationModel picks each reply from the conversation it is given
// (servers with many threads).
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include "models/ai_message.h"
#include "tollgate/chat_model.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"

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

// Checks each reply of a script; errors name it as <where>[i]...
void validate_replies(const std::vector<Json>& replies, const std::string& where) {
  for (size_t i = 0; i < replies.size(); ++i) {
    const Json& reply = replies[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (reply.is_string()) continue;
    if (!reply.is_object())
      throw Error::InvalidArgument(at + " must be text or an AI message object");
    if (reply.contains("tool_calls")) {
      if (!reply["tool_calls"].is_array())
        throw Error::InvalidArgument(at + ".tool_calls must be an array");
      for (size_t j = 0; j < reply["tool_calls"].size(); ++j) {
        const Json& call = reply["tool_calls"][j];
        const std::string call_at = at + ".tool_calls[" + std::to_string(j) + "]";
        if (!call.is_object() || !call.contains("name") || !call["name"].is_string()) {
          throw Error::InvalidArgument(call_at + ".name must be a string");
        }
        if (call.contains("args") && !call["args"].is_object()) {
          throw Error::InvalidArgument(call_at + ".args must be an object");
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
  validate_replies(replies, "script");
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

// ------------------------------------------------------------------ ScriptedConversationModel

namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Replaces every `token` in `text` with `value`.
std::string replace_all(std::string text, const std::string& token, const std::string& value) {
  for (size_t at = text.find(token); at != std::string::npos;
       at = text.find(token, at + value.size())) {
    text.replace(at, token.size(), value);
  }
  return text;
}

}  // namespace

struct ScriptedConversationModel::Script {
  struct Conversation {
    std::string match;                 // lower-cased substring, when regex is not used
    std::shared_ptr<const RE2> regex;  // searched in the message; linear time
    std::vector<Json> replies;
  };
  std::string model_name;
  std::vector<Conversation> conversations;
  std::optional<std::string> fallback;

  const Conversation* find(const std::string& human) const {
    const std::string lowered = lowercase(human);
    for (const auto& conversation : conversations) {
      if (conversation.regex ? RE2::PartialMatch(human, *conversation.regex)
                             : lowered.find(conversation.match) != std::string::npos) {
        return &conversation;
      }
    }
    return nullptr;
  }
};

ScriptedConversationModel::ScriptedConversationModel(const Json& script, std::string model_name) {
  auto fail = [](const std::string& what) { return Error::InvalidArgument(what); };
  if (!script.is_object()) throw fail("script: must be an object with \"conversations\"");
  auto parsed = std::make_unique<Script>();
  parsed->model_name = std::move(model_name);
  for (const auto& [key, value] : script.items()) {
    if (key == "fallback") {
      if (!value.is_string()) throw fail("script.fallback: must be a string");
      parsed->fallback = value.get<std::string>();
    } else if (key != "conversations") {
      throw fail("script: unknown key '" + key + "' (expected conversations, fallback)");
    }
  }
  if (!script.contains("conversations") || !script["conversations"].is_array())
    throw fail("script.conversations: must be an array");
  const Json& list = script["conversations"];
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = "script.conversations[" + std::to_string(i) + "]";
    const Json& entry = list[i];
    if (!entry.is_object()) throw fail(at + ": must be an object");
    for (const auto& [key, value] : entry.items()) {
      if (key != "match" && key != "regex" && key != "replies")
        throw fail(at + ": unknown key '" + key + "' (expected match or regex, and replies)");
    }
    if (entry.contains("match") == entry.contains("regex"))
      throw fail(at + ": needs exactly one of \"match\" (text) or \"regex\"");
    Script::Conversation conversation;
    const char* key = entry.contains("match") ? "match" : "regex";
    if (!entry[key].is_string()) throw fail(at + "." + key + ": must be a string");
    const std::string pattern = entry[key].get<std::string>();
    if (entry.contains("regex")) {
      RE2::Options options;
      options.set_log_errors(false);
      conversation.regex = std::make_shared<const RE2>(pattern, options);
      if (!conversation.regex->ok())
        throw fail(at + ".regex: not a valid regular expression: " + conversation.regex->error());
    } else {
      conversation.match = lowercase(pattern);
    }
    if (!entry.contains("replies") || !entry["replies"].is_array())
      throw fail(at + ".replies: must be an array");
    conversation.replies = entry["replies"].get<std::vector<Json>>();
    validate_replies(conversation.replies, at + ".replies");
    parsed->conversations.push_back(std::move(conversation));
  }
  script_ = std::move(parsed);
}

ScriptedConversationModel::~ScriptedConversationModel() = default;

std::string ScriptedConversationModel::name() const {
  return script_->model_name;
}

Json ScriptedConversationModel::invoke(const ChatRequest& request, const TokenCallback* on_chunk) {
  const ChatMessages& messages = request.messages;
  size_t ai_total = 0;
  size_t ai_since_human = 0;
  std::optional<size_t> human_at;
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string type = models::message_type(messages[i], i);
    if (type == "ai") {
      ++ai_total;
      ++ai_since_human;
    } else if (type == "human") {
      human_at = i;
      ai_since_human = 0;
    }
  }
  std::string tool_results;
  for (size_t i = messages.size(); i > 0 && models::message_type(messages[i - 1], i - 1) == "tool";
       --i) {
    const std::string text = message_text(messages[i - 1]);
    tool_results = tool_results.empty() ? text : text + " " + tool_results;
  }
  const std::string human = human_at ? message_text(messages[*human_at]) : "";
  const Script::Conversation* conversation = script_->find(human);

  Json reply;
  if (conversation != nullptr && ai_since_human < conversation->replies.size()) {
    reply = conversation->replies[ai_since_human];
  } else if (script_->fallback) {
    reply = *script_->fallback;
  } else if (conversation == nullptr) {
    reply = "The script has no conversation for \"" + human + "\".";
  } else {
    reply = "The script's conversation for \"" + human + "\" has no reply #" +
            std::to_string(ai_since_human + 1) + " (it has " +
            std::to_string(conversation->replies.size()) + ").";
  }
  auto fill = [&](const std::string& text) {
    return replace_all(replace_all(text, "{tool_results}", tool_results), "{human}", human);
  };
  if (reply.is_string()) {
    reply = fill(reply.get<std::string>());
  } else if (reply.contains("content") && reply["content"].is_string()) {
    reply["content"] = fill(reply["content"].get<std::string>());
  }
  Json message = complete_reply(reply, ai_total + 1, script_->model_name);
  if (on_chunk != nullptr && *on_chunk) models::stream_message_as_chunks(message, *on_chunk);
  return message;
}

}  // namespace tollgate
