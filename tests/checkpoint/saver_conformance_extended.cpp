// Conformance cases from the Python langgraph-checkpoint-conformance list (base and extended:
// copy_thread, prune) that the JS-derived cases in saver_conformance.cpp do not cover, plus
// GetOptions::reuse_values_of and concurrent use.
#include <algorithm>
#include <thread>

#include "checkpoint/saver_conformance.h"
#include "checkpoint/saver_test_util.h"
#include "tollgate/error.h"

namespace tollgate::testing {
namespace {

Json meta(const std::string& source, int step) {
  return Json{{"source", source}, {"step", step}, {"parents", Json::object()}};
}

std::vector<std::string> ids_of(const std::vector<CheckpointTuple>& tuples) {
  std::vector<std::string> ids;
  for (const auto& tuple : tuples) ids.push_back(tuple.config.checkpoint_id);
  return ids;
}

// Puts a chain of `count` checkpoints (steps -1, 0, 1, ...) and returns their configs.
std::vector<CheckpointConfig> put_chain(Saver& saver, const std::string& thread_id,
                                        const std::string& ns, int count) {
  std::vector<CheckpointConfig> configs;
  CheckpointConfig parent{thread_id, ns, ""};
  for (int i = 0; i < count; ++i) {
    Checkpoint checkpoint = make_checkpoint(i - 1, {{"counter", i}}, {{"counter", i + 1}});
    parent =
        saver.put(parent, checkpoint, meta(i == 0 ? "input" : "loop", i - 1), {{"counter", i + 1}});
    configs.push_back(parent);
  }
  return configs;
}

// ---- put --------------------------------------------------------------------------------------

TEST_P(SaverConformanceTest, PutPreservesValuesOfEveryJsonType) {
  Json binary = Json::binary({0x00, 0xff, 0x10});
  Checkpoint checkpoint = make_checkpoint(-1, {{"str", "text"},
                                               {"int", -42},
                                               {"float", 2.5},
                                               {"list", Json::array({1, "a", nullptr})},
                                               {"dict", Json{{"k", Json{{"nested", true}}}}},
                                               {"bytes", binary},
                                               {"none", nullptr}});
  CheckpointConfig config =
      saver_->put({"t", "", ""}, checkpoint, meta("input", -1), checkpoint.channel_versions);
  auto tuple = saver_->get_tuple(config);
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->checkpoint, checkpoint);
  EXPECT_TRUE(tuple->checkpoint.channel_values.at("bytes")->is_binary());
}

TEST_P(SaverConformanceTest, DefaultNamespaceIsTheRoot) {
  CheckpointConfig config;
  config.thread_id = "t";
  CheckpointConfig stored = saver_->put(config, make_checkpoint(-1), meta("input", -1), {});
  EXPECT_EQ(stored.checkpoint_ns, "");
  EXPECT_TRUE(saver_->get_tuple({"t", "", stored.checkpoint_id}).has_value());
}

TEST_P(SaverConformanceTest, ThreadsAreIsolated) {
  saver_->put({"a", "", ""}, make_checkpoint(-1, {{"x", 1}}), meta("input", -1), {{"x", 1}});
  saver_->put({"b", "", ""}, make_checkpoint(-1, {{"x", 2}}), meta("input", -1), {{"x", 1}});
  EXPECT_EQ(*saver_->get_tuple({"a", "", ""})->checkpoint.channel_values.at("x"), 1);
  EXPECT_EQ(*saver_->get_tuple({"b", "", ""})->checkpoint.channel_values.at("x"), 2);
}

TEST_P(SaverConformanceTest, NamespacesAreIsolated) {
  CheckpointConfig root = saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  saver_->put({"t", "child:abc", ""}, make_checkpoint(-1), meta("input", -1), {});
  EXPECT_FALSE(saver_->get_tuple({"t", "child:abc", root.checkpoint_id}).has_value());
  EXPECT_EQ(saver_->get_tuple({"t", "", ""})->config, root);
}

TEST_P(SaverConformanceTest, ANewChannelIsAddedAndARemovedChannelIsNotLoaded) {
  Checkpoint first = make_checkpoint(-1, {{"a", 1}, {"b", 2}});
  CheckpointConfig config =
      saver_->put({"t", "", ""}, first, meta("input", -1), first.channel_versions);
  Checkpoint second = make_checkpoint(0, {{"a", 1}, {"c", 3}}, {{"a", 1}, {"c", 2}});
  config = saver_->put(config, second, meta("loop", 0), {{"c", 2}});
  EXPECT_EQ(values_of(saver_->get_tuple(config)->checkpoint), (Json{{"a", 1}, {"c", 3}}));
}

TEST_P(SaverConformanceTest, AChannelWhoseVersionChangedIsStoredEvenIfNotInNewVersions) {
  Checkpoint first = make_checkpoint(-1, {{"a", 1}});
  CheckpointConfig config =
      saver_->put({"t", "", ""}, first, meta("input", -1), first.channel_versions);
  Checkpoint second = make_checkpoint(0, {{"a", 5}}, {{"a", 2}});
  config = saver_->put(config, second, meta("loop", 0), {});
  EXPECT_EQ(*saver_->get_tuple(config)->checkpoint.channel_values.at("a"), 5);
}

TEST_P(SaverConformanceTest, AChannelWithoutVersionsIsStoredEvenIfNotInNewVersions) {
  Checkpoint first = make_checkpoint(-1, {{"a", 1}});
  first.channel_versions.clear();
  CheckpointConfig config = saver_->put({"t", "", ""}, first, meta("input", -1), {});
  Checkpoint second = make_checkpoint(0, {{"a", 2}});
  second.channel_versions.clear();
  config = saver_->put(config, second, meta("loop", 0), {});
  EXPECT_EQ(saver_->get_tuple(config)->checkpoint, second);
}

TEST_P(SaverConformanceTest, PutWithUnknownParentStoresEveryValue) {
  Checkpoint checkpoint = make_checkpoint(0, {{"a", 1}});
  CheckpointConfig config =
      saver_->put({"t", "", new_checkpoint_id(-1)}, checkpoint, meta("loop", 0), {});
  auto tuple = saver_->get_tuple(config);
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->checkpoint, checkpoint);
  EXPECT_TRUE(tuple->parent_config.has_value());
}

