// `tollgate audit [--db ./tollgate.db] [--thread ID] [--limit N] [--json | --format jsonl|csv]`:
// prints the review audit log the server keeps in its database (newest first): every decision a
// person sent, what was pending when it arrived, and what became of it; --format exports the
// chain as stored (oldest first). `tollgate audit verify [--db ...]` checks the hash chain and
// names the first broken entry (exit status 1).
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>

#include "main/subcommands.h"
#include "server/audit_export.h"
#include "server/audit_log.h"
#include "server/storage.h"
#include "tollgate/error.h"

namespace tollgate::cli {
namespace {

struct AuditArguments {
  std::string db = "./tollgate.db";
  std::string thread;
  std::size_t limit = 50;
  bool json = false;
  std::string format;  // jsonl | csv: export the chain
};

// "send_email {"to":"bob@example.com"}; delete_file {...}" for HITL requests, else the JSON.
std::string describe_shown(const Json& shown) {
  std::string out;
  for (const auto& [task, interrupts] : shown.items()) {
    for (const Json& interrupt : interrupts) {
      const Json value = interrupt.value("value", Json());
      const Json* requests = nullptr;
      for (const char* key : {"action_requests", "actionRequests"}) {
        if (value.is_object() && value.contains(key)) requests = &value[key];
      }
      if (requests == nullptr || !requests->is_array()) {
        out += (out.empty() ? "" : "; ") + value.dump();
        continue;
      }
      for (const Json& request : *requests) {
        out += (out.empty() ? "" : "; ") + request.value("name", std::string("?")) + " " +
               request.value("args", Json::object()).dump();
      }
    }
  }
  return out.empty() ? "(nothing was pending)" : out;
}

// "approve; edit send_email {...}; reject "too risky"" for a HITL response, else the JSON.
std::string describe_decided(const Json& decided) {
  if (!decided.is_object() || !decided.contains("decisions") || !decided["decisions"].is_array()) {
    return decided.dump();
  }
  std::string out;
  for (const Json& d : decided["decisions"]) {
    std::string text = d.is_object() ? d.value("type", std::string("?")) : d.dump();
    if (d.is_object()) {
      for (const char* key : {"edited_action", "editedAction"}) {
        if (d.contains(key) && d[key].is_object()) {
          text += " " + d[key].value("name", std::string("?")) + " " +
                  d[key].value("args", Json::object()).dump();
        }
      }
      if (d.contains("message")) text += " " + d["message"].dump();
    }
    out += (out.empty() ? "" : "; ") + text;
  }
  return out;
}

int print_audit(const AuditArguments& args) {
  const std::unique_ptr<server::AuditLog> opened = server::open_audit_log(args.db, "--db");
  server::AuditLog& log = *opened;
  server::AuditQuery query;
  if (!args.thread.empty()) query.thread_id = args.thread;
  query.limit = args.limit;
  if (!args.format.empty()) {
    query.chain = true;
    query.limit = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
    std::cout << server::audit_export(log.list(query), args.format, "--format");
    return 0;
  }
  const auto entries = log.list(query);
  for (const server::AuditEntry& e : entries) {
    if (args.json) {
      std::cout << e.to_json().dump() << "\n";
      continue;
    }
    const Json j = e.to_json();
    std::cout << "#" << e.id << "  " << j["received_at"].get<std::string>() << "  thread "
              << e.thread_id << "  " << e.graph_id << "  " << e.outcome
              << (e.kind == "decision" ? "" : "  (" + e.kind + ")") << "\n"
              << "    shown:   " << describe_shown(e.shown) << "\n"
              << "    decided: " << describe_decided(e.decided) << "\n";
    if (!e.message.empty()) std::cout << "    message: " << e.message << "\n";
  }
  if (!args.json && entries.empty()) std::cout << "No decisions recorded in " << args.db << "\n";
  return 0;
}

int verify_audit(const std::string& db) {
  const std::unique_ptr<server::AuditLog> opened = server::open_audit_log(db, "--db");
  server::AuditLog& log = *opened;
  const server::AuditVerification result = log.verify();
  if (result.intact) {
    std::cout << "The audit chain of " << db << " is intact (" << result.entries
              << " entries).\n";
    return 0;
  }
  std::cout << "The audit chain of " << db << " is broken at entry #" << result.broken_id << ": "
            << result.reason << ".\n";
  return 1;
}

}  // namespace

void add_audit_command(CLI::App& app) {
  auto args = std::make_shared<AuditArguments>();
  CLI::App* command =
      app.add_subcommand("audit", "Print the review audit log of a server database");
  command->add_option("--db", args->db, "SQLite file the server uses")->capture_default_str();
  command->add_option("--thread", args->thread, "Only this thread's decisions");
  command->add_option("--limit", args->limit, "How many entries, newest first")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  command->add_flag("--json", args->json, "One JSON object per line");
  command->add_option("--format", args->format,
                      "Export the whole chain as stored, oldest first: jsonl or csv")
      ->check(CLI::IsMember({"jsonl", "csv"}));
  CLI::App* verify = command->add_subcommand(
      "verify", "Check the audit log's hash chain; names the first broken entry (exit status 1)");
  auto verify_db = std::make_shared<std::string>("./tollgate.db");
  verify->add_option("--db", *verify_db, "SQLite file the server uses")->capture_default_str();
  verify->callback([verify_db] {
    int code = verify_audit(*verify_db);
    if (code != 0) throw CLI::RuntimeError(code);
  });
  command->callback([args, command] {
    if (command->got_subcommand("verify")) return;
    int code = print_audit(*args);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace tollgate::cli
