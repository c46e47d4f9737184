// The SQLite backend of the SQL layer: a thin RAII layer over the SQLite C API. A file is
// opened through Tollgate's VFS (sqlite_vfs.h), so that tests can make its I/O fail.
//
// The classes are final: code holding a SqliteConnection or SqliteStatement calls them
// directly, without a virtual dispatch, on the hot paths of the savers and stores.
//
// Thread-safety: none (see connection.h); the owner serialises access.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sql/connection.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tollgate::sql {

class SqliteStatement;
class SqliteWriteGate;

enum class SqliteSync {
  kDefault,  // the build's default (FULL)
  kNormal,   // WAL: durable against process crashes, not against power loss
  kFull,     // also durable against power loss: an fsync per commit
};

struct SqliteFileOptions {
  // How long a call waits for another connection (or process) holding the lock; 0: fail at once.
  std::chrono::milliseconds busy_timeout{0};
  bool wal = false;  // journal_mode = WAL
  SqliteSync synchronous = SqliteSync::kDefault;
};

class SqliteConnection final : public Connection {
 public:
  // Opens (creating when missing) the file. Throws Error(kUnavailable) when it cannot.
  explicit SqliteConnection(const std::string& path, const SqliteFileOptions& options = {});
  ~SqliteConnection() override;
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  Dialect dialect() const override { return Dialect::kSqlite; }
  void exec(std::string_view sql) override;
  std::unique_ptr<Statement> prepare(std::string_view sql) override;
  // BEGIN (IMMEDIATE for writers), COMMIT and ROLLBACK, each prepared once. A write transaction
  // first takes its turn among this process's writers of the file (sqlite_write_gate.h).
  void begin(TransactionKind kind) override;
  void commit() override;
  void rollback() noexcept override;

  void set_busy_timeout(std::chrono::milliseconds timeout);
  // PRAGMA synchronous; outside a transaction only (SQLite refuses it inside one).
  void set_synchronous(SqliteSync synchronous);
  std::chrono::milliseconds busy_timeout() const { return busy_timeout_; }
  // The turn-taking of this process's writers of the file; null for a database without one.
  SqliteWriteGate* write_gate() const { return write_gate_.get(); }
  std::int64_t last_insert_rowid() const;
  sqlite3* handle() const { return db_; }
  // Throws the Error for result code `rc` of the operation `what`.
  [[noreturn]] void fail(int rc, std::string_view what) const;

 private:
  SqliteStatement& prepared(std::unique_ptr<SqliteStatement>& slot, std::string_view sql);
  void leave_write_gate() noexcept;

  sqlite3* db_ = nullptr;
  std::shared_ptr<SqliteWriteGate> write_gate_;  // null for a database without a file
  bool holds_write_gate_ = false;
  std::chrono::milliseconds busy_timeout_{0};
  std::unique_ptr<SqliteStatement> begin_read_, begin_write_, commit_, rollback_;
};

class SqliteStatement final : public Statement {
 public:
  SqliteStatement(SqliteConnection& connection, std::string_view sql);
  ~SqliteStatement() override;
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  SqliteStatement(const SqliteStatement&) = delete;

  SqliteStatement& bind(int index, std::string_view text) override;
  SqliteStatement& bind(int index, std::int64_t value) override;
  SqliteStatement& bind(int index, double value) override;
  SqliteStatement& bind_blob(int index, std::span<const std::uint8_t> blob) override;
  SqliteStatement& bind_unowned(int index, std::string_view text) override;
  SqliteStatement& bind_null(int index) override;

  // A write outside a transaction (SQLite's autocommit) takes the write gate's turn for its
  // statement (sqlite_write_gate.h), from its first step until it is done or reset.
  bool step() override;
  int run() override;
  void reset() override;

  bool is_null(int column) const override;
  std::string text(int column) const override;
  std::int64_t integer(int column) const override;
  std::span<const std::uint8_t> blob(int column) const override;

 private:
  friend class SqliteConnection;  // marks its BEGIN, COMMIT and ROLLBACK
  void leave_write_gate() noexcept;

  SqliteConnection* connection_;
  sqlite3_stmt* statement_ = nullptr;
  bool controls_transaction_ = false;  // BEGIN/COMMIT/ROLLBACK: the connection gates those
  SqliteWriteGate* held_write_gate_ = nullptr;  // set while an autocommit write runs
};

}  // namespace tollgate::sql