TEST_P(SaverConformanceTest, PutRejectsMetadataThatIsNotAnObject) {
  EXPECT_THROW(saver_->put({"t", "", ""}, make_checkpoint(-1), Json::array(), {}), Error);
}

// ---- put_writes -------------------------------------------------------------------------------

TEST_P(SaverConformanceTest, WritesComeBackOrderedByTaskThenIndex) {
  CheckpointConfig config = saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  saver_->put_writes(config, {{"x", 1}, {"y", 2}}, "task-b", "~path");
  saver_->put_writes(config, {{"z", 3}}, "task-a");
  EXPECT_EQ(
      saver_->get_tuple(config)->pending_writes,
      (std::vector<PendingWrite>{{"task-a", "z", 3}, {"task-b", "x", 1}, {"task-b", "y", 2}}));
}

TEST_P(SaverConformanceTest, OrdinaryWritesAreIdempotentPerTaskAndIndex) {
  CheckpointConfig config = saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  saver_->put_writes(config, {{"x", "first"}}, "task");
  saver_->put_writes(config, {{"x", "second"}}, "task");
  EXPECT_EQ(saver_->get_tuple(config)->pending_writes,
            (std::vector<PendingWrite>{{"task", "x", "first"}}));
}

// The SQL savers keep a run of a task's ordinary writes in one row; a repeat still keeps each
// index's first write, whatever the repeat's length.
TEST_P(SaverConformanceTest, ARepeatedPutWritesKeepsEachIndexsFirstWrite) {
  CheckpointConfig config = saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  saver_->put_writes(config, {{"x", "first"}, {"y", "first"}}, "task");
  saver_->put_writes(config, {{"x", "second"}, {"y", "second"}, {"z", "second"}}, "task");
  saver_->put_writes(config, {{"x", "third"}}, "task");
  saver_->put_writes(config, {{"a", 1}, {"b", 2}}, "other");
  saver_->put_writes(config, {{"a", 3}}, "other");
  EXPECT_EQ(saver_->get_tuple(config)->pending_writes,
            (std::vector<PendingWrite>{{"other", "a", 1},
                                       {"other", "b", 2},
                                       {"task", "x", "first"},
                                       {"task", "y", "first"},
                                       {"task", "z", "second"}}));
}

