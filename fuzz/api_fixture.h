// An in-process Agent Server for the fuzz targets: the real routes, stores and run manager
// (a memory checkpointer, in-memory databases, a console folder), answering requests in the
// calling thread. Runs are accepted but never executed (no run worker starts), so an input's
// answer depends on the input and on what earlier inputs stored, never on timing.
#pragma once

#include <string>

#include "fuzz_input.h"
#include "server/http_types.h"

namespace tollgate::fuzz {

class ApiFixture {
 public:
  // The one fixture of the process, built on first use.
  static ApiFixture& get();

  // Dispatches `request` like the HTTP front end. A streamed answer is asked for its head
  // once and, when the head is ready, polled a few times; its bytes are appended to the body.
  server::HttpResponse handle(server::HttpRequest request) const;
  server::HttpResponse handle(const std::string& method, const std::string& path,
                              const std::string& body = "") const;

  // The thread the seeds of fuzz/corpus/http_request name (fuzz/seed_corpus.py writes every
  // thread id of the transcripts as this one), created with the fixture.
  static constexpr const char* kSeedThreadId = "00000000-0000-4000-8000-00000000f022";

  // A thread created for this input, and the ids every input may name.
  std::string new_thread() const;
  const std::string& graph_id() const { return graph_id_; }
  const std::string& run_thread_id() const { return run_thread_id_; }  // has a pending run
  const std::string& run_id() const { return run_id_; }

 private:
  ApiFixture();
  std::string graph_id_ = "agent";
  std::string run_thread_id_;
  std::string run_id_;
};

}  // namespace tollgate::fuzz
