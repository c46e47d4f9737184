// The `task` tool: runs a subagent as a nested graph of the calling tool task, so its
// checkpoints live in that task's namespace and its interrupts pause the parent run; the
// subagent's final text becomes the parent's ToolMessage and its file changes the parent's.
#include <map>

#include "agent/deep_agent_texts.h"
#include "agent/hitl_texts.h"
#include "tollgate/deep_agent.h"
#include "tollgate/error.h"
#include "tollgate/graph.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {

using hitl_texts::format_text;

// The last AI message with text (trailing whitespace dropped), or the structured response.
std::string final_text(const Json& output) {
  if (output.contains("structured_response") && !output["structured_response"].is_null()) {
    return output["structured_response"].dump();
  }
  const Json& messages = output["messages"];
  for (auto m = messages.rbegin(); m != messages.rend(); ++m) {
    if (message_type(*m) != "ai") continue;
    std::string text = message_text(*m);
    text.erase(text.find_last_not_of(" \t\r\n") + 1);
    if (!text.empty()) return text;
  }
  return "";
}

// {path: file | null} turning `before` into `after`.
Json files_diff(const Json& before, const Json& after) {
  Json diff = Json::object();
  if (!after.is_object()) return diff;
  for (const auto& [path, file] : after.items()) {
    if (!before.is_object() || !before.contains(path) || before[path] != file) diff[path] = file;
  }
  if (before.is_object()) {
    for (const auto& [path, file] : before.items()) {
      if (!after.contains(path)) diff[path] = nullptr;
    }
  }
  return diff;
}

Json run_subagent(const CompiledGraph& graph, const std::string& description,
                  const ToolContext& context) {
  if (context.runtime == nullptr) {
    throw Error::Internal("the task tool runs subagents inside an agent's tools node");
  }
  const Json& files = context.runtime->graph_state()["files"];
  Json input{{"messages", Json::array({human_message(description)})}};
  if (files.is_object()) input["files"] = files;
  const Json output = context.runtime->invoke_subgraph(graph, input);
  if (!output.is_object() || !output.contains("messages")) {
    throw Error::Unprocessable(std::string(deep_texts::kSubagentWithoutMessages));
  }
  if (context.state_update != nullptr && output.contains("files")) {
    Json diff = files_diff(files, output["files"]);
    if (!diff.empty()) {
      Json& update = *context.state_update;
      if (!update.is_object()) update = Json::object();
      update["files"] = std::move(diff);
    }
  }
  return final_text(output);
}

}  // namespace

Tool make_task_tool(std::vector<CompiledSubAgent> subagents, std::string description) {
  std::map<std::string, std::shared_ptr<const CompiledGraph>> graphs;
  std::string available;
  for (auto& sub : subagents) {
    if (!sub.runnable) {
      throw Error::InvalidArgument("subagent '" + sub.name + "': a compiled graph is required");
    }
    if (!graphs.emplace(sub.name, sub.runnable).second) {
      throw Error::InvalidArgument("subagent '" + sub.name + "' is defined more than once");
    }
    available += (available.empty() ? "- " : "\n- ") + sub.name + ": " + sub.description;
  }
  if (description.empty()) description = std::string(deep_texts::kTaskToolDescription);
  description = format_text(description, {{"available_agents", available}});
  const Json schema{
      {"type", "object"},
      {"properties",
       {{"description",
         {{"type", "string"}, {"description", std::string(deep_texts::kTaskDescriptionArg)}}},
        {"subagent_type",
         {{"type", "string"}, {"description", std::string(deep_texts::kTaskSubagentTypeArg)}}}}},
      {"required", {"description", "subagent_type"}}};
  return Tool("task", std::move(description), schema,
              [graphs](const Json& args, const ToolContext& context) -> Json {
                const std::string type = args.value("subagent_type", "");
                const auto it = graphs.find(type);
                if (it == graphs.end()) {
                  std::string allowed;
                  for (const auto& [name, graph] : graphs) {
                    allowed += (allowed.empty() ? "`" : ", `") + name + "`";
                  }
                  return format_text(deep_texts::kUnknownSubagent,
                                     {{"type", type}, {"allowed", allowed}});
                }
                return run_subagent(*it->second, args.value("description", ""), context);
              });
}

}  // namespace tollgate
