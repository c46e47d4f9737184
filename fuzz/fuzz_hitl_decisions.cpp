// The resume of a paused review: any JSON as the HITLResponse ({"decisions": [...]}) checked
// and applied against a batch of three reviewed calls (every decision allowed, approve/reject
// only, and a tool whose edits are schema-checked), in both key styles.
#include <cstdint>

#include "agent/hitl_review.h"
#include "fuzz_input.h"
#include "tollgate/error.h"
#include "tollgate/json_parse.h"
#include "tollgate/json_schema.h"

namespace {

using namespace tollgate;

Json interrupt_on() {
  return {{"send_email", true},
          {"get_weather", false},
          {"delete_file",
           {{"allowed_decisions", {"approve", "reject"}},
            {"description", {{"template", "Delete {path}?"}}},
            {"when", {{"arg", "path"}, {"starts_with", "/etc"}}}}},
          {"run_sql", {{"allowed_decisions", {"approve", "edit", "reject", "respond"}}}}};
}

HumanInTheLoopOptions options(KeyStyle style) {
  HumanInTheLoopOptions o;
  o.interrupt_on = parse_interrupt_on(interrupt_on());
  o.key_style = style;
  return o;
}

Json call(const char* id, const char* name, Json args) {
  return Json{{"id", id}, {"name", name}, {"args", std::move(args)}, {"type", "tool_call"}};
}

const Json& ai_message() {
  static const Json message{
      {"type", "ai"},
      {"id", "ai-1"},
      {"content", ""},
      {"tool_calls",
       {call("c1", "send_email", {{"to", "bob@example.com"}, {"subject", "Hi"}}),
        call("c2", "get_weather", {{"city", "Paris"}}),
        call("c3", "delete_file", {{"path", "/etc/passwd"}}),
        call("c4", "run_sql", {{"sql", "DELETE FROM t"}})}}};
  return message;
}

const hitl::ToolCatalog& catalog() {
  static const JsonSchema email = JsonSchema::compile(Json::parse(R"({
    "type": "object", "required": ["to", "subject"], "additionalProperties": false,
    "properties": {"to": {"type": "string", "pattern": "^[^@]+@[^@]+$"},
                   "subject": {"type": "string", "maxLength": 100}}})"));
  static const hitl::ToolCatalog c{
      {"send_email", "get_weather", "delete_file", "run_sql"},
      [](const std::string& tool, const Json& args) {
        std::vector<std::string> errors;
        if (tool == "send_email") {
          for (const SchemaError& e : email.validate(args)) errors.push_back(e.to_string());
        }
        return errors;
      }};
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const HitlPolicy python(options(KeyStyle::kPython));
  static const HitlPolicy js(options(KeyStyle::kJs));
  const Json response = try_parse_json(fuzz::as_string(data, size));
  if (response.is_discarded()) return 0;
  for (const HitlPolicy* policy : {&python, &js}) {
    const hitl::ReviewBatch batch = hitl::build_review_batch(*policy, ai_message(), nullptr, nullptr);
    try {
      hitl::ReviewOutcome outcome =
          hitl::apply_decisions(*policy, batch, ai_message(), response, catalog(), nullptr, nullptr);
      for (const auto& tool_call : ai_message()["tool_calls"]) {
        (void)hitl::executed_call(tool_call, outcome.edited).dump();
      }
      (void)outcome.tool_messages.dump();
    } catch (const Error&) {
      // A refusal: what a reviewer's bad answer gets.
    }
  }
  return 0;
}
