// State references: a stream event that shows a checkpoint's state (a root `values` event, in
// the legacy run stream and in the v2 thread stream) or starts a task on it (a root `tasks`
// event's "input") is stored with the state cut out and the checkpoint named in its place; a
// read of the stored events writes the state back in from the checkpoint. A turn on a thread of N
// messages used to store every step's whole state twice, so a thread's stored events grew with the
// square of its length (100 turns: ~100 MB); the checkpoints hold each state already, their message
// lists stored as deltas.
//
// The stored form of such an event's data (LogEntry::stored):
//
//   <view> <checkpoint id> "\x01" <graph id> "\x01" <at> "\x01" <the data without the state>
//
// where the state's text goes back in at byte `at`, and <view> is the byte 0x01 for the state
// a `values` event shows (the output keys, as get_state's values) or 0x02 for the state a
// task starts on (every state key, the private ones too: StateSnapshot::task_input; server
// schema 8). Event data is JSON text, which never starts with either byte, so the forms cannot
// be mistaken for one another. Only checkpoints
// saved before their event (durability "sync") are named: what is stored names a checkpoint
// that is on disk.
//
// An event whose checkpoint is gone (the thread's history pruned by retention, a rolled-back
// run's steps) is left out of what a read returns: its state no longer exists.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/event_log.h"

namespace tollgate::server {

// Which of a checkpoint's states an event holds.
enum class StateView {
  kValues,     // the output keys, as a `values` event shows them
  kTaskInput,  // every state key, as a task of the next step starts on them
};

struct StateRef {
  std::string graph_id;
  std::string checkpoint_id;
  StateView view = StateView::kValues;
  // Where the state's text is in the event's data: all of it, or [at, at + size).
  std::size_t at = 0;
  std::size_t size = std::string::npos;
};

// The stored form of `data`, whose bytes [at, at + size) are the state of `ref`'s checkpoint.
std::string stored_with_state_ref(std::string_view data, std::size_t at, std::size_t size,
                                  const StateRef& ref);

// The parts of a stored form: the text that names the checkpoint (the view byte, the checkpoint
// id and the graph id, each of the ids closed by "\x01"), where the state goes back in, and the
// data without the state.
struct StoredStateRef {
  std::string_view names;
  std::size_t at = 0;
  std::string_view rest;
};

// The parts of `stored`; std::nullopt when it is not a stored form, or a malformed one.
std::optional<StoredStateRef> split_state_ref(std::string_view stored);

// Appends the head of a stored form: `names` (as split_state_ref read them), then `at`.
void append_state_ref_head(std::string& out, std::string_view names, std::size_t at);

// Whether `data` as read from the store names a checkpoint in place of its state.
inline bool has_state_ref(std::string_view data) {
  return !data.empty() && (data[0] == '\x01' || data[0] == '\x02');
}

// The text of the state at checkpoint `checkpoint_id` of the thread, as the graph `graph_id`
// shows it in `view`; std::nullopt when that checkpoint (or the graph) is gone.
using StateTexts = std::function<std::optional<std::string>(
    const std::string& thread_id, const std::string& graph_id, const std::string& checkpoint_id,
    StateView view)>;

// Writes the state back into each event of `events` (all of thread `thread_id`) that names a
// checkpoint, and leaves out those whose checkpoint is gone (or all of them when `texts` is
// empty). Returns how many were left out. Throws Error::Internal when a stored form is
// malformed.
std::size_t resolve_state_refs(std::vector<LogEntry>& events, const std::string& thread_id,
                               const StateTexts& texts);

}  // namespace tollgate::server
