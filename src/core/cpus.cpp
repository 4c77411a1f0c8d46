// CPUs this process may use (Slurm allocation, affinity mask, online CPUs).
#include "core/cpus.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace attn {

int cpus_choose(const char* slurm_cpus_per_task, int affinity, int online) {
  int cpus = affinity >= 1 ? affinity : std::max(online, 1);
  if (slurm_cpus_per_task != nullptr && *slurm_cpus_per_task != '\0') {
    char* end = nullptr;
    const long k = std::strtol(slurm_cpus_per_task, &end, 10);
    if (*end == '\0' && k >= 1 && k < cpus) cpus = static_cast<int>(k);
  }
  return cpus;
}

int cpus_affinity_count() {
  // Grow the mask until it holds every CPU the kernel knows of (machines beyond 1024 CPUs).
  for (int size = 1024; size <= 1 << 20; size *= 2) {
    cpu_set_t* set = CPU_ALLOC(size);
    if (set == nullptr) return 0;
    const size_t bytes = CPU_ALLOC_SIZE(size);
    CPU_ZERO_S(bytes, set);
    const int rc = sched_getaffinity(0, bytes, set);
    const int count = rc == 0 ? CPU_COUNT_S(bytes, set) : 0;
    CPU_FREE(set);
    if (rc == 0) return count;
    if (errno != EINVAL) return 0;
  }
  return 0;
}

int cpus_available() {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return cpus_choose(std::getenv("SLURM_CPUS_PER_TASK"), cpus_affinity_count(),
                     online >= 1 ? static_cast<int>(online) : 1);
}

}  // namespace attn
