#include "sql/sqlite_connection.h"

#include <sqlite3.h>

#include <climits>
#include <utility>

#include "sql/sqlite_vfs.h"
#include "sql/sqlite_write_gate.h"
#include "tollgate/error.h"

namespace tollgate::sql {
namespace {

bool is_transient(int rc) {
  switch (rc & 0xFF) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PROTOCOL:
      return true;
    default:
      return false;
  }
}

const char* synchronous_pragma(SqliteSync sync) {
  switch (sync) {
    case SqliteSync::kNormal:
      return "PRAGMA synchronous = NORMAL";
    case SqliteSync::kFull:
      return "PRAGMA synchronous = FULL";
    case SqliteSync::kDefault:
      break;
  }
  return nullptr;
}

}  // namespace

SqliteConnection::SqliteConnection(const std::string& path, const SqliteFileOptions& options) {
  const int rc = sqlite3_open_v2(path.c_str(), &db_,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 tollgate_vfs_name());
  if (rc != SQLITE_OK) {
    std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error::Unavailable("sqlite: cannot open '" + path + "': " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
  const char* file = sqlite3_db_filename(db_, "main");
  write_gate_ = SqliteWriteGate::of_file(file != nullptr ? file : "");
  try {
    if (options.busy_timeout.count() > 0) set_busy_timeout(options.busy_timeout);
    if (options.wal) exec("PRAGMA journal_mode = WAL");
    if (const char* pragma = synchronous_pragma(options.synchronous)) exec(pragma);
  } catch (...) {
    sqlite3_close_v2(db_);
    throw;
  }
}

SqliteConnection::~SqliteConnection() {
  leave_write_gate();
  begin_read_.reset();
  begin_write_.reset();
  commit_.reset();
  rollback_.reset();
  sqlite3_close_v2(db_);
}

SqliteStatement& SqliteConnection::prepared(std::unique_ptr<SqliteStatement>& slot,
                                            std::string_view sql) {
  if (!slot) {
    slot = std::make_unique<SqliteStatement>(*this, sql);
    slot->controls_transaction_ = true;
  }
  return *slot;
}

std::unique_ptr<Statement> SqliteConnection::prepare(std::string_view sql) {
  return std::make_unique<SqliteStatement>(*this, sql);
}

void SqliteConnection::begin(TransactionKind kind) {
  if (kind == TransactionKind::kRead) {
    StatementUse use(prepared(begin_read_, "BEGIN"));
    use->run();
    return;
  }
  holds_write_gate_ = write_gate_ && write_gate_->enter(busy_timeout_);
  try {
    StatementUse use(prepared(begin_write_, "BEGIN IMMEDIATE"));
    use->run();
  } catch (...) {
    leave_write_gate();
    throw;
  }
}

void SqliteConnection::commit() {
  {
    StatementUse use(prepared(commit_, "COMMIT"));
    use->run();
  }
  // A failed commit keeps the turn: the transaction is still open until its rollback.
  leave_write_gate();
}

void SqliteConnection::rollback() noexcept {
  try {
    StatementUse use(prepared(rollback_, "ROLLBACK"));
    use->run();
  } catch (...) {
    // Nothing to roll back (SQLite may already have rolled back after an I/O error).
  }
  leave_write_gate();
}

void SqliteConnection::leave_write_gate() noexcept {
  if (!holds_write_gate_) return;
  holds_write_gate_ = false;
  write_gate_->leave();
}

void SqliteConnection::exec(std::string_view sql) {
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc, text);
}

void SqliteConnection::set_busy_timeout(std::chrono::milliseconds timeout) {
  busy_timeout_ = timeout;
  const auto ms = timeout.count() > INT_MAX ? INT_MAX : static_cast<int>(timeout.count());
  const int rc = sqlite3_busy_timeout(db_, ms);
  if (rc != SQLITE_OK) fail(rc, "busy_timeout");
}

void SqliteConnection::set_synchronous(SqliteSync synchronous) {
  if (const char* pragma = synchronous_pragma(synchronous)) exec(pragma);
}

std::int64_t SqliteConnection::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

void SqliteConnection::fail(int rc, std::string_view what) const {
  std::string message = "sqlite: " + std::string(what.substr(0, 80)) + ": " +
                        (db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
  if (is_transient(rc)) throw Error::Unavailable(message);
  throw Error::Internal(message);
}

SqliteStatement::SqliteStatement(SqliteConnection& connection, std::string_view sql)
    : connection_(&connection) {
  const int rc = sqlite3_prepare_v3(connection.handle(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &statement_, nullptr);
  if (rc != SQLITE_OK) connection.fail(rc, sql);
}

SqliteStatement::~SqliteStatement() {
  leave_write_gate();
  sqlite3_finalize(statement_);
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : connection_(other.connection_),
      statement_(std::exchange(other.statement_, nullptr)),
      controls_transaction_(other.controls_transaction_),
      held_write_gate_(std::exchange(other.held_write_gate_, nullptr)) {}

SqliteStatement& SqliteStatement::bind(int index, std::string_view text) {
  const int rc = sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()),
                                   SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) connection_->fail(rc, "bind");
  return *this;
}

SqliteStatement& SqliteStatement::bind_unowned(int index, std::string_view text) {
  const int rc = sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()),
                                   SQLITE_STATIC);
  if (rc != SQLITE_OK) connection_->fail(rc, "bind");
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(statement_, index, value);
  if (rc != SQLITE_OK) connection_->fail(rc, "bind");
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(statement_, index, value);
  if (rc != SQLITE_OK) connection_->fail(rc, "bind");
  return *this;
}

