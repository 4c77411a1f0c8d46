// OpenBLAS's kernels on a CPU it does not know (core/blas_core.h): only a fallback without
// AVX on a CPU with AVX or wider is replaced, the command line loads the replacement, and a
// user's OPENBLAS_CORETYPE is kept.
#include <gtest/gtest.h>

#include <string>

#include "cli_helpers.h"
#include "core/blas_core.h"

namespace attn {
namespace {

TEST(BlasCore, OnlyAFallbackWithoutAvxIsReplaced) {
  // What Debian 12's OpenBLAS loads on an Intel model it does not know, on each CPU width.
  EXPECT_EQ(blas_core_upgrade("Prescott", CpuVectors::avx512), "SkylakeX");
  EXPECT_EQ(blas_core_upgrade("Prescott", CpuVectors::avx2), "Haswell");
  EXPECT_EQ(blas_core_upgrade("Prescott", CpuVectors::avx), "Sandybridge");
  EXPECT_EQ(blas_core_upgrade("Prescott", CpuVectors::none), "");
  EXPECT_EQ(blas_core_upgrade("PRESCOTT", CpuVectors::avx512), "SkylakeX");  // case ignored
  for (const char* old : {"Core2", "Nehalem", "Atom", "Barcelona", "Opteron_SSE3", "Bobcat"})
    EXPECT_EQ(blas_core_upgrade(old, CpuVectors::avx2), "Haswell") << old;
  // A core OpenBLAS chose for what it recognised stays, even below the CPU's width.
  for (const char* known : {"Sandybridge", "Haswell", "Zen", "SkylakeX", "Cooperlake",
                            "SapphireRapids", "Bulldozer", "Excavator"})
    EXPECT_EQ(blas_core_upgrade(known, CpuVectors::avx512), "") << known;
  EXPECT_EQ(blas_core_upgrade("unknown", CpuVectors::avx512), "");
  EXPECT_EQ(blas_core_upgrade("", CpuVectors::avx512), "");
  EXPECT_EQ(blas_core_upgrade(nullptr, CpuVectors::avx512), "");
}

// The core `attnlab --version` reports (its second line) with OPENBLAS_CORETYPE set to
// `setting` (unset when null).
std::string cli_core(const char* setting) {
  const std::string env = setting == nullptr
                              ? std::string("env -u OPENBLAS_CORETYPE ")
                              : std::string("env OPENBLAS_CORETYPE=") + setting + " ";
  const test::CliResult r = test::shell(env + test_cli_path() + " --version");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const std::string key = "OpenBLAS core ";
  const size_t at = r.out.find(key);
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size();
  return r.out.substr(begin, r.out.find(',', begin) - begin);
}

TEST(BlasCore, TheCommandLineRunsKernelsTheCpuRuns) {
  // Unset: whatever OpenBLAS picked, never one of its fallbacks without AVX on a CPU with AVX
  // (on Debian 12's OpenBLAS and an Intel model 207 this loaded Prescott before the change).
  const std::string core = cli_core(nullptr);
  ASSERT_FALSE(core.empty());
  EXPECT_EQ(blas_core_upgrade(core.c_str(), cpu_vectors()), "") << core;
  // A user's choice is kept, even a slow one.
  EXPECT_EQ(cli_core("Prescott"), "Prescott");
  EXPECT_EQ(cli_core("Haswell"), "Haswell");
}

}  // namespace
}  // namespace attn
