// State references: a stream event that shows a checkpoint's state (a root `values` event, in
// the legacy run stream and in the v2 thread stream) is stored with the state cut out and the
// checkpoint named in its place; a read of the stored events writes the state back in from the
// checkpoint. A turn on a thread of N messages used to store every step's whole state twice,
// so a thread's stored events grew with the square of its length (100 turns: ~100 MB); the
// checkpoints hold each state already, their message lists stored as deltas.
//
// The stored form of such an event's data (LogEntry::stored):
//
//   "\x01" <checkpoint id> "\x01" <graph id> "\x01" <at> "\x01" <the data without the state>
//
// where the state's text goes back in at byte `at`. Event data is JSON text, which never starts
// with the byte 0x01, so the two forms cannot be mistaken for one another. Only checkpoints
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

struct StateRef {
  std::string graph_id;
  std::string checkpoint_id;
};

// The stored form of `data`, whose bytes [at, at + size) are the state of `ref`'s checkpoint.
std::string stored_with_state_ref(std::string_view data, std::size_t at, std::size_t size,
                                  const StateRef& ref);

// Whether `data` as read from the store names a checkpoint in place of its state.
inline bool has_state_ref(std::string_view data) {
  return !data.empty() && data[0] == '\x01';
}

// The text of the state at checkpoint `checkpoint_id` of the thread, as the graph `graph_id`
// shows it in a `values` event; std::nullopt when that checkpoint (or the graph) is gone.
using StateTexts = std::function<std::optional<std::string>(
    const std::string& thread_id, const std::string& graph_id, const std::string& checkpoint_id)>;

// Writes the state back into each event of `events` (all of thread `thread_id`) that names a
// checkpoint, and leaves out those whose checkpoint is gone (or all of them when `texts` is
// empty). Returns how many were left out. Throws Error::Internal when a stored form is
// malformed.
std::size_t resolve_state_refs(std::vector<LogEntry>& events, const std::string& thread_id,
                               const StateTexts& texts);

}  // namespace tollgate::server
