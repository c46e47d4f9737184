#include "sql/postgres_connection.h"

#include <libpq-fe.h>

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "tollgate/error.h"

namespace tollgate::sql {
namespace {

// PostgreSQL type oids (pg_type.dat) of the integer columns integer() reads.
constexpr Oid kBoolOid = 16;
constexpr Oid kInt8Oid = 20;
constexpr Oid kInt2Oid = 21;
constexpr Oid kInt4Oid = 23;

constexpr const char* kBeginRead = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
constexpr const char* kBeginWrite = "BEGIN";

// SQLSTATEs after which the same call may succeed later: connection exceptions (class 08),
// the server shutting down or starting (57P01-57P03), too many connections or no resources
// (class 53), serialization failures and deadlocks (40001, 40P01).
bool is_transient(std::string_view sqlstate) {
  return sqlstate.starts_with("08") || sqlstate.starts_with("53") || sqlstate == "57P01" ||
         sqlstate == "57P02" || sqlstate == "57P03" || sqlstate == "40001" || sqlstate == "40P01";
}

bool is_postgres_url(const std::string& url) {
  return url.starts_with("postgres://") || url.starts_with("postgresql://");
}

std::int64_t read_big_endian(const char* data, int size) {
  std::uint64_t value = 0;
  for (int i = 0; i < size; ++i) value = (value << 8) | static_cast<unsigned char>(data[i]);
  if (size < 8 && size > 0 && (static_cast<unsigned char>(data[0]) & 0x80) != 0) {
    value |= ~std::uint64_t{0} << (8 * size);  // sign-extend int2 and int4
  }
  return static_cast<std::int64_t>(value);
}

}  // namespace

std::string quote_identifier(std::string_view name) {
  std::string quoted = "\"";
  for (char c : name) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  quoted += '"';
  return quoted;
}

pg_conn* open_postgres_session(const std::string& url, PostgresSessionKind kind) {
  if (!is_postgres_url(url)) {
    throw Error::InvalidArgument(
        "postgres: the URL must start with postgres:// or "
        "postgresql://, not '" +
        url.substr(0, url.find(':')) + "'");
  }
  const bool listener = kind == PostgresSessionKind::kListener;
  // Ours first: a value the URL gives for the same keyword comes later and wins. An empty value
  // is libpq's default. Keepalives: a vanished peer is noticed after about a minute.
  const char* keywords[] = {"connect_timeout",
                            "application_name",
                            "keepalives_idle",
                            "keepalives_interval",
                            "keepalives_count",
                            "dbname",
                            nullptr};
  const char* values[] = {"10",
                          listener ? "tollgate listener" : "tollgate",
                          listener ? "30" : "",
                          listener ? "10" : "",
                          listener ? "3" : "",
                          url.c_str(),
                          nullptr};
  pg_conn* conn = listener ? PQconnectStartParams(keywords, values, /*expand_dbname=*/1)
                           : PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (conn == nullptr) throw Error::Unavailable("postgres: out of memory connecting");
  return conn;
}

std::string postgres_where(const pg_conn* conn) {
  const char* host = PQhost(conn);
  const char* port = PQport(conn);
  const char* db = PQdb(conn);
  return std::string(host ? host : "?") + ":" + (port ? port : "?") + "/" + (db ? db : "?");
}

std::string postgres_message_line(const char* text) {
  // libpq indents continuation lines with a tab ("failed: ...\n\tIs the server running").
  std::string line;
  for (const char* c = text != nullptr ? text : ""; *c != '\0'; ++c) {
    const bool space = *c == ' ' || *c == '\n' || *c == '\t';
    if (!space) {
      line += *c;
    } else if (!line.empty() && line.back() != ' ') {
      line += ' ';
    }
  }
  if (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

PostgresConnection::PostgresConnection(const std::string& url, const PostgresOptions& options)
    : url_(url), options_(options) {
  connect();
}

PostgresConnection::~PostgresConnection() {
  begin_read_.reset();
  begin_write_.reset();
  commit_.reset();
  PQfinish(conn_);
}

void PostgresConnection::connect() {
  conn_ = open_postgres_session(url_, PostgresSessionKind::kStatements);
  where_ = postgres_where(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    const std::string message = postgres_message_line(PQerrorMessage(conn_));
    PQfinish(conn_);
    conn_ = nullptr;
    throw Error::Unavailable("postgres: cannot connect to " + where_ + ": " + message);
  }
  after_connect();
}

void PostgresConnection::after_connect() {
  ++generation_;
  exec_now("SET client_min_messages = warning");
  if (!options_.synchronous_commit) exec_now("SET synchronous_commit = off");
  if (!options_.schema.empty()) {
    exec_now("SET search_path TO " + quote_identifier(options_.schema));
  }
  // The large values this session stores (a thread's stream events and state, checkpoints) are
  // compressed by LZ4 where the server has it (PostgreSQL 14 and later built with lz4, as the
  // distributions' packages are): about the size of the default pglz's, for a fraction of its
  // CPU. A server without it refuses the setting, and the session keeps pglz.
  PQclear(PQexec(conn_, "SET default_toast_compression = lz4"));
}

void PostgresConnection::ensure_connected() {
  if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK) return;
  if (in_transaction_ && pending_begin_ == nullptr) {
    throw Error::Unavailable("postgres: connection to " + where_ +
                             " lost during a transaction; it was rolled back");
  }
  if (conn_ == nullptr) {
    connect();
    return;
  }
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    throw Error::Unavailable("postgres: cannot reconnect to " + where_ + ": " +
                             postgres_message_line(PQerrorMessage(conn_)));
  }
  after_connect();
}

std::string PostgresConnection::next_statement_name() {
  return "tollgate_" + std::to_string(++statements_made_);
}

void PostgresConnection::fail(pg_result* result, std::string_view what) {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = state != nullptr ? state : "";
  std::string message =
      result != nullptr ? postgres_message_line(PQresultErrorMessage(result)) : "";
  if (message.empty()) message = postgres_message_line(PQerrorMessage(conn_));
  PQclear(result);
  const bool lost = PQstatus(conn_) != CONNECTION_OK;
  if (lost) in_transaction_ = false;  // the server rolled it back with the session
  if (lost || is_transient(sqlstate)) {
    throw Error::Unavailable(
        "postgres: " +
        std::string(lost ? "connection to " + where_ + " lost" : std::string(what.substr(0, 80))) +
        ": " + message);
  }
  throw Error::Internal("postgres: " + std::string(what.substr(0, 80)) + ": " + message +
                        (sqlstate.empty() ? "" : " (SQLSTATE " + sqlstate + ")"));
}

void PostgresConnection::exec(std::string_view sql) {
  ensure_connected();
  PostgresStatement* begin = take_pending_begin();
  if (begin == nullptr) {
    exec_now(std::string(sql));
    return;
  }
  // BEGIN and `sql` in one simple query: one round trip.
  const std::string text =
      std::string(begin == begin_read_.get() ? kBeginRead : kBeginWrite) + "; " + std::string(sql);
  try {
    exec_now(text);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kUnavailable || is_connected()) throw;
    give_back_begin(begin);  // a connection broken while idle: nothing was done
    ensure_connected();
    take_pending_begin();
    exec_now(text);
  }
}

