#include "server/run_request.h"

namespace tollgate::server {
namespace {

std::vector<std::string> string_list(const Json& value) {
  std::vector<std::string> out;
  if (value.is_string()) out.push_back(value.get<std::string>());
  if (value.is_array()) {
    for (const Json& item : value) {
      if (item.is_string()) out.push_back(item.get<std::string>());
    }
  }
  return out;
}

}  // namespace

Json RunRequest::to_kwargs() const {
  Json kwargs{{"input", input},
              {"config", config},
              {"context", context},
              {"stream_mode", stream_modes},
              {"subgraphs", stream_subgraphs},
              {"resumable", stream_resumable},
              {"temporary", temporary},
              {"metadata", metadata},
              {"interrupt_before", interrupt_before},
              {"interrupt_after", interrupt_after},
              {"after_seconds", after_seconds},
              {"protocol_v2", protocol_v2}};
  if (command) kwargs["command"] = *command;
  if (!checkpoint_id.empty()) kwargs["checkpoint_id"] = checkpoint_id;
  return kwargs;
}

RunRequest RunRequest::from_kwargs(const Json& kwargs, const std::string& thread_id,
                                   const std::string& assistant_id) {
  RunRequest r;
  r.thread_id = thread_id;
  r.assistant_id = assistant_id;
  r.input = kwargs.value("input", Json());
  if (kwargs.contains("command") && !kwargs["command"].is_null()) r.command = kwargs["command"];
  r.stream_modes = string_list(kwargs.value("stream_mode", Json::array({"values"})));
  r.stream_subgraphs = kwargs.value("subgraphs", false);
  r.stream_resumable = kwargs.value("resumable", false);
  r.config = kwargs.value("config", Json::object());
  r.context = kwargs.value("context", Json::object());
  r.metadata = kwargs.value("metadata", Json::object());
  r.checkpoint_id = kwargs.value("checkpoint_id", std::string());
  r.interrupt_before = string_list(kwargs.value("interrupt_before", Json::array()));
  r.interrupt_after = string_list(kwargs.value("interrupt_after", Json::array()));
  r.temporary = kwargs.value("temporary", false);
  r.protocol_v2 = kwargs.value("protocol_v2", false);
  return r;
}

}  // namespace tollgate::server
