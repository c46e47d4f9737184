// The run timeline of a thread, from its runs, checkpoints and audit entries.
//
// A step is read from two checkpoints: the tasks of checkpoint P (what ran from it, with the
// writes each saved) and the checkpoint C the step wrote (source "loop", parent P). C's run_id
// names the run the step belongs to. An interrupt is read from P alone: a task of P that saved
// interrupts paused the run that wrote P. Times: a checkpoint's `ts` is when it was written.
#include "server/thread_timeline.h"

#include <algorithm>
#include <map>
#include <set>

#include "server/run_request.h"
#include "tollgate/iso_time.h"

namespace tollgate::server {
namespace {

// A checkpoint's ts ("…+00:00") in milliseconds since the epoch; 0 when unreadable.
std::int64_t ts_millis(std::string ts) {
  if (ts.size() > 6 && ts.compare(ts.size() - 6, 6, "+00:00") == 0) ts.replace(ts.size() - 6, 6, "Z");
  return parse_iso_utc_millis(ts).value_or(0);
}

Json iso_or_null(std::int64_t millis) {
  return millis > 0 ? Json(iso_utc_millis(millis)) : Json();
}

Json string_or_null(const std::string& text) {
  return text.empty() ? Json() : Json(text);
}

struct CheckpointRow {
  const StateSnapshot* snapshot = nullptr;
  std::string id;
  std::string parent;
  std::string run_id;
  std::string source;
  std::int64_t step = 0;
  std::int64_t at = 0;
  bool branch = false;  // its parent is not the checkpoint written just before it
};

const Json& messages_of(const StateSnapshot& snapshot) {
  static const Json kNone = Json::array();
  const Json& messages = snapshot.values["messages"];
  return messages.is_array() ? messages : kNone;
}

const Json* last_ai_message(const Json& messages) {
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if (it->is_object() && it->value("type", "") == "ai") return &*it;
  }
  return nullptr;
}

// The tool call `id` of the AI messages in `messages`, or nullptr.
const Json* find_tool_call(const Json& messages, const std::string& id) {
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if (!it->is_object() || !it->contains("tool_calls") || !(*it)["tool_calls"].is_array()) continue;
    for (const Json& call : (*it)["tool_calls"]) {
      if (call.is_object() && call.value("id", "") == id) return &call;
    }
  }
  return nullptr;
}

bool is_middleware_node(const std::string& node) {
  return node.find('.') != std::string::npos;
}

class TimelineBuilder {
 public:
  explicit TimelineBuilder(const TimelineSources& sources) : sources_(sources) {}

  Json build() {
    order_checkpoints();
    order_runs();
    for (const CheckpointRow& row : rows_) read_checkpoint(row);
    link_resumed_runs();
    Json out{{"thread_id", sources_.thread->thread_id},
             {"status", to_string(sources_.thread->status)},
             {"created_at", iso_or_null(sources_.thread->created_at)},
             {"updated_at", iso_or_null(sources_.thread->updated_at)}};
    out["runs"] = Json::array();
    for (Json& run : runs_) out["runs"].push_back(std::move(run));
    out["steps_outside_runs"] = std::move(outside_runs_);
    out["checkpoints"] = checkpoints_json();
    out["state_updates"] = state_updates_json();
    out["unknown"] = Json::array(
        {"when each model or tool call began and ended inside its step: a step starts at the "
         "checkpoint it ran from (or at its run's start, if later) and ends at the checkpoint it "
         "wrote, and calls made in one step share that span",
         "why a tool call that was not reviewed passed: interrupt_on not naming the tool and a "
         "`when` rule letting the call through leave the same record",
         "the system prompt and tools sent with a model call: its input counts the thread's "
         "messages only",
         "token usage the model did not report (usage is null)"});
    return out;
  }

