#include "sql/sqlite_vfs.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "sql/file_faults.h"

namespace tollgate::sql {
namespace {

// SQLite appends a transaction to the WAL frame by frame, each as two writes: the frame's
// 24-byte header, then its page. The VFS holds the appended bytes back and writes them with
// one system call when the commit frame's page has come (its header marks the commit), so a
// commit of N pages costs one pwrite instead of 2N. What is held back never outlives a call:
//
// - only appends are held: a 32-byte WAL header at offset 0 (a restarted log), a frame header
//   where the last append ended, and whatever continues the held bytes. A write elsewhere (a
//   page written over its own frame, the checksums SQLite rewrites after the commit frame of a
//   transaction larger than its page cache) is written at once, after the held bytes;
// - any other call on the file (read, sync, size, lock, close, ...) writes the held bytes first,
//   and fails as that write failed; so does a write the FileFaults seam fails;
// - once kFlushAt bytes are held they are written, and holding starts again (a transaction of
//   many pages is written 64 KiB at a time: the platform's VFS writes under 128 KiB a call).
//
// So when a commit returns, every frame it wrote is in the file (in the OS's cache: a process
// killed then loses nothing, as with the default VFS), and nothing else reads the file before
// its bytes are there. A held write that fails is dropped and reported: SQLite rolls back the
// transaction that wrote it (the frames after its last commit are not part of the log).
constexpr int kWalHeader = 32;
constexpr int kFrameHeader = 24;
constexpr int kFlushAt = 64 * 1024;
constexpr int kMaxWrite = 0x1ffff;  // the most the unix VFS writes in one call (it masks sizes)

// Our file: the default VFS's file lives in the bytes right after it (szOsFile covers both).
// SQLite allocates it (szOsFile), so it holds trivially copyable members only; `held` is
// malloc'd and freed by xClose.
struct ShimFile {
  sqlite3_file base;  // first: SQLite sees a ShimFile as a sqlite3_file
  sqlite3_file* real;
  const char* path;  // SQLite keeps the name valid until xClose; null for temporary files
  bool wal;          // a write-ahead log (SQLITE_OPEN_WAL)
  bool commit_next;  // the last held write was a commit frame's header: its page completes it
  unsigned char* held;
  int held_size;
  int held_capacity;
  sqlite3_int64 held_offset;
  sqlite3_int64 append_at;  // where the log's next frame goes: the end of the furthest write
};

ShimFile* shim(sqlite3_file* file) {
  return reinterpret_cast<ShimFile*>(file);
}
sqlite3_file* real(sqlite3_file* file) {
  return shim(file)->real;
}
const sqlite3_io_methods& real_methods(sqlite3_file* file) {
  return *real(file)->pMethods;
}
sqlite3_vfs* real_vfs(sqlite3_vfs* vfs) {
  return static_cast<sqlite3_vfs*>(vfs->pAppData);
}

// The result code the armed FileFaults wants for this call, or SQLITE_OK to go ahead.
int injected(sqlite3_file* file, FileOperation operation, int io_error) {
  FileFaults* faults = FileFaults::armed();
  if (faults == nullptr) return SQLITE_OK;
  const std::optional<FileFault> fault = faults->on_operation(operation, shim(file)->path);
  if (!fault) return SQLITE_OK;
  return *fault == FileFault::kDiskFull ? SQLITE_FULL : io_error;
}

// Writes the held bytes, if any; they are no longer held either way.
int write_held(sqlite3_file* file) {
  ShimFile* ours = shim(file);
  ours->commit_next = false;
  if (ours->held_size == 0) return SQLITE_OK;
  const int size = std::exchange(ours->held_size, 0);
  return real_methods(file).xWrite(real(file), ours->held, size, ours->held_offset);
}

// Every call but xWrite writes the held bytes first (and fails as that write failed).
#define WRITE_HELD_FIRST(file)                                \
  do {                                                        \
    if (const int held_rc = write_held(file)) return held_rc; \
  } while (false)

// Whether this write of the log is an append to hold back (see above).
bool holds(const ShimFile& ours, int amount, sqlite3_int64 offset) {
  if (ours.held_size > 0) return offset == ours.held_offset + ours.held_size;
  return (amount == kWalHeader && offset == 0) ||
         (amount == kFrameHeader && offset == ours.append_at);
}

// Appends a write to the held bytes; false if they would be too many for one write or memory
// ran out (nothing more held then).
bool hold(ShimFile& ours, const void* buffer, int amount, sqlite3_int64 offset) {
  const int size = ours.held_size + amount;
  if (size > kMaxWrite) return false;
  if (size > ours.held_capacity) {
    const int capacity = std::max(size, std::min(kFlushAt, 2 * ours.held_capacity + 8192));
    auto* grown = static_cast<unsigned char*>(std::realloc(ours.held, capacity));
    if (grown == nullptr) return false;
    ours.held = grown;
    ours.held_capacity = capacity;
  }
  if (ours.held_size == 0) ours.held_offset = offset;
  std::memcpy(ours.held + ours.held_size, buffer, static_cast<std::size_t>(amount));
  ours.held_size = size;
  return true;
}

// A frame header's second field is the database's size after a commit, 0 in other frames.
bool marks_commit(const void* frame_header) {
  const auto* bytes = static_cast<const unsigned char*>(frame_header);
  return (bytes[4] | bytes[5] | bytes[6] | bytes[7]) != 0;
}

int file_close(sqlite3_file* file) {
  const int held_rc = write_held(file);
  std::free(std::exchange(shim(file)->held, nullptr));
  const int rc = real_methods(file).xClose(real(file));
  return held_rc != SQLITE_OK ? held_rc : rc;
}

int file_read(sqlite3_file* file, void* buffer, int amount, sqlite3_int64 offset) {
  WRITE_HELD_FIRST(file);
  return real_methods(file).xRead(real(file), buffer, amount, offset);
}

int file_write(sqlite3_file* file, const void* buffer, int amount, sqlite3_int64 offset) {
  ShimFile* ours = shim(file);
  if (const int rc = injected(file, FileOperation::kWrite, SQLITE_IOERR_WRITE)) {
    write_held(file);  // on disk as it would be without the holding back
    return rc;
  }
  if (!ours->wal) return real_methods(file).xWrite(real(file), buffer, amount, offset);
  const bool append = holds(*ours, amount, offset);
  ours->append_at = amount == kWalHeader && offset == 0
                        ? kWalHeader  // the log starts again
                        : std::max(ours->append_at, offset + amount);
  if (!append || !hold(*ours, buffer, amount, offset)) {
    WRITE_HELD_FIRST(file);
    return real_methods(file).xWrite(real(file), buffer, amount, offset);
  }
  if (std::exchange(ours->commit_next, false)) return write_held(file);  // the commit is whole
  if (ours->held_size >= kFlushAt) return write_held(file);  // a page after it is written at once
  ours->commit_next = amount == kFrameHeader && marks_commit(buffer);
  return SQLITE_OK;
}

int file_truncate(sqlite3_file* file, sqlite3_int64 size) {
  WRITE_HELD_FIRST(file);
  if (const int rc = injected(file, FileOperation::kTruncate, SQLITE_IOERR_TRUNCATE)) return rc;
  return real_methods(file).xTruncate(real(file), size);
}

int file_sync(sqlite3_file* file, int flags) {
  WRITE_HELD_FIRST(file);
  if (const int rc = injected(file, FileOperation::kSync, SQLITE_IOERR_FSYNC)) return rc;
  return real_methods(file).xSync(real(file), flags);
}

int file_size(sqlite3_file* file, sqlite3_int64* size) {
  WRITE_HELD_FIRST(file);
  return real_methods(file).xFileSize(real(file), size);
}

int file_lock(sqlite3_file* file, int lock) {
  WRITE_HELD_FIRST(file);
  return real_methods(file).xLock(real(file), lock);
}

int file_unlock(sqlite3_file* file, int lock) {
  WRITE_HELD_FIRST(file);
  return real_methods(file).xUnlock(real(file), lock);
}

int file_check_reserved_lock(sqlite3_file* file, int* out) {
  WRITE_HELD_FIRST(file);
  return real_methods(file).xCheckReservedLock(real(file), out);
}

int file_control(sqlite3_file* file, int op, void* argument) {
  WRITE_HELD_FIRST(file);
  return real_methods(file).xFileControl(real(file), op, argument);
}

int file_sector_size(sqlite3_file* file) {
  return real_methods(file).xSectorSize(real(file));
}

int file_device_characteristics(sqlite3_file* file) {
  return real_methods(file).xDeviceCharacteristics(real(file));
}

int file_shm_map(sqlite3_file* file, int page, int page_size, int extend, void volatile** out) {
  WRITE_HELD_FIRST(file);
  return real_methods(file).xShmMap(real(file), page, page_size, extend, out);
}

int file_shm_lock(sqlite3_file* file, int offset, int n, int flags) {
  WRITE_HELD_FIRST(file);
  return real_methods(file).xShmLock(real(file), offset, n, flags);
}

void file_shm_barrier(sqlite3_file* file) {
  write_held(file);  // no result to report (a log's held bytes are written by its own calls)
  real_methods(file).xShmBarrier(real(file));
}

int file_shm_unmap(sqlite3_file* file, int delete_flag) {
  WRITE_HELD_FIRST(file);
  return real_methods(file).xShmUnmap(real(file), delete_flag);
}

int file_fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  WRITE_HELD_FIRST(file);
  return real_methods(file).xFetch(real(file), offset, amount, out);
}

int file_unfetch(sqlite3_file* file, sqlite3_int64 offset, void* pointer) {
  return real_methods(file).xUnfetch(real(file), offset, pointer);
}

// The methods of a file whose real file has methods of `version` (1 to 3): SQLite decides
// from iVersion which of them exist.
sqlite3_io_methods make_methods(int version) {
  sqlite3_io_methods methods{};
  methods.iVersion = version;
  methods.xClose = file_close;
  methods.xRead = file_read;
  methods.xWrite = file_write;
  methods.xTruncate = file_truncate;
  methods.xSync = file_sync;
  methods.xFileSize = file_size;
  methods.xLock = file_lock;
  methods.xUnlock = file_unlock;
  methods.xCheckReservedLock = file_check_reserved_lock;
  methods.xFileControl = file_control;
  methods.xSectorSize = file_sector_size;
  methods.xDeviceCharacteristics = file_device_characteristics;
  if (version >= 2) {
    methods.xShmMap = file_shm_map;
    methods.xShmLock = file_shm_lock;
    methods.xShmBarrier = file_shm_barrier;
    methods.xShmUnmap = file_shm_unmap;
  }
  if (version >= 3) {
    methods.xFetch = file_fetch;
    methods.xUnfetch = file_unfetch;
  }
  return methods;
}

const sqlite3_io_methods* methods_for(int version) {
  static const sqlite3_io_methods kMethods[] = {make_methods(1), make_methods(2), make_methods(3)};
  return &kMethods[std::clamp(version, 1, 3) - 1];
}

int vfs_open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags,
             int* out_flags) {
  ShimFile* ours = shim(file);
  ours->real = reinterpret_cast<sqlite3_file*>(ours + 1);
  ours->path = name;
  ours->wal = (flags & SQLITE_OPEN_WAL) != 0;
  ours->commit_next = false;
  ours->held = nullptr;
  ours->held_size = 0;
  ours->held_capacity = 0;
  ours->held_offset = 0;
  ours->append_at = 0;
  const int rc = real_vfs(vfs)->xOpen(real_vfs(vfs), name, ours->real, flags, out_flags);
  // SQLite calls xClose whenever pMethods is set, also after a failed open.
  const sqlite3_io_methods* methods = ours->real->pMethods;
  file->pMethods = methods != nullptr ? methods_for(methods->iVersion) : nullptr;
  return rc;
}

