// The SQL layer's concepts, the same for every database backend: a connection, its prepared
// statements, transactions. SQLite (sqlite_connection.h) and PostgreSQL
// (postgres_connection.h) implement them, each with its own SQL dialect (dialect()).
//
// Every failing call throws tollgate::Error: kUnavailable when the database is busy, full or
// unreachable (may succeed later), kInternal otherwise.
//
// Thread-safety: none; a connection and its statements are used by one thread at a time (the
// owner serialises access, e.g. with a mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace tollgate::sql {

// Which SQL a connection speaks; callers holding text for several backends pick by it.
enum class Dialect { kSqlite, kPostgres };

// A prepared statement; reset() makes it reusable. Parameter indexes are 1-based, column
// indexes 0-based. Placeholders are the dialect's: ? (or ?N) for SQLite, $N for PostgreSQL.
class Statement {
 public:
  virtual ~Statement() = default;

  virtual Statement& bind(int index, std::string_view text) = 0;
  virtual Statement& bind(int index, std::int64_t value) = 0;
  virtual Statement& bind(int index, double value) = 0;
  // The bytes must stay valid until the statement is stepped to its end or reset.
  virtual Statement& bind_blob(int index, std::span<const std::uint8_t> blob) = 0;
  // bind() of text that stays valid until the statement is stepped to its end or reset, which
  // a backend that can need not copy (a long text: a conversation's values).
  virtual Statement& bind_unowned(int index, std::string_view text) { return bind(index, text); }
  virtual Statement& bind_null(int index) = 0;

  // Steps once: true when a row is available.
  virtual bool step() = 0;
  // Steps to the end; returns the number of rows changed.
  virtual int run() = 0;
  virtual void reset() = 0;

  virtual bool is_null(int column) const = 0;
  virtual std::string text(int column) const = 0;
  virtual std::int64_t integer(int column) const = 0;
  // The column's bytes (valid until the next step or reset).
  virtual std::span<const std::uint8_t> blob(int column) const = 0;
};

enum class TransactionKind {
  kRead,   // a consistent snapshot
  kWrite,  // takes the write lock at once (so a read-then-write never deadlocks)
};

class Connection {
 public:
  virtual ~Connection() = default;

  virtual Dialect dialect() const = 0;
  // Runs one or more statements without results.
  virtual void exec(std::string_view sql) = 0;
  virtual std::unique_ptr<Statement> prepare(std::string_view sql) = 0;

  virtual void begin(TransactionKind kind) = 0;
  virtual void commit() = 0;
  // Runs `last`, a statement whose result is not read, as the transaction's last one, then
  // commits: a backend that can sends both in one round trip (PostgreSQL). `last` is reset,
  // also when it fails. On failure the transaction is still to be rolled back.
  virtual void commit_after(Statement& last) {
    try {
      last.run();
    } catch (...) {
      last.reset();
      throw;
    }
    last.reset();
    commit();
  }
  // Never fails: there may be nothing left to roll back (e.g. after an I/O error).
  virtual void rollback() noexcept = 0;
};

// BEGIN ... COMMIT; rolls back when destroyed uncommitted (an exception left the scope).
class Transaction {
 public:
  Transaction(Connection& connection, TransactionKind kind);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();
  // Connection::commit_after.
  void commit_after(Statement& last);

 private:
  Connection& connection_;
  bool open_ = false;
};

// Resets a statement when leaving the scope, so a cached statement can be reused even after
// an exception. S is Statement or a backend's own (final) statement class.
template <class S>
class StatementUse {
 public:
  explicit StatementUse(S& statement) : statement_(statement) {}
  ~StatementUse() { statement_.reset(); }
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;
  S* operator->() { return &statement_; }
  S& operator*() { return statement_; }

 private:
  S& statement_;
};

}  // namespace tollgate::sql
