// Hard instances (spec sanford2023 §3.6): the qsa DISJ / INDEX / rank-pair generators and
// match3's planted triples have the properties their proofs need; the rank pair fools a
// real first layer; random instances are bit-identical to before; eval.instances swaps the
// test set only (and leaves run ids of existing stores alone); every user error path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "spec_test_helpers.h"
#include "analysis/rank_pair.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/threads.h"
#include "experiment/plan.h"
#include "experiment/spec.h"
#include "experiment/store.h"
#include "nn/mlp_net.h"
#include "tasks/match_tasks.h"
#include "tasks/qsa.h"
#include "task_test_helpers.h"
#include "tasks/task.h"
#include "train/metrics.h"

namespace attn {
namespace {

using test::task_params;

namespace fs = std::filesystem;
using Settings = test::TaskSettings;

Batch generate(const std::string& task, const Settings& settings, int64_t n, uint64_t seed = 3,
               int64_t first = 0, int64_t chunk = 64) {
  return task_generate(*task_make(task, task_params(task, settings)), seed, first, n, chunk);
}

// The message of the UserError that making the task throws ("" if none).
std::string make_error(const std::string& task, const Settings& settings) {
  try {
    task_make(task, task_params(task, settings));
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// text with its first `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// ------------------------------------------------------------------------------ DISJ

// Thm 4's reduction: pairs (2t, 2t+1), query 2q, y_2q = {2t + a_t}, z_{2t+1} = +e₁ iff b_t,
// every other z = −e₁; qSA_2q = (−1 + 2|a∧b|/q) e₁, exactly −e₁ iff a ∧ b = 0.
TEST(HardInstances, DisjQueryOutputIsMinusE1ExactlyWhenDisjoint) {
  struct Case { int64_t N, q, d; };
  for (const Case c : {Case{3, 1, 1}, Case{5, 2, 3}, Case{7, 3, 2}, Case{12, 4, 1}, Case{13, 5, 2}})
    for (const char* encoding : {"multi_hot", "indices"}) {
      const Batch b = generate("qsa", {{"N", std::to_string(c.N)}, {"q", std::to_string(c.q)},
                                       {"d_out", std::to_string(c.d)}, {"encoding", encoding},
                                       {"instances", "disj"}}, 300);
      const std::string at =
          "N=" + std::to_string(c.N) + " q=" + std::to_string(c.q) + " " + encoding;
      const int64_t query = 2 * c.q;
      EXPECT_EQ(b.find("query_position").i64[0], query);
      EXPECT_DOUBLE_EQ(b.find("disj_threshold").f64[0], -1.0 + 1.0 / static_cast<double>(c.q));
      int64_t disjoint_count = 0;
      for (int64_t s = 0; s < b.n; ++s) {
        const double* z = b.find("z").f64.data() + s * c.N * c.d;
        const int64_t* sets = b.find("sets").i64.data() + s * c.N * c.q;
        const int64_t* qset = sets + query * c.q;
        int64_t both = 0;
        for (int64_t t = 0; t < c.q; ++t) {
          const int64_t a_t = qset[t] - 2 * t;
          ASSERT_TRUE(a_t == 0 || a_t == 1) << at << ": y_2q takes one slot of each pair";
          const bool b_t = z[(2 * t + 1) * c.d] > 0;
          both += a_t == 1 && b_t;
          ASSERT_EQ(z[2 * t * c.d], -1.0) << at << ": slot 0 of every pair is −e₁";
        }
        for (int64_t i = 0; i < c.N; ++i) {
          ASSERT_EQ(std::abs(z[i * c.d]), 1.0) << at;
          for (int64_t k = 1; k < c.d; ++k) ASSERT_EQ(z[i * c.d + k], 0.0) << at;
          if (i >= query) {
            ASSERT_EQ(z[i * c.d], -1.0) << at << ": query and padding carry −e₁";
          }
        }
        const bool disjoint = both == 0;
        disjoint_count += disjoint;
        EXPECT_EQ(b.find("disjoint").i64[s], disjoint ? 1 : 0) << at;
        const double* y = b.y(s) + query * c.d;
        if (disjoint)
          ASSERT_EQ(y[0], -1.0) << at << ": exactly −e₁ when disjoint";
        else
          ASSERT_NEAR(y[0], -1.0 + 2.0 * static_cast<double>(both) / static_cast<double>(c.q),
                      1e-15) << at;
        if (!disjoint) {
          ASSERT_NE(y[0], -1.0) << at << ": −e₁ only when disjoint";
        }
        for (int64_t k = 1; k < c.d; ++k) ASSERT_EQ(y[k], 0.0) << at;
        // Every other position is ordinary qSA of the same (z, sets).
        std::vector<double> ref(static_cast<size_t>(c.N * c.d));
        qsa_reference(c.N, c.q, c.d, z, sets, ref.data());
        for (int64_t e = 0; e < c.N * c.d; ++e) ASSERT_NEAR(b.y(s)[e], ref[e], 1e-15) << at;
        // The encoding carries the same sets and z.
        const double* xq = b.x(s) + query * b.shape.d_in;
        EXPECT_EQ(xq[0], z[query * c.d]) << at;
        for (int64_t t = 0; t < c.q; ++t) {
          if (std::string(encoding) == "multi_hot")
            EXPECT_EQ(xq[c.d + qset[t]], 1.0) << at;
          else
            EXPECT_EQ(xq[c.d + t], static_cast<double>(qset[t])) << at;
        }
      }
      EXPECT_GT(disjoint_count, 0) << at;
      EXPECT_LT(disjoint_count, b.n) << at;
    }
}

TEST(HardInstances, DisjFractionIsHonoured) {
  for (const double fraction : {0.0, 0.2, 0.5, 1.0}) {
    const Batch b = generate("qsa", {{"N", "9"}, {"q", "4"}, {"instances", "disj"},
                                     {"disj_fraction", std::to_string(fraction)}}, 4000);
    double disjoint = 0;
    for (int64_t v : b.find("disjoint").i64) disjoint += static_cast<double>(v);
    // Binomial(4000, f): 4 standard deviations are at most 0.032.
    EXPECT_NEAR(disjoint / 4000.0, fraction, 0.032) << fraction;
    if (fraction == 0.0 || fraction == 1.0) {
      EXPECT_EQ(disjoint / 4000.0, fraction);
    }
  }
}

TEST(HardInstances, DisjAccuracyMetricDecidesAtTheQueryPosition) {
  const Batch b = generate("qsa", {{"N", "9"}, {"q", "4"}, {"d_out", "2"}, {"instances", "disj"}},
                           500);
  auto metric = [](const std::vector<std::pair<std::string, double>>& ms) {
    for (const auto& [name, value] : ms)
      if (name == "disj_accuracy") return value;
    return -1.0;
  };
  EXPECT_EQ(metric(metrics_compute(b, b.Y)), 1.0);  // the exact targets decide right
  double disjoint = 0;
  for (int64_t v : b.find("disjoint").i64) disjoint += static_cast<double>(v);
  // Always −e₁ says "disjoint" everywhere: right on exactly the disjoint samples.
  std::vector<double> minus_e1(b.Y.size(), 0.0);
  const int64_t K = b.shape.y_size();
  for (int64_t s = 0; s < b.n; ++s)
    for (int64_t i = 0; i < 9; ++i) minus_e1[s * K + i * 2] = -1.0;
  EXPECT_DOUBLE_EQ(metric(metrics_compute(b, minus_e1)), disjoint / 500.0);
  // Exactly at the threshold −1 + 1/q counts as "intersecting" (strict <).
  std::vector<double> at_threshold = minus_e1;
  for (int64_t s = 0; s < b.n; ++s) at_threshold[s * K + 8 * 2] = -1.0 + 0.25;
  EXPECT_DOUBLE_EQ(metric(metrics_compute(b, at_threshold)), 1.0 - disjoint / 500.0);
  // Only the query position matters.
  std::vector<double> others = b.Y;
  for (int64_t s = 0; s < b.n; ++s) others[s * K] = 5.0;
  EXPECT_EQ(metric(metrics_compute(b, others)), 1.0);
  // Random instances have no such metric.
  const Batch r = generate("qsa", {{"N", "9"}, {"q", "4"}}, 20);
  EXPECT_EQ(metric(metrics_compute(r, r.Y)), -1.0);
  // A batch with `disjoint` but without the constants is refused.
  Batch broken = b;
  broken.constants.resize(1);
  EXPECT_THROW(metrics_compute(broken, broken.Y), UserError);
}

// ----------------------------------------------------------------------------- INDEX

TEST(HardInstances, IndexLaterTokensReadTheBitTheyPointAt) {
  for (const int64_t N : {2, 9, 16})
    for (const char* encoding : {"multi_hot", "indices"}) {
      const Batch b = generate("qsa", {{"N", std::to_string(N)}, {"q", "1"}, {"d_out", "3"},
                                       {"encoding", encoding}, {"instances", "index"}}, 200);
      const int64_t h = N / 2;
      int64_t ones = 0;
      for (int64_t s = 0; s < b.n; ++s) {
        const double* z = b.find("z").f64.data() + s * N * 3;
        const int64_t* sets = b.find("sets").i64.data() + s * N;
        for (int64_t j = 0; j < h; ++j) {
          ASSERT_EQ(std::abs(z[j * 3]), 1.0);
          ASSERT_EQ(z[j * 3 + 1], 0.0);
          ASSERT_EQ(z[j * 3 + 2], 0.0);
          ones += z[j * 3] > 0;
        }
        for (int64_t i = h; i < N; ++i) {
          ASSERT_LT(sets[i], h) << "later tokens point into the first half";
          for (int64_t k = 0; k < 3; ++k) ASSERT_EQ(b.y(s)[i * 3 + k], z[sets[i] * 3 + k]);
        }
      }
      // The bits are fair coins: h·200 of them.
      const double frac = static_cast<double>(ones) / static_cast<double>(h * b.n);
      EXPECT_NEAR(frac, 0.5, 4.0 * 0.5 / std::sqrt(static_cast<double>(h * b.n))) << N;
    }
}

// ------------------------------------------------------------------------- rank pair

TEST(HardInstances, RankPairSetsAreAFixedSetPlusTheirPartner) {
  for (const char* encoding : {"multi_hot", "indices"})
    for (const int64_t N : {8, 9}) {
      const int64_t q = 3, h = N / 2;
      const Batch b = generate("qsa", {{"N", std::to_string(N)}, {"q", "3"}, {"encoding", encoding},
                                       {"instances", "rank_pair"}}, 50, 17);
      const int64_t* sets0 = b.find("sets").i64.data();
      const std::vector<int64_t> F(sets0, sets0 + q - 1);
      for (int64_t f : F) EXPECT_LT(f, h);
      for (int64_t s = 0; s < b.n; ++s) {
        const int64_t* sets = b.find("sets").i64.data() + s * N * q;
        for (int64_t i = 0; i < h; ++i) {
          for (int64_t t = 0; t + 1 < q; ++t) ASSERT_EQ(sets[i * q + t], F[t]) << "F is fixed";
          ASSERT_EQ(sets[i * q + q - 1], h + i);
        }
      }
      // F is one draw per dataset seed: another seed may give another F, never another rule.
      const Batch other = generate("qsa", {{"N", std::to_string(N)}, {"q", "3"},
                                           {"instances", "rank_pair"}}, 5, 17, 1000);
      EXPECT_EQ(std::vector<int64_t>(other.find("sets").i64.begin(),
                                     other.find("sets").i64.begin() + q - 1), F);
    }
}

// W₁ row-major width × N·d_in from an MlpNet's first layer (stored in × width).
std::vector<double> first_layer(const MlpNet<double>& net, int64_t in, int64_t width) {
  const ParamSet<double>& ps = net.params();
  const int id = ps.find("mlp.w0");
  EXPECT_GE(id, 0);
  const double* w = ps.value(id);
  std::vector<double> W1(static_cast<size_t>(width * in));
  for (int64_t r = 0; r < width; ++r)
    for (int64_t c = 0; c < in; ++c) W1[r * in + c] = w[c * width + r];
  return W1;
}

TEST(HardInstances, RankPairFoolsANarrowMlpWhileQsaDiffersByTwoOverQ) {
  for (const char* encoding : {"multi_hot", "indices"}) {
    const int64_t N = 9, d = 3, q = 2, h = N / 2;  // h·d' = 12 z coordinates in reach
    const Params p = task_params("qsa", {{"N", "9"}, {"q", "2"}, {"d_out", "3"},
                                        {"encoding", encoding}, {"instances", "rank_pair"}});
    const Batch b = task_generate(*task_make("qsa", p), 5, 0, 3);
    const int64_t in = N * b.shape.d_in, width = h * d - 1;
    MlpNetConfig config;
    config.hidden = {width, 16};
    config.T = N;
    config.d_in = b.shape.d_in;
    config.T_out = N;
    config.d_out = d;
    MlpNet<double> net(config);
    net.init(21);
    const std::vector<double> W1 = first_layer(net, in, width);

    const RankPairDirection dir = rank_pair_direction(W1.data(), width, p);
    ASSERT_EQ(static_cast<int64_t>(dir.delta.size()), h * d);
    EXPECT_LT(dir.residual, 1e-12);
    double max_norm = 0;
    for (int64_t j = 0; j < h; ++j) {
      double n2 = 0;
      for (int64_t k = 0; k < d; ++k) n2 += dir.delta[j * d + k] * dir.delta[j * d + k];
      max_norm = std::max(max_norm, std::sqrt(n2));
    }
    EXPECT_NEAR(max_norm, 1.0, 1e-14);

    for (int64_t s = 0; s < b.n; ++s) {
      const RankPair pair = rank_pair_build(dir, b, s);
      EXPECT_NE(pair.x_plus, pair.x_minus);
      // Identical first-layer pre-activations ...
      for (int64_t r = 0; r < width; ++r) {
        double a = 0, c = 0;
        for (int64_t e = 0; e < in; ++e) {
          a += W1[r * in + e] * pair.x_plus[e];
          c += W1[r * in + e] * pair.x_minus[e];
        }
        ASSERT_NEAR(a, c, 1e-12) << encoding << " row " << r;
      }
      // ... hence identical network outputs ...
      std::vector<double> out_plus(static_cast<size_t>(N * d)), out_minus(out_plus.size());
      net.forward(pair.x_plus.data(), 1, out_plus.data());
      net.forward(pair.x_minus.data(), 1, out_minus.data());
      for (size_t e = 0; e < out_plus.size(); ++e) ASSERT_NEAR(out_plus[e], out_minus[e], 1e-12);
      // ... while qSA differs by exactly 2/q at dir.position, the largest gap over the
      // positions i < h (positions >= h have uniform sets and may differ by more).
      double largest = 0, at_position = 0;
      for (int64_t i = 0; i < h; ++i) {
        double n2 = 0;
        for (int64_t k = 0; k < d; ++k) {
          const double diff = pair.y_plus[i * d + k] - pair.y_minus[i * d + k];
          n2 += diff * diff;
        }
        largest = std::max(largest, std::sqrt(n2));
        if (i == dir.position) at_position = std::sqrt(n2);
      }
      EXPECT_NEAR(at_position, 2.0 / q, 1e-14) << encoding;
      EXPECT_NEAR(largest, 2.0 / q, 1e-14) << encoding;
      // The pair is the sample with z_B replaced: targets are qSA of their own inputs.
      std::vector<double> z(static_cast<size_t>(N * d)), ref(z.size());
      for (int64_t i = 0; i < N; ++i)
        for (int64_t k = 0; k < d; ++k) z[i * d + k] = pair.x_plus[i * b.shape.d_in + k];
      qsa_reference(N, q, d, z.data(), b.find("sets").i64.data() + s * N * q, ref.data());
      for (size_t e = 0; e < ref.size(); ++e) ASSERT_NEAR(pair.y_plus[e], ref[e], 1e-15);
    }
  }
}

TEST(HardInstances, RankPairNeedsAFirstLayerNarrowerThanHalfTheZCoordinates) {
  const Params p = task_params("qsa", {{"N", "6"}, {"q", "2"}, {"d_out", "2"},
                                      {"instances", "rank_pair"}});
  const int64_t in = 6 * task_make("qsa", p)->shape().d_in, width = 3 * 2;  // h·d' = 6
  std::vector<double> W1(static_cast<size_t>(width * in));
  Rng rng(1, "test.w1", 0);
  rng_gaussian(rng, W1.data(), static_cast<int64_t>(W1.size()));
  try {
    rank_pair_direction(W1.data(), width, p);
    ADD_FAILURE() << "a full-rank layer of width h·d' has no null direction";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "width < 6")) << e.what();
  }
  // One row fewer and it exists.
  EXPECT_LT(rank_pair_direction(W1.data(), width - 1, p).residual, 1e-12);
}

// -------------------------------------------------------------------------- all kinds

TEST(HardInstances, EverySetHasQDistinctSortedPositions) {
  struct Case { const char* instances; const char* q; const char* exclude_self; };
  for (const Case c : {Case{"random", "3", "true"}, Case{"disj", "3", "false"},
                       Case{"disj", "3", "true"}, Case{"index", "1", "false"},
                       Case{"index", "1", "true"}, Case{"rank_pair", "3", "false"}}) {
    const Batch b = generate("qsa", {{"N", "9"}, {"q", c.q}, {"instances", c.instances},
                                     {"exclude_self", c.exclude_self}}, 100);
    const int64_t q = std::stoll(c.q);
    for (int64_t s = 0; s < b.n; ++s)
      for (int64_t i = 0; i < 9; ++i) {
        const int64_t* set = b.find("sets").i64.data() + (s * 9 + i) * q;
        for (int64_t t = 0; t < q; ++t) {
          ASSERT_GE(set[t], 0);
          ASSERT_LT(set[t], 9);
          if (t > 0) {
            ASSERT_LT(set[t - 1], set[t]) << c.instances << ": sorted and distinct";
          }
          if (std::string(c.exclude_self) == "true") {
            ASSERT_NE(set[t], i) << c.instances;
          }
        }
      }
  }
}

TEST(HardInstances, SameSeedSameSamplesAcrossChunksThreadsAndRanges) {
  const std::vector<std::pair<std::string, Settings>> cases = {
      {"qsa", {{"N", "9"}, {"q", "3"}, {"instances", "disj"}}},
      {"qsa", {{"N", "9"}, {"q", "1"}, {"instances", "index"}, {"encoding", "indices"}}},
      {"qsa", {{"N", "9"}, {"q", "3"}, {"instances", "rank_pair"}}},
      {"match3", {{"N", "10"}, {"M", "11"}, {"instances", "planted_triples"}}},
  };
  for (const auto& [task, settings] : cases) {
    threads_configure(1);
    const Batch one = generate(task, settings, 120, 8, 0, 120);
    threads_configure(2);
    const Batch two = generate(task, settings, 120, 8, 0, 7);
    threads_configure(1);
    const Batch tail = generate(task, settings, 50, 8, 70, 13);
    const std::string at = task + " " + settings.back().second;
    EXPECT_EQ(one.X, two.X) << at;
    EXPECT_EQ(one.Y, two.Y) << at;
    for (size_t k = 0; k < one.raw.size(); ++k) {
      EXPECT_EQ(one.raw[k].f64, two.raw[k].f64) << at;
      EXPECT_EQ(one.raw[k].i64, two.raw[k].i64) << at;
    }
    EXPECT_TRUE(std::equal(tail.X.begin(), tail.X.end(), one.X.begin() + 70 * one.shape.x_size()))
        << at;
    EXPECT_TRUE(std::equal(tail.Y.begin(), tail.Y.end(), one.Y.begin() + 70 * one.shape.y_size()))
        << at;
    EXPECT_NE(generate(task, settings, 20, 1).X, generate(task, settings, 20, 2).X) << at;
  }
}

// Checksums of samples 100..399 of seed 7 (chunk 64), taken with the code before the hard
// instances existed: instances = random (default or explicit) must reproduce them bit for bit.
uint64_t fnv(const void* p, size_t n, uint64_t h) {
  const unsigned char* c = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    h ^= c[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t batch_digest(const Batch& b) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = fnv(b.X.data(), b.X.size() * 8, h);
  h = fnv(b.Y.data(), b.Y.size() * 8, h);
  for (const auto& r : b.raw) {
    h = fnv(r.f64.data(), r.f64.size() * 8, h);
    h = fnv(r.i64.data(), r.i64.size() * 8, h);
  }
  return h;
}

TEST(HardInstances, RandomInstancesAreBitIdenticalToBefore) {
  struct Case { const char* task; Settings settings; uint64_t digest; };
  const std::vector<Case> cases = {
      {"qsa", {}, 0xe182c51597ac6c02ull},
      {"qsa", {{"encoding", "indices"}, {"exclude_self", "true"}, {"z_dist", "ball"}, {"N", "12"},
               {"q", "3"}}, 0xe056a1a0c2346f2full},
      {"match3", {}, 0xa31d75ac9197c411ull},
      {"match3", {{"M", "17"}, {"N", "10"}, {"sampling", "plant_one"}, {"encoding", "one_hot"}},
       0x44683cac41be9183ull},
      {"match3", {{"distinct", "true"}, {"sampling", "uniform"}}, 0xb46e043f9cc09759ull},
  };
  for (const auto& c : cases)
    for (const bool explicit_random : {false, true}) {
      Settings settings = c.settings;
      if (explicit_random) settings.push_back({"instances", "random"});
      const Batch b = generate(c.task, settings, 300, 7, 100, 64);
      EXPECT_EQ(batch_digest(b), c.digest) << c.task << " " << settings.size();
    }
}

// ---------------------------------------------------------------- match3 planted triples

TEST(HardInstances, PlantedTriplesLabelsAreTheBruteForceLabels) {
  for (const int64_t N : {6, 10, 16})
    for (const int64_t M : {N + 1, 2 * N + 3, int64_t{0}})
      for (const char* distinct : {"false", "true"}) {
        const Batch b = generate("match3", {{"N", std::to_string(N)}, {"M", std::to_string(M)},
                                            {"distinct", distinct},
                                            {"instances", "planted_triples"}}, 60);
        const int64_t used_M = b.find("modulus").i64[0];
        ASSERT_GE(used_M, N + 1);
        const int64_t lo = used_M / 3 + 1, hi = (2 * used_M - 1) / 3;
        const int64_t plants = std::max<int64_t>(1, std::llround(0.5 * N / 3.0));
        for (int64_t s = 0; s < b.n; ++s) {
          const int64_t* tokens = b.find("tokens").i64.data() + s * N;
          std::vector<int64_t> ref(static_cast<size_t>(N));
          match3_reference(tokens, N, used_M, std::string(distinct) == "true", ref.data());
          int64_t positives = 0, outside = 0;
          for (int64_t i = 0; i < N; ++i) {
            ASSERT_EQ(b.y(s)[i], static_cast<double>(ref[i])) << N << " " << M << " " << distinct;
            positives += ref[i];
            outside += tokens[i] < lo || tokens[i] > hi;
          }
          // Only planted tokens leave the triple-free middle third; every triple plants 3
          // positives.
          EXPECT_LE(outside, plants);
          EXPECT_GE(positives, 3);
        }
      }
}

TEST(HardInstances, PlantedTriplesBackgroundIsTheWholeMiddleThird) {
  // plant_fraction = 0: exactly one triple, so at most one token leaves {x : M < 3x < 2M}
  // and the others cover it uniformly.
  const int64_t N = 12, M = 31, lo = M / 3 + 1, hi = (2 * M - 1) / 3;  // 11 .. 20
  const Batch b = generate("match3", {{"N", "12"}, {"M", "31"}, {"plant_fraction", "0"},
                                      {"instances", "planted_triples"}}, 400);
  std::vector<int64_t> seen(static_cast<size_t>(M), 0);
  for (int64_t s = 0; s < b.n; ++s) {
    int64_t outside = 0, positives = 0;
    for (int64_t i = 0; i < N; ++i) {
      const int64_t x = b.find("tokens").i64[s * N + i];
      outside += x < lo || x > hi;
      ++seen[x];
      positives += b.y(s)[i] == 1.0;
    }
    EXPECT_LE(outside, 1);
    EXPECT_GE(positives, 3);
  }
  for (int64_t x = lo; x <= hi; ++x)  // 10 values, ~480 each
    EXPECT_NEAR(static_cast<double>(seen[x]) / (400.0 * 11.0), 0.1, 0.02) << x;
}

TEST(HardInstances, PlantedTriplesAtTheAutomaticModulusHaveBothLabels) {
  const Batch b = generate("match3", {{"instances", "planted_triples"}}, 300);  // N 16, M 2579
  double positives = 0;
  for (double v : b.Y) positives += v;
  const double f = positives / static_cast<double>(b.Y.size());
  EXPECT_GT(f, 0.4);  // 3 planted triples = 9/16 positions, plus a few their values create
  EXPECT_LT(f, 0.75);
}

// ------------------------------------------------------------------- user error paths

TEST(HardInstances, ImpossibleParametersAreUserErrors) {
  std::string e = make_error("qsa", {{"N", "6"}, {"q", "3"}, {"instances", "disj"}});
  EXPECT_TRUE(contains(e, "task.N >= 2 task.q + 1") && contains(e, "task.N = 6")) << e;
  EXPECT_EQ(make_error("qsa", {{"N", "7"}, {"q", "3"}, {"instances", "disj"}}), "");
  e = make_error("qsa", {{"q", "2"}, {"instances", "index"}});
  EXPECT_TRUE(contains(e, "task.q = 1")) << e;
  e = make_error("qsa", {{"N", "7"}, {"q", "4"}, {"instances", "rank_pair"}});
  EXPECT_TRUE(contains(e, "task.q <= task.N / 2")) << e;
  e = make_error("qsa", {{"instances", "rank_pair"}, {"exclude_self", "true"}});
  EXPECT_TRUE(contains(e, "task.exclude_self = false")) << e;
  e = make_error("match3", {{"N", "10"}, {"M", "10"}, {"instances", "planted_triples"}});
  EXPECT_TRUE(contains(e, "task.M >= task.N + 1") && contains(e, "M = 10")) << e;
  EXPECT_EQ(make_error("match3", {{"N", "10"}, {"M", "11"}, {"instances", "planted_triples"}}),
            "");
  EXPECT_EQ(make_error("match3", {{"N", "10"}, {"M", "0"}, {"instances", "planted_triples"}}), "");
  try {
    task_params("qsa", {{"instances", "disjoint"}});
    ADD_FAILURE() << "unknown instances accepted";
  } catch (const UserError& err) {
    EXPECT_TRUE(contains(err.what(), "task.instances")) << err.what();
  }
  EXPECT_THROW(task_params("qsa", {{"disj_fraction", "1.5"}}), UserError);
  EXPECT_THROW(task_params("match3", {{"instances", "disj"}}), UserError);
  EXPECT_THROW(task_params("match2", {{"instances", "planted_triples"}}), UserError);
}

// ------------------------------------------------------------------------ eval.instances

using HardInstancesSpec = test::SpecFileTest;

const char* kQsaSpec = R"(
[experiment]
name = "hard"
seeds = 1
[task]
name = "qsa"
N = 7
q = 3
d_out = 2
[model]
name = "linear"
[train]
n = 300
[eval]
n = 200
)";

TEST_F(HardInstancesSpec, RunIdsChangeOnlyWhenInstancesAreSet) {
  const RunPoint plain = plan(kQsaSpec)[0];
  // The canonical JSON is what it was before the keys existed (existing stores resume).
  EXPECT_TRUE(contains(plain.config_json, "\"task_params\": {\"N\": 7, \"q\": 3, \"d_out\": 2, "
                                          "\"encoding\": \"multi_hot\", \"exclude_self\": false, "
                                          "\"z_dist\": \"sphere\"}"))
      << plain.config_json;
  EXPECT_TRUE(contains(plain.config_json, "\"eval\": {\"n\": 200, \"first\": 1000000000}"))
      << plain.config_json;
  // Writing the defaults explicitly changes nothing.
  const std::string defaults = std::string(kQsaSpec) +
                               "instances = \"\"\n[task.qsa]\ninstances = \"random\"\n"
                               "disj_fraction = 0.5\n";
  EXPECT_EQ(plan(defaults)[0].run_id, plain.run_id);
  // Setting them does.
  const RunPoint hard = plan(std::string(kQsaSpec) + "instances = \"disj\"\n")[0];
  EXPECT_NE(hard.run_id, plain.run_id);
  EXPECT_TRUE(contains(hard.config_json, "\"eval\": {\"n\": 200, \"first\": 1000000000, "
                                         "\"instances\": \"disj\"}"))
      << hard.config_json;
  EXPECT_EQ(eval_task_params(hard.config).get_string("instances"), "disj");
  EXPECT_EQ(eval_task_params(plain.config).get_string("instances"), "random");
  const RunPoint task_hard = plan(std::string(kQsaSpec) + "[task.qsa]\ninstances = \"disj\"\n")[0];
  EXPECT_NE(task_hard.run_id, plain.run_id);
  EXPECT_NE(task_hard.run_id, hard.run_id);
}

TEST_F(HardInstancesSpec, BadEvalInstancesAreUserErrorsNamingTheKey) {
  std::string e = error(std::string(kQsaSpec) + "instances = \"disjoint\"\n");
  EXPECT_TRUE(contains(e, "eval.instances") && contains(e, "disj")) << e;
  e = error(std::string(kQsaSpec) + "instances = \"planted_triples\"\n");
  EXPECT_TRUE(contains(e, "eval.instances")) << e;
  // disj needs N >= 2q + 1: the test set's own rules are checked before anything runs.
  const std::string small = replaced(kQsaSpec, "N = 7", "N = 6");
  e = error(small + "instances = \"disj\"\n");
  EXPECT_TRUE(contains(e, "eval.instances = disj") && contains(e, "task.N >= 2 task.q + 1")) << e;
  // A task without hard instances.
  const std::string qsa_keys = "N = 7\nq = 3\nd_out = 2\n";
  const std::string rf = replaced(replaced(kQsaSpec, qsa_keys, ""), "\"qsa\"", "\"rf_target\"");
  e = error(rf + "instances = \"disj\"\n");
  EXPECT_TRUE(contains(e, "eval.instances") && contains(e, "rf_target")) << e;
  // match3 accepts its own kind.
  const std::string m3 = replaced(replaced(kQsaSpec, qsa_keys, "N = 8\nM = 9\n"), "\"qsa\"",
                                  "\"match3\"");
  EXPECT_EQ(error(m3 + "instances = \"planted_triples\"\n"), "");
}

TEST_F(HardInstancesSpec, EvalInstancesSwapTheTestSetOnlyEndToEnd) {
  const std::string spec =
      write(std::string(kQsaSpec) + "[sweep]\n\"eval.instances\" = [\"\", \"disj\"]\n");
  const auto r = test::cli_run("run " + spec + " --out " + path("out") + " -q");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::map<std::string, double> plain, hard;
  for (const auto& run : ResultsStore(path("out") + "/results.sqlite").load_runs()) {
    ASSERT_EQ(run.status, "ok") << run.error;
    auto& into = contains(run.config_json, "\"instances\": \"disj\"") ? hard : plain;
    for (const auto& [name, value] : run.metrics) into[name] = value;
  }
  ASSERT_FALSE(plain.empty());
  ASSERT_FALSE(hard.empty());
  // Same training set, same fit: identical training metrics; different test sets.
  EXPECT_EQ(plain.at("train_mse"), hard.at("train_mse"));
  EXPECT_NE(plain.at("test_mse"), hard.at("test_mse"));
  EXPECT_EQ(plain.count("test_disj_accuracy"), 0u);
  ASSERT_EQ(hard.count("test_disj_accuracy"), 1u);
  EXPECT_GE(hard.at("test_disj_accuracy"), 0.0);
  EXPECT_LE(hard.at("test_disj_accuracy"), 1.0);
}

}  // namespace
}  // namespace attn
