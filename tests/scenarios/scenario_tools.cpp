#include "scenarios/scenario_tools.h"

#include <stdexcept>

#include "tollgate/graph.h"

namespace tollgate::scenarios {

ExecutionLog::ExecutionLog(std::function<void(const Json&)> on_record)
    : on_record_(std::move(on_record)) {}

void ExecutionLog::record(const std::string& tool, const Json& args) {
  std::lock_guard lock(mutex_);
  entries_.push_back(Json{{"tool", tool}, {"args", args}});
  if (on_record_) on_record_(entries_.back());
}

Json ExecutionLog::entries() const {
  std::lock_guard lock(mutex_);
  return entries_;
}

namespace {

Json object_schema(std::initializer_list<const char*> string_fields) {
  Json properties = Json::object();
  Json required = Json::array();
  for (const char* field : string_fields) {
    properties[field] = {{"type", "string"}};
    required.push_back(field);
  }
  return {{"type", "object"}, {"properties", properties}, {"required", required}};
}

std::string text(const Json& args, const char* key) {
  return args.value(key, "");
}

}  // namespace

Tool scenario_tool(const std::string& name, std::shared_ptr<ExecutionLog> log) {
  if (name == "send_email") {
    Json schema = object_schema({"to", "subject"});
    schema["required"] = Json::array({"to"});
    return Tool(name, "Sends an email.", schema,
                [log](const Json& args, const ToolContext&) -> Json {
                  log->record("send_email", args);
                  return "Email sent to " + text(args, "to") + " with subject '" +
                         text(args, "subject") + "'";
                });
  }
  if (name == "get_weather") {
    return Tool(name, "Gets the weather of a city.", object_schema({"city"}),
                [log](const Json& args, const ToolContext&) -> Json {
                  log->record("get_weather", args);
                  return "It is sunny in " + text(args, "city");
                });
  }
  if (name == "delete_file") {
    return Tool(name, "Deletes a file.", object_schema({"path"}),
                [log](const Json& args, const ToolContext&) -> Json {
                  log->record("delete_file", args);
                  return "deleted " + text(args, "path");
                });
  }
  // The seed examples' tools (deepagents' human-in-the-loop guide).
  if (name == "remove_file") {
    return Tool(name, "Delete a file from the filesystem.", object_schema({"path"}),
                [log](const Json& args, const ToolContext&) -> Json {
                  log->record("remove_file", args);
                  return "Deleted " + text(args, "path");
                });
  }
  if (name == "fetch_file" || name == "read_file") {
    return Tool(name, "Read a file from the filesystem.", object_schema({"path"}),
                [log, name](const Json& args, const ToolContext&) -> Json {
                  log->record(name, args);
                  return "Contents of " + text(args, "path");
                });
  }
  if (name == "notify_email") {
    return Tool(name, "Send an email.", object_schema({"to", "subject", "body"}),
                [log](const Json& args, const ToolContext&) -> Json {
                  log->record("notify_email", args);
                  return "Sent email to " + text(args, "to");
                });
  }
  if (name == "request_approval") {
    return Tool(name, "Request human approval before proceeding with an action.",
                object_schema({"action_description"}),
                [log](const Json& args, const ToolContext&) -> Json {
                  const std::string action = text(args, "action_description");
                  const Json approval =
                      interrupt(Json{{"type", "approval_request"},
                                     {"action", action},
                                     {"message", "Please approve or reject: " + action}});
                  log->record("request_approval", args);
                  if (approval.is_object() && approval.value("approved", false)) {
                    return "Action '" + action + "' was APPROVED. Proceeding...";
                  }
                  return "Action '" + action + "' was REJECTED. Reason: " +
                         (approval.is_object() ? approval.value("reason", "No reason provided")
                                               : std::string("No reason provided"));
                });
  }
  if (name == "book_flight") {
    return Tool(name, "Books a flight after the traveller confirms a form.",
                object_schema({"destination"}),
                [log](const Json& args, const ToolContext&) -> Json {
                  const std::string destination = text(args, "destination");
                  const Json answer = interrupt(Json{
                      {"type", "form"},
                      {"title", "Confirm booking"},
                      {"fields", Json::array({Json{{"name", "seat"}, {"type", "string"}},
                                              Json{{"name", "confirm"}, {"type", "boolean"}}})},
                      {"destination", destination}});
                  log->record("book_flight", args);
                  if (answer.is_object() && answer.value("confirm", false)) {
                    return "Booked " + destination + ", seat " + answer.value("seat", "");
                  }
                  return "Booking to " + destination + " cancelled by user";
                });
  }
  throw std::invalid_argument("unknown scenario tool '" + name + "'");
}

}  // namespace tollgate::scenarios
