// match2: ∃ j with x_i + x_j ≡ 0 (mod M). Labels in O(N log N) by value counts.
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

std::vector<ParamSpec> match2_schema() { return match_common_schema(); }

std::unique_ptr<Task> match2_make(const Params& params) {
  return std::make_unique<Match2Task>(match_config("match2", params));
}

void match2_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct,
                      int64_t* labels) {
  match_reference_labels(tokens, N, M, 1,
                         [&](int64_t i, const int64_t* j) { return !distinct || j[0] != i; },
                         labels);
}

}  // namespace attn
