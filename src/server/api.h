// The HTTP API's route groups (AGENT_SERVER_API.md §1.3, §4, §8) and what they share.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/router.h"
#include "server/run_manager.h"
#include "server/store.h"
#include "server/thread_access.h"
#include "server/thread_streams.h"
#include "tollgate/checkpoint.h"
#include "tollgate/error.h"

namespace tollgate::server {

class AuditLog;
class Notifications;
class Retention;
class ReviewClaims;

class Cluster;

struct ApiContext {
  ServerStore& store;
  RunManager& runs;
  ThreadStreams& streams;
  std::shared_ptr<Saver> saver;
  AuditLog* audit = nullptr;  // the review audit log (GET /audit); null: none kept
  bool auth_enabled = false;  // requests carry credentials (ServerOptions::auth)
  Notifications* notifications = nullptr;  // webhooks and the review stream; null: none
  Retention* retention = nullptr;  // POST /threads/prune; null: refused
  std::optional<std::int64_t> default_ttl_ms;  // of threads created without a ttl
  ReviewClaims* claims = nullptr;  // POST/DELETE /threads/{id}/claim; null: refused
  // Several replicas: this replica in its cluster (GET /ok says whether its heartbeat reaches
  // the database, /info names it); null when the server runs alone.
  const Cluster* cluster = nullptr;
  const Clock* clock = &system_clock();  // ServerOptions::clock: thread and assistant times
};

void add_meta_routes(Router& router, ApiContext& context);
void add_assistant_routes(Router& router, ApiContext& context);
void add_thread_routes(Router& router, ApiContext& context);
void add_run_routes(Router& router, ApiContext& context);
void add_protocol_routes(Router& router, ApiContext& context);
void add_audit_routes(Router& router, ApiContext& context);
void add_notification_routes(Router& router, ApiContext& context);
void add_claim_routes(Router& router, ApiContext& context);

// ------------------------------------------------------------------ shared by the routes

// The assistant named by an assistant id or a graph id; nullopt if neither.
std::optional<AssistantRecord> find_assistant(ApiContext& context, const std::string& id_or_graph);
// As find_assistant, 404 with the reference server's message when unknown.
AssistantRecord require_assistant_for_run(ApiContext& context, const std::string& id_or_graph);
// The thread, 400 if the id is not a UUID, 404 if unknown or not visible to `who`, 403 if
// `who` may see it but not use it so (thread_access.h).
ThreadRecord require_thread(ApiContext& context, const std::string& thread_id, const Identity& who,
                            ThreadUse use = ThreadUse::kRead);
// The same without the thread's values (ServerStore::get_thread_head): for a route that only
// checks access or reads the metadata, status and interrupts, so that its cost does not grow
// with the thread.
ThreadRecord require_thread_head(ApiContext& context, const std::string& thread_id,
                                 const Identity& who, ThreadUse use = ThreadUse::kRead);
void require_uuid(const std::string& value, const std::string& field);
// Records who asks for `run` (RunRequest::set_actors); a resume looks up who started the
// thread's earlier runs.
void set_run_actors(ApiContext& context, const Identity& requester, RunRequest& run);
// A new idle thread record (not stored), created at `clock`'s time.
ThreadRecord new_thread_record(const std::string& thread_id, const Json& metadata,
                               const Clock& clock);

// A head gate (LogStreamBody::Options::head_gate) for a run that may be refused before it
// does anything (a resume the graph or the HITL middleware rejects): it holds the response
// head until the run is decided — refused, ended, or past its first step. A refusal turns the
// head into its HTTP error ({"detail": message}, or what `refused` builds); otherwise
// `accepted` may rewrite the head (e.g. into a plain JSON answer; empty: keep the stream).
using HeadRewrite = std::function<void(HttpResponse& head)>;
using RefusalRewrite = std::function<HttpResponse(int status, const std::string& message)>;
std::function<bool(HttpResponse&)> refusal_gate(const std::shared_ptr<EventLog>& log,
                                                HeadRewrite accepted = {},
                                                RefusalRewrite refused = {});

// Checks a run's Command ({"resume", "update", "goto"}) against the graph it will run on, before
// the run is created, so that a Command refused for any field leaves nothing behind: the shape
// Command::from_json reads, goto targets (and Send nodes) that are nodes of `graph`, and no goto
// together with a resume — the goto's tasks would run in the resumed step beside the task that
// consumes the decision, and one failing after it would spend the pause. Throws
// Error(kInvalidArgument) naming the field, `prefix` first ("command." or "" for v2 params).
void validate_command(const Json& command, const CompiledGraph* graph, const std::string& prefix);

// Field readers, the parsing boundary of a request: each throws Error(kInvalidArgument) naming
// the field when the type is wrong, so a JSON type error never escapes from request data.
// `field` may be a dotted path into nested objects ("checkpoint.checkpoint_id"); a missing or
// null member (at any level) is absent.
Json require_object_body(const HttpRequest& request);
// The member at `path`, nullptr when absent or null.
const Json* find_field(const Json& body, std::string_view path);
std::optional<std::string> optional_string(const Json& body, const std::string& field);
std::string enum_field(const Json& body, const std::string& field,
                       const std::vector<std::string>& allowed, const std::string& fallback);
Json optional_object(const Json& body, const std::string& field);
bool optional_bool(const Json& body, const std::string& field, bool fallback);
std::size_t optional_count(const Json& body, const std::string& field, std::size_t fallback);
// A string member of a stored object (e.g. a thread's metadata, which clients may rewrite),
// "" when `object` is not an object or the member is absent or not a string.
std::string string_member(const Json& object, const std::string& key);

}  // namespace tollgate::server
