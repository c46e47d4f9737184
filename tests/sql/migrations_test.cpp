// The one migration runner: versions per component in tollgate_schema, legacy markers adopted.
#include "sql/migrations.h"

#include <gtest/gtest.h>

#include <array>

#include "sql/sql_test_util.h"
#include "sql/sqlite_connection.h"
#include "tollgate/error.h"

namespace tollgate::sql {
namespace {

constexpr std::array<Migration, 2> kNotes = {{
    {"CREATE TABLE notes (text TEXT NOT NULL)"},
    {"ALTER TABLE notes ADD COLUMN author TEXT NOT NULL DEFAULT ''"},
}};
constexpr std::array<Migration, 1> kTags = {{{"CREATE TABLE tags (name TEXT NOT NULL)"}}};

int adopt_notes_version(Connection& connection) {
  return take_legacy_version_table(connection, "notes_version");
}

const Schema kNotesSchema{"notes", kNotes, adopt_notes_version};
const Schema kTagsSchema{"tags", kTags};

class MigrationsTest : public ScratchFileTest {};

TEST_F(MigrationsTest, ANewFileRecordsTheLatestVersionOfEachComponentInOneTable) {
  SqliteConnection connection(path());
  migrate(connection, kNotesSchema);
  migrate(connection, kTagsSchema);
  EXPECT_EQ(schema_version(connection, "notes"), 2);
  EXPECT_EQ(schema_version(connection, "tags"), 1);
  SqliteStatement rows(connection, "SELECT count(*) FROM tollgate_schema");
  ASSERT_TRUE(rows.step());
  EXPECT_EQ(rows.integer(0), 2);
  connection.exec("INSERT INTO notes (text, author) VALUES ('a', 'b')");
}

TEST_F(MigrationsTest, AnUnknownComponentHasVersionZero) {
  SqliteConnection connection(path());
  EXPECT_EQ(schema_version(connection, "notes"), 0);
  migrate(connection, kTagsSchema);
  EXPECT_EQ(schema_version(connection, "notes"), 0);
}

TEST_F(MigrationsTest, OnlyTheMigrationsAboveTheRecordedVersionRun) {
  SqliteConnection connection(path());
  migrate(connection, kNotesSchema, 1);
  connection.exec("INSERT INTO notes (text) VALUES ('kept')");
  migrate(connection, kNotesSchema);  // migration 1 again would fail: the table exists
  EXPECT_EQ(schema_version(connection, "notes"), 2);
  SqliteStatement note(connection, "SELECT text, author FROM notes");
  ASSERT_TRUE(note.step());
  EXPECT_EQ(note.text(0), "kept");
  EXPECT_EQ(note.text(1), "");
}

TEST_F(MigrationsTest, ANewerVersionIsRefusedWithConflictAndNothingChanges) {
  SqliteConnection connection(path());
  migrate(connection, kNotesSchema);
  connection.exec("UPDATE tollgate_schema SET version = 7 WHERE component = 'notes'");
  const Error error = error_of([&] { migrate(connection, kNotesSchema); });
  EXPECT_EQ(error.code(), ErrorCode::kConflict);
  EXPECT_NE(std::string(error.what()).find("notes schema is version 7"), std::string::npos)
      << error.what();
  EXPECT_EQ(schema_version(connection, "notes"), 7);
}

TEST_F(MigrationsTest, AFailingMigrationLeavesTheFileAtItsVersion) {
  constexpr std::array<Migration, 2> kBroken = {{
      {"CREATE TABLE notes (text TEXT NOT NULL)"},
      {"CREATE TABLE more (x INTEGER); ALTER TABLE missing ADD COLUMN y TEXT"},
  }};
  const Schema broken{"notes", kBroken};
  SqliteConnection connection(path());
  migrate(connection, broken, 1);
  EXPECT_EQ(code_of([&] { migrate(connection, broken); }), ErrorCode::kInternal);
  EXPECT_EQ(schema_version(connection, "notes"), 1);
  EXPECT_FALSE(table_exists(connection, "more"));
}

TEST_F(MigrationsTest, AFileAtTheLatestVersionOpensWithoutTheWriteLock) {
  SqliteConnection writer(path(), {.wal = true});
  migrate(writer, kNotesSchema);
  Transaction holding(writer, TransactionKind::kWrite);
  SqliteConnection reader(path(), {.wal = true});  // busy_timeout 0: a lock wait would fail
  EXPECT_NO_THROW(migrate(reader, kNotesSchema));
}

TEST_F(MigrationsTest, ALegacyVersionTableIsAdoptedAndRemoved) {
  SqliteConnection connection(path());
  connection.exec(
      "CREATE TABLE notes (text TEXT NOT NULL); INSERT INTO notes VALUES ('old');"
      "CREATE TABLE notes_version (version INTEGER NOT NULL); INSERT INTO notes_version "
      "VALUES (1)");
  migrate(connection, kNotesSchema);
  EXPECT_EQ(schema_version(connection, "notes"), 2);
  EXPECT_FALSE(table_exists(connection, "notes_version"));
  SqliteStatement note(connection, "SELECT text, author FROM notes");
  ASSERT_TRUE(note.step());
  EXPECT_EQ(note.text(0), "old");
}

TEST_F(MigrationsTest, ANewerLegacyVersionIsRefusedAndItsTableKept) {
  SqliteConnection connection(path());
  connection.exec(
      "CREATE TABLE notes_version (version INTEGER NOT NULL); INSERT INTO notes_version "
      "VALUES (5)");
  EXPECT_EQ(code_of([&] { migrate(connection, kNotesSchema); }), ErrorCode::kConflict);
  EXPECT_TRUE(table_exists(connection, "notes_version"));
  EXPECT_FALSE(table_exists(connection, "tollgate_schema"));
}

}  // namespace
}  // namespace tollgate::sql
