#include "checkpoint/postgres_saver.h"

#include <deque>
#include <iterator>

#include "checkpoint/header_codec.h"
#include "checkpoint/postgres_schema.h"
#include "checkpoint/saver_checks.h"
#include "checkpoint/saver_rows.h"
#include "checkpoint/value_store.h"
#include "sql/postgres_connection.h"
#include "tollgate/error.h"

namespace tollgate {
namespace checkpoint_internal {

using sql::PostgresConnection;
using sql::PostgresPipeline;
using sql::PostgresStatement;
using sql::StatementUse;
using sql::Transaction;
using sql::TransactionKind;

struct PostgresSaver::Impl {
  struct Statements {
    explicit Statements(PostgresConnection& c)
        : select_by_id(c, std::string("SELECT ") + kCheckpointColumns +
                              " FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND "
                              "checkpoint_id = $3"),
          select_latest(c, std::string("SELECT ") + kCheckpointColumns +
                               " FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 "
                               "ORDER BY checkpoint_id DESC LIMIT 1"),
          select_latest_with_writes(c, with_writes("ORDER BY checkpoint_id DESC LIMIT 1")),
          select_by_id_with_writes(c, with_writes("AND checkpoint_id = $3")),
          select_header(c,
                        "SELECT header FROM checkpoints WHERE thread_id = $1 AND "
                        "checkpoint_ns = $2 AND checkpoint_id = $3"),
          insert_checkpoint(c, std::string("INSERT INTO checkpoints (") + kCheckpointColumns +
                                   ") VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (thread_id, "
                                   "checkpoint_ns, checkpoint_id) DO UPDATE SET "
                                   "parent_checkpoint_id = excluded.parent_checkpoint_id, "
                                   "header = excluded.header, metadata = excluded.metadata"),
          insert_value(c,
                       "INSERT INTO channel_values (thread_id, checkpoint_ns, channel, "
                       "checkpoint_id, base_checkpoint_id, keep, value) VALUES ($1, $2, $3, $4, "
                       "$5, $6, $7) ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, "
                       "channel) DO UPDATE SET base_checkpoint_id = excluded.base_checkpoint_id, "
                       "keep = excluded.keep, value = excluded.value"),
          select_value_range(c,
                             "SELECT checkpoint_id, base_checkpoint_id, keep, value FROM "
                             "channel_values WHERE thread_id = $1 AND checkpoint_ns = $2 AND "
                             "checkpoint_id BETWEEN $3 AND $4 AND channel = $5"),
          select_writes(c,
                        "SELECT task_id, channel, value, span FROM writes WHERE thread_id = $1 "
                        "AND checkpoint_ns = $2 AND checkpoint_id = $3 ORDER BY task_id, idx"),
          upsert_write(c,
                       "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
                       "channel, task_path, value, span) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
                       "$9) ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) "
                       "DO UPDATE SET channel = excluded.channel, task_path = excluded.task_path, "
                       "value = excluded.value, span = excluded.span"),
          // An ordinary row is stored only when no stored row holds any of its indices.
          insert_write(c,
                       "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
                       "channel, task_path, value, span) SELECT $1::text, $2::text, $3::text, "
                       "$4::text, $5::bigint, $6::text, $7::text, $8::bytea, $9::bigint WHERE NOT "
                       "EXISTS (SELECT 1 FROM writes WHERE thread_id = $1::text AND checkpoint_ns "
                       "= $2::text AND checkpoint_id = $3::text AND task_id = $4::text AND idx >= "
                       "0 AND idx < $5::bigint + $9::bigint AND idx + span > $5::bigint) ON "
                       "CONFLICT DO NOTHING"),
          select_task_rows(c,
                           "SELECT idx, span FROM writes WHERE thread_id = $1 AND checkpoint_ns = "
                           "$2 AND checkpoint_id = $3 AND task_id = $4 AND idx >= 0") {}

    // The checkpoint of (thread_id $1, checkpoint_ns $2) that `which` selects, then its pending
    // writes, in one statement (one snapshot, one round trip): the checkpoint's row first, its
    // columns as kCheckpointColumns, then a row per row of writes (task_id, channel, value, span
    // in columns 7 to 10) in the order of select_writes.
    static std::string with_writes(const std::string& which) {
      return std::string("WITH c AS (SELECT ") + kCheckpointColumns +
             " FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 " + which +
             ") SELECT c.*, 0 AS part, NULL AS task_id, NULL AS channel, NULL AS value, 0 AS "
             "span, 0 AS idx FROM c UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, 1, "
             "w.task_id, w.channel, w.value, w.span, w.idx FROM writes w JOIN c ON w.thread_id = "
             "c.thread_id AND "
             "w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id "
             "ORDER BY part, task_id, idx";
    }

