// Runs every tests/scenarios/*.json against the library, once with each saver this program is
// built for (TOLLGATE_SCENARIO_SAVERS: "memory,sqlite" in the fast tier, "postgres" in the
// postgres tier, each case in a schema of its own). The format is transport-neutral (the
// server runs the same files over HTTP); see README.md in this folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string_view>

#include "scenarios/scenario_agent.h"
#include "support/postgres_test_server.h"
#include "tollgate/agent.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"
#include "tollgate/messages.h"
#include "tollgate/postgres_saver.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::scenarios {
namespace {

namespace fs = std::filesystem;

struct ScenarioCase {
  fs::path file;
  std::string saver;  // "memory" | "sqlite" | "postgres"
};

// For gtest's messages: "01_approve.json with the sqlite saver".
void PrintTo(const ScenarioCase& c, std::ostream* out) {
  *out << c.file.filename().string() << " with the " << c.saver << " saver";
}

std::vector<ScenarioCase> all_cases() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(TOLLGATE_SCENARIO_DIR)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<ScenarioCase> cases;
  std::vector<std::string> savers;
  for (std::string_view list = TOLLGATE_SCENARIO_SAVERS; !list.empty();) {
    const std::size_t comma = std::min(list.find(','), list.size());
    savers.emplace_back(list.substr(0, comma));
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  for (const auto& f : files) {
    for (const std::string& saver : savers) cases.push_back({f, saver});
  }
  return cases;
}

Json load(const fs::path& file) {
  std::ifstream in(file);
  return Json::parse(in);
}

// `expected` is contained in `actual`: objects by key (actual may have more keys), arrays
// element-wise with equal length, scalars equal. Returns the first mismatch's path or "".
std::string mismatch(const Json& expected, const Json& actual, const std::string& path = "$") {
  if (expected.is_object()) {
    if (!actual.is_object()) return path + ": expected an object, got " + actual.dump();
    for (const auto& [key, value] : expected.items()) {
      const auto it = actual.find(key);
      if (it == actual.end()) return path + "." + key + ": missing";
      std::string m = mismatch(value, *it, path + "." + key);
      if (!m.empty()) return m;
    }
    return "";
  }
  if (expected.is_array()) {
    if (!actual.is_array() || actual.size() != expected.size()) {
      return path + ": expected " + std::to_string(expected.size()) + " items, got " +
             actual.dump();
    }
    for (std::size_t i = 0; i < expected.size(); ++i) {
      std::string m = mismatch(expected[i], actual[i], path + "[" + std::to_string(i) + "]");
      if (!m.empty()) return m;
    }
    return "";
  }
  if (expected != actual) return path + ": expected " + expected.dump() + ", got " + actual.dump();
  return "";
}

std::string code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kUnprocessable:
      return "unprocessable";
    default:
      return error_code_name(code);
  }
}

Json sorted(Json list) {
  std::sort(list.begin(), list.end(),
            [](const Json& a, const Json& b) { return a.dump() < b.dump(); });
  return list;
}

class Scenario : public ::testing::TestWithParam<ScenarioCase> {
 protected:
  void SetUp() override {
    spec_ = load(GetParam().file);
    if (GetParam().saver == "memory") {
      saver_ = make_memory_saver();
    } else if (GetParam().saver == "postgres") {
      TOLLGATE_REQUIRE_POSTGRES();
      schema_ = std::make_unique<testing::ScratchSchema>();
      saver_ = open_postgres_saver(testing::test_postgres_url(), {.schema = schema_->name()});
    } else {
      db_path_ =
          fs::path(::testing::TempDir()) / ("scenario_" + GetParam().file.stem().string() + ".db");
      fs::remove(db_path_);
      saver_ = open_sqlite_saver(db_path_.string());
    }
  }
  void TearDown() override {
    agent_.reset();
    saver_.reset();
    schema_.reset();
    if (!db_path_.empty()) fs::remove(db_path_);
  }

  void build_agent() {
    scripted_ = scripted_model(spec_);
    agent_ = build_scenario_agent(spec_, scripted_, saver_, log_);
  }

