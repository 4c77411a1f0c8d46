// match_s (Match_s, spec §2.3): ∃ j_1..j_{s-1} with x_i + Σ_t x_{j_t} ≡ 0 (mod M); the target
// of order-s attention. s = 2 is match2, s = 3 is match3.
// Labels by sum sets: without `distinct`, the set of sums of s-1 tokens (with repetition)
// is built once per sequence; with `distinct`, per position i, over the other positions.
#include <cmath>
#include <unordered_set>

#include "core/error.h"
#include "tasks/match_common.h"
#include "tasks/match_tasks.h"

namespace attn {
namespace {

using SumSet = std::unordered_set<int64_t>;

class MatchSTask final : public MatchTask {
 public:
  MatchSTask(MatchConfig config, int64_t s) : MatchTask(std::move(config)), s_(s) {
    const double states =
        std::min(static_cast<double>(c_.M),
                 std::pow(static_cast<double>(c_.N), static_cast<double>(s_ - 1)));
    ATTN_CHECK(
        states * static_cast<double>(c_.N) <= 1e9,
        "task.s = " + std::to_string(s_) + " with N = " + std::to_string(c_.N) +
            " and M = " + std::to_string(c_.M) +
            " makes exact labels too expensive (min(M, N^(s-1)) * N > 1e9); lower s, N or M");
  }

 protected:
  int64_t positives_per_plant() const override { return s_; }

  void plant(Rng& /*rng*/, int64_t plants, const std::vector<int64_t>& order, int64_t* tokens,
             const std::vector<int64_t*>& /*aux*/) const override {
    for (int64_t g = 0; g < plants && s_ * (g + 1) <= c_.N; ++g) {
      int64_t sum = 0;
      for (int64_t t = 0; t + 1 < s_; ++t) sum += tokens[order[s_ * g + t]];
      tokens[order[s_ * g + s_ - 1]] = mod_m(-sum, c_.M);
    }
  }

  void labels(const int64_t* tokens, const std::vector<int64_t*>& /*aux*/,
              int64_t* out) const override {
    const int64_t k = s_ - 1, M = c_.M;
    if (!c_.distinct) {
      SumSet values(tokens, tokens + c_.N), sums{0};
      for (int64_t t = 0; t < k; ++t) {
        SumSet next;
        for (int64_t a : sums)
          for (int64_t v : values) next.insert((a + v) % M);
        sums.swap(next);
      }
      for (int64_t i = 0; i < c_.N; ++i) out[i] = sums.count(mod_m(-tokens[i], M)) ? 1 : 0;
      return;
    }
    // by_count[c] = sums of c distinct positions among those seen so far (excluding i).
    std::vector<SumSet> by_count(k + 1);
    for (int64_t i = 0; i < c_.N; ++i) {
      for (auto& set : by_count) set.clear();
      by_count[0].insert(0);
      for (int64_t j = 0; j < c_.N; ++j) {
        if (j == i) continue;
        for (int64_t c = k - 1; c >= 0; --c)
          for (int64_t a : by_count[c]) by_count[c + 1].insert((a + tokens[j]) % M);
      }
      out[i] = by_count[k].count(mod_m(-tokens[i], M)) ? 1 : 0;
    }
  }

 private:
  int64_t s_;
};

}  // namespace

std::vector<ParamSpec> match_s_schema() {
  auto schema = match_common_schema();
  schema.push_back(param_int("s", 4, "order: x_i plus s-1 witnesses sum to 0 mod M", 2, 16));
  return schema;
}

std::unique_ptr<Task> match_s_make(const Params& params) {
  return std::make_unique<MatchSTask>(match_config("match_s", params), params.get_int("s"));
}

void match_s_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct, int64_t s,
                       int64_t* labels) {
  match_reference_labels(
      tokens, N, M, s - 1,
      [&](int64_t i, const int64_t* j) { return !distinct || match_all_distinct(i, j, s - 1); },
      labels);
}

void match_s_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y) {
  MatchReferenceInputs r = match_reference_inputs(params, batch, row);
  match_s_reference(r.tokens, r.N, r.M, r.distinct, params.get_int("s"), r.labels.data());
  r.write(y);
}

}  // namespace attn
