// How a spec differs from the one whose runs a store holds (meta spec_runs, spec_runs_json):
// only in its grid (the values of its axes, its seeds), so every stored run keeps its meaning
// and the directory can grow or shrink, or in a key that changes what a stored run means (a
// fixed value, a scoped value, which keys are swept), which refuses the directory.
#pragma once

#include <string>

namespace attn {

struct SpecChange {
  // The first key whose change alters what the stored runs mean, as
  // "train.steps: stored 600, now 400"; "" when only the grid differs (or nothing).
  std::string key;
  // The grid's changes, as "model.m: [1, 4, 16] -> [1, 4, 8, 16]; seeds: [0] -> [0, 1]"
  // ("" when the grids are equal).
  std::string grid;
};

// Compares two spec_runs_json texts. `stored` that cannot be read (a store from before
// spec_runs was recorded) gives key = "the stored runs' spec is not recorded".
SpecChange spec_change(const std::string& stored, const std::string& now);

}  // namespace attn
