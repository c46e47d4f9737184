// Routes of the v2 thread protocol (§8): POST /threads/{id}/commands and the long-lived
// POST /threads/{id}/stream/events.
#include "server/api.h"
#include "server/ids.h"
#include "server/log_stream_body.h"
#include "server/wire_format.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

HttpResponse protocol_error(const Json& id, const std::string& name, const std::string& message,
                            int http_status) {
  return HttpResponse::json({{"type", "error"}, {"id", id}, {"error", name}, {"message", message}},
                            http_status);
}

// A failed command: {"type":"error", ...} with the protocol's name for the error (its reason,
// else its code's), with HTTP 200 like the reference server, except a conflict (nothing paused,
// an unknown interrupt id, a busy thread) or a refused decision, which keep their status so a
// client cannot take a refused decision for an accepted one.
HttpResponse protocol_error(const Json& id, const Error& e) {
  const bool keeps_status =
      e.code() == ErrorCode::kConflict || e.code() == ErrorCode::kUnprocessable;
  return protocol_error(id, e.reason().empty() ? protocol_error_name(e.code()) : e.reason(),
                        e.what(), keeps_status ? http_status(e.code()) : 200);
}

Json pending_interrupt_ids(const ThreadRecord& thread) {
  Json ids = Json::array();
  if (thread.status != ThreadStatus::kInterrupted || !thread.interrupts.is_object()) return ids;
  for (auto& [task, list] : thread.interrupts.items()) {
    for (const Json& interrupt : list) ids.push_back(interrupt.value("id", ""));
  }
  return ids;
}

// The thread, created (owned by `who`) when unknown; 404 when `who` may not see it.
ThreadRecord ensure_thread(ApiContext& context, const std::string& thread_id, const Identity& who) {
  if (auto thread = context.store.get_thread_head(thread_id)) {
    require_thread_use(who, *thread, ThreadUse::kRead);
    return *thread;
  }
  Json metadata = Json::object();
  stamp_owner(metadata, who);
  ThreadRecord fresh = new_thread_record(thread_id, metadata, *context.clock);
  context.store.create_thread(fresh);
  return *context.store.get_thread_head(thread_id);
}

std::string strategy_of(const Json& params) {
  for (const char* key : {"multitask_strategy", "multitaskStrategy"}) {
    if (params.contains(key) && params[key].is_string()) {
      std::string value = params[key].get<std::string>();
      if (value != "reject" && value != "interrupt" && value != "rollback" && value != "enqueue") {
        throw Error::InvalidArgument(std::string(key) + ": invalid value \"" + value + "\"");
      }
      return value;
    }
  }
  return "enqueue";
}

RunRequest protocol_run(const std::string& thread_id, const std::string& assistant_id) {
  RunRequest r;
  r.thread_id = thread_id;
  r.assistant_id = assistant_id;
  r.stream_modes = {"values", "updates", "messages-tuple", "custom", "tasks"};
  r.stream_subgraphs = true;
  r.stream_resumable = true;
  r.protocol_v2 = true;
  r.multitask_strategy = "enqueue";
  return r;
}

// Starts the run; a run.start with input on a paused thread is a resume.
RunRecord run_start(ApiContext& context, const Identity& requester, const std::string& thread_id,
                    const Json& params) {
  auto assistant_id = params.value("assistant_id", Json());
  if (!assistant_id.is_string()) throw Error::InvalidArgument("assistant_id: required");
  auto assistant = find_assistant(context, assistant_id.get<std::string>());
  if (!assistant) {
    throw Error::NotFound("No assistant found for \"" + assistant_id.get<std::string>() + "\"");
  }
  ThreadRecord thread = ensure_thread(context, thread_id, requester);
  RunRequest r = protocol_run(thread_id, assistant->assistant_id);
  r.multitask_strategy = strategy_of(params);
  Json input = params.value("input", Json());
  if (!pending_interrupt_ids(thread).empty() && !input.is_null()) {
    r.command = Json{{"resume", input}};  // a run.start with input on a paused thread resumes it
  } else {
    r.input = input;
  }
  require_thread_use(requester, thread, r.resumes() ? ThreadUse::kDecide : ThreadUse::kChange);
  if (params.contains("config") && params["config"].is_object()) r.config = params["config"];
  if (params.contains("metadata") && params["metadata"].is_object())
    r.metadata = params["metadata"];
  if (r.config.contains("configurable") && r.config["configurable"].is_object() &&
      r.config["configurable"].contains("checkpoint_id") &&
      r.config["configurable"]["checkpoint_id"].is_string()) {
    r.checkpoint_id = r.config["configurable"]["checkpoint_id"].get<std::string>();
  }
  set_run_actors(context, requester, r);
  return context.runs.submit(r);
}

