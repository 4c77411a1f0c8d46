// match3: ∃ j1, j2 with x_i + x_j1 + x_j2 ≡ 0 (mod M). Labels in O(N^2 log N): for each
// (i, j1) look up how many tokens equal the missing value.
// instances = planted_triples (M >= N+1, Thm 7's regime): a triple-free background (the
// middle third of [M]) plus max(1, round(plant_fraction·N/3)) planted triples; docs/tasks.md §4.3.
// Under uniform tokens each of the P unordered witness pairs {j1, j2} (P = N(N+1)/2, or
// (N−1)(N−2)/2 with distinct) completes x_i with probability 1/M, so P(positive) ≈
// 1 − exp(−P/M) (Poisson, ignoring that pairs share tokens), 1/2 at M ≈ P/ln 2 ≈ 0.72 N²
// (auto_modulus = uniform_half).
#include <cmath>

#include "core/error.h"
#include "tasks/match_common.h"
#include "tasks/match_tasks.h"

namespace attn {
namespace {

class Match3Task final : public MatchTask {
 public:
  using MatchTask::MatchTask;

 protected:
  int64_t positives_per_plant() const override { return 3; }

  void plant(Rng& /*rng*/, int64_t plants, const std::vector<int64_t>& order, int64_t* tokens,
             const std::vector<int64_t*>& /*aux*/) const override {
    // Disjoint triples: the sum condition is symmetric, so all three become positive.
    for (int64_t g = 0; g < plants && 3 * g + 2 < c_.N; ++g) {
      const int64_t a = order[3 * g], b = order[3 * g + 1], c = order[3 * g + 2];
      tokens[c] = mod_m(-(tokens[a] + tokens[b]), c_.M);
    }
  }

  void labels(const int64_t* tokens, const std::vector<int64_t*>& /*aux*/,
              int64_t* out) const override {
    const ValueCounts counts(tokens, c_.N);
    for (int64_t i = 0; i < c_.N; ++i) {
      out[i] = 0;
      for (int64_t j = 0; j < c_.N && !out[i]; ++j) {
        if (c_.distinct && j == i) continue;
        const int64_t want = mod_m(-(tokens[i] + tokens[j]), c_.M);
        int64_t witnesses = counts.count(want);
        if (c_.distinct) witnesses -= (tokens[i] == want) + (tokens[j] == want);
        out[i] = witnesses > 0 ? 1 : 0;
      }
    }
  }
};

}  // namespace

std::vector<ParamSpec> match3_schema() {
  std::vector<ParamSpec> schema = match_common_schema();
  schema.push_back(param_id_omit_default(
      param_choice("instances", "random", {"random", "planted_triples"},
                   "random: tokens as set by sampling; planted_triples: tokens from the "
                   "triple-free middle third of [M] plus planted triples (needs M >= N+1)")));
  schema.push_back(match_auto_modulus_param());
  return schema;
}

std::unique_ptr<Task> match3_make(const Params& params) {
  MatchConfig c = match_config("match3", params);
  match_apply_auto_modulus(c, params, match3_half_positive_modulus);
  if (params.get_string("instances") == "planted_triples") {
    // Thm 7's regime is M >= N+1 (spec §2.2, §4 L6); the middle third needs M >= 4 and a
    // planted triple three positions.
    ATTN_CHECK(c.M >= c.N + 1 && c.M >= 4 && c.N >= 3,
               "task.instances = planted_triples needs task.M >= task.N + 1 (and M >= 4, N >= 3); "
               "got N = " + std::to_string(c.N) + ", M = " + std::to_string(c.M) +
                   ": raise task.M or set M = 0 for the automatic prime");
    c.sum_free_background = true;
    c.sampling = MatchSampling::balanced;
  }
  return std::make_unique<Match3Task>(std::move(c));
}

namespace {
double match3_witness_pairs(int64_t N, bool distinct) {
  const double n = static_cast<double>(N);
  return distinct ? (n - 1) * (n - 2) / 2 : n * (n + 1) / 2;
}
}  // namespace

double match3_uniform_positive_rate(int64_t N, int64_t M, bool distinct) {
  return 1.0 - std::exp(-match3_witness_pairs(N, distinct) / static_cast<double>(M));
}

int64_t match3_half_positive_modulus(int64_t N, bool distinct) {
  return match_half_positive_prime(N, match3_witness_pairs(N, distinct) / std::log(2.0),
                                   [&](int64_t M) {
                                     return match3_uniform_positive_rate(N, M, distinct);
                                   });
}

void match3_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct,
                      int64_t* labels) {
  match_reference_labels(
      tokens, N, M, 2,
      [&](int64_t i, const int64_t* j) { return !distinct || match_all_distinct(i, j, 2); },
      labels);
}

void match3_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y) {
  MatchReferenceInputs r = match_reference_inputs(params, batch, row);
  match3_reference(r.tokens, r.N, r.M, r.distinct, r.labels.data());
  r.write(y);
}

}  // namespace attn
