// The plot kinds' table (plot_kinds.h): one row per PlotKind, in enum order.
#include "experiment/plot_kinds.h"

namespace attn {

const KindTable<PlotKindRow>& plot_kinds() {
  static const PlotKindRow rows[] = {
      {PlotKind::line, "line", {"metric", "x"}, {"line", "logx", "logy", "none"},
       "[[plot]] needs metric = \"...\" and x = \"dotted.key\""},
      {PlotKind::heatmap, "heatmap", {"metric", "x", "y"}, {"logx", "logy", "product_boundary"},
       "needs metric = \"...\" (the cell colour), x = \"dotted.key\" and y = \"dotted.key\""},
      {PlotKind::curve, "curve", {"series"}, {"line", "logx", "logy"},
       "needs series = \"...\" (a series name such as \"val_loss\"; the x axis is its step)"},
      {PlotKind::matrix, "matrix", {"series"}, {"mark"},
       "needs series = \"...\" (a series of S*S points, such as \"attention_sample0\")"},
      {PlotKind::size_needed, "size_needed", {"metric", "x", "size", "threshold"},
       {"line", "goal", "logx", "logy"},
       "needs metric = \"...\", x = \"dotted.key\", size = \"dotted.key\" (the swept model "
       "size) and threshold = NUMBER (the goal's level)"},
  };
  static_assert(sizeof(rows) / sizeof(rows[0]) == kind_count<PlotKind>,
                "every PlotKind needs one row in plot_kinds.cpp, in enum order");
  static const KindTable<PlotKindRow> table{rows, kind_count<PlotKind>};
  return table;
}

const std::vector<std::string>& plot_common_keys() {
  static const std::vector<std::string> keys = {"name", "title", "kind", "where"};
  return keys;
}

}  // namespace attn
