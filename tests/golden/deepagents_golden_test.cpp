// The deepagents reference traces as our own test cases: H1/H2 (shared/reference/golden, the
// subagent review surfacing on the parent) and J1-J4 (data/, recorded from deepagents 1.14.1
// by deepagents_js/record.mjs). Each runs create_deep_agent on the trace's model script and
// compares what a user observes: interrupts in order, what ran, the final messages. Where we
// differ on purpose (Python's texts, ToolMessage status "success" for JS's null, a path the JS
// reference lets through), the test says so and checks ours.
#include <gtest/gtest.h>

#include <fstream>

#include "support/deep_agent_fakes.h"
#include "tollgate/deep_agent.h"
#include "tollgate/memory_saver.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {

Json load(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return Json::parse(in);
}
// H1/H2 are the reference's deepagents traces (copied from shared/reference/golden so a clone
// tests on its own); J1–J4 were recorded from deepagents JS (tests/golden/deepagents_js).
Json recorded(const std::string& name) {
  return load(std::string(TOLLGATE_SOURCE_DIR) + "/tests/golden/data/" + name + ".json");
}
Json reference(const std::string& name) { return recorded(name); }

using testing::answered;
using testing::call;
using testing::delegating;
using testing::first_human;
using testing::Outbox;
using testing::RoutedModel;

Json reply(const std::string& id, const std::string& text, Json calls = Json::array()) {
  return ai_message(text, std::move(calls), id);
}

Json sent(const Outbox& outbox) { return Json(outbox.sent()); }

std::shared_ptr<CompiledGraph> mailer_agent(std::shared_ptr<ChatModel> model, Outbox& outbox,
                                            KeyStyle style = KeyStyle::kJs) {
  DeepAgentOptions options;
  options.model = std::move(model);
  options.key_style = style;
  options.general_purpose_subagent = false;  // the traces' agents list only their subagents
  SubAgent mailer;
  mailer.name = "mailer";
  mailer.description = "Sends emails.";
  mailer.system_prompt = "You send emails.";
  mailer.tools = std::vector<Tool>{outbox.tool()};
  mailer.interrupt_on = parse_interrupt_on({{"send_email", true}});
  options.subagents.push_back(std::move(mailer));
  options.checkpointer = make_memory_saver();
  return create_deep_agent(std::move(options));
}

RunConfig thread(const std::string& id) {
  RunConfig config;
  config.thread_id = id;
  return config;
}

// The recorded messages as we write them: ToolMessages succeed with "success", not null.
Json ours(Json messages) {
  for (auto& m : messages) {
    if (m["type"] == "tool" && m["status"].is_null()) m["status"] = "success";
  }
  return messages;
}

// Our messages in the recording's shape.
Json shape(const Json& messages) {
  Json out = Json::array();
  for (const auto& m : messages) {
    Json s{{"type", message_type(m)}, {"content", message_text(m)}};
    const Json calls = m.value("tool_calls", Json::array());
    if (!calls.empty()) {
      Json list = Json::array();
      for (const auto& c : calls) list.push_back(call(c["name"], c["args"], c["id"]));
      s["tool_calls"] = list;
    }
    if (s["type"] == "tool") {
      s["name"] = m.value("name", "");
      s["tool_call_id"] = m.value("tool_call_id", "");
      s["status"] = m.value("status", "");
    }
    out.push_back(s);
  }
  return out;
}

Json interrupt_values(const RunResult& result) {
  Json values = Json::array();
  for (const auto& i : result.interrupts) values.push_back(i.value);
  return values;
}

// ------------------------------------------------------------------------------ H1, H2

class SubagentReference : public ::testing::TestWithParam<const char*> {};

