// libFuzzer target for the TOML spec loader (experiment/spec.cpp, spec_tree.cpp,
// spec_outputs.cpp) and plan validation (experiment/plan.cpp, through every task's and
// model's parameter checks): any byte string is loaded as a spec file, with and without
// --quick, and a spec that loads is expanded into its validated plan. A loader must either
// accept the input or throw attn::UserError: a crash, an ASan/UBSan report, an abort or
// another exception is a bug. Seeds: fuzz/corpus/spec_fuzz/ (the shipped specs and small
// hand-written ones); dictionary: fuzz/spec_fuzz.dict.
//
// Plans above kMaxPoints points are not expanded here (the count is checked first): the
// fuzzer finds huge grids at once, and expanding one is a slow run, not a crash.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "experiment/plan.h"
#include "experiment/spec.h"
#include "fuzz_file.h"

namespace {

constexpr uint64_t kMaxPoints = 100;

uint64_t point_count(const attn::Spec& spec) {
  uint64_t n = spec.seeds.size();
  for (const auto& axis : spec.axes) {
    const uint64_t k = axis.values.size();
    if (k != 0 && n > kMaxPoints / k) return kMaxPoints + 1;
    n *= k;
  }
  return n;
}

void load(const std::string& path, bool quick) {
  try {
    const attn::Spec spec = attn::spec_load(path, {}, quick);
    (void)attn::spec_runs_json(spec);
    (void)attn::spec_to_json(spec);
    if (point_count(spec) <= kMaxPoints) (void)attn::plan_make(spec);
  } catch (const attn::UserError&) {
    // a refused spec: fine
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = attn_fuzz::fuzz_file(data, size);
  load(path, false);
  load(path, true);
  return 0;
}
