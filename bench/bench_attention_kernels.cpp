// The attention kernels alone (issue #32): the fused per-(sequence, head) kernel against the
// OpenBLAS GEMM path (ops/attention.h: AttentionPath::fused / ::blas in the shape) and the
// third-order kernels likewise (ops/third_order_attention.h), forward + backward with
// every gradient, float32, 1 thread, on the shapes of bench_nn_train's configurations:
//   d  attention B 256, N 32, 1 head, dk 16, dv 4, shared keys (the `attention` model, m 16)
//   e  attention B 256, N 32, 1 head, dk 32, dv 4, shared keys (m 32)
//   f  third order B 256, N 16, 1 head, dk 16, dv 4 (the `third_order` model, m 16)
//   t  attention B 32, N 64, 4 heads, dk = dv = 128, causal (one transformer layer)
//   g, h  attention B 256, N 64, 1 head, dk 128 and 64, dv 4, shared keys (bench_nn_train's g
//         and h: sanford2023 E1's largest shapes)
// Repetitions alternate the two paths (fused first in odd ones) so both see the same load; each
// prints the median CPU µs per forward + backward, the GFLOP/s of the products (2 flops a
// multiply-add: attention 3 · 2·B·H·N²·(dk + dv) counting forward once and backward twice, the
// causal pairs N(N+1)/2 only; third order 3 · 2·B·H·N³·(dk + dv)), their share of the 1-thread
// sgemm rate (2048³, measured first) and the ratio blas / fused (> 1: fused faster).
//
// Usage: bench_attention_kernels [--shapes d,e,f,t,g,h] [--reps 9] [--rep-seconds 0.3]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "bench_rates.h"
#include "core/error.h"
#include "core/threads.h"
#include "ops/attention.h"
#include "ops/third_order_attention.h"

