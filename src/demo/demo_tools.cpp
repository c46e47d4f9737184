// The demo environment and its tools: a sandbox folder, a demo SQLite database and an outbox.
#include "demo/demo_tools.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "demo/book_flight.h"
#include "tollgate/error.h"
#include "tollgate/when_rules.h"

namespace tollgate {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxFileBytes = 64 * 1024;
constexpr int kMaxRows = 100;

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

Db open_db(const fs::path& path, bool read_only) {
  sqlite3* raw = nullptr;
  const int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) {
    throw Error::Unavailable("cannot open " + path.string() + ": " +
                             (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_busy_timeout(raw, 5000);
  return db;
}

void exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    throw Error::Unavailable("demo database setup failed: " + text);
  }
}

constexpr const char* kDemoSchema = R"sql(
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS users (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE, city TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS orders (
  id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id),
  item TEXT NOT NULL, amount_cents INTEGER NOT NULL, status TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS demo_seeded (at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS demo_effects (
  idempotency_key TEXT PRIMARY KEY, result TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')));
INSERT OR IGNORE INTO users SELECT * FROM (VALUES
  (1, 'Ada Lovelace', 'ada@example.com', 'London'),
  (2, 'Grace Hopper', 'grace@example.com', 'New York'),
  (3, 'Alan Turing', 'alan@example.com', 'Manchester'),
  (4, 'Katherine Johnson', 'katherine@example.com', 'Hampton'))
  WHERE NOT EXISTS (SELECT 1 FROM demo_seeded);
INSERT OR IGNORE INTO orders SELECT * FROM (VALUES
  (1, 1, 'Analytical engine manual', 4200, 'shipped'),
  (2, 2, 'Compiler handbook', 3150, 'pending'),
  (3, 2, 'Moth specimen frame', 1299, 'shipped'),
  (4, 3, 'Enigma rotor set', 8900, 'cancelled'),
  (5, 4, 'Orbital mechanics tables', 2500, 'pending'))
  WHERE NOT EXISTS (SELECT 1 FROM demo_seeded);
INSERT INTO demo_seeded SELECT strftime('%Y-%m-%dT%H:%M:%fZ','now')
  WHERE NOT EXISTS (SELECT 1 FROM demo_seeded);
COMMIT;
)sql";

// The idempotency key of the call that wrote a row is UNIQUE: the same call twice stores one
// row (docs/effects.md). Outboxes made before the column existed get it added.
constexpr const char* kOutboxSchema = R"sql(
CREATE TABLE IF NOT EXISTS outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT, to_address TEXT NOT NULL, subject TEXT NOT NULL,
  body TEXT NOT NULL, created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  idempotency_key TEXT);
)sql";
constexpr const char* kOutboxKeyIndex =
    "CREATE UNIQUE INDEX IF NOT EXISTS outbox_idempotency_key ON outbox(idempotency_key)";

void add_outbox_key_column(sqlite3* db) {
  sqlite3_stmt* raw = nullptr;
  sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('outbox') WHERE name = 'idempotency_key'",
                     -1, &raw, nullptr);
  Stmt stmt(raw);
  if (sqlite3_step(raw) != SQLITE_ROW) exec(db, "ALTER TABLE outbox ADD COLUMN idempotency_key TEXT");
  exec(db, kOutboxKeyIndex);
}

constexpr const char* kNotes =
    "Tollgate demo sandbox\n"
    "=====================\n"
    "The agent's file tools can read, write and delete files in this folder only.\n"
    "Try: \"read notes.txt\", \"write hello to greeting.txt\", \"delete greeting.txt\".\n";

std::string string_arg(const Json& args, const char* name) {
  const auto it = args.find(name);
  if (it == args.end() || !it->is_string())
    throw Error::InvalidArgument(std::string("argument '") + name + "' must be a string");
  return it->get<std::string>();
}

Json schema_of(std::initializer_list<std::pair<const char*, const char*>> fields) {
  Json properties = Json::object();
  Json required = Json::array();
  for (const auto& [name, description] : fields) {
    properties[name] = {{"type", "string"}, {"description", description}};
    required.push_back(name);
  }
  return {{"type", "object"},
          {"properties", properties},
          {"required", required},
          {"additionalProperties", false}};
}

