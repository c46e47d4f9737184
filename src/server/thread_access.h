// Who may see and change a thread (docs/security.md). A thread belongs to the identity that
// created it, kept in its metadata under "owner" (the key LangGraph's custom auth examples
// use); the server sets it and clients cannot change it. Role "user": its own threads only;
// "reviewer": also every thread with a pending review, to read and decide; "admin": all.
// A thread one may not see is answered as unknown (404), never as forbidden.
#pragma once

#include <string>

#include "server/identity.h"
#include "server/store.h"
#include "tollgate/json.h"

namespace tollgate::server {

inline constexpr const char* kOwnerKey = "owner";

enum class ThreadAccess {
  kNone,    // not visible: 404
  kReview,  // a reviewer's view of a pending review: read it, decide it
  kFull,    // owner, admin, or the local user of a server without auth
};

// What the request may do with a thread.
enum class ThreadUse {
  kRead,    // get, state, history, runs, streams, audit
  kDecide,  // a run that resumes a pause (a review's decision)
  kChange,  // anything else: new input, state updates, metadata, deletion, cancel
};

ThreadAccess thread_access(const Identity& who, const ThreadRecord& thread);

// Throws Error(kNotFound) "Thread with ID <id> not found" when `who` may not see the thread,
// Error(kPermissionDenied) when it may see it but not use it so.
void require_thread_use(const Identity& who, const ThreadRecord& thread, ThreadUse use);

// The id of the thread's owner ("" when it has none).
std::string thread_owner(const ThreadRecord& thread);

// The "owner" of new thread metadata: the creator, unless an admin names someone else.
// A server without auth (the local user) records none.
void stamp_owner(Json& metadata, const Identity& creator);

// Assistants are configuration: only an admin may create, change or delete them (403).
void require_admin(const Identity& who, const std::string& what);

// Metadata a client sent to replace a thread's: the owner is kept as it was.
void keep_owner(Json& metadata, const Json& previous);

}  // namespace tollgate::server
