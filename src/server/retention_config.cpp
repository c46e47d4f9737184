// parse_retention_options: the `retention` section of a config file into RetentionOptions.
#include <string>

#include "core/duration.h"
#include "tollgate/error.h"
#include "tollgate/server.h"

namespace tollgate {

std::chrono::milliseconds parse_duration(const std::string& text, const std::string& field) {
  const auto bad = [&] {
    return Error::InvalidArgument(field + ": invalid duration \"" + text +
                                  "\"; expected a positive number with s, m, h or d (e.g. 7d)");
  };
  const auto duration = core::parse_duration(text);
  if (!duration) throw bad();
  return *duration;
}

RetentionOptions parse_retention_options(const Json& section) {
  if (!section.is_object()) throw Error::InvalidArgument("retention: must be an object");
  RetentionOptions options;
  for (const auto& [key, value] : section.items()) {
    const std::string field = "retention." + key;
    if (key == "checkpoints") {
      if (value != "all" && value != "latest")
        throw Error::InvalidArgument(field + ": expected \"all\" or \"latest\"");
      options.latest_checkpoint_only = value == "latest";
      continue;
    }
    if (key != "events" && key != "thread_ttl" && key != "webhooks" && key != "interval") {
      throw Error::InvalidArgument(
          "retention: unknown key '" + key +
          "' (expected events, checkpoints, thread_ttl, webhooks, interval)");
    }
    if (!value.is_string()) throw Error::InvalidArgument(field + ": must be a duration string");
    const std::chrono::milliseconds duration = parse_duration(value.get<std::string>(), field);
    if (key == "events") options.events = duration;
    if (key == "thread_ttl") options.thread_ttl = duration;
    if (key == "webhooks") options.webhooks = duration;
    if (key == "interval") options.interval = duration;
  }
  return options;
}

}  // namespace tollgate
