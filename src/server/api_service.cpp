#include "server/api_service.h"

#include <cassert>
#include <chrono>

#include "server/api.h"
#include "server/audit_log.h"
#include "server/auth.h"
#include "server/ids.h"
#include "server/notifications.h"
#include "server/retention.h"
#include "server/review_claims.h"
#include "server/review_timer.h"
#include "server/run_manager.h"
#include "server/static_files.h"
#include "server/thread_streams.h"
#include "tollgate/error.h"
#include "tollgate/review_timeout.h"

namespace tollgate::server {

struct ApiService::Parts {
  std::unique_ptr<ServerStore> store;
  std::unique_ptr<AuditLog> audit;
  std::unique_ptr<ReviewStore> reviews;
  std::unique_ptr<ReviewClaims> claims;
  std::unique_ptr<WebhookQueue> webhook_queue;
  std::unique_ptr<Notifications> notifications;
  std::unique_ptr<ThreadStreams> streams;
  std::unique_ptr<RunManager> runs;
  std::unique_ptr<Retention> retention;  // destroyed (stopped) before the runs
  std::unique_ptr<ReviewTimer> timer;  // stopped before the runs
  std::unique_ptr<ApiContext> api;
  std::unique_ptr<Authenticator> authenticator;  // null: no auth, every request is local
  Router router;
};

namespace {

// On a database other processes share, review deadlines they stored are read this often: one
// may fire this late at most. Deadlines are minutes or hours; two indexed reads a second are
// cheap.
constexpr std::chrono::milliseconds kSharedDeadlinePoll{1000};

void register_system_assistants(ServerStore& store, const GraphRegistry& registry) {
  for (const auto& [graph_id, entry] : registry.entries()) {
    std::string id = system_assistant_id(graph_id);
    auto existing = store.get_assistant(id);
    AssistantRecord a = existing.value_or(AssistantRecord{});
    if (!existing) a.created_at = a.updated_at = now_millis();
    a.assistant_id = id;
    a.graph_id = graph_id;
    a.name = graph_id;
    a.description =
        entry.description.empty() ? std::nullopt : std::optional<std::string>(entry.description);
    a.metadata = Json{{"created_by", "system"}};
    store.put_assistant(a);
  }
}

}  // namespace

ApiService::ApiService(const ServerOptions& options, const GraphRegistry& registry)
    : parts_(std::make_unique<Parts>()) {
  set_up_auth(options);  // bad options are refused before anything is opened
  build(options, registry, open_storage(options.db_path));
}

ApiService::ApiService(const ServerOptions& options, const GraphRegistry& registry,
                       Storage storage)
    : parts_(std::make_unique<Parts>()) {
  set_up_auth(options);
  build(options, registry, std::move(storage));
}

void ApiService::set_up_auth(const ServerOptions& options) {
  Parts& p = *parts_;
  if (!options.checkpointer) throw Error::InvalidArgument("checkpointer: required");
  if (options.auth.enabled()) {
    p.authenticator = std::make_unique<Authenticator>(options.auth);
    p.router.set_auth_step([auth = p.authenticator.get()](const HttpRequest& request,
                                                          std::string& refusal) {
      return auth->authenticate(request, refusal);
    });
  } else {
    validate_auth_options(options.auth);
  }
}

void ApiService::build(const ServerOptions& options, const GraphRegistry& registry,
                       Storage storage) {
  Parts& p = *parts_;
  assert(storage.store && storage.reviews && storage.webhooks && storage.audit);
  p.webhook_queue = std::move(storage.webhooks);
  // A webhook whose secret is missing stops the server before the graphs are built.
  p.notifications = std::make_unique<Notifications>(options.webhooks, p.webhook_queue.get(),
                                                    storage.one_database, storage.shared);
  if (!options.public_url.empty()) p.notifications->set_public_url(options.public_url);
  p.store = std::move(storage.store);
  p.streams = std::make_unique<ThreadStreams>(*p.store);
  // Decisions a stopped process left pending are settled by the runs' start-up recovery.
  p.audit = std::move(storage.audit);
  p.reviews = std::move(storage.reviews);
  GraphMap graphs;
  std::set<std::string, std::less<>> rerunning;
  for (const auto& [graph_id, entry] : registry.entries()) {
    auto graph = entry.factory(options.checkpointer);
    if (!graph) throw Error::InvalidArgument("graph " + graph_id + ": the factory returned no graph");
    graphs.emplace(graph_id, std::move(graph));
    if (entry.options.rerun_cut_off_steps) rerunning.insert(graph_id);
  }
  register_system_assistants(*p.store, registry);
  p.runs = std::make_unique<RunManager>(*p.store, *p.streams, std::move(graphs), options.run_workers);
  p.runs->set_graphs_rerunning_cut_off_steps(std::move(rerunning));
  p.retention = std::make_unique<Retention>(*p.store, *p.runs, options.checkpointer.get(),
                                            options.retention);
  p.api = std::make_unique<ApiContext>(
      ApiContext{*p.store, *p.runs, *p.streams, options.checkpointer, p.audit.get(),
                 options.auth.enabled(), p.notifications.get(), p.retention.get(),
                 std::nullopt});
  p.claims = std::make_unique<ReviewClaims>(*p.reviews, p.notifications.get(), options.claim_ttl);
  p.api->claims = p.claims.get();
  if (options.retention.thread_ttl) p.api->default_ttl_ms = options.retention.thread_ttl->count();
  p.runs->set_audit_log(p.audit.get());
  p.runs->set_review_store(p.reviews.get());
  p.runs->set_notifications(p.notifications.get());
  p.timer = std::make_unique<ReviewTimer>(
      *p.reviews, system_clock(),
      [runs = p.runs.get()](const ReviewRecord& due) { runs->expire_review(due); },
      storage.shared ? kSharedDeadlinePoll : std::chrono::milliseconds::zero());
  p.runs->set_review_timer(p.timer.get());
  add_meta_routes(p.router, *p.api);
  add_assistant_routes(p.router, *p.api);
  add_thread_routes(p.router, *p.api);
  add_run_routes(p.router, *p.api);
  add_protocol_routes(p.router, *p.api);
  add_audit_routes(p.router, *p.api);
  add_notification_routes(p.router, *p.api);
  add_claim_routes(p.router, *p.api);
  if (!options.console_dir.empty()) p.router.set_get_fallback(make_console_handler(options.console_dir));
}

ApiService::~ApiService() {
  stop_runs();
}

void ApiService::start_runs() {
  parts_->runs->start();
  parts_->notifications->start();
  parts_->retention->start();
  // After recovery: a deadline that passed while the server was down fires now.
  parts_->timer->start();
}

void ApiService::stop_runs() {
  parts_->timer->stop();
  parts_->retention->stop();
  parts_->runs->stop();
  parts_->notifications->stop();
}

void ApiService::set_public_url(std::string url) {
  parts_->notifications->set_public_url(std::move(url));
}

const Router& ApiService::router() const {
  return parts_->router;
}

}  // namespace tollgate::server
