// Every task against its brute-force reference (the registry's reference slot, looped over
// the registry), its declared target kind and named arrays, encodings against the raw
// variables, distribution sanity checks, and determinism across threads, chunks and index
// ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/threads.h"
#include "tasks/match_common.h"
#include "tasks/match_tasks.h"
#include "tasks/named_arrays.h"
#include "tasks/qsa.h"
#include "tasks/rf_target.h"
#include "task_test_helpers.h"
#include "tasks/task.h"

namespace attn {
namespace {

using test::task_params;

Batch generate(const std::string& task, const Params& p, int64_t n, uint64_t seed = 11,
               int64_t first = 0, int64_t chunk = 64) {
  return task_generate(*task_make(task, p), seed, first, n, chunk);
}

// Compares every sample's targets with the registry's reference of `task`; real targets to
// 1e-12 relative (the reference sums in another order), labels exactly. Returns the number
// of non-zero target entries (so callers can check both labels occur).
int64_t check_against_reference(const std::string& task, const Params& p, const Batch& b) {
  const TaskInfo& info = task_find(task);
  EXPECT_NE(info.reference, nullptr) << "task " << task << " has no reference in task_registry()";
  if (!info.reference) return 0;
  const bool real = b.shape.target == TargetKind::real;
  std::vector<double> ref(static_cast<size_t>(b.shape.y_size()));
  int64_t nonzero = 0;
  for (int64_t j = 0; j < b.n; ++j) {
    info.reference(p, b, j, ref.data());
    for (int64_t k = 0; k < b.shape.y_size(); ++k) {
      const double tol = real ? 1e-12 * std::max(1.0, std::abs(ref[k])) : 0.0;
      EXPECT_NEAR(b.y(j)[k], ref[k], tol) << task << " sample " << j << " entry " << k;
      if (b.y(j)[k] != ref[k] && !real) return nonzero;  // one message per batch is enough
      nonzero += ref[k] != 0;
    }
  }
  return nonzero;
}

// ---------------------------------------------------------------- the registry

TEST(TaskRegistry, EveryTaskMatchesItsReferenceDeclaresItsKindAndKeepsTheArrayContract) {
  for (const auto& info : task_registry()) {
    SCOPED_TRACE(info.name);
    const Params p = task_default_params(info.name);
    const Batch b = generate(info.name, p, 60);
    ASSERT_TRUE(b.shape.target.has_value()) << "task " << info.name << " declares no target kind";
    named_arrays_check(b.shape);
    switch (*b.shape.target) {
      case TargetKind::real: break;
      case TargetKind::binary:
        for (double y : b.Y) ASSERT_TRUE(y == 0.0 || y == 1.0) << y;
        break;
      case TargetKind::categorical:
        ASSERT_GE(b.shape.d_out, 2);
        for (int64_t r = 0; r < b.n * b.shape.T_out; ++r) {
          const double* row = b.Y.data() + r * b.shape.d_out;
          double ones = 0;
          for (int64_t k = 0; k < b.shape.d_out; ++k) {
            ASSERT_TRUE(row[k] == 0.0 || row[k] == 1.0);
            ones += row[k];
          }
          ASSERT_LE(ones, 1.0);
        }
        break;
    }
    const int64_t nonzero = check_against_reference(info.name, p, b);
    EXPECT_GT(nonzero, 0) << "a vacuous comparison: every reference target is 0";
  }
}

TEST(TaskRegistry, TheArrayContractHasARowPerNameInEnumOrder) {
  const auto& table = named_array_table();
  for (size_t k = 0; k < table.size(); ++k) {
    EXPECT_EQ(static_cast<size_t>(table[k].id), k) << table[k].name;
    EXPECT_EQ(&named_array_info(table[k].id), &table[k]);
  }
  EXPECT_EQ(table.size(), static_cast<size_t>(NamedArray::hop_chain) + 1);
}

// ---------------------------------------------------------------- rf_target

TEST(RfTarget, LabelsMatchTheReferenceForEveryTarget) {
  for (const char* target : {"pair_power", "pair_value", "keys_power", "query_power", "corr_exp",
                             "corr_cos", "corr_poly"}) {
    for (const char* tokens : {"sphere", "sphere_sqrt_d", "gaussian"}) {
      for (const char* self_key : {"false", "true"}) {
        const Params p = task_params("rf_target", {{"target", target}, {"tokens", tokens},
                                                  {"self_key", self_key}, {"p", "3"}, {"d", "5"},
                                                  {"N", "4"}, {"gamma", "0.7"}});
        const Batch b = generate("rf_target", p, 50);
        SCOPED_TRACE(std::string(target) + " " + tokens + " self_key=" + self_key);
        check_against_reference("rf_target", p, b);
      }
    }
  }
}

TEST(RfTarget, ShapesTokensAndBeta) {
  const Params p = task_params("rf_target", {{"N", "6"}, {"d", "3"}, {"self_key", "true"}});
  const Batch b = generate("rf_target", p, 20);
  EXPECT_EQ(b.shape.T, 8);  // query, 6 keys, query again as the last key
  EXPECT_EQ(b.shape.d_in, 3);
  EXPECT_EQ(b.shape.T_out * b.shape.d_out, 1);
  for (int64_t j = 0; j < b.n; ++j) {
    for (int64_t t = 0; t < b.shape.T; ++t) {
      double norm2 = 0;
      for (int k = 0; k < 3; ++k) norm2 += b.x(j)[t * 3 + k] * b.x(j)[t * 3 + k];
      ASSERT_NEAR(norm2, 1.0, 1e-12);
    }
    for (int k = 0; k < 3; ++k) ASSERT_EQ(b.x(j)[k], b.x(j)[7 * 3 + k]);
  }
  double beta2 = 0;
  for (double v : b.find("beta").f64) beta2 += v * v;
  EXPECT_NEAR(beta2, 1.0, 1e-12);
}

TEST(RfTarget, NormalisedSecondMomentIsOne) {
  // E[(s <x_0, x_i>)^2] = 1 for every token distribution when normalize = true:
  // pair_power with p = 2 and N = 1 has mean exactly 1.
  for (const char* tokens : {"sphere", "sphere_sqrt_d", "gaussian"}) {
    const Params p = task_params("rf_target", {{"tokens", tokens}, {"N", "1"}, {"d", "6"}});
    const Batch b = generate("rf_target", p, 40000);
    double mean = 0;
    for (double y : b.Y) mean += y / b.n;
    // Var of (s t)^2 is at most ~2 (Gaussian tokens: about 3), so the s.e. is < 0.01.
    EXPECT_NEAR(mean, 1.0, 0.05) << tokens;
  }
}

TEST(RfTarget, LabelNoiseIsGaussianAroundTheCleanTarget) {
  const Params p = task_params("rf_target", {{"label_noise_std", "0.5"}});
  const Batch b = generate("rf_target", p, 20000);
  const auto& clean = b.find("f_star").f64;
  double m = 0, v = 0;
  for (int64_t j = 0; j < b.n; ++j) m += (b.Y[j] - clean[j]) / b.n;
  for (int64_t j = 0; j < b.n; ++j) v += (b.Y[j] - clean[j] - m) * (b.Y[j] - clean[j] - m) / b.n;
  EXPECT_NEAR(m, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(v), 0.5, 0.02);
  // The clean target equals the noise-free dataset of the same seed.
  const Batch clean_batch = generate("rf_target", task_default_params("rf_target"), 100);
  for (int64_t j = 0; j < 100; ++j) ASSERT_EQ(clean[j], clean_batch.Y[j]);
}

// ---------------------------------------------------------------- qsa

TEST(Qsa, TargetsMatchTheReferenceAndEncodingsMatchTheRawVariables) {
  for (const char* encoding : {"multi_hot", "indices"}) {
    for (const char* exclude : {"false", "true"}) {
      for (const char* z_dist : {"sphere", "ball"}) {
        const int64_t N = 9, q = 3, d = 2;
        const Params p = task_params("qsa", {{"N", "9"}, {"q", "3"}, {"d_out", "2"},
                                            {"encoding", encoding}, {"exclude_self", exclude},
                                            {"z_dist", z_dist}});
        const Batch b = generate("qsa", p, 40);
        const int64_t d_in = b.shape.d_in;
        EXPECT_EQ(d_in, std::string(encoding) == "multi_hot" ? d + 2 * N : d + q + 1);
        check_against_reference("qsa", p, b);
        for (int64_t j = 0; j < b.n; ++j) {
          const double* z = b.raw_f64(0, j);
          const int64_t* sets = b.raw_i64(1, j);
          for (int64_t i = 0; i < N; ++i) {
            const int64_t* set = sets + i * q;
            ASSERT_TRUE(std::is_sorted(set, set + q));
            ASSERT_EQ(std::set<int64_t>(set, set + q).size(), size_t(q));
            if (std::string(exclude) == "true") {
              ASSERT_EQ(std::count(set, set + q, i), 0);
            }
            const double norm2 = z[i * d] * z[i * d] + z[i * d + 1] * z[i * d + 1];
            if (std::string(z_dist) == "sphere") {
              ASSERT_NEAR(norm2, 1.0, 1e-12);
            } else {
              ASSERT_LE(norm2, 1.0 + 1e-12);
            }
            const double* x = b.x(j) + i * d_in;
            ASSERT_EQ(x[0], z[i * d]);
            ASSERT_EQ(x[1], z[i * d + 1]);
            if (std::string(encoding) == "multi_hot") {
              for (int64_t t = 0; t < N; ++t) {
                ASSERT_EQ(x[d + t], std::count(set, set + q, t) ? 1.0 : 0.0);
                ASSERT_EQ(x[d + N + t], t == i ? 1.0 : 0.0);
              }
            } else {
              for (int64_t t = 0; t < q; ++t) ASSERT_EQ(x[d + t], double(set[t]));
              ASSERT_EQ(x[d + q], double(i));
            }
          }
        }
      }
    }
  }
}

TEST(Qsa, SetMembershipIsUniform) {
  // Position 0's set: each j in [N] with probability q/N.
  const Params p = task_params("qsa", {{"N", "8"}, {"q", "2"}});
  const Batch b = generate("qsa", p, 20000);
  std::vector<double> counts(8, 0);
  for (int64_t j = 0; j < b.n; ++j)
    for (int t = 0; t < 2; ++t) counts[b.raw_i64(1, j)[t]] += 1;
  for (double c : counts) EXPECT_NEAR(c / b.n, 0.25, 0.02);
}

TEST(Qsa, RejectsQNotBelowN) {
  EXPECT_THROW(task_make("qsa", task_params("qsa", {{"N", "4"}, {"q", "4"}})), UserError);
}

// ---------------------------------------------------------------- Match family

// Fast labels (Y) against the brute-force reference for one variant; returns the number
// of positive positions (so callers can check that both classes were exercised).
int64_t check_match_labels(const std::string& task, const Params& p, int64_t n) {
  return check_against_reference(task, p, generate(task, p, n));
}

TEST(Match, EveryVariantMatchesBruteForce) {
  const std::vector<std::string> tasks = {"match2", "match3", "match3_local", "match3_adjacent",
                                          "match3_pointer", "match_s"};
  for (const auto& task : tasks) {
    int64_t positives = 0, positions = 0;
    for (const char* distinct : {"false", "true"}) {
      for (const char* sampling : {"uniform", "balanced", "plant_one"}) {
        for (const char* M : {"7", "31", "0"}) {
          std::vector<std::pair<std::string, std::string>> sets = {
              {"N", "7"}, {"M", M}, {"distinct", distinct}, {"sampling", sampling}};
          if (task == "match3_local") sets.push_back({"w", "2"});
          if (task == "match3_pointer") sets.push_back({"s", "3"});
          if (task == "match_s") sets.push_back({"s", "4"});
          SCOPED_TRACE(task + " distinct=" + distinct + " sampling=" + sampling + " M=" + M);
          positives += check_match_labels(task, task_params(task, sets), 150);
          positions += 150 * 7;
        }
      }
    }
    // Guard against a vacuous comparison: both labels must occur often.
    EXPECT_GT(positives, positions / 10) << task;
    EXPECT_LT(positives, positions * 9 / 10) << task;
  }
}

TEST(Match, MatchSOfOrderTwoAndThreeAgreeWithMatch2AndMatch3) {
  Rng rng(3, "test.tokens", 0);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t N = 6, M = 11;
    std::vector<int64_t> x(N), a(N), b(N);
    for (auto& v : x) v = static_cast<int64_t>(rng.uniform_int(M));
    for (bool distinct : {false, true}) {
      match_s_reference(x.data(), N, M, distinct, 2, a.data());
      match2_reference(x.data(), N, M, distinct, b.data());
      ASSERT_EQ(a, b);
      match_s_reference(x.data(), N, M, distinct, 3, a.data());
      match3_reference(x.data(), N, M, distinct, b.data());
      ASSERT_EQ(a, b);
    }
  }
}

TEST(Match, EncodingsMatchTheTokens) {
  for (const char* encoding : {"one_hot", "circle", "scalar"}) {
    const Params p = task_params("match3_pointer", {{"N", "6"}, {"M", "13"}, {"s", "2"},
                                                   {"encoding", encoding}});
    const Batch b = generate("match3_pointer", p, 30);
    const int64_t token_dim = std::string(encoding) == "one_hot"  ? 13
                              : std::string(encoding) == "circle" ? 2
                                                                  : 1;
    ASSERT_EQ(b.shape.d_in, token_dim + 6);
    for (int64_t j = 0; j < b.n; ++j) {
      for (int64_t i = 0; i < 6; ++i) {
        const double* x = b.x(j) + i * b.shape.d_in;
        const int64_t tok = b.raw_i64(0, j)[i];
        if (token_dim == 13) {
          for (int64_t k = 0; k < 13; ++k) ASSERT_EQ(x[k], k == tok ? 1.0 : 0.0);
        } else if (token_dim == 2) {
          ASSERT_NEAR(x[0], std::cos(2 * std::numbers::pi * tok / 13.0), 1e-15);
          ASSERT_NEAR(x[1], std::sin(2 * std::numbers::pi * tok / 13.0), 1e-15);
        } else {
          ASSERT_EQ(x[0], double(tok));
        }
        const int64_t* ptr = b.raw_i64(1, j) + i * 2;
        for (int64_t t = 0; t < 6; ++t)
          ASSERT_EQ(x[token_dim + t], (ptr[0] == t || ptr[1] == t) ? 1.0 : 0.0);
        ASSERT_NE(ptr[0], i);
        ASSERT_NE(ptr[1], i);
      }
    }
  }
}

TEST(Match, BalancedSamplingGivesAboutHalfPositivesAtLargeM) {
  // With the automatic M (>= 10 N^2) accidental matches are rare, so the positive rate
  // comes from planting; uniform sampling is mostly negative (match_s with s = 4 less so:
  // sums of 3 of 16 tokens cover about a quarter of the residues).
  for (const char* task : {"match2", "match3", "match3_local", "match3_adjacent",
                           "match3_pointer", "match_s"}) {
    const Batch b = generate(task, task_default_params(task), 2000);
    double rate = 0;
    for (double y : b.Y) rate += y / b.Y.size();
    EXPECT_GT(rate, 0.35) << task;
    EXPECT_LT(rate, 0.70) << task;
    const Batch u = generate(task, task_params(task, {{"sampling", "uniform"}}), 2000);
    double uniform_rate = 0;
    for (double y : u.Y) uniform_rate += y / u.Y.size();
    EXPECT_LT(uniform_rate, 0.3) << task;
    EXPECT_GT(rate, uniform_rate + 0.15) << task;
  }
}

TEST(Match, PlantOnePlantsInAboutHalfOfTheSequences) {
  const Batch b = generate("match3", task_params("match3", {{"sampling", "plant_one"}}), 4000);
  int64_t with_match = 0;
  for (int64_t j = 0; j < b.n; ++j)
    with_match += std::any_of(b.y(j), b.y(j) + 16, [](double y) { return y > 0; });
  // 1/2 planted plus a few accidental matches (N^3/(2M) ~ 0.8 expected triples... per
  // sequence at most a small fraction): between 0.45 and 0.7.
  EXPECT_GT(with_match / double(b.n), 0.45);
  EXPECT_LT(with_match / double(b.n), 0.70);
}

TEST(Match, AutomaticModulusIsTheSmallestPrimeAboveTheBound) {
  auto is_prime = [](int64_t m) {
    for (int64_t f = 2; f * f <= m; ++f)
      if (m % f == 0) return false;
    return m >= 2;
  };
  for (int64_t N : {2, 8, 16, 32}) {
    const int64_t M = match_auto_modulus(N);
    const int64_t bound = std::max<int64_t>(N + 1, 10 * N * N);
    EXPECT_TRUE(is_prime(M));
    EXPECT_GE(M, bound);
    for (int64_t m = bound; m < M; ++m) EXPECT_FALSE(is_prime(m)) << m;
  }
  EXPECT_EQ(match_auto_modulus(16), 2579);
}

TEST(Match, ImpossibleParametersAreUserErrors) {
  EXPECT_THROW(task_make("match2", task_params("match2", {{"M", "1"}})), UserError);
  EXPECT_THROW(task_make("match3_pointer", task_params("match3_pointer", {{"N", "4"}, {"s", "4"}})),
               UserError);
  EXPECT_THROW(task_make("match_s", task_params("match_s", {{"N", "512"}, {"s", "8"}})), UserError);
  EXPECT_THROW(task_params("match2", {{"N", "1"}}), UserError);
}

// ---------------------------------------------------------------- determinism

bool same_batch(const Batch& a, const Batch& b) {
  if (a.X != b.X || a.Y != b.Y || a.raw.size() != b.raw.size()) return false;
  for (size_t k = 0; k < a.raw.size(); ++k)
    if (a.raw[k].f64 != b.raw[k].f64 || a.raw[k].i64 != b.raw[k].i64) return false;
  return true;
}

TEST(Determinism, ThreadsAndChunksDoNotChangeAnySample) {
  for (const auto& info : task_registry()) {
    const Params p = task_default_params(info.name);
    threads_configure(1);
    const Batch one = generate(info.name, p, 300, 5, 0, 300);
    threads_configure(2);
    const Batch two = generate(info.name, p, 300, 5, 0, 7);
    threads_configure(1);
    EXPECT_TRUE(same_batch(one, two)) << info.name;
  }
}

TEST(Determinism, AnIndexRangeIsASliceOfTheWholeDataset) {
  for (const auto& info : task_registry()) {
    const Params p = task_default_params(info.name);
    const Batch all = generate(info.name, p, 100, 9);
    const Batch tail = generate(info.name, p, 40, 9, 60);
    ASSERT_EQ(tail.X.size() * 100, all.X.size() * 40);
    EXPECT_TRUE(std::equal(tail.X.begin(), tail.X.end(), all.X.begin() + 60 * all.shape.x_size()))
        << info.name;
    EXPECT_TRUE(std::equal(tail.Y.begin(), tail.Y.end(), all.Y.begin() + 60 * all.shape.y_size()))
        << info.name;
  }
}

TEST(Determinism, DifferentSeedsGiveDifferentData) {
  for (const auto& info : task_registry()) {
    const Params p = task_default_params(info.name);
    EXPECT_NE(generate(info.name, p, 20, 1).X, generate(info.name, p, 20, 2).X) << info.name;
  }
}

// Run groups (experiment/run_groups.h) share the inputs of points that differ only in keys
// marked label_only: sample i's x must be the same for every value of such a key.
TEST(LabelOnlyKeys, InputsAreTheSameForEveryValue) {
  int checked = 0;
  for (const auto& info : task_registry()) {
    const Params base = task_default_params(info.name);
    const Batch ref = generate(info.name, base, 50, 13);
    for (const ParamSpec& spec : info.schema()) {
      if (!spec.label_only) continue;
      std::vector<ParamValue> values;
      if (spec.type == ParamType::String)
        values.assign(spec.choices.begin(), spec.choices.end());
      else if (spec.type == ParamType::Int)
        for (int64_t v = static_cast<int64_t>(std::max(spec.min, 0.0)); v < 6; ++v)
          values.emplace_back(v);
      ASSERT_GE(values.size(), 2u) << info.name << "." << spec.name;
      for (const ParamValue& v : values) {
        Params p = base;
        p.set(spec.name, v);
        std::unique_ptr<Task> task;
        try {
          task = task_make(info.name, p);
        } catch (const UserError&) {
          continue;  // a value the task's cross-parameter rules refuse
        }
        const Batch b = task_generate(*task, 13, 0, 50, 64);
        EXPECT_EQ(b.X, ref.X) << info.name << "." << spec.name << " = " << param_value_text(v);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 7 + 5);  // rf_target: 7 targets, p = 0..5
}

TEST(LabelOnlyKeys, RfTargetDeclaresTargetAndP) {
  std::set<std::string> label_only;
  for (const ParamSpec& spec : task_find("rf_target").schema())
    if (spec.label_only) label_only.insert(spec.name);
  EXPECT_EQ(label_only, (std::set<std::string>{"target", "p"}));
}

TEST(TaskRegistry, UnknownTaskSuggestsTheClosest) {
  try {
    task_find("qas");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'qsa'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attn
