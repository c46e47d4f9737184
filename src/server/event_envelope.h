// The envelope of a v2 thread stream event (§8.3 of the wire protocol) around its data:
//
//   {"event_id":<id>,"method":<method>,"params":{"data":<data>,"namespace":[...],
//    ["node":<node>,]"timestamp":<ms>},"seq":<seq>,"type":"event"}
//
// with the members in the order Json::dump writes them (sorted), so that it reads as it did
// when the envelope was a Json object. Its head (up to the data) and its tail (from "seq") follow
// from the event's id, method and seq, which the store keeps in fields of their own; the store
// keeps the rest (event_batch.h) and writes them back around it when the event is read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tollgate::server {

// Appends `{"event_id":<id>,"method":<method>,"params":{"data":`.
void append_envelope_head(std::string& out, std::string_view event_id, std::string_view method);

// Appends `,"seq":<seq>,"type":"event"}`.
void append_envelope_tail(std::string& out, std::int64_t seq);

}  // namespace tollgate::server
