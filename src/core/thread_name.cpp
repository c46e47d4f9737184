#include "core/thread_name.h"

#include <pthread.h>

#include <cstring>

namespace tollgate::core {

void name_this_thread(const char* name) {
#if defined(__linux__)
  char kept[16] = {};
  std::strncpy(kept, name, sizeof kept - 1);
  pthread_setname_np(pthread_self(), kept);
#else
  (void)name;
#endif
}

}  // namespace tollgate::core
