// parse_webhook_options: the `webhooks` section of a config file into WebhookOptions.
#include <algorithm>
#include <iterator>

#include "server/config_fields.h"
#include "tollgate/error.h"
#include "tollgate/server.h"

namespace tollgate {
namespace {

using server::object_at;
using server::only_keys;
using server::string_at;
using server::strings_at;

std::string expected_events() {
  std::string out;
  for (const char* type : kWebhookEventTypes) out += (out.empty() ? "" : ", ") + std::string(type);
  return out;
}

double number_at(const Json& object, const char* key, const std::string& at, double fallback,
                 double low, double high) {
  if (!object.contains(key)) return fallback;
  if (!object[key].is_number() || object[key].get<double>() < low ||
      object[key].get<double>() > high) {
    throw Error::InvalidArgument(at + "." + key + ": must be a number from " +
                                 Json(low).dump() + " to " + Json(high).dump());
  }
  return object[key].get<double>();
}

WebhookOptions parse_webhook(const Json& value, const std::string& at) {
  const Json& hook = object_at(value, at);
  only_keys(hook, at,
            {"url", "secret_env", "events", "max_attempts", "first_retry_seconds", "jitter",
             "timeout_seconds"});
  WebhookOptions options;
  options.url = string_at(hook, "url", at);
  if (options.url.rfind("http://", 0) != 0 && options.url.rfind("https://", 0) != 0)
    throw Error::InvalidArgument(at + ".url: must be an http:// or https:// URL");
  options.secret_env = string_at(hook, "secret_env", at);
  if (options.secret_env.empty())
    throw Error::InvalidArgument(at + ".secret_env: required (the environment variable holding "
                                      "the signing secret)");
  options.events = strings_at(hook, "events", at);
  if (options.events.empty())
    throw Error::InvalidArgument(at + ".events: required: a list of " + expected_events());
  for (std::size_t i = 0; i < options.events.size(); ++i) {
    const std::string& type = options.events[i];
    if (std::find(std::begin(kWebhookEventTypes), std::end(kWebhookEventTypes), type) ==
        std::end(kWebhookEventTypes)) {
      throw Error::InvalidArgument(at + ".events[" + std::to_string(i) + "]: unknown event '" +
                                   type + "' (expected " + expected_events() + ")");
    }
  }
  options.max_attempts =
      static_cast<int>(number_at(hook, "max_attempts", at, options.max_attempts, 1, 100));
  if (hook.contains("max_attempts") && !hook["max_attempts"].is_number_integer())
    throw Error::InvalidArgument(at + ".max_attempts: must be an integer");
  options.first_retry_seconds =
      number_at(hook, "first_retry_seconds", at, options.first_retry_seconds, 0.001, 86400);
  options.jitter = number_at(hook, "jitter", at, options.jitter, 0, 1);
  options.timeout_seconds =
      number_at(hook, "timeout_seconds", at, options.timeout_seconds, 0.1, 300);
  return options;
}

}  // namespace

std::vector<WebhookOptions> parse_webhook_options(const Json& section) {
  if (!section.is_array()) throw Error::InvalidArgument("webhooks: must be a list");
  std::vector<WebhookOptions> out;
  for (std::size_t i = 0; i < section.size(); ++i)
    out.push_back(parse_webhook(section[i], "webhooks[" + std::to_string(i) + "]"));
  return out;
}

}  // namespace tollgate
