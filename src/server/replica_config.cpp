// parse_replica_options: the `replicas` section of a config file into ReplicaOptions.
#include <string>

#include "tollgate/error.h"
#include "tollgate/server.h"

namespace tollgate {

namespace {

// A duration as parse_duration reads it, or a whole number of milliseconds ("250ms"): replicas
// on one machine (tests) beat faster than once a second.
std::chrono::milliseconds replica_duration(const Json& value, const std::string& field) {
  if (!value.is_string()) throw Error::InvalidArgument(field + ": must be a duration string");
  const std::string text = value.get<std::string>();
  if (text.size() > 2 && text.size() <= 9 && text.compare(text.size() - 2, 2, "ms") == 0) {
    const std::string digits = text.substr(0, text.size() - 2);
    if (digits.find_first_not_of("0123456789") == std::string::npos && digits[0] != '0') {
      return std::chrono::milliseconds(std::stoll(digits));
    }
    throw Error::InvalidArgument(field + ": invalid duration \"" + text +
                                 "\"; expected a positive number with ms, s, m, h or d");
  }
  return parse_duration(text, field);
}

}  // namespace

ReplicaOptions parse_replica_options(const Json& section) {
  if (!section.is_object()) throw Error::InvalidArgument("replicas: must be an object");
  ReplicaOptions options;
  for (const auto& [key, value] : section.items()) {
    const std::string field = "replicas." + key;
    if (key == "id") {
      if (!value.is_string() || value.get<std::string>().empty() ||
          value.get<std::string>().size() > 200) {
        throw Error::InvalidArgument(field + ": must be a non-empty string of at most 200 characters");
      }
      options.id = value.get<std::string>();
    } else if (key == "heartbeat") {
      options.heartbeat = replica_duration(value, field);
    } else if (key == "timeout") {
      options.timeout = replica_duration(value, field);
    } else if (key == "poll") {
      options.poll = replica_duration(value, field);
    } else {
      throw Error::InvalidArgument("replicas: unknown key '" + key +
                                   "' (expected id, heartbeat, timeout, poll)");
    }
  }
  if (options.timeout <= options.heartbeat * 2) {
    throw Error::InvalidArgument(
        "replicas.timeout: must be more than twice replicas.heartbeat, or a replica that is "
        "merely slow to beat would be taken for dead");
  }
  return options;
}

}  // namespace tollgate
