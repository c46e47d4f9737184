// The rows of the tables the SQL savers share: SQLite (sqlite_saver.cpp) and PostgreSQL
// (postgres_saver.cpp) keep the same three tables, checkpoints, channel_values and writes,
// and read and write their rows the same way; only the SQL text and the round trips differ.
//
// Thread-safety: plain functions and values; the savers guard their connections.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checkpoint/value_store.h"
#include "sql/connection.h"
#include "tollgate/checkpoint.h"
#include "tollgate/json.h"
#include "tollgate/saver_stats.h"

namespace tollgate::checkpoint_internal {

// The columns read_checkpoint_row expects, in this order.
inline constexpr const char* kCheckpointColumns =
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, header, metadata";

// One row of `checkpoints`, copied out of the statement.
struct CheckpointRow {
  std::string thread_id, ns, id, parent_id;
  std::vector<std::uint8_t> header;
  std::string metadata;
};
CheckpointRow read_checkpoint_row(const sql::Statement& statement);

// The metadata as stored; Error(kInvalidArgument) when it cannot be serialised.
std::string metadata_text(const Json& metadata);

// The metadata of the checkpoints read last, parsed, by their stored text: the checkpoint a
// run paused on is read back several times on its way to a decision (the thread's state as
// served, the decision's binding, the run's start and load), its metadata parsed once. Texts
// are compared whole, so an entry never answers for another text. Thread-safe: a text is
// parsed outside the memo's mutex, so a saver may parse after giving its connection back.
class MetadataMemo {
 public:
  // `text` parsed; Error(kInternal) naming checkpoint `checkpoint_id` when it is malformed.
  Json parse(const std::string& text, const std::string& checkpoint_id);

