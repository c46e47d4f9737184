// The heap of Tollgate's executables: jemalloc (linked by tollgate_use_allocator in the top-level
// CMakeLists.txt when libjemalloc is found; the libraries leave the choice to the application).
//
// Why: a run allocates and frees many small JSON nodes, and a saver keeps what a thread needs
// to resume. Measured on the agent HITL cycle (bench/README.md), glibc malloc spent most of the
// time in _int_malloc and in the kernel faulting fresh heap pages in; jemalloc's thread caches
// and a heap on transparent huge pages (one fault per 2 MiB instead of per 4 KiB) cut that.
//
// jemalloc reads `malloc_conf` at start-up; MALLOC_CONF in the environment overrides it.
#include <jemalloc/jemalloc.h>

extern "C" {
// thp:always        — ask for transparent huge pages on the heap's memory (madvise), also when
//                     the system's THP mode is "madvise";
// metadata_thp:auto — and for jemalloc's own metadata once it grows;
// background_thread — return freed memory to the system from jemalloc's own thread instead of
//                     inline in whichever allocation crosses the decay deadline (that inline
//                     purge was the agent cycle's tail: 5,400–9,000 against 7,200–10,100
//                     cycles/s with it, four runs each, bench/README.md).
const char* malloc_conf = "thp:always,metadata_thp:auto,background_thread:true";
}
