// Conformance cases of the JS validation suite and the Python base conformance list.
//
// Deliberately absent, because our typed API makes them impossible rather than invalid:
// - "should fail if config.configurable is missing": CheckpointConfig has no `configurable`
//   wrapper; an empty thread_id is the only way to omit the thread and is tested.
// - "config contains only thread_id, checkpoint_ns and checkpoint_id" (no leaking `canary`):
//   CheckpointConfig has exactly those three fields.
// - "should default to empty namespace if checkpoint_ns is missing": checkpoint_ns defaults
//   to "" in the struct; DefaultNamespaceIsTheRoot checks that it is stored as the root.
// - "should migrate pending sends" (getTuple and list): it concerns LangGraph's pre-v4
//   checkpoints, which kept sends in `pending_sends`. Our format never had that field
//   (sends live in the "__pregel_tasks" channel from version 1), so there is nothing to migrate.
// - "should only store channel_values that have changed (based on newVersions)": that JS
//   case expects unchanged channels to vanish from channel_values. Our savers store only the
//   changed channels too, but a checkpoint always reads back complete (its unchanged
//   channels come from the checkpoint that stored them): see CarriedOverChannels* below.
#include "checkpoint/saver_conformance.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "checkpoint/saver_test_util.h"
#include "tollgate/error.h"

