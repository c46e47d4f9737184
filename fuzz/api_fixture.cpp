#include "api_fixture.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "server/api_service.h"
#include "tollgate/memory_saver.h"
#include "tollgate/server.h"

namespace tollgate::fuzz {
namespace {

// The HITL shape in small: a model turn, a review node that pauses, a tool node.
GraphRegistry fixture_graphs() {
  GraphRegistry registry;
  registry.add("agent", [](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
    StateSchema schema;
    schema.add_messages("messages");
    StateGraph g(schema);
    g.add_node("model", [](const State&, Runtime&) -> NodeResult {
      return Json{{"messages", {{{"type", "ai"}, {"id", "ai-1"}, {"content", "Approve?"}}}}};
    });
    g.add_node("review", [](const State&, Runtime& rt) -> NodeResult {
      return Json{{"decision", rt.interrupt(Json{{"question", "Approve?"}})}};
    });
    g.add_edge(START, "model").add_edge("model", "review").add_edge("review", END);
    CompileOptions options;
    options.checkpointer = std::move(saver);
    options.name = "agent";
    return g.compile(options);
  });
  return registry;
}

std::string console_folder() {
  namespace fs = std::filesystem;
  const fs::path folder = fs::temp_directory_path() / ("tollgate-fuzz-console-" + std::to_string(::getpid()));
  fs::create_directories(folder / "assets");
  std::ofstream(folder / "index.html") << "<!doctype html><title>console</title>";
  std::ofstream(folder / "assets" / "app.js") << "console.log(1)";
  std::error_code ignored;
  fs::create_symlink(folder / "loop.js", folder / "loop.js", ignored);
  // libFuzzer ends the process with exit(): the folder goes with it, not with the service.
  static const std::string path = folder.string();
  std::atexit([] {
    std::error_code error;
    std::filesystem::remove_all(path, error);
  });
  return path;
}

server::ApiService& service() {
  static server::ApiService* instance = [] {
    ServerOptions options;
    options.db_path = ":memory:";
    options.checkpointer = make_memory_saver();
    options.run_workers = 1;  // start_runs() is never called: runs stay pending
    options.console_dir = console_folder();
    // Lives until the process ends; libFuzzer exits without unwinding.
    return new server::ApiService(options, fixture_graphs());
  }();
  return *instance;
}

std::string id_in(const server::HttpResponse& response, const char* key) {
  Json body = Json::parse(response.body, nullptr, false);
  if (!body.is_object() || !body.contains(key) || !body[key].is_string()) std::abort();
  return body[key].get<std::string>();
}

}  // namespace

ApiFixture& ApiFixture::get() {
  static ApiFixture fixture;
  return fixture;
}

ApiFixture::ApiFixture() {
  (void)id_in(handle("POST", "/threads", std::string(R"({"thread_id":")") + kSeedThreadId + R"("})"),
              "thread_id");
  run_thread_id_ = new_thread();
  run_id_ = id_in(handle("POST", "/threads/" + run_thread_id_ + "/runs",
                         R"({"assistant_id":"agent","input":{"messages":[{"role":"user","content":"hi"}]}})"),
                  "run_id");
}

std::string ApiFixture::new_thread() const {
  return id_in(handle("POST", "/threads", "{}"), "thread_id");
}

server::HttpResponse ApiFixture::handle(server::HttpRequest request) const {
  server::HttpResponse response = service().router().dispatch(request);
  if (!response.stream) return response;
  std::shared_ptr<server::StreamBody> body = response.stream;
  body->set_waker([] {});
  if (!body->head_ready(response) || !response.stream) return response;
  for (int i = 0; i < 4; ++i) {
    if (body->poll(response.body) == server::StreamBody::Poll::kDone) break;
  }
  return response;
}

server::HttpResponse ApiFixture::handle(const std::string& method, const std::string& path,
                                        const std::string& body) const {
  server::HttpRequest request;
  request.method = method;
  request.path = path;
  request.body = body;
  request.headers["content-type"] = "application/json";
  return handle(std::move(request));
}

}  // namespace tollgate::fuzz
