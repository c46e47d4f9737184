// The offline demo model: the request shapes it turns into demo tool calls, and that no message
// is too long or too odd for it.
#include <gtest/gtest.h>

#include "demo/demo_model.h"
#include "models/model_test_support.h"

namespace tollgate::testing {
namespace {

std::vector<ToolSpec> demo_tools() {
  std::vector<ToolSpec> tools;
  for (const char* name :
       {"weather_search", "send_email", "read_file", "write_file", "delete_file", "execute_sql",
        "book_flight"}) {
    tools.push_back(ToolSpec{name, "", Json{{"type", "object"}}});
  }
  return tools;
}

// The file tools and the task tool as create_deep_agent offers them.
std::vector<ToolSpec> deep_agent_tools() {
  const auto with = [](const char* name, std::initializer_list<const char*> args) {
    Json properties = Json::object();
    for (const char* arg : args) properties[arg] = {{"type", "string"}};
    return ToolSpec{name, "", Json{{"type", "object"}, {"properties", properties}}};
  };
  return {with("ls", {"path"}),          with("read_file", {"file_path"}),
          with("write_file", {"file_path", "content"}), with("delete", {"file_path"}),
          with("task", {"description", "subagent_type"})};
}

Json ask(const std::string& text, std::vector<ToolSpec> tools = demo_tools()) {
  ChatRequest request = user_request(text);
  request.tools = std::move(tools);
  return make_demo_model()->invoke(request);
}

Json only_call(const Json& reply) {
  EXPECT_EQ(reply["tool_calls"].size(), 1u) << reply.dump();
  return reply["tool_calls"].empty() ? Json() : reply["tool_calls"][0];
}

TEST(DemoChatModelTest, AWriteForADeepAgentTakesAnAbsoluteFilePath) {
  Json call = only_call(ask("write hello to notes.txt", deep_agent_tools()));
  EXPECT_EQ(call["name"], "write_file");
  EXPECT_EQ(call["args"], Json({{"file_path", "/notes.txt"}, {"content", "hello"}}));
}

TEST(DemoChatModelTest, ADeletionForADeepAgentCallsItsDeleteTool) {
  Json call = only_call(ask("please delete /old.txt", deep_agent_tools()));
  EXPECT_EQ(call["name"], "delete");
  EXPECT_EQ(call["args"], Json({{"file_path", "/old.txt"}}));
}

TEST(DemoChatModelTest, AskingASubagentCallsTaskWithTheRestAsItsDescription) {
  Json call = only_call(
      ask("ask the general-purpose agent to write a summary to /summary.txt", deep_agent_tools()));
  EXPECT_EQ(call["name"], "task");
  EXPECT_EQ(call["args"], Json({{"description", "write a summary to /summary.txt"},
                                {"subagent_type", "general-purpose"}}));
}

TEST(DemoChatModelTest, ListingFilesCallsLsOnTheRoot) {
  Json call = only_call(ask("list the files", deep_agent_tools()));
  EXPECT_EQ(call["name"], "ls");
  EXPECT_EQ(call["args"], Json({{"path", "/"}}));
}

TEST(DemoChatModelTest, AskingASubagentWithoutATaskToolPlansNoTask) {
  Json reply = ask("ask the general-purpose agent to write hello to notes.txt");
  EXPECT_EQ(only_call(reply)["name"], "write_file");
}

TEST(DemoChatModelTest, WeatherRequestCallsWeatherSearchWithTheCity) {
  Json call = only_call(ask("What's the weather in Paris?"));
  EXPECT_EQ(call["name"], "weather_search");
  EXPECT_EQ(call["args"], Json({{"city", "Paris"}}));
  EXPECT_EQ(call["type"], "tool_call");
}

TEST(DemoChatModelTest, BookingAFlightCallsBookFlightWithTheDestination) {
  Json call = only_call(ask("Please book a flight to lisbon."));
  EXPECT_EQ(call["name"], "book_flight");
  EXPECT_EQ(call["args"], Json({{"to", "Lisbon"}}));
}

TEST(DemoChatModelTest, BookingAFlightFromACityPassesBothCities) {
  Json call = only_call(ask("book me a flight to Porto from Madrid"));
  EXPECT_EQ(call["args"], Json({{"to", "Porto"}, {"from", "Madrid"}}));
}

TEST(DemoChatModelTest, WeatherCityDropsTrailingTimeWords) {
  EXPECT_EQ(only_call(ask("weather in new york today please"))["args"]["city"], "New York");
}

TEST(DemoChatModelTest, EmailRequestCallsSendEmailWithRecipientSubjectAndBody) {
  Json call = only_call(ask("email bob@example.com about the launch"));
  EXPECT_EQ(call["name"], "send_email");
  EXPECT_EQ(call["args"]["to"], "bob@example.com");
  EXPECT_EQ(call["args"]["subject"], "The launch");
  EXPECT_NE(call["args"]["body"].get<std::string>().find("the launch"), std::string::npos);
}

TEST(DemoChatModelTest, DeletionRequestCallsDeleteFile) {
  Json call = only_call(ask("please delete notes.txt"));
  EXPECT_EQ(call["name"], "delete_file");
  EXPECT_EQ(call["args"], Json({{"path", "notes.txt"}}));
}

TEST(DemoChatModelTest, ReadRequestCallsReadFile) {
  Json call = only_call(ask("read /tmp/report.md"));
  EXPECT_EQ(call["name"], "read_file");
  EXPECT_EQ(call["args"], Json({{"path", "/tmp/report.md"}}));
}

TEST(DemoChatModelTest, WriteRequestCallsWriteFileWithPathAndContent) {
  Json call = only_call(ask("write hello world to notes.txt"));
  EXPECT_EQ(call["name"], "write_file");
  EXPECT_EQ(call["args"], Json({{"path", "notes.txt"}, {"content", "hello world"}}));
}

TEST(DemoChatModelTest, RunSqlPassesTheQueryThrough) {
  Json call = only_call(ask("run SQL: SELECT name FROM users WHERE id = 1"));
  EXPECT_EQ(call["name"], "execute_sql");
  EXPECT_EQ(call["args"], Json({{"query", "SELECT name FROM users WHERE id = 1"}}));
}

TEST(DemoChatModelTest, HowManyUsersBecomesACountQuery) {
  Json call = only_call(ask("how many users are there?"));
  EXPECT_EQ(call["name"], "execute_sql");
  EXPECT_EQ(call["args"], Json({{"query", "SELECT COUNT(*) FROM users;"}}));
}

TEST(DemoChatModelTest, NeverCallsAToolMissingFromTheRequest) {
  Json reply = ask("please delete notes.txt", {ToolSpec{"weather_search", "", Json::object()}});
  EXPECT_TRUE(reply["tool_calls"].empty());
  const std::string text = reply["content"].get<std::string>();
  EXPECT_NE(text.find("offline demo model"), std::string::npos) << text;
  EXPECT_NE(text.find("delete_file"), std::string::npos) << text;
}

TEST(DemoChatModelTest, UnknownRequestExplainsWhatItCanDo) {
  Json reply = ask("tell me a joke");
  EXPECT_TRUE(reply["tool_calls"].empty());
  const std::string text = reply["content"].get<std::string>();
  EXPECT_NE(text.find("offline demo model"), std::string::npos) << text;
  EXPECT_NE(text.find("weather in Paris"), std::string::npos) << text;
}

TEST(DemoChatModelTest, SummarisesASuccessfulToolResult) {
  ChatRequest request;
  request.tools = demo_tools();
  request.messages = Json::parse(R"([
    {"type":"human","content":"weather in Paris"},
    {"type":"ai","content":"","tool_calls":[{"id":"c1","name":"weather_search","args":{"city":"Paris"},"type":"tool_call"}]},
    {"type":"tool","tool_call_id":"c1","name":"weather_search","content":"It is sunny in Paris."}])");
  Json reply = make_demo_model()->invoke(request);
  EXPECT_TRUE(reply["tool_calls"].empty());
  EXPECT_NE(reply["content"].get<std::string>().find("It is sunny in Paris."), std::string::npos);
}

TEST(DemoChatModelTest, MentionsRejectionWhenTheToolMessageIsAnError) {
  ChatRequest request;
  request.tools = demo_tools();
  request.messages = Json::parse(R"([
    {"type":"human","content":"please delete notes.txt"},
    {"type":"ai","content":"","tool_calls":[{"id":"c1","name":"delete_file","args":{"path":"notes.txt"},"type":"tool_call"}]},
    {"type":"tool","tool_call_id":"c1","name":"delete_file","status":"error","content":"User rejected: keep it"}])");
  const std::string text = make_demo_model()->invoke(request)["content"].get<std::string>();
  EXPECT_NE(text.find("rejected"), std::string::npos) << text;
  EXPECT_NE(text.find("keep it"), std::string::npos) << text;
}

