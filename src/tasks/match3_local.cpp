// match3_local (LocalMatch3_w, spec §2.3): match3 with both witnesses within distance w of i.
#include <algorithm>

#include "tasks/match_common.h"
#include "tasks/match_tasks.h"
#include "tasks/named_arrays.h"

namespace attn {
namespace {

class Match3LocalTask final : public MatchTask {
 public:
  Match3LocalTask(MatchConfig config, int64_t w) : MatchTask(std::move(config)), w_(w) {
    // The window as a dataset constant, so that a model built for another w can refuse it.
    shape_.constants.push_back(named_array_spec(NamedArray::window, {}, c_.N));
  }
  void fill_constants(uint64_t seed, Batch& out) const override {
    MatchTask::fill_constants(seed, out);
    out.constants[1].i64[0] = w_;
  }

 protected:
  // The witnesses are near each other, so they usually become positive too.
  int64_t positives_per_plant() const override { return 2; }

  void plant(Rng& rng, int64_t plants, const std::vector<int64_t>& order, int64_t* tokens,
             const std::vector<int64_t*>& /*aux*/) const override {
    // Tokens of earlier plants are locked, so later plants never undo them.
    std::vector<char> locked(c_.N, 0);
    std::vector<int64_t> window, free;
    for (int64_t g = 0; g < plants && g < c_.N; ++g) {
      const int64_t i = order[g];
      window.clear();
      free.clear();
      for (int64_t j = std::max<int64_t>(0, i - w_); j <= std::min(c_.N - 1, i + w_); ++j) {
        if (j == i) continue;
        window.push_back(j);
        if (!locked[j]) free.push_back(j);
      }
      if (window.size() < 2 || free.empty()) continue;
      const int64_t changed = free[rng.uniform_int(free.size())];
      int64_t other;
      do {
        other = window[rng.uniform_int(window.size())];
      } while (other == changed);
      tokens[changed] = mod_m(-(tokens[i] + tokens[other]), c_.M);
      locked[i] = locked[changed] = locked[other] = 1;
    }
  }

  void labels(const int64_t* tokens, const std::vector<int64_t*>& /*aux*/,
              int64_t* out) const override {
    for (int64_t i = 0; i < c_.N; ++i) {
      const int64_t lo = std::max<int64_t>(0, i - w_), hi = std::min(c_.N - 1, i + w_);
      out[i] = 0;
      for (int64_t j1 = lo; j1 <= hi && !out[i]; ++j1) {
        for (int64_t j2 = lo; j2 <= hi; ++j2) {
          if (c_.distinct && (j1 == i || j2 == i || j1 == j2)) continue;
          if ((tokens[i] + tokens[j1] + tokens[j2]) % c_.M == 0) {
            out[i] = 1;
            break;
          }
        }
      }
    }
  }

 private:
  int64_t w_;
};

}  // namespace

std::vector<ParamSpec> match3_local_schema() {
  auto schema = match_common_schema();
  schema.push_back(param_int("w", 2, "window: witnesses within distance w of i", 1, 1 << 16));
  return schema;
}

std::unique_ptr<Task> match3_local_make(const Params& params) {
  return std::make_unique<Match3LocalTask>(match_config("match3_local", params),
                                           params.get_int("w"));
}

void match3_local_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct, int64_t w,
                            int64_t* labels) {
  match_reference_labels(tokens, N, M, 2,
                         [&](int64_t i, const int64_t* j) {
                           const bool near = std::abs(j[0] - i) <= w && std::abs(j[1] - i) <= w;
                           return near && (!distinct || match_all_distinct(i, j, 2));
                         },
                         labels);
}

void match3_local_batch_reference(const Params& params, const Batch& batch, int64_t row,
                                  double* y) {
  MatchReferenceInputs r = match_reference_inputs(params, batch, row);
  match3_local_reference(r.tokens, r.N, r.M, r.distinct, params.get_int("w"), r.labels.data());
  r.write(y);
}

}  // namespace attn
