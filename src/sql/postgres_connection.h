// The PostgreSQL backend of the SQL layer: a thin RAII layer over libpq. Statements are
// prepared on the server (named, once per connection), take their parameters as text (blobs
// as binary) and return their results in binary form. A PostgresPipeline sends several
// statements in one round trip (libpq's pipeline mode).
//
// Errors: a lost connection, a server that is down or shutting down, a serialization failure
// or a deadlock throw Error(kUnavailable) ("postgres: connection to 127.0.0.1:5432/db lost:
// ..."); other failures Error(kInternal). A connection found broken is re-established on its
// next use outside a transaction (prepared statements are prepared again); inside a
// transaction the failure stands, since what the transaction did is gone.
//
// Thread-safety: none (see connection.h); the owner serialises access.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sql/connection.h"

struct pg_conn;
struct pg_result;

namespace tollgate::sql {

class PostgresStatement;

struct PostgresOptions {
  // Tables live in this schema (search_path; created by whoever migrates). Empty: the
  // server's default (public).
  std::string schema;
  // False: the session's commits return before their WAL is flushed (synchronous_commit =
  // off); true: the server's setting.
  bool synchronous_commit = true;
};

// `name` as a quoted SQL identifier ("a""b" for a"b).
std::string quote_identifier(std::string_view name);

// Who opens a libpq session; each has Tollgate's settings (application_name, a connect timeout)
// before the URL's own, which win.
enum class PostgresSessionKind {
  kStatements,  // a PostgresConnection: connected when open_postgres_session returns
  kListener,    // a PostgresListener: only started (PQconnectStartParams), so that the caller can
                // poll it and give up early; with TCP keepalives, since it idles for hours and
                // would not otherwise notice a peer that vanished without closing the connection
};
// Opens a session to `url` (postgres://user[:password]@host[:port]/database[?param=value...]);
// the caller checks its status and finishes it (PQfinish). Throws Error(kInvalidArgument) for a
// URL of another scheme.
pg_conn* open_postgres_session(const std::string& url, PostgresSessionKind kind);
// host:port/database of a session, for messages (never the password).
std::string postgres_where(const pg_conn* conn);
// A message of libpq or the server on one line, each run of blanks one space (null: empty).
std::string postgres_message_line(const char* message);

class PostgresConnection final : public Connection {
 public:
  // Connects to `url` (postgres://user[:password]@host[:port]/database[?param=value...], any
  // libpq connection URI). Throws Error(kInvalidArgument) for a URL of another scheme and
  // Error(kUnavailable) when the server cannot be reached.
  explicit PostgresConnection(const std::string& url, const PostgresOptions& options = {});
  ~PostgresConnection() override;
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  Dialect dialect() const override { return Dialect::kPostgres; }
  // Runs one or more statements (the simple query protocol).
  void exec(std::string_view sql) override;
  // A statement parsed anew at each execution (PostgresStatement::kOnce), for SQL run once
  // or rarely; hot statements are PostgresStatements of kind kNamed, kept by their owner.
  std::unique_ptr<Statement> prepare(std::string_view sql) override;
  // kRead: REPEATABLE READ, READ ONLY (one snapshot); kWrite: READ COMMITTED. BEGIN is not
  // sent here but with the transaction's first statement, in one round trip (a pipeline); a
  // connection found broken by that first send did nothing yet: it is re-established and both
  // are sent once more. A transaction that ran no statement sends nothing at all.
  void begin(TransactionKind kind) override;
  void commit() override;
  // `last` and COMMIT in one pipeline (with the BEGIN when nothing was sent yet).
  void commit_after(Statement& last) override;
  void rollback() noexcept override;

  bool in_transaction() const { return in_transaction_; }
  // False once the connection is known to be broken (until it is re-established).
  bool is_connected() const;
  // The server process serving this connection (pg_backend_pid()), e.g. for tests that
  // terminate it; 0 when not connected.
  int backend_pid() const;
  // host:port/database, for messages (never the password).
  const std::string& where() const { return where_; }

