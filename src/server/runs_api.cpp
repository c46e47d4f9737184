// Routes: runs (§4.4) with their SSE streams (§5), join and cancel.
#include <chrono>

#include "server/api.h"
#include "server/ids.h"
#include "server/log_stream_body.h"
#include "server/wire_format.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

const std::vector<std::string> kStreamModes = {"values", "messages", "messages-tuple", "updates",
                                               "events", "tasks",    "checkpoints",    "debug",
                                               "custom", "tools",    "lifecycle"};

std::vector<std::string> node_list(const Json& body, const std::string& field) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return {};
  if (it->is_string()) {
    if (it->get<std::string>() != "*")
      throw Error::InvalidArgument(field + ": must be \"*\" or a list of node names");
    return {"*"};
  }
  if (!it->is_array())
    throw Error::InvalidArgument(field + ": must be \"*\" or a list of node names");
  std::vector<std::string> out;
  for (const Json& node : *it) {
    if (!node.is_string())
      throw Error::InvalidArgument(field + ": must be \"*\" or a list of node names");
    out.push_back(node.get<std::string>());
  }
  return out;
}

struct ParsedRun {
  RunRequest request;
  AssistantRecord assistant;  // request.assistant_id's, as read for it
  std::string on_disconnect;
  std::string if_not_exists;
  std::string on_completion;
};

ParsedRun parse_run(ApiContext& context, const Json& body) {
  ParsedRun parsed;
  RunRequest& r = parsed.request;
  auto assistant_id = optional_string(body, "assistant_id");
  if (!assistant_id) throw Error::InvalidArgument("assistant_id: required");
  parsed.assistant = require_assistant_for_run(context, *assistant_id);
  const AssistantRecord& assistant = parsed.assistant;
  r.assistant_id = assistant.assistant_id;
  r.input = body.value("input", Json());
  if (body.contains("command") && !body["command"].is_null()) {
    validate_command(body["command"], context.runs.graph(assistant.graph_id), "command.");
    r.command = body["command"];
  }
  if (body.contains("stream_mode") && !body["stream_mode"].is_null()) {
    Json modes = body["stream_mode"];
    if (modes.is_string()) modes = Json::array({modes});
    if (!modes.is_array())
      throw Error::InvalidArgument("stream_mode: must be a mode name or a list of them");
    r.stream_modes.clear();
    for (std::size_t i = 0; i < modes.size(); ++i) {
      const Json& mode = modes[i];
      if (!mode.is_string() || std::find(kStreamModes.begin(), kStreamModes.end(),
                                         mode.get<std::string>()) == kStreamModes.end()) {
        throw Error::InvalidArgument("stream_mode[" + std::to_string(i) + "]: invalid value " +
                                     mode.dump() +
                                     "; expected one of values, messages, messages-tuple, updates, "
                                     "events, tasks, checkpoints, debug, custom, tools");
      }
      r.stream_modes.push_back(mode.get<std::string>());
    }
    if (r.stream_modes.empty()) r.stream_modes = {"values"};
  }
  r.stream_subgraphs = optional_bool(body, "stream_subgraphs", false);
  r.stream_resumable = optional_bool(body, "stream_resumable", false);
  r.config = optional_object(body, "config");
  r.context =
      body.contains("context") && !body["context"].is_null() ? body["context"] : Json::object();
  r.metadata = optional_object(body, "metadata");
  r.multitask_strategy = enum_field(body, "multitask_strategy",
                                    {"reject", "interrupt", "rollback", "enqueue"}, "reject");
  parsed.on_disconnect = enum_field(body, "on_disconnect", {"cancel", "continue"}, "continue");
  parsed.if_not_exists = enum_field(body, "if_not_exists", {"reject", "create"}, "reject");
  parsed.on_completion = enum_field(body, "on_completion", {"delete", "keep"}, "delete");
  if (auto id = optional_string(body, "checkpoint_id")) r.checkpoint_id = *id;
  if (body.contains("checkpoint") && !body["checkpoint"].is_null()) {
    Json checkpoint = optional_object(body, "checkpoint");
    if (checkpoint.contains("checkpoint_id") && checkpoint["checkpoint_id"].is_string()) {
      r.checkpoint_id = checkpoint["checkpoint_id"].get<std::string>();
    }
  }
  r.interrupt_before = node_list(body, "interrupt_before");
  r.interrupt_after = node_list(body, "interrupt_after");
  if (body.contains("after_seconds") && !body["after_seconds"].is_null()) {
    if (!body["after_seconds"].is_number() || body["after_seconds"].get<double>() < 0) {
      throw Error::InvalidArgument("after_seconds: must be a non-negative number");
    }
    r.after_seconds = body["after_seconds"].get<double>();
  }
  return parsed;
}

