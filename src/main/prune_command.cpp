// `tollgate prune [--db ./tollgate.db] [--events 7d] [--webhooks 7d] [--checkpoints latest]` or
// `tollgate prune --thread ID... [--strategy delete|keep_latest]`: one retention pass over a
// server database (the server's own background pass: threads whose TTL ran out are deleted
// too), or POST /threads/prune, from a shell. Safe beside a
// running server on the same file: threads a run is pending or running on are left alone.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "main/subcommands.h"
#include "server/retention.h"
#include "server/run_manager.h"
#include "server/storage.h"
#include "server/thread_streams.h"
#include "tollgate/clock.h"
#include "tollgate/server.h"

namespace tollgate::cli {
namespace {

struct PruneArguments {
  std::string db = "./tollgate.db";
  std::string events;       // a duration: delete stream events of runs ended before it
  std::string webhooks;     // a duration: delete notification events and ended deliveries
  std::string checkpoints;  // "latest": idle threads keep only their latest checkpoint
  std::vector<std::string> threads;
  std::string strategy = "delete";
};

int prune(const PruneArguments& args) {
  RetentionOptions options;
  if (!args.events.empty()) options.events = parse_duration(args.events, "--events");
  if (!args.webhooks.empty()) options.webhooks = parse_duration(args.webhooks, "--webhooks");
  options.latest_checkpoint_only = args.checkpoints == "latest";
  server::Storage storage = server::open_storage(args.db);
  server::ServerStore& store = *storage.store;
  std::shared_ptr<Saver> saver = server::open_checkpointer(args.db);
  server::ThreadStreams streams(store);
  // Never started: it only guards the threads it prunes against runs of this process (none)
  // and, through the store, of a server running on the file.
  server::RunManager runs(store, streams, {}, 1);
  server::Retention retention(store, runs, saver.get(), options, storage.webhooks.get());
  if (!args.threads.empty()) {
    const std::size_t pruned = retention.prune(
        args.threads,
        args.strategy == "delete" ? PruneStrategy::kDelete : PruneStrategy::kKeepLatest);
    std::cout << "pruned " << pruned << " of " << args.threads.size() << " threads ("
              << args.strategy << ")\n";
    return 0;
  }
  // Threads whose TTL ran out are deleted by every pass, as the server's own would.
  const server::RetentionCounts counts = retention.sweep(now_millis());
  std::cout << "deleted " << counts.threads_deleted << " expired threads, " << counts.events_deleted
            << " stream events and " << counts.notifications_deleted
            << " notification rows; pruned the checkpoints of " << counts.threads_pruned
            << " threads\n";
  return 0;
}

}  // namespace

void add_prune_command(CLI::App& app) {
  auto args = std::make_shared<PruneArguments>();
  CLI::App* command = app.add_subcommand(
      "prune", "Delete what a retention policy would in a server database (docs/config.md)");
  command->add_option("--db", args->db, "Database the server uses: a SQLite file or postgres://...")->capture_default_str();
  command->add_option("--events", args->events,
                      "Delete the stream events of runs that ended longer ago than this (e.g. 7d)");
  command->add_option("--webhooks", args->webhooks,
                      "Delete the notification events and ended webhook deliveries older than "
                      "this (e.g. 7d); pending deliveries stay");
  command->add_option("--checkpoints", args->checkpoints,
                      "latest: idle threads keep only their latest checkpoint")
      ->check(CLI::IsMember({"latest", "all"}));
  command->add_option("--thread", args->threads, "Prune these threads only (repeatable)");
  command->add_option("--strategy", args->strategy, "With --thread: delete or keep_latest")
      ->capture_default_str()
      ->check(CLI::IsMember({"delete", "keep_latest"}));
  command->callback([args] {
    int code = prune(*args);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace tollgate::cli
