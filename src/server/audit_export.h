// The audit log exported whole, oldest first, as stored (outcome entries and hashes included),
// so that the chain can be checked outside the server: JSON lines or CSV (RFC 4180).
#pragma once

#include <string>
#include <vector>

#include "server/audit_log.h"

namespace tollgate::server {

// One AuditEntry::to_json() per line.
std::string audit_to_jsonl(const std::vector<AuditEntry>& entries);
// A header row, then one row per entry; shown and decided as JSON text; times as ISO 8601.
std::string audit_to_csv(const std::vector<AuditEntry>& entries);
// "jsonl" or "csv" to its text; throws Error(kInvalidArgument) naming `field` otherwise.
std::string audit_export(const std::vector<AuditEntry>& entries, const std::string& format,
                         const std::string& field);

}  // namespace tollgate::server
