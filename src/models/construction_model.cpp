// The `construction` model: Model interface over constructions/construction.h.
//
// fit() learns nothing (the training set may be empty: train.n = 0). predict() evaluates each
// sequence on its own (parallel over sequences; results do not depend on the split) and keeps
// the diagnostics, which evaluate() reuses for the same inputs instead of a second forward.
// evaluate() records, on the test set: the size measures (m, heads, layers, m_prime), the
// margin diagnostics (smallest margin γ/Δ/g over rows, the fraction of rows without a positive
// margin, largest and mean β, the in-set tie error), and with bits_search the fewest bits
// p ∈ [2, 53] at which the first bits_search_n test sequences still all succeed (binary tasks:
// every position right; qSA: max-error ≤ 1/(2q)), found by bisection — it assumes success is
// monotone in p, and is −1 when even exact arithmetic or 53 bits fail. qsa_random_codes also
// records m_prime_needed (Construction::m_prime_needed, on the same probe sequences) and
// m_prime_needed_ratio = m_prime_needed / (q ln N).
// attention() returns one tensor per head in evaluation order: "head<k>" (n, N, N) (third
// order: (n, N, N·N)).
#include "models/construction_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "constructions/construction.h"
#include "core/error.h"
#include "core/fnv.h"
#include "core/threads.h"
#include "ops/quantize.h"
#include "tasks/named_arrays.h"
#include "train/metrics.h"

namespace attn {
namespace {

SequenceContext sequence_context(const Batch& data) {
  SequenceContext ctx;
  if (const RawArray* m = named_array_find(data, NamedArray::modulus)) ctx.M = m->i64[0];
  if (const RawArray* w = named_array_find(data, NamedArray::window)) ctx.window = w->i64[0];
  return ctx;
}

// FNV-1a over n and the bytes of X: which inputs a prediction's diagnostics belong to
// (compared within one process only, never stored).
uint64_t inputs_fingerprint(const Batch& data) {
  return fnv1a_64(data.X.data(), data.X.size() * sizeof(double),
                  kFnv1aOffset ^ static_cast<uint64_t>(data.n));
}

// The task's success threshold 1/(2q) (qsa), or 0 if it has none.
double success_threshold(const Batch& data) {
  const RawArray* t = named_array_find(data, NamedArray::success_threshold);
  return t ? t->f64[0] : 0;
}

// The first k samples of `data` (X, Y and constants; raw arrays are not needed).
Batch batch_head(const Batch& data, int64_t k) {
  Batch head;
  head.n = k;
  head.shape = data.shape;
  head.shape.raw.clear();
  head.X.assign(data.X.begin(), data.X.begin() + k * data.shape.x_size());
  head.Y.assign(data.Y.begin(), data.Y.begin() + k * data.shape.y_size());
  head.constants = data.constants;
  return head;
}

class ConstructionModel final : public Model {
 public:
  explicit ConstructionModel(const ModelContext& c) : params_(c.model), shape_(c.shape) {
    precision_.bits = params_.get_int("bits");
    precision_.bits_scores = params_.get_bool("bits_scores");
    quantize_check_bits(precision_.bits, "model.bits");
    construction_ = construction_make(ConstructionSetup{params_, shape_, c.seed});
  }

  // Nothing is trained: n_params = 0 (the construction's sizes are its own scalars).
  void fit(const Batch&, FitLog& log) override { log.scalar("n_params", 0.0); }

  // Also keeps the diagnostics of this batch, which evaluate() reuses when it is called on the
  // same batch right after (as run_point does): the forward is not run twice.
  std::vector<double> predict(const Batch& data) const override {
    last_stats_ = ConstructionStats{};
    auto y = run(data, precision_, &last_stats_);
    last_inputs_ = inputs_fingerprint(data);
    return y;
  }

  void evaluate(const Batch& test, FitLog& log) const override {
    if (test.n == 0) return;
    if (last_inputs_ != inputs_fingerprint(test)) predict(test);
    const ConstructionStats stats = last_stats_;
    for (const auto& [name, value] : construction_->sizes()) log.scalar(name, value);
    log.scalar("margin_min", std::isfinite(stats.margin_min) ? stats.margin_min : 0.0);
    log.scalar("rows_without_margin",
               stats.rows ? static_cast<double>(stats.rows_without_margin) / stats.rows : 0.0);
    log.scalar("beta_max", stats.beta_max);
    log.scalar("beta_mean", stats.rows ? stats.beta_sum / stats.rows : 0.0);
    log.scalar("tie_error_max", stats.tie_error_max);
    if (params_.get_bool("bits_search")) log.scalar("bits_needed", bits_needed(test));
    const int64_t probe_n = std::min<int64_t>(test.n, params_.get_int("bits_search_n"));
    const int64_t mp = construction_->m_prime_needed(test.X.data(), probe_n);
    if (mp >= 0) {
      log.scalar("m_prime_needed", static_cast<double>(mp));
      // m'/(q ln N), the ratio the spec's §3.1 table expects to be roughly flat in N.
      const double threshold = success_threshold(test);
      const int64_t q = threshold > 0 ? std::llround(1.0 / (2.0 * threshold)) : 0;
      if (mp > 0 && q > 0)
        log.scalar("m_prime_needed_ratio",
                   static_cast<double>(mp) / (q * std::log(static_cast<double>(shape_.T))));
    }
  }

