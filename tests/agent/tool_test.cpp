// Tools and run_tool_call: the ToolMessage the model gets back in every case
// (HITL_SEMANTICS.md §2.4).
#include "tollgate/tool.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "tollgate/error.h"
#include "tollgate/graph.h"
#include "tollgate/memory_saver.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {

const Json kEmailArgs = Json::parse(R"({
  "type": "object",
  "properties": {"to": {"type": "string"}, "subject": {"type": "string", "maxLength": 80}},
  "required": ["to"],
  "additionalProperties": false
})");

Tool send_email() {
  return Tool("send_email", "Sends an email.", kEmailArgs,
              [](const Json& args, const ToolContext&) -> Json {
                return "Email sent to " + args["to"].get<std::string>();
              });
}

Tool get_weather() {
  return Tool("get_weather", "Weather for a city.",
              Json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})"),
              [](const Json& args, const ToolContext&) -> Json {
                return Json{{"city", args.value("city", "Oslo")}, {"celsius", 21}};
              });
}

Json call(const std::string& name, Json args, const std::string& id = "call_1") {
  return make_tool_call(name, std::move(args), id);
}

TEST(RunToolCall, SuccessfulCallAnswersWithTheResultText) {
  Json message = run_tool_call(call("send_email", {{"to", "bob@example.com"}}), {send_email()}, {});
  EXPECT_EQ(message["type"], "tool");
  EXPECT_EQ(message["content"], "Email sent to bob@example.com");
  EXPECT_EQ(message["tool_call_id"], "call_1");
  EXPECT_EQ(message["name"], "send_email");
  EXPECT_EQ(message["status"], "success");
  EXPECT_FALSE(message_id(message).empty());
}

TEST(RunToolCall, JsonResultIsSerialisedCompactly) {
  Json message = run_tool_call(call("get_weather", {{"city", "Rome"}}), {get_weather()}, {});
  EXPECT_EQ(message["content"], R"({"celsius":21,"city":"Rome"})");
}

TEST(RunToolCall, ToolMessageResultIsUsedWithMissingFieldsFilledIn) {
  Tool tool("lookup", "", Json::object(), [](const Json&, const ToolContext&) -> Json {
    return Json{{"type", "tool"}, {"content", "3 rows"}, {"artifact", {{"rows", {1, 2, 3}}}}};
  });
  Json message = run_tool_call(call("lookup", Json::object(), "c9"), {tool}, {});
  EXPECT_EQ(message["content"], "3 rows");
  EXPECT_EQ(message["artifact"]["rows"].size(), 3u);
  EXPECT_EQ(message["tool_call_id"], "c9");
  EXPECT_EQ(message["name"], "lookup");
  EXPECT_EQ(message["status"], "success");
}

TEST(RunToolCall, UnknownToolListsTheAvailableOnes) {
  Json message = run_tool_call(call("nope", Json::object()), {send_email(), get_weather()}, {});
  EXPECT_EQ(message["content"],
            "Error: nope is not a valid tool, try one of [send_email, get_weather].");
  EXPECT_EQ(message["status"], "error");
  EXPECT_EQ(message["tool_call_id"], "call_1");
}

TEST(RunToolCall, InvalidArgumentsNameTheFieldAndDoNotRunTheTool) {
  int runs = 0;
  Tool tool("send_email", "", kEmailArgs, [&runs](const Json&, const ToolContext&) -> Json {
    ++runs;
    return "sent";
  });
  Json message = run_tool_call(call("send_email", {{"to", 5}}), {tool}, {});
  EXPECT_EQ(message["content"],
            "Error invoking tool 'send_email' with kwargs {\"to\":5} with error:\n"
            " to: expected string, got number\n"
            " Please fix the error and try again.");
  EXPECT_EQ(message["status"], "error");
  EXPECT_EQ(runs, 0);
}

TEST(RunToolCall, EveryInvalidFieldGetsALine) {
  Json message = run_tool_call(call("send_email", {{"subject", std::string(81, 's')}, {"cc", "x"}}),
                               {send_email()}, {});
  std::string content = message["content"];
  EXPECT_NE(content.find("\n (root): missing required property 'to'\n"), std::string::npos);
  EXPECT_NE(content.find("\n cc: additional property is not allowed\n"), std::string::npos);
  EXPECT_NE(content.find("\n subject: must be at most 80 characters\n"), std::string::npos);
}

TEST(RunToolCall, NonObjectArgumentsAreRefusedEvenWithAnOpenSchema) {
  Json tool_call = call("get_weather", Json::array({1}));
  Json message = run_tool_call(tool_call, {get_weather()}, {});
  EXPECT_EQ(message["status"], "error");
  EXPECT_NE(message["content"].get<std::string>().find("(root): expected object, got array"),
            std::string::npos);
}

TEST(RunToolCall, ArgumentsGivenAsJsonTextAreParsed) {
  Json tool_call = {{"id", "c1"}, {"name", "send_email"}, {"args", R"({"to":"amy"})"}};
  EXPECT_EQ(run_tool_call(tool_call, {send_email()}, {})["content"], "Email sent to amy");
}

TEST(RunToolCall, MissingArgumentsAreAnEmptyObject) {
  Json tool_call = {{"id", "c1"}, {"name", "get_weather"}};
  EXPECT_EQ(run_tool_call(tool_call, {get_weather()}, {})["status"], "success");
}

TEST(RunToolCall, ToolExceptionBecomesAnErrorMessage) {
  Tool tool("disk", "", Json::object(),
            [](const Json&, const ToolContext&) -> Json { throw std::runtime_error("disk full"); });
  Json message = run_tool_call(call("disk", Json::object()), {tool}, {});
  EXPECT_EQ(message["content"], "Error: disk full\n Please fix your mistakes.");
  EXPECT_EQ(message["status"], "error");
}

