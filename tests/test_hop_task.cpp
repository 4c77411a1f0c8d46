// The k-hop induction heads task (tasks/hop.h): the generator's distribution, targets and the
// pointer chain against a brute-force reference written here from the definition (recursive
// find), the encoding's one-position shift (output t depends only on inputs <= t), the blank
// and "does not exist" classes, the metric mask and the k slice label, determinism by seed, the
// user errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.h"

#include "core/error.h"
#include "core/rng.h"
#include "tasks/hop.h"
#include "tasks/named_arrays.h"
#include "tasks/task.h"

namespace attn {
namespace {

Params hop_params(const std::vector<std::pair<std::string, std::string>>& sets) {
  Params p = task_default_params("hop");
  for (const auto& [k, v] : sets) p.set_text(k, v);
  return p;
}

Batch hop_batch(const Params& p, int64_t n, uint64_t seed = 3, int64_t first = 0) {
  return task_generate(*task_make("hop", p), seed, first, n, 64);
}

// ---- the brute-force reference, from the definition --------------------------------------
// find(i) = 1 + max{j < i : σ_j = σ_i}, −1 (undefined) if the set is empty.
int64_t bf_find(const std::vector<int64_t>& s, int64_t i) {
  int64_t best = -1;
  for (int64_t j = 0; j < i; ++j)
    if (s[static_cast<size_t>(j)] == s[static_cast<size_t>(i)]) best = j;
  return best < 0 ? -1 : best + 1;
}

// find^k(i), undefined propagating.
int64_t bf_find_k(const std::vector<int64_t>& s, int64_t i, int64_t k) {
  if (k == 0 || i < 0) return i;
  return bf_find_k(s, bf_find(s, i), k - 1);
}

int64_t class_of(const Batch& b, int64_t row, int64_t t) {
  const int64_t d = b.shape.d_out;
  const double* y = b.y(row) + t * d;
  EXPECT_EQ(std::count(y, y + d, 1.0), 1) << "row " << row << " position " << t;
  return std::max_element(y, y + d) - y;
}

const int64_t* raw(const Batch& b, const std::string& name, int64_t row) {
  const RawArray& r = b.find(name);
  return r.i64.data() + row * r.spec.sample_size();
}

// ---- generator ----------------------------------------------------------------------------

TEST(HopTask, NoSymbolRepeatsItsPredecessorAndTheDrawsAreUniform) {
  const int64_t A = 5, N = 41, k_max = 3, n = 4000;
  const Batch b = hop_batch(hop_params({{"A", "5"}, {"N", "41"}, {"k_max", "3"}}), n);
  std::vector<double> first(A, 0), ks(k_max + 1, 0), pairs(A * A, 0);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t* s = raw(b, "symbols", j);
    first[s[0]] += 1;
    ks[raw(b, "k", j)[0]] += 1;
    for (int64_t i = 1; i < N - 1; ++i) {
      ASSERT_NE(s[i], s[i - 1]) << "sample " << j << " position " << i;
      pairs[s[i - 1] * A + s[i]] += 1;
    }
  }
  // Pearson's chi-square against the uniform law; the bound is df + 6·sqrt(2 df), a 4-sigma
  // event for the chi-square's own spread (seed fixed, so the test is deterministic).
  auto chi2 = [](const std::vector<double>& counts, const std::vector<double>& expected) {
    double x = 0;
    for (size_t c = 0; c < counts.size(); ++c)
      if (expected[c] > 0) x += (counts[c] - expected[c]) * (counts[c] - expected[c]) / expected[c];
    return x;
  };
  auto bound = [](double df) { return df + 6 * std::sqrt(2 * df); };
  EXPECT_LT(chi2(first, std::vector<double>(A, double(n) / A)), bound(A - 1));
  EXPECT_LT(chi2(ks, std::vector<double>(k_max + 1, double(n) / (k_max + 1))), bound(k_max));
  // Transitions: given σ_{i−1} = a, σ_i is uniform on the A − 1 other symbols.
  for (int64_t a = 0; a < A; ++a) {
    std::vector<double> row(pairs.begin() + a * A, pairs.begin() + (a + 1) * A), expected(A);
    double total = 0;
    for (double c : row) total += c;
    for (int64_t c = 0; c < A; ++c) expected[c] = c == a ? 0 : total / (A - 1);
    EXPECT_EQ(row[a], 0);
    EXPECT_LT(chi2(row, expected), bound(A - 2)) << "after symbol " << a;
  }
}

// ---- targets and the pointer chain against the brute force -------------------------------

TEST(HopTask, TargetsAndChainMatchTheBruteForceForEveryK) {
  for (const char* A : {"2", "3", "4", "7"}) {
    const int64_t k_max = 6;
    const Params p = hop_params({{"A", A}, {"N", "30"}, {"k_max", "6"}});
    const Batch b = hop_batch(p, 300, 17);
    const int64_t a = std::stoll(A), N = 30, J = k_max + 1;
    int64_t none = 0, symbol = 0;
    for (int64_t j = 0; j < b.n; ++j) {
      const std::vector<int64_t> s(raw(b, "symbols", j), raw(b, "symbols", j) + N - 1);
      const int64_t k = raw(b, "k", j)[0];
      const int64_t* chain = raw(b, "hop_chain", j);
      const int64_t* mask = raw(b, "metric_mask", j);
      ASSERT_EQ(class_of(b, j, 0), a) << "blank at position 0";
      EXPECT_EQ(mask[0], 0);
      for (int64_t jj = 0; jj < J; ++jj) EXPECT_EQ(chain[jj], -1);
      for (int64_t t = 1; t < N; ++t) {
        for (int64_t h = 0; h < J; ++h) {
          const int64_t g = bf_find_k(s, t - 1, h);
          ASSERT_EQ(chain[t * J + h], g < 0 ? -1 : g + 1) << "A " << A << " t " << t << " j " << h;
        }
        const int64_t g = bf_find_k(s, t - 1, k);
        const int64_t want = g < 0 ? a + 1 : s[static_cast<size_t>(g)];
        ASSERT_EQ(class_of(b, j, t), want) << "A " << A << " sample " << j << " t " << t;
        EXPECT_EQ(mask[t], g < 0 ? 0 : 1);
        (g < 0 ? none : symbol) += 1;
      }
      // The library's own reference agrees too (hop_reference scans without the chain).
      std::vector<int64_t> ref(N);
      hop_reference(s.data(), N, a, k, ref.data());
      for (int64_t t = 0; t < N; ++t) ASSERT_EQ(ref[t], class_of(b, j, t));
    }
    EXPECT_GT(none, 0) << "some hop is undefined";
    EXPECT_GT(symbol, 0);
  }
}

// Random strings with repeats allowed (the definition does not need the generator's rule).
TEST(HopTask, TheTargetFunctionMatchesTheBruteForceOnArbitraryStrings) {
  Rng rng(5, "test.hop", 0);
  for (int rep = 0; rep < 300; ++rep) {
    const int64_t A = 2 + static_cast<int64_t>(rng.uniform_int(4));
    const int64_t N = 2 + static_cast<int64_t>(rng.uniform_int(25)), k_max = 5, J = k_max + 1;
    std::vector<int64_t> s(N - 1);
    for (auto& v : s) v = static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(A)));
    for (int64_t k = 0; k <= k_max; ++k) {
      std::vector<int64_t> chain(N * J), cls(N);
      hop_targets(s.data(), N, A, k, k_max, chain.data(), cls.data());
      ASSERT_EQ(cls[0], A);
      for (int64_t t = 1; t < N; ++t) {
        const int64_t g = bf_find_k(s, t - 1, k);
        ASSERT_EQ(cls[t], g < 0 ? A + 1 : s[static_cast<size_t>(g)]) << "rep " << rep;
      }
    }
  }
}

