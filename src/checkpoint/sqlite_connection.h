// A thin RAII layer over the SQLite C API: a connection, prepared statements, transactions.
// Every failing call throws tollgate::Error: kUnavailable when the database is busy, full or
// unreadable (may succeed later), kInternal otherwise.
//
// Thread-safety: none; the owner serialises access (SqliteSaver holds a mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace tollgate::checkpoint_internal {

class SqliteStatement;

class SqliteConnection {
 public:
  explicit SqliteConnection(const std::string& path);
  ~SqliteConnection();
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  // Runs one or more statements without results.
  void exec(std::string_view sql);
  void set_busy_timeout(std::chrono::milliseconds timeout);
  sqlite3* handle() const { return db_; }

  // BEGIN (IMMEDIATE when `write`), COMMIT and ROLLBACK, each prepared once.
  void begin(bool write);
  void commit();
  void rollback() noexcept;
  // Throws the Error for result code `rc` of the operation `what`.
  [[noreturn]] void fail(int rc, std::string_view what) const;

 private:
  SqliteStatement& prepared(std::unique_ptr<SqliteStatement>& slot, std::string_view sql);

  sqlite3* db_ = nullptr;
  std::unique_ptr<SqliteStatement> begin_read_, begin_write_, commit_, rollback_;
};

// A prepared statement; reset() makes it reusable. Parameter and column indexes are 1-based
// and 0-based respectively, as in SQLite.
class SqliteStatement {
 public:
  SqliteStatement(SqliteConnection& connection, std::string_view sql);
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  SqliteStatement(const SqliteStatement&) = delete;

  SqliteStatement& bind(int index, std::string_view text);
  SqliteStatement& bind(int index, std::int64_t value);
  SqliteStatement& bind(int index, double value);
  SqliteStatement& bind_blob(int index, const std::vector<std::uint8_t>& blob);
  SqliteStatement& bind_null(int index);

  // Steps once: true when a row is available.
  bool step();
  // Steps to the end; returns the number of rows changed.
  int run();
  void reset();

  bool is_null(int column) const;
  std::string text(int column) const;
  std::int64_t integer(int column) const;
  // The column's bytes (valid until the next step or reset).
  std::pair<const std::uint8_t*, std::size_t> blob(int column) const;

 private:
  SqliteConnection* connection_;
  sqlite3_stmt* statement_ = nullptr;
};

// Resets a statement when leaving the scope, so it can be reused even after an exception.
class StatementUse {
 public:
  explicit StatementUse(SqliteStatement& statement) : statement_(statement) {}
  ~StatementUse() { statement_.reset(); }
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;
  SqliteStatement* operator->() { return &statement_; }
  SqliteStatement& operator*() { return statement_; }

 private:
  SqliteStatement& statement_;
};

// BEGIN (IMMEDIATE for writers) ... COMMIT; rolls back when destroyed uncommitted.
class SqliteTransaction {
 public:
  enum class Kind { kRead, kWrite };
  SqliteTransaction(SqliteConnection& connection, Kind kind);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  void commit();

 private:
  SqliteConnection& connection_;
  bool open_ = false;
};

}  // namespace tollgate::checkpoint_internal
