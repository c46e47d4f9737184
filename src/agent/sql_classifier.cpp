// is_sql_write: does a SQLite query change the database? The `sql_writes` rule gates SQL writes
// with it, so it errs on the side of "write": anything it does not recognise is a write.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "tollgate/when_rules.h"

namespace tollgate {
namespace {

struct Token {
  std::string word;         // upper-cased keyword/identifier, or a single punctuation char
  bool paren_next = false;  // followed by '(' (a function call such as replace(...))
};

// Splits `query` into statements of tokens. Comments vanish; quoted strings and quoted
// identifiers become one opaque token "'"; semicolons end statements.
std::vector<std::vector<Token>> tokenize(std::string_view q) {
  std::vector<std::vector<Token>> statements(1);
  std::size_t i = 0;
  const std::size_t n = q.size();
  auto push = [&](std::string word) { statements.back().push_back({std::move(word), false}); };
  while (i < n) {
    const char c = q[i];
    if (c == '-' && i + 1 < n && q[i + 1] == '-') {
      while (i < n && q[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && q[i + 1] == '*') {
      const std::size_t end = q.find("*/", i + 2);
      i = end == std::string_view::npos ? n : end + 2;
    } else if (c == '\'' || c == '"' || c == '`' || c == '[') {
      const char close = c == '[' ? ']' : c;
      ++i;
      while (i < n) {
        if (q[i] == close) {
          if (close != ']' && i + 1 < n && q[i + 1] == close) {  // doubled quote
            i += 2;
            continue;
          }
          break;
        }
        ++i;
      }
      ++i;
      push("'");
    } else if (c == ';') {
      statements.emplace_back();
      ++i;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      std::string word;
      while (i < n && (std::isalnum(static_cast<unsigned char>(q[i])) || q[i] == '_')) {
        word += static_cast<char>(std::toupper(static_cast<unsigned char>(q[i])));
        ++i;
      }
      push(std::move(word));
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else {
      if (c == '(' && !statements.back().empty()) statements.back().back().paren_next = true;
      push(std::string(1, c));
      ++i;
    }
  }
  std::erase_if(statements, [](const auto& s) { return s.empty(); });
  return statements;
}

bool statement_writes(const std::vector<Token>& tokens) {
  static const std::set<std::string> kReadPragmas = {
      "TABLE_INFO",     "TABLE_XINFO",      "TABLE_LIST",      "INDEX_LIST",    "INDEX_INFO",
      "INDEX_XINFO",    "FOREIGN_KEY_LIST", "INTEGRITY_CHECK", "QUICK_CHECK",   "USER_VERSION",
      "SCHEMA_VERSION", "APPLICATION_ID",   "PAGE_COUNT",      "PAGE_SIZE",     "FREELIST_COUNT",
      "ENCODING",       "DATABASE_LIST",    "COMPILE_OPTIONS", "FUNCTION_LIST", "MODULE_LIST",
      "PRAGMA_LIST",    "COLLATION_LIST",   "JOURNAL_MODE",    "FOREIGN_KEYS",  "DATA_VERSION"};
  static const std::set<std::string> kDml = {"INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT"};
  const std::string& first = tokens.front().word;
  if (first == "SELECT" || first == "VALUES") {
    // A plain SELECT cannot write in SQLite; but stay suspicious of DML keywords after it.
    return std::any_of(tokens.begin(), tokens.end(),
                       [](const Token& t) { return kDml.count(t.word) > 0 && !t.paren_next; });
  }
  if (first == "WITH") {
    return std::any_of(tokens.begin(), tokens.end(),
                       [](const Token& t) { return kDml.count(t.word) > 0 && !t.paren_next; });
  }
  if (first == "EXPLAIN") return false;  // EXPLAIN [QUERY PLAN] never runs the statement
  if (first == "PRAGMA") {
    // PRAGMA [schema.]name [= value | (arg)]
    std::size_t k = 1;
    if (k + 1 < tokens.size() && tokens[k + 1].word == ".") k += 2;
    if (k >= tokens.size()) return true;
    const bool assigns =
        std::any_of(tokens.begin(), tokens.end(), [](const Token& t) { return t.word == "="; });
    return assigns || kReadPragmas.count(tokens[k].word) == 0;
  }
  if (first == "BEGIN" || first == "COMMIT" || first == "END" || first == "ROLLBACK" ||
      first == "SAVEPOINT" || first == "RELEASE") {
    return false;  // transaction control changes nothing by itself
  }
  return true;  // INSERT, UPDATE, DELETE, REPLACE, CREATE, DROP, ALTER, ATTACH, ... or unknown
}

}  // namespace

bool is_sql_write(std::string_view query) {
  const auto statements = tokenize(query);
  return std::any_of(statements.begin(), statements.end(), statement_writes);
}

}  // namespace tollgate