RunRecord input_respond(ApiContext& context, const Identity& requester,
                        const std::string& thread_id, const Json& params) {
  auto thread = context.store.get_thread_head(thread_id);
  if (thread) require_thread_use(requester, *thread, ThreadUse::kDecide);
  Json pending = thread ? pending_interrupt_ids(*thread) : Json::array();
  if (!thread || pending.empty()) {
    throw Error::Conflict("input.respond can only be used while the run is interrupted.");
  }
  Json resume = Json::object();
  auto add = [&](const Json& response) {
    if (!response.is_object() || !response.contains("interrupt_id") ||
        !response["interrupt_id"].is_string()) {
      throw Error::InvalidArgument("interrupt_id: required");
    }
    std::string id = response["interrupt_id"].get<std::string>();
    if (std::find(pending.begin(), pending.end(), Json(id)) == pending.end()) {
      throw Error::Conflict("No pending interrupt with id " + id).with_reason("no_such_interrupt");
    }
    resume[id] = response.value("response", Json());
  };
  if (params.contains("responses")) {
    if (!params["responses"].is_array())
      throw Error::InvalidArgument("responses: must be a list");
    for (const Json& response : params["responses"]) add(response);
  } else {
    add(params);
  }
  // The assistant comes from the thread, not from process memory, so a respond works after
  // a restart or on another replica.
  std::string assistant_id = string_member(thread->metadata, "assistant_id");
  if (assistant_id.empty()) {
    throw Error::NotFound("Thread has no assistant; call run.start first.").with_reason("no_such_run");
  }
  RunRequest r = protocol_run(thread_id, assistant_id);
  Json command{{"resume", resume}};
  if (params.contains("update") && !params["update"].is_null())
    command["update"] = params["update"];
  if (params.contains("goto") && !params["goto"].is_null()) command["goto"] = params["goto"];
  auto assistant = context.store.get_assistant(assistant_id);
  validate_command(command, assistant ? context.runs.graph(assistant->graph_id) : nullptr, "");
  r.command = command;
  if (params.contains("config") && params["config"].is_object()) r.config = params["config"];
  if (params.contains("metadata") && params["metadata"].is_object())
    r.metadata = params["metadata"];
  set_run_actors(context, requester, r);
  return context.runs.submit(r);
}

// The answer to a command that resumes a paused thread, once its run is decided: success, or
// the refusal of the response (e.g. a decision the HITL middleware rejects: 422 with its
// message) while the thread stays paused. Other runs are answered at once.
HttpResponse resume_response(ApiContext& context, const RunRecord& run, HttpResponse success,
                             const Json& id) {
  if (!run.kwargs.contains("command") || run.kwargs["command"].is_null()) return success;
  std::shared_ptr<EventLog> log = context.runs.events(run.run_id);
  LogStreamBody::Options options;
  options.head_gate = refusal_gate(
      log, [success](HttpResponse& head) { head = success; },
      [id](int status, const std::string& message) {
        // A refused response (409, 422), or storage failing the run (503).
        const char* name = status == http_status(ErrorCode::kUnavailable)
                               ? protocol_error_name(ErrorCode::kUnavailable)
                               : "invalid_argument";
        return protocol_error(id, name, message, status);
      });
  options.filter = [](const LogEntry&) { return false; };
  options.heartbeats = false;
  HttpResponse response;
  response.stream = std::make_shared<LogStreamBody>(log, std::move(options));
  return response;
}

Json state_get(ApiContext& context, const std::string& thread_id, const Json& params) {
  auto thread = context.store.get_thread_head(thread_id);
  if (!thread) throw Error::NotFound("Thread " + thread_id + " not found");
  std::string graph_id = string_member(thread->metadata, "graph_id");
  const CompiledGraph* graph = context.runs.graph(graph_id);
  if (graph == nullptr) return Json{{"values", Json::object()}, {"checkpoint", nullptr}};
  RunConfig config;
  config.thread_id = thread_id;
  StateSnapshot snapshot = graph->get_state(config, true);
  Json values = snapshot.values.to_json();
  if (params.contains("keys") && params["keys"].is_array()) {
    Json picked = Json::object();
    for (const Json& key : params["keys"]) {
      if (key.is_string() && values.contains(key.get<std::string>())) {
        picked[key.get<std::string>()] = values[key.get<std::string>()];
      }
    }
    values = picked;
  }
  return Json{{"values", values},
              {"checkpoint",
               {{"id", snapshot.config.checkpoint_id}, {"ns", snapshot.config.checkpoint_ns}}}};
}

}  // namespace