    PostgresStatement select_by_id, select_latest, select_latest_with_writes,
        select_by_id_with_writes, select_header, insert_checkpoint, insert_value,
        select_value_range, select_writes, upsert_write, insert_write, select_task_rows;
  };

  // The checkpoint this connection put last, decoded: usually the parent of the next put,
  // which then needs no read. Valid while this saver did nothing but put and put_writes since
  // (a checkpoint's header never changes, except by prune, which invalidates it here; a prune
  // of the same thread by another process while this one runs it is not seen).
  struct LastPut {
    bool valid = false;
    std::string thread_id, ns, id;
    ChannelVersions versions;
    ValueRefs refs;
  };

  Impl(const std::string& url, const PostgresSaverOptions& options)
      : connection(url, sql::PostgresOptions{options.schema, options.synchronous_commit}) {
    setup_postgres_checkpoint_tables(connection, options.schema);
    statements = std::make_unique<Statements>(connection);
  }

  // Runs `operation`; when it failed because the connection broke, runs it once more on a new
  // one (every Saver call may be repeated: puts and writes are keyed upserts).
  template <class Operation>
  auto reconnecting(Operation&& operation) {
    try {
      return operation();
    } catch (const Error& e) {
      last_put.valid = false;
      if (e.code() != ErrorCode::kUnavailable || connection.is_connected()) throw;
    }
    return operation();
  }

  std::optional<CheckpointTuple> get_tuple(const CheckpointConfig& config,
                                           const GetOptions& options);
  std::vector<CheckpointTuple> list(const ListQuery& query);
  // A task's writes as put_writes stores them, their values encoded.
  struct TaskWrites {
    const CheckpointConfig& config;
    const std::vector<std::pair<std::string, Json>>& writes;
    const std::vector<std::vector<std::uint8_t>>& encoded;
    const std::string& task_id;
    const std::string& task_path;
    std::vector<WriteRow> rows;  // plan_write_rows
  };

  // Stores the checkpoint, after `writes` (when given) in the same pipeline: one transaction.
  CheckpointConfig put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                       const std::string& metadata_json, const ChannelVersions& new_versions,
                       const ChannelDeltas& deltas, const TaskWrites* writes = nullptr);
  void put_writes(const TaskWrites& writes);
  // Adds the INSERTs of `writes` to `pipeline`.
  void add_writes(PostgresPipeline& pipeline, const TaskWrites& writes);
  void add_write_row(PostgresPipeline& pipeline, const TaskWrites& writes, const WriteRow& row);
  // Counts the writes stored, from the rows changed by their INSERTs (the first results), and
  // stores what a row of several writes did not because some of its indices are held (a
  // put_writes repeated): each of its other writes in a row of its own, after the pipeline
  // (and so its transaction) — only a repeat, whose first writes are stored already, gets here.
  void finish_writes(const TaskWrites& writes, const std::vector<int>& changed);
  void prune_namespace(const std::string& thread_id, const std::string& ns);
  // The tuple of `row`, its values and pending writes read through this connection.
  CheckpointTuple read(const CheckpointRow& row, const GetOptions& options,
                       DecodedValues& decoded) {
    return read_tuple(row, options, decoded, statements->select_value_range,
                      statements->select_writes, metadata_memo);
  }
  void add_delete_thread(PostgresPipeline& pipeline, std::deque<PostgresStatement>& statements,
                         const std::string& thread_id);

