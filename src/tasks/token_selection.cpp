// token_selection: sparse token selection (token_selection.h): sampling and encoding.
#include "tasks/token_selection.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/choice.h"
#include "core/error.h"
#include "core/rng.h"

namespace attn {
namespace {

enum class SelectionCodes { stochastic, fixed };
constexpr Choice<SelectionCodes> kCodes[] = {{SelectionCodes::stochastic, "stochastic"},
                                             {SelectionCodes::fixed, "fixed"}};
enum class SelectionCodeDist { sphere, gaussian };
constexpr Choice<SelectionCodeDist> kCodeDists[] = {{SelectionCodeDist::sphere, "sphere"},
                                                    {SelectionCodeDist::gaussian, "gaussian"}};

enum class SelectionQueryCode { sum, mean };
constexpr Choice<SelectionQueryCode> kQueryCodes[] = {{SelectionQueryCode::sum, "sum"},
                                                      {SelectionQueryCode::mean, "mean"}};

struct SelectionConfig {
  int64_t N = 0, q = 0, d = 0, code_dim = 0;
  SelectionCodes codes = SelectionCodes::stochastic;
  SelectionCodeDist code_dist = SelectionCodeDist::sphere;
  bool query_mean = false;  // the query code Σ p_j divided by q
};

void draw_code(SelectionCodeDist dist, Rng& rng, double* p, int64_t m) {
  switch (dist) {
    case SelectionCodeDist::sphere: rng_sphere(rng, p, m); return;
    case SelectionCodeDist::gaussian: {
      rng_gaussian(rng, p, m);
      const double s = 1.0 / std::sqrt(static_cast<double>(m));
      for (int64_t k = 0; k < m; ++k) p[k] *= s;
      return;
    }
  }
}

class TokenSelectionTask final : public Task {
 public:
  explicit TokenSelectionTask(const SelectionConfig& c)
      : c_(c),
        x_key_(rng_stream_key("token_selection.x")),
        subset_key_(rng_stream_key("token_selection.subset")),
        codes_key_(rng_stream_key("token_selection.codes")),
        fixed_key_(rng_stream_key("token_selection.fixed_codes")) {
    shape_.T = c_.N + 1;
    shape_.d_in = c_.d + c_.code_dim + 1;
    shape_.T_out = 1;
    shape_.d_out = c_.d;
    shape_.target = TargetKind::real;
    shape_.raw.push_back({"selected", {c_.q}, true});
    if (c_.codes == SelectionCodes::fixed)
      shape_.constants.push_back({"codes", {c_.N, c_.code_dim}, false});
  }

  const TaskShape& shape() const override { return shape_; }

  void fill_constants(uint64_t seed, Batch& out) const override {
    if (c_.codes == SelectionCodes::fixed) out.constants[0].f64 = fixed_codes(seed);
  }

  void sample_range(uint64_t seed, int64_t first, int64_t count, Batch& out,
                    int64_t row) const override {
    const int64_t N = c_.N, d = c_.d, m = c_.code_dim, d_in = shape_.d_in;
    const bool fixed = c_.codes == SelectionCodes::fixed;
    const std::vector<double> table = fixed ? fixed_codes(seed) : std::vector<double>();
    std::vector<double> own(static_cast<size_t>(fixed ? 0 : N * m));
    const double qd = static_cast<double>(c_.q);
    for (int64_t s = 0; s < count; ++s) {
      const uint64_t index = static_cast<uint64_t>(first + s);
      double* x = out.x(row + s);
      double* y = out.y(row + s);
      int64_t* selected = out.raw_i64(0, row + s);
      if (!fixed) {
        Rng code_rng(seed, codes_key_, index);
        for (int64_t j = 0; j < N; ++j) draw_code(c_.code_dist, code_rng, &own[j * m], m);
      }
      const double* codes = fixed ? table.data() : own.data();
      Rng x_rng(seed, x_key_, index);
      for (int64_t j = 0; j < N; ++j) {
        double* t = x + (j + 1) * d_in;
        rng_gaussian(x_rng, t, d);
        std::copy(codes + j * m, codes + (j + 1) * m, t + d);
      }
      Rng subset_rng(seed, subset_key_, index);
      rng_subset(subset_rng, N, c_.q, selected);
      for (int64_t t = 0; t < c_.q; ++t) {
        const int64_t j = selected[t];
        for (int64_t k = 0; k < d; ++k) y[k] += x[(j + 1) * d_in + k];
        for (int64_t k = 0; k < m; ++k) x[d + k] += codes[j * m + k];
      }
      for (int64_t k = 0; k < d; ++k) y[k] /= qd;
      if (c_.query_mean)
        for (int64_t k = 0; k < m; ++k) x[d + k] /= qd;
      x[d + m] = 1.0;  // the query flag
    }
  }