TEST_P(SaverConformanceTest, AWriteAfterALoneOneGoesOnAtItsOwnIndex) {
  CheckpointConfig config = saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  saver_->put_writes(config, {{"x", "first"}}, "task");
  saver_->put_writes(config, {{"x", "second"}, {"y", "second"}, {"z", "second"}}, "task");
  EXPECT_EQ(saver_->get_tuple(config)->pending_writes,
            (std::vector<PendingWrite>{
                {"task", "x", "first"}, {"task", "y", "second"}, {"task", "z", "second"}}));
}

// A later call's writes whose indices fall inside or across an earlier call's: each index keeps
// its first write, whether the earlier writes were alone or a run.
TEST_P(SaverConformanceTest, AWriteWhoseIndexAnEarlierRunHoldsIsDropped) {
  CheckpointConfig config = saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  const std::string interrupt(kInterruptChannel);
  saver_->put_writes(config, {{"a", 1}, {"b", 2}, {"c", 3}}, "task");
  saver_->put_writes(config, {{interrupt, Json::array({"why"})}, {"y", "late"}}, "task");
  EXPECT_EQ(saver_->get_tuple(config)->pending_writes,
            (std::vector<PendingWrite>{{"task", interrupt, Json::array({"why"})},
                                       {"task", "a", 1},
                                       {"task", "b", 2},
                                       {"task", "c", 3}}));
}

TEST_P(SaverConformanceTest, ARunAcrossAnEarlierWritesIndexKeepsThatWrite) {
  CheckpointConfig config = saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  const std::string interrupt(kInterruptChannel), error(kErrorChannel);
  saver_->put_writes(config, {{"x", 0}, {interrupt, Json::array({"why"})}, {"y", 2}}, "task");
  saver_->put_writes(config, {{error, "boom"}, {"a", 1}, {"b", 2}, {"c", 3}}, "task");
  EXPECT_EQ(saver_->get_tuple(config)->pending_writes,
            (std::vector<PendingWrite>{{"task", interrupt, Json::array({"why"})},
                                       {"task", error, "boom"},
                                       {"task", "x", 0},
                                       {"task", "a", 1},
                                       {"task", "y", 2},
                                       {"task", "c", 3}}));
}

TEST_P(SaverConformanceTest, RunsOfWritesAroundASpecialOneReadBackInOrder) {
  const CheckpointConfig config =
      saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  const std::string interrupt(kInterruptChannel);
  saver_->put_writes(config,
                     {{"a", 1},
                      {"b", nullptr},
                      {interrupt, Json::array({"why"})},
                      {"c", "x"},
                      {"d", Json::object()}},
                     "task");
  EXPECT_EQ(saver_->get_tuple(config)->pending_writes,
            (std::vector<PendingWrite>{{"task", interrupt, Json::array({"why"})},
                                       {"task", "a", 1},
                                       {"task", "b", nullptr},
                                       {"task", "c", "x"},
                                       {"task", "d", Json::object()}}));
  // With the checkpoint they were put against, in a step's put (put_after_writes), likewise.
  const Checkpoint next = make_checkpoint(0);
  const CheckpointConfig next_config = saver_->put_after_writes(
      config, {{"e", 5}, {"f", 6}}, "later", "", config, next, meta("loop", 0), {}, {});
  const std::vector<PendingWrite> writes = saver_->get_tuple(config)->pending_writes;
  ASSERT_EQ(writes.size(), 7U);
  EXPECT_EQ(writes[0], (PendingWrite{"later", "e", 5}));
  EXPECT_EQ(writes[1], (PendingWrite{"later", "f", 6}));
  EXPECT_TRUE(saver_->get_tuple(next_config)->pending_writes.empty());
}

