// The review audit log on a real database (SQLite; PostgreSQL in server_postgres_test).
#include "server/audit_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "core/sha256.h"
#include "server/audit_export.h"
#include "server/store_backend.h"
#include "server/wire_format.h"

namespace tollgate::server {
namespace {

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_REQUIRE_STORE_BACKEND();
    log_ = std::make_unique<AuditLog>(db_.connect());
  }
  void TearDown() override { log_.reset(); }
  void reopen() {
    log_.reset();
    log_ = std::make_unique<AuditLog>(db_.connect());
  }
  std::int64_t append(const std::string& thread_id, const Json& decided = Json("yes")) {
    AuditEntry entry;
    entry.thread_id = thread_id;
    entry.run_id = "run-" + thread_id;
    entry.graph_id = "agent";
    entry.checkpoint_id = "cp-1";
    entry.shown = Json{{"task-1", {{{"id", "i-1"}, {"value", {{"question", "ok?"}}}}}}};
    entry.decided = decided;
    return log_->append(entry);
  }

  testing::StoreBackend db_{"audit"};
  std::unique_ptr<AuditLog> log_;
};

TEST_F(AuditLogTest, AppendedDecisionIsPendingWithWhatWasShownAndDecided) {
  const std::int64_t id = append("t1", Json{{"decisions", {{{"type", "approve"}}}}});
  auto entries = log_->list({});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].id, id);
  EXPECT_EQ(entries[0].outcome, "pending");
  EXPECT_EQ(entries[0].shown["task-1"][0]["value"]["question"], "ok?");
  EXPECT_EQ(entries[0].decided["decisions"][0]["type"], "approve");
  EXPECT_EQ(entries[0].settled_at, 0);
  EXPECT_GT(entries[0].received_at, 0);
}

TEST_F(AuditLogTest, SettleWritesTheOutcomeOnce) {
  const std::int64_t id = append("t1");
  log_->settle(id, "refused", "Decision type 'respond' is not allowed");
  log_->settle(id, "applied");
  auto entries = log_->list({});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].outcome, "refused");
  EXPECT_EQ(entries[0].message, "Decision type 'respond' is not allowed");
  EXPECT_GT(entries[0].settled_at, 0);
}

TEST_F(AuditLogTest, ListsNewestFirstFilteredByThreadAndPaged) {
  const std::int64_t a = append("t1");
  const std::int64_t b = append("t2");
  const std::int64_t c = append("t1");
  auto all = log_->list({});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, c);
  EXPECT_EQ(all[2].id, a);

  AuditQuery by_thread;
  by_thread.thread_id = "t1";
  auto t1 = log_->list(by_thread);
  ASSERT_EQ(t1.size(), 2u);
  EXPECT_EQ(t1[0].id, c);
  EXPECT_EQ(t1[1].id, a);

  AuditQuery page;
  page.before_id = c;
  page.limit = 1;
  auto older = log_->list(page);
  ASSERT_EQ(older.size(), 1u);
  EXPECT_EQ(older[0].id, b);
}

TEST_F(AuditLogTest, EntriesSurviveReopening) {
  const std::int64_t id = append("t1");
  log_->settle(id, "applied");
  reopen();
  auto entries = log_->list({});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].outcome, "applied");
}

TEST_F(AuditLogTest, PendingEntriesAreMarkedLostAtStartUpAndSettledOnesKept) {
  const std::int64_t settled = append("t1");
  log_->settle(settled, "applied");
  const std::int64_t pending = append("t2");
  reopen();
  EXPECT_EQ(log_->settle_lost("the server stopped"), 1u);
  for (const AuditEntry& e : log_->list({})) {
    if (e.id == pending) {
      EXPECT_EQ(e.outcome, "lost");
      EXPECT_EQ(e.message, "the server stopped");
    } else {
      EXPECT_EQ(e.outcome, "applied");
    }
  }
}

TEST_F(AuditLogTest, JsonNamesEveryFieldWithIsoTimesAndNullsForEmptyText) {
  append("t1");
  Json j = log_->list({})[0].to_json();
  EXPECT_TRUE(j["received_at"].get<std::string>().find('T') != std::string::npos);
  EXPECT_TRUE(j["reviewer"].is_null());
  EXPECT_TRUE(j["message"].is_null());
  EXPECT_TRUE(j["settled_at"].is_null());
  EXPECT_EQ(j["outcome"], "pending");
  EXPECT_EQ(j["checkpoint_id"], "cp-1");
  EXPECT_EQ(j["graph_id"], "agent");
}

// Runs `sql` on the log's database behind its back, as someone editing the database would.
void tamper(const testing::StoreBackend& db, const std::string& sql) { db.exec(sql); }

