// Routes of review claims (review_claims.h; a Tollgate extension, docs/console.md):
//   POST   /threads/{thread_id}/claim   body {"interrupt_id"?}: 200 {claimed_by, claimed_at,
//                                       expires_at, interrupt_id, thread_id, claims: [...]}
//   DELETE /threads/{thread_id}/claim   body or query {"interrupt_id"?}: 200 {released: [...]}
// Without interrupt_id a claim covers every interrupt the thread waits on.
#include "server/api.h"
#include "server/review_claims.h"

namespace tollgate::server {
namespace {

std::string interrupt_id_of(const HttpRequest& request) {
  const Json body = request.json_body(Json::object());
  if (!body.is_object()) throw Error::InvalidArgument("Request body must be a JSON object");
  if (auto id = optional_string(body, "interrupt_id")) return *id;
  return request.query_value("interrupt_id").value_or("");
}

ReviewClaims& claims_of(ApiContext& context) {
  if (context.claims == nullptr) throw Error::Unavailable("this server keeps no review claims");
  return *context.claims;
}

}  // namespace

void add_claim_routes(Router& router, ApiContext& context) {
  ApiContext* ctx = &context;
  router.add("POST", "/threads/:thread_id/claim", [ctx](HttpRequest& request) {
    const ThreadRecord thread =
        require_thread_head(*ctx, request.params[0], request.identity, ThreadUse::kDecide);
    const std::vector<ReviewClaim> taken =
        claims_of(*ctx).claim(thread, interrupt_id_of(request), request.identity);
    Json out = taken.front().to_json();
    out["claims"] = Json::array();
    for (const ReviewClaim& c : taken) out["claims"].push_back(c.to_json());
    return HttpResponse::json(out);
  });
  router.add("DELETE", "/threads/:thread_id/claim", [ctx](HttpRequest& request) {
    const ThreadRecord thread =
        require_thread_head(*ctx, request.params[0], request.identity, ThreadUse::kDecide);
    Json released = Json::array();
    for (const ReviewClaim& c :
         claims_of(*ctx).release(thread, interrupt_id_of(request), request.identity))
      released.push_back(c.to_json());
    return HttpResponse::json(Json{{"released", released}});
  });
}

}  // namespace tollgate::server
