// write_todos (LangChain's TodoListMiddleware tool) and the deep agent's state keys.
#include "agent/deep_agent_texts.h"
#include "agent/hitl_texts.h"
#include "agent/python_format.h"
#include "tollgate/deep_agent.h"

namespace tollgate {
namespace {

using hitl_texts::format_text;

class DeepAgentState final : public AgentMiddleware {
 public:
  std::string name() const override { return "DeepAgentState"; }
  unsigned hooks() const override { return 0; }
  void extend_state(StateSchema& schema) const override {
    schema.reducer(
        "files",
        [](const Json& current, const Json& update) {
          Json files = current.is_object() ? current : Json::object();
          if (!update.is_object()) return files;
          for (const auto& [path, file] : update.items()) {
            if (file.is_null()) {
              files.erase(path);
            } else {
              files[path] = file;
            }
          }
          return files;
        },
        Json::object());
    // The last list written wins (two parallel write_todos calls must not fail the run).
    schema.reducer("todos", [](const Json&, const Json& update) { return update; });
  }
};

}  // namespace

Tool make_write_todos_tool() {
  const Json schema{
      {"type", "object"},
      {"properties",
       {{"todos",
         {{"type", "array"},
          {"description", "The updated todo list."},
          {"items",
           {{"type", "object"},
            {"properties",
             {{"content", {{"type", "string"}}},
              {"status",
               {{"type", "string"}, {"enum", {"pending", "in_progress", "completed"}}}}}},
            {"required", {"content", "status"}}}}}}}},
      {"required", {"todos"}}};
  return Tool("write_todos", std::string(deep_texts::kWriteTodosToolDescription), schema,
              [](const Json& args, const ToolContext& context) -> Json {
                const Json& todos = args["todos"];
                if (context.state_update != nullptr) {
                  Json& update = *context.state_update;
                  if (!update.is_object()) update = Json::object();
                  update["todos"] = todos;
                }
                return format_text(deep_texts::kTodosUpdated, {{"todos", python_repr(todos)}});
              });
}

std::shared_ptr<const AgentMiddleware> make_deep_agent_state() {
  return std::make_shared<DeepAgentState>();
}

}  // namespace tollgate
