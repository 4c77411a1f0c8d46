// Plot kinds: the enum PlotKind and one table row per kind (plot_kinds.cpp): its name in a
// spec, the [[plot]] keys it needs and the ones it may use, and the message when a needed key
// is missing. The spec loader validates a plot from its row; figure_data_make switches over
// the enum (no default branch), so a kind without figure data does not compile (-Wswitch is
// an error there). tests/test_spec_fields.cpp compares the rows with the kinds table of
// docs/spec-format.md.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "experiment/kind_table.h"

namespace attn {

enum class PlotKind {
  line, heatmap, curve, matrix, size_needed, kCount  // kCount: the number of kinds, not a kind
};

struct PlotKindRow {
  PlotKind kind;
  const char* name;
  std::vector<std::string> required, optional;  // any other key but the common ones is refused
  std::string needs;  // the message when a required key is missing
};

// Every row, indexed by PlotKind: plot_kinds().row(kind), .name(kind), .find(text), .names().
const KindTable<PlotKindRow>& plot_kinds();
// Keys every kind may use: name, title, kind, where.
const std::vector<std::string>& plot_common_keys();

}  // namespace attn
