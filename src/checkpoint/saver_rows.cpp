#include "checkpoint/saver_rows.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "checkpoint/header_codec.h"
#include "checkpoint/message_pack.h"
#include "core/json_out.h"
#include "tollgate/error.h"

namespace tollgate::checkpoint_internal {

CheckpointRow read_checkpoint_row(const sql::Statement& statement) {
  CheckpointRow row;
  row.thread_id = statement.text(0);
  row.ns = statement.text(1);
  row.id = statement.text(2);
  if (!statement.is_null(3)) row.parent_id = statement.text(3);
  const auto header = statement.blob(4);
  row.header.assign(header.begin(), header.end());
  row.metadata = statement.text(5);
  return row;
}

std::string metadata_text(const Json& metadata) {
  try {
    // As dump() writes it, without its serializer's cost (~50 instructions a byte).
    std::string text;
    core::JsonOut(text, core::JsonOut::Malformed::kThrow).value(metadata);
    return text;
  } catch (const Json::exception& e) {
    throw Error::InvalidArgument(std::string("put: metadata cannot be stored: ") + e.what());
  }
}

namespace {

// One stored value row of one channel before decoding, by the id of the checkpoint storing it
// (a chain query may return rows of other branches).
struct RawValue {
  bool is_delta = false;
  std::string base_id;
  std::size_t keep = 0;
  std::vector<std::uint8_t> bytes;
};
using RawValues = std::map<std::string, RawValue, std::less<>>;
// Reads every row of a query selecting (checkpoint_id, base_checkpoint_id, keep, value).
void read_raw_values(sql::Statement& query, RawValues& raw) {
  while (query.step()) {
    RawValue value;
    value.is_delta = !query.is_null(1);
    if (value.is_delta) value.base_id = query.text(1);
    value.keep = static_cast<std::size_t>(query.integer(2));
    const auto bytes = query.blob(3);
    value.bytes.assign(bytes.begin(), bytes.end());
    raw.insert_or_assign(query.text(0), std::move(value));
  }
}

}  // namespace

JsonPtr load_row_value(const CheckpointRow& row, const std::string& channel, const ValueRef& ref,
                       DecodedValues& decoded, sql::Statement& select_value_range) {
  auto fetch = [&](const std::string& from, const std::string& to, RawValues& raw) {
    sql::StatementUse query(select_value_range);
    query->bind(1, row.thread_id).bind(2, row.ns).bind(3, from).bind(4, to).bind(5, channel);
    read_raw_values(*query, raw);
  };
  RawValues raw;
  bool range_fetched = false;
  std::string key = row.thread_id + '\0' + row.ns + '\0' + channel + '\0';
  const std::size_t key_prefix = key.size();
  const std::string memo_prefix = key;
  return reconstruct_value(
      ref,
      [&](const std::string& writer_id) -> const StoredValue& {
        key.resize(key_prefix);
        key += writer_id;
        auto done = decoded.stored.find(key);
        if (done != decoded.stored.end()) return done->second;
        if (!range_fetched) {
          fetch(ref.full_id, ref.writer_id, raw);
          range_fetched = true;
        }
        auto it = raw.find(writer_id);
        if (it == raw.end()) {
          fetch(writer_id, writer_id, raw);
          it = raw.find(writer_id);
        }
        if (it == raw.end()) {
          throw Error::Internal("value of channel '" + channel + "' stored by checkpoint " +
                                writer_id + " is missing");
        }
        StoredValue value{
            it->second.is_delta,
            it->second.base_id,
            it->second.keep,
            make_json_ptr(decode_value(it->second.bytes.data(), it->second.bytes.size())),
            {}};
        return decoded.stored.emplace(key, std::move(value)).first->second;
      },
      &decoded.rebuilt, memo_prefix);
}

Json MetadataMemo::parse(const std::string& text, const std::string& checkpoint_id) {
  {
    std::lock_guard lock(mutex_);
    for (const auto& [known, metadata] : entries_) {
      if (!known.empty() && known == text) return metadata;
    }
  }
  Json metadata;
  try {
    metadata = Json::parse(text);
  } catch (const Json::exception& e) {
    throw Error::Internal("stored metadata of checkpoint " + checkpoint_id +
                          " is malformed: " + e.what());
  }
  std::lock_guard lock(mutex_);
  entries_[next_] = {text, metadata};
  next_ = (next_ + 1) % kEntries;
  return metadata;
}

namespace {

// The tuple of `row` without values or writes; `refs` gets where its values are stored.
CheckpointTuple row_tuple(const CheckpointRow& row, MetadataMemo& metadata, ValueRefs& refs) {
  CheckpointTuple tuple;
  tuple.config = CheckpointConfig{row.thread_id, row.ns, row.id};
  tuple.checkpoint.id = row.id;
  decode_header(row.header.data(), row.header.size(), tuple.checkpoint, refs);
  tuple.metadata = metadata.parse(row.metadata, row.id);
  if (!row.parent_id.empty())
    tuple.parent_config = CheckpointConfig{row.thread_id, row.ns, row.parent_id};
  return tuple;
}

}  // namespace

CheckpointTuple tuple_without_values(const CheckpointRow& row, MetadataMemo& metadata) {
  ValueRefs refs;
  CheckpointTuple tuple = row_tuple(row, metadata, refs);
  tuple.values_reused = true;
  return tuple;
}

CheckpointTuple read_tuple_values(const CheckpointRow& row, const GetOptions& options,
                                  DecodedValues& decoded, sql::Statement& select_value_range,
                                  MetadataMemo& metadata) {
  if (reuses_values(row, options)) return tuple_without_values(row, metadata);
  ValueRefs refs;
  CheckpointTuple tuple = row_tuple(row, metadata, refs);
  for (const auto& [channel, ref] : refs) {
    tuple.checkpoint.channel_values.emplace(
        channel, load_row_value(row, channel, ref, decoded, select_value_range));
  }
  return tuple;
}

std::vector<StoredWrite> read_stored_writes(sql::Statement& rows, int first_column) {
  std::vector<StoredWrite> writes;
  while (rows.step()) {
    const auto value = rows.blob(first_column + 2);
    writes.push_back(StoredWrite{rows.text(first_column), rows.text(first_column + 1),
                                 std::vector<std::uint8_t>(value.begin(), value.end()),
                                 rows.integer(first_column + 3)});
  }
  return writes;
}

std::vector<StoredWrite> read_stored_writes(const CheckpointRow& row,
                                            sql::Statement& select_writes) {
  sql::StatementUse writes(select_writes);
  writes->bind(1, row.thread_id).bind(2, row.ns).bind(3, row.id);
  return read_stored_writes(*writes, 0);
}

void decode_pending_writes(std::vector<StoredWrite> rows, CheckpointTuple& tuple) {
  tuple.pending_writes.reserve(tuple.pending_writes.size() + rows.size());
  for (StoredWrite& row : rows) {
    Json value = decode_value(row.value.data(), row.value.size());
    if (row.span <= 1) {
      tuple.pending_writes.push_back(
          PendingWrite{std::move(row.task_id), std::move(row.channel), std::move(value)});
      continue;
    }
    auto* items = value.get_ptr<Json::array_t*>();
    if (items == nullptr || items->size() != 2 * static_cast<std::uint64_t>(row.span)) {
      throw Error::Internal("stored writes of task " + row.task_id + " in checkpoint " +
                            tuple.checkpoint.id + " are not a list of " + std::to_string(row.span) +
                            " writes");
    }
    for (std::size_t i = 0; i < items->size(); i += 2) {
      auto* channel = (*items)[i].get_ptr<std::string*>();
      if (channel == nullptr) {
        throw Error::Internal("a stored write of task " + row.task_id + " in checkpoint " +
                              tuple.checkpoint.id + " has no channel");
      }
      tuple.pending_writes.push_back(
          PendingWrite{row.task_id, std::move(*channel), std::move((*items)[i + 1])});
    }
  }
}

std::vector<WriteRow> plan_write_rows(const std::vector<std::pair<std::string, Json>>& writes,
                                      const std::vector<std::vector<std::uint8_t>>& encoded) {
  std::vector<WriteRow> rows;
  std::size_t i = 0;
  while (i < writes.size()) {
    WriteRow row;
    row.first = i;
    row.channel = writes[i].first;
    if (const std::optional<int> special = special_write_index(writes[i].first)) {
      row.idx = *special;
      row.special = true;
      rows.push_back(std::move(row));
      ++i;
      continue;
    }
    row.idx = static_cast<std::int64_t>(i);
    std::size_t end = i + 1;
    while (end < writes.size() && !special_write_index(writes[end].first)) ++end;
    row.span = static_cast<std::int64_t>(end - i);
    if (row.span > 1) {
      row.channel = "";  // not a null view: bound as an empty text, never as NULL
      std::uint64_t size = message_pack::container_header_size(2 * (end - i));
      for (std::size_t k = i; k < end; ++k) {
        size += message_pack::string_size(writes[k].first.size()) + encoded[k].size();
      }
      row.packed.resize(size);
      message_pack::Writer out(row.packed.data());
      out.array_header(2 * (end - i));
      for (std::size_t k = i; k < end; ++k) {
        out.string(writes[k].first);
        out.cursor() = std::copy(encoded[k].begin(), encoded[k].end(), out.cursor());
      }
    }
    rows.push_back(std::move(row));
    i = end;
  }
  return rows;
}

std::vector<WriteRow> rows_of_free_writes(
    const WriteRow& row, const std::vector<std::pair<std::int64_t, std::int64_t>>& taken,
    const std::vector<std::pair<std::string, Json>>& writes) {
  std::vector<WriteRow> rows;
  for (std::int64_t k = 0; k < row.span; ++k) {
    const std::int64_t idx = row.idx + k;
    const bool held = std::any_of(taken.begin(), taken.end(), [idx](const auto& stored) {
      return stored.first >= 0 && idx >= stored.first && idx - stored.first < stored.second;
    });
    if (held) continue;
    WriteRow& single = rows.emplace_back();
    single.first = row.first + static_cast<std::size_t>(k);
    single.idx = idx;
    single.channel = writes[single.first].first;
  }
  return rows;
}

std::uint64_t write_row_bytes(const WriteRow& row,
                              const std::vector<std::vector<std::uint8_t>>& encoded) {
  std::uint64_t bytes = 0;
  for (std::int64_t k = 0; k < row.span; ++k) {
    bytes += encoded[row.first + static_cast<std::size_t>(k)].size();
  }
  return bytes;
}

void read_pending_writes(sql::Statement& rows, int first_column, CheckpointTuple& tuple) {
  decode_pending_writes(read_stored_writes(rows, first_column), tuple);
}

CheckpointTuple read_tuple(const CheckpointRow& row, const GetOptions& options,
                           DecodedValues& decoded, sql::Statement& select_value_range,
                           sql::Statement& select_writes, MetadataMemo& metadata) {
  CheckpointTuple tuple = read_tuple_values(row, options, decoded, select_value_range, metadata);
  decode_pending_writes(read_stored_writes(row, select_writes), tuple);
  return tuple;
}

void bind_value_row(sql::Statement& insert, const std::string& thread_id, const std::string& ns,
                    const std::string& checkpoint_id, const std::string& channel,
                    const StoredValue& value) {
  insert.bind(1, thread_id).bind(2, ns).bind(3, channel).bind(4, checkpoint_id);
  if (value.is_delta) {
    insert.bind(5, value.base_id.str());
  } else {
    insert.bind_null(5);
  }
  insert.bind(6, static_cast<std::int64_t>(value.keep)).bind_blob(7, value.encoded);
}

StoredValues own_full_values(const CheckpointRow& row, ValueRefs& refs,
                             sql::Statement& select_value_range) {
  StoredValues values;
  DecodedValues decoded;
  for (auto& [channel, ref] : refs) {
    JsonPtr value = load_row_value(row, channel, ref, decoded, select_value_range);
    if (std::optional<InlineValue> inlined = inline_encoding(*value)) {
      ref = full_value_ref(row.id, *value, inlined->size, inlined);
      continue;
    }
    std::vector<std::uint8_t> encoded = encode_value(*value);
    ref = full_value_ref(row.id, *value, encoded.size(), std::nullopt);
    values.emplace(channel, StoredValue{false, "", 0, std::move(value), std::move(encoded)});
  }
  return values;
}

void count_put(SaverStats& stats, const ValuePlan& plan, std::uint64_t row_bytes) {
  for (const auto& [channel, value] : plan.stored) {
    (value.is_delta ? stats.delta_values_written : stats.full_values_written) += 1;
  }
  stats.full_values_written += plan.inlined;
  stats.bytes_written += plan.bytes + row_bytes;
  stats.value_bytes_written += plan.bytes;
  stats.checkpoints_written += 1;
}

}  // namespace tollgate::checkpoint_internal
