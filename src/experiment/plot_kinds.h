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

namespace attn {

enum class PlotKind {
  line,
  heatmap,
  curve,
  matrix,
  size_needed,
  kCount  // the number of kinds; not a kind
};
inline constexpr size_t kPlotKindCount = static_cast<size_t>(PlotKind::kCount);

struct PlotKindRow {
  PlotKind kind;
  const char* name;
  std::vector<std::string> required, optional;  // any other key but the common ones is refused
  std::string needs;  // the message when a required key is missing
};

// Every row, indexed by PlotKind.
const PlotKindRow* plot_kinds();
const PlotKindRow& plot_kind_row(PlotKind kind);
const char* plot_kind_name(PlotKind kind);
// The kind spelt `name`, or null.
const PlotKind* plot_kind_find(const std::string& name);
std::vector<std::string> plot_kind_names();
// Keys every kind may use: name, title, kind, where.
const std::vector<std::string>& plot_common_keys();

}  // namespace attn
