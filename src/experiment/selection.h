// Selection on validation (a spec's [select], SelectSpec in spec.h): a reading of stored runs,
// never a change to what runs.
//
// The swept keys split into the selected axes (chosen on validation) and the reported keys.
// A group is one seed and one value of every reported key; its candidates are its runs (one
// per value of the selected axes). A candidate is eligible when its status is ok, its `by`
// metric (a validation metric, val_*) is stored and finite, and, under a budget, its n_params
// is stored and at most max_params. The chosen run is the eligible candidate with the smallest
// `by`; ties go to the candidate earliest in the plan (the smallest point index), so the choice
// does not depend on the order runs were stored. Test metrics are never read: a chosen run's
// test metrics are reported as they are. A group without an eligible candidate has no chosen
// run: its row says so, and claims see it as one failed run (as every candidate failed).
//
// A selected key that does not apply to a run (its value is "" in the store, e.g. model.width
// at an attention point) is not an axis for that run: the run's group is formed by the reported
// keys alone, and its chosen value there is "".
//
// Shapes: rows in group order (the first candidate's plan order); each row's candidates in
// plan order, which is the validation curve over the selected axes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/spec.h"
#include "experiment/store.h"

namespace attn {

struct SelectionCandidate {
  const StoredRun* run = nullptr;
  std::vector<std::string> values;  // its value of each selected axis ("" where it has none)
  double by = 0;                    // its validation metric (NaN when not stored)
  double n_params = 0;              // its parameter count (NaN when not stored)
  bool eligible = false;
  std::string why;  // when not eligible: "failed", "no val_loss", "n_params 2e5 > 1e5"
};

struct SelectedRow {
  uint64_t seed = 0;
  std::vector<std::string> reported;           // its value of each reported key
  std::vector<SelectionCandidate> candidates;  // plan order: the validation curve
  int chosen = -1;                             // index into candidates; -1: none eligible

  const SelectionCandidate* chosen_candidate() const {
    return chosen < 0 ? nullptr : &candidates[static_cast<size_t>(chosen)];
  }
};

struct Selection {
  SelectSpec spec;
  std::vector<std::string> reported_keys;  // the swept keys that are not selected, axis order
  std::vector<SelectedRow> rows;
};

// A run's parameter count: its n_params, or for runs stored before n_params existed, the
// neural models' `params` or the other models' `param_count`; NaN when none is stored.
double run_param_count(const StoredRun& run);

// The selection of `runs` (the plan's runs, in plan order), `swept` the spec's swept keys.
Selection selection_make(const SelectSpec& spec, const std::vector<std::string>& swept,
                         const std::vector<StoredRun>& runs);

// The chosen runs in row order, what claims and figures read: per row its chosen run, or for a
// row without one a copy of its first candidate with status "failed", no metrics, and an error
// listing why each candidate was not eligible.
std::vector<StoredRun> selection_chosen_runs(const Selection& selection);

// The runs a spec's claims, figures and report read: the chosen runs when [select] is given,
// else `runs` unchanged.
std::vector<StoredRun> selection_apply(const SelectSpec& spec,
                                       const std::vector<std::string>& swept,
                                       const std::vector<StoredRun>& runs);

// The same for a spec: its [select] over its swept keys.
std::vector<StoredRun> selection_apply(const Spec& spec, const std::vector<StoredRun>& runs);

// A stored parameter value for display: numbers as %.4g (0.0030000000000000001 -> 0.003).
std::string param_value_short(const std::string& text);

// The report's table of a selection: a header, then one row per reported point (the seeds'
// rows together): the reported keys' values, then per selected axis the chosen values of the
// seeds ("4, 8, 4"; "none" for a seed without an eligible run), their n_params, their `by`,
// and "eligible/candidates" counted over the seeds. Cells are plain text.
std::vector<std::vector<std::string>> selection_table(const Selection& selection);
// One line saying what was selected: "chosen per seed on val_loss (minimum) over model.m, with
// at most 120000 parameters".
std::string selection_text(const SelectSpec& spec);

// DIR/selected.csv (one row per group) and DIR/selection.csv (one row per candidate: the
// validation curves); columns in docs/spec-format.md, "Output directory". Without [select]
// both files are removed, so a directory never shows a stale selection.
void selection_export_csv(const Selection& selection, const std::vector<std::string>& swept,
                          const std::string& dir);
void selection_files_remove(const std::string& dir);

}  // namespace attn