void PostgresConnection::exec_now(const std::string& sql) {
  PGresult* result = PQexec(conn_, sql.c_str());
  const ExecStatusType status = PQresultStatus(result);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(result, sql);
  PQclear(result);
}

std::unique_ptr<Statement> PostgresConnection::prepare(std::string_view sql) {
  return std::make_unique<PostgresStatement>(*this, sql, PostgresStatement::kOnce);
}

bool PostgresConnection::is_connected() const {
  return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK;
}

void PostgresConnection::begin(TransactionKind kind) {
  assert(!in_transaction_);
  std::unique_ptr<PostgresStatement>& slot =
      kind == TransactionKind::kRead ? begin_read_ : begin_write_;
  if (!slot) {
    slot = std::make_unique<PostgresStatement>(
        *this, kind == TransactionKind::kRead ? kBeginRead : kBeginWrite);
  }
  pending_begin_ = slot.get();  // sent with the first statement
  in_transaction_ = true;
}

PostgresStatement* PostgresConnection::take_pending_begin() {
  PostgresStatement* begin = pending_begin_;
  pending_begin_ = nullptr;
  return begin;
}

void PostgresConnection::give_back_begin(PostgresStatement* begin) {
  pending_begin_ = begin;
  in_transaction_ = true;
}

void PostgresConnection::commit() {
  assert(in_transaction_);
  if (pending_begin_ != nullptr) {
    // Nothing was sent: nothing to commit.
    pending_begin_ = nullptr;
    in_transaction_ = false;
    return;
  }
  if (!commit_) commit_ = std::make_unique<PostgresStatement>(*this, "COMMIT");
  try {
    StatementUse use(*commit_);
    use->run();
  } catch (...) {
    in_transaction_ = false;
    throw;
  }
  in_transaction_ = false;
}

