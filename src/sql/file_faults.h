// A test seam at the bottom of the storage: makes the Nth write, sync or truncate of the
// database files fail once, as SQLite's own test VFS does, so that a test can fail exactly
// the I/O it means to instead of killing a process at a random moment.
//
// Every SQLite file Tollgate opens goes through its VFS (sqlite_vfs.h), which asks the armed
// FileFaults, if any, before each xWrite, xSync and xTruncate. While none is armed that costs
// one atomic pointer load per call.
//
//   sql::FileFaults faults({.path_prefix = dir, .operation = sql::FileOperation::kSync,
//                           .fail_at = 3});
//   ... run: the 3rd sync of a file under `dir` since arming fails with SQLITE_IOERR_FSYNC
//   faults.counts();  // writes, syncs and truncates seen so far
//
// Thread-safety: the VFS consults the armed instance from any thread; counts() and fired()
// may be called concurrently. One instance is armed at a time per process; destroy it only
// while no I/O is in flight (between the operations of a test).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace tollgate::sql {

enum class FileOperation { kWrite, kSync, kTruncate };

enum class FileFault {
  kIoError,   // SQLITE_IOERR_WRITE / _FSYNC / _TRUNCATE
  kDiskFull,  // SQLITE_FULL
};

struct FileOperationCounts {
  std::uint64_t writes = 0;
  std::uint64_t syncs = 0;
  std::uint64_t truncates = 0;
  std::uint64_t of(FileOperation operation) const;
};

struct FaultPlan {
  // Only the files whose path starts with this are counted (and failed); "": every file.
  std::string path_prefix{};
  FileOperation operation = FileOperation::kWrite;
  // The fail_at-th call of `operation` counted since arming fails, once; 0: none (count only).
  std::uint64_t fail_at = 0;
  FileFault fault = FileFault::kIoError;
};

class FileFaults {
 public:
  // Arms the seam with `plan` until destroyed.
  explicit FileFaults(FaultPlan plan);
  ~FileFaults();
  FileFaults(const FileFaults&) = delete;
  FileFaults& operator=(const FileFaults&) = delete;

  FileOperationCounts counts() const;
  bool fired() const { return fired_.load(); }

  // For the VFS: the armed instance, or null (the common case).
  static FileFaults* armed() { return armed_.load(std::memory_order_acquire); }
  // For the VFS: counts the call; the fault it must report instead of doing it, if any.
  std::optional<FileFault> on_operation(FileOperation operation, const char* path);

 private:
  static inline std::atomic<FileFaults*> armed_{nullptr};

  const FaultPlan plan_;
  std::atomic<std::uint64_t> writes_{0}, syncs_{0}, truncates_{0};
  std::atomic<bool> fired_{false};
};

}  // namespace tollgate::sql