  // For PostgresStatement and PostgresPipeline.
  pg_conn* handle() const { return conn_; }
  // Re-establishes a broken connection (outside a transaction, or in one whose BEGIN is not
  // sent yet); throws Error(kUnavailable) when it stays broken.
  void ensure_connected();
  // The BEGIN statement of the transaction begun but not sent yet, which the caller sends now
  // before its own statement; null when none. give_back_begin() makes it pending again (its
  // send failed on a connection that broke while idle).
  PostgresStatement* take_pending_begin();
  void give_back_begin(PostgresStatement* begin);
  // Bumped on every reconnect: statements prepared under an older one are prepared again.
  std::uint64_t generation() const { return generation_; }
  std::string next_statement_name();
  // Throws the Error for a failed `result` (may be null) of the operation `what`; clears it.
  [[noreturn]] void fail(pg_result* result, std::string_view what);

 private:
  void connect();
  void after_connect();
  // Runs `sql` with the simple query protocol, as it is.
  void exec_now(const std::string& sql);

  std::string url_;
  PostgresOptions options_;
  std::string where_;
  pg_conn* conn_ = nullptr;
  std::uint64_t generation_ = 0;
  std::uint64_t statements_made_ = 0;
  bool in_transaction_ = false;
  std::unique_ptr<PostgresStatement> begin_read_, begin_write_, commit_;
  PostgresStatement* pending_begin_ = nullptr;  // begin_read_ or begin_write_, not sent yet
};

class PostgresStatement final : public Statement {
 public:
  enum Kind {
    kNamed,  // prepared on the server once per connection, then executed by name
    kOnce,   // sent with its text at each execution (nothing left on the server)
  };
  // `sql` uses PostgreSQL placeholders ($1, $2, ...).
  PostgresStatement(PostgresConnection& connection, std::string_view sql, Kind kind = kNamed);
  ~PostgresStatement() override;
  PostgresStatement(const PostgresStatement&) = delete;
  PostgresStatement& operator=(const PostgresStatement&) = delete;

  PostgresStatement& bind(int index, std::string_view text) override;
  PostgresStatement& bind(int index, std::int64_t value) override;
  PostgresStatement& bind(int index, double value) override;
  PostgresStatement& bind_blob(int index, std::span<const std::uint8_t> blob) override;
  PostgresStatement& bind_null(int index) override;

  // The first step executes the statement and fetches every row.
  bool step() override;
  int run() override;
  void reset() override;

  bool is_null(int column) const override;
  std::string text(int column) const override;
  // int2, int4, int8 or bool columns.
  std::int64_t integer(int column) const override;
  std::span<const std::uint8_t> blob(int column) const override;

 private:
  friend class PostgresPipeline;
  struct Parameter {
    std::string text;                    // text parameters
    std::span<const std::uint8_t> blob;  // binary ones (borrowed)
    bool binary = false;
    bool null = true;
  };
  Parameter& parameter(int index);
  // Prepares the statement on the server if this connection generation has not.
  void ensure_prepared();
  // The parameters as libpq wants them; valid until the next bind or reset.
  struct Wire {
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
  };
  Wire wire() const;
  void execute();
  // Sends `begin` and this statement in one pipeline.
  void execute_after(PostgresStatement& begin);
  void take_result(pg_result* result);

  PostgresConnection* connection_;
  std::string sql_;
  std::string name_;  // empty for kOnce
  std::uint64_t prepared_generation_ = 0;
  bool prepared_ = false;
  std::vector<Parameter> parameters_;
  pg_result* result_ = nullptr;
  int row_ = -1;
  int rows_ = 0;
};

// Several executions sent in one round trip. Outside an explicit transaction they run as one
// implicit transaction: all of them or none. add() sends a statement with its current
// parameters (and resets it); finish() waits for the results.
class PostgresPipeline {
 public:
  explicit PostgresPipeline(PostgresConnection& connection);
  // Leaves pipeline mode; results not waited for are discarded.
  ~PostgresPipeline();
  PostgresPipeline(const PostgresPipeline&) = delete;
  PostgresPipeline& operator=(const PostgresPipeline&) = delete;

  // keep_result: the statement keeps its parameters and, after finish(), its result rows
  // (step() reads them).
  void add(PostgresStatement& statement, bool keep_result = false);
  // The rows changed by each statement added, in order. Throws the first error.
  std::vector<int> finish();

 private:
  struct Pending {
    PostgresStatement* statement;
    bool is_prepare;  // the result of preparing the statement, before its execution's
    bool keep_result = false;
    bool counted = true;  // false: the pending BEGIN sent ahead of the caller's statements
  };
  void discard();

  PostgresConnection& connection_;
  std::vector<Pending> pending_;
  bool active_ = false;
};

}  // namespace tollgate::sql
