// SqlReviewStore: ReviewStore in the server's database through sql::Connection, SQLite or
// PostgreSQL (tables server_reviews and server_review_approvals; its schema version is row
// "reviews" of table tollgate_schema, see sql/migrations.h). The decisions' conditional
// updates (pending -> decided) are single statements on both, so a second decision moves
// nothing.
// Thread-safety: one connection under a mutex; every method may be called from any thread.
#pragma once

#include <memory>
#include <mutex>

#include "sql/connection_lock.h"
#include <string>

#include "server/review_store.h"

namespace tollgate::sql {
class Connection;
class StatementCache;
}

namespace tollgate::server {

class SqlReviewStore : public ReviewStore {
 public:
  // Creates or migrates the tables. Throws Error(kUnavailable) when the database cannot be
  // reached.
  explicit SqlReviewStore(std::unique_ptr<sql::Connection> connection);
  // The same on a connection other parts may share (connection_lock.h).
  explicit SqlReviewStore(sql::SharedConnection connection);
  ~SqlReviewStore() override;

  void add_pending(const std::vector<ReviewRecord>& records) override;
  std::vector<ReviewRecord> list(const std::string& thread_id) override;
  std::size_t decide(const std::string& thread_id, const std::string& checkpoint_id,
                     const std::string& interrupt_id, const std::string& decided_by,
                     const std::string& run_id, std::int64_t at) override;
  void reopen(const std::string& run_id) override;
  void disarm(const std::string& run_id) override;
  std::vector<ReviewRecord> at_checkpoint(const std::string& thread_id,
                                          const std::string& checkpoint_id) override;
  std::optional<std::int64_t> next_expiry() override;
  std::vector<ReviewRecord> due(std::int64_t now) override;
  std::size_t expire(const std::string& thread_id, const std::string& checkpoint_id,
                     const std::string& interrupt_id, const std::string& decided_by,
                     const std::string& run_id, std::int64_t at) override;
  void supersede_others(const std::string& thread_id, const std::string& checkpoint_id,
                        const std::vector<std::string>& interrupt_ids) override;
  bool add_approval(const std::string& thread_id, const std::string& checkpoint_id,
                    const ReviewApproval& approval) override;
  std::vector<ReviewApproval> approvals(const std::string& thread_id,
                                        const std::string& checkpoint_id) override;
  std::optional<ReviewClaim> take_claim(const std::string& thread_id,
                                        const std::string& interrupt_id,
                                        const std::string& claimed_by, std::int64_t now,
                                        std::int64_t expires_at) override;
  std::optional<ReviewClaim> release_claim(const std::string& thread_id,
                                           const std::string& interrupt_id,
                                           const std::string& held_by, std::int64_t now) override;
  std::vector<ReviewClaim> live_claims(const std::vector<std::string>& thread_ids,
                                       std::int64_t now) override;

 private:
  // pending -> `status` for the interrupt's records (decide, expire).
  std::size_t claim(ReviewStatus status, const std::string& thread_id,
                    const std::string& checkpoint_id, const std::string& interrupt_id,
                    const std::string& decided_by, const std::string& run_id, std::int64_t at);

  // The claim of the thread's pending records of the interrupt (live or not; nullopt: none of
  // them is pending). Called with mutex_ held.
  std::optional<ReviewClaim> claim_of_locked(const std::string& thread_id,
                                             const std::string& interrupt_id);

  sql::ConnectionLock mutex_;  // guards db_ and statements_
  // The same lock, taken by a claim (decide, expire): its commit is not synced on its own. A
  // claim is as durable as the run that carries it, whose insert follows it in the write-ahead
  // log: the next sync of the file covers both (in the server, at the latest the one of the
  // decision's audit entry, written before the graph takes the decision). A power loss before
  // it loses both; a claim that outlived its run would be put back anyway (RunManager).
  sql::ConnectionLock claim_mutex_;
  std::shared_ptr<sql::Connection> db_;
  std::unique_ptr<sql::StatementCache> statements_;  // fixed texts, kept prepared
};

// The records in the SQLite file `db_path`. Throws Error(kUnavailable) when the file cannot be
// opened.
class SqliteReviewStore final : public SqlReviewStore {
 public:
  explicit SqliteReviewStore(const std::string& db_path);
};

}  // namespace tollgate::server
