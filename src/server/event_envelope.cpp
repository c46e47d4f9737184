#include "server/event_envelope.h"

#include <array>
#include <charconv>

#include "server/wire_format.h"

namespace tollgate::server {

void append_envelope_head(std::string& out, std::string_view event_id, std::string_view method) {
  out += "{\"event_id\":";
  append_json_string(out, event_id);
  out += ",\"method\":";
  append_json_string(out, method);
  out += ",\"params\":{\"data\":";
}

void append_envelope_tail(std::string& out, std::int64_t seq) {
  std::array<char, 24> digits{};
  const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), seq);
  out += ",\"seq\":";
  out.append(digits.data(), static_cast<std::size_t>(result.ptr - digits.data()));
  out += ",\"type\":\"event\"}";
}

}  // namespace tollgate::server
