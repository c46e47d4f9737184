#include "server/thread_query.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace tollgate::server {

const std::string& thread_state_sql(sql::Dialect dialect) {
  // The rest in order of part: string_agg's ORDER BY; in SQLite group_concat as a window
  // function, which adds the rows of its frame in the window's order.
  static const std::string kSqlite =
      "(CASE WHEN state_parts > 1 THEN state_values || coalesce((SELECT group_concat(chunk, '') "
      "OVER (ORDER BY part ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM "
      "server_thread_state_parts p WHERE p.thread_id = server_threads.thread_id LIMIT 1), '') "
      "ELSE state_values END)";
  static const std::string kPostgres =
      "(CASE WHEN state_parts > 1 THEN state_values || coalesce((SELECT string_agg(chunk, '' "
      "ORDER BY part) FROM server_thread_state_parts p WHERE p.thread_id = "
      "server_threads.thread_id), '') ELSE state_values END)";
  return dialect == sql::Dialect::kPostgres ? kPostgres : kSqlite;
}

namespace {

// One term of a WHERE clause with the values of its ?.
struct Clause {
  std::string text;
  std::vector<SqlValue> args;
};

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
                     std::vector<Clause>& terms) {
  if (!subset.is_object()) return;
  for (auto it = subset.begin(); it != subset.end(); ++it) {
    Clause term;
    if (dialect == sql::Dialect::kPostgres) {
      term.text = std::string("(jsonb_typeof(") + column + "::jsonb) = 'object' AND (" + column +
                  "::jsonb -> ?::text) = ?::jsonb)";
      term.args.emplace_back(it.key());
      term.args.emplace_back(it.value().dump());
    } else {
      term.text = std::string("EXISTS (SELECT 1 FROM json_each(CASE WHEN json_type(") + column +
                  ") = 'object' THEN " + column + " END) WHERE " +
                  entry_equals(it.key(), it.value(), term.args) + ")";
    }
    terms.push_back(std::move(term));
  }
}

// The terms every visible thread meets, and the alternatives of thread_access() (the owner's
// threads; for a reviewer, those waiting for a review), of which a visible thread meets one.
// No alternative at all (and not every thread visible): nothing is visible.
struct FilterTerms {
  std::vector<Clause> all;
  std::vector<Clause> any;
  bool nothing_visible = false;
};

FilterTerms filter_terms(const ThreadFilter& filter, sql::Dialect dialect) {
  FilterTerms out;
  if (filter.status) {
    out.all.push_back({"read_status = ?", {to_string(*filter.status)}});
  }
  if (!filter.ids.empty()) {
    Clause in{"thread_id IN (", {}};
    for (std::size_t i = 0; i < filter.ids.size(); ++i) {
      in.text += i ? ",?" : "?";
      in.args.emplace_back(filter.ids[i]);
    }
    in.text += ")";
    out.all.push_back(std::move(in));
  }
  add_containment(dialect, "metadata", filter.metadata, out.all);
  add_containment(dialect, thread_state_sql(dialect).c_str(), filter.values, out.all);
  const ThreadVisibility& visible = filter.visible;
  // A reviewer sees every interrupted thread: the status filter then implies visibility.
  if (visible.all || (visible.reviewer && filter.status == ThreadStatus::kInterrupted)) return out;
  if (!visible.owner.empty()) {
    // The expression of index server_threads_by_owner in each dialect.
    out.any.push_back({dialect == sql::Dialect::kPostgres ? "(metadata::jsonb ->> 'owner') = ?"
                                                          : "json_extract(metadata, '$.owner') = ?",
                       {visible.owner}});
  }
  // The condition of index server_threads_awaiting_review (schema 10), which holds no other row.
  if (visible.reviewer) out.any.push_back({"awaiting_review = 1", {}});
  out.nothing_visible = out.any.empty();
  return out;
}

// A WHERE clause no row meets, in both dialects.
constexpr const char* kNoRow = "WHERE 1 = 0";

// "WHERE a AND b AND (c OR d)": every term of `all` and one of `any`; "" when there is none.
std::string where_of(const std::vector<Clause>& all, const std::vector<const Clause*>& any,
                     std::vector<SqlValue>& args) {
  std::vector<std::string> texts;
  for (const Clause& term : all) {
    texts.push_back(term.text);
    args.insert(args.end(), term.args.begin(), term.args.end());
  }
  if (!any.empty()) {
    std::string alternatives;
    for (std::size_t i = 0; i < any.size(); ++i) {
      alternatives += (i ? " OR " : "") + any[i]->text;
      args.insert(args.end(), any[i]->args.begin(), any[i]->args.end());
    }
    texts.push_back(any.size() == 1 ? alternatives : "(" + alternatives + ")");
  }
  std::string out;
  for (std::size_t i = 0; i < texts.size(); ++i) out += (i ? " AND " : "WHERE ") + texts[i];
  return out;
}

std::vector<const Clause*> pointers(const std::vector<Clause>& clauses) {
  std::vector<const Clause*> out;
  for (const Clause& c : clauses) out.push_back(&c);
  return out;
}

std::int64_t bounded(std::size_t n) {
  return static_cast<std::int64_t>(
      std::min<std::size_t>(n, static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())));
}

}  // namespace

ThreadFilterSql thread_filter_sql(const ThreadFilter& filter, sql::Dialect dialect) {
  FilterTerms terms = filter_terms(filter, dialect);
  ThreadFilterSql out;
  if (terms.nothing_visible) {
    out.where = kNoRow;
    return out;
  }
  out.where = where_of(terms.all, pointers(terms.any), out.args);
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
  return std::string("ORDER BY read_status") + direction + ", created_at DESC, thread_id DESC";
}

ThreadSearchSql thread_search_sql(const ThreadFilter& filter, const ThreadPage& page,
                                  const std::string& columns, sql::Dialect dialect) {
  FilterTerms terms = filter_terms(filter, dialect);
  const std::string order = thread_order_sql(page);
  ThreadSearchSql out;
  out.text = "SELECT " + columns + " FROM server_threads ";
  if (terms.nothing_visible) {
    out.text += std::string(kNoRow) + " ";
  } else if (terms.any.size() < 2) {
    out.text += where_of(terms.all, pointers(terms.any), out.args) + " ";
  } else {
    // The page lies within the first offset + limit threads of each alternative.
    const std::size_t most = std::numeric_limits<std::size_t>::max();
    const std::int64_t enough =
        bounded(page.offset > most - page.limit ? most : page.offset + page.limit);
    // A row's key: SQLite's rowid (no second lookup by thread id); PostgreSQL has none.
    const std::string key = dialect == sql::Dialect::kPostgres ? "thread_id" : "rowid";
    std::string arms;
    for (std::size_t i = 0; i < terms.any.size(); ++i) {
      if (!arms.empty()) arms += " UNION ALL ";
      arms += "SELECT " + key + " FROM (SELECT " + key + " FROM server_threads " +
              where_of(terms.all, {&terms.any[i]}, out.args) + " " + order + " LIMIT ?) AS arm" +
              std::to_string(i);
      out.args.emplace_back(enough);
    }
    out.text += "WHERE " + key + " IN (" + arms + ") ";
  }
  out.text += order + " LIMIT ? OFFSET ?";
  out.args.emplace_back(bounded(page.limit));
  out.args.emplace_back(bounded(page.offset));
  return out;
}

}  // namespace tollgate::server
