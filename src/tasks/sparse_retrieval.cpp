// sparse_retrieval: q-sparse token retrieval (sparse_retrieval.h): sampling and encoding.
#include "tasks/sparse_retrieval.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/choice.h"
#include "core/error.h"
#include "core/rng.h"
#include "tasks/named_arrays.h"
#include "tasks/qsa_instances.h"
#include "tasks/sparse_retrieval_link.h"

namespace attn {
namespace {

enum class RetrievalVariant { seq2seq, single };
constexpr Choice<RetrievalVariant> kVariants[] = {{RetrievalVariant::seq2seq, "seq2seq"},
                                                  {RetrievalVariant::single, "single"}};
enum class RetrievalEncoding { one_hot, indices };
constexpr Choice<RetrievalEncoding> kEncodings[] = {{RetrievalEncoding::one_hot, "one_hot"},
                                                    {RetrievalEncoding::indices, "indices"}};
enum class RetrievalPointers { ordered, sorted };
constexpr Choice<RetrievalPointers> kPointers[] = {{RetrievalPointers::ordered, "ordered"},
                                                   {RetrievalPointers::sorted, "sorted"}};
enum class RetrievalZ { sphere, ball, gaussian };
constexpr Choice<RetrievalZ> kZDists[] = {
    {RetrievalZ::sphere, "sphere"}, {RetrievalZ::ball, "ball"}, {RetrievalZ::gaussian, "gaussian"}};

struct RetrievalConfig {
  int64_t N = 0, q = 0, d = 0, width = 0;
  RetrievalLink link = RetrievalLink::mean;
  RetrievalVariant variant = RetrievalVariant::seq2seq;
  RetrievalEncoding encoding = RetrievalEncoding::one_hot;
  RetrievalZ z_dist = RetrievalZ::sphere;
  bool ordered = true, exclude_self = false;
  // Layout: pointer fields start at d, the position field at pos_at.
  int64_t pos_at() const { return d + (encoding == RetrievalEncoding::one_hot ? q * N : q); }
  int64_t d_in() const { return pos_at() + (encoding == RetrievalEncoding::one_hot ? N : 1); }
};

RetrievalConfig retrieval_config(const Params& params) {
  RetrievalConfig c;
  c.N = params.get_int("N");
  c.q = params.get_int("q");
  c.d = params.get_int("d");
  c.width = params.get_int("link_width");
  c.link = choice_parse(params.get_string("link"), kRetrievalLinks, "task.link");
  c.variant = choice_parse(params.get_string("variant"), kVariants, "task.variant");
  c.encoding = choice_parse(params.get_string("encoding"), kEncodings, "task.encoding");
  c.z_dist = choice_parse(params.get_string("z_dist"), kZDists, "task.z_dist");
  c.ordered =
      choice_parse(params.get_string("pointers"), kPointers, "task.pointers") ==
      RetrievalPointers::ordered;
  c.exclude_self = params.get_bool("exclude_self");
  const std::string qN = "task.q = " + std::to_string(c.q);
  const std::string N = "task.N = " + std::to_string(c.N);
  ATTN_CHECK(c.q <= c.N, qN + " is larger than " + N +
                             " (the q pointers are distinct positions); lower q or raise N");
  ATTN_CHECK(!c.exclude_self || c.variant == RetrievalVariant::seq2seq,
             "task.exclude_self applies to variant seq2seq only; set task.exclude_self = false");
  ATTN_CHECK(!c.exclude_self || c.q < c.N,
             qN + " must be smaller than " + N +
                 " with task.exclude_self (the pointers avoid i); lower q or raise N");
  return c;
}

// A uniformly random order of p[0..q) (Fisher–Yates).
void shuffle(Rng& rng, int64_t* p, int64_t q) {
  for (int64_t k = q - 1; k > 0; --k)
    std::swap(p[k], p[rng.uniform_int(static_cast<uint64_t>(k + 1))]);
}

void draw_token(RetrievalZ dist, Rng& rng, double* z, int64_t d) {
  switch (dist) {
    case RetrievalZ::sphere: rng_sphere(rng, z, d); return;
    case RetrievalZ::ball: rng_ball(rng, z, d); return;
    case RetrievalZ::gaussian: rng_gaussian(rng, z, d); return;
  }
}

class SparseRetrievalTask final : public Task {
 public:
  explicit SparseRetrievalTask(const RetrievalConfig& c) : c_(c) {
    const int64_t N = c_.N, q = c_.q, d = c_.d;
    const bool single = c_.variant == RetrievalVariant::single;
    shape_.T = single ? N + 1 : N;
    shape_.d_in = c_.d_in();
    shape_.T_out = single ? 1 : N;
    shape_.d_out = d;
    shape_.target = TargetKind::real;
    shape_.raw.push_back({"z", {N, d}, false});
    if (single)
      shape_.raw.push_back({"pointers", {q}, true});
    else
      shape_.raw.push_back(named_array_spec(NamedArray::sets, {N, q}, N));
    if (c_.link == RetrievalLink::relu_net) {
      shape_.constants.push_back({"link_w1", {c_.width, q * d}, false});
      shape_.constants.push_back({"link_w2", {d, c_.width}, false});
    }
  }

