#include "server/thread_query.h"

#include <cassert>
#include <limits>

namespace tollgate::server {
namespace {

constexpr const char* kActiveRunSql =
    "EXISTS (SELECT 1 FROM server_runs r WHERE r.thread_id = server_threads.thread_id AND "
    "r.status IN ('pending', 'running'))";

// A clause that holds when a json_each row (columns key, type, atom, value) has key `key` and
// a value equal to `value` as nlohmann::json compares them (numbers by value, objects and
// arrays by their canonical text).
std::string entry_equals(const std::string& key, const Json& value, std::vector<SqlValue>& args) {
  args.emplace_back(key);
  std::string clause = "key = ? AND ";
  switch (value.type()) {
    case Json::value_t::null:
      return clause + "type = 'null'";
    case Json::value_t::boolean:
      return clause + (value.get<bool>() ? "type = 'true'" : "type = 'false'");
    case Json::value_t::number_integer:
      args.emplace_back(value.get<std::int64_t>());
      return clause + "type IN ('integer', 'real') AND atom = ?";
    case Json::value_t::number_unsigned: {
      const auto n = value.get<std::uint64_t>();
      if (n <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        args.emplace_back(static_cast<std::int64_t>(n));
      } else {
        args.emplace_back(static_cast<double>(n));
      }
      return clause + "type IN ('integer', 'real') AND atom = ?";
    }
    case Json::value_t::number_float:
      args.emplace_back(value.get<double>());
      return clause + "type IN ('integer', 'real') AND atom = ?";
    case Json::value_t::string:
      args.emplace_back(value.get<std::string>());
      return clause + "type = 'text' AND atom = ?";
    case Json::value_t::object:
    case Json::value_t::array:
      // Stored JSON is written by nlohmann (keys sorted), as is the bound text.
      args.emplace_back(value.dump());
      return clause + (value.is_object() ? "type = 'object'" : "type = 'array'") +
             " AND json(value) = json(?)";
    default:
      args.emplace_back(value.dump());
      return clause + "value = ?";
  }
}

// Each top-level key of `subset` equal in the JSON object of `column` (json_contains).
// PostgreSQL compares as jsonb does: numbers by value, objects and arrays by their contents.
void add_containment(sql::Dialect dialect, const char* column, const Json& subset,
                     std::vector<std::string>& terms, std::vector<SqlValue>& args) {
  if (!subset.is_object()) return;
  for (auto it = subset.begin(); it != subset.end(); ++it) {
    if (dialect == sql::Dialect::kPostgres) {
      terms.push_back(std::string("(jsonb_typeof(") + column + "::jsonb) = 'object' AND (" +
                      column + "::jsonb -> ?::text) = ?::jsonb)");
      args.emplace_back(it.key());
      args.emplace_back(it.value().dump());
      continue;
    }
    terms.push_back(std::string("EXISTS (SELECT 1 FROM json_each(CASE WHEN json_type(") + column +
                    ") = 'object' THEN " + column + " END) WHERE " +
                    entry_equals(it.key(), it.value(), args) + ")");
  }
}

// thread_access(): the owner's threads, and a reviewer's view of those waiting for a review
// (read status interrupted, or interrupts still listed).
std::string visibility_sql(sql::Dialect dialect, const ThreadVisibility& visible,
                           std::vector<SqlValue>& args) {
  const bool postgres = dialect == sql::Dialect::kPostgres;
  std::vector<std::string> any;
  if (!visible.owner.empty()) {
    any.emplace_back(postgres ? "(metadata::jsonb ->> 'owner') = ?"
                              : "json_extract(metadata, '$.owner') = ?");
    args.emplace_back(visible.owner);
  }
  if (visible.reviewer) {
    any.push_back(std::string("(server_threads.status = 'interrupted' AND NOT ") + kActiveRunSql +
                  ")");
    any.emplace_back(
        postgres ? "EXISTS (SELECT 1 FROM jsonb_each(CASE WHEN jsonb_typeof(interrupts::jsonb) = "
                   "'object' THEN interrupts::jsonb END) e WHERE CASE WHEN "
                   "jsonb_typeof(e.value) = 'array' THEN jsonb_array_length(e.value) > 0 ELSE "
                   "FALSE END)"
                 : "EXISTS (SELECT 1 FROM json_each(CASE WHEN json_type(interrupts) = 'object' "
                   "THEN interrupts END) WHERE type = 'array' AND json_array_length(value) > 0)");
  }
  if (any.empty()) return postgres ? "FALSE" : "0";
  std::string out = "(";
  for (std::size_t i = 0; i < any.size(); ++i) out += (i ? " OR " : "") + any[i];
  return out + ")";
}

}  // namespace

ThreadFilterSql thread_filter_sql(const ThreadFilter& filter, sql::Dialect dialect) {
  ThreadFilterSql out;
  std::vector<std::string> terms;
  if (filter.status) {
    if (*filter.status == "busy") {
      terms.push_back(std::string("(") + kActiveRunSql + " OR server_threads.status = 'busy')");
    } else {
      terms.push_back(std::string("server_threads.status = ? AND NOT ") + kActiveRunSql);
      out.args.emplace_back(*filter.status);
    }
  }
  if (!filter.ids.empty()) {
    std::string in = "thread_id IN (";
    for (std::size_t i = 0; i < filter.ids.size(); ++i) {
      in += i ? ",?" : "?";
      out.args.emplace_back(filter.ids[i]);
    }
    terms.push_back(in + ")");
  }
  add_containment(dialect, "metadata", filter.metadata, terms, out.args);
  add_containment(dialect, "state_values", filter.values, terms, out.args);
  if (!filter.visible.all) terms.push_back(visibility_sql(dialect, filter.visible, out.args));
  for (std::size_t i = 0; i < terms.size(); ++i) out.where += (i ? " AND " : "WHERE ") + terms[i];
  return out;
}

std::string thread_order_sql(const ThreadPage& page) {
  const char* direction = page.ascending ? " ASC" : " DESC";
  if (page.sort_by == "created_at" || page.sort_by == "updated_at" ||
      page.sort_by == "thread_id") {
    std::string out = "ORDER BY " + page.sort_by + direction;
    if (page.sort_by == "updated_at") out += ", created_at DESC";
    if (page.sort_by != "thread_id") out += std::string(", thread_id") + direction;
    return out;
  }
  assert(page.sort_by == "status");
  return std::string("ORDER BY ") + kThreadStatusSql + direction + ", created_at DESC, thread_id DESC";
}

}  // namespace tollgate::server
