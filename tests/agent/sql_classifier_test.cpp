// is_sql_write: which queries the `sql_writes` rule calls writes (it fails closed).
#include <gtest/gtest.h>

#include <string>

#include "tollgate/when_rules.h"

namespace tollgate {
namespace {

struct SqlCase {
  const char* query;
  bool writes;
};

TEST(IsSqlWrite, DetectionTable) {
  const SqlCase cases[] = {
      {"SELECT * FROM users", false},
      {"  select count(*) from orders;", false},
      {"SELECT replace(name, 'a', 'b') FROM users", false},
      {"SELECT 'DELETE FROM users' AS text", false},
      {"-- DELETE FROM users\nSELECT 1", false},
      {"/* DROP TABLE users; */ SELECT 1", false},
      {"WITH t AS (SELECT 1) SELECT * FROM t", false},
      {"EXPLAIN QUERY PLAN SELECT * FROM users", false},
      {"PRAGMA table_info(users)", false},
      {"PRAGMA user_version", false},
      {"", false},
      {"-- only a comment", false},
      {"INSERT INTO users VALUES (9, 'x', 'x@y', 'z')", true},
      {"update users set city = 'Paris'", true},
      {"DELETE FROM orders", true},
      {"REPLACE INTO users VALUES (1, 'a', 'b', 'c')", true},
      {"CREATE TABLE t (x)", true},
      {"DROP TABLE users", true},
      {"ALTER TABLE users ADD COLUMN age", true},
      {"ATTACH DATABASE 'x.db' AS x", true},
      {"VACUUM", true},
      {"WITH old AS (SELECT id FROM orders) DELETE FROM orders WHERE id IN old", true},
      {"SELECT 1; DELETE FROM users", true},
      {"SELECT 1 /* ; */; DROP TABLE users -- bye", true},
      {"PRAGMA user_version = 7", true},
      {"PRAGMA main.journal_mode = DELETE", true},
      {"PRAGMA wal_checkpoint", true},
      {"BEGIN; UPDATE users SET name = 'x'; COMMIT;", true},
      {"FROBNICATE users", true},
  };
  for (const auto& c : cases) EXPECT_EQ(is_sql_write(c.query), c.writes) << c.query;
}

TEST(IsSqlWrite, AMegabyteQueryIsClassifiedInOnePass) {
  const std::string comment = "/*" + std::string(1 << 20, '*') + "*/";
  EXPECT_FALSE(is_sql_write("SELECT 1 " + comment));
  EXPECT_TRUE(is_sql_write("SELECT '" + std::string(1 << 20, 'x') + "'; DROP TABLE users"));
}

}  // namespace
}  // namespace tollgate
