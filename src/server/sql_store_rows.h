// The rows of SqlStore's tables: a statement use with their JSON and optional columns, the
// column lists and the readers of each record. Internal to the SQL store's files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/store.h"
#include "server/thread_query.h"
#include "sql/connection.h"

namespace tollgate::server::sql_rows {

// A thread's state text in parts (schema 12 of sql_store.cpp): the first, of at most
// kFirstStatePart bytes, in the thread's row; each other of at most kStatePart bytes in
// server_thread_state_parts. Parts end on a character's first byte (PostgreSQL's text is
// UTF-8), so that a text that grew at its end keeps each earlier part as it was.
inline constexpr std::size_t kFirstStatePart = 8 * 1024;
inline constexpr std::size_t kStatePart = 32 * 1024;

struct StateParts {
  std::optional<std::string_view> first;  // nullopt: no state (NULL)
  std::vector<std::string_view> rest;     // parts 1, 2, ... (views into the split text)

  std::int64_t count() const { return static_cast<std::int64_t>(1 + rest.size()); }
};

// The parts of `text` (a view into it: it must outlive the parts).
StateParts split_state(std::string_view text);
inline StateParts state_parts_of(const std::optional<std::string>& text) {
  return text ? split_state(*text) : StateParts{};
}

// A JSON column's text: nullopt for null; text that is not UTF-8 (a tool's bytes) stored
// replaced, as every event is written (event_json).
std::optional<std::string> json_text(const Json& value);

// One use of a cached prepared statement (SqlStore::prepared_locked), with the JSON and
// optional-text columns of the store's tables; resets the statement when it goes out of scope.
class Statement {
 public:
  explicit Statement(sql::Statement& statement) : use_(statement), statement_(statement) {}

  Statement& bind(int index, const std::string& text) {
    statement_.bind(index, text);
    return *this;
  }
  // `text` outlives this Statement (which resets at its end): bound without a copy.
  Statement& bind_unowned(int index, std::string_view text) {
    statement_.bind_unowned(index, text);
    return *this;
  }
  Statement& bind(int index, std::int64_t value) {
    statement_.bind(index, value);
    return *this;
  }
  Statement& bind_json(int index, const Json& value) {
    if (value.is_null()) {
      statement_.bind_null(index);
      return *this;
    }
    return bind(index, value.dump());
  }
  // The first part of a state (state_values), NULL without one; the text outlives this.
  Statement& bind_first_part(int index, const StateParts& parts) {
    if (!parts.first) {
      statement_.bind_null(index);
      return *this;
    }
    return bind_unowned(index, *parts.first);
  }
  Statement& bind_optional(int index, const std::optional<std::string>& text) {
    if (!text) {
      statement_.bind_null(index);
      return *this;
    }
    return bind(index, *text);
  }
  // True while a row is available.
  bool step() { return statement_.step(); }
  // Returns the number of rows changed.
  int run() { return statement_.run(); }
  std::string text(int column) const { return statement_.text(column); }
  bool is_null(int column) const { return statement_.is_null(column); }
  std::optional<std::string> optional_text(int column) const {
    if (is_null(column)) return std::nullopt;
    return text(column);
  }
  Json json(int column) const {
    if (is_null(column)) return Json();
    return Json::parse(text(column));
  }
  std::int64_t integer(int column) const { return statement_.integer(column); }

