#include "server/ids.h"

#include "core/ids.h"
#include "tollgate/iso_time.h"

namespace tollgate::server {

std::string new_uuid7(const Clock& clock) {
  return core::uuid7(clock);
}

std::string uuid5(std::string_view namespace_uuid, std::string_view name) {
  return core::uuid5(namespace_uuid, name);
}

std::string system_assistant_id(std::string_view graph_id) {
  // The DNS namespace of RFC 4122 with 0x21 in place of 0x10: what the reference uses.
  return uuid5("6ba7b821-9dad-11d1-80b4-00c04fd430c8", graph_id);
}

bool is_uuid(std::string_view text) {
  return core::is_uuid(text);
}

std::string iso_timestamp(std::int64_t millis) {
  return iso_utc_millis(millis);
}

}  // namespace tollgate::server
