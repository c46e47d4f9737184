// Routes of the notifications (docs/webhooks.md; Tollgate extensions):
//   GET /webhooks/deliveries  the delivery log, newest first (admin; everyone without auth)
//     ?status=pending|delivered|failed   only those
//     ?limit=<1..1000>                    default 100
//   GET /reviews/stream       SSE of the notification events the caller may see, from now on
//                             (or after Last-Event-ID while the server still holds it)
#include <charconv>

#include "server/api.h"
#include "server/notifications.h"

namespace tollgate::server {
namespace {

std::size_t limit_of(const HttpRequest& request) {
  auto text = request.query_value("limit");
  if (!text) return 100;
  std::size_t value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || value < 1 || value > 1000)
    throw Error::InvalidArgument("limit: must be an integer from 1 to 1000");
  return value;
}

// Whether `who` may see the event: the thread's access rules (thread_access.h) as the thread is
// now, and a reviewer always sees the decisions they made.
bool visible_to(ApiContext& context, const Identity& who, const NotificationEvent& event) {
  if (who.is_admin()) return true;
  const std::string decided_by = string_member(event.data, "decided_by");
  if (!decided_by.empty() && decided_by == who.id) return true;
  const std::string thread_id = string_member(event.data, "thread_id");
  if (thread_id.empty()) return false;
  try {
    auto thread = context.store.get_thread_head(thread_id);
    return thread && thread_access(who, *thread) != ThreadAccess::kNone;
  } catch (const std::exception&) {
    return false;  // storage failing: leave it out rather than show what may be hidden
  }
}

}  // namespace

void add_notification_routes(Router& router, ApiContext& context) {
  ApiContext* ctx = &context;
  router.add("GET", "/webhooks/deliveries", [ctx](HttpRequest& request) {
    require_admin(request.identity, "read the webhook delivery log");
    if (ctx->notifications == nullptr || ctx->notifications->queue() == nullptr)
      return HttpResponse::json(Json::array());
    std::optional<DeliveryStatus> status;
    if (const std::optional<std::string> name = request.query_value("status")) {
      status = delivery_status_named(*name);
      if (!status) throw Error::InvalidArgument("status: must be pending, delivered or failed");
    }
    Json out = Json::array();
    for (const WebhookDelivery& d : ctx->notifications->queue()->list(status, limit_of(request)))
      out.push_back(d.to_json());
    return HttpResponse::json(out);
  });
  router.add("GET", "/reviews/stream", [ctx](HttpRequest& request) {
    if (ctx->notifications == nullptr) throw Error::NotFound("This server sends no notifications");
    const std::shared_ptr<ReviewFeed>& feed = ctx->notifications->feed();
    std::int64_t after = feed->last_seq();
    const std::string last_event_id = request.header("last-event-id");
    if (!last_event_id.empty()) {
      std::int64_t seq = 0;
      const char* end = last_event_id.data() + last_event_id.size();
      auto [ptr, ec] = std::from_chars(last_event_id.data(), end, seq);
      if (ec == std::errc() && ptr == end && seq >= 0 && seq <= after) after = seq;
    }
    HttpResponse response;
    response.content_type = "text/event-stream";
    response.stream = std::make_shared<ReviewFeedBody>(
        feed, after, [ctx, who = request.identity](const NotificationEvent& event) {
          return visible_to(*ctx, who, event);
        });
    return response;
  });
}

}  // namespace tollgate::server
