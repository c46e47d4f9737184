#include "server/run_request.h"

namespace tollgate::server {
namespace {

std::vector<std::string> string_list(const Json& value) {
  std::vector<std::string> out;
  if (value.is_string()) out.push_back(value.get<std::string>());
  if (value.is_array()) {
    for (const Json& item : value) {
      if (item.is_string()) out.push_back(item.get<std::string>());
    }
  }
  return out;
}

Json identity_json(const Identity& who) {
  return json_object("id", who.id, "name", who.name, "roles", who.roles, "authenticated",
                     who.authenticated);
}

// The identity an object of kwargs (started_by, decided_by) names; empty for anything else.
Identity identity_of(const Json& actor) {
  Identity who;
  if (!actor.is_object()) return who;
  who.id = actor.value("id", std::string());
  who.name = actor.value("name", std::string());
  who.roles = string_list(actor.value("roles", Json::array()));
  who.authenticated = actor.value("authenticated", false);
  return who;
}

// An identity kept in kwargs (empty when absent).
Identity identity_from(const Json& kwargs, const char* key) {
  auto it = kwargs.find(key);
  return it == kwargs.end() ? Identity{} : identity_of(*it);
}

}  // namespace

bool RunRequest::resumes() const {
  return command && command->is_object() && command->contains("resume");
}

void RunRequest::set_actors(const Identity& requester, const Identity& earlier_starter) {
  if (!resumes()) {
    started_by = requester;
    decided_by = Identity{};
    return;
  }
  decided_by = requester;
  started_by = earlier_starter.empty() ? requester : earlier_starter;
}

Identity latest_run_starter(ServerStore& store, const std::string& thread_id) {
  // Every run since runs were stored with their starter names one, so the newest run answers;
  // then a page at a time keeps a resume on a thread of many runs from reading them all.
  constexpr std::size_t kPage = 8;
  std::size_t page = 1;
  for (std::size_t offset = 0;; offset += page, page = kPage) {
    const std::vector<Json> starters = store.run_starters_page(thread_id, page, offset);
    for (const Json& actor : starters) {
      Identity starter = identity_of(actor);
      if (!starter.empty()) return starter;
    }
    if (starters.size() < page) return Identity{};
  }
}

Json RunRequest::to_kwargs() const {
  Json kwargs = json_object(
      "input", input, "config", config, "context", context, "stream_mode", stream_modes,
      "subgraphs", stream_subgraphs, "resumable", stream_resumable, "temporary", temporary,
      "metadata", metadata, "interrupt_before", interrupt_before, "interrupt_after",
      interrupt_after, "after_seconds", after_seconds, "protocol_v2", protocol_v2);
  if (command) kwargs["command"] = *command;
  if (!checkpoint_id.empty()) kwargs["checkpoint_id"] = checkpoint_id;
  if (!started_by.empty()) kwargs["started_by"] = identity_json(started_by);
  if (!decided_by.empty()) kwargs["decided_by"] = identity_json(decided_by);
  if (!binding.is_null()) kwargs["review_binding"] = binding;
  return kwargs;
}

RunRequest RunRequest::from_kwargs(const Json& kwargs, const std::string& thread_id,
                                   const std::string& assistant_id) {
  RunRequest r;
  r.thread_id = thread_id;
  r.assistant_id = assistant_id;
  r.input = kwargs.value("input", Json());
  if (kwargs.contains("command") && !kwargs["command"].is_null()) r.command = kwargs["command"];
  r.stream_modes = string_list(kwargs.value("stream_mode", Json::array({"values"})));
  r.stream_subgraphs = kwargs.value("subgraphs", false);
  r.stream_resumable = kwargs.value("resumable", false);
  r.config = kwargs.value("config", Json::object());
  r.context = kwargs.value("context", Json::object());
  r.metadata = kwargs.value("metadata", Json::object());
  r.checkpoint_id = kwargs.value("checkpoint_id", std::string());
  r.interrupt_before = string_list(kwargs.value("interrupt_before", Json::array()));
  r.interrupt_after = string_list(kwargs.value("interrupt_after", Json::array()));
  r.temporary = kwargs.value("temporary", false);
  r.protocol_v2 = kwargs.value("protocol_v2", false);
  r.started_by = identity_from(kwargs, "started_by");
  r.decided_by = identity_from(kwargs, "decided_by");
  r.binding = kwargs.value("review_binding", Json());
  return r;
}

}  // namespace tollgate::server
