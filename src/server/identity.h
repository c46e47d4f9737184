// Who is asking: the identity a request carries from the HTTP layer down to the run. It comes
// from a credential (an API key or a JWT) checked by the server, never from a request body.
// Without authentication configured the server serves one local user, "local", who may do
// everything; the timers of the server act as "system:<what>" (e.g. "system:timeout").
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "tollgate/run_actor.h"

namespace tollgate::server {

struct Identity {
  std::string id;                  // "alice"; "local" without auth; "system:timeout"
  std::string name;                // for display; may be empty
  std::vector<std::string> roles;  // "user", "reviewer", "admin"
  bool authenticated = false;      // false for the local user of a server without auth

  static Identity local() { return {"local", "", {"admin"}, false}; }
  static Identity system(std::string_view what) {
    return {"system:" + std::string(what), "", {"admin"}, true};
  }

  bool has_role(std::string_view role) const {
    return std::find(roles.begin(), roles.end(), role) != roles.end();
  }
  bool is_admin() const { return has_role("admin"); }
  bool empty() const { return id.empty(); }
  // What a run may tell its graph and tools of this identity.
  RunActor actor() const { return RunActor{id, name, roles}; }
};

}  // namespace tollgate::server
