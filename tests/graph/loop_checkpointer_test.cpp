// LoopCheckpointer through its own interface, on a one-node graph and a real saver: what a
// step's save stores, what the next attempt finds, when each durability mode writes, and the
// channels a finished run hands to the next one.
#include "graph/loop_checkpointer.h"

#include <gtest/gtest.h>

#include "graph/loop_context.h"
#include "graph_test_util.h"

namespace tollgate {
namespace {

using graph_internal::LoopChannels;
using graph_internal::LoopCheckpointer;
using graph_internal::LoopContext;
using graph_internal::SavedTask;
using graph_internal::StreamEmitter;
using graph_internal::Task;
using graph_internal::TaskState;
using graph_internal::Write;

std::shared_ptr<CompiledGraph> one_node_graph() {
  StateGraph g(StateSchema().last_value("n"));
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json::object(); });
  g.add_edge(START, "a");
  return g.compile();
}

// The parts a loop hands its checkpointer, for thread "t" in the root namespace.
struct LoopParts {
  LoopParts(const CompiledGraph& graph, std::shared_ptr<Saver> saver,
            Durability durability = Durability::kSync)
      : channels(graph.impl()) {
    config.thread_id = "t";
    config.durability = durability;
    context.config = &config;
    context.emitter = &emitter;
    context.saver = std::move(saver);
    checkpointer = std::make_unique<LoopCheckpointer>(graph.impl(), context, channels);
  }

  // Writes `value` to the state key "n" as a step would.
  void write_n(Json value) {
    const int n = channels.find("n");
    channels.slot(n).channel->update({std::move(value)});
    channels.bump({n}, context.saver.get());
  }
  // The value of "n", null when it has none.
  Json n() const {
    JsonPtr value = channels.slot(channels.find("n")).channel->get();
    return value ? *value : Json();
  }

  RunConfig config;
  StreamEmitter emitter{config};
  LoopContext context;
  LoopChannels channels;
  std::unique_ptr<LoopCheckpointer> checkpointer;
};

// A task of node "a" that ran to the end with `writes` (or paused, when `paused`).
Task finished_task(std::string id, std::vector<Write> writes, bool paused = false) {
  Task task;
  task.node = 1;
  task.id = std::move(id);
  task.writes = std::move(writes);
  task.advance(TaskState::kRunning);
  task.advance(paused ? TaskState::kPaused : TaskState::kDone);
  return task;
}

class LoopCheckpointerTest : public testing::SaverTest {
 protected:
  std::shared_ptr<CompiledGraph> graph_ = one_node_graph();
};

TEST_P(LoopCheckpointerTest, ALoadRestoresTheChannelsAndTheStepOfTheSavedCheckpoint) {
  LoopParts first(*graph_, saver_);
  ASSERT_FALSE(first.checkpointer->load("", false));
  first.write_n(5);
  first.checkpointer->save_step("input");

  LoopParts second(*graph_, saver_);
  ASSERT_TRUE(second.checkpointer->load("", false));
  EXPECT_EQ(second.checkpointer->step(), -1);
  EXPECT_EQ(second.checkpointer->checkpoint_id(), first.checkpointer->checkpoint_id());
  EXPECT_EQ(second.n(), 5);
}

TEST_P(LoopCheckpointerTest, ANamedCheckpointThatIsMissingIsNotFound) {
  LoopParts parts(*graph_, saver_);
  const Error error = testing::expect_error([&] { parts.checkpointer->load("nope", false); });
  EXPECT_EQ(error.code(), ErrorCode::kNotFound);
}

TEST(LoopCheckpointer, WithoutASaverItOnlyCountsSteps) {
  auto graph = one_node_graph();
  LoopParts parts(*graph, nullptr);
  parts.checkpointer->save_step("input");
  parts.checkpointer->save_step("loop");
  EXPECT_TRUE(parts.checkpointer->has_checkpoint());
  EXPECT_EQ(parts.checkpointer->step(), 0);
  EXPECT_EQ(parts.checkpointer->checkpoint_id(), "");
}

