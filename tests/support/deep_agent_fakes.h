// Test doubles for deep agents: a model that answers from the conversation it is shown (parallel
// subagents call one model in any order, so a script in call order would not do), a recorded
// send_email tool, and the helpers their routes use.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "tollgate/chat_model.h"
#include "tollgate/messages.h"
#include "tollgate/tool.h"

namespace tollgate::testing {

class RoutedModel final : public ChatModel {
 public:
  // Gets the request's messages without the system prompt; returns the AI message.
  using Route = std::function<Json(const Json& messages)>;
  explicit RoutedModel(Route route) : route_(std::move(route)) {}
  Json invoke(const ChatRequest& request, const TokenCallback*) override {
    ++calls_;
    Json messages = Json::array();
    for (const auto& m : request.messages.to_json()) {
      if (message_type(m) != "system") messages.push_back(m);
    }
    return route_(messages);
  }
  std::string name() const override { return "routed"; }
  int calls() const { return calls_; }

 private:
  Route route_;
  std::atomic<int> calls_{0};
};

// The first human message's text: the task a subagent was given, or the user's request.
inline std::string first_human(const Json& messages) {
  for (const auto& m : messages) {
    if (message_type(m) == "human") return message_text(m);
  }
  return "";
}
inline bool answered(const Json& messages) { return message_type(messages.back()) == "tool"; }
inline Json call(const std::string& name, Json args, const std::string& id) {
  return Json{{"name", name}, {"args", std::move(args)}, {"id", id}};
}

// send_email{to}, recording whom it sent to. Thread-safe (parallel subagents).
class Outbox {
 public:
  Tool tool() {
    return Tool("send_email", "Sends an email.",
                Json::parse(R"({"type":"object","properties":{"to":{"type":"string"}},
                               "required":["to"]})"),
                [this](const Json& args, const ToolContext&) -> Json {
                  std::lock_guard lock(mutex_);
                  sent_.push_back(args["to"]);
                  return "sent to " + args["to"].get<std::string>();
                });
  }
  std::vector<std::string> sent() const {
    std::lock_guard lock(mutex_);
    return sent_;
  }

 private:
  mutable std::mutex mutex_;  // guards sent_
  std::vector<std::string> sent_;
};

// The main agent delegates "email <who>" to `subagent` for each name in one turn; each
// subagent emails its person, then reports "reported on <who>"; the main agent ends "all done".
inline RoutedModel::Route delegating(std::vector<std::string> people, std::string subagent) {
  return [people, subagent](const Json& messages) -> Json {
    const std::string task = first_human(messages);
    if (task.rfind("email ", 0) == 0) {
      const std::string who = task.substr(6);
      if (!answered(messages)) {
        return ai_message("", Json::array({call("send_email", {{"to", who}}, "call_" + who)}),
                          "ai-sub-" + who + "-1");
      }
      return ai_message("reported on " + who, Json::array(), "ai-sub-" + who + "-2");
    }
    if (answered(messages)) return ai_message("all done", Json::array(), "ai-main-2");
    Json calls = Json::array();
    for (const auto& p : people) {
      calls.push_back(call("task", {{"description", "email " + p}, {"subagent_type", subagent}},
                           "call_task_" + p));
    }
    return ai_message("", calls, "ai-main-1");
  };
}

}  // namespace tollgate::testing