TEST(DemoChatModelTest, SameConversationGivesTheSameReplyAndIds) {
  Json a = ask("please delete notes.txt");
  Json b = ask("please delete notes.txt");
  EXPECT_EQ(a, b);
  EXPECT_NE(a["id"], ask("please delete other.txt")["id"]);
}

TEST(DemoChatModelTest, StreamsItsTextWithTheMessageId) {
  ChatRequest request = user_request("tell me a joke");
  ChunkRecorder recorder;
  Json reply = make_demo_model()->invoke(request, &recorder.callback);
  EXPECT_EQ(recorder.text(), reply["content"]);
  for (const auto& chunk : recorder.chunks) EXPECT_EQ(chunk["id"], reply["id"]);
}

// `size` bytes of prose.
std::string filler(std::size_t size) {
  std::string text;
  while (text.size() < size) text += "lorem ipsum dolor sit amet ";
  return text;
}

// These must simply answer. With std::regex the SQL and email shapes overflowed the stack at
// 30 KB (its matcher recurses once per character), and a crash took the server's worker down.
TEST(DemoChatModelTest, AThirtyKilobyteSqlRequestBecomesItsToolCall) {
  Json call = only_call(ask("run sql: " + filler(30 * 1024)));
  EXPECT_EQ(call["name"], "execute_sql");
  EXPECT_GE(call["args"]["query"].get<std::string>().size(), 30u * 1000);
}

