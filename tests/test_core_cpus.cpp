// core/cpus.h: the --jobs default counts the CPUs this process may use (affinity mask,
// capped by SLURM_CPUS_PER_TASK), not the machine's.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "cli_helpers.h"
#include "core/cpus.h"
#include "kept_variable.h"

namespace attn {
namespace {

TEST(CoreCpus, AffinityMaskBeforeOnlineCpusAndSlurmCapsIt) {
  EXPECT_EQ(cpus_choose(nullptr, 3, 64), 3);    // taskset -c 0-2 on a 64-CPU machine
  EXPECT_EQ(cpus_choose(nullptr, 0, 64), 64);   // mask unknown: the machine
  EXPECT_EQ(cpus_choose(nullptr, 0, 0), 1);
  EXPECT_EQ(cpus_choose("4", 64, 64), 4);       // Slurm without core binding (task/none)
  EXPECT_EQ(cpus_choose("4", 2, 64), 2);        // a mask narrower than the allocation
  EXPECT_EQ(cpus_choose("4", 0, 64), 4);
  EXPECT_EQ(cpus_choose("", 3, 64), 3);         // set but empty, or malformed: ignored
  EXPECT_EQ(cpus_choose("four", 3, 64), 3);
  EXPECT_EQ(cpus_choose("0", 3, 64), 3);
  EXPECT_EQ(cpus_choose("2x", 3, 64), 3);
}

// In a child pinned to one CPU, the count is 1 whatever the machine has; SLURM_CPUS_PER_TASK
// lowers the count of the unpinned process.
TEST(CoreCpus, FollowsTheAffinityMaskAndSlurmCpusPerTask) {
  ASSERT_GE(cpus_affinity_count(), 1);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    unsetenv("SLURM_CPUS_PER_TASK");
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(3);
    _exit(cpus_affinity_count() == 1 && cpus_available() == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  const test::KeptVariable slurm("SLURM_CPUS_PER_TASK");
  slurm.set("1");
  EXPECT_EQ(cpus_available(), 1);
}

// The CLI's --jobs defaults come from it (run and reproduce print them in --help).
TEST(CoreCpus, RunAndReproduceDefaultJobsToTheAllocation) {
  const test::KeptVariable slurm("SLURM_CPUS_PER_TASK");
  for (const char* value : {"1", "7"}) {
    slurm.set(value);
    const int expected = cpus_available();
    ASSERT_LE(expected, 7);
    for (const char* cmd : {"run", "reproduce"}) {
      const auto help = test::cli_run(std::string(cmd) + " --help");
      ASSERT_EQ(help.exit_code, 0) << help.out;
      const size_t at = help.out.find("--jobs");
      ASSERT_NE(at, std::string::npos) << help.out;
      const std::string line = help.out.substr(at, help.out.find('\n', at) - at);
      EXPECT_NE(line.find("INT=" + std::to_string(expected) + " "), std::string::npos)
          << cmd << " with SLURM_CPUS_PER_TASK=" << value << ": " << line;
    }
  }
}

}  // namespace
}  // namespace attn