namespace tollgate::testing {

void SaverFixture::make_saver(const SaverFactory& factory) {
  factory_ = &factory;
  std::string pattern = (std::filesystem::temp_directory_path() / "tollgate-saver-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  scratch_dir_ = pattern;
  saver_ = factory.make(scratch_dir_);
  ASSERT_NE(saver_, nullptr);
}

void SaverFixture::drop_saver() {
  saver_.reset();
  if (!scratch_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(scratch_dir_, ignored);
  }
}

namespace {

std::string sanitize(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace

std::string saver_param_name(const ::testing::TestParamInfo<SaverFactory>& info) {
  return sanitize(info.param.name);
}

std::string saver_namespace_param_name(
    const ::testing::TestParamInfo<std::tuple<SaverFactory, std::string>>& info) {
  const std::string& ns = std::get<1>(info.param);
  return sanitize(std::get<0>(info.param).name) + (ns.empty() ? "_root" : "_" + sanitize(ns));
}

std::string saver_list_param_name(
    const ::testing::TestParamInfo<std::tuple<SaverFactory, int, int>>& info) {
  static const char* const kThreads[] = {"AnyThread", "Thread1", "Thread2", "UnknownThread"};
  static const char* const kNamespaces[] = {"AnyNamespace", "RootNamespace", "ChildNamespace"};
  return sanitize(std::get<0>(info.param).name) + "_" + kThreads[std::get<1>(info.param)] + "_" +
         kNamespaces[std::get<2>(info.param)];
}

namespace {

using Writes = std::vector<std::pair<std::string, Json>>;

Json input_metadata() {
  return Json{{"source", "input"}, {"step", -1}, {"parents", Json::object()}};
}
Json loop_metadata() {
  return Json{{"source", "loop"}, {"step", 0}, {"parents", Json::object()}};
}

template <typename F>
ErrorCode error_code_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "expected an Error";
  return ErrorCode::kInternal;
}

// ---- put (per namespace) -------------------------------------------------------------------

TEST_P(SaverNamespaceTest, PutReturnsConfigNamingTheStoredCheckpoint) {
  Checkpoint checkpoint = make_checkpoint(-1);
  CheckpointConfig config = saver_->put({"thread-1", ns(), ""}, checkpoint, input_metadata(), {});
  EXPECT_EQ(config, (CheckpointConfig{"thread-1", ns(), checkpoint.id}));
}

TEST_P(SaverNamespaceTest, PutResultIsRetrievable) {
  Checkpoint checkpoint = make_checkpoint(-1);
  CheckpointConfig config = saver_->put({"thread-1", ns(), ""}, checkpoint, input_metadata(), {});
  EXPECT_TRUE(saver_->get_tuple(config).has_value());
}

TEST_P(SaverNamespaceTest, PutStoresTheCheckpointWithoutAlteration) {
  Checkpoint checkpoint =
      make_checkpoint(-1, {{"animals", Json::array({"dog"})},
                           {"nested", Json{{"a", Json::array({1, 2.5, nullptr, true})}}}});
  checkpoint.updated_channels = {"animals"};
  CheckpointConfig config = saver_->put({"thread-1", ns(), ""}, checkpoint, input_metadata(),
                                        checkpoint.channel_versions);
  auto tuple = saver_->get_tuple(config);
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->checkpoint, checkpoint);
}

TEST_P(SaverNamespaceTest, PutStoresTheMetadataWithoutAlteration) {
  Json metadata = input_metadata();
  metadata["run_id"] = "run-1";
  metadata["custom"] = Json{{"nested", Json::array({1, "two"})}};
  CheckpointConfig config = saver_->put({"thread-1", ns(), ""}, make_checkpoint(-1), metadata, {});
  EXPECT_EQ(saver_->get_tuple(config)->metadata, metadata);
}

TEST_P(SaverNamespaceTest, PutRejectsAMissingThreadId) {
  EXPECT_EQ(error_code_of([&] {
              saver_->put({"", ns(), ""}, make_checkpoint(-1), input_metadata(), {});
            }),
            ErrorCode::kInvalidArgument);
}

// ---- put_writes (per namespace) ------------------------------------------------------------

TEST_P(SaverNamespaceTest, PutWritesStoresWritesAgainstTheCheckpoint) {
  CheckpointConfig config =
      saver_->put({"thread-1", ns(), ""}, make_checkpoint(-1), input_metadata(), {});
  saver_->put_writes(config, {{"animals", "dog"}}, "pet_task");
  auto tuple = saver_->get_tuple(config);
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->pending_writes, (std::vector<PendingWrite>{{"pet_task", "animals", "dog"}}));
}

TEST_P(SaverNamespaceTest, PutWritesRejectsAMissingThreadId) {
  CheckpointConfig config =
      saver_->put({"thread-1", ns(), ""}, make_checkpoint(-1), input_metadata(), {});
  config.thread_id.clear();
  EXPECT_EQ(error_code_of([&] {
              saver_->put_writes(config, {{"animals", "dog"}}, "pet_task");
            }),
            ErrorCode::kInvalidArgument);
}

TEST_P(SaverNamespaceTest, PutWritesRejectsAMissingCheckpointId) {
  CheckpointConfig config{"thread-1", ns(), ""};
  saver_->put(config, make_checkpoint(-1), input_metadata(), {});
  EXPECT_EQ(error_code_of([&] {
              saver_->put_writes(config, {{"animals", "dog"}}, "pet_task");
            }),
            ErrorCode::kInvalidArgument);
}

// ---- put_after_writes (per namespace) ------------------------------------------------------

TEST_P(SaverNamespaceTest, PutAfterWritesStoresTheWritesAgainstTheParentAndTheChild) {
  Checkpoint parent = make_checkpoint(-1, {{"animals", Json::array({"dog"})}}, {{"animals", 1}});
  CheckpointConfig parent_config =
      saver_->put({"thread-1", ns(), ""}, parent, input_metadata(), {{"animals", 1}});
  Checkpoint child = make_checkpoint(0, {{"animals", Json::array({"dog", "fish"})}},
                                     {{"animals", 2}});
  CheckpointConfig child_config = saver_->put_after_writes(
      parent_config, {{"animals", "fish"}}, "add_fish", "", parent_config, child,
      loop_metadata(), {{"animals", 2}});
  EXPECT_EQ(child_config, (CheckpointConfig{"thread-1", ns(), child.id}));
  auto parent_tuple = saver_->get_tuple(parent_config);
  ASSERT_TRUE(parent_tuple);
  EXPECT_EQ(parent_tuple->pending_writes,
            (std::vector<PendingWrite>{{"add_fish", "animals", "fish"}}));
  auto child_tuple = saver_->get_tuple(child_config);
  ASSERT_TRUE(child_tuple);
  EXPECT_EQ(child_tuple->checkpoint, child);
  EXPECT_EQ(child_tuple->metadata, loop_metadata());
  EXPECT_EQ(child_tuple->parent_config, parent_config);
  EXPECT_TRUE(child_tuple->pending_writes.empty());
}

TEST_P(SaverNamespaceTest, PutAfterWritesWithAnInvalidCheckpointStoresNeither) {
  CheckpointConfig parent_config =
      saver_->put({"thread-1", ns(), ""}, make_checkpoint(-1), input_metadata(), {});
  EXPECT_EQ(error_code_of([&] {
              saver_->put_after_writes(parent_config, {{"animals", "fish"}}, "add_fish", "",
                                       {"", ns(), parent_config.checkpoint_id},
                                       make_checkpoint(0), loop_metadata(), {});
            }),
            ErrorCode::kInvalidArgument);
  auto parent_tuple = saver_->get_tuple(parent_config);
  ASSERT_TRUE(parent_tuple);
  EXPECT_TRUE(parent_tuple->pending_writes.empty());
  EXPECT_EQ(saver_->get_tuple({"thread-1", ns(), ""})->config, parent_config);
}

// ---- get_tuple (per namespace) -------------------------------------------------------------

// The JS suite's parent and child: the parent has a Send write, the child an ordinary one.
struct ParentAndChild {
  Checkpoint parent, child;
  Json parent_metadata = input_metadata(), child_metadata = loop_metadata();
  CheckpointConfig parent_config, child_config;
};

ParentAndChild put_parent_and_child(Saver& saver, const std::string& thread_id,
                                    const std::string& ns) {
  ParentAndChild p;
  p.parent = make_checkpoint(-1, {{"animals", Json::array({"dog"})}}, {{"animals", 1}});
  p.parent_config = saver.put({thread_id, ns, ""}, p.parent, p.parent_metadata, {{"animals", 1}});
  saver.put_writes(p.parent_config, {{std::string(kTasksChannel), Json::array({"add_fish"})}},
                   "pending_sends_task");
  p.child = make_checkpoint(0, {{"animals", Json::array({"dog", "fish"})}}, {{"animals", 2}});
  p.child_config = saver.put(p.parent_config, p.child, p.child_metadata, {{"animals", 2}});
  saver.put_writes(p.child_config, {{"animals", Json::array({"dog", "fish"})}}, "add_fish");
  return p;
}

TEST_P(SaverNamespaceTest, GetTupleOfTheFirstCheckpointHasNoParentAndItsWrites) {
  ParentAndChild p = put_parent_and_child(*saver_, "thread-1", ns());
  auto tuple = saver_->get_tuple(p.parent_config);
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->checkpoint, p.parent);
  EXPECT_EQ(tuple->metadata, p.parent_metadata);
  EXPECT_EQ(tuple->config, p.parent_config);
  EXPECT_FALSE(tuple->parent_config.has_value());
  EXPECT_EQ(tuple->pending_writes,
            (std::vector<PendingWrite>{
                {"pending_sends_task", std::string(kTasksChannel), Json::array({"add_fish"})}}));
}

TEST_P(SaverNamespaceTest, GetTupleOfASubsequentCheckpointNamesItsParent) {
  ParentAndChild p = put_parent_and_child(*saver_, "thread-1", ns());
  auto tuple = saver_->get_tuple(p.child_config);
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->checkpoint, p.child);
  EXPECT_EQ(tuple->metadata, p.child_metadata);
  EXPECT_EQ(tuple->config, p.child_config);
  EXPECT_EQ(tuple->parent_config, p.parent_config);
  EXPECT_EQ(tuple->pending_writes,
            (std::vector<PendingWrite>{{"add_fish", "animals", Json::array({"dog", "fish"})}}));
}

