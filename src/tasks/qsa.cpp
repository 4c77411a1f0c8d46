// qsa: q-sparse averaging (Sanford et al. 2023).
#include "tasks/qsa.h"

#include <string>

#include "core/error.h"
#include "core/rng.h"

namespace attn {
namespace {

class QsaTask final : public Task {
 public:
  explicit QsaTask(const Params& params)
      : N_(params.get_int("N")),
        q_(params.get_int("q")),
        d_out_(params.get_int("d_out")),
        multi_hot_(params.get_string("encoding") == "multi_hot"),
        exclude_self_(params.get_bool("exclude_self")),
        ball_(params.get_string("z_dist") == "ball") {
    ATTN_CHECK(q_ < N_, "task.q = " + std::to_string(q_) + " must be smaller than task.N = " +
                            std::to_string(N_) + "; lower q or raise N");
    shape_.T = N_;
    shape_.d_in = multi_hot_ ? d_out_ + 2 * N_ : d_out_ + q_ + 1;
    shape_.T_out = N_;
    shape_.d_out = d_out_;
    shape_.raw.push_back({"z", {N_, d_out_}, false});
    shape_.raw.push_back({"sets", {N_, q_}, true});
    // The ε of a 1/(2q)-approximation (spec §2.1): metrics report success_rate against it.
    shape_.constants.push_back({"success_threshold", {}, false});
  }

  const TaskShape& shape() const override { return shape_; }

  void fill_constants(uint64_t /*seed*/, Batch& out) const override {
    out.constants[0].f64[0] = 1.0 / (2.0 * static_cast<double>(q_));
  }

  void sample_range(uint64_t seed, int64_t first, int64_t count, Batch& out,
                    int64_t row) const override {
    const int64_t d_in = shape_.d_in;
    for (int64_t s = 0; s < count; ++s) {
      const uint64_t index = static_cast<uint64_t>(first + s);
      double* z = out.raw_f64(0, row + s);
      int64_t* sets = out.raw_i64(1, row + s);
      Rng z_rng(seed, "qsa.z", index);
      Rng set_rng(seed, "qsa.sets", index);
      for (int64_t i = 0; i < N_; ++i) {
        if (ball_)
          rng_ball(z_rng, z + i * d_out_, d_out_);
        else
          rng_sphere(z_rng, z + i * d_out_, d_out_);
      }
      for (int64_t i = 0; i < N_; ++i) {
        if (exclude_self_)
          rng_subset_excluding(set_rng, N_, q_, i, sets + i * q_);
        else
          rng_subset(set_rng, N_, q_, sets + i * q_);
      }
      double* x = out.x(row + s);
      double* y = out.y(row + s);
      const double inv_q = 1.0 / static_cast<double>(q_);
      for (int64_t i = 0; i < N_; ++i) {
        double* xi = x + i * d_in;
        const int64_t* set = sets + i * q_;
        for (int64_t k = 0; k < d_out_; ++k) xi[k] = z[i * d_out_ + k];
        if (multi_hot_) {
          for (int64_t j = 0; j < q_; ++j) xi[d_out_ + set[j]] = 1.0;
          xi[d_out_ + N_ + i] = 1.0;
        } else {
          for (int64_t j = 0; j < q_; ++j) xi[d_out_ + j] = static_cast<double>(set[j]);
          xi[d_out_ + q_] = static_cast<double>(i);
        }
        double* yi = y + i * d_out_;
        for (int64_t k = 0; k < d_out_; ++k) yi[k] = 0.0;
        for (int64_t j = 0; j < q_; ++j)
          for (int64_t k = 0; k < d_out_; ++k) yi[k] += z[set[j] * d_out_ + k];
        for (int64_t k = 0; k < d_out_; ++k) yi[k] *= inv_q;
      }
    }
  }

 private:
  int64_t N_, q_, d_out_;
  bool multi_hot_, exclude_self_, ball_;
  TaskShape shape_;
};

}  // namespace

std::vector<ParamSpec> qsa_schema() {
  return {
      param_int("N", 16, "sequence length", 2, 1 << 20),
      param_int("q", 2, "set size |y_i| (1 <= q < N)", 1, 1 << 20),
      param_int("d_out", 4, "dimension d' of the averaged vectors z_i", 1, 1 << 16),
      param_choice("encoding", "multi_hot", {"multi_hot", "indices"},
                   "multi_hot: [z_i, multi-hot(y_i), one-hot(i)]; indices: [z_i, sorted y_i, i]"),
      param_bool("exclude_self", false, "draw y_i from [N] without i"),
      param_choice("z_dist", "sphere", {"sphere", "ball"},
                   "z_i uniform on the unit sphere (worst case) or in the unit ball"),
  };
}

std::unique_ptr<Task> qsa_make(const Params& params) { return std::make_unique<QsaTask>(params); }

void qsa_reference(int64_t N, int64_t q, int64_t d_out, const double* z, const int64_t* sets,
                   double* y) {
  for (int64_t i = 0; i < N; ++i) {
    for (int64_t k = 0; k < d_out; ++k) {
      // Sum over all positions j, weighted by membership in y_i.
      double acc = 0.0;
      for (int64_t j = 0; j < N; ++j) {
        bool member = false;
        for (int64_t t = 0; t < q; ++t) member = member || sets[i * q + t] == j;
        if (member) acc += z[j * d_out + k] / static_cast<double>(q);
      }
      y[i * d_out + k] = acc;
    }
  }
}

}  // namespace attn
