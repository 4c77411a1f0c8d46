// match3: ∃ j1, j2 with x_i + x_j1 + x_j2 ≡ 0 (mod M). Labels in O(N^2 log N): for each
// (i, j1) look up how many tokens equal the missing value.
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

std::vector<ParamSpec> match3_schema() { return match_common_schema(); }

std::unique_ptr<Task> match3_make(const Params& params) {
  return std::make_unique<Match3Task>(match_config("match3", params));
}

void match3_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct,
                      int64_t* labels) {
  match_reference_labels(
      tokens, N, M, 2,
      [&](int64_t i, const int64_t* j) { return !distinct || match_all_distinct(i, j, 2); },
      labels);
}

}  // namespace attn
