// The plot kinds' table (plot_kinds.h): one row per PlotKind, in enum order.
#include "experiment/plot_kinds.h"

#include "core/error.h"

namespace attn {
namespace {

const PlotKindRow* rows() {
  static const PlotKindRow table[] = {
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
  static_assert(sizeof(table) / sizeof(table[0]) == kPlotKindCount,
                "every PlotKind needs one row in plot_kinds.cpp, in enum order");
  return table;
}

}  // namespace

const PlotKindRow* plot_kinds() { return rows(); }

const PlotKindRow& plot_kind_row(PlotKind kind) {
  const size_t k = static_cast<size_t>(kind);
  ATTN_ASSERT(k < kPlotKindCount && rows()[k].kind == kind);
  return rows()[k];
}

const char* plot_kind_name(PlotKind kind) { return plot_kind_row(kind).name; }

const PlotKind* plot_kind_find(const std::string& name) {
  for (size_t k = 0; k < kPlotKindCount; ++k)
    if (name == rows()[k].name) return &rows()[k].kind;
  return nullptr;
}

std::vector<std::string> plot_kind_names() {
  std::vector<std::string> names;
  for (size_t k = 0; k < kPlotKindCount; ++k) names.emplace_back(rows()[k].name);
  return names;
}

const std::vector<std::string>& plot_common_keys() {
  static const std::vector<std::string> keys = {"name", "title", "kind", "where"};
  return keys;
}

}  // namespace attn
