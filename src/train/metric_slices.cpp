// Per-slice metrics (metrics.h, metrics_compute_slices): the sliced rows of the metric table
// computed again on the samples of each value of a per-sample slice label (hop's k).
//
// Shapes: Y and prediction n × T_out × d_out; a slice label (n,) int64; a slice's sub-batch
// holds its m samples' Y, raw arrays and the constants (X is not copied: no formula reads it).
#include <algorithm>
#include <map>

#include "core/error.h"
#include "train/metric_table.h"
#include "train/metrics.h"

namespace attn {
namespace {

// The samples `rows` of `data` (without X) and of the prediction.
Batch slice_batch(const Batch& data, const std::vector<double>& f, const std::vector<int64_t>& rows,
                  std::vector<double>* f_out) {
  Batch sub;
  sub.n = static_cast<int64_t>(rows.size());
  sub.shape = data.shape;
  sub.constants = data.constants;
  const int64_t K = data.shape.y_size();
  for (int64_t j : rows) {
    sub.Y.insert(sub.Y.end(), data.y(j), data.y(j) + K);
    f_out->insert(f_out->end(), f.begin() + j * K, f.begin() + (j + 1) * K);
  }
  for (const RawArray& r : data.raw) {
    RawArray s{r.spec, {}, {}};
    const int64_t size = r.spec.sample_size();
    for (int64_t j : rows) {
      if (r.spec.integer)
        s.i64.insert(s.i64.end(), r.i64.begin() + j * size, r.i64.begin() + (j + 1) * size);
      else
        s.f64.insert(s.f64.end(), r.f64.begin() + j * size, r.f64.begin() + (j + 1) * size);
    }
    sub.raw.push_back(std::move(s));
  }
  return sub;
}

// Whether some position of the input counts (the rows' formulas need one).
bool any_counted(const MetricInput& in) {
  for (int64_t j = 0; j < in.n; ++j)
    for (int64_t i = 0; i < in.T_out; ++i)
      if (metric_position_counted(in, j, i)) return true;
  return false;
}

}  // namespace

std::vector<MetricSeriesPoint> metrics_compute_slices(const Batch& data,
                                                      const std::vector<double>& prediction) {
  std::vector<MetricSeriesPoint> out;
  std::vector<const NamedArrayInfo*> labels;
  for (const NamedArrayInfo& info : named_array_table())
    if (info.slice_label && named_array_find(data, info.id)) labels.push_back(&info);
  if (labels.empty()) return out;
  const MetricInput whole = metric_input_make(data, prediction);  // the checks
  for (const NamedArrayInfo* label : labels) {
    const RawArray* values = named_array_find(data, label->id);
    std::map<int64_t, std::vector<int64_t>> rows;  // value -> samples, increasing values
    for (int64_t j = 0; j < data.n; ++j) rows[values->i64[static_cast<size_t>(j)]].push_back(j);
    for (const auto& [value, samples] : rows) {
      std::vector<double> f;
      const Batch sub = slice_batch(data, prediction, samples, &f);
      const int64_t T_out = sub.shape.T_out, d_out = sub.shape.d_out;
      const RawArray* mask = named_array_find(sub, NamedArray::metric_mask);
      const MetricInput in{sub,     f.data(),        whole.kind,
                           sub.n,   T_out,           d_out,
                           whole.K, sub.n * whole.K, mask ? mask->i64.data() : nullptr};
      if (!any_counted(in)) continue;
      for (const MetricRow& row : metric_table()) {
        if (row.sliced == MetricSliced::no || !metric_row_applies(row, sub, whole.kind)) continue;
        const MetricValue v = row.formula(in);
        out.push_back({std::string(row.name) + "_by_" + label->name, value, v.value});
        if (row.se != MetricSe::none)
          out.push_back({std::string(row.name) + "_se_by_" + label->name, value, v.se});
      }
    }
  }
  return out;
}

}  // namespace attn
