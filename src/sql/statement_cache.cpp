#include "sql/statement_cache.h"

#include <cctype>

#include "sql/postgres_connection.h"

namespace tollgate::sql {

std::string dialect_text(Dialect dialect, std::string_view portable) {
  if (dialect == Dialect::kSqlite) return std::string(portable);
  std::string out;
  out.reserve(portable.size() + 16);
  int next = 1;
  bool in_literal = false;
  for (std::size_t i = 0; i < portable.size(); ++i) {
    const char c = portable[i];
    if (c == '\'') in_literal = !in_literal;  // '' inside a literal toggles twice
    if (c != '?' || in_literal) {
      out += c;
      continue;
    }
    std::size_t end = i + 1;
    while (end < portable.size() && std::isdigit(static_cast<unsigned char>(portable[end]))) ++end;
    if (end > i + 1) {
      out += '$';
      out.append(portable.substr(i + 1, end - i - 1));
      i = end - 1;
    } else {
      out += '$' + std::to_string(next++);
    }
  }
  return out;
}

std::unique_ptr<Statement> prepare_once(Connection& connection, std::string_view portable) {
  return connection.prepare(dialect_text(connection.dialect(), portable));
}

Statement& StatementCache::get(std::string_view portable) {
  auto it = statements_.find(portable);
  if (it != statements_.end()) return *it->second;
  std::unique_ptr<Statement> statement;
  if (connection_.dialect() == Dialect::kPostgres) {
    statement = std::make_unique<PostgresStatement>(
        static_cast<PostgresConnection&>(connection_),
        dialect_text(Dialect::kPostgres, portable), PostgresStatement::kNamed);
  } else {
    statement = connection_.prepare(portable);  // SQLite statements stay prepared
  }
  return *statements_.emplace(std::string(portable), std::move(statement)).first->second;
}

}  // namespace tollgate::sql
