// Counters a saver keeps about what it stored, so benchmarks and tests can report bytes per
// step. Saver::stats() returns them (the memory and SQLite savers count; zeros otherwise).
#pragma once

#include <cstdint>

namespace tollgate {

struct SaverStats {
  std::uint64_t bytes_written = 0;         // encoded bytes of everything stored (see below)
  std::uint64_t value_bytes_written = 0;   // of which channel values (full or delta)
  std::uint64_t checkpoints_written = 0;   // put() calls
  std::uint64_t full_values_written = 0;   // channel values stored whole
  std::uint64_t delta_values_written = 0;  // channel values stored as a ListDelta
  std::uint64_t writes_written = 0;        // pending writes stored (put_writes items)
};

}  // namespace tollgate
