#include "server/cluster.h"

#include <chrono>

#include "core/thread_name.h"
#include "server/log.h"
#include "tollgate/error.h"

namespace tollgate::server {

Cluster::Cluster(ReplicaStore& store, ReplicaOptions options)
    : store_(store), options_(options), replica_id_(options_.id) {}

Cluster::~Cluster() {
  stop();
}

void Cluster::on_notification(const std::string& topic, Handler handler) {
  handlers_[topic] = std::move(handler);
}

void Cluster::join(const Json& info) {
  info_ = info;
  store_.register_replica(replica_id_, info_);
  healthy_ = true;
}

void Cluster::start() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }
  keeper_ = std::thread([this] {
    core::name_this_thread("tg-cluster");
    keep();
  });
}

void Cluster::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !keeper_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  keeper_.join();
  try {
    store_.deregister_replica(replica_id_);
  } catch (const std::exception& e) {
    // Its row goes stale instead; the other replicas adopt its runs after the timeout.
    log_warning("replica " + replica_id_ + " could not deregister: " + e.what());
  }
}

void Cluster::deliver(const std::string& topic, const std::string& payload) {
  auto it = handlers_.find(topic);
  if (it == handlers_.end()) return;
  try {
    it->second(payload);
  } catch (const std::exception& e) {
    log_error("notification " + topic + " " + payload + ": " + e.what());
  }
}

void Cluster::tick_now() {
  for (const auto& tick : ticks_) {
    try {
      tick();
    } catch (const std::exception& e) {
      // Storage may be down: the next tick reads again.
      log_warning(std::string("replica tick: ") + e.what());
    }
  }
}

void Cluster::beat() {
  try {
    if (store_.heartbeat(replica_id_)) {
      healthy_ = true;
      return;
    }
    log_error("replica " + replica_id_ +
              " was taken for dead by another replica, which took over its runs; it stops what "
              "it still executes and registers again");
    if (fenced_) fenced_();
    store_.register_replica(replica_id_, info_);
    healthy_ = true;
  } catch (const std::exception& e) {
    healthy_ = false;
    log_warning("replica " + replica_id_ + ": heartbeat failed: " + e.what());
  }
}

void Cluster::keep() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point next_beat = Clock::now() + options_.heartbeat;
  Clock::time_point next_tick = Clock::now();
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const Clock::time_point now = Clock::now();
    if (now >= next_beat || now >= next_tick) {
      lock.unlock();
      if (now >= next_beat) {
        beat();
        next_beat = now + options_.heartbeat;
      }
      if (now >= next_tick) {
        tick_now();
        next_tick = now + options_.poll;
      }
      lock.lock();
      continue;
    }
    wake_.wait_until(lock, std::min(next_beat, next_tick));
  }
}

}  // namespace tollgate::server
