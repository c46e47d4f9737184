#include "server/api_service.h"

#include <unistd.h>

#include <cassert>
#include <charconv>
#include <chrono>

#include "server/api.h"
#include "server/audit_log.h"
#include "server/auth.h"
#include "server/cluster.h"
#include "server/ids.h"
#include "server/log.h"
#include "server/notifications.h"
#include "server/retention.h"
#include "server/review_claims.h"
#include "server/review_timer.h"
#include "server/run_manager.h"
#include "server/sql_store.h"
#include "server/static_files.h"
#include "server/thread_streams.h"
#include "server/wire_format.h"
#include "sql/postgres_listener.h"
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
  std::unique_ptr<Cluster> cluster;  // several replicas; stopped by the runs, destroyed after them
  std::unique_ptr<RunManager> runs;
  std::unique_ptr<FeedFollower> feed;  // several replicas: the review stream of all of them
  // Several replicas on PostgreSQL: what the others tell (stopped before the runs go).
  std::unique_ptr<sql::PostgresListener> listener;
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

void register_system_assistants(ServerStore& store, const GraphRegistry& registry,
                                const Clock& clock) {
  for (const auto& [graph_id, entry] : registry.entries()) {
    std::string id = system_assistant_id(graph_id);
    auto existing = store.get_assistant(id);
    AssistantRecord a = existing.value_or(AssistantRecord{});
    if (!existing) a.created_at = a.updated_at = now_millis(clock);
    a.assistant_id = id;
    a.graph_id = graph_id;
    a.name = graph_id;
    a.description =
        entry.description.empty() ? std::nullopt : std::optional<std::string>(entry.description);
    a.metadata = Json{{"created_by", "system"}};
    store.put_assistant(a);
  }
}

// Whether several replicas may share the database: on PostgreSQL unless told otherwise.
bool shares_database(const ServerOptions& options) {
  switch (options.replicas.mode) {
    case ReplicaOptions::Mode::kShared:
      return true;
    case ReplicaOptions::Mode::kAlone:
      return false;
    case ReplicaOptions::Mode::kAuto:
      break;
  }
  try {
    return parse_storage_url(options.db_path).kind == StorageLocation::Kind::kPostgres;
  } catch (const Error&) {
    return false;
  }
}

// "<host name>:<port>", so that a replica started again where one died takes its runs over at
// once; a new UUID without a port.
std::string replica_name(std::uint16_t port) {
  char host[256] = {};
  if (port == 0 || gethostname(host, sizeof host - 1) != 0) return new_uuid7();
  return std::string(host) + ":" + std::to_string(port);
}

// GET /reviews/stream on any replica tells what happens on every one: events go through the
// store (FeedFollower, review_feed.h).
void share_review_stream(ApiService::Parts& p, ReplicaStore& replicas) {
  p.notifications->set_feed_relay([&replicas](const std::vector<NotificationEvent>& events) {
    std::vector<std::string> texts;
    for (const NotificationEvent& event : events) texts.push_back(feed_event_text(event));
    replicas.append_feed(texts, now_millis());
  });
  // The notices stored with their facts are fed in the same transactions.
  replicas.set_feed_texts(feed_event_text);
  p.feed = std::make_unique<FeedFollower>(replicas, p.notifications->feed());
  FeedFollower* feed = p.feed.get();
  p.cluster->on_notification("feed", [feed](const std::string& payload) {
    std::int64_t told = 0;  // the appended events' last number (none from older replicas)
    std::from_chars(payload.data(), payload.data() + payload.size(), told);
    feed->catch_up(told);
  });
  p.cluster->on_tick([feed] { feed->catch_up(); });
}

// The notifications replicas send each other on PostgreSQL: the store sends them in the
// transactions of what they tell, the listener hands them to the cluster by topic.
std::unique_ptr<sql::PostgresListener> listen_to_replicas(const std::string& url,
                                                          SqlStore& store, Cluster& cluster) {
  // The server's tables are in the connection's default schema (open_storage).
  const StoreChannels channels{sql::channel_name("", "runs"), sql::channel_name("", "events"),
                               sql::channel_name("", "cancels"), sql::channel_name("", "feed")};
  store.set_channels(channels);
  sql::PostgresListenerOptions options;
  options.on_notification = [&cluster, &store, channels](const sql::Notification& n) {
    // Stream events this replica stored itself are in its streams already: reading them back
    // would only cost queries. (Review feed events are not skipped: every replica, this one
    // too, publishes them from the table, in the table's order.)
    if (n.channel == channels.events && n.sender_pid != 0 &&
        n.sender_pid == store.notifying_pid()) {
      return;
    }
    const char* topic = n.channel == channels.runs      ? "runs"
                        : n.channel == channels.events  ? "events"
                        : n.channel == channels.cancels ? "cancels"
                                                        : "feed";
    cluster.deliver(topic, n.payload);
  };
  // Notifications sent while the session was lost are gone: read the tables again.
  options.on_reconnect = [&cluster] {
    cluster.deliver("events", "");
    cluster.deliver("runs", "");
    cluster.deliver("feed", "");
  };
  options.on_problem = [](const std::string& problem) {
    log_warning("notifications between replicas: " + problem);
  };
  auto listener = std::make_unique<sql::PostgresListener>(url, std::move(options));
  for (const std::string* channel :
       {&channels.runs, &channels.events, &channels.cancels, &channels.feed}) {
    listener->listen(*channel);
  }
  return listener;
}

