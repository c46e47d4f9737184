#include "server/review_binding.h"

#include "server/review_records.h"
#include "server/wire_format.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

// The checkpoint a run request names itself ("" when none): checkpoint_id in the body or in
// config.configurable.
std::string named_checkpoint(const RunRequest& request) {
  if (!request.checkpoint_id.empty()) return request.checkpoint_id;
  const Json* configurable = request.config.is_object() && request.config.contains("configurable")
                                 ? &request.config["configurable"]
                                 : nullptr;
  if (configurable && configurable->is_object() && configurable->contains("checkpoint_id") &&
      (*configurable)["checkpoint_id"].is_string()) {
    return (*configurable)["checkpoint_id"].get<std::string>();
  }
  return "";
}

std::string stale_message(const std::string& answered, const std::string& latest) {
  return "The decision answers checkpoint " + (answered.empty() ? "(none)" : answered) +
         ", but the thread's latest checkpoint is " + (latest.empty() ? "(none)" : latest) +
         ": what it answered is no longer pending, and nothing was changed. Read the thread's "
         "state and decide again.";
}

}  // namespace

bool approval_only(const RunRequest& request) {
  if (!request.binding.is_object()) return false;
  auto it = request.binding.find("approval_only");
  return it != request.binding.end() && it->is_boolean() && it->get<bool>();
}

bool carries_decision(const RunRequest& request) {
  return request.command && request.command->is_object() && request.command->contains("resume") &&
         !(*request.command)["resume"].is_null();
}

void bind_decision(const CompiledGraph& graph, RunRequest& request) {
  if (!carries_decision(request)) return;
  RunConfig latest;
  latest.thread_id = request.thread_id;
  StateSnapshot snapshot = graph.get_state(latest);
  const std::string& checkpoint = snapshot.config.checkpoint_id;
  const std::string named = named_checkpoint(request);
  if (!named.empty() && named != checkpoint) throw Error::Conflict(stale_message(named, checkpoint));

  Json shown = interrupts_by_task(snapshot);
  request.binding = Json{
      {"checkpoint_id", checkpoint}, {"shown", shown}, {"decided", (*request.command)["resume"]}};

  if (!Command::from_json(*request.command).resume) return;  // already a map by interrupt id
  const std::vector<std::string> pending = interrupt_ids_of(shown);
  // With several interrupts pending a plain resume stays plain: the graph refuses it, naming
  // them. With none, the checkpoint binding refuses it if the thread pauses in between.
  if (pending.size() != 1) return;
  Json& resume = (*request.command)["resume"];
  resume = Json{{pending.front(), resume}};
}

void check_binding(const RunRequest& request, const std::string& start_checkpoint) {
  if (request.binding.is_null()) return;
  const std::string bound = request.binding.value("checkpoint_id", "");
  if (bound != start_checkpoint) throw Error::Conflict(stale_message(bound, start_checkpoint));
}

}  // namespace tollgate::server
