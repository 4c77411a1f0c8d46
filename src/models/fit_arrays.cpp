// Fit on arrays (see fit_arrays.h): check and trim the batch, record its shape, fit.
#include "models/fit_arrays.h"

#include <string>

#include "core/error.h"
#include "models/model_inputs.h"

namespace attn {
namespace {

std::string dims_text(int64_t n, int64_t a, int64_t b) {
  return "(" + std::to_string(n) + ", " + std::to_string(a) + ", " + std::to_string(b) + ")";
}

}  // namespace

std::unique_ptr<Model> model_fit_arrays(ModelRecord& record, Batch& data, bool n_given, FitLog& log,
                                        const FitArraysSource& names) {
  ATTN_CHECK(data.n >= 1, names.samples + " has no samples; give at least one");
  const TaskShape& s = data.shape;
  ATTN_CHECK(s.T >= 1 && s.d_in >= 1 && s.T_out >= 1 && s.d_out >= 1,
             names.source + ": X " + dims_text(data.n, s.T, s.d_in) + " and Y " +
                 dims_text(data.n, s.T_out, s.d_out) + " must have no empty dimension");
  if (n_given) {
    const int64_t n = record.train_params.get_int("n");
    ATTN_CHECK(n >= 1, "train.n = 0 (fresh samples every step) needs a task, not arrays; run a "
                       "spec (`attnlab run`, attnlab.run) or give train.n >= 1");
    ATTN_CHECK(n <= data.n, "train.n = " + std::to_string(n) + " but " + names.samples + " holds " +
                                std::to_string(data.n) + " samples; lower train.n");
    data.n = n;  // the first n samples
    data.X.resize(static_cast<size_t>(n * s.x_size()));
    data.Y.resize(static_cast<size_t>(n * s.y_size()));
    data.raw.clear();
    data.shape.raw.clear();
  } else {
    record.train_params.set("n", ParamValue(data.n));
  }
  record.shape = TaskShape{s.T, s.d_in, s.T_out, s.d_out, {}, {}, s.target};
  auto model = model_make(record);
  model_fit_checked(*model, data, log, names.source);
  return model;
}

}  // namespace attn
