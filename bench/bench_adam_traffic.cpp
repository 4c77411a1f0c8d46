// Adam's update against the memory traffic it cannot avoid (issue #32: "the MLP within 5 % of
// the GEMMs' own time"). One Adam step over n parameters reads θ, g, m, v and writes θ, m, v:
// 28 bytes a parameter in float. The floor is a loop that moves exactly those bytes with one add
// per stream (θ += g, m += g, v += g), so it is limited by the memory system, not by arithmetic.
// Each is timed hot (back to back, what fits stays in cache) and cold (a 256 MB buffer read and
// written between repetitions, as a training step's GEMMs and activations pass between two Adam
// steps; a loop, not memset, whose large fills may bypass the caches);
// a read-only sum of the same 28·n bytes gives the machine's read rate. The floor and the sum
// are compiled for AVX2 (every machine the project targets has it), so arithmetic never limits
// them.
// Prints per round the median CPU ms and GB/s of each, and Adam's ms over the floor's.
// Usage: bench_adam_traffic [n [rounds]]   (default 1706048 5: config j's parameter count)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_rates.h"
#include "ops/adam_update.h"

namespace attn::bench {
namespace {

// The floor: the same 4 reads and 3 writes as Adam, one add each.
[[gnu::noinline, gnu::target("avx2")]] void traffic_floor(float* __restrict p,
                                                          const float* __restrict g,
                                                          float* __restrict m,
                                                          float* __restrict v, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    p[k] += g[k];
    m[k] += g[k];
    v[k] += g[k];
  }
}

// Reads n words once (an integer sum vectorises without reordering concerns).
[[gnu::noinline, gnu::target("avx2")]] uint32_t read_sum(const uint32_t* __restrict a,
                                                         int64_t n) {
  uint32_t s = 0;
  for (int64_t k = 0; k < n; ++k) s += a[k];
  return s;
}

struct Timed {
  const char* name;
  std::vector<double> hot, cold;
};

int bench_main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 1706048;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  if (n < 1 || rounds < 1) {
    std::fprintf(stderr, "usage: bench_adam_traffic [n [rounds]] (both >= 1)\n");
    return 2;
  }
  if (!__builtin_cpu_supports("avx2")) {
    std::fprintf(stderr, "bench_adam_traffic: the floor loop needs AVX2, which this CPU lacks\n");
    return 2;
  }
  const double bytes = 28.0 * double(n);  // every kernel moves Adam's 28 bytes a parameter
  std::vector<float> p(n, 0.1f), g(n, 1e-3f), m(n, 0.f), v(n, 0.f);
  std::vector<uint32_t> sum_src(7 * n, 1);  // 28·n bytes read
  std::vector<char> evict(size_t(256) << 20);
  const AdamScalars<float> s{0.9f, 0.999f, 1e-3f, 1.f, 1e-8f, 0.f, 1.f, false};
  std::printf("bench_adam_traffic n=%lld (%.1f MB moved per Adam step) rounds=%d\n",
              (long long)n, 1e-6 * bytes, rounds);
  uint32_t sink = 0;
  for (int r = 0; r < rounds; ++r) {
    std::vector<Timed> t = {{"adam", {}, {}}, {"floor", {}, {}}, {"read", {}, {}}};
    auto run = [&](size_t k) {
      switch (k) {
        case 0: adam_update(p.data(), g.data(), m.data(), v.data(), n, s); break;
        case 1: traffic_floor(p.data(), g.data(), m.data(), v.data(), n); break;
        default: sink += read_sum(sum_src.data(), int64_t(sum_src.size())); break;
      }
    };
    for (int rep = 0; rep < 9; ++rep)
      for (size_t k = 0; k < t.size(); ++k) {
        for (int hot = 0; hot < 2; ++hot) run(k);  // warm-up: the third call is timed
        double c0 = cpu_s();
        run(k);
        t[k].hot.push_back(cpu_s() - c0);
        for (char& c : evict) c = static_cast<char>(c + 1);  // read and written: evicts
        c0 = cpu_s();
        run(k);
        t[k].cold.push_back(cpu_s() - c0);
      }
    std::printf("round=%d", r);
    for (const Timed& x : t) {
      const double h = median(x.hot), c = median(x.cold);
      std::printf(" %s_hot_ms=%.3f (%.1f GB/s) %s_cold_ms=%.3f (%.1f GB/s)", x.name, 1e3 * h,
                  bytes / h * 1e-9, x.name, 1e3 * c, bytes / c * 1e-9);
    }
    std::printf(" adam/floor hot=%.2f cold=%.2f\n", median(t[0].hot) / median(t[1].hot),
                median(t[0].cold) / median(t[1].cold));
  }
  return sink == 12345u ? 1 : 0;  // keeps the read sums alive
}

}  // namespace
}  // namespace attn::bench

int main(int argc, char** argv) {
  return attn::bench::run_main(attn::bench::bench_main, argc, argv);
}
