// RunManager's part of the review audit log: a run that resumes a thread carries a person's
// decision; it is recorded before the graph sees it and settled once the run ends.
#include <iostream>

#include "server/audit_log.h"
#include "server/review_binding.h"
#include "server/run_manager.h"
#include "server/wire_format.h"

namespace tollgate::server {

std::optional<std::int64_t> RunManager::audit_decision(const RunRecord& record,
                                                       const RunRequest& request,
                                                       const std::string& graph_id,
                                                       const std::string& checkpoint_id) {
  if (audit_ == nullptr || !carries_decision(request)) return std::nullopt;
  AuditEntry entry;
  entry.reviewer = audit_identity(request.decided_by);
  entry.thread_id = record.thread_id;
  entry.run_id = record.run_id;
  entry.assistant_id = record.assistant_id;
  entry.graph_id = graph_id;
  entry.checkpoint_id = checkpoint_id;
  // What was pending when the decision was accepted (the thread may have moved on since; the
  // run is then refused). A run stored before decisions were bound reads it now.
  if (request.binding.is_object()) {
    entry.checkpoint_id = request.binding.value("checkpoint_id", "");
    entry.shown = request.binding.value("shown", Json::object());
  } else if (const CompiledGraph* g = graph(graph_id); g != nullptr) {
    RunConfig config;
    config.thread_id = record.thread_id;
    config.checkpoint_id = checkpoint_id;
    entry.shown = interrupts_by_task(g->get_state(config));
  }
  entry.decided = request.binding.is_object() && request.binding.contains("decided")
                      ? request.binding["decided"]
                      : (*request.command)["resume"];
  // Throws when the entry cannot be stored: the decision is then not applied.
  return audit_->append(entry);
}

bool RunManager::audits_run_start(const RunRequest& request) const {
  return audit_ != nullptr && !carries_decision(request) && !request.continues_cut_off_step;
}

void RunManager::audit_run_start(const RunRecord& record, const RunRequest& request,
                                 const std::string& graph_id, const std::string& checkpoint_id) {
  if (!audits_run_start(request)) return;
  AuditEntry entry;
  entry.kind = "run_start";
  entry.reviewer = audit_identity(request.started_by);
  entry.thread_id = record.thread_id;
  entry.run_id = record.run_id;
  entry.assistant_id = record.assistant_id;
  entry.graph_id = graph_id;
  entry.checkpoint_id = checkpoint_id;
  entry.decided = request.command ? *request.command : request.input;
  entry.outcome = "started";
  // Throws when the entry cannot be stored: the run then fails before it starts.
  audit_->append(entry);
}

void RunManager::settle_decision(std::optional<std::int64_t> audit_id, const RunRecord& record,
                                 bool refused, const std::string& message, bool approval_only) {
  if (!audit_id || audit_ == nullptr) return;
  const char* outcome = refused                                                 ? "refused"
                        : record.status == RunStatus::kSuccess && approval_only ? "recorded"
                        : record.status == RunStatus::kSuccess                  ? "applied"
                        : record.status == RunStatus::kInterrupted              ? "cancelled"
                                                                                : "failed";
  try {
    audit_->settle(*audit_id, outcome, message);
  } catch (const std::exception& e) {
    // The entry stays pending and is marked lost at the next start; say so now.
    std::cerr << "tollgate: audit entry " << *audit_id << " of run " << record.run_id
              << " could not be settled as " << outcome << ": " << e.what() << std::endl;
  }
}

}  // namespace tollgate::server
