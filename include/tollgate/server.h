// The Agent Server: serves registered graphs over the LangGraph Agent Server HTTP API
// (assistants, threads, runs, SSE streams, the v2 thread protocol) so that the official
// @langchain/langgraph-sdk client and its useStream hooks work against it unchanged.
//
//   GraphRegistry graphs;
//   graphs.add("agent", [](std::shared_ptr<Saver> saver) { return build_agent(saver); });
//   Server server({.port = 2024, .db_path = "./tollgate.db", .checkpointer = saver},
//                 std::move(graphs));
//   server.start();            // returns once listening; server.port() is the bound port
//   server.wait();             // until stop() (e.g. from a signal handler thread)
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tollgate/checkpoint.h"
#include "tollgate/graph.h"

namespace tollgate {

// Builds a graph compiled with the server's checkpointer. Called once, at server start.
using GraphFactory = std::function<std::shared_ptr<const CompiledGraph>(std::shared_ptr<Saver>)>;

// What the server may do with a registered graph's runs by itself.
struct ServedGraphOptions {
  // Whether a step cut off by the server process ending (kill -9, a crash: some of the step's
  // tasks have no saved result) may be run again without anyone asking. Set it only when every
  // node either has no effect outside the graph or guards it — an agent from create_agent (or
  // create_deep_agent): its model calls are simply made again and its tool calls go through the
  // effect ledger (docs/effects.md). Then start-up recovery continues such a run from its last
  // checkpoint by itself: the same run, the step's finished tasks kept, at most
  // kMaxRunAttempts attempts in all. False (the default, for a graph of your own): the run is
  // failed at restart (its progress kept) and a run with no input continues it when asked.
  bool rerun_cut_off_steps = false;
};

// The graphs a server serves, by graph id. Each gets a system assistant whose id is
// uuid5(graph_id) like the reference server's. Not thread-safe; fill it before the server
// starts, the server then owns it.
class GraphRegistry {
 public:
  // Registers a graph built from the server's checkpointer (the usual way).
  void add(std::string graph_id, GraphFactory factory, std::string description = "",
           ServedGraphOptions options = {});
  // Registers an already compiled graph; it must carry its own checkpointer, and that
  // checkpointer should be the server's so the server can read the thread's state.
  void add(std::string graph_id, std::shared_ptr<const CompiledGraph> graph,
           std::string description = "", ServedGraphOptions options = {});

  struct Entry {
    GraphFactory factory;
    std::string description;
    ServedGraphOptions options;
  };
  const std::map<std::string, Entry, std::less<>>& entries() const { return entries_; }

 private:
  std::map<std::string, Entry, std::less<>> entries_;
};

// ------------------------------------------------------------------ who may call (security.md)

// An identity an API key proves. The key itself is never kept: only its SHA-256.
struct AuthUser {
  std::string id;                  // "alice"; who threads and decisions are recorded for
  std::string name;                // for display; may be empty
  std::vector<std::string> roles;  // "user", "reviewer", "admin"
  std::string api_key_sha256;      // 64 hex digits: the SHA-256 of the key
};

// JSON Web Tokens from an identity provider: RS256/ES256 keys from a JWKS file, or HS256 with
// a secret read from an environment variable. Checked: signature, exp, nbf, iss, aud.
struct JwtOptions {
  std::string issuer;            // the "iss" a token must carry; required
  std::string audience;          // a value "aud" must hold; required
  std::string jwks_file;         // JWKS of the RS256/ES256 keys; "" when only HS256 is used
  std::string secret_env;        // environment variable holding the HS256 secret; "" for none
  std::string subject_claim = "sub";    // the identity's id
  std::string roles_claim = "roles";    // a list of role names (or one name)
  std::string name_claim = "name";      // the display name, when the token has one
  int clock_skew_seconds = 60;          // leeway for exp and nbf
};

struct AuthOptions {
  std::vector<AuthUser> users;
  std::optional<JwtOptions> jwt;
  // Browser origins that may call the API ("https://review.example.com"). Empty: loopback
  // origins only (http://localhost:<any port>, http://127.0.0.1:<any port>).
  std::vector<std::string> cors_origins;

