// The live channels (or channel values) of the last checkpoint a run of (saver, thread, namespace) ended
// on. The next run of that thread asks the saver not to load values it already holds
// (GetOptions::reuse_values_of) and takes them from here, so a turn neither reloads nor
// reconstructs a long message list. Entries are moved out on take(), so the new run's
// channels own the values alone again and can append in place.
//
// Bounded: the oldest entries are dropped beyond `capacity`.
// Thread-safety: every method may be called concurrently; one mutex guards the entries.
#pragma once

#include <cstddef>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/channel.h"
#include "tollgate/json.h"

namespace tollgate {
class Saver;
}

namespace tollgate::graph_internal {

// Either the channels themselves (the run ended exactly on the checkpoint: the next run
// adopts them, so nothing is restored or re-indexed) or their values.
struct CachedValues {
  std::string checkpoint_id;
  std::map<std::string, JsonPtr, std::less<>> values;
  // By name, in the run's channel order (read in order, never looked up).
  std::vector<std::pair<std::string, std::unique_ptr<Channel>>> channels;
};

class ValuesCache {
 public:
  explicit ValuesCache(std::size_t capacity = 256) : capacity_(capacity) {}

  // Removes and returns the entry of (saver, thread, ns), if any.
  std::optional<CachedValues> take(const Saver* saver, const std::string& thread_id,
                                   const std::string& checkpoint_ns);
  // The values of the entry of (saver, thread, ns), which stays in place: shared references,
  // so a channel that later edits its list in place sees the extra holder and copies instead.
  // For reads of a thread's state between its runs (the entry's `channels` are left empty).
  std::optional<CachedValues> peek(const Saver* saver, const std::string& thread_id,
                                   const std::string& checkpoint_ns);
  void put(const Saver* saver, const std::string& thread_id, const std::string& checkpoint_ns,
           CachedValues values);
  // Forgets every entry of a thread (e.g. after update_state wrote a new checkpoint).
  void forget(const Saver* saver, const std::string& thread_id);

 private:
  struct Key {
    const Saver* saver;
    std::string thread_id;
    std::string checkpoint_ns;
    bool operator<(const Key& other) const;
  };
  struct Entry {
    CachedValues values;
    std::list<Key>::iterator age;
  };

  std::size_t capacity_;
  std::mutex mutex_;  // guards entries_ and ages_
  std::map<Key, Entry> entries_;
  std::list<Key> ages_;  // oldest first
};

}  // namespace tollgate::graph_internal
