// `tollgate serve [--host 127.0.0.1] [--port 2024] [--db ./tollgate.db | postgres://...]
//  [--config FILE] [--insecure-no-auth]`
// Serves the agents of the config file (or the demo agent) and the example graphs.
#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "demo/demo_model.h"
#include "demo/demo_tools.h"
#include "main/example_graphs.h"
#include "main/subcommands.h"
#include "server/storage.h"
#include "tollgate/agent.h"
#include "tollgate/agent_config.h"
#include "tollgate/chat_model.h"
#include "tollgate/deep_agent.h"
#include "tollgate/error.h"
#include "tollgate/middleware.h"
#include "tollgate/server.h"

namespace tollgate::cli {
namespace {

struct ServeArguments {
  std::string host = "127.0.0.1";
  int port = 2024;
  std::string db = "./tollgate.db";
  std::string config;
  std::string console_dir = "web/dist";
  std::string model;    // the demo agent's model; empty: $TOLLGATE_MODEL or the offline demo model
  std::string workdir;  // the demo tools' folder; empty: next to the database
  AuthOptions auth;     // the config file's "auth" section (docs/security.md)
  std::vector<WebhookOptions> webhooks;  // the config file's "webhooks" (docs/webhooks.md)
  std::string public_url;                // the console's address in notifications
  RetentionOptions retention;  // the config file's "retention" section (docs/config.md)
  std::chrono::milliseconds claim_ttl{5 * 60 * 1000};  // the config file's "claim_ttl"
  ReplicaOptions replicas;  // the config file's "replicas" section (docs/deploy.md)
  std::string replica_id;   // --replica-id (wins over replicas.id)
  bool insecure_no_auth = false;
};

// The config file (docs/config.md): {"host", "port", "db", "workdir", "model", "auth",
// "webhooks", "public_url", "retention", "claim_ttl", "replicas", "agents"};
// command-line flags win; relative paths resolve against the file's folder. Returns the
// "agents" object (null when the file has none).
Json apply_config_file(ServeArguments& args, const CLI::App& command) {
  if (args.config.empty()) return nullptr;
  const Json config = read_json_object_file(args.config);
  const std::filesystem::path base = std::filesystem::path(args.config).parent_path();
  static const char* const kKeys[] = {"host",     "port",       "db",        "workdir",
                                      "model",    "auth",       "webhooks",  "public_url",
                                      "retention", "claim_ttl", "replicas", "agents"};
  for (const auto& [key, value] : config.items()) {
    (void)value;
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      throw Error::InvalidArgument(args.config + ": unknown key '" + key +
                                   "' (expected host, port, db, workdir, model, auth, webhooks, "
                                   "public_url, retention, claim_ttl, replicas, agents)");
    }
  }
  if (config.contains("auth")) {
    try {
      args.auth = parse_auth_options(config["auth"], base);
    } catch (const Error& e) {
      throw Error::InvalidArgument(args.config + ": " + e.what());
    }
  }
  if (config.contains("webhooks")) {
    try {
      args.webhooks = parse_webhook_options(config["webhooks"]);
    } catch (const Error& e) {
      throw Error::InvalidArgument(args.config + ": " + e.what());
    }
  }
  if (config.contains("retention")) {
    try {
      args.retention = parse_retention_options(config["retention"]);
    } catch (const Error& e) {
      throw Error::InvalidArgument(args.config + ": " + e.what());
    }
  }
  if (config.contains("replicas")) {
    try {
      args.replicas = parse_replica_options(config["replicas"]);
    } catch (const Error& e) {
      throw Error::InvalidArgument(args.config + ": " + e.what());
    }
  }
  if (config.contains("claim_ttl")) {
    if (!config["claim_ttl"].is_string())
      throw Error::InvalidArgument(args.config + ": claim_ttl: must be a duration string");
    try {
      args.claim_ttl = parse_duration(config["claim_ttl"].get<std::string>(), "claim_ttl");
    } catch (const Error& e) {
      throw Error::InvalidArgument(args.config + ": " + e.what());
    }
  }
  auto read_string = [&](const char* key, const char* flag, std::string& target, bool path) {
    if (!config.contains(key) || command.count(flag) > 0) return;
    if (!config[key].is_string())
      throw Error::InvalidArgument(args.config + ": " + key + ": must be a string");
    target = config[key].get<std::string>();
    if (path && target != ":memory:" && target.find("://") == std::string::npos &&
        target.rfind("sqlite:", 0) != 0 && std::filesystem::path(target).is_relative())
      target = (base / target).lexically_normal().string();
  };
  read_string("host", "--host", args.host, false);
  read_string("db", "--db", args.db, true);
  read_string("workdir", "--workdir", args.workdir, true);
  read_string("model", "--model", args.model, false);
  if (config.contains("public_url")) {
    if (!config["public_url"].is_string())
      throw Error::InvalidArgument(args.config + ": public_url: must be a string");
    args.public_url = config["public_url"].get<std::string>();
  }
  if (config.contains("port") && command.count("--port") == 0) {
    if (!config["port"].is_number_integer())
      throw Error::InvalidArgument(args.config + ": port: must be an integer");
    args.port = config["port"].get<int>();
  }
  return config.contains("agents") ? config["agents"] : Json(nullptr);
}

// The database as printed: a PostgreSQL URL without its password.
std::string database_for_display(const std::string& db) {
  const std::size_t scheme = db.find("://");
  const std::size_t at = db.find('@');
  if (scheme == std::string::npos || at == std::string::npos) return db;
  const std::size_t colon = db.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return db;
  return db.substr(0, colon) + ":***" + db.substr(at);
}

// The demo tools keep their sandbox, demo database and outbox next to the database file (in
// the working folder when the database is PostgreSQL).
std::string demo_workdir(const ServeArguments& args) {
  if (!args.workdir.empty()) return args.workdir;
  const server::StorageLocation where = server::parse_storage_url(args.db, "--db");
  if (where.kind == server::StorageLocation::Kind::kPostgres) return "tollgate-demo";
  std::filesystem::path db(where.target);
  return (db.has_parent_path() ? db.parent_path() : std::filesystem::path(".")) / "tollgate-demo";
}

// Agents (create_agent, create_deep_agent) re-run a step cut off by the process ending: model
// calls are made again, tool calls are guarded by the effect ledger (docs/effects.md).
constexpr ServedGraphOptions kAgentServing{.rerun_cut_off_steps = true};

// The demo agents: the offline demo model (or --model) over the demo tools with real,
// inspectable effects. `agent` has the demo review policy (send_email, write_file, delete_file
// and SQL writes need a person's decision); `deep` is the demo deep agent over the same
// sandbox folder (planning, filesystem tools, a subagent; writes and /secrets/ reads reviewed).
void add_demo_agents(GraphRegistry& graphs, const std::string& model_spec,
                     const std::string& workdir) {
  auto env = std::make_shared<DemoEnvironment>(workdir);
  std::shared_ptr<ChatModel> model = init_chat_model(model_spec, with_demo_model());
  std::cout << "tollgate serve: demo agents use model " << model->name() << ", tools in "
            << env->root().string() << std::endl;
  graphs.add(
      "agent",
      [env, model](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
        AgentOptions options;
        options.model = model;
        options.tools = env->tools();
        options.system_prompt =
            "You are a helpful assistant. Use the tools to act; some actions need a person's "
            "approval.";
        options.middleware = {make_patch_tool_calls(),
                              make_human_in_the_loop(demo_policy(), options.tools)};
        options.checkpointer = std::move(saver);
        return create_agent(std::move(options));
      },
      "Demo agent: weather, email to an outbox, files in a sandbox, SQL on a demo database; "
      "email, file writes/deletes and SQL writes wait for a person's decision.",
      kAgentServing);
  auto deep = std::make_shared<const DeepAgentOptions>(demo_deep_agent(*env, model));
  graphs.add(
      "deep",
      [deep](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
        DeepAgentOptions options = *deep;
        options.checkpointer = std::move(saver);
        return create_deep_agent(std::move(options));
      },
      "Demo deep agent: a plan, files in the sandbox, a general-purpose subagent; writes, "
      "edits, deletes and reads under /secrets/ wait for a person's decision, also inside the "
      "subagent.",
      kAgentServing);
}

// The agents a config file declares, over the demo tools; errors name the file and the path.
void add_declared_agents(GraphRegistry& graphs, const Json& agents, const ServeArguments& args) {
  auto env = std::make_shared<DemoEnvironment>(demo_workdir(args));
  AgentConfigOptions config;
  config.tools = env->tools();
  config.default_model = args.model;
  config.model_options = with_demo_model();
  config.sandbox = env->sandbox();
  std::vector<AgentDeclaration> declared;
  try {
    declared =
        parse_agent_declarations(agents, std::filesystem::path(args.config).parent_path(), config);
  } catch (const Error& e) {
    throw Error::InvalidArgument(args.config + ": " + e.what());
  }
  for (auto& agent : declared) {
    std::cout << "tollgate serve: agent " << agent.graph_id << " uses model "
              << agent.model()->name() << std::endl;
    auto shared = std::make_shared<const AgentDeclaration>(std::move(agent));
    graphs.add(
        shared->graph_id,
        [shared, env](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
          return shared->build(std::move(saver));
        },
        shared->description, kAgentServing);
  }
}

int serve(ServeArguments args, const CLI::App& command) {
  const Json agents = apply_config_file(args, command);
  if (args.port < 0 || args.port > 65535) throw Error::InvalidArgument("--port: must be 0-65535");

  GraphRegistry graphs;
  if (agents.is_null()) {
    add_demo_agents(graphs, args.model, demo_workdir(args));
  } else {
    add_declared_agents(graphs, agents, args);
  }
  // The example graphs are served next to the agents, unless an agent took their id.
  GraphRegistry examples;
  add_example_graphs(examples);
  for (const auto& [graph_id, entry] : examples.entries()) {
    if (graphs.entries().count(graph_id) == 0)
      graphs.add(graph_id, entry.factory, entry.description, entry.options);
  }

  // Signals are taken by a dedicated thread; every other thread has them blocked.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  ServerOptions options;
  options.host = args.host;
  options.port = static_cast<std::uint16_t>(args.port);
  options.db_path = args.db;
  // An unreachable database stops here, before anything listens.
  options.checkpointer = server::open_checkpointer(args.db);
  options.console_dir = args.console_dir;
  options.auth = args.auth;
  options.webhooks = args.webhooks;
  options.public_url = args.public_url;
  options.allow_insecure_no_auth = args.insecure_no_auth;
  options.retention = args.retention;
  options.claim_ttl = args.claim_ttl;
  options.replicas = args.replicas;
  if (!args.replica_id.empty()) options.replicas.id = args.replica_id;
  if (!args.auth.enabled() && args.insecure_no_auth) {
    std::cerr << "tollgate serve: warning: no auth and --insecure-no-auth: whoever reaches "
              << args.host << " may read every thread and decide every review\n";
  }
  Server server(options, std::move(graphs));
  server.start();
  std::cout << "tollgate serve: listening on http://" << args.host << ":" << server.port()
            << " (db " << database_for_display(args.db) << ")" << std::endl;

  std::thread waiter([&] {
    int received = 0;
    sigwait(&signals, &received);
    server.stop();
  });
  server.wait();
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArguments>();
  CLI::App* command = app.add_subcommand("serve", "Serve the Agent Server HTTP API");
  command->add_option("--host", args->host, "Address to listen on")->capture_default_str();
  command->add_option("--port", args->port, "Port to listen on (0: any free port)")
      ->capture_default_str();
  command->add_option("--db", args->db,
                      "Database of threads, runs and checkpoints: a SQLite file (or sqlite:PATH) "
                      "or postgres://user@host:port/db")
      ->capture_default_str();
  command->add_option("--config", args->config,
                      "JSON config file: host, port, db, workdir, model, auth and the agents to serve "
                      "(docs/config.md); without \"agents\" the demo agent is served");
  command->add_flag("--insecure-no-auth", args->insecure_no_auth,
                    "Listen on a non-loopback --host without auth (anyone who reaches it may "
                    "read every thread and decide every review; see docs/security.md)");
  command->add_option("--console", args->console_dir, "Folder of the built review console")
      ->capture_default_str();
  command->add_option("--model", args->model,
                      "Model of the demo agent (and of config agents naming none), e.g. "
                      "openai:gpt-4.1-mini (default: $TOLLGATE_MODEL or the offline demo model)");
  command->add_option(
      "--workdir", args->workdir,
      "Folder of the demo tools' sandbox, database and outbox (default: next to --db)");
  command->add_option("--replica-id", args->replica_id,
                      "This replica's name when several servers share a PostgreSQL database "
                      "(default: <host name>:<port>; docs/deploy.md)");
  command->callback([args, command] {
    int code = serve(*args, *command);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace tollgate::cli
