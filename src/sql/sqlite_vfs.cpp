#include "sql/sqlite_vfs.h"

#include <sqlite3.h>

#include <algorithm>

#include "sql/file_faults.h"

namespace tollgate::sql {
namespace {

// Our file: the default VFS's file lives in the bytes right after it (szOsFile covers both).
struct ShimFile {
  sqlite3_file base;  // first: SQLite sees a ShimFile as a sqlite3_file
  sqlite3_file* real;
  const char* path;  // SQLite keeps the name valid until xClose; null for temporary files
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

int file_close(sqlite3_file* file) {
  return real_methods(file).xClose(real(file));
}

int file_read(sqlite3_file* file, void* buffer, int amount, sqlite3_int64 offset) {
  return real_methods(file).xRead(real(file), buffer, amount, offset);
}

int file_write(sqlite3_file* file, const void* buffer, int amount, sqlite3_int64 offset) {
  if (const int rc = injected(file, FileOperation::kWrite, SQLITE_IOERR_WRITE)) return rc;
  return real_methods(file).xWrite(real(file), buffer, amount, offset);
}

int file_truncate(sqlite3_file* file, sqlite3_int64 size) {
  if (const int rc = injected(file, FileOperation::kTruncate, SQLITE_IOERR_TRUNCATE)) return rc;
  return real_methods(file).xTruncate(real(file), size);
}

int file_sync(sqlite3_file* file, int flags) {
  if (const int rc = injected(file, FileOperation::kSync, SQLITE_IOERR_FSYNC)) return rc;
  return real_methods(file).xSync(real(file), flags);
}

int file_size(sqlite3_file* file, sqlite3_int64* size) {
  return real_methods(file).xFileSize(real(file), size);
}

int file_lock(sqlite3_file* file, int lock) {
  return real_methods(file).xLock(real(file), lock);
}

int file_unlock(sqlite3_file* file, int lock) {
  return real_methods(file).xUnlock(real(file), lock);
}

int file_check_reserved_lock(sqlite3_file* file, int* out) {
  return real_methods(file).xCheckReservedLock(real(file), out);
}

int file_control(sqlite3_file* file, int op, void* argument) {
  return real_methods(file).xFileControl(real(file), op, argument);
}

int file_sector_size(sqlite3_file* file) {
  return real_methods(file).xSectorSize(real(file));
}

int file_device_characteristics(sqlite3_file* file) {
  return real_methods(file).xDeviceCharacteristics(real(file));
}

int file_shm_map(sqlite3_file* file, int page, int page_size, int extend, void volatile** out) {
  return real_methods(file).xShmMap(real(file), page, page_size, extend, out);
}

int file_shm_lock(sqlite3_file* file, int offset, int n, int flags) {
  return real_methods(file).xShmLock(real(file), offset, n, flags);
}

void file_shm_barrier(sqlite3_file* file) {
  real_methods(file).xShmBarrier(real(file));
}

int file_shm_unmap(sqlite3_file* file, int delete_flag) {
  return real_methods(file).xShmUnmap(real(file), delete_flag);
}

int file_fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
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
