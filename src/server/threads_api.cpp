// Routes: /threads (§4.2) and thread state and history (§4.3).

#include "server/api.h"
#include "server/audit_log.h"
#include "server/ids.h"
#include "server/log.h"
#include "server/retention.h"
#include "server/review_claims.h"
#include "server/thread_timeline.h"
#include "server/wire_format.h"

namespace tollgate::server {
namespace {

// The live review claims, in the review configs of the threads shown (a failure to read them
// is logged: the threads are still shown).
void show_claims(ApiContext& context, std::vector<Json>& threads) {
  if (context.claims == nullptr) return;
  std::vector<Json*> all;
  for (Json& t : threads) all.push_back(&t);
  try {
    context.claims->show(all);
  } catch (const std::exception& e) {
    log_warning(std::string("review claims were not read: ") + e.what());
  }
}

// The graph that ran on the thread, or nullptr if it never ran.
const CompiledGraph* thread_graph(ApiContext& context, const ThreadRecord& thread) {
  const std::string graph_id = string_member(thread.metadata, "graph_id");
  return graph_id.empty() ? nullptr : context.runs.graph(graph_id);
}

Json state_of(ApiContext& context, const ThreadRecord& thread, const std::string& checkpoint_id,
              const std::string& checkpoint_ns, bool subgraphs) {
  const CompiledGraph* graph = thread_graph(context, thread);
  if (graph == nullptr) return empty_state_json();
  RunConfig config;
  config.thread_id = thread.thread_id;
  config.checkpoint_id = checkpoint_id;
  config.checkpoint_ns = checkpoint_ns;
  StateSnapshot snapshot = graph->get_state(config, subgraphs);
  if (!checkpoint_id.empty() && snapshot.config.checkpoint_id.empty()) {
    throw Error::NotFound("Checkpoint " + checkpoint_id + " not found");
  }
  return state_to_json(snapshot);
}

bool query_flag(const HttpRequest& request, const std::string& name) {
  auto value = request.query_value(name);
  return value && (*value == "true" || *value == "1");
}

// Appends the audit entry of a state write: who, the interrupts pending at the thread's latest
// checkpoint (what the write may answer or bypass), and the request body.
std::int64_t audit_state_write(ApiContext& context, const HttpRequest& request,
                               const ThreadRecord& thread, const CompiledGraph& graph,
                               const Json& body) {
  RunConfig latest;
  latest.thread_id = thread.thread_id;
  StateSnapshot snapshot = graph.get_state(latest);
  AuditEntry entry;
  entry.kind = "state_write";
  entry.thread_id = thread.thread_id;
  entry.assistant_id = string_member(thread.metadata, "assistant_id");
  entry.graph_id = string_member(thread.metadata, "graph_id");
  entry.reviewer = audit_identity(request.identity);
  entry.checkpoint_id = snapshot.config.checkpoint_id;
  entry.shown = interrupts_by_task(snapshot);
  entry.decided = body;
  return context.audit->append(entry);
}

// A checkpoint id given as a string or as a config {"configurable": {"checkpoint_id": ...}}
// or {"checkpoint_id": ...}.
std::optional<std::string> checkpoint_id_of(const Json& value, const std::string& field) {
  if (value.is_null()) return std::nullopt;
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object()) {
    const Json& inner = value.contains("configurable") ? value["configurable"] : value;
    if (inner.is_object() && inner.contains("checkpoint_id") &&
        inner["checkpoint_id"].is_string()) {
      return inner["checkpoint_id"].get<std::string>();
    }
    if (inner.is_object() &&
        (!inner.contains("checkpoint_id") || inner["checkpoint_id"].is_null())) {
      return std::nullopt;
    }
  }
  throw Error::InvalidArgument(field + ": must be a checkpoint id or a config naming one");
}

// The visibility rule of thread_access() for a search.
ThreadVisibility visibility_of(const Identity& who) {
  ThreadVisibility visible;
  visible.all = who.is_admin();
  if (visible.all || who.empty()) return visible;
  visible.owner = who.id;
  visible.reviewer = who.has_role("reviewer");
  return visible;
}

ThreadFilter thread_filter(const Json& body, const Identity& who) {
  ThreadFilter filter;
  filter.metadata = optional_object(body, "metadata");
  filter.values = optional_object(body, "values");
  if (const std::optional<std::string> status = optional_string(body, "status")) {
    filter.status = thread_status_named(*status);
    if (!filter.status) {
      throw Error::InvalidArgument("status: invalid value \"" + *status +
                                   "\"; expected one of idle, busy, interrupted, error");
    }
  }
  if (body.contains("ids") && !body["ids"].is_null()) {
    if (!body["ids"].is_array()) throw Error::InvalidArgument("ids: must be an array of thread ids");
    for (const Json& id : body["ids"]) {
      if (!id.is_string()) throw Error::InvalidArgument("ids: must be an array of thread ids");
      filter.ids.push_back(id.get<std::string>());
    }
  }
  filter.visible = visibility_of(who);
  return filter;
}

// The thread TTL of a request body: {"ttl": {"ttl": minutes, "strategy": "delete"}} (or the
// minutes alone), in milliseconds; nullopt when absent or null.
std::optional<std::int64_t> ttl_of(const Json& body) {
  if (!body.contains("ttl") || body["ttl"].is_null()) return std::nullopt;
  Json ttl = body["ttl"];
  if (ttl.is_object()) {
    if (ttl.contains("strategy") && !ttl["strategy"].is_null() && ttl["strategy"] != "delete") {
      throw Error::InvalidArgument("ttl.strategy: invalid value; expected delete");
    }
    ttl = ttl.value("ttl", Json());
  }
  if (!ttl.is_number() || ttl.get<double>() <= 0 || ttl.get<double>() > 1e9) {
    throw Error::InvalidArgument("ttl.ttl: must be a positive number of minutes");
  }
  return static_cast<std::int64_t>(ttl.get<double>() * 60000.0);
}

Json history(ApiContext& context, const ThreadRecord& thread, const Json& body) {
  const CompiledGraph* graph = thread_graph(context, thread);
  if (graph == nullptr) return Json::array();
  std::size_t limit = optional_count(body, "limit", 10);
  RunConfig config;
  config.thread_id = thread.thread_id;
  ListQuery query;
  query.limit = limit;
  if (body.contains("before")) {
    if (auto before = checkpoint_id_of(body["before"], "before")) query.before = *before;
  }
  if (body.contains("metadata") && !body["metadata"].is_null()) {
    query.filter = optional_object(body, "metadata");
  }
  optional_object(body, "checkpoint");
  config.checkpoint_ns = optional_string(body, "checkpoint.checkpoint_ns").value_or("");
  config.checkpoint_id = optional_string(body, "checkpoint.checkpoint_id").value_or("");
  Json out = Json::array();
  for (const StateSnapshot& snapshot : graph->get_state_history(config, query)) {
    out.push_back(state_to_json(snapshot));
  }
  return out;
}

// The sources of a thread's timeline: its runs (with their stored error events), its root
// checkpoints and its audit entries.
Json timeline_of(ApiContext& context, const ThreadRecord& thread) {
  TimelineSources sources;
  sources.thread = &thread;
  sources.runs = context.store.list_runs(thread.thread_id);
  for (const RunRecord& run : sources.runs) {
    if (run.status != RunStatus::kError && run.status != RunStatus::kTimeout) continue;
    for (const LogEntry& entry : context.store.run_events(run.run_id)) {
      if (entry.event == "error") sources.run_errors.emplace_back(run.run_id, Json::parse(entry.data, nullptr, false));
    }
  }
  if (const CompiledGraph* graph = thread_graph(context, thread)) {
    RunConfig config;
    config.thread_id = thread.thread_id;
    sources.checkpoints = graph->get_state_history(config, ListQuery{});
  }
  if (context.audit != nullptr) {
    AuditQuery query;
    query.thread_id = thread.thread_id;
    query.limit = 1000000;  // every entry of the thread
    sources.audit = context.audit->list(query);
  }
  return thread_timeline(sources);
}

}  // namespace

