// The review records of what a paused thread shows: one per action of each pending interrupt
// (one for an interrupt that is not a HITL request), with the digest of what was shown.
#pragma once

#include <string>
#include <vector>

#include "server/review_store.h"
#include "tollgate/clock.h"
#include "tollgate/json.h"

namespace tollgate::server {

// The member `snake` of `object`, else `camel` (HITL payloads come in both key styles), or
// nullptr (also when `object` is no object).
const Json* find_either(const Json& object, const char* snake, const char* camel);

// SHA-256 hex of {"args", "name"} of a HITL action request, as canonical (key-sorted) JSON.
std::string action_digest(const Json& action_request);

// The records (pending, new ids) for the interrupts `shown` (task id -> [{id, value}]) at
// `checkpoint_id`; tool_call_id is matched from the last AI message of `messages` (the
// thread's "messages", or null) by name and arguments, in order. Created at `clock`'s time,
// with ids by it.
std::vector<ReviewRecord> review_records_for(const std::string& thread_id,
                                             const std::string& checkpoint_id, const Json& shown,
                                             const Json& messages,
                                             const Clock& clock = system_clock());

// The interrupt ids of `shown`.
std::vector<std::string> interrupt_ids_of(const Json& shown);

}  // namespace tollgate::server