int vfs_delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  return real_vfs(vfs)->xDelete(real_vfs(vfs), name, sync_dir);
}

int vfs_access(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  return real_vfs(vfs)->xAccess(real_vfs(vfs), name, flags, out);
}

int vfs_full_pathname(sqlite3_vfs* vfs, const char* name, int size, char* out) {
  return real_vfs(vfs)->xFullPathname(real_vfs(vfs), name, size, out);
}

void* vfs_dl_open(sqlite3_vfs* vfs, const char* name) {
  return real_vfs(vfs)->xDlOpen(real_vfs(vfs), name);
}

void vfs_dl_error(sqlite3_vfs* vfs, int size, char* out) {
  real_vfs(vfs)->xDlError(real_vfs(vfs), size, out);
}

void (*vfs_dl_sym(sqlite3_vfs* vfs, void* handle, const char* symbol))(void) {
  return real_vfs(vfs)->xDlSym(real_vfs(vfs), handle, symbol);
}

void vfs_dl_close(sqlite3_vfs* vfs, void* handle) {
  real_vfs(vfs)->xDlClose(real_vfs(vfs), handle);
}

int vfs_randomness(sqlite3_vfs* vfs, int size, char* out) {
  return real_vfs(vfs)->xRandomness(real_vfs(vfs), size, out);
}

