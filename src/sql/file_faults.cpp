#include "sql/file_faults.h"

#include <cassert>
#include <cstring>
#include <utility>

namespace tollgate::sql {

std::uint64_t FileOperationCounts::of(FileOperation operation) const {
  switch (operation) {
    case FileOperation::kWrite:
      return writes;
    case FileOperation::kSync:
      return syncs;
    case FileOperation::kTruncate:
      return truncates;
  }
  return 0;
}

FileFaults::FileFaults(FaultPlan plan) : plan_(std::move(plan)) {
  FileFaults* none = nullptr;
  [[maybe_unused]] const bool armed = armed_.compare_exchange_strong(none, this);
  assert(armed && "another FileFaults is armed");
}

FileFaults::~FileFaults() {
  FileFaults* self = this;
  armed_.compare_exchange_strong(self, nullptr);
}

FileOperationCounts FileFaults::counts() const {
  return {writes_.load(), syncs_.load(), truncates_.load()};
}

std::optional<FileFault> FileFaults::on_operation(FileOperation operation, const char* path) {
  if (!plan_.path_prefix.empty() &&
      (path == nullptr ||
       std::strncmp(path, plan_.path_prefix.c_str(), plan_.path_prefix.size()) != 0)) {
    return std::nullopt;
  }
  std::atomic<std::uint64_t>& counter = operation == FileOperation::kWrite  ? writes_
                                        : operation == FileOperation::kSync ? syncs_
                                                                            : truncates_;
  const std::uint64_t n = counter.fetch_add(1) + 1;
  if (operation != plan_.operation || n != plan_.fail_at || fired_.exchange(true)) {
    return std::nullopt;
  }
  return plan_.fault;
}

}  // namespace tollgate::sql
