// The server's log: one line per event on standard error, through spdlog. The library below
// the server never logs; it throws and lets the server decide what to say.
#pragma once

#include <string_view>

namespace tollgate::server {

void log_info(std::string_view message);
void log_warning(std::string_view message);
void log_error(std::string_view message);

}  // namespace tollgate::server
