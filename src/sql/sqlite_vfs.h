// Tollgate's SQLite VFS ("tollgate"): the platform's default VFS with every call passed
// through, and each xWrite, xSync and xTruncate first checked against the armed FileFaults
// (file_faults.h), the test seam that makes exactly the Nth of them fail. SqliteConnection
// opens every database file through it. One thing it does differently: SQLite appends a
// transaction to the WAL as two writes per page (a 24-byte frame header, then the page), and
// the VFS writes the transaction with one system call once its commit frame is whole (any
// other call on the file writes what is held first; sqlite_vfs.cpp says exactly when).
#pragma once

namespace tollgate::sql {

// Process-wide SQLite settings, which SQLite takes only before it initialises (at the first
// connection opened, or the first VFS looked up): a process calls this first. Thread-safe;
// tollgate_vfs_name() calls it too. Returns whether SQLite took them (at the first call; it
// refuses them, harmlessly, once initialised).
bool configure_sqlite();

// The VFS's name for sqlite3_open_v2, registered (not as the default) on the first call.
// Thread-safe. Null, meaning the default VFS, in the unlikely case registration failed.
const char* tollgate_vfs_name();

}  // namespace tollgate::sql
