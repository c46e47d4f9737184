// The offline demo model: deterministic, no network. Understands a few requests well enough to
// call the demo tools (weather_search, send_email, read_file, write_file, delete_file,
// execute_sql) when they are offered — and a deep agent's (ls, read_file/write_file/delete with
// an absolute file_path, task for "ask the <name> agent to ...") — summarises tool results, and
// otherwise says what it is.
// Part of the demo (tollgate_demo), not of the library:
//
//   auto model = init_chat_model(spec, with_demo_model());   // "demo" (or "") -> the demo model
//
// Thread-safety: the model is immutable; invoke() may run concurrently. Its patterns run on RE2,
// so a message of any length is read in linear time.
#pragma once

#include <memory>

#include "tollgate/chat_model.h"

namespace tollgate {

std::unique_ptr<ChatModel> make_demo_model();

// `options` with the "demo" provider added, for init_chat_model and AgentConfigOptions.
ModelOptions with_demo_model(ModelOptions options = {});

}  // namespace tollgate
