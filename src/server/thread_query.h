// The SQL of a thread search (ServerStore::search_threads / count_threads) over server_threads:
// a WHERE clause with the values it binds, the ORDER BY of a page, and the SELECT of one page,
// in portable text (placeholders ?, sql/statement_cache.h). Shared by the SQL stores. The
// clauses use the table's derived columns, which a store keeps true in the transaction of every
// write that changes them (schema 4 of sql_store.cpp):
//   read_status      the status as read: 'busy' while one of the thread's runs is pending or
//                    running (active_runs > 0), else the stored status;
//   awaiting_review  1 when a reviewer sees the thread: read_status 'interrupted', or
//                    interrupts still listed (pending_interrupts);
// and the dialect's JSON tests for metadata and the state, thread_state_sql (SQLite: json_each,
// json_extract, json_type; PostgreSQL: jsonb operators over the text columns).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "server/store.h"
#include "sql/connection.h"

namespace tollgate::server {

using SqlValue = std::variant<std::string, std::int64_t, double>;

// A thread's state as one text, in a query over server_threads in `dialect`: its first part
// (state_values) followed by the rest (server_thread_state_parts, schema 12 of sql_store.cpp)
// in order; null when it has none.
const std::string& thread_state_sql(sql::Dialect dialect);

struct ThreadFilterSql {
  std::string where;            // "" when the filter selects every thread, else "WHERE ..."
  std::vector<SqlValue> args;   // bound to the clause's ? in order, from index 1
};

// The WHERE clause of `filter` (a count).
ThreadFilterSql thread_filter_sql(const ThreadFilter& filter,
                                  sql::Dialect dialect = sql::Dialect::kSqlite);
// "ORDER BY ..." of the page, without its LIMIT and OFFSET.
std::string thread_order_sql(const ThreadPage& page);

// The SELECT of `columns` for one page, with every argument (the page's limit and offset
// included). A user who is also a reviewer sees two sets of threads (their own, and those
// waiting for a review); an OR of the two cannot follow one index in the page's order, so the
// page is taken from the first offset + limit rows of each set, each read in order from its own
// index, instead of sorting every visible thread.
struct ThreadSearchSql {
  std::string text;
  std::vector<SqlValue> args;  // bound to the statement's ? in order, from index 1
};
ThreadSearchSql thread_search_sql(const ThreadFilter& filter, const ThreadPage& page,
                                  const std::string& columns,
                                  sql::Dialect dialect = sql::Dialect::kSqlite);

}  // namespace tollgate::server
