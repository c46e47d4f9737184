#include "models/providers.h"
#include "tollgate/error.h"

namespace tollgate::models {

SamplingOptions sampling_options(const ModelOptions& defaults, const Json& request_options) {
  SamplingOptions out;
  out.temperature = defaults.temperature;
  if (defaults.max_tokens) out.max_tokens = *defaults.max_tokens;
  if (request_options.is_null()) return out;
  if (!request_options.is_object()) throw Error::InvalidArgument("options must be an object");
  if (auto t = request_options.find("temperature"); t != request_options.end() && !t->is_null()) {
    if (!t->is_number()) throw Error::InvalidArgument("options.temperature must be a number");
    out.temperature = t->get<double>();
  }
  if (auto m = request_options.find("max_tokens"); m != request_options.end() && !m->is_null()) {
    if (!m->is_number_integer() || m->get<long>() <= 0) {
      throw Error::InvalidArgument("options.max_tokens must be a positive integer");
    }
    out.max_tokens = m->get<long>();
  }
  if (auto s = request_options.find("stop"); s != request_options.end() && !s->is_null()) {
    bool ok = s->is_array();
    if (ok) {
      for (const auto& item : *s) ok = ok && item.is_string();
    }
    if (!ok) throw Error::InvalidArgument("options.stop must be an array of strings");
    out.stop = *s;
  }
  return out;
}

std::string tool_call_id_of(const Json& message, size_t index) {
  const Json id = message.value("tool_call_id", Json());
  if (!id.is_string() || id.get_ref<const std::string&>().empty()) {
    throw Error::InvalidArgument("messages[" + std::to_string(index) +
                                 "].tool_call_id is required for a tool message");
  }
  return id.get<std::string>();
}

}  // namespace tollgate::models
