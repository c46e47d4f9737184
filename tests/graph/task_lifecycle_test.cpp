// The lifecycle of a superstep's task (graph/task.h): which changes of state are legal.
#include "graph/task.h"

#include <gtest/gtest.h>

namespace tollgate {
namespace {

using graph_internal::is_legal_transition;
using graph_internal::Task;
using graph_internal::TaskKind;
using graph_internal::TaskState;

constexpr TaskKind kPull = TaskKind::kPull;

TEST(TaskLifecycle, APreparedTaskRunsOrTakesWhatAPreviousAttemptSaved) {
  EXPECT_TRUE(is_legal_transition(kPull, TaskState::kPrepared, TaskState::kRunning));
  EXPECT_TRUE(is_legal_transition(kPull, TaskState::kPrepared, TaskState::kReattached));
  EXPECT_TRUE(is_legal_transition(kPull, TaskState::kPrepared, TaskState::kResuming));
}

TEST(TaskLifecycle, AResumingTaskCanOnlyRun) {
  EXPECT_TRUE(is_legal_transition(kPull, TaskState::kResuming, TaskState::kRunning));
  EXPECT_FALSE(is_legal_transition(kPull, TaskState::kResuming, TaskState::kReattached));
  EXPECT_FALSE(is_legal_transition(kPull, TaskState::kResuming, TaskState::kDone));
}

TEST(TaskLifecycle, ARunningTaskEndsDonePausedOrFailed) {
  EXPECT_TRUE(is_legal_transition(kPull, TaskState::kRunning, TaskState::kDone));
  EXPECT_TRUE(is_legal_transition(kPull, TaskState::kRunning, TaskState::kPaused));
  EXPECT_TRUE(is_legal_transition(kPull, TaskState::kRunning, TaskState::kFailed));
  EXPECT_FALSE(is_legal_transition(kPull, TaskState::kRunning, TaskState::kPrepared));
}

TEST(TaskLifecycle, OnlyAStandInIsDoneWithoutRunning) {
  EXPECT_TRUE(is_legal_transition(TaskKind::kSynthetic, TaskState::kPrepared, TaskState::kDone));
  EXPECT_FALSE(is_legal_transition(kPull, TaskState::kPrepared, TaskState::kDone));
  EXPECT_FALSE(is_legal_transition(TaskKind::kPush, TaskState::kPrepared, TaskState::kDone));
}

TEST(TaskLifecycle, ADoneOrPausedTaskCanOnlyFailWhenItsSaveFails) {
  EXPECT_TRUE(is_legal_transition(kPull, TaskState::kDone, TaskState::kFailed));
  EXPECT_TRUE(is_legal_transition(kPull, TaskState::kPaused, TaskState::kFailed));
  EXPECT_FALSE(is_legal_transition(kPull, TaskState::kDone, TaskState::kPaused));
  EXPECT_FALSE(is_legal_transition(kPull, TaskState::kPaused, TaskState::kRunning));
}

TEST(TaskLifecycle, AReattachedOrFailedTaskGoesNowhere) {
  for (TaskState to : {TaskState::kPrepared, TaskState::kResuming, TaskState::kReattached,
                       TaskState::kRunning, TaskState::kDone, TaskState::kPaused,
                       TaskState::kFailed}) {
    EXPECT_FALSE(is_legal_transition(kPull, TaskState::kReattached, to));
    EXPECT_FALSE(is_legal_transition(kPull, TaskState::kFailed, to));
  }
}

TEST(TaskLifecycle, OnlyATaskNotRunYetWaitsToRunAndOnlyAFinishedOneHasWrites) {
  Task task;
  EXPECT_TRUE(task.waits_to_run());
  EXPECT_FALSE(task.has_writes());
  task.advance(TaskState::kRunning);
  EXPECT_FALSE(task.waits_to_run());
  EXPECT_FALSE(task.has_writes());
  task.advance(TaskState::kDone);
  EXPECT_TRUE(task.has_writes());

  Task reattached;
  reattached.advance(TaskState::kReattached);
  EXPECT_FALSE(reattached.waits_to_run());
  EXPECT_TRUE(reattached.has_writes());
}

TEST(TaskLifecycleDeathTest, AnIllegalTransitionAssertsInDebugBuilds) {
  Task task;
  task.advance(TaskState::kReattached);
  EXPECT_DEBUG_DEATH(task.advance(TaskState::kRunning), "illegal task state transition");
}

}  // namespace
}  // namespace tollgate