 private:
  // The fixed codes of dataset `seed` (N × code_dim): p_j from stream index j.
  std::vector<double> fixed_codes(uint64_t seed) const {
    const int64_t m = c_.code_dim;
    std::vector<double> table(static_cast<size_t>(c_.N * m));
    for (int64_t j = 0; j < c_.N; ++j) {
      Rng rng(seed, fixed_key_, static_cast<uint64_t>(j));
      draw_code(c_.code_dist, rng, &table[j * m], m);
    }
    return table;
  }

  SelectionConfig c_;
  uint64_t x_key_, subset_key_, codes_key_, fixed_key_;
  TaskShape shape_;
};

}  // namespace

std::vector<ParamSpec> token_selection_schema() {
  return {
      param_int("N", 16, "number of data tokens T (the query token is extra)", 1, 1 << 20),
      param_int("q", 2, "size of the selected subset S (1 <= q <= N)", 1, 1 << 20),
      param_int("d", 4, "token dimension d (tokens N(0, I_d))", 1, 1 << 16),
      param_int("code_dim", 16, "dimension of the positional codes p_j", 1, 1 << 16),
      param_choice("codes", "stochastic", choice_names(kCodes),
                   "positional codes redrawn for every sequence (stochastic) or drawn once per "
                   "dataset seed and position (fixed)"),
      param_choice("code_dist", "sphere", choice_names(kCodeDists),
                   "each code uniform on the unit sphere, or N(0, I/code_dim)"),
      param_choice("query_code", "sum", choice_names(kQueryCodes),
                   "the query token's code: the sum of the selected codes, or their mean"),
  };
}

std::unique_ptr<Task> token_selection_make(const Params& params) {
  SelectionConfig c;
  c.N = params.get_int("N");
  c.q = params.get_int("q");
  c.d = params.get_int("d");
  c.code_dim = params.get_int("code_dim");
  c.codes = choice_parse(params.get_string("codes"), kCodes, "task.codes");
  c.code_dist = choice_parse(params.get_string("code_dist"), kCodeDists, "task.code_dist");
  c.query_mean = choice_parse(params.get_string("query_code"), kQueryCodes, "task.query_code") ==
                 SelectionQueryCode::mean;
  ATTN_CHECK(c.q <= c.N, "task.q = " + std::to_string(c.q) +
                             " is larger than task.N = " + std::to_string(c.N) +
                             " (S is a q-subset of the N tokens); lower q or raise N");
  return std::make_unique<TokenSelectionTask>(c);
}

void token_selection_batch_reference(const Params& params, const Batch& batch, int64_t row,
                                     double* y) {
  const int64_t d = params.get_int("d"), d_in = batch.shape.d_in, N = batch.shape.T - 1;
  const RawArray& selected = batch.find("selected");
  const int64_t q = selected.spec.sample_shape[0];
  const int64_t* S = selected.i64.data() + row * q;
  const double* x = batch.x(row);
  for (int64_t k = 0; k < d; ++k) {
    // Every data token weighted by its membership in S.
    double acc = 0.0;
    for (int64_t j = 0; j < N; ++j)
      if (std::count(S, S + q, j) > 0) acc += x[(j + 1) * d_in + k] / static_cast<double>(q);
    y[k] = acc;
  }
}

}  // namespace attn
