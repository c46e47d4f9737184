// RunRequest: a validated request to start a run, as the API parsed it and as the run's record
// keeps it (kwargs), so that a pending run survives a restart.
#pragma once

#include <optional>
#include <string>
#include <vector>

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

  Json to_kwargs() const;
  static RunRequest from_kwargs(const Json& kwargs, const std::string& thread_id,
                                const std::string& assistant_id);
};

}  // namespace tollgate::server