TEST_P(SaverConformanceTest, EveryWriteOfARunIsCountedOnce) {
  CheckpointConfig config = saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  const std::uint64_t before = saver_->stats().writes_written;
  saver_->put_writes(config, {{"x", 1}, {"y", 2}, {"z", 3}}, "task");
  saver_->put_writes(config, {{"x", 1}, {"y", 2}, {"z", 3}, {"w", 4}}, "task");
  const SaverStats stats = saver_->stats();
  if (stats.checkpoints_written == 0) GTEST_SKIP() << "this saver keeps no statistics";
  EXPECT_EQ(stats.writes_written - before, 4U);
}

TEST_P(SaverConformanceTest, SpecialChannelWritesAreReplaced) {
  CheckpointConfig config = saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  const std::string error(kErrorChannel), interrupt(kInterruptChannel);
  saver_->put_writes(config, {{error, "boom"}}, "task");
  saver_->put_writes(config, {{error, "boom again"}}, "task");
  saver_->put_writes(config, {{interrupt, Json::array({1})}}, "other");
  saver_->put_writes(config, {{interrupt, Json::array({2})}}, "other");
  EXPECT_EQ(saver_->get_tuple(config)->pending_writes,
            (std::vector<PendingWrite>{{"other", interrupt, Json::array({2})},
                                       {"task", error, "boom again"}}));
}

TEST_P(SaverConformanceTest, WritesStoredBeforeTheirCheckpointComeBackWithIt) {
  const Checkpoint checkpoint = make_checkpoint(-1);
  saver_->put_writes({"t", "", checkpoint.id}, {{"x", 1}}, "task");
  const CheckpointConfig config = saver_->put({"t", "", ""}, checkpoint, meta("input", -1), {});
  EXPECT_EQ(saver_->get_tuple(config)->pending_writes,
            (std::vector<PendingWrite>{{"task", "x", 1}}));
}

TEST_P(SaverConformanceTest, PuttingACheckpointAgainKeepsItsWrites) {
  const Checkpoint checkpoint = make_checkpoint(-1);
  const CheckpointConfig config = saver_->put({"t", "", ""}, checkpoint, meta("input", -1), {});
  saver_->put_writes(config, {{"x", 1}}, "task");
  saver_->put({"t", "", ""}, checkpoint, meta("input", -1), {});
  EXPECT_EQ(saver_->get_tuple(config)->pending_writes,
            (std::vector<PendingWrite>{{"task", "x", 1}}));
}

// A special channel's fixed index is negative: its write comes before the task's others.
TEST_P(SaverConformanceTest, ATasksSpecialWriteComesBeforeItsOrdinaryOnes) {
  const CheckpointConfig config =
      saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  const std::string interrupt(kInterruptChannel);
  saver_->put_writes(config, {{"x", 1}, {interrupt, Json::array({"why"})}, {"y", 2}}, "task");
  EXPECT_EQ(saver_->get_tuple(config)->pending_writes,
            (std::vector<PendingWrite>{
                {"task", interrupt, Json::array({"why"})}, {"task", "x", 1}, {"task", "y", 2}}));
}

TEST_P(SaverConformanceTest, WritesAreIsolatedByNamespace) {
  CheckpointConfig root = saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  saver_->put_writes({"t", "child", root.checkpoint_id}, {{"x", 1}}, "task");
  EXPECT_TRUE(saver_->get_tuple(root)->pending_writes.empty());
}