// Makes sure the run's thread exists and `who` may run on it (a resume is a decision):
// creates it, owned by `who`, for if_not_exists=create, else 404. Returns the thread's head as
// read, or nullopt when it was created here.
std::optional<ThreadRecord> ensure_thread(ApiContext& context, const std::string& thread_id,
                                          const std::string& if_not_exists, const Identity& who,
                                          bool resumes) {
  require_uuid(thread_id, "thread_id");
  if (auto thread = context.store.get_thread_head(thread_id)) {
    require_thread_use(who, *thread, resumes ? ThreadUse::kDecide : ThreadUse::kChange);
    return thread;
  }
  if (if_not_exists != "create")
    throw Error::NotFound("Thread with ID " + thread_id + " not found");
  Json metadata = Json::object();
  stamp_owner(metadata, who);
  context.store.create_thread(new_thread_record(thread_id, metadata, *context.clock));
  return std::nullopt;
}

// The run of a thread `who` may see (404 otherwise), for `use`.
RunRecord require_visible_run(ApiContext& context, const std::string& run_id, const Identity& who,
                              ThreadUse use) {
  auto run = context.store.get_run(run_id);
  if (!run) throw Error::NotFound("Run not found");
  auto thread = context.store.get_thread_head(run->thread_id);
  if (!thread || thread_access(who, *thread) == ThreadAccess::kNone)
    throw Error::NotFound("Run not found");
  require_thread_use(who, *thread, use);
  return *run;
}

std::string run_path(const RunRecord& run, bool stateless) {
  return stateless ? "/runs/" + run.run_id : "/threads/" + run.thread_id + "/runs/" + run.run_id;
}

// Starts a run for a thread route (thread_id given) or a stateless route (empty).
RunRecord start_run(ApiContext& context, const Identity& requester, ParsedRun& parsed,
                    const std::string& thread_id) {
  std::optional<ThreadRecord> head;
  if (thread_id.empty()) {
    std::string temporary_id = new_uuid7(*context.clock);
    Json metadata = Json::object();
    stamp_owner(metadata, requester);
    context.store.create_thread(new_thread_record(temporary_id, metadata, *context.clock));
    parsed.request.thread_id = temporary_id;
    parsed.request.temporary = parsed.on_completion == "delete";
  } else {
    head = ensure_thread(context, thread_id, parsed.if_not_exists, requester,
                         parsed.request.resumes());
    parsed.request.thread_id = thread_id;
  }
  set_run_actors(context, requester, parsed.request);
  try {
    return context.runs.submit(parsed.request, {}, head ? &*head : nullptr, &parsed.assistant);
  } catch (...) {
    if (thread_id.empty()) context.store.delete_thread(parsed.request.thread_id);
    throw;
  }
}

// The answer of /runs/wait and /join once the run ended with `result`.
HttpResponse result_response(ApiContext& context, const std::string& run_id,
                             const std::shared_ptr<const std::string>& result,
                             const std::string& content_location) {
  std::shared_ptr<EventLog> log = context.runs.events(run_id);
  auto rejection = log ? log->rejection() : std::nullopt;
  HttpResponse plain = rejection ? HttpResponse::error(rejection->first, rejection->second)
                                 : HttpResponse::json_shared(result);
  if (!content_location.empty()) plain.add_header("Content-Location", content_location);
  return plain;
}

// How long a wait or join whose followed run ended in the store waits for this replica, which
// executed it, to finish it (moments: its end is already stored).
constexpr std::chrono::seconds kFinishingPatience{10};

// A head gate that answers with the run's result once it ended (wait, join), woken by `log`,
// the run's event log the response follows. A run this server ran lately is answered from
// memory; any other (ended long ago, or running on another replica) from the store, on the
// handler pool.
std::function<bool(HttpResponse&)> result_gate(ApiContext& context, const std::string& run_id,
                                               std::string content_location,
                                               const std::shared_ptr<EventLog>& log) {
  ApiContext* ctx = &context;
  std::weak_ptr<EventLog> followed = log;
  return [ctx, run_id, content_location, followed](HttpResponse& head) {
    bool store_needed = false;
    std::shared_ptr<const std::string> result = ctx->runs.known_result(run_id, store_needed);
    auto log_now = followed.lock();
    if (!store_needed && !result && log_now && log_now->closed()) {
      // The log followed was another replica's run mirrored here, closed as its end was
      // stored, while this replica, which took the run over, is still finishing it: no other
      // wake comes, so the answer waits on the handler pool for the run to be finished here.
      head.settle = [ctx, run_id, content_location]() -> std::optional<HttpResponse> {
        std::shared_ptr<const std::string> ended =
            ctx->runs.result_once_ended(run_id, kFinishingPatience);
        if (!ended) return std::nullopt;
        return result_response(*ctx, run_id, ended, content_location);
      };
      return true;
    }
    if (store_needed) {
      head.settle = [ctx, run_id, content_location]() -> std::optional<HttpResponse> {
        std::shared_ptr<const std::string> stored = ctx->runs.result(run_id);
        if (!stored) return std::nullopt;
        return result_response(*ctx, run_id, stored, content_location);
      };
      return true;
    }
    if (!result) return false;
    head = result_response(*ctx, run_id, result, content_location);
    return true;
  };
}