// A fake but stable forecast: the same city always gets the same weather.
Json weather_search(const Json& args, const ToolContext&) {
  const std::string city = string_arg(args, "city");
  if (city.empty()) throw Error::InvalidArgument("argument 'city' must not be empty");
  std::uint32_t hash = 2166136261U;
  for (unsigned char c : city) {
    hash ^= static_cast<std::uint32_t>(std::tolower(c));
    hash *= 16777619U;
  }
  static const char* const kSkies[] = {"sunny",      "partly cloudy", "overcast",
                                       "light rain", "windy",         "foggy"};
  const int celsius = static_cast<int>(hash % 31) - 3;
  const char* sky = kSkies[(hash >> 8) % 6];
  const int wind = static_cast<int>((hash >> 16) % 40) + 3;
  return "Forecast for " + city + ": " + sky + ", " + std::to_string(celsius) + " °C, wind " +
         std::to_string(wind) + " km/h (demo data, not a real forecast).";
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Json sqlite_value(sqlite3_stmt* stmt, int column) {
  switch (sqlite3_column_type(stmt, column)) {
    case SQLITE_INTEGER:
      return static_cast<std::int64_t>(sqlite3_column_int64(stmt, column));
    case SQLITE_FLOAT:
      return sqlite3_column_double(stmt, column);
    case SQLITE_NULL:
      return nullptr;
    case SQLITE_BLOB:
      return "<blob " + std::to_string(sqlite3_column_bytes(stmt, column)) + " bytes>";
    default: {
      const auto* text = sqlite3_column_text(stmt, column);
      return std::string(reinterpret_cast<const char*>(text),
                         static_cast<std::size_t>(sqlite3_column_bytes(stmt, column)));
    }
  }
}

// Runs every statement of `query` on `db`; answers with the rows of the last one that returned
// rows, else with the number of changed rows.
Json run_statements(sqlite3* db, const std::string& query, bool writes);

// The first result stored for `key` in demo_effects, if any.
std::optional<std::string> stored_effect(sqlite3* db, const std::string& key) {
  sqlite3_stmt* raw = nullptr;
  sqlite3_prepare_v2(db, "SELECT result FROM demo_effects WHERE idempotency_key = ?", -1, &raw,
                     nullptr);
  Stmt stmt(raw);
  sqlite3_bind_text(raw, 1, key.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(raw) != SQLITE_ROW) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(sqlite3_column_text(raw, 0)));
}

void store_effect(sqlite3* db, const std::string& key, const std::string& result) {
  sqlite3_stmt* raw = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO demo_effects(idempotency_key, result) VALUES (?, ?)", -1,
                     &raw, nullptr);
  Stmt stmt(raw);
  sqlite3_bind_text(raw, 1, key.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(raw, 2, result.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(raw) != SQLITE_DONE)
    throw Error::Unavailable(std::string("demo database write failed: ") + sqlite3_errmsg(db));
}

