// The tools the HITL scenarios use (the reference traces' set, EXAMPLES.md): deterministic,
// and each execution is recorded so a scenario can assert exactly which tools ran.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tollgate/chat_model.h"
#include "tollgate/json.h"
#include "tollgate/tool.h"

namespace tollgate::scenarios {

// Executions of the scenario tools, in completion order. Thread-safe (parallel tool calls).
class ExecutionLog {
 public:
  ExecutionLog() = default;
  // `on_record` also receives each entry as it is recorded (e.g. to append it to a file).
  explicit ExecutionLog(std::function<void(const Json&)> on_record);

  void record(const std::string& tool, const Json& args);
  Json entries() const;  // [{"tool","args"}]

 private:
  std::function<void(const Json&)> on_record_;
  mutable std::mutex mutex_;  // guards entries_ and calls to on_record_
  Json entries_ = Json::array();
};

// The tool named `name` from the catalog:
//   send_email{to, subject}     -> "Email sent to <to> with subject '<subject>'"
//   get_weather{city}           -> "It is sunny in <city>"
//   delete_file{path}           -> "deleted <path>"
//   book_flight{destination}    -> interrupt({type:"form",...}); "Booked <d>, seat <seat>" or
//                                  "Booking to <d> cancelled by user"
//   remove_file{path}           -> "Deleted <path>"          (the deepagents guide's tools)
//   fetch_file{path}, read_file{path} -> "Contents of <path>"
//   notify_email{to, subject, body}   -> "Sent email to <to>"
//   request_approval{action_description} -> interrupt({type:"approval_request",...});
//                                  "Action '<a>' was APPROVED. Proceeding..." or "... REJECTED ..."
// Throws std::invalid_argument for an unknown name.
Tool scenario_tool(const std::string& name, std::shared_ptr<ExecutionLog> log);

}  // namespace tollgate::scenarios
