// Each subcommand of the `tollgate` executable lives in its own file and registers itself
// on the application here. To add one: write <name>_command.cpp defining
// add_<name>_command, declare it below, and call it from main.cpp.
#pragma once

#include <CLI/CLI.hpp>

namespace tollgate::cli {

// `tollgate serve`: the Agent Server.
void add_serve_command(CLI::App& app);

// `tollgate chat`: a terminal conversation with the demo tools under a review policy.
void add_chat_command(CLI::App& app);

// `tollgate audit`: the review audit log a server keeps in its database.
void add_audit_command(CLI::App& app);

// `tollgate prune`: a retention pass over a server database.
void add_prune_command(CLI::App& app);

}  // namespace tollgate::cli
