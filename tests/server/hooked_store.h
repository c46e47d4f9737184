// HookedStore: the real SqliteStore behind a double that calls a hook before each of its
// writes, so that a test can make writes fail (a full disk) or hold them (a write the storage
// is slow to make) while the server runs; reads always pass.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/sql_store.h"
#include "server/store.h"

namespace tollgate::server::testing {

class HookedStore : public ServerStore {
  template <typename Write>
  auto write(std::string_view name, const std::string& thread_id, Write body) {
    hook_(name, thread_id);
    return body();
  }

 public:
  // Called before each write with the write's name and the thread it writes (empty when the
  // write names none); a write the hook throws from is not made.
  using Hook = std::function<void(std::string_view write, const std::string& thread_id)>;
  HookedStore(const std::string& path, Hook hook) : hook_(std::move(hook)), store_(path) {}

  void put_assistant(const AssistantRecord& a) override {
    write("put_assistant", {}, [&] { store_.put_assistant(a); });
  }
  std::optional<AssistantRecord> get_assistant(const std::string& id) override {
    return store_.get_assistant(id);
  }
  std::vector<AssistantRecord> list_assistants() override { return store_.list_assistants(); }
  void delete_assistant(const std::string& id) override {
    write("delete_assistant", {}, [&] { store_.delete_assistant(id); });
  }
  bool create_thread(const ThreadRecord& t) override {
    return write("create_thread", t.thread_id, [&] { return store_.create_thread(t); });
  }
  std::optional<ThreadRecord> get_thread_head(const std::string& id) override {
    return store_.get_thread_head(id);
  }
  std::optional<ThreadRecord> get_thread(const std::string& id) override {
    return store_.get_thread(id);
  }
  void update_thread(const ThreadRecord& t) override {
    write("update_thread", t.thread_id, [&] { store_.update_thread(t); });
  }
  std::optional<ThreadRecord> merge_thread_metadata(const std::string& id, const Json& metadata,
                                                    std::int64_t at) override {
    return write("merge_thread_metadata", id,
                 [&] { return store_.merge_thread_metadata(id, metadata, at); });
  }
  bool set_thread_outcome(const std::string& id, const ThreadOutcome& outcome,
                          std::vector<QueuedNotification>* notices) override {
    return write("set_thread_outcome", id,
                 [&] { return store_.set_thread_outcome(id, outcome, notices); });
  }
  std::vector<ThreadRecord> list_threads() override { return store_.list_threads(); }
  std::vector<ThreadRecord> search_threads(const ThreadFilter& filter,
                                           const ThreadPage& page) override {
    return store_.search_threads(filter, page);
  }
  std::size_t count_threads(const ThreadFilter& filter) override {
    return store_.count_threads(filter);
  }
  std::vector<std::string> thread_ids_with_stored_status(ThreadStatus status) override {
    return store_.thread_ids_with_stored_status(status);
  }
  void delete_thread(const std::string& id) override {
    write("delete_thread", id, [&] { store_.delete_thread(id); });
  }
  bool set_thread_ttl(const std::string& id, std::optional<std::int64_t> ttl_ms) override {
    return write("set_thread_ttl", id, [&] { return store_.set_thread_ttl(id, ttl_ms); });
  }
  std::vector<std::string> expired_threads(std::int64_t now, std::size_t limit) override {
    return store_.expired_threads(now, limit);
  }
  std::vector<std::string> idle_threads_updated_since(std::int64_t since) override {
    return store_.idle_threads_updated_since(since);
  }
  std::size_t prune_events(std::int64_t before) override {
    return write("prune_events", {}, [&] { return store_.prune_events(before); });
  }
  void put_run(const RunRecord& r) override {
    write("put_run", r.thread_id, [&] { store_.put_run(r); });
  }
  bool insert_run(const RunRecord& r, const Json& metadata,
                  std::vector<QueuedNotification>* notices) override {
    return write("insert_run", r.thread_id,
                 [&] { return store_.insert_run(r, metadata, notices); });
  }
  std::optional<int> begin_attempt(const std::string& id, RunStatus status,
                                   std::int64_t at) override {
    return write("begin_attempt", {}, [&] { return store_.begin_attempt(id, status, at); });
  }
  bool end_run(const RunRecord& r, bool keep, const ThreadOutcome* thread,
               std::vector<QueuedNotification>* notices) override {
    return write("end_run", r.thread_id, [&] { return store_.end_run(r, keep, thread, notices); });
  }
  std::optional<RunRecord> get_run(const std::string& id) override { return store_.get_run(id); }
  std::vector<RunRecord> list_runs(const std::string& id) override { return store_.list_runs(id); }
  std::vector<RunRecord> list_runs_page(const std::string& id, std::size_t limit,
                                        std::size_t offset) override {
    return store_.list_runs_page(id, limit, offset);
  }
  std::vector<RunRecord> list_runs_with_status(RunStatus status) override {
    return store_.list_runs_with_status(status);
  }
  void delete_run(const std::string& id) override {
    write("delete_run", {}, [&] { store_.delete_run(id); });
  }
  void append_run_event(const std::string& id, LogEntryPtr e) override {
    store_.append_run_event(id, e);  // queued; never fails
  }
  std::vector<LogEntry> run_events(const std::string& id, std::int64_t after) override {
    return store_.run_events(id, after);
  }
  void append_thread_event(const std::string& id, LogEntryPtr e) override {
    store_.append_thread_event(id, e);
  }
  std::int64_t last_thread_event_seq(const std::string& id) override {
    return store_.last_thread_event_seq(id);
  }
  std::vector<LogEntry> thread_events(const std::string& id, std::int64_t after,
                                      std::int64_t* last_seq) override {
    return store_.thread_events(id, after, last_seq);
  }

 private:
  Hook hook_;
  SqliteStore store_;
};

}  // namespace tollgate::server::testing