namespace {

using namespace attn;

using bench::cpu_s;
using bench::median;
std::vector<float> filled(int64_t n, uint32_t seed) {
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
  return x;
}

struct Shape {
  std::string id;
  bool third;
  int64_t B, N, H, dk, dv;
  bool shared_keys, causal;
};
const Shape kShapes[] = {
    {"d", false, 256, 32, 1, 16, 4, true, false},
    {"e", false, 256, 32, 1, 32, 4, true, false},
    {"f", true, 256, 16, 1, 16, 4, false, false},
    {"t", false, 32, 64, 4, 128, 128, false, true},
    {"g", false, 256, 64, 1, 128, 4, true, false},
    {"h", false, 256, 64, 1, 64, 4, true, false},
};

// One forward + backward of shape s through the fused (true) or GEMM (false) path.
struct Runner {
  const Shape& s;
  std::vector<float> q, k, k2, v, v2, out, probs, dout, dq, dk, dk2, dv, dv2;
  float dscale = 0;
  explicit Runner(const Shape& sh) : s(sh) {
    const int64_t rows = s.B * s.N, qk = rows * s.H * s.dk, vv = rows * s.H * s.dv;
    const int64_t kk = s.shared_keys ? rows * s.dk : qk;
    const int64_t pp = s.B * s.H * s.N * s.N * (s.third ? s.N : 1);
    q = filled(qk, 1), k = filled(kk, 2), k2 = filled(qk, 3), v = filled(vv, 4), v2 = filled(vv, 5);
    dout = filled(vv, 6);
    out.resize(vv), probs.resize(pp), dq.resize(qk), dk.resize(kk), dk2.resize(qk);
    dv.resize(vv), dv2.resize(vv);
  }
  void run(bool fused) {
    const float scale = 0.25f;
    const AttentionPath path = fused ? AttentionPath::fused : AttentionPath::blas;
    if (s.third) {
      const ThirdOrderShape t{s.B, s.N, s.H, s.dk, s.dv, false, 0, s.causal, path};
      third_order_forward<float>(out.data(), probs.data(), q.data(), k.data(), k2.data(), v.data(),
                                 v2.data(), scale, t);
      third_order_backward<float>(dq.data(), dk.data(), dk2.data(), dv.data(), dv2.data(), &dscale,
                                  dout.data(), q.data(), k.data(), k2.data(), v.data(), v2.data(),
                                  probs.data(), scale, t);
      return;
    }
    const AttentionShape a{s.B, s.N, s.H, s.dk, s.dv, false, 0, s.shared_keys, s.causal, path};
    attention_forward<float>(out.data(), probs.data(), q.data(), k.data(), v.data(), scale, a);
    attention_backward<float>(dq.data(), dk.data(), dv.data(), &dscale, dout.data(), q.data(),
                              k.data(), v.data(), probs.data(), scale, a);
  }
  double flops() const {
    const double B = double(s.B), H = double(s.H), N = double(s.N);
    const double terms = s.third ? N * N * N : (s.causal ? N * (N + 1) / 2 : N * N);
    return 3 * 2 * B * H * terms * double(s.dk + s.dv);
  }
};

int bench_main(int argc, char** argv) {
  std::vector<std::string> ids{"d", "e", "f", "t"};
  int reps = 9;
  double rep_seconds = 0.3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    ATTN_CHECK(i + 1 < argc, "bench_attention_kernels: " + a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--shapes") {
      ids.clear();
      for (size_t p = 0; p <= v.size();) {
        const size_t q = std::min(v.find(',', p), v.size());
        ids.push_back(v.substr(p, q - p));
        p = q + 1;
      }
    } else if (a == "--reps") {
      reps = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--rep-seconds") {
      rep_seconds = std::atof(v.c_str());
    } else {
      throw UserError("bench_attention_kernels: unknown option " + a +
                      " (--shapes, --reps, --rep-seconds)");
    }
  }
  threads_configure(1);
  const double sgemm = bench::sgemm_gflops();
  std::printf("sgemm n=2048 threads=1 gflops=%.2f\n", sgemm);
  for (const std::string& id : ids) {
    const Shape* s = nullptr;
    for (const Shape& k : kShapes)
      if (k.id == id) s = &k;
    ATTN_CHECK(s != nullptr, "bench_attention_kernels: unknown shape '" + id + "' (d, e, f, t)");
    Runner run(*s);
    for (int w = 0; w < 3; ++w) run.run(true), run.run(false);
    const double c0 = cpu_s();
    run.run(false);
    const int64_t calls = std::max<int64_t>(1, int64_t(rep_seconds / std::max(cpu_s() - c0, 1e-7)));
    std::vector<double> t[2];
    for (int r = 0; r < reps; ++r)
      for (int j = 0; j < 2; ++j) {
        const bool fused = (r % 2 == 0) == (j == 0);
        const double t0 = cpu_s();
        for (int64_t i = 0; i < calls; ++i) run.run(fused);
        t[fused ? 1 : 0].push_back((cpu_s() - t0) / double(calls));
      }
    const double us_blas = 1e6 * median(t[0]), us_fused = 1e6 * median(t[1]);
    const double g_blas = run.flops() / us_blas * 1e-3, g_fused = run.flops() / us_fused * 1e-3;
    std::printf(
        "kernel shape=%s third_order=%d B=%lld N=%lld H=%lld dk=%lld dv=%lld causal=%d "
        "calls_per_rep=%lld blas_us=%.1f fused_us=%.1f blas_gflops=%.2f "
        "fused_gflops=%.2f blas_share=%.3f fused_share=%.3f ratio=%.2f\n",
        s->id.c_str(), int(s->third), (long long)s->B, (long long)s->N, (long long)s->H,
        (long long)s->dk, (long long)s->dv, int(s->causal), (long long)calls, us_blas, us_fused,
        g_blas, g_fused, g_blas / sgemm, g_fused / sgemm, us_blas / us_fused);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return attn::bench::run_main(bench_main, argc, argv); }