 private:
  void order_checkpoints() {
    for (const StateSnapshot& s : sources_.checkpoints) {
      CheckpointRow row;
      row.snapshot = &s;
      row.id = s.config.checkpoint_id;
      if (s.parent_config) row.parent = s.parent_config->checkpoint_id;
      if (s.metadata.is_object()) {
        row.run_id = s.metadata.value("run_id", "");
        row.source = s.metadata.value("source", "");
        row.step = s.metadata.value("step", std::int64_t{0});
      }
      row.at = ts_millis(s.created_at);
      rows_.push_back(std::move(row));
    }
    // Checkpoint ids are time-ordered.
    std::sort(rows_.begin(), rows_.end(),
              [](const CheckpointRow& a, const CheckpointRow& b) { return a.id < b.id; });
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      rows_[i].branch = i > 0 && !rows_[i].parent.empty() && rows_[i].parent != rows_[i - 1].id;
    }
  }

  void order_runs() {
    std::vector<RunRecord> runs = sources_.runs;
    std::sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) {
      return a.created_at != b.created_at ? a.created_at < b.created_at : a.run_id < b.run_id;
    });
    for (const RunRecord& run : runs) {
      const RunRequest request = RunRequest::from_kwargs(run.kwargs, run.thread_id, run.assistant_id);
      Json out{{"run_id", run.run_id},
               {"assistant_id", run.assistant_id},
               {"status", to_string(run.status)},
               {"created_at", iso_or_null(run.created_at)},
               {"updated_at", iso_or_null(run.updated_at)},
               {"started_by", string_or_null(request.started_by.id)},
               {"decided_by", string_or_null(request.decided_by.id)},
               {"kind", request.resumes() ? "resume" : request.input.is_null() ? "continue" : "input"},
               {"paused_at_checkpoint_id", nullptr},
               {"resumed_run_id", nullptr},
               {"started_from_checkpoint_id", nullptr},
               {"error", nullptr},
               {"steps", Json::array()}};
      for (const auto& [run_id, error] : sources_.run_errors) {
        if (run_id == run.run_id) out["error"] = error;
      }
      if (request.binding.is_object() && request.binding.contains("checkpoint_id")) {
        out["started_from_checkpoint_id"] = request.binding["checkpoint_id"];
      } else if (!request.checkpoint_id.empty()) {
        out["started_from_checkpoint_id"] = request.checkpoint_id;
      }
      run_index_[run.run_id] = runs_.size();
      run_created_.push_back(run.created_at);
      runs_.push_back(std::move(out));
    }
  }

  // Where the steps of run `run_id` go; the thread's steps outside any run when it is unknown.
  Json& steps_of(const std::string& run_id) {
    auto it = run_index_.find(run_id);
    return it == run_index_.end() ? outside_runs_ : runs_[it->second]["steps"];
  }

  // The run that paused at checkpoint `row`: the run that wrote it; else (a checkpoint written
  // by a state update) the first run started after it.
  std::string pausing_run(const CheckpointRow& row) const {
    if (run_index_.count(row.run_id)) return row.run_id;
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      if (run_created_[i] >= row.at) return runs_[i]["run_id"].get<std::string>();
    }
    return "";
  }

  // The run's created_at, 0 when the run is unknown.
  std::int64_t run_start(const std::string& run_id) const {
    auto it = run_index_.find(run_id);
    return it == run_index_.end() ? 0 : run_created_[it->second];
  }

  void read_checkpoint(const CheckpointRow& parent) {
    const CheckpointRow* child = nullptr;
    for (const CheckpointRow& row : rows_) {
      if (row.parent == parent.id && row.source == "loop") {
        child = &row;
        break;
      }
    }
    for (const TaskInfo& task : parent.snapshot->tasks) {
      if (!task.interrupts.empty()) {
        const std::string run_id = pausing_run(parent);
        paused_at_[parent.id] = run_id;
        if (auto run = run_index_.find(run_id); run != run_index_.end())
          runs_[run->second]["paused_at_checkpoint_id"] = parent.id;
        steps_of(run_id).push_back(interrupt_step(parent, task));
      }
      if (child == nullptr || (task.result.is_null() && !task.error)) continue;
      Json& steps = steps_of(child->run_id);
      for (Json& step : task_steps(parent, *child, task)) steps.push_back(std::move(step));
    }
  }

  Json timing(const CheckpointRow& from, const CheckpointRow& to) const {
    const std::int64_t start = std::max(from.at, run_start(to.run_id));
    const std::int64_t end = std::max(start, to.at);
    return Json{{"started_at", iso_or_null(start)},
                {"ended_at", iso_or_null(end)},
                {"duration_ms", start > 0 && end > 0 ? Json(end - start) : Json()}};
  }

  Json step_base(const char* kind, const CheckpointRow& from, const CheckpointRow& to,
                 const TaskInfo& task) const {
    Json step{{"kind", kind},
              {"node", task.name},
              {"task_id", task.id},
              {"step", to.step},
              {"ran_from_checkpoint_id", from.id},
              {"checkpoint_id", to.id}};
    step.update(timing(from, to));
    if (task.error) step["error"] = *task.error;
    return step;
  }

  std::vector<Json> task_steps(const CheckpointRow& from, const CheckpointRow& to,
                               const TaskInfo& task) const {
    std::vector<Json> steps;
    const Json& input = messages_of(*from.snapshot);
    const Json written = task.result.is_object() && task.result.contains("messages")
                             ? task.result["messages"]
                             : Json::array();
    const Json written_list = written.is_array() ? written : Json::array({written});
    if (task.name == "__start__") {
      Json step = step_base("input", from, to, task);
      step["values"] = task.result;
      steps.push_back(std::move(step));
      return steps;
    }
    bool described = false;
    for (const Json& message : written_list) {
      if (!message.is_object()) continue;
      const std::string type = message.value("type", "");
      if (type == "ai" && !is_middleware_node(task.name)) {
        steps.push_back(model_step(from, to, task, input, message));
        described = true;
      } else if (type == "tool") {
        steps.push_back(tool_step(from, to, task, input, message));
        described = described || task.name == "tools";
      }
    }
    if (is_middleware_node(task.name)) {
      steps.insert(steps.begin(), middleware_step(from, to, task, input));
    } else if (!described) {
      Json step = step_base("node", from, to, task);
      step["writes"] = task.result;
      steps.push_back(std::move(step));
    }
    return steps;
  }

  Json model_step(const CheckpointRow& from, const CheckpointRow& to, const TaskInfo& task,
                  const Json& input, const Json& message) const {
    Json step = step_base("model_call", from, to, task);
    Json ids = Json::array();
    for (const Json& m : input) ids.push_back(m.is_object() ? m.value("id", Json()) : Json());
    step["input"] = Json{{"message_count", input.size()}, {"message_ids", std::move(ids)}};
    step["output"] = message;
    step["usage"] = message.value("usage_metadata", Json());
    const Json metadata = message.value("response_metadata", Json::object());
    step["model"] = metadata.is_object() ? metadata.value("model_name", Json()) : Json();
    return step;
  }

  Json tool_step(const CheckpointRow& from, const CheckpointRow& to, const TaskInfo& task,
                 const Json& input, const Json& message) const {
    Json step = step_base("tool_call", from, to, task);
    const std::string call_id = message.value("tool_call_id", "");
    const Json* call = find_tool_call(input, call_id);
    step["tool_call_id"] = call_id;
    step["name"] = call != nullptr ? call->value("name", Json()) : message.value("name", Json());
    step["args"] = call != nullptr ? call->value("args", Json()) : Json();
    // A tool message written by a middleware node (a rejection, a reviewer's response) answers
    // the call in the tool's place: the tool did not run.
    step["answered_by"] = is_middleware_node(task.name) ? "review" : "tool";
    const bool error = message.value("status", "") == "error";
    step["status"] = error ? "error" : "success";
    step[error ? "error" : "result"] = message.value("content", Json());
    if (!error) step.erase("error");
    return step;
  }

  Json middleware_step(const CheckpointRow& from, const CheckpointRow& to, const TaskInfo& task,
                       const Json& input) const {
    Json step = step_base("middleware", from, to, task);
    step["writes"] = task.result;
    const Json* ai = last_ai_message(input);
    Json calls = Json::array();
    if (ai != nullptr && ai->contains("tool_calls") && (*ai)["tool_calls"].is_array()) {
      for (const Json& call : (*ai)["tool_calls"]) calls.push_back(call.value("name", Json()));
    }
    if (!task.interrupts.empty()) {
      step["review"] = "answered";  // the interrupt step before it holds the review
    } else if (!calls.empty()) {
      step["review"] = "not_asked";
      step["calls_not_reviewed"] = calls;
      step["why"] = Json();  // unknown: see the timeline's "unknown"
    } else {
      step["review"] = "nothing_to_review";
    }
    return step;
  }

  Json interrupt_step(const CheckpointRow& at, const TaskInfo& task) {
    Json step{{"kind", "interrupt"},
              {"node", task.name},
              {"task_id", task.id},
              {"step", at.step},
              {"checkpoint_id", at.id},
              {"at", iso_or_null(at.at)}};
    Json interrupts = Json::array();
    Json gated = Json::array();
    std::set<std::string> gated_names;
    for (const Interrupt& interrupt : task.interrupts) {
      interrupts.push_back(Json{{"id", interrupt.id}, {"value", interrupt.value}});
      const Json& requests = interrupt.value.is_object()
                                 ? interrupt.value.value("action_requests", Json())
                                 : Json();
      if (!requests.is_array()) continue;
      for (const Json& request : requests) {
        if (!request.is_object()) continue;
        gated.push_back(Json{{"name", request.value("name", Json())},
                             {"args", request.value("args", Json())}});
        gated_names.insert(request.value("name", ""));
      }
    }
    step["interrupts"] = std::move(interrupts);
    if (!gated.empty()) {
      step["gated"] = std::move(gated);
      Json not_gated = Json::array();
      const Json* ai = last_ai_message(messages_of(*at.snapshot));
      if (ai != nullptr && ai->contains("tool_calls") && (*ai)["tool_calls"].is_array()) {
        for (const Json& call : (*ai)["tool_calls"]) {
          if (!gated_names.count(call.value("name", ""))) not_gated.push_back(call.value("name", Json()));
        }
      }
      step["not_gated"] = std::move(not_gated);
    }
    step["decisions"] = decisions_at(at.id);
    return step;
  }

  // The audit entries that answered (or tried to answer) the pause at `checkpoint_id`.
  Json decisions_at(const std::string& checkpoint_id) const {
    Json out = Json::array();
    for (const AuditEntry& entry : sorted_audit()) {
      if (entry.checkpoint_id != checkpoint_id) continue;
      if (entry.kind != "decision" && entry.kind != "refusal" && entry.kind != "state_write") continue;
      out.push_back(Json{{"audit_id", entry.id},
                         {"kind", entry.kind},
                         {"decided_by", string_or_null(entry.reviewer)},
                         {"received_at", iso_or_null(entry.received_at)},
                         {"decided", entry.decided},
                         {"outcome", entry.outcome},
                         {"message", string_or_null(entry.message)},
                         {"run_id", string_or_null(entry.run_id)}});
    }
    return out;
  }

  std::vector<AuditEntry> sorted_audit() const {
    std::vector<AuditEntry> entries = sources_.audit;
    std::sort(entries.begin(), entries.end(),
              [](const AuditEntry& a, const AuditEntry& b) { return a.id < b.id; });
    return entries;
  }

  // A run that answered a pause names the run that paused there.
  void link_resumed_runs() {
    for (Json& run : runs_) {
      const std::string id = run["run_id"].get<std::string>();
      if (run["started_from_checkpoint_id"].is_null()) {
        // The parent of the run's first checkpoint.
        for (const CheckpointRow& row : rows_) {
          if (row.run_id == id) {
            if (!row.parent.empty()) run["started_from_checkpoint_id"] = row.parent;
            break;
          }
        }
      }
      if (!run["started_from_checkpoint_id"].is_string()) continue;
      auto paused = paused_at_.find(run["started_from_checkpoint_id"].get<std::string>());
      if (paused != paused_at_.end() && !paused->second.empty() && paused->second != id) {
        run["resumed_run_id"] = paused->second;
      }
    }
    for (Json& run : runs_) {
      Json resumed_by = Json::array();
      for (const Json& other : runs_) {
        if (other["resumed_run_id"] == run["run_id"]) resumed_by.push_back(other["run_id"]);
      }
      run["resumed_by_run_ids"] = std::move(resumed_by);
    }
  }

  Json checkpoints_json() const {
    Json out = Json::array();
    for (const CheckpointRow& row : rows_) {
      Json next = Json::array();
      for (const std::string& node : row.snapshot->next) next.push_back(node);
      out.push_back(Json{{"checkpoint_id", row.id},
                         {"parent_checkpoint_id", string_or_null(row.parent)},
                         {"created_at", iso_or_null(row.at)},
                         {"source", row.source},
                         {"step", row.step},
                         {"run_id", string_or_null(row.run_id)},
                         {"next", std::move(next)},
                         {"interrupted", paused_at_.count(row.id) > 0},
                         {"branch", row.branch}});
    }
    return out;
  }

  // Checkpoints a state write made (POST /threads/{id}/state), each with the applied state write
  // of the audit log it came from: the latest one received before it was written.
  Json state_updates_json() const {
    std::vector<AuditEntry> writes;
    for (const AuditEntry& entry : sorted_audit()) {
      if (entry.kind == "state_write" && entry.outcome == "applied") writes.push_back(entry);
    }
    std::set<std::int64_t> used;
    Json out = Json::array();
    for (const CheckpointRow& row : rows_) {
      if (row.source != "update" && row.source != "fork") continue;
      const AuditEntry* match = nullptr;
      for (const AuditEntry& entry : writes) {
        if (entry.received_at <= row.at && !used.count(entry.id)) match = &entry;
      }
      Json update{{"checkpoint_id", row.id},
                  {"parent_checkpoint_id", string_or_null(row.parent)},
                  {"created_at", iso_or_null(row.at)},
                  {"fork", row.branch},
                  {"by", nullptr},
                  {"audit_id", nullptr},
                  {"request", nullptr}};
      if (match != nullptr) {
        used.insert(match->id);
        update["by"] = string_or_null(match->reviewer);
        update["audit_id"] = match->id;
        update["request"] = match->decided;
      }
      out.push_back(std::move(update));
    }
    return out;
  }

  const TimelineSources& sources_;
  std::vector<CheckpointRow> rows_;
  std::vector<Json> runs_;
  std::vector<std::int64_t> run_created_;
  std::map<std::string, std::size_t> run_index_;
  std::map<std::string, std::string> paused_at_;  // checkpoint id -> the run that paused there
  Json outside_runs_ = Json::array();
};

}  // namespace

Json thread_timeline(const TimelineSources& sources) {
  return TimelineBuilder(sources).build();
}

}  // namespace tollgate::server
