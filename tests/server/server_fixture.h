// The Agent Server over real HTTP on 127.0.0.1, serving small graphs built here: the fixture
// the server suites share.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/http_test_client.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"
#include "tollgate/server.h"

namespace tollgate::server::testing {

// A node that waits until the test opens the gate (or the run is cancelled).
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<int> entered{0};
};

inline CompileOptions compile_options(std::shared_ptr<Saver> saver, std::string name) {
  CompileOptions options;
  options.checkpointer = std::move(saver);
  options.name = std::move(name);
  return options;
}

inline GraphRegistry test_graphs(std::shared_ptr<Gate> gate) {
  GraphRegistry registry;
  registry.add("hitl", [](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
    StateSchema schema;
    schema.add_messages("messages");
    StateGraph g(schema);
    g.add_node("agent", [](const State&, Runtime&) -> NodeResult {
      return Json{{"messages", {{{"type", "ai"}, {"id", "ai-1"}, {"content", "Approve?"}}}}};
    });
    g.add_node("review", [](const State&, Runtime& rt) -> NodeResult {
      Json answer = rt.interrupt(Json{{"question", "Approve tool call delete_file?"}});
      return Json{{"decision", answer}};
    });
    g.add_node("tool", [](const State& s, Runtime&) -> NodeResult {
      return Json{{"messages",
                   {{{"type", "tool"},
                     {"id", "tool-1"},
                     {"tool_call_id", "call_1"},
                     {"content", "decision=" + s["decision"].dump()}}}}};
    });
    g.add_edge(START, "agent").add_edge("agent", "review").add_edge("review", "tool");
    g.add_edge("tool", END);
    return g.compile(compile_options(saver, "hitl"));
  });
  registry.add("actors", [](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
    StateGraph g;
    g.add_node("ask", [](const State&, Runtime& rt) -> NodeResult {
      return Json{{"answer", rt.interrupt("Proceed?")}};
    });
    g.add_node("act", [](const State&, Runtime& rt) -> NodeResult {
      return Json{{"started_by", rt.started_by().id}, {"decided_by", rt.decided_by().id}};
    });
    g.add_edge(START, "ask").add_edge("ask", "act").add_edge("act", END);
    return g.compile(compile_options(saver, "actors"));
  });
  registry.add("gated",
               [gate](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
                 StateGraph g;
                 g.add_node("wait", [gate](const State&, Runtime& rt) -> NodeResult {
                   gate->entered++;
                   while (!gate->open && !rt.cancelled())
                     std::this_thread::sleep_for(std::chrono::milliseconds(5));
                   return Json{{"done", true}};
                 });
                 g.add_edge(START, "wait").add_edge("wait", END);
                 return g.compile(compile_options(saver, "gated"));
               });
  // Two reviews paused in one step; the second refuses the answer "bad".
  registry.add("pair", [](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
    StateGraph g;
    g.add_node("first", [](const State&, Runtime& rt) -> NodeResult {
      return Json{{"first", rt.interrupt(Json{{"question", "first?"}})}};
    });
    g.add_node("second", [](const State&, Runtime& rt) -> NodeResult {
      Json answer = rt.interrupt(Json{{"question", "second?"}});
      if (answer == "bad") throw Error::InvalidArgument("second: the answer is refused");
      return Json{{"second", answer}};
    });
    g.add_edge(START, "first").add_edge(START, "second");
    g.add_edge("first", END).add_edge("second", END);
    return g.compile(compile_options(saver, "pair"));
  });
  // Two model stand-ins, one after the other, streaming their replies as a chat model does:
  // one chunk, changed in place between tokens, handed over by reference.
  registry.add("tokens", [](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
    StateSchema schema;
    schema.add_messages("messages");
    StateGraph g(schema);
    const auto model = [](std::string id) {
      return [id](const State&, Runtime& rt) -> NodeResult {
        Json chunk{{"type", "AIMessageChunk"}, {"id", id}, {"content", ""}};
        for (const char* token : {"Hello ", "there"}) {
          chunk["content"] = token;
          rt.emit_message_ref(chunk);
        }
        return Json{{"messages", {{{"type", "ai"}, {"id", id}, {"content", "Hello there"}}}}};
      };
    };
    g.add_node("model", model("ai-1")).add_node("again", model("ai-2"));
    g.add_edge(START, "model").add_edge("model", "again").add_edge("again", END);
    return g.compile(compile_options(saver, "tokens"));
  });
  return registry;
}

class ServerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::filesystem::temp_directory_path() /
          ("tollgate_server_api_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove_db();
    saver_ = make_memory_saver();
    start();
  }
  void TearDown() override {
    gate_->open = true;
    server_.reset();
    remove_db();
  }
  void start() {
    ServerOptions options;
    options.port = 0;
    options.db_path = db_.string();
    options.checkpointer = saver_;
    options.max_body_bytes = 64 * 1024;
    options.heartbeat_seconds = 0;
    options.console_dir = console_dir_;
    options.clock = clock_;
    server_ = std::make_unique<Server>(options, test_graphs(gate_));
    server_->start();
  }
  void restart() {
    server_.reset();
    start();
  }
  void remove_db() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_.string() + suffix);
  }

  ClientResponse call(const std::string& method, const std::string& target,
                      const Json& body = Json(),
                      const std::map<std::string, std::string>& headers = {}) {
    return http_call(server_->port(), method, target, body.is_null() ? "" : body.dump(), headers);
  }
  std::string new_thread() {
    auto response = call("POST", "/threads", Json::object());
    EXPECT_EQ(response.status, 200) << response.body;
    return response.json()["thread_id"].get<std::string>();
  }
  std::vector<SseEvent> stream(const std::string& thread_id, const Json& body) {
    auto response = call("POST", "/threads/" + thread_id + "/runs/stream", body);
    EXPECT_EQ(response.status, 200) << response.body;
    return parse_sse(response.body);
  }
  std::vector<SseEvent> run_to_interrupt(const std::string& thread_id) {
    return stream(thread_id,
                  {{"assistant_id", "hitl"},
                   {"input", {{"messages", {{{"role", "user"}, {"content", "delete /tmp/x"}}}}}},
                   {"stream_mode", {"values", "updates"}}});
  }
  void wait_for_status(const std::string& thread_id, const std::string& status) {
    for (int i = 0; i < 500; ++i) {
      if (call("GET", "/threads/" + thread_id).json()["status"] == status) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "thread never became " << status;
  }

  std::filesystem::path db_;
  std::string console_dir_;
  const Clock* clock_ = nullptr;  // the server's (ServerOptions::clock); must outlive server_
  std::shared_ptr<Saver> saver_;
  std::shared_ptr<Gate> gate_ = std::make_shared<Gate>();
  std::unique_ptr<Server> server_;
};

}  // namespace tollgate::server::testing
