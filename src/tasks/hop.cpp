// hop: k-hop induction heads (hop.h): sampling, find and its iterates, the encoding.
#include "tasks/hop.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/rng.h"
#include "tasks/named_arrays.h"

namespace attn {

std::vector<ParamSpec> hop_schema() {
  return {
      param_int("N", 32, "sequence length: the k token, then N-1 symbols", 2, 1 << 16),
      param_int("A", 4, "alphabet size (symbols 0 .. A-1)", 2, 1 << 12),
      param_int("k_max", 4, "k is drawn uniformly from 0 .. k_max per sequence", 0, 1 << 12),
      param_int("k", -1, "-1: k drawn per sequence; k >= 0: every sequence uses this k (<= k_max)",
                -1, 1 << 12),
  };
}

namespace {

struct HopConfig {
  int64_t N = 0, A = 0, k_max = 0;
  int64_t k = -1;  // -1: drawn per sequence
};

class HopTask final : public Task {
 public:
  explicit HopTask(const HopConfig& c)
      : c_(c), symbols_key_(rng_stream_key("hop.symbols")), k_key_(rng_stream_key("hop.k")) {
    const int64_t N = c_.N;
    shape_.T = N;
    shape_.d_in = c_.A + c_.k_max + 1;
    shape_.T_out = N;
    shape_.d_out = c_.A + 2;
    shape_.target = TargetKind::categorical;
    shape_.raw.push_back({"symbols", {N - 1}, true});
    shape_.raw.push_back(named_array_spec(NamedArray::k, {}, N));
    shape_.raw.push_back(named_array_spec(NamedArray::metric_mask, {N}, N));
    shape_.raw.push_back(named_array_spec(NamedArray::hop_chain, {N, c_.k_max + 1}, N));
  }

  const TaskShape& shape() const override { return shape_; }

  void sample_range(uint64_t seed, int64_t first, int64_t count, Batch& out,
                    int64_t row) const override {
    const int64_t N = c_.N, A = c_.A, L = N - 1;
    const int64_t d_in = shape_.d_in, d_out = shape_.d_out;
    std::vector<int64_t> cls(static_cast<size_t>(N));
    for (int64_t s = 0; s < count; ++s) {
      const uint64_t index = static_cast<uint64_t>(first + s);
      int64_t* sigma = out.raw_i64(0, row + s);
      int64_t* k_out = out.raw_i64(1, row + s);
      int64_t* mask = out.raw_i64(2, row + s);
      int64_t* chain = out.raw_i64(3, row + s);
      Rng rng(seed, symbols_key_, index);
      for (int64_t i = 0; i < L; ++i) {
        if (i == 0) {
          sigma[0] = static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(A)));
        } else {  // uniform on the alphabet minus σ_{i−1}
          const int64_t v = static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(A - 1)));
          sigma[i] = v >= sigma[i - 1] ? v + 1 : v;
        }
      }
      int64_t k = c_.k;
      if (k < 0) {
        Rng krng(seed, k_key_, index);
        k = static_cast<int64_t>(krng.uniform_int(static_cast<uint64_t>(c_.k_max + 1)));
      }
      *k_out = k;
      hop_targets(sigma, N, A, k, c_.k_max, chain, cls.data());
      double* x = out.x(row + s);
      double* y = out.y(row + s);
      x[A + k] = 1.0;
      for (int64_t t = 0; t < N; ++t) {
        if (t > 0) x[t * d_in + sigma[t - 1]] = 1.0;
        const int64_t c = cls[static_cast<size_t>(t)];
        y[t * d_out + c] = 1.0;
        mask[t] = c < A ? 1 : 0;  // blank and none do not count for the metrics
      }
    }
  }

 private:
  HopConfig c_;
  uint64_t symbols_key_, k_key_;
  TaskShape shape_;
};

}  // namespace

std::unique_ptr<Task> hop_make(const Params& params) {
  HopConfig c;
  c.N = params.get_int("N");
  c.A = params.get_int("A");
  c.k_max = params.get_int("k_max");
  c.k = params.get_int("k");
  ATTN_CHECK(c.k <= c.k_max, "task.k = " + std::to_string(c.k) +
                                 " is larger than task.k_max = " + std::to_string(c.k_max) +
                                 "; raise task.k_max (it sets the k tokens of the input)");
  return std::make_unique<HopTask>(c);
}

void hop_find(const int64_t* sigma, int64_t L, int64_t A, int64_t* out) {
  std::vector<int64_t> last(static_cast<size_t>(A), -1);  // last position of each symbol
  for (int64_t i = 0; i < L; ++i) {
    int64_t& seen = last[static_cast<size_t>(sigma[i])];
    out[i] = seen >= 0 ? seen + 1 : -1;
    seen = i;
  }
}

void hop_targets(const int64_t* sigma, int64_t N, int64_t A, int64_t k, int64_t k_max,
                 int64_t* chain, int64_t* cls) {
  const int64_t J = k_max + 1;
  std::vector<int64_t> find(static_cast<size_t>(N - 1));
  hop_find(sigma, N - 1, A, find.data());
  std::fill(chain, chain + J, int64_t{-1});
  cls[0] = A;  // blank
  for (int64_t t = 1; t < N; ++t) {
    int64_t* c = chain + t * J;
    int64_t g = t - 1;  // find^j(t − 1), −1 once undefined
    for (int64_t j = 0; j < J; ++j) {
      if (j > 0 && g >= 0) g = find[static_cast<size_t>(g)];
      c[j] = g >= 0 ? g + 1 : -1;
    }
    cls[t] = c[k] >= 0 ? sigma[c[k] - 1] : A + 1;
  }
}

void hop_reference(const int64_t* sigma, int64_t N, int64_t A, int64_t k, int64_t* out) {
  out[0] = A;  // blank
  for (int64_t t = 1; t < N; ++t) {
    int64_t i = t - 1;
    for (int64_t hop = 0; hop < k && i >= 0; ++hop) {
      int64_t j = i - 1;
      while (j >= 0 && sigma[j] != sigma[i]) --j;
      i = j >= 0 ? j + 1 : -1;
    }
    out[t] = i >= 0 ? sigma[i] : A + 1;
  }
}

void hop_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y) {
  const int64_t N = batch.shape.T, d_in = batch.shape.d_in, d_out = batch.shape.d_out;
  const int64_t A = params.get_int("A");
  const double* x = batch.x(row);
  const int64_t k = std::max_element(x + A, x + d_in) - (x + A);
  std::vector<int64_t> sigma(static_cast<size_t>(N - 1)), cls(static_cast<size_t>(N));
  for (int64_t t = 1; t < N; ++t)
    sigma[static_cast<size_t>(t - 1)] =
        std::max_element(x + t * d_in, x + t * d_in + A) - (x + t * d_in);
  hop_reference(sigma.data(), N, A, k, cls.data());
  std::fill(y, y + N * d_out, 0.0);
  for (int64_t t = 0; t < N; ++t) y[t * d_out + cls[static_cast<size_t>(t)]] = 1.0;
}

}  // namespace attn
