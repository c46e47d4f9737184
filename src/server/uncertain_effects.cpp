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

}  // namespace tollgate::server