TEST_P(SaverNamespaceTest, GetTupleWithoutCheckpointIdReturnsTheLatest) {
  ParentAndChild p = put_parent_and_child(*saver_, "thread-1", ns());
  auto tuple = saver_->get_tuple({"thread-1", ns(), ""});
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->checkpoint, p.child);
  EXPECT_EQ(tuple->config, p.child_config);
  EXPECT_EQ(tuple->parent_config, p.parent_config);
  EXPECT_EQ(tuple->pending_writes.size(), 1u);
}

TEST_P(SaverNamespaceTest, GetTupleOfAnUnknownCheckpointIdIsEmpty) {
  put_parent_and_child(*saver_, "thread-1", ns());
  EXPECT_FALSE(saver_->get_tuple({"thread-1", ns(), new_checkpoint_id(0)}).has_value());
}

TEST_P(SaverNamespaceTest, GetTupleWithoutThreadIdIsEmpty) {
  put_parent_and_child(*saver_, "thread-1", ns());
  EXPECT_FALSE(saver_->get_tuple({"", ns(), ""}).has_value());
}

// Parent {messages:["hi"], stepCount:1}; the child changes only stepCount.
std::pair<CheckpointConfig, Checkpoint> put_carried_over(Saver& saver, const std::string& ns) {
  Checkpoint parent = make_checkpoint(-1, {{"messages", Json::array({"hi"})}, {"stepCount", 1}},
                                      {{"messages", 1}, {"stepCount", 1}});
  CheckpointConfig parent_config = saver.put({"thread-1", ns, ""}, parent, input_metadata(),
                                             {{"messages", 1}, {"stepCount", 1}});
  Checkpoint child = make_checkpoint(0, {{"messages", Json::array({"hi"})}, {"stepCount", 3}},
                                     {{"messages", 1}, {"stepCount", 2}});
  return {saver.put(parent_config, child, loop_metadata(), {{"stepCount", 2}}), child};
}