void PostgresConnection::commit_after(Statement& last) {
  assert(in_transaction_);
  if (!commit_) commit_ = std::make_unique<PostgresStatement>(*this, "COMMIT");
  // Reset also when the pipeline cannot be sent (a connection found broken).
  StatementUse statement(static_cast<PostgresStatement&>(last));
  // Failed, the transaction may still be open (a statement before the COMMIT failed and the
  // COMMIT was skipped): it stays to be rolled back.
  PostgresPipeline pipeline(*this);  // the BEGIN first, when nothing was sent yet
  pipeline.add(*statement);
  pipeline.add(*commit_);
  pipeline.finish();
  in_transaction_ = false;
}

void PostgresConnection::rollback() noexcept {
  if (!in_transaction_) return;
  in_transaction_ = false;
  if (take_pending_begin() != nullptr) return;  // nothing was sent
  if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) return;
  PQclear(PQexec(conn_, "ROLLBACK"));
}

int PostgresConnection::backend_pid() const {
  return conn_ != nullptr ? PQbackendPID(conn_) : 0;
}

PostgresStatement::PostgresStatement(PostgresConnection& connection, std::string_view sql,
                                     Kind kind)
    : connection_(&connection),
      sql_(sql),
      name_(kind == kNamed ? connection.next_statement_name() : std::string()) {}

PostgresStatement::~PostgresStatement() {
  PQclear(result_);
}

PostgresStatement::Parameter& PostgresStatement::parameter(int index) {
  assert(index >= 1);
  if (parameters_.size() < static_cast<std::size_t>(index)) parameters_.resize(index);
  return parameters_[static_cast<std::size_t>(index - 1)];
}

PostgresStatement& PostgresStatement::bind(int index, std::string_view text) {
  Parameter& p = parameter(index);
  p.text.assign(text);
  p.binary = false;
  p.null = false;
  return *this;
}

PostgresStatement& PostgresStatement::bind(int index, std::int64_t value) {
  return bind(index, std::string_view(std::to_string(value)));
}

PostgresStatement& PostgresStatement::bind(int index, double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return bind(index, std::string_view(text));
}

PostgresStatement& PostgresStatement::bind_blob(int index, std::span<const std::uint8_t> blob) {
  Parameter& p = parameter(index);
  p.blob = blob;
  p.binary = true;
  p.null = false;
  return *this;
}

PostgresStatement& PostgresStatement::bind_null(int index) {
  Parameter& p = parameter(index);
  p.null = true;
  return *this;
}

void PostgresStatement::ensure_prepared() {
  connection_->ensure_connected();
  if (name_.empty()) return;
  if (prepared_ && prepared_generation_ == connection_->generation()) return;
  PGresult* result = PQprepare(connection_->handle(), name_.c_str(), sql_.c_str(), 0, nullptr);
  if (PQresultStatus(result) != PGRES_COMMAND_OK) connection_->fail(result, sql_);
  PQclear(result);
  prepared_ = true;
  prepared_generation_ = connection_->generation();
}

PostgresStatement::Wire PostgresStatement::wire() const {
  Wire wire;
  wire.values.reserve(parameters_.size());
  wire.lengths.reserve(parameters_.size());
  wire.formats.reserve(parameters_.size());
  for (const Parameter& p : parameters_) {
    if (p.null) {
      wire.values.push_back(nullptr);
      wire.lengths.push_back(0);
      wire.formats.push_back(0);
    } else if (p.binary) {
      // libpq needs a non-null pointer for an empty binary value.
      static const char kEmpty = 0;
      wire.values.push_back(p.blob.empty() ? &kEmpty
                                           : reinterpret_cast<const char*>(p.blob.data()));
      wire.lengths.push_back(static_cast<int>(p.blob.size()));
      wire.formats.push_back(1);
    } else {
      wire.values.push_back(p.text.c_str());
      wire.lengths.push_back(static_cast<int>(p.text.size()));
      wire.formats.push_back(0);
    }
  }
  return wire;
}