  PostgresConnection connection;
  std::unique_ptr<Statements> statements;
  LastPut last_put;
  SaverStats stats;
  MetadataMemo metadata_memo;
};

std::optional<CheckpointTuple> PostgresSaver::Impl::get_tuple(const CheckpointConfig& config,
                                                              const GetOptions& options) {
  const bool latest = config.checkpoint_id.empty();
  if (!options.reuse_values_of.empty() || options.skip_values) {
    // The caller holds the values of the checkpoint it expects: the row and its writes in one
    // statement, without a transaction, unless the checkpoint found is another one.
    StatementUse query(latest ? statements->select_latest_with_writes
                              : statements->select_by_id_with_writes);
    query->bind(1, config.thread_id).bind(2, config.checkpoint_ns);
    if (!latest) query->bind(3, config.checkpoint_id);
    if (!query->step()) return std::nullopt;
    const CheckpointRow row = read_checkpoint_row(*query);
    if (reuses_values(row, options)) {
      DecodedValues decoded;  // stays empty: no value is read
      CheckpointTuple tuple =
          read_tuple_values(row, options, decoded, statements->select_value_range, metadata_memo);
      read_pending_writes(*query, 7, tuple);
      return tuple;
    }
    // Its values are read in the transaction below, which reads the writes in the same
    // snapshot.
  }
  Transaction transaction(connection, TransactionKind::kRead);
  std::optional<CheckpointRow> row;
  {
    StatementUse query(latest ? statements->select_latest : statements->select_by_id);
    query->bind(1, config.thread_id).bind(2, config.checkpoint_ns);
    if (!latest) query->bind(3, config.checkpoint_id);
    if (query->step()) row = read_checkpoint_row(*query);
  }
  if (!row) return std::nullopt;
  DecodedValues decoded;
  CheckpointTuple tuple = read(*row, options, decoded);
  transaction.commit();
  return tuple;
}

std::vector<CheckpointTuple> PostgresSaver::Impl::list(const ListQuery& query) {
  // The SQL narrows by config; the metadata filter is applied while stepping (so is `limit`).
  std::string sql = std::string("SELECT ") + kCheckpointColumns + " FROM checkpoints WHERE TRUE";
  int index = 1;
  if (query.thread_id) sql += " AND thread_id = $" + std::to_string(index++);
  if (query.checkpoint_ns) sql += " AND checkpoint_ns = $" + std::to_string(index++);
  if (query.checkpoint_id) sql += " AND checkpoint_id = $" + std::to_string(index++);
  if (query.before) sql += " AND checkpoint_id < $" + std::to_string(index++);
  sql += " ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC";

  Transaction transaction(connection, TransactionKind::kRead);
  std::vector<CheckpointRow> rows;
  {
    PostgresStatement statement(connection, sql, PostgresStatement::kOnce);
    index = 1;
    if (query.thread_id) statement.bind(index++, *query.thread_id);
    if (query.checkpoint_ns) statement.bind(index++, *query.checkpoint_ns);
    if (query.checkpoint_id) statement.bind(index++, *query.checkpoint_id);
    if (query.before) statement.bind(index++, *query.before);
    while ((!query.limit || rows.size() < *query.limit) && statement.step()) {
      CheckpointRow row = read_checkpoint_row(statement);
      if (query.filter.is_object() && !query.filter.empty()) {
        Json metadata = Json::parse(row.metadata, nullptr, false);
        if (!metadata_matches(metadata, query.filter)) continue;
      }
      rows.push_back(std::move(row));
    }
  }
  std::vector<CheckpointTuple> tuples;
  tuples.reserve(rows.size());
  DecodedValues decoded;
  for (const CheckpointRow& row : rows) tuples.push_back(read(row, {}, decoded));
  transaction.commit();
  return tuples;
}

CheckpointConfig PostgresSaver::Impl::put(const CheckpointConfig& config,
                                          const Checkpoint& checkpoint,
                                          const std::string& metadata_json,
                                          const ChannelVersions& new_versions,
                                          const ChannelDeltas& deltas, const TaskWrites* writes) {
  const bool has_parent = !config.checkpoint_id.empty() && config.checkpoint_id != checkpoint.id;
  LastPut& last = last_put;
  Checkpoint parent;
  ValueRefs parent_refs;
  ParentValues parent_values;
  if (has_parent && last.valid && last.id == config.checkpoint_id &&
      last.thread_id == config.thread_id && last.ns == config.checkpoint_ns) {
    parent_values = {&last.refs, &last.versions};
  } else if (has_parent) {
    StatementUse query(statements->select_header);
    query->bind(1, config.thread_id).bind(2, config.checkpoint_ns).bind(3, config.checkpoint_id);
    if (query->step()) {
      const auto stored = query->blob(0);
      decode_header(stored.data(), stored.size(), parent, parent_refs);
      parent_values = {&parent_refs, &parent.channel_versions};
    }
  }
  ValuePlan plan = plan_values(checkpoint, parent_values, new_versions, deltas);
  const std::vector<std::uint8_t> header = encode_header(checkpoint, plan.refs);
  last.valid = false;
  std::vector<int> changed;
  {
    // The writes, the checkpoint and its values in one round trip, one implicit transaction.
    PostgresPipeline pipeline(connection);
    if (writes != nullptr) add_writes(pipeline, *writes);
    PostgresStatement& insert = statements->insert_checkpoint;
    insert.bind(1, config.thread_id).bind(2, config.checkpoint_ns).bind(3, checkpoint.id);
    if (has_parent) {
      insert.bind(4, config.checkpoint_id);
    } else {
      insert.bind_null(4);
    }
    insert.bind_blob(5, header).bind(6, metadata_json);
    pipeline.add(insert);
    for (const auto& [channel, value] : plan.stored) {
      bind_value_row(statements->insert_value, config.thread_id, config.checkpoint_ns,
                     checkpoint.id, channel, value);
      pipeline.add(statements->insert_value);
    }
    changed = pipeline.finish();
  }
  if (writes != nullptr) finish_writes(*writes, changed);
  count_put(stats, plan, header.size() + metadata_json.size());
  last = LastPut{true,
                 config.thread_id,
                 config.checkpoint_ns,
                 checkpoint.id,
                 checkpoint.channel_versions,
                 std::move(plan.refs)};
  return CheckpointConfig{config.thread_id, config.checkpoint_ns, checkpoint.id};
}

void PostgresSaver::Impl::put_writes(const TaskWrites& writes) {
  if (writes.writes.empty()) return;
  std::vector<int> changed;
  {
    PostgresPipeline pipeline(connection);
    add_writes(pipeline, writes);
    changed = pipeline.finish();
  }
  finish_writes(writes, changed);
}

void PostgresSaver::Impl::add_writes(PostgresPipeline& pipeline, const TaskWrites& writes) {
  for (const WriteRow& row : writes.rows) add_write_row(pipeline, writes, row);
}

void PostgresSaver::Impl::add_write_row(PostgresPipeline& pipeline, const TaskWrites& writes,
                                        const WriteRow& row) {
  const CheckpointConfig& config = writes.config;
  PostgresStatement& insert = row.special ? statements->upsert_write : statements->insert_write;
  insert.bind(1, config.thread_id).bind(2, config.checkpoint_ns).bind(3, config.checkpoint_id);
  insert.bind(4, writes.task_id).bind(5, row.idx).bind(6, row.channel);
  insert.bind(7, writes.task_path).bind_blob(8, row.value(writes.encoded)).bind(9, row.span);
  pipeline.add(insert);
}

void PostgresSaver::Impl::finish_writes(const TaskWrites& writes, const std::vector<int>& changed) {
  std::vector<const WriteRow*> not_stored;  // rows of several writes whose index is taken
  for (std::size_t i = 0; i < changed.size() && i < writes.rows.size(); ++i) {
    const WriteRow& row = writes.rows[i];
    if (changed[i] > 0) {
      stats.writes_written += static_cast<std::uint64_t>(row.span);
      stats.bytes_written += write_row_bytes(row, writes.encoded);
    } else if (row.span > 1) {
      not_stored.push_back(&row);
    }
  }
  if (not_stored.empty()) return;
  // Some of their indices are held already: each write whose index is not, in a row of its own.
  std::vector<std::pair<std::int64_t, std::int64_t>> taken;
  {
    StatementUse query(statements->select_task_rows);
    query->bind(1, writes.config.thread_id).bind(2, writes.config.checkpoint_ns);
    query->bind(3, writes.config.checkpoint_id).bind(4, writes.task_id);
    while (query->step()) taken.emplace_back(query->integer(0), query->integer(1));
  }
  std::vector<WriteRow> singles;
  for (const WriteRow* row : not_stored) {
    for (WriteRow& single : rows_of_free_writes(*row, taken, writes.writes)) {
      singles.push_back(std::move(single));
    }
  }
  std::vector<int> stored;
  {
    PostgresPipeline pipeline(connection);
    for (const WriteRow& single : singles) add_write_row(pipeline, writes, single);
    stored = pipeline.finish();
  }
  for (std::size_t i = 0; i < stored.size() && i < singles.size(); ++i) {
    if (stored[i] > 0) {
      stats.writes_written += 1;
      stats.bytes_written += writes.encoded[singles[i].first].size();
    }
  }
}

void PostgresSaver::Impl::add_delete_thread(PostgresPipeline& pipeline,
                                            std::deque<PostgresStatement>& statements_made,
                                            const std::string& thread_id) {
  for (const char* table : {"checkpoints", "channel_values", "writes"}) {
    PostgresStatement& statement = statements_made.emplace_back(
        connection, std::string("DELETE FROM ") + table + " WHERE thread_id = $1",
        PostgresStatement::kOnce);
    statement.bind(1, thread_id);
    pipeline.add(statement);
  }
}

void PostgresSaver::Impl::prune_namespace(const std::string& thread_id, const std::string& ns) {
  CheckpointRow row;
  {
    StatementUse query(statements->select_latest);
    query->bind(1, thread_id).bind(2, ns);
    if (!query->step()) return;
    row = read_checkpoint_row(*query);
  }
  Checkpoint checkpoint;
  ValueRefs refs;
  decode_header(row.header.data(), row.header.size(), checkpoint, refs);
  const StoredValues values = own_full_values(row, refs, statements->select_value_range);
  PostgresStatement drop_values(
      connection, "DELETE FROM channel_values WHERE thread_id = $1 AND checkpoint_ns = $2",
      PostgresStatement::kOnce);
  drop_values.bind(1, thread_id).bind(2, ns).run();
  for (const auto& [channel, value] : values) {
    StatementUse insert(statements->insert_value);
    bind_value_row(*insert, thread_id, ns, row.id, channel, value);
    insert->run();
  }
  PostgresStatement update(connection,
                           "UPDATE checkpoints SET header = $1 WHERE thread_id = $2 AND "
                           "checkpoint_ns = $3 AND checkpoint_id = $4",
                           PostgresStatement::kOnce);
  const std::vector<std::uint8_t> header = encode_header(checkpoint, refs);
  update.bind_blob(1, header).bind(2, thread_id).bind(3, ns).bind(4, row.id).run();
  PostgresStatement drop_older(connection,
                               "DELETE FROM checkpoints WHERE thread_id = $1 AND "
                               "checkpoint_ns = $2 AND checkpoint_id <> $3",
                               PostgresStatement::kOnce);
  drop_older.bind(1, thread_id).bind(2, ns).bind(3, row.id).run();
}

PostgresSaver::PostgresSaver(const std::string& url, const PostgresSaverOptions& options)
    : impl_(std::make_unique<Impl>(url, options)) {}

PostgresSaver::~PostgresSaver() = default;

SaverStats PostgresSaver::stats() const {
  std::lock_guard lock(mutex_);
  return impl_->stats;
}

std::optional<CheckpointTuple> PostgresSaver::get_tuple(const CheckpointConfig& config,
                                                        const GetOptions& options) {
  if (config.thread_id.empty()) return std::nullopt;
  std::lock_guard lock(mutex_);
  return impl_->reconnecting([&] { return impl_->get_tuple(config, options); });
}

std::vector<CheckpointTuple> PostgresSaver::list(const ListQuery& query) {
  check_filter(query.filter);
  std::lock_guard lock(mutex_);
  return impl_->reconnecting([&] { return impl_->list(query); });
}

CheckpointConfig PostgresSaver::put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                                    const Json& metadata, const ChannelVersions& new_versions,
                                    const ChannelDeltas& deltas) {
  check_put_arguments(config, checkpoint, metadata);
  const std::string metadata_json = metadata_text(metadata);
  std::lock_guard lock(mutex_);
  return impl_->reconnecting(
      [&] { return impl_->put(config, checkpoint, metadata_json, new_versions, deltas); });
}

