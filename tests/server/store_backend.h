// The database the store tests run on: a SQLite file of the test's own (server_test), or,
// when the file is compiled with TOLLGATE_TEST_POSTGRES_STORES (server_postgres_test, label
// postgres), a fresh schema on the private PostgreSQL server of scripts/pg.sh. The same tests
// then check that both backends behave alike.
//
//   StoreBackend db("store");
//   SqlStore store(db.connect());
//   db.exec("UPDATE server_audit_log SET ...");  // behind the store's back
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sql/connection.h"
#include "sql/postgres_connection.h"
#include "sql/sqlite_connection.h"
#include "sql/statement_cache.h"
#include "support/postgres_test_server.h"
#include "support/test_folder.h"

namespace tollgate::testing {

#ifdef TOLLGATE_TEST_POSTGRES_STORES
inline constexpr bool kPostgresStores = true;
#else
inline constexpr bool kPostgresStores = false;
#endif

class StoreBackend {
 public:
  explicit StoreBackend(const std::string& prefix) : folder_(prefix) {
    if (postgres()) {
      if (test_postgres_url().empty()) return;  // the test skips (require() in SetUp)
      schema_.emplace();
    }
  }

  static bool postgres() { return kPostgresStores; }
  // In SetUp: skips the test when it needs a PostgreSQL server and none was given.
  static bool available() { return !postgres() || !test_postgres_url().empty(); }

  // A new connection to the test's database.
  std::unique_ptr<sql::Connection> connect() const {
    if (postgres()) {
      return std::make_unique<sql::PostgresConnection>(test_postgres_url(),
                                                       sql::PostgresOptions{schema_->name(), true});
    }
    return std::make_unique<sql::SqliteConnection>(
        path(), sql::SqliteFileOptions{std::chrono::milliseconds(10000), /*wal=*/true});
  }
  // The database as a storage URL and schema (server/storage.h).
  std::string url() const { return postgres() ? test_postgres_url() : path(); }
  std::string schema() const { return postgres() ? schema_->name() : std::string(); }
  // Runs `sql` on a connection of its own.
  void exec(const std::string& sql) const { connect()->exec(sql); }
  // The rows of `table` as another connection sees them.
  std::int64_t rows(const std::string& table) const {
    auto connection = connect();
    auto count = connection->prepare("SELECT count(*) FROM " + table);
    return count->step() ? count->integer(0) : -1;
  }
  // The plan of `select` (portable text, `?` placeholders) with `args` bound in order
  // (SQLite's EXPLAIN QUERY PLAN details, or
  // PostgreSQL's EXPLAIN lines with sequential scans off: it reads a small table whole
  // otherwise), one line each.
  template <typename Values>
  std::string plan(const std::string& select, const Values& args) const {
    auto connection = connect();
    if (postgres()) connection->exec("SET enable_seqscan = off");
    auto explain = sql::prepare_once(
        *connection, std::string(postgres() ? "EXPLAIN " : "EXPLAIN QUERY PLAN ") + select);
    int index = 1;
    for (const auto& value : args) {
      std::visit([&](const auto& v) { explain->bind(index++, v); }, value);
    }
    std::string out;
    while (explain->step()) out += explain->text(postgres() ? 0 : 3) + "\n";
    return out;
  }
  std::string plan(const std::string& select) const {
    return plan(select, std::vector<std::variant<std::string>>{});
  }
  // The SQLite file (SQLite only).
  std::string path() const { return (folder_.path() / "store.db").string(); }

 private:
  TestFolder folder_;
  std::optional<ScratchSchema> schema_;
};

}  // namespace tollgate::testing

// In a fixture's SetUp, before the backend is used.
#define TOLLGATE_REQUIRE_STORE_BACKEND()                                                  \
  do {                                                                                    \
    if (!::tollgate::testing::StoreBackend::available())                                  \
      GTEST_SKIP() << "TOLLGATE_TEST_PG_URL is not set: run scripts/test.sh postgres";    \
  } while (0)