// A write with an idempotency key runs in one transaction with the row that keeps its key
// (demo_effects, key UNIQUE): the same call again changes nothing and answers the first
// result. Reads, and calls without a key, just run.
Json execute_sql(const fs::path& database, const std::string& query, const std::string& key) {
  if (query.find_first_not_of(" \t\r\n;") == std::string::npos)
    throw Error::InvalidArgument("argument 'query' is empty");
  const bool writes = is_sql_write(query);
  Db db = open_db(database, !writes);
  if (!writes || key.empty()) return run_statements(db.get(), query, writes);
  exec(db.get(), "BEGIN IMMEDIATE");
  try {
    if (auto first = stored_effect(db.get(), key)) {
      exec(db.get(), "ROLLBACK");
      return *first;
    }
    Json result = run_statements(db.get(), query, writes);
    store_effect(db.get(), key, result.get<std::string>());
    exec(db.get(), "COMMIT");
    return result;
  } catch (...) {
    sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

Json run_statements(sqlite3* db, const std::string& query, bool writes) {
  const char* rest = query.c_str();
  Json result;
  int changes = 0;
  while (rest != nullptr && *rest != '\0') {
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db, rest, -1, &raw, &tail) != SQLITE_OK)
      throw Error::InvalidArgument(std::string("SQL error: ") + sqlite3_errmsg(db));
    Stmt stmt(raw);
    rest = tail;
    if (!stmt) continue;  // whitespace or a comment
    const int columns = sqlite3_column_count(raw);
    Json rows = Json::array();
    bool truncated = false;
    int rc;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
      if (static_cast<int>(rows.size()) >= kMaxRows) {
        truncated = true;
        break;
      }
      Json row = Json::array();
      for (int c = 0; c < columns; ++c) row.push_back(sqlite_value(raw, c));
      rows.push_back(std::move(row));
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      const std::string message = sqlite3_errmsg(db);
      if (!writes && (rc == SQLITE_READONLY || message.find("readonly") != std::string::npos))
        throw Error::InvalidArgument(
            "SQL error: the query tried to write through a read-only "
            "connection: " +
            message);
      throw Error::InvalidArgument("SQL error: " + message);
    }
    if (columns > 0) {
      Json names = Json::array();
      for (int c = 0; c < columns; ++c) names.push_back(sqlite3_column_name(raw, c));
      result = {{"columns", names}, {"rows", rows}};
      if (truncated) result["truncated_after"] = kMaxRows;
    } else {
      changes += sqlite3_changes(db);
    }
  }
  if (result.is_null()) return "OK: " + std::to_string(changes) + " row(s) changed.";
  return result.dump();
}

// Stores an email in the outbox once per idempotency key (an empty key: every time) and
// answers its row id: the first row's when the key was stored before.
std::int64_t put_in_outbox(const fs::path& outbox, const std::string& to,
                           const std::string& subject, const std::string& body,
                           const std::string& key) {
  Db db = open_db(outbox, false);
  sqlite3_stmt* raw = nullptr;
  sqlite3_prepare_v2(db.get(),
                     "INSERT INTO outbox(to_address, subject, body, idempotency_key) VALUES (?, ?, "
                     "?, ?) ON CONFLICT(idempotency_key) DO NOTHING",
                     -1, &raw, nullptr);
  Stmt stmt(raw);
  sqlite3_bind_text(raw, 1, to.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(raw, 2, subject.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(raw, 3, body.c_str(), -1, SQLITE_TRANSIENT);
  if (key.empty()) {
    sqlite3_bind_null(raw, 4);
  } else {
    sqlite3_bind_text(raw, 4, key.c_str(), -1, SQLITE_TRANSIENT);
  }
  if (sqlite3_step(raw) != SQLITE_DONE)
    throw Error::Unavailable(std::string("outbox write failed: ") + sqlite3_errmsg(db.get()));
  if (sqlite3_changes(db.get()) > 0) return sqlite3_last_insert_rowid(db.get());
  sqlite3_stmt* find = nullptr;
  sqlite3_prepare_v2(db.get(), "SELECT id FROM outbox WHERE idempotency_key = ?", -1, &find,
                     nullptr);
  Stmt lookup(find);
  sqlite3_bind_text(find, 1, key.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(find) != SQLITE_ROW)
    throw Error::Unavailable(std::string("outbox read failed: ") + sqlite3_errmsg(db.get()));
  return sqlite3_column_int64(find, 0);
}

}  // namespace

DemoEnvironment::DemoEnvironment(fs::path root) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec)
    throw Error::Unavailable("cannot create demo folder " + root.string() + ": " + ec.message());
  root_ = fs::canonical(root);
  fs::create_directories(sandbox(), ec);
  if (ec) throw Error::Unavailable("cannot create " + sandbox().string() + ": " + ec.message());
  if (!fs::exists(sandbox() / "notes.txt")) {
    std::ofstream(sandbox() / "notes.txt") << kNotes;
  }
  exec(open_db(database(), false).get(), kDemoSchema);
  Db outbox_db = open_db(outbox(), false);
  exec(outbox_db.get(), kOutboxSchema);
  add_outbox_key_column(outbox_db.get());
}

