// RunRequest: a validated request to start a run, as the API parsed it and as the run's record
// keeps it (kwargs), so that a pending run survives a restart.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "server/identity.h"
#include "server/store.h"
#include "tollgate/json.h"

namespace tollgate::server {

struct RunRequest {
  std::string thread_id;
  std::string assistant_id;
  Json input;                                          // null: continue from the checkpoint
  std::optional<Json> command;                         // {"resume", "update", "goto"}
  std::vector<std::string> stream_modes = {"values"};  // wire names
  bool stream_subgraphs = false;
  bool stream_resumable = false;
  Json config = Json::object();
  Json context = Json::object();
  Json metadata = Json::object();
  std::string multitask_strategy = "reject";
  std::string checkpoint_id;
  std::vector<std::string> interrupt_before;
  std::vector<std::string> interrupt_after;
  double after_seconds = 0;
  bool temporary = false;  // a stateless run: its thread is deleted afterwards
  bool protocol_v2 = false;
  // Start-up recovery continues a run cut off mid-step (run_recovery.cpp): the same run record
  // run with no input (its command only tells which decision it applied), its step's finished
  // tasks kept, the rest run again; a call whose intent was stored pauses for review
  // (docs/effects.md). Not audited nor counted as a new attempt. Never stored in the kwargs.
  bool continues_cut_off_step = false;
  // Who asked for the work (for a resume: who started the run that paused) and who decided
  // the review this run resumes with (empty unless the run carries a resume command); see
  // set_actors(). Kept in the run's kwargs as {"id","name","roles","authenticated"} objects.
  Identity started_by;
  Identity decided_by;

  // Whether the run's command answers a pause ({"resume": ...}).
  bool resumes() const;
  // Records `requester` as the run's actor: started_by for a new piece of work; for a resume,
  // decided_by, with started_by `earlier_starter` (latest_run_starter), or `requester` when
  // that is empty.
  void set_actors(const Identity& requester, const Identity& earlier_starter);
  // Set by RunManager::submit for a run that carries a decision (a Command with resume): what
  // the decision answers, as it was when the request was accepted —
  //   {"checkpoint_id": the thread's latest checkpoint then, "shown": its pending interrupts
  //    (task id -> [{id, value}]), "decided": the resume as received}
  // The run is refused (409) when its thread is no longer at that checkpoint. Null otherwise.
  Json binding;

  Json to_kwargs() const;
  static RunRequest from_kwargs(const Json& kwargs, const std::string& thread_id,
                                const std::string& assistant_id);
};

// Who started the thread's latest run that names a starter; empty if none does.
Identity latest_run_starter(ServerStore& store, const std::string& thread_id);

}  // namespace tollgate::server
