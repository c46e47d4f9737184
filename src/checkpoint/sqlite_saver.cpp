#include "checkpoint/sqlite_saver.h"

#include <algorithm>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "checkpoint/header_codec.h"
#include "checkpoint/saver_checks.h"
#include "checkpoint/saver_rows.h"
#include "checkpoint/sqlite_schema.h"
#include "checkpoint/value_store.h"
#include "sql/sqlite_connection.h"
#include "tollgate/error.h"

namespace tollgate {
namespace checkpoint_internal {

using sql::SqliteConnection;
using sql::SqliteStatement;
using sql::StatementUse;
using sql::Transaction;
using sql::TransactionKind;

namespace {

// A put's arguments checked and its metadata as stored, before the lock is taken.
struct PreparedPut {
  const CheckpointConfig& config;
  const Checkpoint& checkpoint;
  const ChannelVersions& new_versions;
  const ChannelDeltas& deltas;
  std::string metadata_json;
};

PreparedPut prepare_put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                        const Json& metadata, const ChannelVersions& new_versions,
                        const ChannelDeltas& deltas) {
  checkpoint_internal::check_put_arguments(config, checkpoint, metadata);
  return PreparedPut{config, checkpoint, new_versions, deltas, metadata_text(metadata)};
}

// A put_writes's arguments checked and its values encoded, before the lock is taken.
struct PreparedWrites {
  const CheckpointConfig& config;
  const std::vector<std::pair<std::string, Json>>& writes;
  const std::string& task_id;
  const std::string& task_path;
  std::vector<std::vector<std::uint8_t>> encoded;
  std::vector<checkpoint_internal::WriteRow> rows;
};

PreparedWrites prepare_writes(const CheckpointConfig& config,
                              const std::vector<std::pair<std::string, Json>>& writes,
                              const std::string& task_id, const std::string& task_path) {
  checkpoint_internal::check_put_writes_arguments(config, task_id);
  PreparedWrites prepared{
      config, writes, task_id, task_path, checkpoint_internal::encode_write_values(writes), {}};
  prepared.rows = checkpoint_internal::plan_write_rows(writes, prepared.encoded);
  return prepared;
}

sql::SqliteSync sync_level(const SqliteOptions& options) {
  return options.synchronous == SqliteSynchronous::kFull ? sql::SqliteSync::kFull
                                                         : sql::SqliteSync::kNormal;
}

}  // namespace

struct SqliteSaver::Impl {
  struct Statements {
    explicit Statements(SqliteConnection& c)
        : select_by_id(c, std::string("SELECT ") + kCheckpointColumns +
                              " FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND "
                              "checkpoint_id = ?"),
          select_latest(c, std::string("SELECT ") + kCheckpointColumns +
                               " FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                               "ORDER BY checkpoint_id DESC LIMIT 1"),
          select_header(c,
                        "SELECT header FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                        "AND checkpoint_id = ?"),
          insert_checkpoint(c, std::string("INSERT OR REPLACE INTO checkpoints (") +
                                   kCheckpointColumns + ") VALUES (?, ?, ?, ?, ?, ?)"),
          insert_value(
              c,
              "INSERT OR REPLACE INTO channel_values (thread_id, checkpoint_ns, channel, "
              "checkpoint_id, base_checkpoint_id, keep, value) VALUES (?, ?, ?, ?, ?, ?, ?)"),
          select_value_range(c,
                             "SELECT checkpoint_id, base_checkpoint_id, keep, value FROM "
                             "channel_values WHERE thread_id = ? AND checkpoint_ns = ? AND "
                             "checkpoint_id BETWEEN ? AND ? AND channel = ?"),
          select_writes(c,
                        "SELECT task_id, channel, value, span FROM writes WHERE thread_id = ? AND "
                        "checkpoint_ns = ? AND checkpoint_id = ? ORDER BY task_id, idx"),
          upsert_write(c,
                       "INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, "
                       "task_id, idx, channel, task_path, value, span) VALUES (?, ?, ?, ?, ?, ?, "
                       "?, ?, ?)"),
          data_version(c, "PRAGMA data_version"),
          insert_write(c,
                       "INSERT OR IGNORE INTO writes (thread_id, checkpoint_ns, checkpoint_id, "
                       "task_id, idx, channel, task_path, value, span) VALUES (?, ?, ?, ?, ?, ?, "
                       "?, ?, ?)"),
          select_task_rows(c,
                           "SELECT idx, span FROM writes WHERE thread_id = ? AND checkpoint_ns = "
                           "? AND checkpoint_id = ? AND task_id = ? AND idx >= 0") {}

    SqliteStatement select_by_id, select_latest, select_header, insert_checkpoint, insert_value,
        select_value_range, select_writes, upsert_write, data_version, insert_write,
        select_task_rows;
  };

  // The checkpoint this connection put last in a thread's namespace, decoded: usually the
  // parent of the thread's next put, which then needs no read. It holds while no other
  // connection committed (data_version) and this one deleted, pruned or copied nothing since.
  struct LastPut {
    std::int64_t data_version = 0;
    std::string id;
    ChannelVersions versions;
    ValueRefs refs;
  };
  // The last puts of the threads put to lately, the oldest dropped past kCapacity. Its own
  // mutex: a put plans its values against an entry before it takes the connection's lock.
  class LastPuts {
   public:
    std::shared_ptr<const LastPut> find(const std::string& thread_id, const std::string& ns) {
      std::lock_guard lock(mutex_);
      auto it = entries_.find(Key{thread_id, ns});
      return it == entries_.end() ? nullptr : it->second->second;
    }
    // Null forgets the thread's entry.
    void set(const std::string& thread_id, const std::string& ns,
             std::shared_ptr<const LastPut> put) {
      std::lock_guard lock(mutex_);
      Key key{thread_id, ns};
      if (auto it = entries_.find(key); it != entries_.end()) {
        ages_.erase(it->second);
        entries_.erase(it);
      }
      if (!put) return;
      ages_.emplace_back(key, std::move(put));
      entries_.emplace(std::move(key), std::prev(ages_.end()));
      if (ages_.size() > kCapacity) {
        entries_.erase(ages_.front().first);
        ages_.pop_front();
      }
    }
    void clear() {
      std::lock_guard lock(mutex_);
      entries_.clear();
      ages_.clear();
    }

   private:
    static constexpr std::size_t kCapacity = 64;
    using Key = std::pair<std::string, std::string>;                         // thread, namespace
    using Ages = std::list<std::pair<Key, std::shared_ptr<const LastPut>>>;  // oldest first
    std::mutex mutex_;
    Ages ages_;
    std::map<Key, Ages::iterator> entries_;
  };
  // A put's values planned and its header encoded before the connection's lock, against
  // `parent` (null: a checkpoint without a parent); used when that is still the thread's entry.
  struct PlannedPut {
    std::shared_ptr<const LastPut> parent;
    checkpoint_internal::ValuePlan plan;
    std::vector<std::uint8_t> header;
  };
  // `put` planned against `parent` (null: none).
  static PlannedPut planned_against(const PreparedPut& put, std::shared_ptr<const LastPut> parent);
  // The plan of `put` against the thread's last put, when that is its parent (or it has none).
  std::optional<PlannedPut> plan_ahead(const PreparedPut& put);
  // The parent named by `config` as stored, decoded; null when it is not stored.
  std::shared_ptr<const LastPut> stored_parent(const CheckpointConfig& config,
                                               std::int64_t data_version);

  // Migrates the tables: called with the connection's lock held.
  explicit Impl(std::shared_ptr<sql::Connection> shared)
      : owner(std::move(shared)), connection(static_cast<SqliteConnection&>(*owner)) {
    sql::migrate(connection, sqlite_checkpoint_schema());
    statements = std::make_unique<Statements>(connection);
  }

  // put's work inside `transaction`, which it commits (then notes what it put); `planned`, if
  // given, is used when its parent is still the thread's last put.
  CheckpointConfig put(const PreparedPut& put, Transaction& transaction,
                       std::optional<PlannedPut> planned);
  // put_writes's rows, in the caller's transaction; returns what was written.
  SaverStats insert_writes(const PreparedWrites& prepared);
  void store_values(const std::string& thread_id, const std::string& ns,
                    const std::string& checkpoint_id,
                    const checkpoint_internal::StoredValues& values);
  void prune_namespace(const std::string& thread_id, const std::string& ns);
  // The tuple of `row`, its values and pending writes read through this connection.
  CheckpointTuple read(const CheckpointRow& row, const GetOptions& options,
                       DecodedValues& decoded) {
    return read_tuple(row, options, decoded, statements->select_value_range,
                      statements->select_writes, metadata_memo);
  }
  void delete_thread(const std::string& thread_id);

  std::int64_t read_data_version() {
    StatementUse query(statements->data_version);
    if (!query->step()) throw Error::Internal("sqlite: PRAGMA data_version returned nothing");
    return query->integer(0);
  }

  std::shared_ptr<sql::Connection> owner;  // keeps `connection` open
  SqliteConnection& connection;
  std::unique_ptr<Statements> statements;
  LastPuts last_puts;
  SaverStats stats;
  MetadataMemo metadata_memo;
};

void SqliteSaver::Impl::store_values(const std::string& thread_id, const std::string& ns,
                                     const std::string& checkpoint_id,
                                     const checkpoint_internal::StoredValues& values) {
  for (const auto& [channel, value] : values) {
    StatementUse insert(statements->insert_value);
    bind_value_row(*insert, thread_id, ns, checkpoint_id, channel, value);
    insert->run();
  }
}

SqliteSaver::SqliteSaver(const std::string& path, const SqliteOptions& options)
    : SqliteSaver(sql::SharedConnection::alone(std::make_unique<SqliteConnection>(
                      path, sql::SqliteFileOptions{options.busy_timeout, /*wal=*/true,
                                                   sync_level(options)}))) {}

SqliteSaver::SqliteSaver(sql::SharedConnection connection)
    : mutex_(std::move(connection.lock)) {
  std::lock_guard lock(mutex_);
  impl_ = std::make_unique<Impl>(std::move(connection.connection));
}

SqliteSaver::~SqliteSaver() = default;

SaverStats SqliteSaver::stats() const {
  std::lock_guard lock(mutex_);
  return impl_->stats;
}

std::optional<CheckpointTuple> SqliteSaver::get_tuple(const CheckpointConfig& config,
                                                      const GetOptions& options) {
  if (config.thread_id.empty()) return std::nullopt;
  std::optional<CheckpointRow> row;
  std::vector<StoredWrite> writes;
  {
    std::lock_guard lock(mutex_);
    Transaction transaction(impl_->connection, TransactionKind::kRead);
    {
      const bool latest = config.checkpoint_id.empty();
      StatementUse query(latest ? impl_->statements->select_latest
                                : impl_->statements->select_by_id);
      query->bind(1, config.thread_id).bind(2, config.checkpoint_ns);
      if (!latest) query->bind(3, config.checkpoint_id);
      if (query->step()) row = read_checkpoint_row(*query);
    }
    if (!row) return std::nullopt;
    if (!reuses_values(*row, options)) {
      // Its values are read through the connection: all of it under the lock.
      DecodedValues decoded;
      CheckpointTuple tuple = impl_->read(*row, options, decoded);
      transaction.commit();
      return tuple;
    }
    writes = read_stored_writes(*row, impl_->statements->select_writes);
    transaction.commit();
  }
  // The rest is decoding: after the connection is given back, so that the other users of a
  // shared connection do not wait for it (a checkpoint is read several times a run).
  CheckpointTuple tuple = tuple_without_values(*row, impl_->metadata_memo);
  decode_pending_writes(std::move(writes), tuple);
  return tuple;
}

std::vector<CheckpointTuple> SqliteSaver::list(const ListQuery& query) {
  checkpoint_internal::check_filter(query.filter);
  // The SQL narrows by every criterion it can express exactly or loosely; the exact metadata
  // comparison happens below, so `limit` is applied while stepping, not in SQL.
  std::string sql = std::string("SELECT ") + kCheckpointColumns + " FROM checkpoints WHERE 1";
  std::vector<Json> filter_binds;  // the filter values bound, in order of their '?'
  if (query.thread_id) sql += " AND thread_id = ?";
  if (query.checkpoint_ns) sql += " AND checkpoint_ns = ?";
  if (query.checkpoint_id) sql += " AND checkpoint_id = ?";
  if (query.before) sql += " AND checkpoint_id < ?";
  if (query.filter.is_object()) {
    for (const auto& [key, value] : query.filter.items()) {
      // Keys are restricted to [a-zA-Z0-9_.-]: safe inside a quoted JSON path label.
      const std::string path = "'$.\"" + key + "\"'";
      if (value.is_string() || value.is_number_integer() || value.is_boolean()) {
        if (value.is_number_unsigned() &&
            value.get<std::uint64_t>() >
                static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          continue;
        }
        sql += " AND json_extract(metadata, " + path + ") = ?";
        filter_binds.push_back(value);
      } else if (value.is_null()) {
        sql += " AND json_type(metadata, " + path + ") = 'null'";
      }
    }
  }
  sql += " ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC";

  std::lock_guard lock(mutex_);
  Transaction transaction(impl_->connection, TransactionKind::kRead);
  std::vector<CheckpointRow> rows;
  {
    SqliteStatement statement(impl_->connection, sql);
    int index = 1;
    if (query.thread_id) statement.bind(index++, *query.thread_id);
    if (query.checkpoint_ns) statement.bind(index++, *query.checkpoint_ns);
    if (query.checkpoint_id) statement.bind(index++, *query.checkpoint_id);
    if (query.before) statement.bind(index++, *query.before);
    for (const Json& value : filter_binds) {
      if (value.is_string()) {
        statement.bind(index++, value.get_ref<const std::string&>());
      } else if (value.is_boolean()) {
        statement.bind(index++, std::int64_t{value.get<bool>() ? 1 : 0});
      } else {
        statement.bind(index++, value.get<std::int64_t>());
      }
    }
    while ((!query.limit || rows.size() < *query.limit) && statement.step()) {
      CheckpointRow row = read_checkpoint_row(statement);
      if (query.filter.is_object() && !query.filter.empty()) {
        Json metadata = Json::parse(row.metadata, nullptr, false);
        if (!checkpoint_internal::metadata_matches(metadata, query.filter)) continue;
      }
      rows.push_back(std::move(row));
    }
  }
  std::vector<CheckpointTuple> tuples;
  tuples.reserve(rows.size());
  DecodedValues decoded;
  for (const CheckpointRow& row : rows) tuples.push_back(impl_->read(row, {}, decoded));
  transaction.commit();
  return tuples;
}


CheckpointConfig SqliteSaver::put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                                  const Json& metadata, const ChannelVersions& new_versions,
                                  const ChannelDeltas& deltas) {
  const PreparedPut put = prepare_put(config, checkpoint, metadata, new_versions, deltas);
  std::optional<Impl::PlannedPut> planned = impl_->plan_ahead(put);
  std::lock_guard lock(mutex_);
  Transaction transaction(impl_->connection, TransactionKind::kWrite);
  return impl_->put(put, transaction, std::move(planned));
}

CheckpointConfig SqliteSaver::put_after_writes(
    const CheckpointConfig& writes_config,
    const std::vector<std::pair<std::string, Json>>& writes, const std::string& task_id,
    const std::string& task_path, const CheckpointConfig& config, const Checkpoint& checkpoint,
    const Json& metadata, const ChannelVersions& new_versions, const ChannelDeltas& deltas) {
  const PreparedWrites step_writes = prepare_writes(writes_config, writes, task_id, task_path);
  const PreparedPut put = prepare_put(config, checkpoint, metadata, new_versions, deltas);
  std::optional<Impl::PlannedPut> planned = impl_->plan_ahead(put);
  std::lock_guard lock(mutex_);
  Transaction transaction(impl_->connection, TransactionKind::kWrite);
  const SaverStats written = impl_->insert_writes(step_writes);
  CheckpointConfig saved = impl_->put(put, transaction, std::move(planned));
  impl_->stats.writes_written += written.writes_written;
  impl_->stats.bytes_written += written.bytes_written;
  return saved;
}

namespace {

bool has_parent(const CheckpointConfig& config, const Checkpoint& checkpoint) {
  return !config.checkpoint_id.empty() && config.checkpoint_id != checkpoint.id;
}

}  // namespace

SqliteSaver::Impl::PlannedPut SqliteSaver::Impl::planned_against(
    const PreparedPut& put, std::shared_ptr<const LastPut> parent) {
  checkpoint_internal::ParentValues parent_values;
  if (parent) parent_values = {&parent->refs, &parent->versions};
  PlannedPut planned{std::move(parent),
                     checkpoint_internal::plan_values(put.checkpoint, parent_values,
                                                      put.new_versions, put.deltas),
                     {}};
  planned.header = checkpoint_internal::encode_header(put.checkpoint, planned.plan.refs);
  return planned;
}

std::optional<SqliteSaver::Impl::PlannedPut> SqliteSaver::Impl::plan_ahead(const PreparedPut& put) {
  std::shared_ptr<const LastPut> parent;
  if (has_parent(put.config, put.checkpoint)) {
    parent = last_puts.find(put.config.thread_id, put.config.checkpoint_ns);
    if (!parent || parent->id != put.config.checkpoint_id) return std::nullopt;
  }
  return planned_against(put, std::move(parent));
}

std::shared_ptr<const SqliteSaver::Impl::LastPut> SqliteSaver::Impl::stored_parent(
    const CheckpointConfig& config, std::int64_t data_version) {
  StatementUse query(statements->select_header);
  query->bind(1, config.thread_id).bind(2, config.checkpoint_ns).bind(3, config.checkpoint_id);
  if (!query->step()) return nullptr;
  const auto stored = query->blob(0);
  Checkpoint parent;
  ValueRefs refs;
  checkpoint_internal::decode_header(stored.data(), stored.size(), parent, refs);
  return std::make_shared<const LastPut>(LastPut{data_version, config.checkpoint_id,
                                                 std::move(parent.channel_versions),
                                                 std::move(refs)});
}

CheckpointConfig SqliteSaver::Impl::put(const PreparedPut& put, Transaction& transaction,
                                        std::optional<PlannedPut> planned) {
  const CheckpointConfig& config = put.config;
  const Checkpoint& checkpoint = put.checkpoint;
  const bool with_parent = has_parent(config, checkpoint);
  const std::int64_t data_version = read_data_version();
  std::shared_ptr<const LastPut> last;
  if (with_parent) {
    last = last_puts.find(config.thread_id, config.checkpoint_ns);
    if (last && (last->data_version != data_version || last->id != config.checkpoint_id)) {
      last = nullptr;
    }
  }
  // The plan made ahead holds if it was made against what the thread's entry still is (the
  // same object: no put, delete or prune of the thread since) and that entry still holds.
  if (planned && planned->parent != last) planned.reset();
  if (!planned) {
    if (with_parent && !last) last = stored_parent(config, data_version);
    planned = planned_against(put, std::move(last));
  }
  checkpoint_internal::ValuePlan& plan = planned->plan;
  const std::vector<std::uint8_t>& header = planned->header;
  {
    StatementUse insert(statements->insert_checkpoint);
    insert->bind(1, config.thread_id).bind(2, config.checkpoint_ns).bind(3, checkpoint.id);
    if (with_parent) {
      insert->bind(4, config.checkpoint_id);
    } else {
      insert->bind_null(4);
    }
    insert->bind_blob(5, header).bind(6, put.metadata_json).run();
  }
  store_values(config.thread_id, config.checkpoint_ns, checkpoint.id, plan.stored);
  last_puts.set(config.thread_id, config.checkpoint_ns, nullptr);
  transaction.commit();
  last_puts.set(
      config.thread_id, config.checkpoint_ns,
      std::make_shared<const LastPut>(
          LastPut{data_version, checkpoint.id, checkpoint.channel_versions, std::move(plan.refs)}));

  count_put(stats, plan, header.size() + put.metadata_json.size());
  return CheckpointConfig{config.thread_id, config.checkpoint_ns, checkpoint.id};
}

void SqliteSaver::put_writes(const CheckpointConfig& config,
                             const std::vector<std::pair<std::string, Json>>& writes,
                             const std::string& task_id, const std::string& task_path) {
  const PreparedWrites prepared = prepare_writes(config, writes, task_id, task_path);
  std::lock_guard lock(mutex_);
  Transaction transaction(impl_->connection, TransactionKind::kWrite);
  const SaverStats written = impl_->insert_writes(prepared);
  transaction.commit();
  impl_->stats.writes_written += written.writes_written;
  impl_->stats.bytes_written += written.bytes_written;
}

SaverStats SqliteSaver::Impl::insert_writes(const PreparedWrites& prepared) {
  const CheckpointConfig& config = prepared.config;
  SaverStats written;
  auto insert_row = [&](const checkpoint_internal::WriteRow& row) {
    StatementUse insert(row.special ? statements->upsert_write : statements->insert_write);
    insert->bind(1, config.thread_id).bind(2, config.checkpoint_ns).bind(3, config.checkpoint_id);
    insert->bind(4, prepared.task_id).bind(5, row.idx).bind(6, row.channel);
    insert->bind(7, prepared.task_path).bind_blob(8, row.value(prepared.encoded));
    if (insert->bind(9, row.span).run() == 0) return;
    written.writes_written += static_cast<std::uint64_t>(row.span);
    written.bytes_written += checkpoint_internal::write_row_bytes(row, prepared.encoded);
  };
  // An ordinary write is stored only when no stored row of its task holds its index. Usually
  // the task has none (one probe of the key, no row read): then no row of this call can overlap
  // one stored.
  std::vector<std::pair<std::int64_t, std::int64_t>> taken;
  const bool ordinary = std::any_of(prepared.rows.begin(), prepared.rows.end(),
                                    [](const auto& row) { return !row.special; });
  if (ordinary) {
    StatementUse query(statements->select_task_rows);
    query->bind(1, config.thread_id).bind(2, config.checkpoint_ns).bind(3, config.checkpoint_id);
    query->bind(4, prepared.task_id);
    while (query->step()) taken.emplace_back(query->integer(0), query->integer(1));
  }
  for (const checkpoint_internal::WriteRow& row : prepared.rows) {
    if (row.special || taken.empty()) {
      insert_row(row);
      continue;
    }
    // A repeated put_writes: each write whose index is free, in a row of its own.
    for (const auto& single :
         checkpoint_internal::rows_of_free_writes(row, taken, prepared.writes)) {
      insert_row(single);
    }
  }
  return written;
}

void SqliteSaver::Impl::delete_thread(const std::string& thread_id) {
  for (const char* table : {"checkpoints", "channel_values", "writes"}) {
    SqliteStatement statement(connection,
                              std::string("DELETE FROM ") + table + " WHERE thread_id = ?");
    statement.bind(1, thread_id).run();
  }
}

void SqliteSaver::delete_thread(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  impl_->last_puts.clear();
  Transaction transaction(impl_->connection, TransactionKind::kWrite);
  impl_->delete_thread(thread_id);
  transaction.commit();
}

void SqliteSaver::Impl::prune_namespace(const std::string& thread_id, const std::string& ns) {
  CheckpointRow row;
  {
    StatementUse query(statements->select_latest);
    query->bind(1, thread_id).bind(2, ns);
    if (!query->step()) return;
    row = read_checkpoint_row(*query);
  }
  // The latest checkpoint may refer to values stored by the checkpoints being removed: give
  // it full values of its own first.
  Checkpoint checkpoint;
  ValueRefs refs;
  checkpoint_internal::decode_header(row.header.data(), row.header.size(), checkpoint, refs);
  const checkpoint_internal::StoredValues values =
      own_full_values(row, refs, statements->select_value_range);
  SqliteStatement drop_values(
      connection, "DELETE FROM channel_values WHERE thread_id = ? AND checkpoint_ns = ?");
  drop_values.bind(1, thread_id).bind(2, ns).run();
  store_values(thread_id, ns, row.id, values);
  SqliteStatement update(connection,
                         "UPDATE checkpoints SET header = ? WHERE thread_id = ? AND "
                         "checkpoint_ns = ? AND checkpoint_id = ?");
  update.bind_blob(1, checkpoint_internal::encode_header(checkpoint, refs))
      .bind(2, thread_id)
      .bind(3, ns)
      .bind(4, row.id)
      .run();
  SqliteStatement drop_older(connection,
                             "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                             "AND checkpoint_id <> ?");
  drop_older.bind(1, thread_id).bind(2, ns).bind(3, row.id).run();
}

void SqliteSaver::prune(const std::vector<std::string>& thread_ids, PruneStrategy strategy) {
  std::lock_guard lock(mutex_);
  impl_->last_puts.clear();
  Transaction transaction(impl_->connection, TransactionKind::kWrite);
  for (const std::string& thread_id : thread_ids) {
    if (strategy == PruneStrategy::kDelete) {
      impl_->delete_thread(thread_id);
      continue;
    }
    std::vector<std::string> namespaces;
    {
      SqliteStatement query(impl_->connection,
                            "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ?");
      query.bind(1, thread_id);
      while (query.step()) namespaces.push_back(query.text(0));
    }
    for (const std::string& ns : namespaces) impl_->prune_namespace(thread_id, ns);
    SqliteStatement drop_writes(
        impl_->connection,
        "DELETE FROM writes WHERE thread_id = ?1 AND NOT EXISTS (SELECT 1 FROM checkpoints c "
        "WHERE c.thread_id = ?1 AND c.checkpoint_ns = writes.checkpoint_ns AND "
        "c.checkpoint_id = writes.checkpoint_id)");
    drop_writes.bind(1, thread_id).run();
  }
  transaction.commit();
}

void SqliteSaver::copy_thread(const std::string& source_thread_id,
                              const std::string& target_thread_id) {
  if (!checkpoint_internal::check_copy_thread_arguments(source_thread_id, target_thread_id)) return;
  static constexpr const char* kCopies[] = {
      "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
      "parent_checkpoint_id, header, metadata) SELECT ?2, checkpoint_ns, checkpoint_id, "
      "parent_checkpoint_id, header, metadata FROM checkpoints WHERE thread_id = ?1",
      "INSERT OR REPLACE INTO channel_values (thread_id, checkpoint_ns, channel, checkpoint_id, "
      "base_checkpoint_id, keep, value) SELECT ?2, checkpoint_ns, channel, checkpoint_id, "
      "base_checkpoint_id, keep, value FROM channel_values WHERE thread_id = ?1",
      "INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
      "channel, task_path, value, span) SELECT ?2, checkpoint_ns, checkpoint_id, task_id, idx, "
      "channel, task_path, value, span FROM writes WHERE thread_id = ?1",
  };
  std::lock_guard lock(mutex_);
  impl_->last_puts.clear();
  Transaction transaction(impl_->connection, TransactionKind::kWrite);
  for (const char* sql : kCopies) {
    SqliteStatement copy(impl_->connection, sql);
    copy.bind(1, source_thread_id).bind(2, target_thread_id).run();
  }
  transaction.commit();
}

std::shared_ptr<Saver> open_shared_sqlite_saver(const std::string& path,
                                                const SqliteOptions& options) {
  return std::make_shared<SqliteSaver>(
      sql::shared_sqlite_file(path, sync_level(options), options.busy_timeout));
}

}  // namespace checkpoint_internal

std::shared_ptr<Saver> open_sqlite_saver(const std::string& path, const SqliteOptions& options) {
  return std::make_shared<checkpoint_internal::SqliteSaver>(path, options);
}

}  // namespace tollgate