HttpResponse stream_response(ApiContext& context, const RunRecord& run, bool stateless,
                             const ParsedRun& parsed) {
  std::shared_ptr<EventLog> log = context.runs.events(run.run_id);
  LogStreamBody::Options options;
  ApiContext* ctx = &context;
  const std::string run_id = run.run_id;
  if (parsed.on_disconnect == "cancel") {
    options.on_disconnect = [ctx, run_id] { ctx->runs.cancel(run_id, false); };
  }
  // A resume may be refused before it does anything: hold the head until that is decided, so
  // a refusal is answered with its HTTP status.
  if (parsed.request.command) options.head_gate = refusal_gate(log);
  HttpResponse response;
  response.content_type = "text/event-stream";
  response.add_header("Content-Location", run_path(run, stateless));
  if (!stateless) response.add_header("Location", run_path(run, false) + "/stream");
  response.stream = std::make_shared<LogStreamBody>(log, std::move(options));
  return response;
}

// The new run (a background run). A resume is answered once it is decided, so that a
// refused one gets its HTTP error instead of a run that fails later.
HttpResponse created_response(ApiContext& context, const RunRecord& run, bool stateless,
                              const ParsedRun& parsed) {
  const std::string location = run_path(run, stateless);
  auto answer = [location](const RunRecord& current) {
    HttpResponse response = HttpResponse::json(run_to_json(current));
    response.add_header("Content-Location", location);
    return response;
  };
  if (!parsed.request.command) return answer(run);
  std::shared_ptr<EventLog> log = context.runs.events(run.run_id);
  LogStreamBody::Options options;
  ApiContext* ctx = &context;
  options.head_gate = refusal_gate(log, [ctx, run, answer](HttpResponse& head) {
    head.settle = [ctx, run, answer]() -> std::optional<HttpResponse> {
      return answer(ctx->store.get_run(run.run_id).value_or(run));
    };
  });
  options.filter = [](const LogEntry&) { return false; };
  options.heartbeats = false;
  HttpResponse response;
  response.stream = std::make_shared<LogStreamBody>(log, std::move(options));
  return response;
}

HttpResponse wait_response(ApiContext& context, const RunRecord& run, const std::string& location,
                           bool cancel_on_disconnect) {
  std::shared_ptr<EventLog> log = context.runs.events(run.run_id);
  LogStreamBody::Options options;
  options.head_gate = result_gate(context, run.run_id, location, log);
  options.filter = [](const LogEntry&) { return false; };
  options.until_close_only = true;  // the result is known once the log is closed
  options.heartbeats = false;
  if (cancel_on_disconnect) {
    ApiContext* ctx = &context;
    std::string run_id = run.run_id;
    options.on_disconnect = [ctx, run_id] { ctx->runs.cancel(run_id, false); };
  }
  HttpResponse response;
  response.stream = std::make_shared<LogStreamBody>(log, std::move(options));
  return response;
}

RunRecord require_run(ApiContext& context, const std::string& thread_id, const std::string& run_id,
                      const Identity& who, ThreadUse use = ThreadUse::kRead) {
  require_thread_head(context, thread_id, who, use);
  require_uuid(run_id, "run_id");
  auto run = context.store.get_run(run_id);
  if (!run || run->thread_id != thread_id) throw Error::NotFound("Run not found");
  return *run;
}

