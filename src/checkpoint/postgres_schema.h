// The PostgreSQL saver's schema (component "checkpoints" of tollgate_schema, see
// sql/migrations.h) and its numbered migrations.
//
// Version 1: the tables of the SQLite saver's version 2 (sqlite_schema.h), keys in the "C"
//            collation so that ids compare byte by byte whatever the database's locale.
#pragma once

#include <string>

#include "sql/migrations.h"

namespace tollgate::checkpoint_internal {

const sql::Schema& postgres_checkpoint_schema();

// Creates `schema` when missing (a quoted identifier; empty: nothing to create) and migrates
// the saver's tables in it. Two processes may call it at once.
void setup_postgres_checkpoint_tables(sql::Connection& connection, const std::string& schema);

}  // namespace tollgate::checkpoint_internal