void add_thread_routes(Router& router, ApiContext& context) {
  ApiContext* ctx = &context;

  router.add("POST", "/threads", [ctx](HttpRequest& request) {
    Json body = require_object_body(request);
    Json metadata = optional_object(body, "metadata");
    std::string if_exists = enum_field(body, "if_exists", {"raise", "do_nothing"}, "raise");
    std::string thread_id = optional_string(body, "thread_id").value_or(new_uuid7(*ctx->clock));
    require_uuid(thread_id, "thread_id");
    std::optional<std::int64_t> ttl = ttl_of(body);
    if (!ttl) ttl = ctx->default_ttl_ms;
    stamp_owner(metadata, request.identity);
    ThreadRecord thread = new_thread_record(thread_id, metadata, *ctx->clock);
    if (!ctx->store.create_thread(thread)) {
      auto existing = ctx->store.get_thread(thread_id);
      if (if_exists == "do_nothing" && existing &&
          thread_access(request.identity, *existing) != ThreadAccess::kNone) {
        return HttpResponse::json(thread_to_json(*existing));
      }
      throw Error::Conflict("Thread already exists");
    }
    if (ttl) ctx->store.set_thread_ttl(thread_id, ttl);
    return HttpResponse::json(thread_to_json(thread));
  });

  router.add("POST", "/threads/prune", [ctx](HttpRequest& request) {
    Json body = require_object_body(request);
    if (!body.contains("thread_ids") || !body["thread_ids"].is_array())
      throw Error::InvalidArgument("thread_ids: required, an array of thread ids");
    std::string strategy = enum_field(body, "strategy", {"delete", "keep_latest"}, "delete");
    if (ctx->retention == nullptr) throw Error::Unavailable("pruning is not available");
    std::vector<std::string> ids;
    for (const Json& id : body["thread_ids"]) {
      if (!id.is_string()) throw Error::InvalidArgument("thread_ids: must be an array of thread ids");
      // Only threads the caller may change; others are left alone (and not counted).
      auto thread = ctx->store.get_thread(id.get<std::string>());
      if (thread && thread_access(request.identity, *thread) == ThreadAccess::kFull)
        ids.push_back(thread->thread_id);
    }
    std::size_t pruned = ctx->retention->prune(
        ids, strategy == "delete" ? PruneStrategy::kDelete : PruneStrategy::kKeepLatest);
    return HttpResponse::json({{"pruned_count", pruned}});
  });

  router.add("POST", "/threads/search", [ctx](HttpRequest& request) {
    Json body = require_object_body(request);
    std::size_t limit = optional_count(body, "limit", 10);
    std::size_t offset = optional_count(body, "offset", 0);
    std::string sort_by = enum_field(
        body, "sort_by", {"thread_id", "status", "created_at", "updated_at"}, "created_at");
    std::string order = enum_field(body, "sort_order", {"asc", "desc"}, "desc");
    ThreadFilter filter = thread_filter(body, request.identity);
    ThreadPage page{sort_by, order == "asc", limit, offset};
    std::vector<ThreadRecord> found = ctx->store.search_threads(filter, page);
    const std::size_t total = ctx->store.count_threads(filter);
    std::vector<Json> shown;
    for (const ThreadRecord& thread : found) shown.push_back(thread_to_json(thread));
    show_claims(*ctx, shown);
    Json out = Json::array();
    Json select = body.value("select", Json());
    for (Json& t : shown) {
      if (select.is_array() && !select.empty()) {
        Json picked = Json::object();
        for (const Json& field : select) {
          if (field.is_string() && t.contains(field.get<std::string>())) {
            picked[field.get<std::string>()] = t[field.get<std::string>()];
          }
        }
        t = picked;
      }
      out.push_back(std::move(t));
    }
    HttpResponse response = HttpResponse::json(out);
    response.add_header("X-Pagination-Total", std::to_string(total));
    if (offset + limit < total) {
      response.add_header("X-Pagination-Next", std::to_string(offset + limit));
    }
    return response;
  });

  router.add("POST", "/threads/count", [ctx](HttpRequest& request) {
    return HttpResponse::json(
        ctx->store.count_threads(thread_filter(require_object_body(request), request.identity)));
  });

  router.add("GET", "/threads/:thread_id", [ctx](HttpRequest& request) {
    std::vector<Json> shown{thread_to_json(require_thread(*ctx, request.params[0], request.identity))};
    show_claims(*ctx, shown);
    return HttpResponse::json(shown.front());
  });

  router.add("PATCH", "/threads/:thread_id", [ctx](HttpRequest& request) {
    Json body = require_object_body(request);
    require_uuid(request.params[0], "thread_id");
    ThreadRecord thread =
        require_thread_head(*ctx, request.params[0], request.identity, ThreadUse::kChange);
    Json metadata = optional_object(body, "metadata");
    std::optional<std::int64_t> ttl = ttl_of(body);
    if (request.identity.authenticated && !request.identity.is_admin())
      keep_owner(metadata, thread.metadata);
    if (ttl) ctx->store.set_thread_ttl(thread.thread_id, ttl);
    // Only the metadata is written, so a run ending meanwhile keeps the status it stored.
    auto merged =
        ctx->store.merge_thread_metadata(thread.thread_id, metadata, now_millis(*ctx->clock));
    if (!merged) throw Error::NotFound("Thread with ID " + request.params[0] + " not found");
    return HttpResponse::json(thread_to_json(*merged));
  });

  router.add("DELETE", "/threads/:thread_id", [ctx](HttpRequest& request) {
    ThreadRecord thread =
        require_thread_head(*ctx, request.params[0], request.identity, ThreadUse::kChange);
    ctx->runs.delete_thread(thread.thread_id, ctx->saver.get());
    return HttpResponse::empty(204);
  });

  router.add("POST", "/threads/:thread_id/copy", [ctx](HttpRequest& request) {
    ThreadRecord source = require_thread(*ctx, request.params[0], request.identity);
    ThreadRecord copy = source;
    copy.thread_id = new_uuid7(*ctx->clock);
    if (request.identity.authenticated) copy.metadata[kOwnerKey] = request.identity.id;
    copy.created_at = copy.updated_at = now_millis(*ctx->clock);
    if (copy.status == ThreadStatus::kBusy) copy.status = ThreadStatus::kIdle;
    if (ctx->saver) ctx->saver->copy_thread(source.thread_id, copy.thread_id);
    ctx->store.create_thread(copy);
    return HttpResponse::json(thread_to_json(copy));
  });

  router.add("GET", "/threads/:thread_id/state", [ctx](HttpRequest& request) {
    ThreadRecord thread = require_thread(*ctx, request.params[0], request.identity);
    return HttpResponse::json(state_of(*ctx, thread, "", "", query_flag(request, "subgraphs")));
  });

  router.add("GET", "/threads/:thread_id/state/:checkpoint_id", [ctx](HttpRequest& request) {
    ThreadRecord thread = require_thread(*ctx, request.params[0], request.identity);
    return HttpResponse::json(
        state_of(*ctx, thread, request.params[1], "", query_flag(request, "subgraphs")));
  });

  router.add("POST", "/threads/:thread_id/state/checkpoint", [ctx](HttpRequest& request) {
    Json body = require_object_body(request);
    ThreadRecord thread = require_thread(*ctx, request.params[0], request.identity);
    optional_object(body, "checkpoint");
    return HttpResponse::json(
        state_of(*ctx, thread, optional_string(body, "checkpoint.checkpoint_id").value_or(""),
                 optional_string(body, "checkpoint.checkpoint_ns").value_or(""),
                 optional_bool(body, "subgraphs", false)));
  });

  router.add("POST", "/threads/:thread_id/state", [ctx](HttpRequest& request) {
    Json body = require_object_body(request);
    ThreadRecord thread =
        require_thread(*ctx, request.params[0], request.identity, ThreadUse::kChange);
    const CompiledGraph* graph = thread_graph(*ctx, thread);
    if (graph == nullptr) {
      throw Error::InvalidArgument("Thread " + thread.thread_id +
                               " has no graph yet: start a run on it before updating its state");
    }
    if (ctx->runs.thread_active(thread.thread_id)) throw Error::Conflict("Thread is busy");
    if (!body.contains("values"))
      throw Error::InvalidArgument("values: required (an object, a list or null)");
    const Json& values = body["values"];
    if (!values.is_null() && !values.is_object() && !values.is_array()) {
      throw Error::InvalidArgument("values: must be an object, a list of objects or null");
    }
    RunConfig config;
    config.thread_id = thread.thread_id;
    if (auto id = optional_string(body, "checkpoint_id")) config.checkpoint_id = *id;
    optional_object(body, "checkpoint");
    if (auto id = optional_string(body, "checkpoint.checkpoint_id")) config.checkpoint_id = *id;
    config.checkpoint_ns = optional_string(body, "checkpoint.checkpoint_ns").value_or("");
    std::string as_node = optional_string(body, "as_node").value_or("");
    Json normalized = values.is_array() ? values : normalize_input(values);
    // A state write can answer or bypass a review: it is audited like a decision, before it
    // is applied (fail closed) and settled after.
    std::optional<std::int64_t> audit_id;
    if (ctx->audit != nullptr) audit_id = audit_state_write(*ctx, request, thread, *graph, body);
    CheckpointConfig result;
    try {
      result = graph->update_state(config, normalized, as_node);
    } catch (const std::exception& e) {
      if (audit_id) ctx->audit->settle(*audit_id, "refused", e.what());
      throw;
    }
    if (audit_id) ctx->audit->settle(*audit_id, "applied");
    ctx->runs.record_state_update(thread.thread_id, string_member(thread.metadata, "graph_id"));
    return HttpResponse::json({{"checkpoint",
                                {{"thread_id", result.thread_id},
                                 {"checkpoint_ns", result.checkpoint_ns},
                                 {"checkpoint_id", result.checkpoint_id}}}});
  });

  // A Tollgate extension: what happened on the thread, run by run (docs/timeline.md).
  router.add("GET", "/threads/:thread_id/timeline", [ctx](HttpRequest& request) {
    ThreadRecord thread = require_thread(*ctx, request.params[0], request.identity);
    const std::string format = request.query_value("format").value_or("json");
    if (format != "json" && format != "otel")
      throw Error::InvalidArgument("format: invalid value \"" + format + "\"; expected json or otel");
    Json timeline = timeline_of(*ctx, thread);
    return HttpResponse::json(format == "otel" ? timeline_to_otel(timeline) : timeline);
  });

  router.add("POST", "/threads/:thread_id/history", [ctx](HttpRequest& request) {
    Json body = require_object_body(request);
    ThreadRecord thread = require_thread(*ctx, request.params[0], request.identity);
    return HttpResponse::json(history(*ctx, thread, body));
  });

  router.add("GET", "/threads/:thread_id/history", [ctx](HttpRequest& request) {
    ThreadRecord thread = require_thread(*ctx, request.params[0], request.identity);
    Json body = Json::object();
    if (auto limit = request.query_value("limit")) {
      try {
        body["limit"] = std::stoi(*limit);
      } catch (const std::exception&) {
        throw Error::InvalidArgument("limit: must be a non-negative integer");
      }
    }
    if (auto before = request.query_value("before")) body["before"] = *before;
    return HttpResponse::json(history(*ctx, thread, body));
  });
}

}  // namespace tollgate::server
