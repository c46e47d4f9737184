// run_tool_call: one tool call in, one ToolMessage out. Every way a call can go wrong that
// the model can fix (unknown tool, bad arguments, a failing tool) is answered in the model's
// own terms with an error ToolMessage; only a graph interrupt escapes.
#include <utility>

#include "agent/effect_ledger.h"
#include "agent/tool_fault_seam.h"
#include "tollgate/error.h"
#include "tollgate/graph.h"
#include "tollgate/messages.h"
#include "tollgate/tool.h"

namespace tollgate {
namespace {

std::string compact(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string unknown_tool_text(const std::string& name, const std::vector<Tool>& tools) {
  std::string names;
  for (const auto& tool : tools) {
    if (!names.empty()) names += ", ";
    names += tool.name();
  }
  return "Error: " + name + " is not a valid tool, try one of [" + names + "].";
}

std::string invalid_args_text(const std::string& name, const Json& args,
                              const std::vector<SchemaError>& errors) {
  std::string text =
      "Error invoking tool '" + name + "' with kwargs " + compact(args) + " with error:\n";
  for (const auto& error : errors) text += " " + error.to_string() + "\n";
  return text + " Please fix the error and try again.";
}

// Arguments sent as JSON text (some providers do) are parsed; anything else is left for
// check_args to refuse.
Json arguments_of(const Json& tool_call) {
  auto it = tool_call.find("args");
  if (it == tool_call.end() || it->is_null()) return Json::object();
  if (it->is_string()) {
    Json parsed = Json::parse(it->get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (parsed.is_object()) return parsed;
  }
  return *it;
}

// The tool's return value as the ToolMessage answering `call_id`.
Json to_tool_message(Json result, const std::string& call_id, const std::string& name) {
  if (result.is_object() && result.value("type", Json()) == "tool") {
    if (!result.contains("tool_call_id")) result["tool_call_id"] = call_id;
    if (!result.contains("name")) result["name"] = name;
    if (!result.contains("status")) result["status"] = "success";
    return normalize_message(std::move(result));
  }
  Json content = result.is_string() ? std::move(result) : Json(compact(result));
  return tool_message(std::move(content), call_id, name, "success");
}

}  // namespace

Json run_tool_call(const Json& tool_call, const std::vector<Tool>& tools, ToolContext context) {
  if (!tool_call.is_object()) throw Error::InvalidArgument("tool_call: must be an object");
  auto name_it = tool_call.find("name");
  if (name_it == tool_call.end() || !name_it->is_string()) {
    throw Error::InvalidArgument("tool_call.name: must be a string");
  }
  const std::string& name = name_it->get_ref<const std::string&>();
  auto id_it = tool_call.find("id");
  if (id_it == tool_call.end() || !id_it->is_string() || id_it->get<std::string>().empty()) {
    throw Error::InvalidArgument("Tool call `" + name +
                                 "` has no ID, so its result can't be matched to it. Make sure "
                                 "the chat model returns tool call IDs.");
  }
  const std::string& call_id = id_it->get_ref<const std::string&>();

  const Tool* tool = find_tool(tools, name);
  if (tool == nullptr) {
    return tool_message(unknown_tool_text(name, tools), call_id, name, "error");
  }
  Json args = arguments_of(tool_call);
  std::vector<SchemaError> errors = tool->check_args(args);
  if (!errors.empty()) {
    return tool_message(invalid_args_text(name, args, errors), call_id, name, "error");
  }
  context.tool_call_id = call_id;
  const std::string digest = tool_call_digest(name, args);
  context.idempotency_key =
      idempotency_key(context.runtime != nullptr ? context.runtime->thread_id() : std::string(),
                      call_id, digest);
  const auto execute = [&]() -> Json {
    Json message;
    try {
      message = to_tool_message(tool->invoke(args, context), call_id, name);
    } catch (const std::exception& e) {  // NOT catch(...): an interrupt must pass through
      message = tool_message("Error: " + std::string(e.what()) + "\n Please fix your mistakes.",
                             call_id, name, "error");
    }
    tool_faults::crash_if_planned_after(name);
    return message;
  };
  if (context.runtime == nullptr || tool->idempotent()) {
    tool_faults::crash_if_planned_before(name);
    return execute();
  }
  return effect_ledger::run_recorded(effect_ledger::LedgerCall{name, call_id, args, digest},
                                     context, execute);
}

}  // namespace tollgate