fs::path resolve_in_sandbox(const fs::path& sandbox, const std::string& path) {
  if (path.empty()) throw Error::InvalidArgument("argument 'path' must not be empty");
  for (const auto& part : fs::path(path)) {
    if (part == "..")
      throw Error::InvalidArgument("path '" + path + "' is refused: '..' is not allowed");
  }
  const std::optional<std::string> inside = sandbox_relative_path(path, sandbox);
  if (!inside || inside->empty()) {
    throw Error::InvalidArgument("path '" + path + "' is outside the sandbox folder " +
                                 sandbox.string());
  }
  return sandbox / *inside;
}

namespace {

// A file inside the sandbox that exists; throws kNotFound naming `path` otherwise.
fs::path existing_file(const fs::path& sandbox, const std::string& path) {
  fs::path file = resolve_in_sandbox(sandbox, path);
  if (!fs::is_regular_file(file)) throw Error::NotFound("no such file in the sandbox: " + path);
  return file;
}

}  // namespace

std::vector<Tool> DemoEnvironment::tools() const {
  const fs::path box = sandbox();
  const fs::path database_path = database();
  const fs::path outbox_path = outbox();
  std::vector<Tool> tools;
  tools.emplace_back("weather_search", "Looks up the weather forecast for a city.",
                     schema_of({{"city", "The city, e.g. Paris"}}), weather_search,
                     ToolOptions{.idempotent = true});  // reads only: re-run after a crash
  tools.emplace_back(
      "send_email", "Sends an email (the demo puts it in an outbox; nothing is sent).",
      schema_of({{"to", "Recipient address"}, {"subject", "Subject line"}, {"body", "Text"}}),
      [outbox_path](const Json& args, const ToolContext& context) -> Json {
        const std::string to = string_arg(args, "to");
        if (to.find('@') == std::string::npos)
          throw Error::InvalidArgument("argument 'to' is not an email address: " + to);
        return "Email to " + to + " placed in the outbox (message " +
               std::to_string(put_in_outbox(outbox_path, to, string_arg(args, "subject"),
                                            string_arg(args, "body"), context.idempotency_key)) +
               ").";
      });
  tools.emplace_back("read_file", "Reads a text file from the sandbox folder.",
                     schema_of({{"path", "Path relative to the sandbox"}}),
                     [box](const Json& args, const ToolContext&) -> Json {
                       const std::string path = string_arg(args, "path");
                       const fs::path file = existing_file(box, path);
                       if (fs::file_size(file) > kMaxFileBytes)
                         throw Error::InvalidArgument("file is larger than 64 KiB: " + path);
                       return read_text(file);
                     },
                     ToolOptions{.idempotent = true});
  tools.emplace_back(
      "write_file", "Writes a text file in the sandbox folder (replacing it if it exists).",
      schema_of({{"path", "Path relative to the sandbox"}, {"content", "The text to write"}}),
      [box](const Json& args, const ToolContext&) -> Json {
        const std::string path = string_arg(args, "path");
        const std::string content = string_arg(args, "content");
        const fs::path file = resolve_in_sandbox(box, path);
        if (fs::is_directory(file)) throw Error::InvalidArgument("path is a folder: " + path);
        fs::create_directories(file.parent_path());
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << content;
        if (!out) throw Error::Unavailable("cannot write " + path);
        return "Wrote " + std::to_string(content.size()) + " bytes to " + path + ".";
      });
  tools.emplace_back("delete_file", "Deletes a file in the sandbox folder.",
                     schema_of({{"path", "Path relative to the sandbox"}}),
                     [box](const Json& args, const ToolContext&) -> Json {
                       const std::string path = string_arg(args, "path");
                       fs::remove(existing_file(box, path));
                       return "Deleted " + path + ".";
                     });
  tools.emplace_back("execute_sql",
                     "Runs SQL on the demo SQLite database (tables users(id,name,email,city) and "
                     "orders(id,user_id,item,amount_cents,status)).",
                     schema_of({{"query", "SQLite SQL"}}),
                     [database_path](const Json& args, const ToolContext& context) -> Json {
                       return execute_sql(database_path, string_arg(args, "query"),
                                          context.idempotency_key);
                     });
  tools.emplace_back("ask_user", "Asks the user a question and waits for the answer.",
                     schema_of({{"question", "The question"}}),
                     [](const Json&, const ToolContext&) -> Json {
                       return "The user approved the question without answering it.";
                     });
  tools.push_back(make_book_flight_tool());
  return tools;
}

}  // namespace tollgate
