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
//
// A batch of thread stream events (BatchFormat::kEnvelopes, server schema 14) starts with the
// line "e\n", and each frame's head line ends in one more number, 1 when its data is an envelope
// (event_envelope.h) kept without its head and tail, 0 when the data is as it was. Head and tail
// follow from the frame's event, id and seq, and were ~80 of a stored event's ~330 bytes: a read
// writes them back. The data of an event stored with its state cut out (state_refs.h) keeps its
// reference first, its position counted in the data without the head. Batches written before
// have no such line and read as before.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/event_log.h"

namespace tollgate::server {

enum class BatchFormat {
  kPlain,      // frames of five fields (a run's events)
  kEnvelopes,  // "e\n", then frames of five fields and a flag (a thread's events)
};

// Appends what starts a batch of `format` to `out`, which is empty.
void begin_event_batch(std::string& out, BatchFormat format);

// Appends the frame of `entry` to `out`, a batch of `format`.
void append_event_frame(std::string& out, const LogEntry& entry,
                        BatchFormat format = BatchFormat::kPlain);

// Appends the events of `batch`, of either format, whose seq is above `after_seq` to `out`, in
// their order. Throws Error::Internal naming `what` when the text is not a sequence of frames.
void read_event_batch(std::string_view batch, std::int64_t after_seq, const std::string& what,
                      std::vector<LogEntry>& out);

}  // namespace tollgate::server