// A worked example: σ = 0 1 0 2 1 0. find = (−, −, 1, −, 2, 3); hop_1 = (−, −, 1, −, 0, 2);
// find^2 = (−, −, −, −, 1, −), hop_2 = (−, −, −, −, 1, −).
TEST(HopTask, AHandWorkedSequence) {
  const std::vector<int64_t> s = {0, 1, 0, 2, 1, 0};
  const int64_t A = 3, N = 7, blank = 3, none = 4;
  std::vector<int64_t> find(6);
  hop_find(s.data(), 6, A, find.data());
  EXPECT_EQ(find, (std::vector<int64_t>{-1, -1, 1, -1, 2, 3}));
  const std::vector<std::vector<int64_t>> want = {{blank, 0, 1, 0, 2, 1, 0},
                                                  {blank, none, none, 1, none, 0, 2},
                                                  {blank, none, none, none, none, 1, none}};
  for (int64_t k = 0; k <= 2; ++k) {
    std::vector<int64_t> chain(N * 3), cls(N);
    hop_targets(s.data(), N, A, k, 2, chain.data(), cls.data());
    EXPECT_EQ(cls, want[static_cast<size_t>(k)]) << "k " << k;
  }
}

// ---- the encoding -------------------------------------------------------------------------

TEST(HopTask, EncodingShapesAndTheKToken) {
  const Params p = hop_params({{"A", "4"}, {"N", "9"}, {"k_max", "3"}});
  const Batch b = hop_batch(p, 50);
  EXPECT_EQ(b.shape.T, 9);
  EXPECT_EQ(b.shape.T_out, 9);
  EXPECT_EQ(b.shape.d_in, 4 + 3 + 1);
  EXPECT_EQ(b.shape.d_out, 4 + 2);
  EXPECT_EQ(b.shape.target, TargetKind::categorical);
  EXPECT_EQ(b.find("hop_chain").spec.sample_shape, (std::vector<int64_t>{9, 4}));
  for (int64_t j = 0; j < b.n; ++j) {
    const double* x = b.x(j);
    const int64_t k = raw(b, "k", j)[0];
    for (int64_t c = 0; c < 8; ++c) EXPECT_EQ(x[c], c == 4 + k ? 1.0 : 0.0) << "k token";
    for (int64_t t = 1; t < 9; ++t)
      for (int64_t c = 0; c < 8; ++c)
        EXPECT_EQ(x[t * 8 + c], c == raw(b, "symbols", j)[t - 1] ? 1.0 : 0.0);
  }
}