  const TaskShape& shape() const override { return shape_; }

  void fill_constants(uint64_t seed, Batch& out) const override {
    if (c_.link != RetrievalLink::relu_net) return;
    const RetrievalLinkFn g = retrieval_link_make(c_.link, c_.q, c_.d, c_.width, seed);
    out.constants[0].f64 = g.w1;
    out.constants[1].f64 = g.w2;
  }

  void sample_range(uint64_t seed, int64_t first, int64_t count, Batch& out,
                    int64_t row) const override {
    const RetrievalLinkFn g = retrieval_link_make(c_.link, c_.q, c_.d, c_.width, seed);
    std::vector<double> scratch;
    for (int64_t s = 0; s < count; ++s) {
      const uint64_t index = static_cast<uint64_t>(first + s);
      double* z = out.raw_f64(0, row + s);
      int64_t* pointers = out.raw_i64(1, row + s);
      if (c_.variant == RetrievalVariant::single)
        draw_single(seed, index, z, pointers);
      else
        draw_seq2seq(seed, index, z, pointers);
      encode(z, pointers, out.x(row + s));
      const int64_t outputs = shape_.T_out;
      for (int64_t i = 0; i < outputs; ++i)
        retrieval_link_apply(g, z, pointers + i * c_.q, out.y(row + s) + i * c_.d, scratch);
    }
  }

 private:
  void draw_seq2seq(uint64_t seed, uint64_t index, double* z, int64_t* sets) const {
    QsaConfig qc;
    qc.N = c_.N;
    qc.q = c_.q;
    qc.d_out = c_.d;
    qc.exclude_self = c_.exclude_self;
    qc.ball = c_.z_dist == RetrievalZ::ball;
    qsa_draw_random(qc, seed, index, z, sets);  // qsa's z and sorted sets
    if (c_.z_dist == RetrievalZ::gaussian) {
      Rng z_rng(seed, "sparse_retrieval.z", index);
      rng_gaussian(z_rng, z, c_.N * c_.d);
    }
    if (!c_.ordered) return;
    Rng order(seed, "sparse_retrieval.order", index);
    for (int64_t i = 0; i < c_.N; ++i) shuffle(order, sets + i * c_.q, c_.q);
  }

  void draw_single(uint64_t seed, uint64_t index, double* z, int64_t* pointers) const {
    Rng z_rng(seed, "sparse_retrieval.z", index);
    for (int64_t j = 0; j < c_.N; ++j) draw_token(c_.z_dist, z_rng, z + j * c_.d, c_.d);
    Rng p_rng(seed, "sparse_retrieval.pointers", index);
    rng_subset(p_rng, c_.N, c_.q, pointers);
    if (c_.ordered) shuffle(p_rng, pointers, c_.q);
  }

  // Token `row` of x: z (or zeros), the pointers p (or none), its position (or none: −1).
  void encode_token(double* x, const double* z, const int64_t* p, int64_t position) const {
    const int64_t d = c_.d, q = c_.q, N = c_.N, at = c_.pos_at();
    const bool one_hot = c_.encoding == RetrievalEncoding::one_hot;
    if (z) std::copy(z, z + d, x);
    for (int64_t j = 0; j < q; ++j) {
      if (one_hot && p) x[d + j * N + p[j]] = 1.0;
      if (!one_hot) x[d + j] = p ? static_cast<double>(p[j]) : -1.0;
    }
    if (one_hot && position >= 0) x[at + position] = 1.0;
    if (!one_hot) x[at] = static_cast<double>(position);
  }

