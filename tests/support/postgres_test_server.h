// The PostgreSQL server of the tests labelled postgres: scripts/pg.sh (run by
// `scripts/test.sh postgres`) starts a private one and passes its URL in TOLLGATE_TEST_PG_URL.
// Each test works in a schema of its own, made fresh and dropped afterwards, so tests share the
// server but never see each other's tables.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <string>

#include "sql/postgres_connection.h"

namespace tollgate::testing {

// The server's URL; empty when the tests run without one.
inline std::string test_postgres_url() {
  const char* url = std::getenv("TOLLGATE_TEST_PG_URL");
  return url != nullptr ? url : "";
}

// The server's URL with another database.
inline std::string test_postgres_url_of(const std::string& database) {
  const std::string url = test_postgres_url();
  return url.substr(0, url.rfind('/') + 1) + database;
}

// Skips the test when no server was given (the postgres tier always gives one).
#define TOLLGATE_REQUIRE_POSTGRES()                                                    \
  do {                                                                                 \
    if (::tollgate::testing::test_postgres_url().empty())                              \
      GTEST_SKIP() << "TOLLGATE_TEST_PG_URL is not set: run scripts/test.sh postgres"; \
  } while (0)

// A schema made for one test and dropped with this object.
class ScratchSchema {
 public:
  ScratchSchema() : name_(fresh_name()) {
    sql::PostgresConnection admin(test_postgres_url());
    admin.exec("CREATE SCHEMA " + name_);
  }
  ~ScratchSchema() {
    try {
      sql::PostgresConnection admin(test_postgres_url());
      admin.exec("DROP SCHEMA IF EXISTS " + name_ + " CASCADE");
    } catch (...) {
      // The server may be gone (a test stopped it); the cluster is thrown away at the end.
    }
  }
  ScratchSchema(const ScratchSchema&) = delete;
  ScratchSchema& operator=(const ScratchSchema&) = delete;

  const std::string& name() const { return name_; }

 private:
  static std::string fresh_name() {
    static std::atomic<int> counter{0};
    return "test_" + std::to_string(getpid()) + "_" +
           std::to_string(std::random_device{}() % 100000) + "_" + std::to_string(++counter);
  }
  std::string name_;
};

}  // namespace tollgate::testing
