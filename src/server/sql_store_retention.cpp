// SqlStore: what retention (retention.h) reads and deletes.
#include "server/sql_store.h"
#include "server/sql_store_rows.h"

namespace tollgate::server {

using namespace sql_rows;

namespace {

constexpr const char* kNoActiveRun = "active_runs = 0";

}  // namespace

bool SqlStore::set_thread_ttl(const std::string& thread_id,
                                 std::optional<std::int64_t> ttl_ms) {
  std::lock_guard lock(mutex_);
  bool found = false;
  write_locked([&] {
    Statement s(prepared_locked("UPDATE server_threads SET ttl_ms = ? WHERE thread_id = ?"));
    if (ttl_ms) {
      s.bind(1, *ttl_ms);
    } else {
      s.bind_json(1, Json());
    }
    found = s.bind(2, thread_id).run() == 1;
  });
  return found;
}

std::vector<std::string> SqlStore::expired_threads(std::int64_t now, std::size_t limit) {
  std::lock_guard lock(mutex_);
  Statement s(prepared_locked(
      std::string("SELECT thread_id FROM server_threads WHERE ttl_ms IS NOT NULL AND "
                  "updated_at + ttl_ms <= ? AND status <> 'interrupted' AND ") +
      kNoActiveRun + " ORDER BY updated_at LIMIT ?"));
  s.bind(1, now).bind(2, static_cast<std::int64_t>(limit));
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::vector<std::string> SqlStore::idle_threads_updated_since(std::int64_t since) {
  std::lock_guard lock(mutex_);
  Statement s(prepared_locked(std::string("SELECT thread_id FROM server_threads WHERE "
                                          "updated_at >= ? AND ") +
                              kNoActiveRun + " ORDER BY updated_at"));
  s.bind(1, since);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::size_t SqlStore::prune_events(std::int64_t before) {
  std::lock_guard lock(mutex_);
  std::size_t deleted = 0;
  write_locked([&] {
    for (const char* table : {"server_run_events", "server_run_event_batches"}) {
      deleted += static_cast<std::size_t>(
          Statement(prepared_locked(std::string("DELETE FROM ") + table +
                                    " WHERE run_id IN (SELECT run_id FROM server_runs WHERE "
                                    "updated_at < ? AND status NOT IN ('pending', 'running'))"))
              .bind(1, before)
              .run());
    }
    deleted += static_cast<std::size_t>(
        Statement(prepared_locked(
                      "DELETE FROM server_thread_events WHERE appended_at < ?1 AND seq < (SELECT "
                      "max(e.seq) FROM server_thread_events e WHERE e.thread_id = "
                      "server_thread_events.thread_id) AND NOT EXISTS (SELECT 1 FROM server_runs "
                      "r WHERE r.thread_id = server_thread_events.thread_id AND r.status IN "
                      "('pending', 'running'))"))
            .bind(1, before)
            .run());
    deleted += static_cast<std::size_t>(
        Statement(prepared_locked(
                      "DELETE FROM server_thread_event_batches WHERE appended_at < ?1 AND "
                      "last_seq < (SELECT max(b.last_seq) FROM server_thread_event_batches b "
                      "WHERE b.thread_id = server_thread_event_batches.thread_id) AND NOT EXISTS "
                      "(SELECT 1 FROM server_runs r WHERE r.thread_id = "
                      "server_thread_event_batches.thread_id AND r.status IN ('pending', "
                      "'running'))"))
            .bind(1, before)
            .run());
  });
  return deleted;
}

}  // namespace tollgate::server