  void encode(const double* z, const int64_t* pointers, double* x) const {
    const int64_t d = c_.d, q = c_.q, d_in = shape_.d_in;
    if (c_.variant == RetrievalVariant::seq2seq) {
      for (int64_t i = 0; i < c_.N; ++i) encode_token(x + i * d_in, z + i * d, pointers + i * q, i);
      return;
    }
    encode_token(x, nullptr, pointers, -1);
    for (int64_t j = 0; j < c_.N; ++j) encode_token(x + (j + 1) * d_in, z + j * d, nullptr, j);
  }

  RetrievalConfig c_;
  TaskShape shape_;
};

}  // namespace

std::vector<ParamSpec> sparse_retrieval_schema() {
  return {
      param_int("N", 16, "number of data tokens", 1, 1 << 20),
      param_int("q", 2, "pointers per output: the q distinct positions g reads (1 <= q <= N)", 1,
                1 << 20),
      param_int("d", 4, "token dimension d (= the output dimension)", 1, 1 << 16),
      param_choice("link", "mean", choice_names(kRetrievalLinks),
                   "g on the q retrieved tokens: mean (qsa), product, max (coordinate-wise), "
                   "relu_net (a fixed random ReLU network drawn from the dataset seed)"),
      param_int("link_width", 32, "relu_net: hidden units of the random network", 1, 1 << 16),
      param_choice("pointers", "ordered", choice_names(kPointers),
                   "each pointer tuple in uniform random order, or sorted (as qsa's sets)"),
      param_choice("variant", "seq2seq", choice_names(kVariants),
                   "seq2seq: every position has its pointers and output; single: one pointer "
                   "token first, one output (the simplified model, our reading)"),
      param_choice("encoding", "one_hot", choice_names(kEncodings),
                   "one_hot: [z, one-hot of each pointer, one-hot position]; indices: [z, the "
                   "pointers, the position] (widths independent of N)"),
      param_choice("z_dist", "sphere", choice_names(kZDists),
                   "tokens uniform on the unit sphere, in the unit ball, or N(0, I)"),
      param_bool("exclude_self", false, "seq2seq: draw t_i from [N] without i"),
  };
}

std::unique_ptr<Task> sparse_retrieval_make(const Params& params) {
  return std::make_unique<SparseRetrievalTask>(retrieval_config(params));
}

void sparse_retrieval_batch_reference(const Params& params, const Batch& batch, int64_t row,
                                      double* y) {
  // From the definition, reading only X (and relu_net's weights): no helper of the fast path.
  const RetrievalConfig c = retrieval_config(params);
  const int64_t N = c.N, q = c.q, d = c.d, d_in = batch.shape.d_in;
  const bool single = c.variant == RetrievalVariant::single;
  const bool one_hot = c.encoding == RetrievalEncoding::one_hot;
  const double* x = batch.x(row);
  const double* data = single ? x + d_in : x;  // data token j at data + j·d_in
  auto pointer = [&](int64_t i, int64_t j) {   // pointer j of output i, decoded from its token
    const double* f = x + (single ? 0 : i) * d_in + d;
    if (!one_hot) return static_cast<int64_t>(f[j]);
    return static_cast<int64_t>(std::max_element(f + j * N, f + (j + 1) * N) - (f + j * N));
  };
  const int64_t outputs = single ? 1 : N;
  for (int64_t i = 0; i < outputs; ++i) {
    for (int64_t k = 0; k < d; ++k) {
      std::vector<double> v;  // coordinate k of the retrieved tokens, in pointer order
      for (int64_t j = 0; j < q; ++j) v.push_back(data[pointer(i, j) * d_in + k]);
      double out = 0.0;
      switch (c.link) {
        case RetrievalLink::mean:
          for (double a : v) out += a / static_cast<double>(q);
          break;
        case RetrievalLink::product:
          out = 1.0;
          for (double a : v) out *= a;
          break;
        case RetrievalLink::max: out = *std::max_element(v.begin(), v.end()); break;
        case RetrievalLink::relu_net: {
          const std::vector<double>& w1 = batch.find("link_w1").f64;
          const std::vector<double>& w2 = batch.find("link_w2").f64;
          for (int64_t h = 0; h < c.width; ++h) {
            double a = 0.0;
            for (int64_t j = 0; j < q; ++j)
              for (int64_t m = 0; m < d; ++m)
                a += w1[h * q * d + j * d + m] * data[pointer(i, j) * d_in + m];
            out += w2[k * c.width + h] * std::max(a, 0.0);
          }
          break;
        }
      }
      y[i * d + k] = out;
    }
  }
}

}  // namespace attn
