// Serves every tests/scenarios/*.json as its own assistant (graph id = the scenario's name)
// through tollgate::Server, so tests/integration/scenarios.test.mjs can drive the same files as
// the library runner over HTTP with the official SDK client.
//
//   scenario_server RECORD_DIR [PORT]
//
// Prints "listening on http://127.0.0.1:<port>" once it serves, and stops when its standard
// input closes (so it never outlives the test runner). Each scenario's tool executions and
// model requests are appended, one JSON value a line, to RECORD_DIR/<name>.tools.jsonl and
// RECORD_DIR/<name>.model.jsonl for the runner to compare with the file's expectations.
// Scripted models answer in order, so every scenario runs once per server process.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>

#include "scenarios/scenario_agent.h"
#include "tollgate/memory_saver.h"
#include "tollgate/server.h"

namespace tollgate::scenarios {
namespace {

namespace fs = std::filesystem;

// Appends JSON lines to a file. Thread-safe (one mutex guards the file).
class JsonLines {
 public:
  explicit JsonLines(fs::path path) : path_(std::move(path)) { std::ofstream truncate(path_); }
  void append(const Json& value) {
    std::lock_guard lock(mutex_);
    std::ofstream out(path_, std::ios::app);
    out << value.dump() << '\n';
  }

 private:
  fs::path path_;
  std::mutex mutex_;
};

// Records every request's messages, then answers with the wrapped model.
class RecordingModel : public ChatModel {
 public:
  RecordingModel(std::shared_ptr<ChatModel> inner, std::shared_ptr<JsonLines> requests)
      : inner_(std::move(inner)), requests_(std::move(requests)) {}
  Json invoke(const ChatRequest& request, const TokenCallback* on_chunk) override {
    requests_->append(request.messages.to_json());
    return inner_->invoke(request, on_chunk);
  }
  std::string name() const override { return inner_->name(); }

 private:
  std::shared_ptr<ChatModel> inner_;
  std::shared_ptr<JsonLines> requests_;
};

void add_scenario(GraphRegistry& graphs, const fs::path& file, const fs::path& record_dir) {
  std::ifstream in(file);
  Json spec = Json::parse(in);
  const std::string name = spec.at("name").get<std::string>();
  auto tools = std::make_shared<JsonLines>(record_dir / (name + ".tools.jsonl"));
  auto requests = std::make_shared<JsonLines>(record_dir / (name + ".model.jsonl"));
  graphs.add(name, [spec, tools, requests](std::shared_ptr<Saver> saver) {
    auto log = std::make_shared<ExecutionLog>([tools](const Json& entry) { tools->append(entry); });
    auto model = std::make_shared<RecordingModel>(scripted_model(spec), requests);
    return std::shared_ptr<const CompiledGraph>(
        build_scenario_agent(spec, std::move(model), std::move(saver), std::move(log)));
  });
}

int serve(const fs::path& record_dir, int port) {
  fs::create_directories(record_dir);
  GraphRegistry graphs;
  for (const auto& entry : fs::directory_iterator(TOLLGATE_SCENARIO_DIR)) {
    if (entry.path().extension() == ".json") add_scenario(graphs, entry.path(), record_dir);
  }
  ServerOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.db_path = ":memory:";
  options.checkpointer = make_memory_saver();
  options.heartbeat_seconds = 0;
  Server server(options, std::move(graphs));
  server.start();
  std::cout << "listening on http://127.0.0.1:" << server.port() << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  server.stop();
  return 0;
}

}  // namespace
}  // namespace tollgate::scenarios

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: scenario_server RECORD_DIR [PORT]\n";
    return 2;
  }
  try {
    return tollgate::scenarios::serve(argv[1], argc == 3 ? std::stoi(argv[2]) : 0);
  } catch (const std::exception& e) {
    std::cerr << "scenario_server: " << e.what() << '\n';
    return 1;
  }
}