  std::vector<ModelTensor> attention(const Batch& data) const override {
    const int64_t n = data.n;
    std::vector<std::vector<LayerProbs>> per_sample(static_cast<size_t>(n));
    std::vector<double> y(static_cast<size_t>(shape_.y_size()));
    const SequenceContext ctx = sequence_context(data);
    for (int64_t b = 0; b < n; ++b)
      construction_->forward(data.x(b), ctx, precision_, y.data(), &per_sample[b], nullptr);
    std::vector<ModelTensor> out;
    if (n == 0) return out;
    const int64_t N = shape_.T;
    for (int64_t b = 1; b < n; ++b) {
      bool same = per_sample[b].size() == per_sample[0].size();
      for (size_t h = 0; same && h < per_sample[0].size(); ++h)
        same = per_sample[b][h].size() == per_sample[0][h].size();
      ATTN_CHECK(same,
                 "construction " + params_.get_string("construction") + ": sequence " +
                     std::to_string(b) +
                     " has other heads than sequence 0 (e.g. another "
                     "number of pointers); attention maps need the same heads in every sequence");
    }
    for (size_t h = 0; h < per_sample[0].size(); ++h) {
      const int64_t cols = static_cast<int64_t>(per_sample[0][h].size()) / N;
      ModelTensor t{"head" + std::to_string(h), {n, N, cols}, {}};
      for (int64_t b = 0; b < n; ++b)
        t.data.insert(t.data.end(), per_sample[b][h].begin(), per_sample[b][h].end());
      out.push_back(std::move(t));
    }
    return out;
  }

  void save(ModelTensors& out) const override { construction_->weights(out); }

  void load(const ModelTensors& in) override {
    ModelTensors expected;
    construction_->weights(expected);
    for (const auto& t : expected.tensors)
      ATTN_CHECK(in.get(t.name, t.shape) == t.data,
                 "model construction: saved tensor '" + t.name +
                     "' differs from the one these params and seed build; the file was made by "
                     "another version or edited");
  }

 private:
  std::vector<double> run(const Batch& data, const Precision& p, ConstructionStats* stats) const {
    std::vector<double> y(static_cast<size_t>(data.n * shape_.y_size()));
    const SequenceContext ctx = sequence_context(data);
    std::vector<ConstructionStats> part(static_cast<size_t>(data.n));
    parallel_for(0, data.n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b)
        construction_->forward(data.x(b), ctx, p, y.data() + b * shape_.y_size(), nullptr,
                               stats ? &part[b] : nullptr);
    });
    if (stats)
      for (const auto& s : part) stats->merge(s);
    return y;
  }

  // Whether every sequence of `probe` succeeds at precision p.
  bool succeeds(const Batch& probe, const Precision& p) const {
    bool binary = false, all_ok = false, has_threshold = false;
    for (const auto& [name, value] : metrics_compute(probe, run(probe, p, nullptr))) {
      if (name == "exact_match") binary = true, all_ok = value == 1.0;
      if (name == "success_rate" && !binary) has_threshold = true, all_ok = value == 1.0;
    }
    return (binary || has_threshold) && all_ok;
  }

  double bits_needed(const Batch& test) const {
    const Batch probe =
        batch_head(test, std::min<int64_t>(test.n, params_.get_int("bits_search_n")));
    Precision p = precision_;
    p.bits = 0;
    if (!succeeds(probe, p)) return -1;
    int64_t lo = 2, hi = 53;  // invariant: hi succeeds (checked), every p < lo fails
    p.bits = hi;
    if (!succeeds(probe, p)) return -1;
    while (lo < hi) {
      p.bits = (lo + hi) / 2;
      if (succeeds(probe, p))
        hi = p.bits;
      else
        lo = p.bits + 1;
    }
    return static_cast<double>(hi);
  }

  Params params_;
  TaskShape shape_;
  Precision precision_;
  std::unique_ptr<Construction> construction_;
  // The diagnostics of the last predict() and the fingerprint of its inputs.
  mutable ConstructionStats last_stats_;
  mutable uint64_t last_inputs_ = 0;
};

}  // namespace

std::vector<ParamSpec> construction_schema() {
  return {
      param_choice("construction", "qsa_random_codes", construction_names(),
                   "the recipe (docs/constructions.md)"),
      param_int("bits", 0,
                "precision p of queries, keys and values: 0 = exact, else 2..53 bits "
                "of fixed point with one scale per tensor (docs/precision.md)",
                0, 53),
      param_bool("bits_scores", false, "also round the attention scores to `bits` bits"),
      param_real("epsilon", 0, "qSA target error of the temperature rule; 0 = 1/(4q)", 0, 1e6),
      param_real("beta", 0, "fixed inverse temperature; 0 = the temperature rule", 0, 1e300),
      param_real("beta_factor", 1.05, "multiplies the temperature rule's β", 1e-6, 1e6),
      param_int("m_prime", 64, "position-code dimension m' (qsa_random_codes, match variants)", 1,
                1 << 20),
      param_choice("code_dist", "sign", {"sign", "gaussian"},
                   "qsa_random_codes code entries: ±1/√m' or N(0, 1/m')"),
      param_choice("query_code", "dual", {"dual", "sum"},
                   "qsa_random_codes query: dual certificate (exact ties) or the sum of the codes "
                   "(no ties: the temperature rule's epsilon is not guaranteed)"),
      param_int("window", 2, "local_match3: the task's window w", 1, 1 << 16),
      param_id_omit_default(param_int("layers", 0,
                                      "hop_doubling: the circuit's depth L, exact for k <= "
                                      "2^(L-1) - 1; 0 = the fewest layers that cover task.k_max",
                                      0, 30)),
      param_bool("bits_search", true, "evaluate: find the fewest bits that still succeed"),
      param_int("bits_search_n", 64, "test sequences the bits search uses", 1, 1 << 20),
  };
}

std::vector<ParamSpec> construction_train_schema() { return {}; }

std::unique_ptr<Model> construction_make_model(const ModelContext& context) {
  return std::make_unique<ConstructionModel>(context);
}

}  // namespace attn