HttpResponse cancel_response(ApiContext& context, const RunRecord& run,
                             const HttpRequest& request) {
  std::string action = request.query_value("action").value_or("interrupt");
  if (action != "interrupt" && action != "rollback") {
    throw Error::InvalidArgument("action: invalid value \"" + action +
                                 "\"; expected interrupt or rollback");
  }
  std::string wait = request.query_value("wait").value_or("0");
  std::shared_ptr<EventLog> log = context.runs.events(run.run_id);
  context.runs.cancel(run.run_id, action == "rollback");
  if (wait != "1" && wait != "true") return HttpResponse::empty(202);
  LogStreamBody::Options options;
  std::weak_ptr<EventLog> weak = log;
  options.head_gate = [weak](HttpResponse& head) {
    auto l = weak.lock();
    if (l && !l->closed()) return false;
    head = HttpResponse::empty(204);
    return true;
  };
  options.heartbeats = false;
  options.until_close_only = true;
  HttpResponse response;
  response.stream = std::make_shared<LogStreamBody>(log, std::move(options));
  return response;
}

}  // namespace

void add_run_routes(Router& router, ApiContext& context) {
  ApiContext* ctx = &context;

  router.add("POST", "/threads/:thread_id/runs/stream", [ctx](HttpRequest& request) {
    ParsedRun parsed = parse_run(*ctx, require_object_body(request));
    RunRecord run = start_run(*ctx, request.identity, parsed, request.params[0]);
    return stream_response(*ctx, run, false, parsed);
  });

  router.add("POST", "/runs/stream", [ctx](HttpRequest& request) {
    ParsedRun parsed = parse_run(*ctx, require_object_body(request));
    RunRecord run = start_run(*ctx, request.identity, parsed, "");
    return stream_response(*ctx, run, true, parsed);
  });

  router.add("POST", "/threads/:thread_id/runs", [ctx](HttpRequest& request) {
    ParsedRun parsed = parse_run(*ctx, require_object_body(request));
    RunRecord run = start_run(*ctx, request.identity, parsed, request.params[0]);
    return created_response(*ctx, run, false, parsed);
  });

  router.add("POST", "/runs", [ctx](HttpRequest& request) {
    ParsedRun parsed = parse_run(*ctx, require_object_body(request));
    RunRecord run = start_run(*ctx, request.identity, parsed, "");
    return created_response(*ctx, run, true, parsed);
  });

  router.add("POST", "/runs/batch", [ctx](HttpRequest& request) {
    Json body = request.json_body();
    if (!body.is_array()) throw Error::InvalidArgument("Request body must be a JSON array of runs");
    // Every run is checked before any starts, so a bad one starts none.
    std::vector<ParsedRun> batch;
    for (std::size_t i = 0; i < body.size(); ++i) {
      if (!body[i].is_object())
        throw Error::InvalidArgument("[" + std::to_string(i) + "]: must be an object");
      try {
        batch.push_back(parse_run(*ctx, body[i]));
      } catch (const Error& e) {
        throw Error(e.code(), "[" + std::to_string(i) + "]." + e.what());
      }
    }
    Json runs = Json::array();
    for (ParsedRun& parsed : batch)
      runs.push_back(run_to_json(start_run(*ctx, request.identity, parsed, "")));
    return HttpResponse::json(runs);
  });

  router.add("POST", "/threads/:thread_id/runs/wait", [ctx](HttpRequest& request) {
    ParsedRun parsed = parse_run(*ctx, require_object_body(request));
    RunRecord run = start_run(*ctx, request.identity, parsed, request.params[0]);
    return wait_response(*ctx, run, run_path(run, false), parsed.on_disconnect == "cancel");
  });

  router.add("POST", "/runs/wait", [ctx](HttpRequest& request) {
    ParsedRun parsed = parse_run(*ctx, require_object_body(request));
    RunRecord run = start_run(*ctx, request.identity, parsed, "");
    return wait_response(*ctx, run, run_path(run, true), parsed.on_disconnect == "cancel");
  });

  router.add("GET", "/threads/:thread_id/runs", [ctx](HttpRequest& request) {
    require_thread_head(*ctx, request.params[0], request.identity);
    std::size_t limit = 10;
    std::size_t offset = 0;
    try {
      if (auto v = request.query_value("limit")) limit = static_cast<std::size_t>(std::stoul(*v));
      if (auto v = request.query_value("offset")) offset = static_cast<std::size_t>(std::stoul(*v));
    } catch (const std::exception&) {
      throw Error::InvalidArgument("limit/offset: must be non-negative integers");
    }
    auto status = request.query_value("status");
    Json out = Json::array();
    if (!status || status->empty()) {
      for (const RunRecord& run : ctx->store.list_runs_page(request.params[0], limit, offset))
        out.push_back(run_to_json(run));
      return HttpResponse::json(out);
    }
    std::size_t skipped = 0;
    for (const RunRecord& run : ctx->store.list_runs(request.params[0])) {
      if (status && !status->empty() && run_status_named(*status) != run.status) continue;
      if (skipped++ < offset) continue;
      if (out.size() >= limit) break;
      out.push_back(run_to_json(run));
    }
    return HttpResponse::json(out);
  });

  router.add("GET", "/threads/:thread_id/runs/:run_id", [ctx](HttpRequest& request) {
    return HttpResponse::json(
        run_to_json(require_run(*ctx, request.params[0], request.params[1], request.identity)));
  });

  router.add("DELETE", "/threads/:thread_id/runs/:run_id", [ctx](HttpRequest& request) {
    RunRecord run = require_run(*ctx, request.params[0], request.params[1], request.identity,
                                ThreadUse::kChange);
    if (run_is_active(run)) {
      ctx->runs.cancel(run.run_id, true);
    }
    ctx->store.delete_run(run.run_id);
    return HttpResponse::empty(204);
  });

  router.add("POST", "/threads/:thread_id/runs/:run_id/cancel", [ctx](HttpRequest& request) {
    RunRecord run = require_run(*ctx, request.params[0], request.params[1], request.identity,
                                ThreadUse::kChange);
    return cancel_response(*ctx, run, request);
  });

  router.add("POST", "/runs/cancel", [ctx](HttpRequest& request) {
    Json body = require_object_body(request);
    std::string action = request.query_value("action").value_or("interrupt");
    std::vector<std::string> run_ids;
    if (body.contains("run_ids") && body["run_ids"].is_array()) {
      for (const Json& id : body["run_ids"]) {
        if (id.is_string()) run_ids.push_back(id.get<std::string>());
      }
    }
    if (auto thread_id = optional_string(body, "thread_id")) {
      require_thread_head(*ctx, *thread_id, request.identity, ThreadUse::kChange);
      auto status = optional_string(body, "status");
      for (const RunRecord& run : ctx->store.list_runs(*thread_id)) {
        const bool active = run_is_active(run);
        if (!active) continue;
        if (status && *status != "all" && run_status_named(*status) != run.status) continue;
        if (run_ids.empty() ||
            std::find(run_ids.begin(), run_ids.end(), run.run_id) != run_ids.end()) {
          ctx->runs.cancel(run.run_id, action == "rollback");
        }
      }
    } else {
      for (const std::string& id : run_ids) {
        require_visible_run(*ctx, id, request.identity, ThreadUse::kChange);
        ctx->runs.cancel(id, action == "rollback");
      }
    }
    return HttpResponse::empty(204);
  });

  router.add("GET", "/threads/:thread_id/runs/:run_id/join", [ctx](HttpRequest& request) {
    RunRecord run = require_run(*ctx, request.params[0], request.params[1], request.identity);
    auto flag = request.query_value("cancel_on_disconnect");
    return wait_response(*ctx, run, "", flag && (*flag == "1" || *flag == "true"));
  });

  auto join_stream = [ctx](HttpRequest& request, const RunRecord& run) {
    std::shared_ptr<EventLog> log = ctx->runs.events(run.run_id);
    if (!log) throw Error::NotFound("Run not found");
    LogStreamBody::Options options;
    std::string last = request.header("last-event-id");
    if (last.empty()) {
      options.start = log->size();  // only what comes next
    } else {
      try {
        long long id = std::stoll(last);
        options.start = id < 0 ? 0 : static_cast<std::size_t>(id) + 1;
      } catch (const std::exception&) {
        throw Error::InvalidArgument("Last-Event-ID: must be an event id (a number, -1 for all)");
      }
    }
    auto flag = request.query_value("cancel_on_disconnect");
    if (flag && (*flag == "1" || *flag == "true")) {
      std::string run_id = run.run_id;
      options.on_disconnect = [ctx, run_id] { ctx->runs.cancel(run_id, false); };
    }
    HttpResponse response;
    response.content_type = "text/event-stream";
    response.stream = std::make_shared<LogStreamBody>(log, std::move(options));
    return response;
  };

  router.add(
      "GET", "/threads/:thread_id/runs/:run_id/stream", [ctx, join_stream](HttpRequest& request) {
        RunRecord run = require_run(*ctx, request.params[0], request.params[1], request.identity);
        return join_stream(request, run);
      });

  router.add("GET", "/runs/:run_id/stream", [ctx, join_stream](HttpRequest& request) {
    require_uuid(request.params[0], "run_id");
    RunRecord run =
        require_visible_run(*ctx, request.params[0], request.identity, ThreadUse::kRead);
    return join_stream(request, run);
  });
}

}  // namespace tollgate::server