TEST_P(SaverNamespaceTest, CarriedOverChannelsAreReconstructedById) {
  auto [config, child] = put_carried_over(*saver_, ns());
  auto tuple = saver_->get_tuple(config);
  ASSERT_TRUE(tuple);
  EXPECT_EQ(values_of(tuple->checkpoint), (Json{{"messages", {"hi"}}, {"stepCount", 3}}));
  EXPECT_EQ(tuple->checkpoint, child);
}

TEST_P(SaverNamespaceTest, CarriedOverChannelsAreReconstructedForTheLatest) {
  auto [config, child] = put_carried_over(*saver_, ns());
  auto tuple = saver_->get_tuple({"thread-1", ns(), ""});
  ASSERT_TRUE(tuple);
  EXPECT_EQ(values_of(tuple->checkpoint), (Json{{"messages", {"hi"}}, {"stepCount", 3}}));
}

// ---- list: the JS cross-product -------------------------------------------------------------

TEST_P(SaverListMatrixTest, ReturnsExactlyTheMatchingTuplesNewestFirst) {
  std::vector<CheckpointTuple> stored;
  std::vector<ParentAndChild> pairs;
  for (const char* thread : {"thread-1", "thread-2"}) {
    for (const char* ns : {"", "child"}) {
      ParentAndChild p = put_parent_and_child(*saver_, thread, ns);
      stored.push_back(*saver_->get_tuple(p.parent_config));
      stored.push_back(*saver_->get_tuple(p.child_config));
      pairs.push_back(p);
    }
  }
  const std::optional<std::string> thread_options[] = {std::nullopt, "thread-1", "thread-2",
                                                       "no-such-thread"};
  const std::optional<std::string> ns_options[] = {std::nullopt, "", "child"};
  const std::optional<std::size_t> limit_options[] = {std::nullopt, 1, 2};
  const std::optional<std::string> before_options[] = {std::nullopt, pairs[0].parent.id,
                                                       pairs[0].child.id};
  const Json filter_options[] = {Json(), Json::object(), Json{{"source", "input"}},
                                 Json{{"source", "loop"}}};

  ListQuery base;
  base.thread_id = thread_options[std::get<1>(GetParam())];
  base.checkpoint_ns = ns_options[std::get<2>(GetParam())];
  for (const auto& limit : limit_options) {
    for (const auto& before : before_options) {
      for (const Json& filter : filter_options) {
        ListQuery query = base;
        query.limit = limit;
        query.before = before;
        query.filter = filter;
        SCOPED_TRACE("limit=" + (limit ? std::to_string(*limit) : "unset") +
                     " before=" + before.value_or("unset") + " filter=" + filter.dump());
        std::vector<const CheckpointTuple*> expected;
        for (const CheckpointTuple& tuple : stored) {
          if (query.thread_id && *query.thread_id != tuple.config.thread_id) continue;
          if (query.checkpoint_ns && *query.checkpoint_ns != tuple.config.checkpoint_ns) continue;
          if (before && !(tuple.config.checkpoint_id < *before)) continue;
          if (filter.is_object() && filter.contains("source") &&
              tuple.metadata["source"] != filter["source"]) {
            continue;
          }
          expected.push_back(&tuple);
        }
        std::sort(expected.begin(), expected.end(), [](auto* a, auto* b) {
          return a->config.checkpoint_id > b->config.checkpoint_id;
        });
        if (limit && expected.size() > *limit) expected.resize(*limit);
        std::vector<CheckpointTuple> actual = saver_->list(query);
        ASSERT_EQ(actual.size(), expected.size());
        for (std::size_t i = 0; i < actual.size(); ++i) {
          EXPECT_TRUE(tuples_equal(actual[i], *expected[i]));
        }
      }
    }
  }
}

