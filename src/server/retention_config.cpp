// parse_retention_options: the `retention` section of a config file into RetentionOptions.
#include <cctype>
#include <string>

#include "tollgate/error.h"
#include "tollgate/server.h"

namespace tollgate {

std::chrono::milliseconds parse_duration(const std::string& text, const std::string& field) {
  const auto bad = [&] {
    return Error::InvalidArgument(field + ": invalid duration \"" + text +
                                  "\"; expected a positive number with s, m, h or d (e.g. 7d)");
  };
  if (text.size() < 2 || !std::isdigit(static_cast<unsigned char>(text[0]))) throw bad();
  std::size_t used = 0;
  long long amount = 0;
  try {
    amount = std::stoll(text.substr(0, text.size() - 1), &used);
  } catch (const std::exception&) {
    throw bad();
  }
  if (used != text.size() - 1 || amount <= 0 || amount > 100LL * 365 * 24 * 3600) throw bad();
  switch (text.back()) {
    case 's': return std::chrono::seconds(amount);
    case 'm': return std::chrono::minutes(amount);
    case 'h': return std::chrono::hours(amount);
    case 'd': return std::chrono::hours(24 * amount);
    default: throw bad();
  }
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
    if (key != "events" && key != "thread_ttl" && key != "interval") {
      throw Error::InvalidArgument("retention: unknown key '" + key +
                                   "' (expected events, checkpoints, thread_ttl, interval)");
    }
    if (!value.is_string()) throw Error::InvalidArgument(field + ": must be a duration string");
    const std::chrono::milliseconds duration = parse_duration(value.get<std::string>(), field);
    if (key == "events") options.events = duration;
    if (key == "thread_ttl") options.thread_ttl = duration;
    if (key == "interval") options.interval = duration;
  }
  return options;
}

}  // namespace tollgate