TEST_P(SaverConformanceTest, ANewCheckpointStartsWithNoPendingWrites) {
  CheckpointConfig first = saver_->put({"t", "", ""}, make_checkpoint(-1), meta("input", -1), {});
  saver_->put_writes(first, {{"x", 1}}, "task");
  CheckpointConfig second = saver_->put(first, make_checkpoint(0), meta("loop", 0), {});
  EXPECT_TRUE(saver_->get_tuple(second)->pending_writes.empty());
  EXPECT_EQ(saver_->get_tuple(first)->pending_writes.size(), 1u);
}

// ---- list -------------------------------------------------------------------------------------

TEST_P(SaverConformanceTest, ListReturnsNewestFirst) {
  auto configs = put_chain(*saver_, "t", "", 5);
  std::vector<std::string> expected;
  for (auto it = configs.rbegin(); it != configs.rend(); ++it)
    expected.push_back(it->checkpoint_id);
  ListQuery query;
  query.thread_id = "t";
  EXPECT_EQ(ids_of(saver_->list(query)), expected);
}

TEST_P(SaverConformanceTest, ListFiltersOnStep) {
  auto configs = put_chain(*saver_, "t", "", 4);
  ListQuery query;
  query.filter = Json{{"step", 1}};
  EXPECT_EQ(ids_of(saver_->list(query)), std::vector<std::string>{configs[2].checkpoint_id});
}

TEST_P(SaverConformanceTest, ListFiltersOnSeveralAndCustomKeys) {
  saver_->put({"t", "", ""}, make_checkpoint(-1), Json{{"source", "input"}, {"user", "ann"}}, {});
  CheckpointConfig match = saver_->put({"t", "", ""}, make_checkpoint(0),
                                       Json{{"source", "loop"}, {"user", "ann"}, {"n", 1.5}}, {});
  saver_->put({"t", "", ""}, make_checkpoint(1), Json{{"source", "loop"}, {"user", "bob"}}, {});
  ListQuery query;
  query.filter = Json{{"source", "loop"}, {"user", "ann"}};
  EXPECT_EQ(ids_of(saver_->list(query)), std::vector<std::string>{match.checkpoint_id});
  query.filter = Json{{"n", 1.5}};
  EXPECT_EQ(ids_of(saver_->list(query)), std::vector<std::string>{match.checkpoint_id});
  query.filter = Json{{"user", "nobody"}};
  EXPECT_TRUE(saver_->list(query).empty());
}

TEST_P(SaverConformanceTest, ListFiltersOnNullBooleanAndNestedValues) {
  CheckpointConfig match = saver_->put(
      {"t", "", ""}, make_checkpoint(-1),
      Json{{"flag", true}, {"none", nullptr}, {"obj", Json{{"a", Json::array({1})}}}}, {});
  saver_->put({"t", "", ""}, make_checkpoint(0), Json{{"flag", 1}, {"obj", "x"}}, {});
  for (const Json& filter : {Json{{"flag", true}}, Json{{"none", nullptr}},
                             Json{{"obj", Json{{"a", Json::array({1})}}}}}) {
    ListQuery query;
    query.filter = filter;
    EXPECT_EQ(ids_of(saver_->list(query)), std::vector<std::string>{match.checkpoint_id})
        << filter.dump();
  }
}

TEST_P(SaverConformanceTest, ListRejectsAnInvalidFilterKey) {
  ListQuery query;
  query.filter = Json{{"source') OR 1=1 --", "x"}};
  try {
    saver_->list(query);
    FAIL() << "accepted an invalid filter key";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("filter key"), std::string::npos) << e.what();
  }
}