// ---- delete_thread ---------------------------------------------------------------------------

TEST_P(SaverConformanceTest, DeleteThreadRemovesOnlyThatThread) {
  saver_->put({"1", "", ""}, make_checkpoint(-1), input_metadata(), {});
  saver_->put({"2", "", ""}, make_checkpoint(-1), input_metadata(), {});
  saver_->delete_thread("1");
  EXPECT_FALSE(saver_->get_tuple({"1", "", ""}).has_value());
  EXPECT_TRUE(saver_->get_tuple({"2", "", ""}).has_value());
}

TEST_P(SaverConformanceTest, DeleteThreadRemovesWritesAndEveryNamespace) {
  for (const char* ns : {"", "child:abc"}) {
    CheckpointConfig config = saver_->put({"1", ns, ""}, make_checkpoint(-1), input_metadata(), {});
    saver_->put_writes(config, {{"animals", "dog"}}, "task");
  }
  saver_->delete_thread("1");
  EXPECT_FALSE(saver_->get_tuple({"1", "", ""}).has_value());
  EXPECT_FALSE(saver_->get_tuple({"1", "child:abc", ""}).has_value());
  ListQuery query;
  query.thread_id = "1";
  EXPECT_TRUE(saver_->list(query).empty());
  // A checkpoint stored again under the same id starts without the deleted writes.
  Checkpoint again = make_checkpoint(-1);
  CheckpointConfig config = saver_->put({"1", "", ""}, again, input_metadata(), {});
  EXPECT_TRUE(saver_->get_tuple(config)->pending_writes.empty());
}

TEST_P(SaverConformanceTest, DeleteThreadOfAnUnknownThreadIsANoOp) {
  saver_->put({"1", "", ""}, make_checkpoint(-1), input_metadata(), {});
  saver_->delete_thread("unknown");
  EXPECT_TRUE(saver_->get_tuple({"1", "", ""}).has_value());
}

}  // namespace
}  // namespace tollgate::testing