TEST(DemoChatModelTest, AThirtyKilobyteEmailRequestBecomesItsToolCall) {
  Json call = only_call(ask("email bob@example.com about " + filler(30 * 1024)));
  EXPECT_EQ(call["name"], "send_email");
  EXPECT_EQ(call["args"]["to"], "bob@example.com");
}

TEST(DemoChatModelTest, AMegabyteSqlRequestBecomesItsToolCall) {
  Json call = only_call(ask("run sql: " + filler(1 << 20)));
  EXPECT_EQ(call["name"], "execute_sql");
}

TEST(DemoChatModelTest, AMegabyteEmailRequestBecomesItsToolCall) {
  Json call = only_call(ask("email bob@example.com about " + filler(1 << 20)));
  EXPECT_EQ(call["name"], "send_email");
}

TEST(DemoChatModelTest, AMegabyteWriteRequestKeepsItsContent) {
  const std::string content(1 << 20, 'x');
  Json call = only_call(ask("write " + content + " to big.txt"));
  EXPECT_EQ(call["name"], "write_file");
  EXPECT_EQ(call["args"]["path"], "big.txt");
  EXPECT_EQ(call["args"]["content"].get<std::string>().size(), content.size());
}

TEST(DemoChatModelTest, AMegabyteOfTextWithoutARequestGetsAnAnswer) {
  Json reply = ask(std::string(1 << 20, 'a'));
  EXPECT_EQ(reply["type"], "ai");
  EXPECT_TRUE(reply["tool_calls"].empty());
}

TEST(DemoChatModelTest, TheDemoProviderResolvesDemo) {
  EXPECT_EQ(init_chat_model("demo", with_demo_model())->name(), "demo");
  EXPECT_EQ(init_chat_model("demo:anything", with_demo_model())->name(), "demo");
}

}  // namespace
}  // namespace tollgate::testing
