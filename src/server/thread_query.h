// The SQL of a thread search (ServerStore::search_threads / count_threads): a WHERE clause over
// server_threads with the values it binds, and an ORDER BY, in portable text (placeholders ?,
// sql/statement_cache.h). Shared by the SQL stores; the JSON tests are the dialect's (SQLite:
// json_each, json_extract, json_type; PostgreSQL: jsonb operators over the text columns).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "server/store.h"
#include "sql/connection.h"

namespace tollgate::server {

// The status of a thread as read: busy while one of its runs is pending or running, else the
// stored one. Used in the SELECT of every thread read, so that search, sort and get agree.
inline constexpr const char* kThreadStatusSql =
    "CASE WHEN EXISTS (SELECT 1 FROM server_runs r WHERE r.thread_id = server_threads.thread_id "
    "AND r.status IN ('pending', 'running')) THEN 'busy' ELSE server_threads.status END";

using SqlValue = std::variant<std::string, std::int64_t, double>;

struct ThreadFilterSql {
  std::string where;            // "" when the filter selects every thread, else "WHERE ..."
  std::vector<SqlValue> args;   // bound to the clause's ? in order, from index 1
};

ThreadFilterSql thread_filter_sql(const ThreadFilter& filter,
                                  sql::Dialect dialect = sql::Dialect::kSqlite);
// "ORDER BY ... LIMIT ? OFFSET ?" is not included: the page's limit and offset are bound by the
// caller after the filter's arguments.
std::string thread_order_sql(const ThreadPage& page);

}  // namespace tollgate::server
