// Finiteness of a model's inputs: see model_inputs.h.
#include "models/model_inputs.h"

#include <cmath>

#include "core/error.h"
#include "core/float_env.h"

namespace attn {
namespace {

std::string value_text(double v) { return std::isnan(v) ? "NaN" : v > 0 ? "inf" : "-inf"; }

// Throws for the first non-finite entry of `values`, an n × rows × cols array.
void array_finite_check(const std::vector<double>& values, int64_t rows, int64_t cols,
                        const std::string& source, const std::string& name) {
  for (size_t e = 0; e < values.size(); ++e) {
    if (std::isfinite(values[e])) continue;
    const int64_t i = static_cast<int64_t>(e);
    const int64_t per_sample = rows * cols;
    std::string where;
    if (per_sample > 0)
      where = " at sample " + std::to_string(i / per_sample) + " (row " +
              std::to_string(i % per_sample / cols) + ", column " + std::to_string(i % cols) + ")";
    else
      where = " at entry " + std::to_string(i);
    throw UserError(source + ": " + name + " holds " + value_text(values[e]) + where +
                    "; every value must be finite: drop or replace that sample");
  }
}

}  // namespace

void batch_finite_check(const Batch& b, const std::string& source, bool check_y) {
  array_finite_check(b.X, b.shape.T, b.shape.d_in, source, "X");
  if (check_y) array_finite_check(b.Y, b.shape.T_out, b.shape.d_out, source, "Y");
  for (const auto& c : b.constants)
    if (!c.spec.integer) array_finite_check(c.f64, 0, 1, source, c.spec.name);
}

void model_fit_checked(Model& model, const Batch& train, FitLog& log, const std::string& source) {
  batch_finite_check(train, source, true);
  const SubnormalsFlushed flush;  // as the command line computes (core/float_env.h)
  model.fit(train, log);
}

std::vector<double> model_predict_checked(const Model& model, const Batch& data,
                                          const std::string& source) {
  batch_finite_check(data, source, false);
  const SubnormalsFlushed flush;
  return model.predict(data);
}

}  // namespace attn