void PostgresStatement::take_result(pg_result* result) {
  PQclear(result_);
  result_ = result;
  rows_ = PQntuples(result);
  row_ = -1;
}

void PostgresStatement::execute() {
  connection_->ensure_connected();  // before the BEGIN is taken: may still reconnect
  if (PostgresStatement* begin = connection_->take_pending_begin()) {
    try {
      execute_after(*begin);
    } catch (const Error& e) {
      // The transaction's first statement: nothing was done. A connection that broke while
      // idle is re-established and both are sent once more.
      if (e.code() != ErrorCode::kUnavailable || connection_->is_connected()) throw;
      connection_->give_back_begin(begin);
      connection_->ensure_connected();
      execute_after(*connection_->take_pending_begin());
    }
    return;
  }
  ensure_prepared();
  const Wire w = wire();
  PGresult* result =
      name_.empty()
          ? PQexecParams(connection_->handle(), sql_.c_str(), static_cast<int>(w.values.size()),
                         nullptr, w.values.data(), w.lengths.data(), w.formats.data(),
                         /*resultFormat=*/1)
          : PQexecPrepared(connection_->handle(), name_.c_str(), static_cast<int>(w.values.size()),
                           w.values.data(), w.lengths.data(), w.formats.data(), /*resultFormat=*/1);
  const ExecStatusType status = PQresultStatus(result);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) connection_->fail(result, sql_);
  take_result(result);
}

void PostgresStatement::execute_after(PostgresStatement& begin) {
  PostgresPipeline pipeline(*connection_);
  pipeline.add(begin);
  pipeline.add(*this, /*keep_result=*/true);
  pipeline.finish();
}

bool PostgresStatement::step() {
  if (result_ == nullptr) execute();
  if (row_ < rows_) ++row_;
  return row_ < rows_;
}

int PostgresStatement::run() {
  if (result_ == nullptr) execute();
  row_ = rows_;
  const char* changed = PQcmdTuples(result_);
  return changed != nullptr && *changed != '\0' ? std::atoi(changed) : 0;
}

void PostgresStatement::reset() {
  PQclear(result_);
  result_ = nullptr;
  row_ = -1;
  rows_ = 0;
  parameters_.clear();
}

bool PostgresStatement::is_null(int column) const {
  assert(result_ != nullptr && row_ >= 0 && row_ < rows_);
  return PQgetisnull(result_, row_, column) != 0;
}

std::string PostgresStatement::text(int column) const {
  assert(result_ != nullptr && row_ >= 0 && row_ < rows_);
  return std::string(PQgetvalue(result_, row_, column),
                     static_cast<std::size_t>(PQgetlength(result_, row_, column)));
}

std::int64_t PostgresStatement::integer(int column) const {
  assert(result_ != nullptr && row_ >= 0 && row_ < rows_);
  if (PQgetisnull(result_, row_, column) != 0) return 0;
  const Oid type = PQftype(result_, column);
  assert(type == kInt8Oid || type == kInt4Oid || type == kInt2Oid || type == kBoolOid);
  (void)type;
  return read_big_endian(PQgetvalue(result_, row_, column), PQgetlength(result_, row_, column));
}

std::span<const std::uint8_t> PostgresStatement::blob(int column) const {
  assert(result_ != nullptr && row_ >= 0 && row_ < rows_);
  return {reinterpret_cast<const std::uint8_t*>(PQgetvalue(result_, row_, column)),
          static_cast<std::size_t>(PQgetlength(result_, row_, column))};
}

PostgresPipeline::PostgresPipeline(PostgresConnection& connection) : connection_(connection) {
  connection_.ensure_connected();
  if (PQenterPipelineMode(connection_.handle()) != 1) connection_.fail(nullptr, "pipeline mode");
  active_ = true;
  // A transaction begun but not sent yet: its BEGIN goes first.
  if (PostgresStatement* begin = connection_.take_pending_begin()) {
    add(*begin);
    pending_.back().counted = false;
  }
}

