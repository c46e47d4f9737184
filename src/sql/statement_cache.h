// SQL text written once for every backend, and the prepared statements of a component that
// keeps its tables through a Connection (the server's stores, the audit log).
//
// Portable text uses SQLite's placeholders, ? (numbered in order) and ?N; for PostgreSQL they
// become $1, $2, ... ($N). Everything else in the text must be SQL both dialects accept; the
// few clauses that differ are chosen by the caller with Connection::dialect().
//
// Thread-safety: none; the owner serialises access (as for the connection).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "sql/connection.h"

namespace tollgate::sql {

// `portable` with the placeholders of `dialect`.
std::string dialect_text(Dialect dialect, std::string_view portable);

// A statement of portable text, parsed once per execution (SQL whose text varies).
std::unique_ptr<Statement> prepare_once(Connection& connection, std::string_view portable);

// The hot statements of one connection: each text is prepared once (on PostgreSQL, a named
// server-side statement) and kept while the cache lives. Destroy the cache before the
// connection.
class StatementCache {
 public:
  explicit StatementCache(Connection& connection) : connection_(connection) {}
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  // The statement for the portable text `portable`, ready to bind (reset by its last user).
  Statement& get(std::string_view portable);
  // The same, reset when the returned guard leaves its scope (also by an exception).
  StatementUse<Statement> use(std::string_view portable) {
    return StatementUse<Statement>(get(portable));
  }
  Connection& connection() { return connection_; }

 private:
  Connection& connection_;
  std::map<std::string, std::unique_ptr<Statement>, std::less<>> statements_;
};

}  // namespace tollgate::sql
