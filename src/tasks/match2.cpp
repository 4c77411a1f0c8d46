// match2: ∃ j with x_i + x_j ≡ 0 (mod M). Labels in O(N log N) by value counts.
// Under uniform tokens and odd M a position is negative iff none of its k = N witnesses
// (N − 1 with distinct) equals −x_i (x_i = 0 matches itself), so P(positive) = 1 − (1 − 1/M)^k
// exactly, 1/2 at M = 1/(1 − 2^(−1/k)) ≈ k/ln 2 (auto_modulus = uniform_half).
#include <cmath>

#include "tasks/match_common.h"
#include "tasks/match_tasks.h"

namespace attn {
namespace {

class Match2Task final : public MatchTask {
 public:
  using MatchTask::MatchTask;

 protected:
  int64_t positives_per_plant() const override { return 2; }

  void plant(Rng& /*rng*/, int64_t plants, const std::vector<int64_t>& order, int64_t* tokens,
             const std::vector<int64_t*>& /*aux*/) const override {
    for (int64_t g = 0; g < plants && 2 * g + 1 < c_.N; ++g)
      tokens[order[2 * g + 1]] = mod_m(-tokens[order[2 * g]], c_.M);
  }

  void labels(const int64_t* tokens, const std::vector<int64_t*>& /*aux*/,
              int64_t* out) const override {
    const ValueCounts counts(tokens, c_.N);
    for (int64_t i = 0; i < c_.N; ++i) {
      const int64_t want = mod_m(-tokens[i], c_.M);
      int64_t witnesses = counts.count(want);
      if (c_.distinct && want == tokens[i]) --witnesses;  // i itself is not a witness
      out[i] = witnesses > 0 ? 1 : 0;
    }
  }
};

}  // namespace

std::vector<ParamSpec> match2_schema() {
  std::vector<ParamSpec> schema = match_common_schema();
  schema.push_back(match_auto_modulus_param());
  return schema;
}

std::unique_ptr<Task> match2_make(const Params& params) {
  MatchConfig c = match_config("match2", params);
  match_apply_auto_modulus(c, params, match2_half_positive_modulus);
  return std::make_unique<Match2Task>(std::move(c));
}

double match2_uniform_positive_rate(int64_t N, int64_t M, bool distinct) {
  const double k = static_cast<double>(distinct ? N - 1 : N);
  return 1.0 - std::pow(1.0 - 1.0 / static_cast<double>(M), k);
}

int64_t match2_half_positive_modulus(int64_t N, bool distinct) {
  const double k = static_cast<double>(distinct ? N - 1 : N);
  return match_half_positive_prime(N, 1.0 / (1.0 - std::pow(2.0, -1.0 / k)), [&](int64_t M) {
    return match2_uniform_positive_rate(N, M, distinct);
  });
}

void match2_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct,
                      int64_t* labels) {
  match_reference_labels(tokens, N, M, 1,
                         [&](int64_t i, const int64_t* j) { return !distinct || j[0] != i; },
                         labels);
}

void match2_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y) {
  MatchReferenceInputs r = match_reference_inputs(params, batch, row);
  match2_reference(r.tokens, r.N, r.M, r.distinct, r.labels.data());
  r.write(y);
}

}  // namespace attn