void PostgresSaver::put_writes(const CheckpointConfig& config,
                               const std::vector<std::pair<std::string, Json>>& writes,
                               const std::string& task_id, const std::string& task_path) {
  check_put_writes_arguments(config, task_id);
  const std::vector<std::vector<std::uint8_t>> encoded = encode_write_values(writes);
  const Impl::TaskWrites task_writes{config,  writes,    encoded,
                                     task_id, task_path, plan_write_rows(writes, encoded)};
  std::lock_guard lock(mutex_);
  impl_->reconnecting([&] { impl_->put_writes(task_writes); });
}

CheckpointConfig PostgresSaver::put_after_writes(
    const CheckpointConfig& writes_config,
    const std::vector<std::pair<std::string, Json>>& writes, const std::string& task_id,
    const std::string& task_path, const CheckpointConfig& config, const Checkpoint& checkpoint,
    const Json& metadata, const ChannelVersions& new_versions, const ChannelDeltas& deltas) {
  check_put_writes_arguments(writes_config, task_id);
  check_put_arguments(config, checkpoint, metadata);
  const std::vector<std::vector<std::uint8_t>> encoded = encode_write_values(writes);
  const std::string metadata_json = metadata_text(metadata);
  const Impl::TaskWrites task_writes{writes_config, writes,    encoded,
                                     task_id,       task_path, plan_write_rows(writes, encoded)};
  std::lock_guard lock(mutex_);
  return impl_->reconnecting([&] {
    return impl_->put(config, checkpoint, metadata_json, new_versions, deltas, &task_writes);
  });
}