PostgresPipeline::~PostgresPipeline() {
  if (active_) discard();
}

void PostgresPipeline::add(PostgresStatement& statement, bool keep_result) {
  assert(active_);
  pg_conn* conn = connection_.handle();
  const PostgresStatement::Wire w = statement.wire();
  if (statement.name_.empty()) {
    if (PQsendQueryParams(conn, statement.sql_.c_str(), static_cast<int>(w.values.size()), nullptr,
                          w.values.data(), w.lengths.data(), w.formats.data(),
                          /*resultFormat=*/1) != 1) {
      connection_.fail(nullptr, statement.sql_);
    }
    pending_.push_back({&statement, false, keep_result});
    if (!keep_result) statement.reset();
    return;
  }
  if (!statement.prepared_ || statement.prepared_generation_ != connection_.generation()) {
    if (PQsendPrepare(conn, statement.name_.c_str(), statement.sql_.c_str(), 0, nullptr) != 1) {
      connection_.fail(nullptr, statement.sql_);
    }
    pending_.push_back({&statement, true});
    statement.prepared_ = true;
    statement.prepared_generation_ = connection_.generation();
  }
  if (PQsendQueryPrepared(conn, statement.name_.c_str(), static_cast<int>(w.values.size()),
                          w.values.data(), w.lengths.data(), w.formats.data(),
                          /*resultFormat=*/1) != 1) {
    connection_.fail(nullptr, statement.sql_);
  }
  pending_.push_back({&statement, false, keep_result});
  if (!keep_result) statement.reset();
}

std::vector<int> PostgresPipeline::finish() {
  assert(active_);
  pg_conn* conn = connection_.handle();
  if (PQpipelineSync(conn) != 1) {
    pending_.clear();
    active_ = false;
    connection_.fail(nullptr, "pipeline sync");
  }
  std::vector<int> changed;
  pg_result* error = nullptr;
  std::string error_sql;
  for (const Pending& pending : pending_) {
    pg_result* result = PQgetResult(conn);
    if (result == nullptr) {  // the connection broke
      if (error == nullptr) error_sql = pending.statement->sql_;
      break;
    }
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_FATAL_ERROR && error == nullptr) {
      error = result;
      error_sql = pending.statement->sql_;
      if (pending.is_prepare) pending.statement->prepared_ = false;
    } else {
      if (!pending.is_prepare && pending.counted && status == PGRES_COMMAND_OK) {
        const char* rows = PQcmdTuples(result);
        changed.push_back(rows != nullptr && *rows != '\0' ? std::atoi(rows) : 0);
      } else if (!pending.is_prepare && pending.counted) {
        changed.push_back(0);
      }
      if (status == PGRES_PIPELINE_ABORTED && pending.is_prepare) {
        pending.statement->prepared_ = false;
      }
      if (pending.keep_result && !pending.is_prepare &&
          (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK)) {
        pending.statement->take_result(result);
      } else {
        PQclear(result);
      }
    }
    while ((result = PQgetResult(conn)) != nullptr) PQclear(result);  // the end of this one
  }
  pending_.clear();
  discard();
  if (error != nullptr) connection_.fail(error, error_sql);
  if (!error_sql.empty()) connection_.fail(nullptr, error_sql);
  return changed;
}

void PostgresPipeline::discard() {
  active_ = false;
  pg_conn* conn = connection_.handle();
  if (PQstatus(conn) != CONNECTION_OK) return;
  if (!pending_.empty()) {
    for (const Pending& pending : pending_) {
      if (pending.is_prepare) pending.statement->prepared_ = false;
    }
    pending_.clear();
    PQpipelineSync(conn);
  }
  // Read up to the sync point, then leave pipeline mode.
  for (int nulls = 0; PQpipelineStatus(conn) != PQ_PIPELINE_OFF && nulls < 2;) {
    pg_result* result = PQgetResult(conn);
    if (result == nullptr) {
      if (PQexitPipelineMode(conn) == 1) break;
      ++nulls;
      continue;
    }
    nulls = 0;
    PQclear(result);
  }
}

}  // namespace tollgate::sql
