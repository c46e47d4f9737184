// The demo deep agent, written as a config file would declare it (docs/config.md).
#include "demo/demo_tools.h"

#include "tollgate/error.h"
#include "tollgate/filesystem.h"

namespace tollgate {
namespace {

constexpr const char* kDemoDeepAgent = R"({
  "system_prompt": "You are a helpful assistant with a folder of files. Plan with write_todos, work in the files, and hand self-contained work to a subagent with task. Writes, edits, deletes and anything under /secrets/ wait for a person's decision.",
  "interrupt_on": {
    "write_file": {"allowed_decisions": ["approve", "edit", "reject"],
                   "description": "Write {file_path} (replacing it if it exists)?"},
    "edit_file": {"allowed_decisions": ["approve", "edit", "reject"],
                  "description": "Edit {file_path}?"},
    "delete": {"allowed_decisions": ["approve", "reject"],
               "description": "Delete {file_path}?"}
  },
  "permissions": [
    {"operations": ["read"], "paths": ["/secrets/**"], "mode": "interrupt"}
  ],
  "name": "deep"
})";

}  // namespace

DeepAgentOptions demo_deep_agent(const DemoEnvironment& env, std::shared_ptr<ChatModel> model) {
  DeepAgentResolvers resolvers;
  resolvers.tool = [](const std::string& name) -> Tool {
    throw Error::InvalidArgument("unknown tool '" + name + "'");
  };
  resolvers.interrupt_on = [](const Json& interrupt_on, const std::string& where) {
    return parse_declared_interrupt_on(interrupt_on, where);
  };
  DeepAgentOptions options =
      parse_deep_agent_options(Json::parse(kDemoDeepAgent), resolvers, "demo_deep_agent");
  options.backend = make_directory_backend(env.sandbox().string());
  options.model = std::move(model);
  return options;
}

}  // namespace tollgate
