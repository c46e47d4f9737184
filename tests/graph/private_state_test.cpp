// Private state keys (StateSchema::make_private, LangChain's PrivateStateAttr): nodes and
// routers use them and they are checkpointed, but output values, streams and get_state leave
// them out, and graph input ignores them.
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace tollgate {
namespace {

using testing::expect_error;
using testing::on_thread;
using testing::resume;

class PrivateStateTest : public testing::SaverTest {
 protected:
  // write: sets the private "route" and the public "out"; ask: pauses, then copies "route"
  // into "seen" (so a resumed run shows what the private key held).
  std::shared_ptr<CompiledGraph> graph() {
    StateSchema schema;
    schema.last_value("route").make_private("route");
    StateGraph g(schema);
    g.add_node("write", [](const State&, Runtime&) -> NodeResult {
      return Json{{"route", "secret"}, {"out", 1}};
    });
    g.add_node("ask", [](const State& state, Runtime& rt) -> NodeResult {
      rt.interrupt("continue?");
      return Json{{"seen", state["route"]}};
    });
    g.add_edge(START, "write").add_edge("write", "ask");
    return g.compile(testing::options(saver_));
  }
};

TEST_P(PrivateStateTest, InvokeValuesLeaveThePrivateKeyOut) {
  const auto g = graph();
  const RunResult paused = g->invoke(Json::object(), on_thread("t"));
  ASSERT_TRUE(paused.paused);
  EXPECT_EQ(paused.values.to_json(), (Json{{"out", 1}}));
}

TEST_P(PrivateStateTest, NodesReadThePrivateKeyAfterAResume) {
  const auto g = graph();
  g->invoke(Json::object(), on_thread("t"));
  const RunResult done = g->invoke(resume("yes"), on_thread("t"));
  EXPECT_EQ(done.values.to_json(), (Json{{"out", 1}, {"seen", "secret"}}));
}

TEST_P(PrivateStateTest, GetStateValuesLeaveThePrivateKeyOut) {
  const auto g = graph();
  g->invoke(Json::object(), on_thread("t"));
  const StateSnapshot snapshot = g->get_state(on_thread("t"));
  EXPECT_FALSE(snapshot.values.contains("route"));
  EXPECT_EQ(snapshot.values["out"], 1);
}

TEST_P(PrivateStateTest, ValuesAndUpdatesStreamsLeaveThePrivateKeyOut) {
  const auto g = graph();
  RunConfig config = on_thread("t");
  config.stream_modes = {StreamMode::kValues, StreamMode::kUpdates};
  std::vector<Json> values;
  std::vector<Json> updates;
  config.on_event = [&](const StreamEvent& event) {
    (event.mode == StreamMode::kValues ? values : updates).push_back(event.data);
  };
  g->invoke(Json::object(), config);
  ASSERT_FALSE(values.empty());
  for (const Json& v : values) EXPECT_FALSE(v.contains("route")) << v.dump();
  bool saw_write = false;
  for (const Json& u : updates) {
    if (!u.contains("write")) continue;
    saw_write = true;
    EXPECT_EQ(u["write"], (Json{{"out", 1}}));
  }
  EXPECT_TRUE(saw_write);
}

TEST_P(PrivateStateTest, InputIgnoresThePrivateKey) {
  StateSchema schema;
  schema.last_value("route").make_private("route");
  StateGraph g(schema);
  g.add_node("read", [](const State& state, Runtime&) -> NodeResult {
    return Json{{"had_route", state.contains("route")}};
  });
  g.add_edge(START, "read");
  const auto compiled = g.compile(testing::options(saver_));
  const RunResult result =
      compiled->invoke(Json{{"route", "from outside"}, {"x", 1}}, on_thread("t"));
  EXPECT_EQ(result.values.to_json(), (Json{{"had_route", false}, {"x", 1}}));
}

TEST(PrivateStateSchema, MakePrivateNamesAnUndeclaredKey) {
  StateSchema schema;
  const Error error = expect_error([&] { schema.make_private("nope"); });
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(error.what()).find("'nope'"), std::string::npos);
}

TOLLGATE_INSTANTIATE_SAVERS(PrivateStateTest);

}  // namespace
}  // namespace tollgate
