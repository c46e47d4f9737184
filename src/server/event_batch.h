// Thread stream events as the store keeps them: the events of one thread written by one store
// write are one row (a "batch"), their fields framed as text, instead of a row each: a run's
// end stores ~70 events a cycle, a model streaming a long answer hundreds, and each row cost
// its B-tree inserts and WAL pages.
//
// The frame of each event, one after another:
//
//   "<seq> <n1> <n2> <n3> <n4> <n5>\n" <event: n1 bytes> <data> <id> <channel> <namespace>
//
// where the namespace is a JSON array of its segments, or empty for the root namespace.
// Text only (PostgreSQL's TEXT takes it as it is): the fields are the event's own strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/event_log.h"

namespace tollgate::server {

// Appends the frame of `entry` to `out`.
void append_event_frame(std::string& out, const LogEntry& entry);

// Appends the events of `batch` whose seq is above `after_seq` to `out`, in their order.
// Throws Error::Internal naming `what` when the text is not a sequence of frames.
void read_event_batch(std::string_view batch, std::int64_t after_seq, const std::string& what,
                      std::vector<LogEntry>& out);

}  // namespace tollgate::server
