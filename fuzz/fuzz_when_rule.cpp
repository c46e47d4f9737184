// The review policy grammar: any JSON as a tool's `when` rule, in both parsers that read one
// (the config file's declarative interrupt_on and parse_interrupt_on), then the rule asked
// about a call. An input [rule, args] gives the call's arguments too.
#include <cstdint>

#include "fuzz_input.h"
#include "tollgate/agent_config.h"
#include "tollgate/error.h"
#include "tollgate/human_in_the_loop.h"
#include "tollgate/json_parse.h"

namespace {

using namespace tollgate;

void ask(const InterruptOn& interrupt_on, const Json& args) {
  HumanInTheLoopOptions options;
  options.interrupt_on = interrupt_on;
  const HitlPolicy policy(std::move(options));
  const Json call{{"id", "c1"}, {"name", "tool"}, {"args", args}};
  const ToolCallReview review{call, nullptr, nullptr};
  if (policy.review_for(review)) (void)policy.describe(review);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Json input = try_parse_json(fuzz::as_string(data, size));
  if (input.is_discarded()) return 0;
  const bool with_args = input.is_array() && input.size() == 2;
  const Json rule = with_args ? input[0] : input;
  const Json args = with_args ? input[1]
                              : Json{{"to", "bob@example.com"},
                                     {"path", "/etc/hosts"},
                                     {"sql", "DELETE FROM notes"},
                                     {"count", 3},
                                     {"tags", {"a", "b"}}};
  const Json map{{"tool", {{"allowed_decisions", {"approve", "reject"}}, {"when", rule}}}};
  try {
    ask(parse_declared_interrupt_on(map, "interrupt_on"), args);
  } catch (const Error&) {
  }
  try {
    ask(parse_interrupt_on(map), args);
  } catch (const Error&) {
  }
  return 0;
}
