// Cluster: this server as one of several replicas sharing one database (docs/deploy.md,
// "Several replicas"). It says this replica is alive (a heartbeat row, renewed by its keeper
// thread), calls its owner's tick on that thread at each poll, and hands on what other
// replicas tell (notifications, on PostgreSQL). The tables are the truth: a tick reads them
// again, so a notification that never arrived delays something by one poll, never loses it.
//
// A replica that finds its heartbeat row gone was taken for dead by another, which adopted its
// runs: the fenced handler is called (the run manager cancels what it still executes, whose
// ends the store then refuses to write), and the replica registers again.
//
// Thread-safety: set the handlers before start(); start() and stop() from one owner thread;
// notify_* and the accessors from any thread. Handlers run on the keeper thread or the
// listener's thread and must not block long.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/replica_store.h"
#include "tollgate/server.h"

namespace tollgate::server {

class Cluster {
 public:
  using Handler = std::function<void(const std::string& payload)>;

  // `store` must outlive the cluster. Named options.id ("" until set_replica_id()).
  Cluster(ReplicaStore& store, ReplicaOptions options);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  const std::string& replica_id() const { return replica_id_; }
  // Names this replica (before join()).
  void set_replica_id(std::string id) { replica_id_ = std::move(id); }
  const ReplicaOptions& options() const { return options_; }

  // Called at each poll (every options().poll) on the keeper thread, in the order added.
  void on_tick(std::function<void()> tick) { ticks_.push_back(std::move(tick)); }
  // Called on the keeper thread when this replica finds it was taken for dead.
  void on_fenced(std::function<void()> fenced) { fenced_ = std::move(fenced); }
  // Called for each notification on `topic` ("runs", "events", "cancels", "feed"), and with an empty
  // payload when notifications may have been missed (a reconnect): read the tables again.
  void on_notification(const std::string& topic, Handler handler);

  // Registers this replica: alive from now on (a row left by a previous process with the same
  // replica id is renewed: that process is gone).
  void join(const Json& info);
  // Starts the keeper thread (after join()).
  void start();
  // Stops the keeper thread and removes this replica's row: its runs that have not started are
  // adopted by the other replicas.
  void stop();
  // Hands a notification to its topic's handler (the listener calls this; tests too).
  void deliver(const std::string& topic, const std::string& payload);
  // Runs the tick now (tests; the keeper runs it on its own).
  void tick_now();
  // Whether the last heartbeat reached the database.
  bool healthy() const { return healthy_.load(); }

 private:
  void keep();
  void beat();

  ReplicaStore& store_;
  ReplicaOptions options_;
  std::string replica_id_;
  Json info_;
  std::vector<std::function<void()>> ticks_;
  std::function<void()> fenced_;
  std::map<std::string, Handler> handlers_;  // set before start(), then only read
  std::atomic<bool> healthy_{false};

  std::mutex mutex_;  // guards stopping_
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread keeper_;
};

}  // namespace tollgate::server
