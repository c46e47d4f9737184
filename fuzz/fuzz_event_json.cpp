// The event writer against nlohmann's serializer: every stored and streamed event, HTTP answer
// and thread's values is written by event_json, which must give the bytes
// Json::dump(-1, ' ', false, replace) gives. The input is read as JSON when it parses, and as
// a string of raw bytes (any UTF-8, malformed or not) always.
#include <cstdint>
#include <cstdlib>

#include "fuzz_input.h"
#include "server/wire_format.h"
#include "tollgate/json_parse.h"

namespace {

using tollgate::Json;

void same_bytes(const Json& value) {
  const std::string ours = tollgate::server::event_json(value);
  if (ours != value.dump(-1, ' ', false, Json::error_handler_t::replace)) std::abort();
  // Appended after other text, as envelopes and batches write it.
  if (value.is_string()) {
    std::string after = "prefix";
    tollgate::server::append_json_string(after, value.get_ref<const std::string&>());
    if (after != "prefix" + ours) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = tollgate::fuzz::as_string(data, size);
  same_bytes(Json(bytes));
  const Json parsed = tollgate::try_parse_json(bytes);
  if (!parsed.is_discarded()) same_bytes(parsed);
  return 0;
}
