#include "server/audit_export.h"

#include "tollgate/error.h"

namespace tollgate::server {
namespace {

constexpr const char* kCsvColumns[] = {
    "audit_id",     "kind",     "refers_to",     "received_at", "thread_id", "run_id",
    "assistant_id", "graph_id", "reviewer",      "checkpoint_id", "shown",   "decided",
    "outcome",      "message",  "settled_at",    "prev_hash",   "hash"};

std::string csv_field(const Json& value) {
  std::string text = value.is_null() ? "" : value.is_string() ? value.get<std::string>() : value.dump();
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

std::string audit_to_jsonl(const std::vector<AuditEntry>& entries) {
  std::string out;
  for (const AuditEntry& e : entries) out += e.to_json().dump() + "\n";
  return out;
}

std::string audit_to_csv(const std::vector<AuditEntry>& entries) {
  std::string out;
  for (const char* column : kCsvColumns) out += std::string(out.empty() ? "" : ",") + column;
  out += "\r\n";
  for (const AuditEntry& e : entries) {
    const Json j = e.to_json();
    bool first = true;
    for (const char* column : kCsvColumns) {
      out += (first ? "" : ",") + csv_field(j[column]);
      first = false;
    }
    out += "\r\n";
  }
  return out;
}

std::string audit_export(const std::vector<AuditEntry>& entries, const std::string& format,
                         const std::string& field) {
  if (format == "jsonl") return audit_to_jsonl(entries);
  if (format == "csv") return audit_to_csv(entries);
  throw Error::InvalidArgument(field + ": must be jsonl or csv, got '" + format + "'");
}

}  // namespace tollgate::server