// Output t depends only on inputs <= t: changing input t + 1 (σ_t) leaves outputs 0 … t and
// their chains unchanged (and does change a later output for some string, so the check bites).
TEST(HopTask, OutputTDependsOnlyOnInputsUpToT) {
  Rng rng(9, "test.hop.shift", 0);
  const int64_t A = 3, N = 16, k_max = 4, J = k_max + 1;
  int64_t later_changed = 0;
  for (int rep = 0; rep < 200; ++rep) {
    std::vector<int64_t> s(N - 1);
    for (auto& v : s) v = static_cast<int64_t>(rng.uniform_int(A));
    const int64_t k = static_cast<int64_t>(rng.uniform_int(k_max + 1));
    const int64_t t = static_cast<int64_t>(rng.uniform_int(N - 1));  // input t + 1 holds σ_t
    std::vector<int64_t> chain(N * J), cls(N), chain2(N * J), cls2(N);
    hop_targets(s.data(), N, A, k, k_max, chain.data(), cls.data());
    std::vector<int64_t> s2 = s;
    s2[t] = (s2[t] + 1 + static_cast<int64_t>(rng.uniform_int(A - 1))) % A;
    hop_targets(s2.data(), N, A, k, k_max, chain2.data(), cls2.data());
    for (int64_t u = 0; u <= t; ++u) {
      ASSERT_EQ(cls[u], cls2[u]) << "output " << u << " changed with input " << t + 1;
      for (int64_t h = 0; h < J; ++h) ASSERT_EQ(chain[u * J + h], chain2[u * J + h]);
    }
    later_changed += !std::equal(cls.begin() + t + 1, cls.end(), cls2.begin() + t + 1);
  }
  EXPECT_GT(later_changed, 50);
}

// Induction heads (the one-layer paper) is one line: A = 3, k = 1.
TEST(HopTask, AFixedKIsUsedByEverySequence) {
  const Batch b = hop_batch(hop_params({{"A", "3"}, {"k", "1"}}), 100);
  for (int64_t j = 0; j < b.n; ++j) EXPECT_EQ(raw(b, "k", j)[0], 1);
  const Batch drawn = hop_batch(hop_params({{"A", "3"}}), 100);
  // σ comes from its own stream: fixing k leaves the strings alone.
  EXPECT_EQ(b.find("symbols").i64, drawn.find("symbols").i64);
}