TEST_P(SaverConformanceTest, ListWithLimitAndBeforePagesBackwards) {
  auto configs = put_chain(*saver_, "t", "", 6);
  ListQuery query;
  query.thread_id = "t";
  query.limit = 2;
  query.before = configs[4].checkpoint_id;
  EXPECT_EQ(ids_of(saver_->list(query)),
            (std::vector<std::string>{configs[3].checkpoint_id, configs[2].checkpoint_id}));
}

TEST_P(SaverConformanceTest, ListByCheckpointIdReturnsOnlyThatCheckpoint) {
  auto configs = put_chain(*saver_, "t", "", 3);
  ListQuery query;
  query.checkpoint_id = configs[1].checkpoint_id;
  EXPECT_EQ(ids_of(saver_->list(query)), std::vector<std::string>{configs[1].checkpoint_id});
}

TEST_P(SaverConformanceTest, ListOfAnEmptySaverIsEmpty) {
  EXPECT_TRUE(saver_->list({}).empty());
}

TEST_P(SaverConformanceTest, ListIncludesPendingWritesAndValues) {
  auto configs = put_chain(*saver_, "t", "", 2);
  saver_->put_writes(configs[1], {{"x", 1}}, "task");
  ListQuery query;
  query.thread_id = "t";
  auto tuples = saver_->list(query);
  ASSERT_EQ(tuples.size(), 2u);
  EXPECT_EQ(tuples[0].pending_writes, (std::vector<PendingWrite>{{"task", "x", 1}}));
  EXPECT_EQ(*tuples[1].checkpoint.channel_values.at("counter"), 0);
}

// ---- reuse_values_of --------------------------------------------------------------------------

TEST_P(SaverConformanceTest, GetTupleSkipsValuesTheCallerHolds) {
  auto configs = put_chain(*saver_, "t", "", 2);
  GetOptions options;
  options.reuse_values_of = configs[1].checkpoint_id;
  auto tuple = saver_->get_tuple({"t", "", ""}, options);
  ASSERT_TRUE(tuple);
  EXPECT_TRUE(tuple->values_reused);
  EXPECT_TRUE(tuple->checkpoint.channel_values.empty());
  EXPECT_EQ(tuple->checkpoint.channel_versions.at("counter"), 2);
}

TEST_P(SaverConformanceTest, GetTupleLoadsValuesWhenTheHeldOnesAreStale) {
  auto configs = put_chain(*saver_, "t", "", 2);
  GetOptions options;
  options.reuse_values_of = configs[0].checkpoint_id;
  auto tuple = saver_->get_tuple({"t", "", ""}, options);
  ASSERT_TRUE(tuple);
  EXPECT_FALSE(tuple->values_reused);
  EXPECT_EQ(*tuple->checkpoint.channel_values.at("counter"), 1);
}

TEST_P(SaverConformanceTest, GetTupleWithHeldValuesReadsTheRestAsAFullRead) {
  auto configs = put_chain(*saver_, "t", "", 3);
  saver_->put_writes(configs[2], {{"b", 2}, {"a", 1}}, "task-2");
  saver_->put_writes(configs[2], {{"c", 3}}, "task-1");
  saver_->put_writes(configs[1], {{"old", 0}}, "task-1");
  for (const CheckpointConfig& asked : {CheckpointConfig{"t", "", ""}, configs[1]}) {
    const std::string id =
        asked.checkpoint_id.empty() ? configs[2].checkpoint_id : asked.checkpoint_id;
    GetOptions options;
    options.reuse_values_of = id;
    auto held = saver_->get_tuple(asked, options);
    auto full = saver_->get_tuple(asked);
    ASSERT_TRUE(held && full) << id;
    EXPECT_TRUE(held->values_reused);
    EXPECT_EQ(held->pending_writes.size(), asked.checkpoint_id.empty() ? 3u : 1u) << id;
    full->checkpoint.channel_values.clear();
    EXPECT_TRUE(tuples_equal(*held, *full)) << id;
  }
}