// The state a root `values` event showed at a checkpoint, written as that event wrote it: read
// for the stored events that name their checkpoint (state_refs.h). Holds the graphs itself, so
// that it outlives the run manager.
StateTexts state_texts_of(const GraphMap& graphs) {
  return [graphs](const std::string& thread_id, const std::string& graph_id,
                  const std::string& checkpoint_id, StateView view) -> std::optional<std::string> {
    auto graph = graphs.find(graph_id);
    if (graph == graphs.end() || !graph->second->checkpointer()) return std::nullopt;
    RunConfig config;
    config.thread_id = thread_id;
    config.checkpoint_id = checkpoint_id;
    const StateSnapshot snapshot = graph->second->get_state(config);
    if (snapshot.config.checkpoint_id != checkpoint_id) return std::nullopt;
    return state_event_json(view == StateView::kTaskInput ? snapshot.task_input : snapshot.values);
  };
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
  // Other processes use the database too: PostgreSQL, or replicas sharing a SQLite file.
  const bool shared = storage.shared || shares_database(options);
  p.notifications = std::make_unique<Notifications>(options.webhooks, p.webhook_queue.get(),
                                                    storage.one_database, shared);
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
  const Clock& clock = options.clock != nullptr ? *options.clock : system_clock();
  register_system_assistants(*p.store, registry, clock);
  p.store->set_state_texts(state_texts_of(graphs));
  p.runs = std::make_unique<RunManager>(*p.store, *p.streams, std::move(graphs), options.run_workers);
  p.runs->set_graphs_rerunning_cut_off_steps(std::move(rerunning));
  p.runs->set_clock(clock);
  if (shares_database(options)) {
    auto* replicas = dynamic_cast<SqlStore*>(p.store.get());
    if (replicas == nullptr) throw Error::InvalidArgument("replicas: this server's store cannot be shared");
    p.cluster = std::make_unique<Cluster>(*replicas, options.replicas);
    p.runs->set_cluster(*p.cluster, *replicas);
    share_review_stream(p, *replicas);
    if (parse_storage_url(options.db_path).kind == StorageLocation::Kind::kPostgres) {
      p.listener = listen_to_replicas(options.db_path, *replicas, *p.cluster);
    }
  }
  p.retention = std::make_unique<Retention>(*p.store, *p.runs, options.checkpointer.get(),
                                            options.retention, p.webhook_queue.get());
  p.api = std::make_unique<ApiContext>(
      ApiContext{*p.store, *p.runs, *p.streams, options.checkpointer, p.audit.get(),
                 options.auth.enabled(), p.notifications.get(), p.retention.get(),
                 std::nullopt});
  p.api->clock = &clock;
  p.claims =
      std::make_unique<ReviewClaims>(*p.reviews, p.notifications.get(), options.claim_ttl, clock);
  p.api->claims = p.claims.get();
  p.api->cluster = p.cluster.get();
  if (options.retention.thread_ttl) p.api->default_ttl_ms = options.retention.thread_ttl->count();
  p.runs->set_audit_log(p.audit.get());
  p.runs->set_review_store(p.reviews.get());
  p.runs->set_notifications(p.notifications.get());
  p.timer = std::make_unique<ReviewTimer>(
      *p.reviews, clock,
      [runs = p.runs.get()](const ReviewRecord& due) { runs->expire_review(due); },
      shared ? kSharedDeadlinePoll : std::chrono::milliseconds::zero());
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

void ApiService::start_runs(std::uint16_t port) {
  if (parts_->cluster && parts_->cluster->replica_id().empty()) {
    parts_->cluster->set_replica_id(replica_name(port));
  }
  // The review stream tells what happens from now on; the listener starts before recovery reads
  // the tables, so nothing told from then on is missed.
  if (parts_->feed) parts_->feed->start();
  if (parts_->listener) parts_->listener->start();
  parts_->runs->start();
  parts_->notifications->start();
  parts_->retention->start();
  // After recovery: a deadline that passed while the server was down fires now.
  parts_->timer->start();
}

void ApiService::stop_runs() {
  parts_->timer->stop();
  parts_->retention->stop();
  if (parts_->listener) parts_->listener->stop();
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
