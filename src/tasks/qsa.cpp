// qsa: q-sparse averaging (Sanford et al. 2023).
#include "tasks/qsa.h"

#include <string>

#include "core/error.h"
#include "core/rng.h"
#include "tasks/named_arrays.h"
#include "tasks/qsa_instances.h"

namespace attn {
namespace {

class QsaTask final : public Task {
 public:
  explicit QsaTask(const Params& params)
      : multi_hot_(params.get_string("encoding") == "multi_hot") {
    c_.N = params.get_int("N");
    c_.q = params.get_int("q");
    c_.d_out = params.get_int("d_out");
    c_.exclude_self = params.get_bool("exclude_self");
    c_.ball = params.get_string("z_dist") == "ball";
    c_.instances = choice_parse(params.get_string("instances"), kQsaInstances, "task.instances");
    c_.disj_fraction = params.get_real("disj_fraction");
    const int64_t N = c_.N, q = c_.q, d_out = c_.d_out;
    ATTN_CHECK(q < N, "task.q = " + std::to_string(q) + " must be smaller than task.N = " +
                          std::to_string(N) + "; lower q or raise N");
    qsa_instances_check(c_);
    shape_.T = N;
    shape_.d_in = multi_hot_ ? d_out + 2 * N : d_out + q + 1;
    shape_.T_out = N;
    shape_.d_out = d_out;
    shape_.target = TargetKind::real;
    shape_.raw.push_back({"z", {N, d_out}, false});
    shape_.raw.push_back(named_array_spec(NamedArray::sets, {N, q}, N));
    // The ε of a 1/(2q)-approximation (spec §2.1): metrics report success_rate against it.
    shape_.constants.push_back(named_array_spec(NamedArray::success_threshold, {}, N));
    if (c_.instances == QsaInstances::disj) {
      // Per sample: 1 iff a ∧ b = 0. The metric disj_accuracy reads these three.
      shape_.raw.push_back(named_array_spec(NamedArray::disjoint, {}, N));
      shape_.constants.push_back(named_array_spec(NamedArray::query_position, {}, N));  // 2q
      shape_.constants.push_back(named_array_spec(NamedArray::disj_threshold, {}, N));  // −1 + 1/q
    }
  }

  const TaskShape& shape() const override { return shape_; }

  void fill_constants(uint64_t /*seed*/, Batch& out) const override {
    const double qd = static_cast<double>(c_.q);
    out.constants[0].f64[0] = 1.0 / (2.0 * qd);
    if (c_.instances == QsaInstances::disj) {
      out.constants[1].i64[0] = 2 * c_.q;
      out.constants[2].f64[0] = -1.0 + 1.0 / qd;
    }
  }

  void sample_range(uint64_t seed, int64_t first, int64_t count, Batch& out,
                    int64_t row) const override {
    const int64_t N = c_.N, q = c_.q, d_out = c_.d_out;
    const int64_t d_in = shape_.d_in;
    std::vector<int64_t> F;
    if (c_.instances == QsaInstances::rank_pair) F = qsa_rank_pair_fixed_set(c_, seed);
    for (int64_t s = 0; s < count; ++s) {
      const uint64_t index = static_cast<uint64_t>(first + s);
      double* z = out.raw_f64(0, row + s);
      int64_t* sets = out.raw_i64(1, row + s);
      if (c_.instances == QsaInstances::disj)
        qsa_draw_disj(c_, seed, index, z, sets, out.raw_i64(2, row + s));
      else if (c_.instances == QsaInstances::index)
        qsa_draw_index(c_, seed, index, z, sets);
      else if (c_.instances == QsaInstances::rank_pair)
        qsa_draw_rank_pair(c_, seed, F, index, z, sets);
      else
        qsa_draw_random(c_, seed, index, z, sets);
      double* x = out.x(row + s);
      for (int64_t i = 0; i < N; ++i) {
        double* xi = x + i * d_in;
        const int64_t* set = sets + i * q;
        for (int64_t k = 0; k < d_out; ++k) xi[k] = z[i * d_out + k];
        if (multi_hot_) {
          for (int64_t j = 0; j < q; ++j) xi[d_out + set[j]] = 1.0;
          xi[d_out + N + i] = 1.0;
        } else {
          for (int64_t j = 0; j < q; ++j) xi[d_out + j] = static_cast<double>(set[j]);
          xi[d_out + q] = static_cast<double>(i);
        }
      }
      qsa_targets(N, q, d_out, z, sets, out.y(row + s));
    }
  }

 private:
  QsaConfig c_;
  bool multi_hot_;
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
      param_id_omit_default(
          param_choice("instances", choice_name(QsaConfig{}.instances, kQsaInstances),
                       choice_names(kQsaInstances),
                       "random: uniform z and sets; disj, index, rank_pair: the hard instances "
                       "of Thms 4, 11, 10 (docs/tasks.md §3.1)")),
      param_id_omit_default(param_real(
          "disj_fraction", 0.5, "disj: fraction of samples whose a and b are disjoint", 0.0, 1.0)),
  };
}

std::unique_ptr<Task> qsa_make(const Params& params) { return std::make_unique<QsaTask>(params); }

void qsa_targets(int64_t N, int64_t q, int64_t d_out, const double* z, const int64_t* sets,
                 double* y) {
  const double inv_q = 1.0 / static_cast<double>(q);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t* set = sets + i * q;
    double* yi = y + i * d_out;
    for (int64_t k = 0; k < d_out; ++k) yi[k] = 0.0;
    for (int64_t j = 0; j < q; ++j)
      for (int64_t k = 0; k < d_out; ++k) yi[k] += z[set[j] * d_out + k];
    for (int64_t k = 0; k < d_out; ++k) yi[k] *= inv_q;
  }
}

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

void qsa_batch_reference(const Params& /*params*/, const Batch& batch, int64_t row, double* y) {
  const RawArray* sets = named_array_find(batch, NamedArray::sets);
  const RawArray& z = batch.find("z");
  ATTN_ASSERT(sets != nullptr);
  const int64_t N = batch.shape.T, q = sets->spec.sample_shape[1], d_out = batch.shape.d_out;
  qsa_reference(N, q, d_out, z.f64.data() + row * N * d_out, sets->i64.data() + row * N * q, y);
}

}  // namespace attn
