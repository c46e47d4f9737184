#include "server/uncertain_effects.h"

#include <map>

#include "tollgate/effect_intents.h"

namespace tollgate::server {

bool has_unfinished_intent(const CheckpointTuple& tuple) {
  struct Seen {
    bool intent = false;
    bool finished = false;
  };
  std::map<std::string, Seen, std::less<>> tasks;
  for (const PendingWrite& write : tuple.pending_writes) {
    Seen& seen = tasks[write.task_id];
    if (write.channel == kIntentChannel) {
      seen.intent = true;
    } else if (!special_write_index(write.channel)) {
      seen.finished = true;  // an ordinary write or __no_writes__: the task's result is saved
    }
  }
  for (const auto& [task_id, seen] : tasks) {
    if (seen.intent && !seen.finished) return true;
  }
  return false;
}

std::set<std::string> runs_cut_off_in_an_effect(ServerStore& store, Saver& checkpoints) {
  std::set<std::string> runs;
  for (const RunRecord& run : store.list_runs_with_status("running")) {
    auto tuple = checkpoints.get_tuple(CheckpointConfig{run.thread_id, "", ""});
    if (tuple && has_unfinished_intent(*tuple)) runs.insert(run.run_id);
  }
  return runs;
}

}  // namespace tollgate::server
