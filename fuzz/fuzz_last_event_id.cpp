// The SSE reconnect path: a Last-Event-ID header of any bytes, on both join routes of a run.
#include <cstdint>

#include "api_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& fixture = tollgate::fuzz::ApiFixture::get();
  for (const std::string& path :
       {"/threads/" + fixture.run_thread_id() + "/runs/" + fixture.run_id() + "/stream",
        "/runs/" + fixture.run_id() + "/stream"}) {
    tollgate::server::HttpRequest request;
    request.method = "GET";
    request.path = path;
    request.headers["last-event-id"] = tollgate::fuzz::as_string(data, size);
    (void)fixture.handle(std::move(request));
  }
  return 0;
}