void add_protocol_routes(Router& router, ApiContext& context) {
  ApiContext* ctx = &context;

  router.add("POST", "/threads/:thread_id/commands", [ctx](HttpRequest& request) {
    const std::string thread_id = request.params[0];
    require_uuid(thread_id, "thread_id");
    Json body = require_object_body(request);
    if (!body.contains("id") || !body["id"].is_number_integer()) {
      throw Error::InvalidArgument("id: required (a non-negative integer)");
    }
    if (!body.contains("method") || !body["method"].is_string()) {
      throw Error::InvalidArgument("method: required (a command name)");
    }
    const Json id = body["id"];
    const std::string method = body["method"].get<std::string>();
    if (auto thread = ctx->store.get_thread_head(thread_id))
      require_thread_use(request.identity, *thread, ThreadUse::kRead);
    Json params = body.value("params", Json::object());
    if (!params.is_object()) throw Error::InvalidArgument("params: must be an object");
    try {
      // The seq the command was applied at: events of a run it starts come after it.
      const std::int64_t applied_through = ctx->streams.current_seq(thread_id);
      auto success = [&](const Json& result) {
        return HttpResponse::json(
            {{"type", "success"},
             {"id", id},
             {"result", result},
             {"meta", {{"thread_id", thread_id}, {"applied_through_seq", applied_through}}}});
      };
      if (method == "run.start") {
        RunRecord run = run_start(*ctx, request.identity, thread_id, params);
        return resume_response(*ctx, run, success(Json{{"run_id", run.run_id}}), id);
      }
      if (method == "input.respond") {
        RunRecord run = input_respond(*ctx, request.identity, thread_id, params);
        return resume_response(*ctx, run, success(Json::object()), id);
      }
      if (method == "state.get") return success(state_get(*ctx, thread_id, params));
      throw Error::InvalidArgument("Unknown protocol command: " + method)
          .with_reason("unknown_command");
    } catch (const Error& e) {
      return protocol_error(id, e);
    }
  });

  router.add("POST", "/threads/:thread_id/stream/events", [ctx](HttpRequest& request) {
    const std::string thread_id = request.params[0];
    require_uuid(thread_id, "thread_id");
    Json body = require_object_body(request);
    for (const auto& [key, value] : body.items()) {
      if (key != "channels" && key != "namespaces" && key != "depth" && key != "since") {
        throw Error::InvalidArgument(key + ": unknown field; expected channels, namespaces, depth, since");
      }
    }
    // A thread not created yet may be watched (a client subscribes before run.start).
    if (auto thread = ctx->store.get_thread_head(thread_id))
      require_thread_use(request.identity, *thread, ThreadUse::kRead);
    StreamFilter filter;
    if (!body.contains("channels") || !body["channels"].is_array()) {
      throw Error::InvalidArgument("channels: required (a list of channel names)");
    }
    for (const Json& channel : body["channels"]) {
      if (!channel.is_string()) throw Error::InvalidArgument("channels: must be a list of channel names");
      filter.channels.push_back(channel.get<std::string>());
    }
    if (body.contains("namespaces") && !body["namespaces"].is_null()) {
      if (!body["namespaces"].is_array())
        throw Error::InvalidArgument("namespaces: must be a list of namespaces");
      filter.has_namespaces = true;
      for (const Json& ns : body["namespaces"]) {
        if (!ns.is_array())
          throw Error::InvalidArgument("namespaces: each namespace must be a list of segments");
        std::vector<std::string> segments;
        for (const Json& segment : ns) {
          if (!segment.is_string()) throw Error::InvalidArgument("namespaces: segments must be strings");
          segments.push_back(segment.get<std::string>());
        }
        filter.namespaces.push_back(std::move(segments));
      }
    }
    if (body.contains("depth") && !body["depth"].is_null()) {
      if (!body["depth"].is_number_integer()) throw Error::InvalidArgument("depth: must be an integer");
      filter.depth = body["depth"].get<int>();
    }
    if (body.contains("since") && !body["since"].is_null()) {
      if (!body["since"].is_number_integer()) throw Error::InvalidArgument("since: must be an integer");
      filter.since = body["since"].get<std::int64_t>();
    }
    LogStreamBody::Options options;
    options.filter = [filter](const LogEntry& entry) { return filter.matches(entry); };
    HttpResponse response;
    response.content_type = "text/event-stream";
    response.stream =
        std::make_shared<LogStreamBody>(ctx->streams.log(thread_id), std::move(options));
    return response;
  });
}

}  // namespace tollgate::server
