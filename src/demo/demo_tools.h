// The demo: tools with real, inspectable effects and the demo review policy. Part of the
// `tollgate` executable and the examples, not of the library (src/demo/, linked as
// tollgate_demo). Nothing leaves the machine:
//   weather_search{city}                 a deterministic fake forecast
//   send_email{to,subject,body}          appends a row to the `outbox` table of <root>/outbox.db
//   read_file{path} / write_file{path,content} / delete_file{path}
//                                        confined to <root>/sandbox (absolute paths outside it,
//                                        `..` and symlinks leading out are refused)
//   execute_sql{query}                   runs on <root>/demo.db (tables users, orders); a query
//                                        is_sql_write() calls a read runs on a read-only
//                                        connection, so a misjudged write fails instead of
//                                        slipping past the review policy
//   ask_user{question}                   a question for the person; answered with `respond`
//   book_flight{to,from?}                a booking form for the person (book_flight.h); books
//                                        nothing unless approved
// weather_search and read_file only read, so they are idempotent (docs/effects.md); send_email
// and execute_sql writes keep the call's idempotency key UNIQUE (outbox.idempotency_key,
// demo_effects), so the same call twice stores one row and answers the first result.
//
//   DemoEnvironment env("/tmp/demo");             // creates sandbox/notes.txt, demo.db, outbox.db
//   auto agent = create_agent({.model = make_demo_model(), .tools = env.tools(),
//                              .middleware = {make_human_in_the_loop(demo_policy())}, ...});
//
// Thread-safety: a DemoEnvironment is immutable after construction; its tools open their own
// SQLite connection per call and may run concurrently (SQLite serialises the writers).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tollgate/deep_agent.h"
#include "tollgate/human_in_the_loop.h"
#include "tollgate/tool.h"

namespace tollgate {

class DemoEnvironment {
 public:
  // Creates `root` and everything under it that is missing; existing files are kept (a second
  // process sees the first one's outbox and files). Throws Error(kUnavailable) when the
  // folder or a database cannot be created.
  explicit DemoEnvironment(std::filesystem::path root);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path sandbox() const { return root_ / "sandbox"; }
  std::filesystem::path database() const { return root_ / "demo.db"; }
  std::filesystem::path outbox() const { return root_ / "outbox.db"; }

  // The eight demo tools, each with a JSON Schema of its arguments.
  std::vector<Tool> tools() const;

 private:
  std::filesystem::path root_;  // absolute, canonical
};

// Maps a path a tool received to a file inside `sandbox` (a canonical folder), as
// sandbox_relative_path (when_rules.h) sees it. Relative paths are taken from the sandbox;
// absolute ones must already lie inside it. Throws Error(kInvalidArgument) for an empty path,
// any `..` component, or a path that leaves the sandbox — also through a symlink.
std::filesystem::path resolve_in_sandbox(const std::filesystem::path& sandbox,
                                         const std::string& path);

// The demo review policy: send_email (approve/edit/reject/respond), write_file and delete_file
// (approve/edit/reject), execute_sql only when is_sql_write (approve/edit/reject), ask_user
// (respond). Reads and the weather run freely. Written in the `when` grammar of config files.
HumanInTheLoopOptions demo_policy();

// The demo deep agent (the `deep` assistant of tollgate serve): create_deep_agent's tools over
// the same sandbox folder (a confined directory backend: "/notes.txt" is sandbox/notes.txt),
// write_file, edit_file and delete reviewed, reads below /secrets/ reviewed through a
// FilesystemPermission "interrupt" rule, and the general-purpose subagent, whose calls are
// reviewed by the same rules and pause the parent run. No checkpointer.
DeepAgentOptions demo_deep_agent(const DemoEnvironment& env, std::shared_ptr<ChatModel> model);

}  // namespace tollgate
