// The conformance suite every Saver runs. A saver joins it by instantiating the suites with a
// factory (see memory_saver_test.cpp):
//
//   INSTANTIATE_SAVER_CONFORMANCE(Memory, (SaverFactory{"memory", make_memory, bytes_fn}));
//
// The cases mirror the JS @langchain/langgraph-checkpoint-validation suite (put, putWrites,
// getTuple for namespaces "" and "child", the list cross-product, deleteThread) and the Python
// langgraph-checkpoint-conformance list (base and extended: copy_thread, prune), plus what our
// format adds: delta storage of list channels and GetOptions::reuse_values_of.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>

#include "tollgate/checkpoint.h"

namespace tollgate::testing {

struct SaverFactory {
  std::string name;
  // Makes a fresh, empty saver; `scratch_dir` is an empty directory removed after the test.
  std::function<std::shared_ptr<Saver>(const std::string& scratch_dir)> make;
  // The bytes the saver has written so far (its SaverStats::bytes_written).
  std::function<std::uint64_t(Saver&)> bytes_written;
};

inline std::ostream& operator<<(std::ostream& out, const SaverFactory& factory) {
  return out << factory.name;
}

// Base fixture: a fresh saver per test in its own scratch directory.
class SaverFixture {
 protected:
  void make_saver(const SaverFactory& factory);
  void drop_saver();
  const std::string& scratch_dir() const { return scratch_dir_; }

  const SaverFactory* factory_ = nullptr;
  std::shared_ptr<Saver> saver_;

 private:
  std::string scratch_dir_;
};

class SaverConformanceTest : public SaverFixture, public ::testing::TestWithParam<SaverFactory> {
 protected:
  void SetUp() override { make_saver(GetParam()); }
  void TearDown() override { drop_saver(); }
};

// Cases the JS suite runs once per namespace ("" and "child").
class SaverNamespaceTest : public SaverFixture,
                           public ::testing::TestWithParam<std::tuple<SaverFactory, std::string>> {
 protected:
  void SetUp() override { make_saver(std::get<0>(GetParam())); }
  void TearDown() override { drop_saver(); }
  const std::string& ns() const { return std::get<1>(GetParam()); }
};

// The list cross-product, split by (thread_id option, checkpoint_ns option); each case loops
// over limit x before x filter.
class SaverListMatrixTest : public SaverFixture,
                            public ::testing::TestWithParam<std::tuple<SaverFactory, int, int>> {
 protected:
  void SetUp() override { make_saver(std::get<0>(GetParam())); }
  void TearDown() override { drop_saver(); }
};

std::string saver_param_name(const ::testing::TestParamInfo<SaverFactory>& info);
std::string saver_namespace_param_name(
    const ::testing::TestParamInfo<std::tuple<SaverFactory, std::string>>& info);
std::string saver_list_param_name(
    const ::testing::TestParamInfo<std::tuple<SaverFactory, int, int>>& info);

inline constexpr int kListThreadOptions = 4;     // unset, thread 1, thread 2, unknown thread
inline constexpr int kListNamespaceOptions = 3;  // unset, "", "child"

}  // namespace tollgate::testing

#define INSTANTIATE_SAVER_CONFORMANCE(prefix, factory)                                     \
  INSTANTIATE_TEST_SUITE_P(prefix, SaverConformanceTest, ::testing::Values(factory),       \
                           ::tollgate::testing::saver_param_name);                         \
  INSTANTIATE_TEST_SUITE_P(                                                                \
      prefix, SaverNamespaceTest,                                                          \
      ::testing::Combine(::testing::Values(factory),                                       \
                         ::testing::Values(std::string(""), std::string("child"))),        \
      ::tollgate::testing::saver_namespace_param_name);                                    \
  INSTANTIATE_TEST_SUITE_P(                                                                \
      prefix, SaverListMatrixTest,                                                         \
      ::testing::Combine(::testing::Values(factory),                                       \
                         ::testing::Range(0, ::tollgate::testing::kListThreadOptions),     \
                         ::testing::Range(0, ::tollgate::testing::kListNamespaceOptions)), \
      ::tollgate::testing::saver_list_param_name)