TEST_P(SubagentReference, TheSubagentsReviewPausesTheParentsToolTask) {
  const Json golden = reference(GetParam());
  const Json& first = golden["steps"][0];
  Outbox outbox;
  auto model = std::make_shared<RoutedModel>(
      [](const Json& messages) -> Json {  // the trace's script, routed
        if (first_human(messages) == "Email alice 'Hi'") {
          return answered(messages)
                     ? reply("ai-3", "Subagent finished.")
                     : reply("ai-2", "", Json::array({call("send_email", {{"to", "alice@example.com"}},
                                                           "call_email_sub")}));
        }
        return answered(messages)
                   ? reply("ai-4", "All done.")
                   : reply("ai-1", "", Json::array({call("task", {{"description", "Email alice 'Hi'"},
                                                                  {"subagent_type", "mailer"}},
                                                         "call_task_1")}));
      });
  auto agent = mailer_agent(model, outbox);
  const RunResult paused =
      agent->invoke(Json{{"messages", {human_message("email alice", "human-1")}}}, thread("h"));
  ASSERT_EQ(paused.interrupts.size(), first["result"]["__interrupt__"].size());
  EXPECT_EQ(paused.interrupts[0].value["actionRequests"][0]["name"], "send_email");
  const StateSnapshot snapshot = agent->get_state(thread("h"));
  EXPECT_EQ(Json(snapshot.next), first["stateSnapshot"]["next"]);
  ASSERT_EQ(snapshot.tasks.size(), 1u);
  EXPECT_EQ(snapshot.tasks[0].path, first["stateSnapshot"]["tasks"][0]["path"]);
  // checkpointNamespaces: "" and "tools:<task_id of the paused task>"
  EXPECT_TRUE(agent->checkpointer()
                  ->get_tuple(CheckpointConfig{"h", "tools:" + snapshot.tasks[0].id, ""})
                  .has_value());

  const Json& second = golden["steps"][1];
  Command resume;
  resume.resume = second["resume"];
  const RunResult done = agent->invoke(resume, thread("h"));
  EXPECT_FALSE(done.paused);
  const Json expected = second["result"]["messages"];
  const Json actual = done.values["messages"];
  ASSERT_EQ(actual.size(), expected.size());
  EXPECT_EQ(message_text(actual[2]), expected[2]["content"]);
  EXPECT_EQ(message_text(actual[3]), expected[3]["content"]);
  EXPECT_EQ(outbox.sent().size(), golden["toolsExecuted"].size());
  EXPECT_EQ(model->calls(), golden["modelCallCount"].get<int>());
}

INSTANTIATE_TEST_SUITE_P(Golden, SubagentReference,
                         ::testing::Values("H1_deepagents_subagent_approve",
                                           "H2_deepagents_subagent_reject"));

// ---------------------------------------------------------------------------- J1 - J4

TEST(DeepagentsJs, J1_ParallelSubagentReviewsAreAnsweredByIdInCallOrder) {
  const Json trace = recorded("J1_parallel_subagent_reviews_by_id");
  const Json& steps = trace["steps"];
  Outbox outbox;
  auto model = std::make_shared<RoutedModel>(delegating({"alice", "bob"}, "mailer"));
  auto agent = mailer_agent(model, outbox);
  const RunResult first = agent->invoke(Json{{"messages", {human_message("go")}}}, thread("j1"));
  ASSERT_EQ(first.interrupts.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(first.interrupts[i].value["actionRequests"][0]["args"],
              steps[0]["interrupts"][i]["actionRequests"][0]["args"]);
  }
  Command bob;
  bob.resume_map[first.interrupts[1].id] = Json{{"decisions", {{{"type", "approve"}}}}};
  const RunResult second = agent->invoke(bob, thread("j1"));
  ASSERT_EQ(second.interrupts.size(), steps[1]["interrupts"].size());
  EXPECT_EQ(second.interrupts[0].id, first.interrupts[0].id);  // remainingIsFirst
  EXPECT_EQ(sent(outbox), steps[1]["sent"]);
  Command alice;
  alice.resume_map[first.interrupts[0].id] =
      Json{{"decisions", {{{"type", "reject"}, {"message", "no"}}}}};
  const RunResult third = agent->invoke(alice, thread("j1"));
  EXPECT_FALSE(third.paused);
  EXPECT_EQ(shape(third.values["messages"]), ours(steps[2]["messages"]));
  EXPECT_EQ(sent(outbox), steps[2]["sent"]);
  EXPECT_EQ(model->calls(), trace["modelCallCount"].get<int>());
}

TEST(DeepagentsJs, J2_AnEditInsideASubagentRunsTheEditedCallOnly) {
  const Json trace = recorded("J2_subagent_edit_resume");
  const Json& steps = trace["steps"];
  Outbox outbox;
  auto model = std::make_shared<RoutedModel>(delegating({"alice"}, "mailer"));
  auto agent = mailer_agent(model, outbox);
  agent->invoke(Json{{"messages", {human_message("go")}}}, thread("j2"));
  EXPECT_EQ(model->calls(), steps[0]["modelCalls"].get<int>());
  Command edit;
  edit.resume = Json{{"decisions",
                      {{{"type", "edit"},
                        {"editedAction", {{"name", "send_email"}, {"args", {{"to", "carol"}}}}}}}}};
  const RunResult done = agent->invoke(edit, thread("j2"));
  EXPECT_EQ(shape(done.values["messages"]), ours(steps[1]["messages"]));
  EXPECT_EQ(sent(outbox), steps[1]["sent"]);
  EXPECT_EQ(model->calls(), trace["modelCallCount"].get<int>());
}

