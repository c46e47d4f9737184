#include "server/thread_access.h"

#include "tollgate/error.h"

namespace tollgate::server {
std::string thread_owner(const ThreadRecord& thread) {
  if (!thread.metadata.is_object()) return "";
  auto it = thread.metadata.find(kOwnerKey);
  return it != thread.metadata.end() && it->is_string() ? it->get<std::string>() : "";
}

namespace {

// Whether the thread's record still lists a pending interrupt.
bool pending_review(const ThreadRecord& thread) {
  if (!thread.interrupts.is_object()) return false;
  for (const auto& [task, interrupts] : thread.interrupts.items()) {
    if (interrupts.is_array() && !interrupts.empty()) return true;
  }
  return false;
}

}  // namespace

ThreadAccess thread_access(const Identity& who, const ThreadRecord& thread) {
  if (who.is_admin()) return ThreadAccess::kFull;
  if (who.empty()) return ThreadAccess::kNone;
  if (thread_owner(thread) == who.id) return ThreadAccess::kFull;
  // A review stays visible while a decision for it is queued (the thread then reads busy), so
  // a second reviewer deciding the same card is told it was decided (409), not "not found".
  if (who.has_role("reviewer") &&
      (thread.status == ThreadStatus::kInterrupted || pending_review(thread)))
    return ThreadAccess::kReview;
  return ThreadAccess::kNone;
}

void require_thread_use(const Identity& who, const ThreadRecord& thread, ThreadUse use) {
  const ThreadAccess access = thread_access(who, thread);
  if (access == ThreadAccess::kNone)
    throw Error::NotFound("Thread with ID " + thread.thread_id + " not found");
  if (access == ThreadAccess::kReview && use == ThreadUse::kChange) {
    throw Error::PermissionDenied("Thread " + thread.thread_id +
                                  ": a reviewer may read it and decide its pending review, "
                                  "not change it");
  }
}

void require_admin(const Identity& who, const std::string& what) {
  if (!who.is_admin()) throw Error::PermissionDenied("Only an admin may " + what);
}

void stamp_owner(Json& metadata, const Identity& creator) {
  if (!metadata.is_object()) metadata = Json::object();
  if (!creator.authenticated) return;
  if (creator.is_admin() && metadata.contains(kOwnerKey) && metadata[kOwnerKey].is_string())
    return;
  metadata[kOwnerKey] = creator.id;
}

void keep_owner(Json& metadata, const Json& previous) {
  if (!metadata.is_object()) return;
  metadata.erase(kOwnerKey);
  if (previous.is_object() && previous.contains(kOwnerKey)) metadata[kOwnerKey] = previous[kOwnerKey];
}

}  // namespace tollgate::server
