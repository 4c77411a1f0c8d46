// Axis words: what a figure shows for a spec's key or metric instead of the raw key, from one
// table (axis_words.cpp): "task.N" -> "sequence length N", "model.m" -> "embedding dimension m",
// "test_nmse" -> "test NMSE" (a metric is its base name's words after the words of its prefix
// test_, train_ or val_, and "by <label>" for a sliced series NAME_by_<label>). A key the table
// does not know is shown as it is. The figure data's x_label, y_label, value_label and
// legend_title come from here (figure_data.cpp); run ids, claims and JSON keys do not.
//
// The same table gives each metric its range (MetricRange), which a figure's error band is
// clipped to (figure_data_common.cpp, point_fill): an NMSE band never goes below 0, an
// accuracy band stays in [0, 1].
#pragma once

#include <string>

namespace attn {

// The values a metric can take; `any` (no clipping) for a key the table does not know.
enum class MetricRange { any, nonnegative, unit_interval };

// The words for one key or metric name, or the name itself when the table has no row for it.
std::string axis_words(const std::string& key);
// A comma-separated list of keys ("task.name, model.name"), each in words.
std::string axis_words_list(const std::string& keys);
// The range of a stored metric (its prefix and a _by_<label> suffix read as in axis_words).
MetricRange metric_range_of(const std::string& metric);
// Whether the metric table's row name `base` ("nmse") has a row here (checked by a test for
// every row of train/metric_table.h).
bool axis_words_has_metric(const std::string& base);

}  // namespace attn