TEST_P(LoopCheckpointerTest, AFinishedTasksWritesAreWhatTheNextAttemptFinds) {
  LoopParts first(*graph_, saver_);
  first.checkpointer->load("", false);
  first.checkpointer->save_step("input");
  Task task = finished_task("task-1", {Write{first.channels.find("n"), Json(7), {}}});
  first.checkpointer->put_task_writes(task);
  EXPECT_EQ(task.writes.at(0).value, 7);  // a save in this thread gives the values back

  LoopParts second(*graph_, saver_);
  ASSERT_TRUE(second.checkpointer->load("", false));
  const auto& saved = second.checkpointer->saved_tasks();
  ASSERT_EQ(saved.count("task-1"), 1U);
  EXPECT_TRUE(saved.at("task-1").finished);
  EXPECT_EQ(saved.at("task-1").writes, (graph_internal::SavedWrites{{"n", 7}}));
}

TEST_P(LoopCheckpointerTest, APausedTasksInterruptsAndAnswersSoFarAreSaved) {
  LoopParts first(*graph_, saver_);
  first.checkpointer->load("", false);
  first.checkpointer->save_step("input");
  Task task = finished_task("task-1", {}, /*paused=*/true);
  task.interrupts.push_back(Interrupt{"i1", "second question"});
  task.resume_values.push_back("first answer");
  first.checkpointer->put_task_writes(task);

  LoopParts second(*graph_, saver_);
  second.checkpointer->load("", false);
  const SavedTask& saved = second.checkpointer->saved_tasks().at("task-1");
  EXPECT_FALSE(saved.finished);
  EXPECT_EQ(saved.interrupts, (Json::array({{{"id", "i1"}, {"value", "second question"}}})));
  EXPECT_EQ(saved.resume, Json::array({"first answer"}));
}

TEST_P(LoopCheckpointerTest, AHeldTasksWritesAreSavedWithTheNextCheckpoint) {
  LoopParts first(*graph_, saver_);
  first.checkpointer->load("", false);
  first.checkpointer->save_step("input");
  const std::string step_checkpoint = first.checkpointer->checkpoint_id();
  first.checkpointer->hold_task_writes_for_next_put();
  Task task = finished_task("task-1", {Write{first.channels.find("n"), Json(7), {}}});
  first.checkpointer->put_task_writes(task);
  EXPECT_EQ(task.writes.at(0).value, 7);  // held as a copy: the step still applies them
  EXPECT_TRUE(saver_->get_tuple(CheckpointConfig{"t", "", step_checkpoint})
                  ->pending_writes.empty());

  first.write_n(7);
  first.checkpointer->save_step("loop");
  auto step = saver_->get_tuple(CheckpointConfig{"t", "", step_checkpoint});
  ASSERT_TRUE(step);
  EXPECT_EQ(step->pending_writes, (std::vector<PendingWrite>{{"task-1", "n", 7}}));
  LoopParts second(*graph_, saver_);
  ASSERT_TRUE(second.checkpointer->load("", false));
  EXPECT_EQ(second.n(), 7);
  EXPECT_EQ(second.checkpointer->step(), 0);
}

TEST_P(LoopCheckpointerTest, HeldWritesOfAStepThatEndsWithoutItsCheckpointAreSavedAlone) {
  LoopParts first(*graph_, saver_);
  first.checkpointer->load("", false);
  first.checkpointer->save_step("input");
  first.checkpointer->hold_task_writes_for_next_put();
  Task task = finished_task("task-1", {Write{first.channels.find("n"), Json(7), {}}});
  first.checkpointer->put_task_writes(task);
  first.checkpointer->flush_held_task_writes();

  LoopParts second(*graph_, saver_);
  ASSERT_TRUE(second.checkpointer->load("", false));
  EXPECT_EQ(second.checkpointer->step(), -1);
  const auto& saved = second.checkpointer->saved_tasks();
  ASSERT_EQ(saved.count("task-1"), 1U);
  EXPECT_EQ(saved.at("task-1").writes, (graph_internal::SavedWrites{{"n", 7}}));
}

TEST_P(LoopCheckpointerTest, APausedTaskSavesAtOnceWhileWritesAreHeld) {
  LoopParts first(*graph_, saver_);
  first.checkpointer->load("", false);
  first.checkpointer->save_step("input");
  first.checkpointer->hold_task_writes_for_next_put();
  Task task = finished_task("task-1", {}, /*paused=*/true);
  task.interrupts.push_back(Interrupt{"i1", "a question"});
  first.checkpointer->put_task_writes(task);

  LoopParts second(*graph_, saver_);
  second.checkpointer->load("", false);
  EXPECT_EQ(second.checkpointer->saved_tasks().count("task-1"), 1U);
}

