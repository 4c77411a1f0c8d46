// Experiment specs: a TOML file describing a grid of runs, its plots and its claims.
//
//   [experiment] name, description, seeds (count or list)
//   [task] name = "...", task keys...; [task.<task name>] keys used only for that task
//   [model] name = "...", model keys...; [model.<model name>] keys only for that model
//   [train] n, model-specific training keys        [eval] n, first
//   [sweep] "dotted.key" = [values...]  (grid axes); [[sweep.zip]] keys varying together
//   [[plot]], [[claim]]                 (see docs/spec-format.md)
//   [quick] the same layout, overriding leaves when --quick is given
//
// spec_load parses, applies --quick and --set, and validates everything that can be
// checked without running: the result is a Spec whose every run point resolves.
// Errors are UserError "FILE[:LINE]: key: what is wrong; how to fix it" (the line where
// the TOML reader knows it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/params.h"
#include "experiment/claim_kinds.h"
#include "experiment/plot_kinds.h"

namespace attn {

// One grid axis: one key (a plain sweep entry) or several keys varying together (zip).
struct SweepAxis {
  std::vector<std::string> keys;                // dotted: "task.N", "model.name", ...
  std::vector<std::vector<ParamValue>> values;  // values[v][k]: value v of key k
};

// A filter over runs: dotted key (or "seed") -> accepted values (any of them).
using RunFilter = std::map<std::string, std::vector<ParamValue>>;

// The keys of each section are listed once, in spec_fields.cpp (parsing, spec.json, docs);
// the kinds of plot and claim in plot_kinds.cpp and claim_kinds.cpp.
//
// kind "line": mean metric vs x, one line per `line` value (results.csv).
// kind "heatmap": mean metric in each (x, y) cell, both categorical (results.csv).
// kind "curve": a series vs its step, one line per `line` value (series.csv).
// kind "matrix": one run's series as an S x S image, entry (k / S, k % S) = step k.
// kind "size_needed": per x (and line), the smallest swept `size` whose mean metric reaches
// the threshold (below or above it, `goal`), never-reached cells drawn as bounds.
struct PlotSpec {
  std::string name;    // file stem of the figure
  std::string title;
  PlotKind kind = PlotKind::line;
  std::string metric;  // line: y axis; heatmap: cell colour ("" for curve, matrix)
  std::string x;       // dotted key on the x axis (line, heatmap)
  std::string y;       // dotted key on the y axis (heatmap)
  std::string series;  // series name (curve, matrix), e.g. "val_loss"
  std::string
      line;  // dotted key(s): one line per value ("" = one line; line, curve; see plot_line_keys)
  bool logx = false, logy = false;
  // heatmap: > 0 overlays the curve x·y = c, c the smallest x·y over the cells whose mean
  // reaches this level (the fitted boundary of a product law such as m·p = c·q); 0 = none.
  double product_boundary = 0;
  // size_needed: per x (and line), the smallest value of the swept key `size` whose mean
  // metric is below (goal "below") or above ("above") threshold.
  std::string size;
  double threshold = 0;
  std::string goal = "below";
  // line: runs whose metric equals `none` (e.g. -1 for "no bits suffice") are left out and
  // counted on the figure; has_none = false: every value is data.
  bool has_none = false;
  double none = 0;
  // matrix: a series of the same S x S shape whose nonzero entries are outlined (e.g.
  // "target_sample0", the target set y_i of each row); "" = none.
  std::string mark;
  RunFilter where;     // only runs matching this
};

struct ClaimSpec {
  std::string id, text;
  ClaimKind type = ClaimKind::below;  // rules in experiment/claims.h; spec.json writes its name
  std::string metric;
  RunFilter a, b, where;       // less_than: mean(a) < factor * mean(b); others use `where`
  double factor = 1.0;         // less_than; size_flat: largest / smallest needed size
  double threshold = 0.0;      // below / above / flat; size_*: the goal's level
  std::string along;           // decreasing / increasing / ...: dotted key ordering the means
  std::string size;            // size_increasing / size_flat: the swept size key
  std::string goal = "below";  // size_*: a size reaches the goal when its mean is below/above
  double confidence = 0.95;    // each one-sided bound's level (claims.h)
  double exponent = 0.0;       // power_law: the theory's exponent of metric in along
  double margin = 0.0;         // power_law, reach_growth: allowed distance from the exponent;
                               // decreasing / increasing / ratio_increasing: the largest reversed
                               // step that still counts as flat (an equivalence margin)
  std::string compare = "equal";  // power_law, reach, reach_growth: equal | at_most | at_least
  std::string slice;   // reach, reach_growth: the slice of the series METRIC_by_SLICE (e.g. k)
  double reach = 0.0;  // reach: the slice value the reach is compared with
  bool has_reach = false;
  std::string
      doc;  // "docs/NAME.md#anchor": the paragraph explaining a FAIL or INCONCLUSIVE ("" = none)
};

// [select]: selection on validation (experiment/selection.h). For each seed and each point of
// the other swept keys (the reported point), the run with the smallest `by` among the values
// of `axes` is chosen; claims, figures and the report use the chosen runs. Not part of the
// runs, their ids or the spec's fingerprint: it is a reading of the stored runs.
struct SelectSpec {
  std::vector<std::string> axes;  // swept keys chosen on validation; empty: no selection
  std::string by = "val_loss";    // a validation metric (val_*), minimised
  double max_params = 0;          // has_max_params: only runs with n_params <= it are eligible
  bool has_max_params = false;
  bool active() const { return !axes.empty(); }
  // The selected axis `key` names, itself or by the other spelling of a model or task key
  // ("model.m" and the scoped "model.attention.m" name the same run parameter at an attention
  // run); "" when it names none.
  std::string axis_named_by(const std::string& key) const;
};

struct Spec {
  std::string path;  // the file, for messages
  std::string name, description;
  std::vector<uint64_t> seeds;
  // Values fixed for every run, by dotted key ("task.name", "task.N", "train.n", ...).
  std::map<std::string, ParamValue> base;
  // [task.<name>] / [model.<name>]: "task.qsa" -> key -> value.
  std::map<std::string, std::map<std::string, ParamValue>> scoped;
  std::vector<SweepAxis> axes;
  std::vector<PlotSpec> plots;
  std::vector<ClaimSpec> claims;
  SelectSpec select;
};

// Loads FILE, applies [quick] when quick is set, then each "dotted.key=value" override
// (value in TOML syntax, or bare text taken as a string; "sweep.KEY=[...]" sets an axis),
// and validates. Throws UserError naming the file and key.
Spec spec_load(const std::string& path, const std::vector<std::string>& overrides, bool quick);

// A canonical JSON text of what determines the runs (seeds, base, scoped, axes): two specs
// with the same text plan the same runs. The execution setting train.distributed and the
// probes (eval.probes) are left out, like they are left out of run ids.
std::string spec_runs_json(const Spec& spec);
// JSON of the whole spec (DIR/spec.json; the figure data reads its plots back): name,
// description, plots, claims, swept keys.
std::string spec_to_json(const Spec& spec);

// The swept keys, in axis order (a zip group's keys in its order).
std::vector<std::string> spec_swept_keys(const Spec& spec);

// The keys a plot's `line` names: one, or several separated by commas ("task.name, model.name":
// one line per combination of their values).
std::vector<std::string> plot_line_keys(const std::string& line);
// The dotted keys a plot's title names as {key} ("N = {task.N}"): the plotting script writes
// the values of the runs drawn there.
std::vector<std::string> plot_title_keys(const std::string& title);


}  // namespace attn
