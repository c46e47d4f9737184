// Shared set-up for the provider tests: options pointing a provider at a FakeHttpServer with a
// fixed environment, fast retries and recorded (not slept) backoff waits.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/fake_http_server.h"
#include "tollgate/chat_model.h"

namespace tollgate::testing {

struct ProviderFixture {
  FakeHttpServer server;
  std::map<std::string, std::string> env;
  std::shared_ptr<std::vector<std::chrono::milliseconds>> sleeps =
      std::make_shared<std::vector<std::chrono::milliseconds>>();

  // Options with the given base-URL variable pointing at the fake server.
  ModelOptions options(const std::string& base_url_variable, const std::string& key_variable,
                       const std::string& key = "test-key") {
    env[base_url_variable] = server.base_url();
    if (!key_variable.empty()) env[key_variable] = key;
    ModelOptions o;
    auto environment = env;
    o.getenv = [environment](const std::string& name) -> std::optional<std::string> {
      auto it = environment.find(name);
      if (it == environment.end()) return std::nullopt;
      return it->second;
    };
    auto recorded = sleeps;
    o.sleep = [recorded](std::chrono::milliseconds wait) { recorded->push_back(wait); };
    o.timeout = std::chrono::milliseconds(5000);
    o.initial_backoff = std::chrono::milliseconds(100);
    return o;
  }
};

// Collects streamed chunks.
struct ChunkRecorder {
  std::vector<Json> chunks;
  TokenCallback callback = [this](const Json& chunk) { chunks.push_back(chunk); };

  std::string text() const {
    std::string out;
    for (const auto& c : chunks) {
      if (c["content"].is_string()) out += c["content"].get<std::string>();
    }
    return out;
  }
  // The tool-call argument fragments of `index`, concatenated as a client would.
  std::string tool_args(int index) const {
    std::string out;
    for (const auto& c : chunks) {
      for (const auto& t : c["tool_call_chunks"]) {
        if (t["index"] == index) out += t["args"].get<std::string>();
      }
    }
    return out;
  }
};

inline ChatRequest user_request(const std::string& text) {
  ChatRequest request;
  request.messages = Json::array({{{"type", "human"}, {"content", text}}});
  return request;
}

inline ToolSpec weather_tool() {
  return ToolSpec{"weather_search", "Look up the weather",
                  Json{{"type", "object"},
                       {"properties", {{"city", {{"type", "string"}}}}},
                       {"required", {"city"}},
                       {"additionalProperties", false}}};
}

// A conversation with a system prompt, a tool call, its result and a follow-up question.
inline ChatRequest tool_round_trip_request() {
  ChatRequest request;
  request.messages = Json::parse(R"([
    {"type":"system","content":"Be brief."},
    {"type":"human","content":"weather in Paris?"},
    {"type":"ai","content":"","tool_calls":[{"id":"call_1","name":"weather_search","args":{"city":"Paris"},"type":"tool_call"}]},
    {"type":"tool","tool_call_id":"call_1","name":"weather_search","content":"sunny, 21C"},
    {"type":"human","content":"and tomorrow?"}
  ])");
  request.tools = {weather_tool()};
  return request;
}

}  // namespace tollgate::testing
