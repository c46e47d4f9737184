// SqliteStore: ServerStore in a SQLite file (WAL), in tables prefixed "server_" so that the
// checkpointer can share the file. The schema carries a version; opening an older file
// applies the missing migrations in one transaction.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "server/store.h"

struct sqlite3;

namespace tollgate::server {

inline constexpr int kServerSchemaVersion = 1;

// Thread-safety: one connection, serialised by a mutex (guards db_).
class SqliteStore : public ServerStore {
 public:
  // Opens (creating if needed) and migrates. Throws Error(kUnavailable) on failure.
  explicit SqliteStore(const std::string& path);
  ~SqliteStore() override;

  int schema_version();

  void put_assistant(const AssistantRecord& assistant) override;
  std::optional<AssistantRecord> get_assistant(const std::string& assistant_id) override;
  std::vector<AssistantRecord> list_assistants() override;
  void delete_assistant(const std::string& assistant_id) override;

  bool create_thread(const ThreadRecord& thread) override;
  std::optional<ThreadRecord> get_thread(const std::string& thread_id) override;
  void update_thread(const ThreadRecord& thread) override;
  std::vector<ThreadRecord> list_threads() override;
  void delete_thread(const std::string& thread_id) override;

  void put_run(const RunRecord& run) override;
  std::optional<RunRecord> get_run(const std::string& run_id) override;
  std::vector<RunRecord> list_runs(const std::string& thread_id) override;
  std::vector<RunRecord> list_runs_with_status(const std::string& status) override;
  void delete_run(const std::string& run_id) override;

  void append_run_event(const std::string& run_id, const LogEntry& entry) override;
  std::vector<LogEntry> run_events(const std::string& run_id) override;
  void append_thread_event(const std::string& thread_id, const LogEntry& entry) override;
  std::vector<LogEntry> thread_events(const std::string& thread_id) override;

 private:
  void migrate();
  std::mutex mutex_;
  sqlite3* db_ = nullptr;
};

}  // namespace tollgate::server