TEST_P(SaverConformanceTest, GetTupleWithHeldValuesOfAThreadWithoutCheckpointsIsEmpty) {
  put_chain(*saver_, "t", "", 1);
  GetOptions options;
  options.reuse_values_of = "1ef00000-0000-6000-8000-000000000000";
  EXPECT_FALSE(saver_->get_tuple({"other", "", ""}, options));
  EXPECT_FALSE(saver_->get_tuple({"t", "", options.reuse_values_of}, options));
}

TEST_P(SaverConformanceTest, GetTupleWithoutValuesReadsTheRestOfAnyCheckpoint) {
  auto configs = put_chain(*saver_, "t", "", 3);
  saver_->put_writes(configs[2], {{"b", 2}}, "task-2");
  saver_->put_writes(configs[1], {{"old", 0}}, "task-1");
  for (const CheckpointConfig& asked : {CheckpointConfig{"t", "", ""}, configs[1]}) {
    GetOptions options;
    options.skip_values = true;
    auto bare = saver_->get_tuple(asked, options);
    auto full = saver_->get_tuple(asked);
    ASSERT_TRUE(bare && full) << asked.checkpoint_id;
    EXPECT_TRUE(bare->values_reused);
    EXPECT_TRUE(bare->checkpoint.channel_values.empty());
    EXPECT_FALSE(full->checkpoint.channel_values.empty());
    full->checkpoint.channel_values.clear();
    EXPECT_TRUE(tuples_equal(*bare, *full)) << asked.checkpoint_id;
  }
  GetOptions options;
  options.skip_values = true;
  EXPECT_FALSE(saver_->get_tuple({"other", "", ""}, options));
}

// ---- copy_thread ------------------------------------------------------------------------------

TEST_P(SaverConformanceTest, CopyThreadCopiesEveryCheckpointNamespaceAndWrite) {
  auto root = put_chain(*saver_, "source", "", 3);
  auto child = put_chain(*saver_, "source", "child:1", 2);
  saver_->put_writes(root[2], {{"x", 1}}, "task");
  saver_->put_writes(child[0], {{"y", 2}}, "task");
  saver_->copy_thread("source", "target");

  ListQuery source_query, target_query;
  source_query.thread_id = "source";
  target_query.thread_id = "target";
  auto source = saver_->list(source_query);
  auto target = saver_->list(target_query);
  ASSERT_EQ(source.size(), 5u);
  ASSERT_EQ(target.size(), source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    CheckpointTuple expected = source[i];
    expected.config.thread_id = "target";
    if (expected.parent_config) expected.parent_config->thread_id = "target";
    EXPECT_TRUE(tuples_equal(target[i], expected));
  }
}

TEST_P(SaverConformanceTest, CopyThreadLeavesTheSourceUnchanged) {
  auto configs = put_chain(*saver_, "source", "", 2);
  saver_->copy_thread("source", "target");
  saver_->put(saver_->get_tuple({"target", "", ""})->config, make_checkpoint(5), meta("loop", 5),
              {});
  ListQuery query;
  query.thread_id = "source";
  EXPECT_EQ(saver_->list(query).size(), 2u);
}

// ---- prune ------------------------------------------------------------------------------------

TEST_P(SaverConformanceTest, PruneKeepLatestKeepsTheNewestCheckpointOfEachNamespace) {
  auto root = put_chain(*saver_, "t", "", 4);
  auto child = put_chain(*saver_, "t", "child:1", 3);
  auto latest_root = saver_->get_tuple(root.back());
  saver_->prune({"t"}, PruneStrategy::kKeepLatest);
  ListQuery query;
  query.thread_id = "t";
  EXPECT_EQ(ids_of(saver_->list(query)),
            (std::vector<std::string>{child.back().checkpoint_id, root.back().checkpoint_id}));
  auto kept = saver_->get_tuple(root.back());
  ASSERT_TRUE(kept);
  EXPECT_TRUE(tuples_equal(*kept, *latest_root));
}

