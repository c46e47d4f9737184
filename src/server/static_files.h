// Serves the built review console (web/dist) for GET requests no API route answers.
#pragma once

#include <string>

#include "server/http_types.h"

namespace tollgate::server {

// A handler serving files under `folder`: "/" and unknown page paths get index.html (the
// console is a single-page app), "/assets/x.js" the file itself with its content type. Paths
// leaving the folder, paths over 1024 bytes or with a name over 255, control bytes or "."/".."
// steps are refused (404) before the file system sees them; a link loop is not a file. No
// client path makes the handler throw. Throws Error(kInvalidArgument) at once if `folder`
// cannot be resolved. Without an index.html, "/" answers with a short page
// saying how to build the console, so the API keeps working either way.
Handler make_console_handler(std::string folder);

}  // namespace tollgate::server
