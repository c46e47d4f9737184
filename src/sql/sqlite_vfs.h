// Tollgate's SQLite VFS ("tollgate"): the platform's default VFS with every call passed
// through, and each xWrite, xSync and xTruncate first checked against the armed FileFaults
// (file_faults.h), the test seam that makes exactly the Nth of them fail. SqliteConnection
// opens every database file through it. One thing it does differently: SQLite appends a WAL
// frame as two writes (its 24-byte header, then the page), and the VFS writes both with one
// system call, holding the header back until the page follows (any other call on the file
// writes a held header first).
#pragma once

namespace tollgate::sql {

// The VFS's name for sqlite3_open_v2, registered (not as the default) on the first call.
// Thread-safe. Null, meaning the default VFS, in the unlikely case registration failed.
const char* tollgate_vfs_name();

}  // namespace tollgate::sql
