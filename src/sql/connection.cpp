#include "sql/connection.h"

#include <cassert>

namespace tollgate::sql {

Transaction::Transaction(Connection& connection, TransactionKind kind) : connection_(connection) {
  connection_.begin(kind);
  open_ = true;
}

Transaction::~Transaction() {
  if (open_) connection_.rollback();
}

void Transaction::commit() {
  assert(open_);
  connection_.commit();
  open_ = false;
}

void Transaction::commit_after(Statement& last) {
  assert(open_);
  connection_.commit_after(last);
  open_ = false;
}

}  // namespace tollgate::sql
