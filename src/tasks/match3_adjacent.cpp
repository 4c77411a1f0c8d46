// match3_adjacent (AdjacentMatch3, spec §2.3): ∃ j with x_i + x_j + x_{j+1} ≡ 0 (mod M).
#include <vector>

#include "tasks/match_common.h"
#include "tasks/match_tasks.h"

namespace attn {
namespace {

class Match3AdjacentTask final : public MatchTask {
 public:
  using MatchTask::MatchTask;

 protected:
  int64_t positives_per_plant() const override { return 1; }

  void plant(Rng& rng, int64_t plants, const std::vector<int64_t>& order, int64_t* tokens,
             const std::vector<int64_t*>& /*aux*/) const override {
    // Tokens of earlier plants are locked, so later plants never undo them.
    std::vector<char> locked(c_.N, 0);
    std::vector<int64_t> starts;
    for (int64_t g = 0; g < plants && g < c_.N; ++g) {
      const int64_t i = order[g];
      starts.clear();  // pairs (j, j+1) avoiding i whose second token may change
      for (int64_t j = 0; j + 1 < c_.N; ++j)
        if (j != i && j + 1 != i && !locked[j + 1]) starts.push_back(j);
      if (starts.empty()) continue;
      const int64_t j = starts[rng.uniform_int(starts.size())];
      tokens[j + 1] = mod_m(-(tokens[i] + tokens[j]), c_.M);
      locked[i] = locked[j] = locked[j + 1] = 1;
    }
  }

  void labels(const int64_t* tokens, const std::vector<int64_t*>& /*aux*/,
              int64_t* out) const override {
    for (int64_t i = 0; i < c_.N; ++i) {
      out[i] = 0;
      for (int64_t j = 0; j + 1 < c_.N; ++j) {
        if (c_.distinct && (j == i || j + 1 == i)) continue;
        if ((tokens[i] + tokens[j] + tokens[j + 1]) % c_.M == 0) {
          out[i] = 1;
          break;
        }
      }
    }
  }
};

}  // namespace

std::vector<ParamSpec> match3_adjacent_schema() { return match_common_schema(); }

std::unique_ptr<Task> match3_adjacent_make(const Params& params) {
  return std::make_unique<Match3AdjacentTask>(match_config("match3_adjacent", params));
}

void match3_adjacent_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct,
                               int64_t* labels) {
  match_reference_labels(tokens, N, M, 2,
                         [&](int64_t i, const int64_t* j) {
                           return j[1] == j[0] + 1 && (!distinct || match_all_distinct(i, j, 2));
                         },
                         labels);
}

void match3_adjacent_batch_reference(const Params& params, const Batch& batch, int64_t row,
                                     double* y) {
  MatchReferenceInputs r = match_reference_inputs(params, batch, row);
  match3_adjacent_reference(r.tokens, r.N, r.M, r.distinct, r.labels.data());
  r.write(y);
}

}  // namespace attn
