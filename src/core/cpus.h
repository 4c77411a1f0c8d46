// The CPUs this process may use: the default for --jobs.
//
// On a cluster node or in a container the machine's CPU count overstates what a job may
// use. cpus_available() counts the CPUs in this process's affinity mask (sched_getaffinity:
// taskset, numactl, cpusets, Slurm's task/affinity), or the machine's online CPUs where
// the mask is unknown; SLURM_CPUS_PER_TASK, when it is a whole number >= 1, caps it
// (Slurm's allocation, which holds also where Slurm does not bind tasks to cores). A
// malformed SLURM_CPUS_PER_TASK is ignored. Always >= 1.
#pragma once

namespace attn {

int cpus_available();

// The rule above on given inputs (for tests): `slurm_cpus_per_task` is the variable's
// text or null when unset; `affinity` the mask's CPU count, or 0 where unknown; `online`
// the machine's online CPUs.
int cpus_choose(const char* slurm_cpus_per_task, int affinity, int online);

// CPUs in this process's affinity mask, or 0 if sched_getaffinity fails.
int cpus_affinity_count();

}  // namespace attn
