#include "sql/sqlite_vfs.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "sql/file_faults.h"

namespace tollgate::sql {
namespace {

// SQLite appends a frame to the WAL as two writes: its 24-byte header, then the page right
// after it. The VFS holds the header back and writes both with one system call (a WAL frame
// costs one pwrite instead of two). Any other call on the file, or a write elsewhere, first
// writes a held header, so the file is never read or synced without it.
constexpr int kWalFrameHeader = 24;

// Our file: the default VFS's file lives in the bytes right after it (szOsFile covers both).
// SQLite allocates it (szOsFile), so it holds trivially copyable members only.
struct ShimFile {
  sqlite3_file base;  // first: SQLite sees a ShimFile as a sqlite3_file
  sqlite3_file* real;
  const char* path;  // SQLite keeps the name valid until xClose; null for temporary files
  bool wal;          // a write-ahead log (SQLITE_OPEN_WAL)
  int held;          // bytes of a frame header held back (0 or kWalFrameHeader)
  sqlite3_int64 held_offset;
  unsigned char header[kWalFrameHeader];
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

// Writes a held frame header; SQLITE_OK when none was held.
int write_held(sqlite3_file* file) {
  ShimFile* ours = shim(file);
  if (ours->held == 0) return SQLITE_OK;
  const int amount = std::exchange(ours->held, 0);
  const int rc = real_methods(file).xWrite(real(file), ours->header, amount, ours->held_offset);
  if (rc != SQLITE_OK) ours->held = amount;  // still held: the next call tries again
  return rc;
}

// Every call but xWrite writes a held header first (and fails as that write failed).
#define WRITE_HELD_FIRST(file)                                \
  do {                                                        \
    if (const int held_rc = write_held(file)) return held_rc; \
  } while (false)

int file_close(sqlite3_file* file) {
  const int held_rc = write_held(file);
  const int rc = real_methods(file).xClose(real(file));
  return held_rc != SQLITE_OK ? held_rc : rc;
}

int file_read(sqlite3_file* file, void* buffer, int amount, sqlite3_int64 offset) {
  WRITE_HELD_FIRST(file);
  return real_methods(file).xRead(real(file), buffer, amount, offset);
}

int file_write(sqlite3_file* file, const void* buffer, int amount, sqlite3_int64 offset) {
  ShimFile* ours = shim(file);
  const bool follows_held = ours->held > 0 && offset == ours->held_offset + ours->held;
  if (!follows_held) WRITE_HELD_FIRST(file);
  if (const int rc = injected(file, FileOperation::kWrite, SQLITE_IOERR_WRITE)) {
    write_held(file);  // on disk as it would be without the holding back
    return rc;
  }
  if (ours->wal && ours->held == 0 && amount == kWalFrameHeader) {
    std::memcpy(ours->header, buffer, kWalFrameHeader);
    ours->held = kWalFrameHeader;
    ours->held_offset = offset;
    return SQLITE_OK;
  }
  if (!follows_held) return real_methods(file).xWrite(real(file), buffer, amount, offset);
  thread_local std::vector<unsigned char> frame;
  frame.resize(static_cast<std::size_t>(ours->held) + static_cast<std::size_t>(amount));
  std::memcpy(frame.data(), ours->header, static_cast<std::size_t>(ours->held));
  std::memcpy(frame.data() + ours->held, buffer, static_cast<std::size_t>(amount));
  const sqlite3_int64 at = ours->held_offset;
  ours->held = 0;
  return real_methods(file).xWrite(real(file), frame.data(), static_cast<int>(frame.size()), at);
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
  write_held(file);  // no result to report: a header that failed to write stays held
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
  ours->held = 0;
  ours->held_offset = 0;
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

const char* tollgate_vfs_name() {
  static const char* const name = []() -> const char* {
    sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
    if (base == nullptr) return nullptr;
    static sqlite3_vfs vfs = make_vfs(base);
    return sqlite3_vfs_register(&vfs, /*makeDflt=*/0) == SQLITE_OK ? vfs.zName : nullptr;
  }();
  return name;
}

}  // namespace tollgate::sql
