// Route: GET /audit — the review audit log (a Tollgate extension; see server/audit_log.h).
//   ?thread_id=<uuid>  only that thread's decisions
//   ?limit=<1..1000>   default 100
//   ?before=<audit_id> entries older than this one (paging, newest first)
//   ?format=jsonl|csv  the whole chain (admin only) or one thread's entries, oldest first, as
//                      stored — outcome entries and hashes included — for export and outside
//                      checks
#include <charconv>

#include "server/api.h"
#include "server/audit_export.h"
#include "server/audit_log.h"

namespace tollgate::server {
namespace {

std::int64_t query_integer(const HttpRequest& request, const std::string& name, std::int64_t low,
                           std::int64_t high, std::int64_t fallback) {
  auto text = request.query_value(name);
  if (!text) return fallback;
  std::int64_t value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || value < low || value > high) {
    throw Error::InvalidArgument(name + ": must be an integer from " + std::to_string(low) + " to " +
                             std::to_string(high));
  }
  return value;
}

}  // namespace

void add_audit_routes(Router& router, ApiContext& context) {
  ApiContext* ctx = &context;
  router.add("GET", "/audit", [ctx](HttpRequest& request) {
    if (ctx->audit == nullptr) throw Error::NotFound("This server keeps no audit log");
    AuditQuery query;
    if (auto thread_id = request.query_value("thread_id")) {
      require_thread_head(*ctx, *thread_id, request.identity);
      query.thread_id = *thread_id;
    }
    if (auto format = request.query_value("format")) {
      if (!query.thread_id && !request.identity.is_admin()) {
        throw Error::PermissionDenied(
            "Exporting the whole audit chain needs the admin role; name a thread_id to export "
            "that thread's entries");
      }
      query.chain = true;
      query.limit = static_cast<std::size_t>(
          query_integer(request, "limit", 1, INT64_MAX, INT64_MAX));
      const std::string text = audit_export(ctx->audit->list(query), *format, "format");
      HttpResponse response;
      response.content_type = *format == "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson";
      response.body = text;
      return response;
    }
    query.limit = static_cast<std::size_t>(query_integer(request, "limit", 1, 1000, 100));
    if (request.query_value("before")) {
      query.before_id = query_integer(request, "before", 1, INT64_MAX, 0);
    }
    Json out = Json::array();
    // Entries of threads the caller may not see are left out (an admin sees all; entries of
    // deleted threads only an admin), except the caller's own decisions: a reviewer keeps
    // seeing what they decided once the thread is its owner's alone again.
    for (const AuditEntry& entry : ctx->audit->list(query)) {
      const bool own = !entry.reviewer.empty() && entry.reviewer == request.identity.id;
      if (!request.identity.is_admin() && !own) {
        auto thread = ctx->store.get_thread(entry.thread_id);
        if (!thread || thread_access(request.identity, *thread) == ThreadAccess::kNone) continue;
      }
      out.push_back(entry.to_json());
    }
    return HttpResponse::json(out);
  });
}

}  // namespace tollgate::server