TEST_P(LoopCheckpointerTest, UpdateStatesTasksSaveNoWritesOfTheirOwn) {
  LoopParts first(*graph_, saver_);
  first.checkpointer->load("", false);
  first.checkpointer->save_step("input");
  first.checkpointer->skip_task_writes();
  Task task = finished_task("task-1", {Write{first.channels.find("n"), Json(7), {}}});
  first.checkpointer->put_task_writes(task);

  LoopParts second(*graph_, saver_);
  second.checkpointer->load("", false);
  EXPECT_TRUE(second.checkpointer->saved_tasks().empty());
}

TEST_P(LoopCheckpointerTest, UnderExitDurabilityNothingIsPutUntilTheRunEnds) {
  LoopParts first(*graph_, saver_, Durability::kExit);
  first.checkpointer->load("", false);
  first.write_n(5);
  first.checkpointer->save_step("input");
  std::vector<Task> tasks;
  tasks.push_back(finished_task("task-1", {Write{first.channels.find("n"), Json(7), {}}}));
  first.checkpointer->put_task_writes(tasks[0]);
  EXPECT_FALSE(saver_->get_tuple(CheckpointConfig{"t", "", ""}).has_value());

  first.checkpointer->save_at_end(tasks, /*paused=*/true);
  LoopParts second(*graph_, saver_);
  ASSERT_TRUE(second.checkpointer->load("", false));
  EXPECT_EQ(second.n(), 5);
  EXPECT_EQ(second.checkpointer->saved_tasks().count("task-1"), 1U);
}

TEST_P(LoopCheckpointerTest, InTheBackgroundACheckpointIsStoredOnceTheSavesAreWaitedFor) {
  LoopParts first(*graph_, saver_, Durability::kAsync);
  first.checkpointer->load("", false);
  first.write_n(5);
  first.checkpointer->save_step("input");
  first.checkpointer->wait_for_saves();

  LoopParts second(*graph_, saver_);
  ASSERT_TRUE(second.checkpointer->load("", false));
  EXPECT_EQ(second.n(), 5);
}

TEST_P(LoopCheckpointerTest, ACommandsWritesAreSavedAsTheNullTasksWhenTheRunPauses) {
  LoopParts first(*graph_, saver_);
  first.checkpointer->load("", false);
  first.checkpointer->save_step("input");
  first.checkpointer->hold_null_write("n", 3);
  std::vector<Task> none;
  first.checkpointer->save_at_end(none, /*paused=*/true);

  LoopParts second(*graph_, saver_);
  second.checkpointer->load("", false);
  const auto& saved = second.checkpointer->saved_tasks();
  ASSERT_EQ(saved.count(kNullTaskId), 1U);
  EXPECT_EQ(saved.find(kNullTaskId)->second.writes, (graph_internal::SavedWrites{{"n", 3}}));
}

TEST_P(LoopCheckpointerTest, ACommandsWritesAreNotSavedOnceAStepsCheckpointHoldsThem) {
  LoopParts first(*graph_, saver_);
  first.checkpointer->load("", false);
  first.checkpointer->save_step("input");
  first.checkpointer->hold_null_write("n", 3);
  first.write_n(3);
  first.checkpointer->save_step("loop");
  std::vector<Task> none;
  first.checkpointer->save_at_end(none, /*paused=*/true);

  LoopParts second(*graph_, saver_);
  second.checkpointer->load("", false);
  EXPECT_EQ(second.checkpointer->saved_tasks().count(kNullTaskId), 0U);
}

TEST_P(LoopCheckpointerTest, TheThreadsNextRunAdoptsTheChannelsTheLastRunLeft) {
  LoopParts first(*graph_, saver_);
  first.checkpointer->load("", false);
  first.write_n(5);
  first.checkpointer->save_step("input");
  const graph_internal::Channel* left = first.channels.slot(first.channels.find("n")).channel.get();
  first.checkpointer->stash_values(/*move_channels=*/true);

  LoopParts second(*graph_, saver_);
  ASSERT_TRUE(second.checkpointer->load("", /*use_cache=*/true));
  EXPECT_EQ(second.channels.slot(second.channels.find("n")).channel.get(), left);
  EXPECT_EQ(second.n(), 5);
}

TOLLGATE_INSTANTIATE_SAVERS(LoopCheckpointerTest);

}  // namespace
}  // namespace tollgate