// The canonical text as the log first defined it: event_json of an object of the hashed fields.
std::string reference_hash(const AuditEntry& e, const std::string& prev_hash) {
  Json canonical{{"audit_id", e.id},
                 {"kind", e.kind},
                 {"refers_to", e.refers_to},
                 {"received_at", e.received_at},
                 {"thread_id", e.thread_id},
                 {"run_id", e.run_id},
                 {"assistant_id", e.assistant_id},
                 {"graph_id", e.graph_id},
                 {"reviewer", e.reviewer},
                 {"checkpoint_id", e.checkpoint_id},
                 {"shown", e.shown},
                 {"decided", e.decided}};
  if (e.kind != "decision" && e.kind != "state_write") {
    canonical["outcome"] = e.outcome;
    canonical["message"] = e.message;
    canonical["settled_at"] = e.settled_at;
  }
  return core::sha256_hex(prev_hash + "\n" + event_json(canonical));
}

TEST(AuditEntryHashTest, IsTheHashOfTheCanonicalObjectOfItsFields) {
  AuditEntry e;
  e.id = 42;
  e.refers_to = 0;
  e.received_at = 1796429700838;
  e.thread_id = "t-\"quoted\"\\slash\n";
  e.run_id = "r\u00e9\u4e2d";
  e.assistant_id = std::string("bad\xff\xfe bytes");
  e.graph_id = "agent";
  e.reviewer = "ada";
  e.checkpoint_id = "";
  e.shown = {
      {"task-1",
       Json::array({{{"id", "i1"},
                     {"value",
                      {{"action_requests",
                        Json::array({{{"args", {{"to", "b@x"}, {"n", -3}, {"f", 1.5}}}}})}}}}})}};
  e.decided = {
      {"decisions", Json::array({{{"type", "edit"},
                                  {"edited_action", {{"name", "x"}, {"args", Json::object()}}}}})}};
  e.outcome = "applied";
  e.message = "a \x01 control";
  e.settled_at = 1796429700900;
  for (const char* kind : {"decision", "state_write", "run_start", "refusal", "outcome"}) {
    e.kind = kind;
    EXPECT_EQ(audit_entry_hash(e, ""), reference_hash(e, "")) << kind;
    EXPECT_EQ(audit_entry_hash(e, "abc"), reference_hash(e, "abc")) << kind;
  }
  e.kind = "run_start";
  e.shown = Json::object();
  e.decided = nullptr;
  e.id = -1;
  EXPECT_EQ(audit_entry_hash(e, "p"), reference_hash(e, "p"));
}

TEST_F(AuditLogTest, EachEntryCarriesTheHashOfThePreviousOne) {
  append("t1");
  append("t2");
  auto entries = log_->list({});  // newest first
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].prev_hash, "");
  EXPECT_EQ(entries[0].prev_hash, entries[1].hash);
  EXPECT_EQ(entries[0].hash, audit_entry_hash(entries[0], entries[0].prev_hash));
}

TEST_F(AuditLogTest, SettlingAppendsAChainedOutcomeEntry) {
  const std::int64_t id = append("t1");
  log_->settle(id, "applied");
  AuditQuery chain;
  chain.chain = true;
  auto entries = log_->list(chain);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].kind, "outcome");
  EXPECT_EQ(entries[1].refers_to, id);
  EXPECT_EQ(entries[1].outcome, "applied");
  EXPECT_EQ(entries[1].prev_hash, entries[0].hash);
}

TEST_F(AuditLogTest, AnUntouchedChainVerifies) {
  log_->settle(append("t1"), "applied");
  append("t2");
  const AuditVerification result = log_->verify();
  EXPECT_TRUE(result.intact) << result.reason;
  EXPECT_EQ(result.entries, 3u);
}

TEST_F(AuditLogTest, AnAppendAndASettleOnASessionTerminatedWhileIdleGoOnANewOne) {
  if (!testing::StoreBackend::postgres()) GTEST_SKIP() << "PostgreSQL sessions";
  std::unique_ptr<sql::Connection> connection = db_.connect();
  auto& session = static_cast<sql::PostgresConnection&>(*connection);
  log_ = std::make_unique<AuditLog>(std::move(connection));
  const std::int64_t first = append("t1");
  // Ends the log's session from another one, as an administrator, a failover or an idle
  // timeout would, between two writes.
  auto terminate = [&] {
    sql::PostgresConnection admin(testing::test_postgres_url());
    sql::PostgresStatement kill(admin, "SELECT pg_terminate_backend($1, 10000)");
    kill.bind(1, std::int64_t{session.backend_pid()});
    ASSERT_TRUE(kill.step());
  };
  terminate();
  const std::int64_t second = append("t2");
  EXPECT_EQ(second, first + 1);
  terminate();
  log_->settle(first, "applied");
  const auto entries = log_->list({.chain = true});
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[2].refers_to, first);
  const AuditVerification result = log_->verify();
  EXPECT_TRUE(result.intact) << result.reason;
}

