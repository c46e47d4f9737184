// RunMirrors: the event logs of runs that execute on another replica, as the clients of this
// replica read them (join, stream, wait, cancel and wait). A mirror starts with what the run
// stored so far and follows the stored events — on a notification, or at each poll — until the
// run's record says it ended; then it is closed, and a waiting client reads the result from
// the store. Nothing is kept once nobody holds the log.
//
// Thread-safety: every method may be called from any thread. mutex_ guards mirrors_; one
// catch-up runs at a time (catching_up_), so the events of one run are appended once, in order.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "server/event_log.h"
#include "server/store.h"

namespace tollgate::server {

class RunMirrors {
 public:
  explicit RunMirrors(ServerStore& store) : store_(store) {}

  // The followed log of `run_id` (made and filled on first use); it closes once the run ends.
  std::shared_ptr<EventLog> open(const std::string& run_id);
  // Appends what the run stored since, and closes the log once the run ended.
  void catch_up(const std::string& run_id);
  void catch_up_all();
  std::size_t size();

 private:
  struct Mirror {
    std::weak_ptr<EventLog> log;
    std::int64_t last_seq = -1;
  };
  // Reads the run's new events into `log` from `last_seq` on; closes it when the run ended.
  // Returns the last seq read.
  std::int64_t follow(const std::string& run_id, EventLog& log, std::int64_t last_seq);

  ServerStore& store_;
  std::mutex catching_up_;
  std::mutex mutex_;
  std::map<std::string, Mirror> mirrors_;
};

}  // namespace tollgate::server