 private:
  static constexpr std::size_t kEntries = 8;
  std::mutex mutex_;  // guards entries_ and next_
  std::array<std::pair<std::string, Json>, kEntries> entries_;
  std::size_t next_ = 0;  // the entry the next new text replaces
};

// Decoded stored values by (thread, namespace, channel, writer id), shared by the tuples of
// one call so that a history listing decodes each stored value once.
struct DecodedValues {
  std::map<std::string, StoredValue, std::less<>> stored;
  ValueMemo rebuilt;  // values rebuilt from them, by the same keys
};

// The value of `channel` in the checkpoint of `row` that `ref` points at. One range query
// reads the whole chain: its checkpoints lie between the full value's writer and this value's
// writer (ids grow along a thread); anything outside the range (possible only with hand-made
// ids) is fetched one by one. `select_value_range` takes (thread_id, checkpoint_ns, first id,
// last id, channel) and selects (checkpoint_id, base_checkpoint_id, keep, value). Throws
// Error(kInternal) when a stored value is missing.
JsonPtr load_row_value(const CheckpointRow& row, const std::string& channel, const ValueRef& ref,
                       DecodedValues& decoded, sql::Statement& select_value_range);

// Whether the caller holds the values of `row` already (options.reuse_values_of names it) or
// wants none (options.skip_values): then a read of the tuple reads no stored value.
inline bool reuses_values(const CheckpointRow& row, const GetOptions& options) {
  return options.skip_values ||
         (!options.reuse_values_of.empty() && options.reuse_values_of == row.id);
}

// The tuple of `row` without its pending writes: its channel values (unless reuses_values)
// through load_row_value.
CheckpointTuple read_tuple_values(const CheckpointRow& row, const GetOptions& options,
                                  DecodedValues& decoded, sql::Statement& select_value_range,
                                  MetadataMemo& metadata);
// The tuple of `row` without channel values or pending writes (its header and metadata
// decoded): what read_tuple_values returns when the values are reused. Reads nothing more, so
// it needs no connection.
CheckpointTuple tuple_without_values(const CheckpointRow& row, MetadataMemo& metadata);
// ---- pending writes
//
// A row of `writes` holds one write, or (its `span` column over 1) the consecutive ordinary
// writes of one put_writes call, indices idx to idx + span - 1: then its channel is empty and
// its value is the MessagePack array [channel, value, channel, value, ...]. A model's step
// writes three or four ordinary writes, most of them one byte (`branch:to:…`, `jump_to`); a row
// each cost more than they hold. A special channel's write (special_write_index) is always a
// row of its own, replaced when written again; an ordinary write is never replaced: of a write
// whose index a row already holds, the later one is dropped, as with a row each (an ordinary
// row is stored only when no stored row of its task holds any of its indices; a row of several
// that is not is stored write by write, each whose index is free).

// Appends the pending writes of the rows `rows` steps to (its columns first_column to
// first_column + 3: task_id, channel, value, span), in their order, to `tuple`.
void read_pending_writes(sql::Statement& rows, int first_column, CheckpointTuple& tuple);
// A row of `writes` as stored: its value still encoded.
struct StoredWrite {
  std::string task_id, channel;
  std::vector<std::uint8_t> value;
  std::int64_t span = 1;
};
// The rows `rows` steps to, as read_pending_writes reads them, with their values left encoded
// (for decode_pending_writes, which needs no connection).
std::vector<StoredWrite> read_stored_writes(sql::Statement& rows, int first_column);
// The pending writes of `row`'s checkpoint, read through `select_writes` (as read_tuple's).
std::vector<StoredWrite> read_stored_writes(const CheckpointRow& row,
                                            sql::Statement& select_writes);
// Appends the writes of `rows`, decoded, to `tuple`. Error(kInternal) for a row of several
// writes whose value is not their list.
void decode_pending_writes(std::vector<StoredWrite> rows, CheckpointTuple& tuple);

// One row a put_writes call stores.
struct WriteRow {
  std::size_t first = 0;             // the position of its first write in the call's writes
  std::int64_t idx = 0;              // its key's index: the first write's (a special channel's own)
  std::int64_t span = 1;             // the writes it holds
  bool special = false;              // a special channel's write: replaces the row at its index
  std::string_view channel;          // its write's channel; empty when it holds several
  std::vector<std::uint8_t> packed;  // when it holds several: [channel, value, ...]
  // The bytes of its value column: the write's encoding, or `packed`.
  const std::vector<std::uint8_t>& value(
      const std::vector<std::vector<std::uint8_t>>& encoded) const {
    return span > 1 ? packed : encoded[first];
  }
};
// The rows of a put_writes call's `writes`, whose values are `encoded` (encode_write_values):
// each run of two or more consecutive ordinary writes in one row, every other write in its own.
std::vector<WriteRow> plan_write_rows(const std::vector<std::pair<std::string, Json>>& writes,
                                      const std::vector<std::vector<std::uint8_t>>& encoded);
// The writes of `row`, a row of several that is not to be stored as one because some of its
// indices are held, whose own indices no stored row holds, each as a row of its own; `taken`
// are the (idx, span) of the task's stored ordinary rows.
std::vector<WriteRow> rows_of_free_writes(
    const WriteRow& row, const std::vector<std::pair<std::int64_t, std::int64_t>>& taken,
    const std::vector<std::pair<std::string, Json>>& writes);
// The bytes of the values of `row`'s writes, as counted in SaverStats::bytes_written.
std::uint64_t write_row_bytes(const WriteRow& row,
                              const std::vector<std::vector<std::uint8_t>>& encoded);

// The tuple of `row`: read_tuple_values, then its pending writes through `select_writes`, which
// takes (thread_id, checkpoint_ns, checkpoint_id) and selects (task_id, channel, value, span)
// in order.
CheckpointTuple read_tuple(const CheckpointRow& row, const GetOptions& options,
                           DecodedValues& decoded, sql::Statement& select_value_range,
                           sql::Statement& select_writes, MetadataMemo& metadata);

// Binds one channel_values row: (thread_id, checkpoint_ns, channel, checkpoint_id,
// base_checkpoint_id, keep, value) as parameters 1 to 7. `value` must stay alive until the
// statement ran.
void bind_value_row(sql::Statement& insert, const std::string& thread_id, const std::string& ns,
                    const std::string& checkpoint_id, const std::string& channel,
                    const StoredValue& value);

// For pruning to the latest checkpoint of a namespace: its values stored again as full values
// of its own (the values of the checkpoints being removed may be under them), small ones kept
// in their refs. Rewrites `refs` to point at them.
StoredValues own_full_values(const CheckpointRow& row, ValueRefs& refs,
                             sql::Statement& select_value_range);

// Counts a stored put in `stats`: its values (full or delta) and its bytes (the values plus
// `row_bytes`, the checkpoint row's header and metadata).
void count_put(SaverStats& stats, const ValuePlan& plan, std::uint64_t row_bytes);

}  // namespace tollgate::checkpoint_internal