TEST(HopTask, KLargerThanKMaxIsAUserErrorNamingTheKeys) {
  std::string msg = "no error";
  try {
    task_make("hop", hop_params({{"k", "5"}, {"k_max", "4"}}));
  } catch (const UserError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("task.k = 5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("task.k_max"), std::string::npos) << msg;
}

TEST(HopTask, DeterministicBySeed) {
  const Params p = hop_params({});
  const Batch a = hop_batch(p, 40, 7), b = hop_batch(p, 40, 7), c = hop_batch(p, 40, 8);
  EXPECT_EQ(a.X, b.X);
  EXPECT_EQ(a.Y, b.Y);
  EXPECT_EQ(a.find("hop_chain").i64, b.find("hop_chain").i64);
  EXPECT_NE(a.X, c.X);
  const Batch tail = hop_batch(p, 10, 7, 30);  // samples 30 … 39
  EXPECT_TRUE(std::equal(tail.Y.begin(), tail.Y.end(), a.Y.begin() + 30 * a.shape.y_size()));
}

// The arrays it hands out keep the named-array contract, and k is a slice label.
TEST(HopTask, NamedArraysAndTheSliceLabel) {
  const Batch b = hop_batch(hop_params({}), 5);
  named_arrays_check(b.shape);
  EXPECT_NE(named_array_find(b, NamedArray::k), nullptr);
  EXPECT_NE(named_array_find(b, NamedArray::metric_mask), nullptr);
  EXPECT_NE(named_array_find(b, NamedArray::hop_chain), nullptr);
  EXPECT_TRUE(named_array_info(NamedArray::k).slice_label);
}

// End to end: `attnlab run` of a small spec on task hop with a transformer (a few hundred steps)
// stores test_token_error_by_k and test_token_error_se_by_k for every k, each in [0, 1], and the
// overall token error is a mix of the slices' (between their least and largest).
TEST(HopTask, ARunStoresTheErrorPerK) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("attnlab_hop_run_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string spec = (dir / "spec.toml").string(), out = (dir / "out").string();
  test::file_write(spec,
                   "[experiment]\nname = \"hop_e2e\"\n[task]\nname = \"hop\"\nN = 12\nA = 3\n"
                   "k_max = 2\n[model]\nname = \"transformer\"\nlayers = 2\nm = 16\n"
                   "[train]\nn = 0\nsteps = 300\nbatch = 32\nlr = 3e-3\n[eval]\nn = 600\n");
  const auto r = test::cli_run("run " + spec + " --out " + out + " -q --jobs 1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::istringstream csv(test::file_read(out + "/series.csv"));
  std::string line;
  std::getline(csv, line);
  std::vector<std::string> header;
  std::istringstream head_line(line);
  for (std::string cell; std::getline(head_line, cell, ',');) header.push_back(cell);
  std::map<std::string, std::map<int64_t, double>> series;
  const auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), header.size()) << line;
    series[cells[col("series")]][std::stoll(cells[col("step")])] = std::stod(cells[col("value")]);
  }
  const auto& error = series["test_token_error_by_k"];
  const auto& se = series["test_token_error_se_by_k"];
  ASSERT_EQ(error.size(), 3u) << test::file_read(out + "/series.csv");
  ASSERT_EQ(se.size(), 3u);
  double lo = 1, hi = 0;
  for (int64_t k = 0; k <= 2; ++k) {
    ASSERT_TRUE(error.count(k) && se.count(k)) << "k " << k;
    EXPECT_GE(error.at(k), 0.0);
    EXPECT_LE(error.at(k), 1.0);
    EXPECT_GE(se.at(k), 0.0) << "k " << k;
    if (error.at(k) > 0 && error.at(k) < 1) {
      EXPECT_GT(se.at(k), 0.0) << "k " << k;
    }
    lo = std::min(lo, error.at(k));
    hi = std::max(hi, error.at(k));
  }
  const std::string results = test::file_read(out + "/results.csv");
  std::istringstream rs(results);
  std::string head, values;
  std::getline(rs, head);
  std::getline(rs, values);
  std::vector<std::string> hc, vc;
  for (std::istringstream h(head); std::getline(h, line, ',');) hc.push_back(line);
  for (std::istringstream v(values); std::getline(v, line, ',');) vc.push_back(line);
  const size_t at =
      static_cast<size_t>(std::find(hc.begin(), hc.end(), "test_token_error") - hc.begin());
  ASSERT_LT(at, vc.size()) << results;
  const double overall = std::stod(vc[at]);
  EXPECT_GE(overall, lo - 1e-12);
  EXPECT_LE(overall, hi + 1e-12);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attn