 private:
  sql::StatementUse<sql::Statement> use_;
  sql::Statement& statement_;
};

inline AssistantRecord read_assistant(const Statement& s) {
  AssistantRecord a;
  a.assistant_id = s.text(0);
  a.graph_id = s.text(1);
  a.name = s.text(2);
  a.description = s.optional_text(3);
  a.config = s.json(4);
  a.context = s.json(5);
  a.metadata = s.json(6);
  a.version = static_cast<int>(s.integer(7));
  a.created_at = s.integer(8);
  a.updated_at = s.integer(9);
  return a;
}

// A thread row as read, its JSON columns still text (null: NULL): copied while the
// connection is held, parsed (read_thread) after it is given back.
struct ThreadRowTexts {
  std::string thread_id, status;
  std::int64_t created_at = 0, updated_at = 0;
  std::optional<std::string> metadata, config, values, interrupts, error;
};

inline ThreadRowTexts thread_row_texts(const Statement& s) {
  auto optional_text = [&s](int column) {
    return s.is_null(column) ? std::nullopt : std::optional<std::string>(s.text(column));
  };
  return ThreadRowTexts{s.text(0),        s.text(4),        s.integer(1),
                        s.integer(2),     optional_text(3), optional_text(5),
                        optional_text(6), optional_text(7), optional_text(8)};
}

inline ThreadRecord read_thread(const ThreadRowTexts& row) {
  auto json = [](const std::optional<std::string>& text) {
    return text ? Json::parse(*text) : Json();
  };
  ThreadRecord t;
  t.thread_id = row.thread_id;
  t.created_at = row.created_at;
  t.updated_at = row.updated_at;
  t.metadata = json(row.metadata);
  t.status = parse_thread_status(row.status, "server_threads.status");
  t.config = json(row.config);
  t.values = json(row.values);
  t.interrupts = json(row.interrupts);
  t.error = json(row.error);
  return t;
}

inline ThreadRecord read_thread(const Statement& s) {
  return read_thread(thread_row_texts(s));
}

inline RunRecord read_run(const Statement& s) {
  RunRecord r;
  r.run_id = s.text(0);
  r.thread_id = s.text(1);
  r.assistant_id = s.text(2);
  r.metadata = s.json(3);
  r.status = parse_run_status(s.text(4), "server_runs.status");
  r.kwargs = s.json(5);
  r.multitask_strategy = s.text(6);
  r.created_at = s.integer(7);
  r.updated_at = s.integer(8);
  r.attempts = static_cast<int>(s.integer(9));
  r.owner = s.text(10);
  r.not_before = s.integer(11);
  return r;
}

// A stored stream event: seq, event, data, event_id (the first four columns of both event
// tables), from column `first` on.
inline LogEntry log_entry_of(const Statement& s, int first = 0) {
  LogEntry e;
  e.seq = s.integer(first);
  e.event = s.text(first + 1);
  e.data = s.text(first + 2);
  e.id = s.text(first + 3);
  return e;
}

// The active runs: also the condition of index server_runs_active (schema 11), which holds
// them only. SQLite uses the index for a query that names this very text.
inline constexpr const char* kActive = "status IN ('pending', 'running')";

inline constexpr const char* kAssistantColumns =
    "assistant_id, graph_id, name, description, config, context, metadata, version, created_at, "
    "updated_at";
inline constexpr const char* kThreadColumns =
    "thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts, error";
// The columns of kThreadColumns as read in `dialect` (thread_row_texts): the status is busy while
// a run of the thread is pending or running (read_status), else the stored one; the state whole
// (thread_state_sql).
const std::string& thread_read_columns(sql::Dialect dialect);
// The same without the state (ServerStore::get_thread_head): values read as null.
inline const std::string kThreadHeadColumns =
    "thread_id, created_at, updated_at, metadata, read_status, config, NULL, interrupts, error";
inline constexpr const char* kRunColumns =
    "run_id, thread_id, assistant_id, metadata, status, kwargs, multitask_strategy, created_at, "
    "updated_at, attempts, owner, not_before";

// Whether `interrupts` (task id -> [Interrupt]) still lists one: the column pending_interrupts,
// as migration 4 computes it for older rows.
inline bool has_pending_interrupts(const Json& interrupts) {
  if (!interrupts.is_object()) return false;
  for (const auto& [task, list] : interrupts.items()) {
    if (list.is_array() && !list.empty()) return true;
  }
  return false;
}

inline std::string sql(const char* prefix, const char* columns, const char* suffix) {
  return std::string(prefix) + columns + suffix;
}

// "INSERT INTO table (columns) VALUES (?, ...) ON CONFLICT (key) DO UPDATE SET" every other
// column: insert or replace, in SQL both dialects speak; `rows` rows of placeholders.
std::string upsert_sql(const char* table, const char* columns, const char* key,
                       std::size_t rows = 1);

}  // namespace tollgate::server::sql_rows