SqliteStatement& SqliteStatement::bind_blob(int index, std::span<const std::uint8_t> blob) {
  const int rc = sqlite3_bind_blob64(statement_, index, blob.data(), blob.size(), SQLITE_STATIC);
  if (rc != SQLITE_OK) connection_->fail(rc, "bind");
  return *this;
}

SqliteStatement& SqliteStatement::bind_null(int index) {
  const int rc = sqlite3_bind_null(statement_, index);
  if (rc != SQLITE_OK) connection_->fail(rc, "bind");
  return *this;
}

bool SqliteStatement::step() {
  SqliteWriteGate* gate = connection_->write_gate();
  if (gate != nullptr && held_write_gate_ == nullptr && !controls_transaction_ &&
      sqlite3_get_autocommit(connection_->handle()) != 0 && sqlite3_stmt_readonly(statement_) == 0 &&
      sqlite3_stmt_busy(statement_) == 0 && gate->enter(connection_->busy_timeout())) {
    held_write_gate_ = gate;
  }
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  leave_write_gate();
  if (rc == SQLITE_DONE) return false;
  connection_->fail(rc, sqlite3_sql(statement_));
}

int SqliteStatement::run() {
  while (step()) {
  }
  return sqlite3_changes(connection_->handle());
}

void SqliteStatement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
  leave_write_gate();
}

void SqliteStatement::leave_write_gate() noexcept {
  if (held_write_gate_ == nullptr) return;
  std::exchange(held_write_gate_, nullptr)->leave();
}

bool SqliteStatement::is_null(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

std::string SqliteStatement::text(int column) const {
  const unsigned char* data = sqlite3_column_text(statement_, column);
  const int size = sqlite3_column_bytes(statement_, column);
  return data == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(data), size);
}

std::int64_t SqliteStatement::integer(int column) const {
  return sqlite3_column_int64(statement_, column);
}

std::span<const std::uint8_t> SqliteStatement::blob(int column) const {
  const void* data = sqlite3_column_blob(statement_, column);
  const int size = sqlite3_column_bytes(statement_, column);
  return {static_cast<const std::uint8_t*>(data), static_cast<std::size_t>(size)};
}

}  // namespace tollgate::sql