// Stands in for the graph's internal pause signal, which is deliberately not a
// std::exception.
struct PauseSignal {
  int interrupt_index;
};

TEST(RunToolCall, NonStdExceptionLikeAnInterruptPropagatesUntouched) {
  Tool tool("ask", "", Json::object(),
            [](const Json&, const ToolContext&) -> Json { throw PauseSignal{7}; });
  try {
    run_tool_call(call("ask", Json::object()), {tool}, {});
    ADD_FAILURE() << "the pause was swallowed";
  } catch (const PauseSignal& signal) {
    EXPECT_EQ(signal.interrupt_index, 7);
  }
}

TEST(RunToolCall, ContextCarriesTheCallIdAndRunContext) {
  Json seen;
  Tool tool("whoami", "", Json::object(), [&seen](const Json&, const ToolContext& context) -> Json {
    seen = {{"id", context.tool_call_id},
            {"user", context.context().value("user", "")},
            {"has_runtime", context.runtime != nullptr}};
    return "ok";
  });
  Json run_context = {{"user", "ada"}};
  ToolContext context;
  context.tool_call_id = "stale";
  context.run_context = &run_context;
  run_tool_call(call("whoami", Json::object(), "call_42"), {tool}, context);
  EXPECT_EQ(seen, Json::parse(R"({"id":"call_42","user":"ada","has_runtime":false})"));
}

TEST(RunToolCall, ContextWithoutRunContextReadsAsNull) {
  ToolContext context;
  EXPECT_TRUE(context.context().is_null());
}

TEST(RunToolCall, ContextOutsideARunNamesNobody) {
  ToolContext context;
  EXPECT_TRUE(context.started_by().empty());
  EXPECT_TRUE(context.decided_by().empty());
}

TEST(RunToolCall, CallWithoutIdIsRefused) {
  Json tool_call = {{"name", "send_email"}, {"args", {{"to", "x"}}}};
  try {
    run_tool_call(tool_call, {send_email()}, {});
    ADD_FAILURE() << "accepted a call without id";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()),
              "Tool call `send_email` has no ID, so its result can't be matched to it. Make sure "
              "the chat model returns tool call IDs.");
  }
}

TEST(RunToolCall, CallWithoutNameIsRefused) {
  EXPECT_THROW(run_tool_call(Json{{"id", "c"}}, {send_email()}, {}), Error);
}

TEST(Tool, BadArgsSchemaIsRefusedNamingTheTool) {
  try {
    Tool("broken", "", Json{{"type", "strin"}},
         [](const Json&, const ToolContext&) -> Json { return ""; });
    ADD_FAILURE() << "accepted a bad schema";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(
        std::string(e.what()).starts_with("tool 'broken': args schema: invalid JSON schema"))
        << e.what();
  }
}

TEST(Tool, EmptyNameOrFunctionIsRefused) {
  EXPECT_THROW(
      Tool("", "", Json::object(), [](const Json&, const ToolContext&) -> Json { return ""; }),
      Error);
  EXPECT_THROW(Tool("t", "", Json::object(), ToolFunction()), Error);
}

TEST(Tool, KeepsItsDefinition) {
  Tool tool = send_email();
  EXPECT_EQ(tool.name(), "send_email");
  EXPECT_EQ(tool.description(), "Sends an email.");
  EXPECT_EQ(tool.args_schema(), kEmailArgs);
}

TEST(Tool, FindToolByName) {
  std::vector<Tool> tools = {send_email(), get_weather()};
  ASSERT_NE(find_tool(tools, "get_weather"), nullptr);
  EXPECT_EQ(find_tool(tools, "get_weather")->name(), "get_weather");
  EXPECT_EQ(find_tool(tools, "missing"), nullptr);
}

}  // namespace
}  // namespace tollgate

namespace tollgate {
namespace {

// The real thing: tollgate::interrupt() inside a tool run by a graph node pauses the run, and
// the resumed run's tool call gets the answer.
TEST(RunToolCallInGraph, InterruptInsideAToolPausesTheRunAndResumesWithTheAnswer) {
  Tool confirm("confirm", "", Json::object(), [](const Json&, const ToolContext& context) -> Json {
    EXPECT_NE(context.runtime, nullptr);
    Json answer = interrupt(Json{{"question", "Proceed?"}});
    return "answer: " + answer.get<std::string>();
  });
  StateSchema schema;
  schema.add_messages("messages");
  StateGraph builder(schema);
  builder.add_node("tools", [confirm](const State&, Runtime& runtime) -> NodeResult {
    ToolContext context;
    context.runtime = &runtime;
    context.run_context = &runtime.context();
    Json message =
        run_tool_call(make_tool_call("confirm", Json::object(), "call_1"), {confirm}, context);
    return Json{{"messages", Json::array({message})}};
  });
  builder.add_edge(START, "tools");
  builder.add_edge("tools", END);
  CompileOptions options;
  options.checkpointer = make_memory_saver();
  auto graph = builder.compile(options);
  RunConfig config;
  config.thread_id = "t1";

  RunResult first = graph->invoke(Json::object(), config);
  ASSERT_EQ(first.interrupts.size(), 1u);
  EXPECT_EQ(first.interrupts[0].value, Json({{"question", "Proceed?"}}));

  Command resume;
  resume.resume = "yes";
  RunResult second = graph->invoke(resume, config);
  EXPECT_FALSE(second.paused);
  const Json& messages = second.values["messages"];
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["content"], "answer: yes");
  EXPECT_EQ(messages[0]["status"], "success");
  EXPECT_EQ(messages[0]["tool_call_id"], "call_1");
}

}  // namespace
}  // namespace tollgate