int vfs_sleep(sqlite3_vfs* vfs, int microseconds) {
  return real_vfs(vfs)->xSleep(real_vfs(vfs), microseconds);
}

int vfs_current_time(sqlite3_vfs* vfs, double* out) {
  return real_vfs(vfs)->xCurrentTime(real_vfs(vfs), out);
}

int vfs_get_last_error(sqlite3_vfs* vfs, int size, char* out) {
  return real_vfs(vfs)->xGetLastError(real_vfs(vfs), size, out);
}

int vfs_current_time_int64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  return real_vfs(vfs)->xCurrentTimeInt64(real_vfs(vfs), out);
}

int vfs_set_system_call(sqlite3_vfs* vfs, const char* name, sqlite3_syscall_ptr call) {
  return real_vfs(vfs)->xSetSystemCall(real_vfs(vfs), name, call);
}

sqlite3_syscall_ptr vfs_get_system_call(sqlite3_vfs* vfs, const char* name) {
  return real_vfs(vfs)->xGetSystemCall(real_vfs(vfs), name);
}

const char* vfs_next_system_call(sqlite3_vfs* vfs, const char* name) {
  return real_vfs(vfs)->xNextSystemCall(real_vfs(vfs), name);
}

// A VFS over `base` offering what `base` offers (its iVersion decides which of the optional
// methods SQLite may call).
sqlite3_vfs make_vfs(sqlite3_vfs* base) {
  sqlite3_vfs vfs{};
  vfs.iVersion = std::min(base->iVersion, 3);
  vfs.szOsFile = static_cast<int>(sizeof(ShimFile)) + base->szOsFile;
  vfs.mxPathname = base->mxPathname;
  vfs.zName = "tollgate";
  vfs.pAppData = base;
  vfs.xOpen = vfs_open;
  vfs.xDelete = vfs_delete;
  vfs.xAccess = vfs_access;
  vfs.xFullPathname = vfs_full_pathname;
  vfs.xDlOpen = vfs_dl_open;
  vfs.xDlError = vfs_dl_error;
  vfs.xDlSym = vfs_dl_sym;
  vfs.xDlClose = vfs_dl_close;
  vfs.xRandomness = vfs_randomness;
  vfs.xSleep = vfs_sleep;
  vfs.xCurrentTime = vfs_current_time;
  vfs.xGetLastError = vfs_get_last_error;
  if (vfs.iVersion >= 2) vfs.xCurrentTimeInt64 = vfs_current_time_int64;
  if (vfs.iVersion >= 3) {
    vfs.xSetSystemCall = vfs_set_system_call;
    vfs.xGetSystemCall = vfs_get_system_call;
    vfs.xNextSystemCall = vfs_next_system_call;
  }
  return vfs;
}

}  // namespace

bool configure_sqlite() {
  static const bool taken = [] {
    // No allocation statistics: nothing reads them, and they take a process-wide mutex at
    // every malloc and free of every connection.
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
  }();
  return taken;
}

const char* tollgate_vfs_name() {
  static const char* const name = []() -> const char* {
    configure_sqlite();
    sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
    if (base == nullptr) return nullptr;
    static sqlite3_vfs vfs = make_vfs(base);
    return sqlite3_vfs_register(&vfs, /*makeDflt=*/0) == SQLITE_OK ? vfs.zName : nullptr;
  }();
  return name;
}

}  // namespace tollgate::sql
