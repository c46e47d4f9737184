// compile(): the graph definition errors, each naming what is wrong.
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace tollgate {
namespace {

using testing::expect_error;

NodeFn noop() {
  return [](const State&, Runtime&) -> NodeResult { return {}; };
}

void expect_compile_error(const StateGraph& graph, const std::string& fragment,
                          CompileOptions options = {}) {
  Error error = expect_error([&] { graph.compile(options); });
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
}

TEST(GraphBuilder, EdgeToUnknownNodeIsNamed) {
  StateGraph g;
  g.add_node("a", noop()).add_edge(START, "a").add_edge("a", "nope");
  expect_compile_error(g, "Found edge ending at unknown node 'nope'");
}

TEST(GraphBuilder, EdgeFromUnknownNodeIsNamed) {
  StateGraph g;
  g.add_node("a", noop()).add_edge(START, "a").add_edge("ghost", "a");
  expect_compile_error(g, "Found edge starting at unknown node 'ghost'");
}

TEST(GraphBuilder, UnreachableNodeIsNamed) {
  StateGraph g;
  g.add_node("a", noop()).add_node("island", noop()).add_edge(START, "a");
  expect_compile_error(g, "Node 'island' is unreachable from START");
}

TEST(GraphBuilder, DuplicateNodeNameIsNamed) {
  StateGraph g;
  g.add_node("a", noop()).add_node("a", noop()).add_edge(START, "a");
  expect_compile_error(g, "Node 'a' is already present");
}

TEST(GraphBuilder, ReservedNodeNamesAreRejected) {
  StateGraph start_named;
  start_named.add_node(std::string(START), noop());
  expect_compile_error(start_named, "'__start__' is a reserved node name");
  StateGraph dunder;
  dunder.add_node("__mine", noop()).add_edge(START, "__mine");
  expect_compile_error(dunder, "Node name '__mine' is reserved");
  StateGraph colon;
  colon.add_node("a:b", noop()).add_edge(START, "a:b");
  expect_compile_error(colon, "must not contain ':' or '|'");
}

TEST(GraphBuilder, MissingEntryPointIsReported) {
  StateGraph g;
  g.add_node("a", noop());
  expect_compile_error(g, "Graph must have an entrypoint");
}

TEST(GraphBuilder, PathMapToUnknownNodeIsNamed) {
  StateGraph g;
  g.add_node("a", noop()).add_edge(START, "a");
  g.add_conditional_edges("a", [](const State&) -> Route { return "x"; },
                          {{"x", "zzz"}});
  expect_compile_error(g, "Conditional edge from 'a' maps 'x' to unknown node 'zzz'");
}

TEST(GraphBuilder, BreakpointOnUnknownNodeIsNamed) {
  StateGraph g;
  g.add_node("a", noop()).add_edge(START, "a");
  CompileOptions options;
  options.interrupt_before = {"b"};
  expect_compile_error(g, "interrupt_before names unknown node 'b'", options);
}

TEST(GraphBuilder, ReservedStateKeyIsNamed) {
  StateSchema schema;
  schema.last_value("branch:to:a");
  StateGraph g(schema);
  g.add_node("a", noop()).add_edge(START, "a");
  expect_compile_error(g, "State key 'branch:to:a' is reserved");
}

TEST(GraphBuilder, NodeWithoutFunctionIsNamed) {
  StateGraph g;
  g.add_node("a", NodeFn{}).add_edge(START, "a");
  expect_compile_error(g, "Node 'a' has no function");
}

TEST(GraphBuilder, CommandDestinationsCountAsReachable) {
  StateGraph g;
  NodeOptions options;
  options.destinations = {"b"};
  g.add_node("a", noop(), options).add_node("b", noop()).add_edge(START, "a");
  EXPECT_NO_THROW(g.compile());
}

TEST(GraphBuilder, RouterWithoutPathMapMayReachAnyNode) {
  StateGraph g;
  g.add_node("a", noop()).add_node("b", noop()).add_edge(START, "a");
  g.add_conditional_edges("a", [](const State&) -> Route { return "b"; });
  EXPECT_NO_THROW(g.compile());
}

TEST(GraphBuilder, NodeNamesListsUserNodesInOrder) {
  StateGraph g;
  g.add_node("b", noop()).add_node("a", noop()).add_edge(START, "b").add_edge("b", "a");
  EXPECT_EQ(g.compile()->node_names(), (std::vector<std::string>{"b", "a"}));
}

TEST(CommandParsing, ResumeObjectOfInterruptIdsIsAMap) {
  Command map = Command::from_json(
      Json{{"resume", {{"0123456789abcdef0123456789abcdef", "yes"}}}});
  EXPECT_FALSE(map.resume.has_value());
  EXPECT_EQ(map.resume_map.size(), 1u);
  Command plain = Command::from_json(Json{{"resume", {{"decisions", Json::array()}}}});
  ASSERT_TRUE(plain.resume.has_value());
  EXPECT_TRUE(plain.resume_map.empty());
}

TEST(CommandParsing, UnknownFieldIsNamed) {
  Error error = expect_error([] { Command::from_json(Json{{"resum", 1}}); });
  EXPECT_NE(std::string(error.what()).find("'resum'"), std::string::npos);
}

TEST(CommandParsing, GotoAcceptsNamesAndSends) {
  Command command = Command::from_json(
      Json{{"goto", Json::array({"a", {{"node", "b"}, {"arg", {{"x", 1}}}}})}});
  EXPECT_EQ(command.goto_nodes, (std::vector<std::string>{"a"}));
  ASSERT_EQ(command.goto_sends.size(), 1u);
  EXPECT_EQ(command.goto_sends[0].node, "b");
}

}  // namespace
}  // namespace tollgate