void PostgresSaver::delete_thread(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  impl_->last_put.valid = false;
  impl_->reconnecting([&] {
    std::deque<PostgresStatement> statements;
    PostgresPipeline pipeline(impl_->connection);
    impl_->add_delete_thread(pipeline, statements, thread_id);
    pipeline.finish();
  });
}

void PostgresSaver::prune(const std::vector<std::string>& thread_ids, PruneStrategy strategy) {
  std::lock_guard lock(mutex_);
  impl_->last_put.valid = false;
  impl_->reconnecting([&] {
    Impl& impl = *impl_;
    Transaction transaction(impl.connection, TransactionKind::kWrite);
    for (const std::string& thread_id : thread_ids) {
      if (strategy == PruneStrategy::kDelete) {
        for (const char* table : {"checkpoints", "channel_values", "writes"}) {
          PostgresStatement drop(impl.connection,
                                 std::string("DELETE FROM ") + table + " WHERE thread_id = $1",
                                 PostgresStatement::kOnce);
          drop.bind(1, thread_id).run();
        }
        continue;
      }
      std::vector<std::string> namespaces;
      {
        PostgresStatement query(
            impl.connection, "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = $1",
            PostgresStatement::kOnce);
        query.bind(1, thread_id);
        while (query.step()) namespaces.push_back(query.text(0));
      }
      for (const std::string& ns : namespaces) impl.prune_namespace(thread_id, ns);
      PostgresStatement drop_writes(
          impl.connection,
          "DELETE FROM writes w WHERE w.thread_id = $1 AND NOT EXISTS (SELECT 1 FROM "
          "checkpoints c WHERE c.thread_id = $1 AND c.checkpoint_ns = w.checkpoint_ns AND "
          "c.checkpoint_id = w.checkpoint_id)",
          PostgresStatement::kOnce);
      drop_writes.bind(1, thread_id).run();
    }
    transaction.commit();
  });
}

