// The demo review policy, written as a config file would write it (docs/config.md).
#include "demo/demo_tools.h"

namespace tollgate {
namespace {

constexpr const char* kDemoPolicy = R"({
  "send_email": {"allowed_decisions": ["approve", "edit", "reject", "respond"],
                 "description": "Send an email to {to} with the subject \"{subject}\"?"},
  "write_file": {"allowed_decisions": ["approve", "edit", "reject"],
                 "description": "Write {path} in the sandbox (replacing it if it exists)?"},
  "delete_file": {"allowed_decisions": ["approve", "edit", "reject"],
                  "description": "Delete {path} from the sandbox?"},
  "execute_sql": {"allowed_decisions": ["approve", "edit", "reject"],
                  "when": {"sql_writes": true},
                  "description": "Run this SQL, which changes the database?\n{query}"},
  "ask_user": {"allowed_decisions": ["respond"], "description": "The agent asks: {question}"}
})";

}  // namespace

HumanInTheLoopOptions demo_policy() {
  HumanInTheLoopOptions options;
  options.interrupt_on = parse_declared_interrupt_on(Json::parse(kDemoPolicy), "demo_policy");
  return options;
}

}  // namespace tollgate
