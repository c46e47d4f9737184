// Names for the threads a process runs, as `top -H`, `ps -L`, perf and gdb show them.
#pragma once

namespace tollgate::core {

// Names the calling thread `name` (on Linux at most 15 characters are kept). Does nothing where
// threads cannot be named.
void name_this_thread(const char* name);

}  // namespace tollgate::core
