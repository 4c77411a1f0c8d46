// match3_pointer (PointerMatch3_s, spec §2.3): token i carries S_i, a uniform s-subset of
// [N] \ {i}; label_i = 1 iff ∃ j1, j2 ∈ S_i with x_i + x_j1 + x_j2 ≡ 0 (mod M).
// Input row i: [token encoding, multi-hot of S_i ∈ {0,1}^N]. Raw: pointers (n, N, s).
#include <vector>

#include "core/error.h"
#include "tasks/match_common.h"
#include "tasks/match_tasks.h"

namespace attn {
namespace {

class Match3PointerTask final : public MatchTask {
 public:
  Match3PointerTask(MatchConfig config, int64_t s) : MatchTask(std::move(config)), s_(s) {
    ATTN_CHECK(s_ <= c_.N - 1, "task.s = " + std::to_string(s_) + " must be at most N - 1 = " +
                                   std::to_string(c_.N - 1) + "; lower s or raise N");
    ATTN_CHECK(s_ >= 2 || c_.sampling == MatchSampling::uniform,
               "task.s = 1 leaves no pair of distinct witnesses to plant a match with; use "
               "task.s >= 2 or task.sampling = \"uniform\"");
    add_raw({"pointers", {c_.N, s_}, true});
    add_input_columns(c_.N);
  }

 protected:
  void draw_aux(Rng& rng, std::vector<int64_t*>& aux) const override {
    for (int64_t i = 0; i < c_.N; ++i) rng_subset_excluding(rng, c_.N, s_, i, aux[0] + i * s_);
  }

  void encode_aux(int64_t i, const std::vector<int64_t*>& aux, double* x_extra) const override {
    for (int64_t t = 0; t < s_; ++t) x_extra[aux[0][i * s_ + t]] = 1.0;
  }

  int64_t positives_per_plant() const override { return 1; }

  void plant(Rng& rng, int64_t plants, const std::vector<int64_t>& order, int64_t* tokens,
             const std::vector<int64_t*>& aux) const override {
    if (s_ < 2) return;
    // Tokens of earlier plants are locked, so later plants never undo them.
    std::vector<char> locked(c_.N, 0);
    std::vector<int64_t> free;
    for (int64_t g = 0; g < plants && g < c_.N; ++g) {
      const int64_t i = order[g];
      const int64_t* set = aux[0] + i * s_;
      free.clear();
      for (int64_t t = 0; t < s_; ++t)
        if (!locked[set[t]]) free.push_back(set[t]);
      if (free.empty()) continue;
      const int64_t changed = free[rng.uniform_int(free.size())];
      int64_t other;
      do {
        other = set[rng.uniform_int(s_)];
      } while (other == changed);
      tokens[changed] = mod_m(-(tokens[i] + tokens[other]), c_.M);
      locked[i] = locked[changed] = locked[other] = 1;
    }
  }

  void labels(const int64_t* tokens, const std::vector<int64_t*>& aux,
              int64_t* out) const override {
    for (int64_t i = 0; i < c_.N; ++i) {
      const int64_t* set = aux[0] + i * s_;
      out[i] = 0;
      for (int64_t a = 0; a < s_ && !out[i]; ++a) {
        for (int64_t b = 0; b < s_; ++b) {
          if (c_.distinct && a == b) continue;  // members of S_i already differ from i
          if ((tokens[i] + tokens[set[a]] + tokens[set[b]]) % c_.M == 0) {
            out[i] = 1;
            break;
          }
        }
      }
    }
  }

 private:
  int64_t s_;
};

}  // namespace

std::vector<ParamSpec> match3_pointer_schema() {
  auto schema = match_common_schema();
  schema.push_back(param_int("s", 4, "size of each token's pointer set S_i", 1, 1 << 16));
  return schema;
}

std::unique_ptr<Task> match3_pointer_make(const Params& params) {
  return std::make_unique<Match3PointerTask>(match_config("match3_pointer", params),
                                             params.get_int("s"));
}

void match3_pointer_reference(const int64_t* tokens, const int64_t* pointers, int64_t N,
                              int64_t M, bool distinct, int64_t s, int64_t* labels) {
  match_reference_labels(tokens, N, M, 2,
                         [&](int64_t i, const int64_t* j) {
                           bool in0 = false, in1 = false;
                           for (int64_t t = 0; t < s; ++t) {
                             in0 = in0 || pointers[i * s + t] == j[0];
                             in1 = in1 || pointers[i * s + t] == j[1];
                           }
                           return in0 && in1 && (!distinct || match_all_distinct(i, j, 2));
                         },
                         labels);
}

void match3_pointer_batch_reference(const Params& params, const Batch& batch, int64_t row,
                                    double* y) {
  MatchReferenceInputs r = match_reference_inputs(params, batch, row);
  const int64_t s = params.get_int("s");
  match3_pointer_reference(r.tokens, batch.find("pointers").i64.data() + row * r.N * s, r.N, r.M,
                           r.distinct, s, r.labels.data());
  r.write(y);
}

}  // namespace attn