TEST_P(SaverConformanceTest, PruneKeepLatestKeepsOnlyTheLatestWrites) {
  auto configs = put_chain(*saver_, "t", "", 2);
  saver_->put_writes(configs[0], {{"old", 1}}, "task");
  saver_->put_writes(configs[1], {{"new", 2}}, "task");
  saver_->prune({"t"}, PruneStrategy::kKeepLatest);
  EXPECT_EQ(saver_->get_tuple({"t", "", ""})->pending_writes,
            (std::vector<PendingWrite>{{"task", "new", 2}}));
  EXPECT_FALSE(saver_->get_tuple(configs[0]).has_value());
}

TEST_P(SaverConformanceTest, PruneKeepLatestKeepsValuesStoredByRemovedCheckpoints) {
  Checkpoint first = make_checkpoint(-1, {{"a", "from first"}, {"b", 1}});
  CheckpointConfig config =
      saver_->put({"t", "", ""}, first, meta("input", -1), first.channel_versions);
  Checkpoint second = make_checkpoint(0, {{"a", "from first"}, {"b", 2}}, {{"a", 1}, {"b", 2}});
  config = saver_->put(config, second, meta("loop", 0), {{"b", 2}});
  saver_->prune({"t"}, PruneStrategy::kKeepLatest);
  EXPECT_EQ(saver_->get_tuple(config)->checkpoint, second);
  // And the kept checkpoint remains a valid parent for the next step.
  Checkpoint third = make_checkpoint(1, {{"a", "from first"}, {"b", 3}}, {{"a", 1}, {"b", 3}});
  config = saver_->put(config, third, meta("loop", 1), {{"b", 3}});
  EXPECT_EQ(saver_->get_tuple(config)->checkpoint, third);
}

TEST_P(SaverConformanceTest, PruneDeleteRemovesTheThreadOnly) {
  put_chain(*saver_, "t", "", 2);
  put_chain(*saver_, "other", "", 2);
  saver_->prune({"t"}, PruneStrategy::kDelete);
  EXPECT_FALSE(saver_->get_tuple({"t", "", ""}).has_value());
  ListQuery query;
  query.thread_id = "other";
  EXPECT_EQ(saver_->list(query).size(), 2u);
}

TEST_P(SaverConformanceTest, PruneLeavesOtherThreadsUntouched) {
  put_chain(*saver_, "t", "", 3);
  put_chain(*saver_, "other", "", 3);
  saver_->prune({"t"}, PruneStrategy::kKeepLatest);
  ListQuery query;
  query.thread_id = "other";
  EXPECT_EQ(saver_->list(query).size(), 3u);
}

// ---- concurrency ------------------------------------------------------------------------------

TEST_P(SaverConformanceTest, ConcurrentCallsFromSeveralThreadsAreAllStored) {
  constexpr int kThreads = 4, kSteps = 25;
  std::vector<std::thread> workers;
  for (int w = 0; w < kThreads; ++w) {
    workers.emplace_back([&, w] {
      const std::string thread_id = "thread-" + std::to_string(w);
      CheckpointConfig parent{thread_id, "", ""};
      for (int i = 0; i < kSteps; ++i) {
        parent = saver_->put(parent, make_checkpoint(i, {{"i", i}}, {{"i", i + 1}}),
                             meta("loop", i), {{"i", i + 1}});
        saver_->put_writes(parent, {{"i", i}}, "task");
        saver_->get_tuple({thread_id, "", ""});
      }
    });
  }
  for (auto& worker : workers) worker.join();
  for (int w = 0; w < kThreads; ++w) {
    ListQuery query;
    query.thread_id = "thread-" + std::to_string(w);
    auto tuples = saver_->list(query);
    ASSERT_EQ(tuples.size(), static_cast<std::size_t>(kSteps));
    EXPECT_EQ(*tuples.front().checkpoint.channel_values.at("i"), kSteps - 1);
  }
}

}  // namespace
}  // namespace tollgate::testing