TEST(DeepagentsJs, J3_AnInterruptInsideACompiledSubagentsToolResumesWithAnyValue) {
  const Json trace = recorded("J3_compiled_subagent_interrupt_in_tool");
  const Json& steps = trace["steps"];
  Tool request_approval(
      "request_approval", "Request human approval before proceeding with an action.",
      Json::parse(R"({"type":"object","properties":{"action_description":{"type":"string"}},
                      "required":["action_description"]})"),
      [](const Json& args, const ToolContext&) -> Json {
        const std::string action = args["action_description"];
        const Json approval = interrupt(Json{{"type", "approval_request"},
                                             {"action", action},
                                             {"message", "Please approve or reject: " + action}});
        return approval.value("approved", false)
                   ? "Action '" + action + "' was APPROVED. Proceeding..."
                   : "Action '" + action + "' was REJECTED. Reason: " +
                         approval.value("reason", "No reason provided");
      });
  auto model = std::make_shared<RoutedModel>([](const Json& messages) -> Json {
    if (first_human(messages).rfind("Use request_approval", 0) == 0) {
      if (!answered(messages)) {
        return reply("ai-sub-1", "",
                     Json::array({call("request_approval",
                                       {{"action_description", "deploying to production"}},
                                       "call_approval")}));
      }
      return reply("ai-sub-2", "The subagent saw: " + message_text(messages.back()));
    }
    if (answered(messages)) return reply("ai-main-2", "Deployment approved.");
    return reply("ai-main-1", "",
                 Json::array({call("task",
                                   {{"description", "Use request_approval for 'deploying to production'"},
                                    {"subagent_type", "approval-agent"}},
                                   "call_task")}));
  });
  AgentOptions compiled;
  compiled.model = model;
  compiled.tools = {request_approval};
  compiled.name = "approval-agent";
  DeepAgentOptions options;
  options.model = model;
  options.general_purpose_subagent = false;
  options.compiled_subagents.push_back(
      {"approval-agent", "An agent that can request approvals", create_agent(compiled)});
  options.checkpointer = make_memory_saver();
  auto agent = create_deep_agent(std::move(options));
  const RunResult first = agent->invoke(Json{{"messages", {human_message("deploy")}}}, thread("j3"));
  EXPECT_EQ(interrupt_values(first), steps[0]["interrupts"]);
  Command approve;
  approve.resume = Json{{"approved", true}};
  const RunResult done = agent->invoke(approve, thread("j3"));
  EXPECT_EQ(shape(done.values["messages"]), ours(steps[1]["messages"]));
  EXPECT_EQ(model->calls(), trace["modelCallCount"].get<int>());
}

TEST(DeepagentsJs, J4_DeniedPathsAnswerAsTheReferenceAndNoSpellingGetsThrough) {
  const Json trace = recorded("J4_permission_deny");
  const Json& js = trace["steps"][0]["messages"];
  auto model = std::make_shared<RoutedModel>([&js](const Json& messages) -> Json {
    std::size_t tools = 0;
    for (const auto& m : messages) tools += message_type(m) == "tool" ? 1 : 0;
    if (tools == 0) return reply("ai-1", "", js[1]["tool_calls"]);
    if (tools == js[1]["tool_calls"].size()) return reply("ai-2", "", js[4]["tool_calls"]);
    return reply("ai-3", "done");
  });
  DeepAgentOptions options;
  options.model = model;
  options.general_purpose_subagent = false;
  options.permissions = {FilesystemPermission({"read", "write"}, {"/secrets/**"}, "deny")};
  options.checkpointer = make_memory_saver();
  auto agent = create_deep_agent(std::move(options));
  const RunResult done = agent->invoke(Json{{"messages", {human_message("files")}}}, thread("j4"));
  const Json actual = shape(done.values["messages"]);
  ASSERT_EQ(actual.size(), js.size());
  const auto content_of = [&](const Json& list, const std::string& id) {
    for (const auto& m : list) {
      if (m.value("tool_call_id", "") == id) return m["content"].get<std::string>();
    }
    return std::string("<missing>");
  };
  // The deny texts are the reference's.
  for (const char* id : {"w2", "r1", "r2", "d1"}) EXPECT_EQ(content_of(actual, id), content_of(js, id)) << id;
  // "/./secrets/k": the JS reference checks the raw spelling and misses the rule; we normalise.
  EXPECT_EQ(content_of(js, "r3"), "Error: File '/./secrets/k' not found");
  EXPECT_EQ(content_of(actual, "r3"), "Error: permission denied for read on /secrets/k");
  // Python's texts where JS words it otherwise.
  EXPECT_EQ(content_of(actual, "r4"), "Error: Path traversal not allowed: /secrets/../secrets/k");
  EXPECT_EQ(content_of(actual, "w1"), "Updated file /notes.txt");
  EXPECT_EQ(content_of(actual, "l1"), "['/notes.txt']");
  EXPECT_EQ(trace["steps"][0]["files"], Json::array({"/notes.txt"}));
  EXPECT_EQ(done.values["files"].size(), 1u);
}

}  // namespace
}  // namespace tollgate