void PostgresSaver::copy_thread(const std::string& source_thread_id,
                                const std::string& target_thread_id) {
  if (!check_copy_thread_arguments(source_thread_id, target_thread_id)) return;
  static constexpr const char* kCopies[] = {
      "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
      "header, metadata) SELECT $2::text, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
      "header, metadata FROM checkpoints WHERE thread_id = $1 ON CONFLICT (thread_id, "
      "checkpoint_ns, checkpoint_id) DO UPDATE SET parent_checkpoint_id = "
      "excluded.parent_checkpoint_id, header = excluded.header, metadata = excluded.metadata",
      "INSERT INTO channel_values (thread_id, checkpoint_ns, channel, checkpoint_id, "
      "base_checkpoint_id, keep, value) SELECT $2::text, checkpoint_ns, channel, checkpoint_id, "
      "base_checkpoint_id, keep, value FROM channel_values WHERE thread_id = $1 ON CONFLICT "
      "(thread_id, checkpoint_ns, checkpoint_id, channel) DO UPDATE SET base_checkpoint_id = "
      "excluded.base_checkpoint_id, keep = excluded.keep, value = excluded.value",
      "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, "
      "task_path, value, span) SELECT $2::text, checkpoint_ns, checkpoint_id, task_id, idx, "
      "channel, task_path, value, span FROM writes WHERE thread_id = $1 ON CONFLICT (thread_id, "
      "checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET channel = excluded.channel, "
      "task_path = excluded.task_path, value = excluded.value, span = excluded.span",
  };
  std::lock_guard lock(mutex_);
  impl_->last_put.valid = false;
  impl_->reconnecting([&] {
    std::deque<PostgresStatement> statements;
    PostgresPipeline pipeline(impl_->connection);
    for (const char* sql : kCopies) {
      PostgresStatement& copy =
          statements.emplace_back(impl_->connection, sql, PostgresStatement::kOnce);
      copy.bind(1, source_thread_id).bind(2, target_thread_id);
      pipeline.add(copy);
    }
    pipeline.finish();
  });
}

}  // namespace checkpoint_internal

std::shared_ptr<Saver> open_postgres_saver(const std::string& url,
                                           const PostgresSaverOptions& options) {
  return std::make_shared<checkpoint_internal::PostgresSaver>(url, options);
}

}  // namespace tollgate