  // With users or a JWT issuer, every request but GET /ok, GET /info and the console's files
  // needs a credential.
  bool enabled() const { return !users.empty() || jwt.has_value(); }
};

// Parses the `auth` section of a config file (docs/config.md, docs/security.md). Relative
// paths (jwks_file) resolve against `base_dir`. Throws Error(kInvalidArgument) naming the
// field: "auth.users[1].roles[0]: unknown role 'boss' (expected user, reviewer, admin)".
AuthOptions parse_auth_options(const Json& section, const std::filesystem::path& base_dir);

// ------------------------------------------------------------------ notifications (webhooks.md)

// The events a webhook may subscribe to.
inline constexpr const char* kWebhookEventTypes[] = {"review.requested", "review.decided",
                                                     "review.expired", "run.finished",
                                                     "run.failed"};

// A receiver of signed POSTs. Each delivery is queued in the server's database and retried with
// exponential backoff and jitter until a 2xx answer or `max_attempts` tries.
struct WebhookOptions {
  std::string url;         // http:// or https://
  std::string secret_env;  // environment variable holding the HMAC-SHA256 signing secret
  std::vector<std::string> events;  // of kWebhookEventTypes; at least one
  int max_attempts = 8;
  // The delay before the second try; each later one doubles it (30 s: 8 tries over ~64 min).
  double first_retry_seconds = 30;
  double jitter = 0.2;            // each delay is scaled by a random factor in [1 - j, 1 + j]
  double timeout_seconds = 10;    // for one try, connecting included
};

// Parses the `webhooks` section of a config file (a list). Throws Error(kInvalidArgument)
// naming the field: "webhooks[0].events[1]: unknown event 'review.done' (expected ...)".
// Secrets are read when the server starts, not here.
std::vector<WebhookOptions> parse_webhook_options(const Json& section);
// What the server deletes by itself, in the background (docs/config.md, "retention"). The
// default deletes nothing. Never deleted: the audit log, review records, a thread a run is
// pending or running on, a thread waiting for a review (by TTL), a pause's checkpoint.
struct RetentionOptions {
  // Stream events (SSE replay, v2 thread events) of runs that ended are kept this long.
  std::optional<std::chrono::milliseconds> events;
  // Idle threads keep only their latest checkpoint of each namespace (with the values it
  // needs); false: every checkpoint is kept.
  bool latest_checkpoint_only = false;
  // The TTL of a thread created without one (deleted this long after its last update).
  std::optional<std::chrono::milliseconds> thread_ttl;
  // Notification events (the webhooks' queue) are kept this long, with their deliveries that
  // ended (delivered or failed); a pending delivery and its event stay until it ends.
  std::optional<std::chrono::milliseconds> webhooks;
  // How often the server sweeps (threads given a TTL by a client expire even without the
  // options above).
  std::chrono::milliseconds interval{60000};
};

// The `retention` section of a config file: {"events": "7d", "checkpoints": "latest" | "all",
// "thread_ttl": "30d", "webhooks": "7d", "interval": "1m"}; durations are a number with s, m, h or
// d. Throws Error(kInvalidArgument) naming the field.
RetentionOptions parse_retention_options(const Json& section);
// "90s", "15m", "24h", "7d" as milliseconds; throws Error(kInvalidArgument) naming `field`.
std::chrono::milliseconds parse_duration(const std::string& text, const std::string& field);

// ------------------------------------------------------------------ replicas (deploy.md)

// Several `tollgate serve` processes on one database, any of them answering any request: runs
// are queued in the database and executed by the replica they were submitted to, one run per
// thread at a time across all replicas; a replica whose heartbeat stops for `timeout` is dead
// and its runs are taken over by another, which resumes them from their last checkpoint.
struct ReplicaOptions {
  // kAuto: shared on PostgreSQL, alone on SQLite. kShared on a SQLite file lets several
  // servers on one machine share it, reading each other's changes every `poll` (there is no
  // notification between them); it exists for tests.
  enum class Mode { kAuto, kAlone, kShared };
  Mode mode = Mode::kAuto;
  // This replica's name among the others. Each replica needs its own; a process started again
  // with the name of one that died takes over that one's runs at once, instead of after
  // `timeout`. Empty: "<host name>:<port>" when the port is given, else a new UUID.
  std::string id;
  std::chrono::milliseconds heartbeat{1000};  // how often a replica says it is alive
  std::chrono::milliseconds timeout{10000};   // silent this long: dead, its runs taken over
  // How often the tables are read again beyond notifications (claims of waiting runs, cancels
  // asked on other replicas, streams of runs executing elsewhere, dead replicas).
  std::chrono::milliseconds poll{1000};
};

// The `replicas` section of a config file: {"id": "a", "heartbeat": "1s", "timeout": "10s",
// "poll": "1s"}; durations may also be given in milliseconds ("250ms").
// Throws Error(kInvalidArgument) naming the field (a timeout not above the heartbeat too).
ReplicaOptions parse_replica_options(const Json& section);

struct ServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 2024;  // 0: pick a free port (see Server::port())
  // The database of the server's tables: a SQLite file (or sqlite:FILE; ":memory:" keeps
  // nothing) or postgres://user@host:port/db (docs/deploy.md). The saver normally shares it.
  std::string db_path = "./tollgate.db";
  // Where the graphs keep their checkpoints. Required.
  std::shared_ptr<Saver> checkpointer;
  // Network I/O; runs and handlers never execute here. One thread parses and writes far more
  // than the handlers and runs can serve; a second one only made them hand the event loop
  // back and forth (~12 more context switches per review cycle).
  std::size_t io_threads = 1;
  std::size_t handler_threads = 4;       // request handlers (store reads and writes)
  std::size_t run_workers = 4;           // runs executing concurrently (one per thread at most)
  std::size_t max_body_bytes = 4 << 20;  // larger request bodies get 413
  int heartbeat_seconds = 10;            // ": heartbeat" on open SSE streams; 0 disables
  // Folder of the built review console (web/dist), served at "/". Empty: no console. When the
  // folder has no index.html, "/" answers with a page saying how to build it.
  std::string console_dir;
  // Who may call. Without users or JWT the server serves one local user who may do
  // everything, and then refuses a host that is not a loopback address unless
  // allow_insecure_no_auth is set.
  AuthOptions auth;
  bool allow_insecure_no_auth = false;
  // Receivers of review and run events (docs/webhooks.md). A secret_env that is not set stops
  // start() with Error(kInvalidArgument) naming it.
  std::vector<WebhookOptions> webhooks;
  // Where people reach this server ("https://review.example.com"); the console links in
  // notifications start with it. Empty: http://<host>:<port>.
  std::string public_url;
  RetentionOptions retention;
  // How long a reviewer's claim of a review lasts after it was last taken (POST
  // /threads/{id}/claim; the config file's "claim_ttl"). Claims are advisory.
  std::chrono::milliseconds claim_ttl{5 * 60 * 1000};
  // Several replicas on one database (docs/deploy.md).
  ReplicaOptions replicas;
  // Where the server reads the time: ids and times of runs, threads and assistants, review
  // records, deadlines and claims. Null: system_clock(). Not owned; it must outlive the server.
  // Graphs keep their own (CompileOptions::clock), given by their factories.
  const Clock* clock = nullptr;
};

// An Agent Server instance. Thread-safety: start/stop/wait/port may be called from any
// thread; stop() is idempotent. The destructor stops the server.
class Server {
 public:
  Server(ServerOptions options, GraphRegistry graphs);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Opens the database (creating or migrating its tables), recovers runs interrupted by a
  // previous process's death, binds the socket and starts serving. Throws Error on failure,
  // and Error(kInvalidArgument) before anything is opened for a bad `auth` or a host that is
  // not loopback without auth.
  void start();
  void stop();
  void wait();
  std::uint16_t port() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tollgate