TEST_F(AuditLogTest, EditingOneRowBreaksTheChainAtThatRow) {
  append("t1");
  const std::int64_t edited = append("t2", Json{{"decisions", {{{"type", "reject"}}}}});
  append("t3");
  tamper(db_, "UPDATE server_audit_log SET decided = '{\"decisions\":[{\"type\":\"approve\"}]}' "
                "WHERE audit_id = " + std::to_string(edited));
  const AuditVerification result = log_->verify();
  EXPECT_FALSE(result.intact);
  EXPECT_EQ(result.broken_id, edited);
  EXPECT_NE(result.reason.find("does not match its contents"), std::string::npos);
}

TEST_F(AuditLogTest, EditingAnOutcomeIsDetected) {
  const std::int64_t id = append("t1");
  log_->settle(id, "refused", "not allowed");
  tamper(db_, "UPDATE server_audit_log SET outcome = 'applied' WHERE audit_id = " +
                    std::to_string(id));
  const AuditVerification result = log_->verify();
  EXPECT_FALSE(result.intact);
  EXPECT_EQ(result.broken_id, id);
}

TEST_F(AuditLogTest, DeletingARowBreaksTheChainAtTheNextOne) {
  append("t1");
  const std::int64_t removed = append("t2");
  const std::int64_t next = append("t3");
  tamper(db_, "DELETE FROM server_audit_log WHERE audit_id = " + std::to_string(removed));
  const AuditVerification result = log_->verify();
  EXPECT_FALSE(result.intact);
  EXPECT_EQ(result.broken_id, next);
}

TEST_F(AuditLogTest, ALogWrittenBeforeTheChainIsChainedWhenOpened) {
  if (testing::StoreBackend::postgres()) GTEST_SKIP() << "a SQLite file of an older layout";
  log_.reset();
  testing::StoreBackend old_file("audit-v1");
  tamper(old_file, R"sql(
CREATE TABLE server_audit_log (
  audit_id INTEGER PRIMARY KEY AUTOINCREMENT, received_at INTEGER NOT NULL,
  thread_id TEXT NOT NULL, run_id TEXT NOT NULL, assistant_id TEXT NOT NULL,
  graph_id TEXT NOT NULL, reviewer TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
  shown TEXT NOT NULL, decided TEXT NOT NULL, outcome TEXT NOT NULL, message TEXT NOT NULL,
  settled_at INTEGER NOT NULL);
INSERT INTO server_audit_log VALUES (NULL, 10, 't1', 'r1', 'a', 'agent', '', 'cp', '{}', '"yes"',
  'applied', '', 20);
INSERT INTO server_audit_log VALUES (NULL, 30, 't2', 'r2', 'a', 'agent', '', 'cp', '{}', '"no"',
  'pending', '', 0);
)sql");
  log_ = std::make_unique<AuditLog>(old_file.connect());
  EXPECT_TRUE(log_->verify().intact) << log_->verify().reason;
  AuditQuery chain;
  chain.chain = true;
  auto entries = log_->list(chain);
  ASSERT_EQ(entries.size(), 3u);  // the two rows, then the first one's outcome
  EXPECT_EQ(entries[2].kind, "outcome");
  EXPECT_EQ(entries[2].refers_to, entries[0].id);
  EXPECT_EQ(log_->list({})[1].outcome, "applied");
}

TEST_F(AuditLogTest, CsvExportQuotesFieldsWithCommasAndQuotes) {
  append("t1", Json{{"decisions", {{{"type", "reject"}, {"message", "no, \"never\""}}}}});
  AuditQuery chain;
  chain.chain = true;
  const std::string csv = audit_to_csv(log_->list(chain));
  EXPECT_EQ(csv.substr(0, csv.find("\r\n")),
            "audit_id,kind,refers_to,received_at,thread_id,run_id,assistant_id,graph_id,reviewer,"
            "checkpoint_id,shown,decided,outcome,message,settled_at,prev_hash,hash");
  EXPECT_NE(csv.find(R"("{""decisions"":[{""message"":""no, \""never\"""",""type"":""reject""}]}")"),
            std::string::npos)
      << csv;
}

TEST_F(AuditLogTest, JsonLinesExportHasOneEntryPerLine) {
  append("t1");
  append("t2");
  AuditQuery chain;
  chain.chain = true;
  const std::string jsonl = audit_to_jsonl(log_->list(chain));
  EXPECT_EQ(std::count(jsonl.begin(), jsonl.end(), '\n'), 2);
  EXPECT_EQ(Json::parse(jsonl.substr(0, jsonl.find('\n')))["thread_id"], "t1");
}

}  // namespace
}  // namespace tollgate::server
