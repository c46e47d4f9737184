#include "server/run_mirrors.h"

#include <vector>

namespace tollgate::server {

std::shared_ptr<EventLog> RunMirrors::open(const std::string& run_id) {
  std::lock_guard follow_lock(catching_up_);
  {
    std::lock_guard lock(mutex_);
    auto it = mirrors_.find(run_id);
    if (it != mirrors_.end()) {
      if (auto log = it->second.log.lock()) return log;
    }
  }
  auto log = std::make_shared<EventLog>();
  const std::int64_t last = follow(run_id, *log, -1);
  if (!log->closed()) {
    std::lock_guard lock(mutex_);
    mirrors_[run_id] = Mirror{log, last};
  }
  return log;
}

void RunMirrors::catch_up(const std::string& run_id) {
  std::lock_guard follow_lock(catching_up_);
  std::shared_ptr<EventLog> log;
  std::int64_t last = -1;
  {
    std::lock_guard lock(mutex_);
    auto it = mirrors_.find(run_id);
    if (it == mirrors_.end()) return;
    log = it->second.log.lock();
    last = it->second.last_seq;
    if (!log) {
      mirrors_.erase(it);
      return;
    }
  }
  last = follow(run_id, *log, last);
  std::lock_guard lock(mutex_);
  if (log->closed()) {
    mirrors_.erase(run_id);
  } else {
    mirrors_[run_id].last_seq = last;
  }
}

void RunMirrors::catch_up_all() {
  std::vector<std::string> ids;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, mirror] : mirrors_) ids.push_back(id);
  }
  for (const std::string& id : ids) catch_up(id);
}

std::size_t RunMirrors::size() {
  std::lock_guard lock(mutex_);
  return mirrors_.size();
}

std::int64_t RunMirrors::follow(const std::string& run_id, EventLog& log, std::int64_t last_seq) {
  // The record first: a run that ended stored its last events with its end, so reading them
  // afterwards reads them all.
  const std::optional<RunRecord> run = store_.get_run(run_id);
  for (LogEntry& entry : store_.run_events(run_id, last_seq)) {
    last_seq = entry.seq;
    log.append(std::move(entry));
  }
  if (!run || !run_is_active(*run)) log.close();
  return last_seq;
}

}  // namespace tollgate::server