  RunConfig config() const {
    RunConfig c;
    c.thread_id = "t-" + spec_.value("name", "scenario");
    return c;
  }

  void check_paused(bool expected, const std::string& where) {
    const StateSnapshot snapshot = agent_->get_state(config());
    EXPECT_EQ(!snapshot.next.empty() && !snapshot.interrupts.empty(), expected)
        << where << ": paused state, next=" << Json(snapshot.next).dump();
  }

  void run_step(const Json& step, std::size_t index) {
    const std::string where = "step " + std::to_string(index);
    const Json& expect = step.value("expect", Json::object());
    RunResult result;
    try {
      if (step.contains("input")) {
        result = agent_->invoke(step["input"], config());
      } else {
        Command command;
        command.resume = step.at("resume");
        result = agent_->invoke(command, config());
      }
    } catch (const Error& e) {
      ASSERT_TRUE(expect.contains("error")) << where << ": unexpected error: " << e.what();
      const Json& error = expect["error"];
      EXPECT_EQ(e.what(), error.value("message", "")) << where;
      if (error.contains("code")) {
        EXPECT_EQ(code_name(e.code()), error["code"].get<std::string>()) << where;
      }
      if (error.contains("http_status")) {
        EXPECT_EQ(http_status(e.code()), error["http_status"].get<int>()) << where;
      }
      if (expect.contains("paused")) check_paused(expect["paused"].get<bool>(), where);
      return;
    }
    ASSERT_FALSE(expect.contains("error"))
        << where << ": expected the error " << expect["error"].dump();
    if (expect.contains("interrupts")) {
      Json values = Json::array();
      for (const auto& interrupt : result.interrupts) values.push_back(interrupt.value);
      EXPECT_EQ(values, expect["interrupts"]) << where << ": interrupt values";
    }
    if (expect.contains("paused")) {
      EXPECT_EQ(result.paused, expect["paused"].get<bool>()) << where;
      check_paused(expect["paused"].get<bool>(), where);
    }
    if (expect.contains("next")) {
      EXPECT_EQ(Json(agent_->get_state(config()).next), expect["next"]) << where << ": next";
    }
    if (expect.contains("values")) {
      const std::string m = mismatch(expect["values"], result.values.to_json());
      EXPECT_EQ(m, "") << where << ": values " << result.values.to_json().dump(2);
    }
    if (expect.contains("messages")) {
      const std::string m = mismatch(expect["messages"], result.values["messages"]);
      EXPECT_EQ(m, "") << where << ": messages " << result.values["messages"].dump(2);
    }
  }

  Json spec_;
  fs::path db_path_;
  std::shared_ptr<Saver> saver_;
  std::unique_ptr<testing::ScratchSchema> schema_;
  std::shared_ptr<ExecutionLog> log_ = std::make_shared<ExecutionLog>();
  std::shared_ptr<ScriptedChatModel> scripted_;
  std::shared_ptr<CompiledGraph> agent_;
};

TEST_P(Scenario, BehavesAsSpecified) {
  ASSERT_NO_FATAL_FAILURE(build_agent());
  const Json& steps = spec_.at("steps");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    ASSERT_NO_FATAL_FAILURE(run_step(steps[i], i));
  }
  if (spec_.contains("tools_executed")) {
    EXPECT_EQ(sorted(log_->entries()), sorted(spec_["tools_executed"])) << "tools executed";
  }
  if (spec_.contains("model_calls")) {
    const std::vector<ChatRequest> requests = scripted_->requests();
    Json seen = Json::array();
    for (const auto& r : requests) seen.push_back(r.messages.to_json());
    EXPECT_EQ(mismatch(spec_["model_calls"], seen), "") << "model calls " << seen.dump(2);
  }
}

std::string case_name(const ::testing::TestParamInfo<ScenarioCase>& info) {
  std::string name = info.param.file.stem().string() + "_" + info.param.saver;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Files, Scenario, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace tollgate::scenarios
