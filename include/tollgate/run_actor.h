// RunActor: who a run acts for, as whoever started the run established it — the server from
// the request's credential (an API key's user, a JWT's subject), an embedding program however
// it likes. Plain strings, so graphs, middleware and tools can read it without knowing where
// identities come from. An empty id means nobody was named (a run started in-process).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace tollgate {

struct RunActor {
  std::string id;                  // "alice"; "local" on a server without authentication
  std::string name;                // for display; may be empty
  std::vector<std::string> roles;  // e.g. "user", "reviewer", "admin"

  bool empty() const { return id.empty(); }
  bool has_role(std::string_view role) const {
    return std::find(roles.begin(), roles.end(), role) != roles.end();
  }
};

// An empty actor, for readers that have no run at hand.
inline const RunActor& no_actor() {
  static const RunActor none;
  return none;
}

}  // namespace tollgate
