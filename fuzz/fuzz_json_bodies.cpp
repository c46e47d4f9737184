// JSON bodies of every endpoint that takes one. An input is "METHOD /path" on its first line,
// then the body; {thread} and {run} in the path name a thread of this input and the fixture's
// run. A first line naming no known endpoint picks one by its bytes, so every input is a body
// for some endpoint.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api_fixture.h"

namespace {

const std::vector<std::string> kEndpoints = {
    "POST /assistants",
    "POST /assistants/search",
    "POST /assistants/count",
    "PATCH /assistants/{assistant}",
    "POST /threads",
    "POST /threads/search",
    "POST /threads/count",
    "PATCH /threads/{thread}",
    "POST /threads/{thread}/copy",
    "POST /threads/{thread}/state",
    "POST /threads/{thread}/state/checkpoint",
    "POST /threads/{thread}/history",
    "POST /threads/{thread}/runs",
    "POST /threads/{thread}/runs/stream",
    "POST /threads/{thread}/runs/wait",
    "POST /threads/{run_thread}/runs/{run}/cancel",
    "POST /runs",
    "POST /runs/stream",
    "POST /runs/wait",
    "POST /runs/batch",
    "POST /runs/cancel",
    "POST /threads/{thread}/commands",
    "POST /threads/{thread}/stream/events",
};

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& fixture = tollgate::fuzz::ApiFixture::get();
  const std::string input = tollgate::fuzz::as_string(data, size);
  const std::size_t newline = input.find('\n');
  const std::string first = input.substr(0, newline);
  std::string endpoint;
  for (const std::string& known : kEndpoints) {
    if (first == known) endpoint = known;
  }
  if (endpoint.empty()) {
    std::size_t hash = 0;
    for (unsigned char c : first) hash = hash * 31 + c;
    endpoint = kEndpoints[hash % kEndpoints.size()];
  }
  const std::string body = newline == std::string::npos ? input : input.substr(newline + 1);
  const std::size_t space = endpoint.find(' ');
  std::string path = endpoint.substr(space + 1);
  if (path.find("{thread}") != std::string::npos) replace_all(path, "{thread}", fixture.new_thread());
  replace_all(path, "{run_thread}", fixture.run_thread_id());
  replace_all(path, "{run}", fixture.run_id());
  replace_all(path, "{assistant}", fixture.graph_id());
  (void)fixture.handle(endpoint.substr(0, space), path, body);
  return 0;
}
