// The tasks of the statistical-separation papers (docs/sep2025.md): sparse_retrieval (q-sparse
// token retrieval) and token_selection (sparse token selection). Targets against the brute-force
// reference for every link, variant, encoding and code kind; the mean link is qsa on identical
// inputs; samples are a pure function of (params, seed, i) across chunks, threads and index
// ranges; stochastic codes differ between sequences, fixed ones do not; bad parameters are
// one-line UserErrors naming the key and the fix; evaluation at another length (eval.N) runs
// for the length-free encodings and is refused, naming the reason, otherwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/threads.h"
#include "experiment/plan.h"
#include "experiment/run_point.h"
#include "spec_test_helpers.h"
#include "task_test_helpers.h"
#include "tasks/task.h"

namespace attn {
namespace {

using test::task_params;

using Keys = test::TaskSettings;

Batch draw(const std::string& task, const Keys& keys, int64_t n, uint64_t seed = 7,
           int64_t first = 0, int64_t chunk = 16) {
  return task_generate(*task_make(task, task_params(task, keys)), seed, first, n, chunk);
}

std::string keys_text(const Keys& keys) {
  std::string s;
  for (const auto& [k, v] : keys) s += k + "=" + v + " ";
  return s;
}

// Every target equals the registry's reference (1e-12 relative); returns the non-zero count.
int64_t check_reference(const std::string& task, const Keys& keys, const Batch& b) {
  const Params p = task_params(task, keys);
  std::vector<double> ref(static_cast<size_t>(b.shape.y_size()));
  int64_t nonzero = 0;
  for (int64_t r = 0; r < b.n; ++r) {
    task_find(task).reference(p, b, r, ref.data());
    for (int64_t k = 0; k < b.shape.y_size(); ++k) {
      EXPECT_NEAR(b.y(r)[k], ref[k], 1e-12 * std::max(1.0, std::abs(ref[k])))
          << task << " " << keys_text(keys) << "sample " << r << " entry " << k;
      nonzero += ref[k] != 0;
    }
  }
  return nonzero;
}

// The parameter sets the tests below loop over.
std::vector<Keys> retrieval_cases() {
  std::vector<Keys> out;
  for (const char* link : {"mean", "product", "max", "relu_net"})
    for (const char* variant : {"seq2seq", "single"})
      for (const char* encoding : {"one_hot", "indices"})
        for (const char* pointers : {"ordered", "sorted"})
          out.push_back({{"N", "7"},
                         {"q", "3"},
                         {"d", "3"},
                         {"link_width", "5"},
                         {"link", link},
                         {"variant", variant},
                         {"encoding", encoding},
                         {"pointers", pointers}});
  out.push_back({{"z_dist", "gaussian"}, {"link", "product"}});
  out.push_back({{"z_dist", "ball"}, {"variant", "single"}, {"link", "max"}});
  out.push_back({{"exclude_self", "true"}, {"link", "relu_net"}, {"q", "4"}});
  out.push_back({{"N", "5"}, {"q", "5"}, {"link", "relu_net"}});  // q = N: every position
  return out;
}

std::vector<Keys> selection_cases() {
  std::vector<Keys> out;
  for (const char* codes : {"stochastic", "fixed"})
    for (const char* dist : {"sphere", "gaussian"})
      for (const char* query : {"sum", "mean"})
        out.push_back({{"N", "9"},
                       {"q", "3"},
                       {"code_dim", "5"},
                       {"codes", codes},
                       {"code_dist", dist},
                       {"query_code", query}});
  out.push_back({{"N", "4"}, {"q", "4"}, {"d", "1"}});
  return out;
}

// ---------------------------------------------------------------- targets

TEST(SparseRetrieval, TargetsMatchTheReferenceForEveryLinkVariantEncodingAndOrder) {
  for (const Keys& keys : retrieval_cases()) {
    const Batch b = draw("sparse_retrieval", keys, 25);
    EXPECT_GT(check_reference("sparse_retrieval", keys, b), 0) << keys_text(keys);
  }
}

TEST(TokenSelection, TargetsMatchTheReferenceForEveryCodeKind) {
  for (const Keys& keys : selection_cases()) {
    const Batch b = draw("token_selection", keys, 25);
    EXPECT_GT(check_reference("token_selection", keys, b), 0) << keys_text(keys);
  }
}

// Link values by hand on one output: product, max and relu_net are what their names say, and
// only relu_net depends on the order of the pointers.
TEST(SparseRetrieval, LinksAreTheirDefinitionsAndOnlyReluNetSeesThePointerOrder) {
  const Keys base = {{"N", "9"}, {"q", "3"}, {"d", "2"}, {"encoding", "indices"}};
  for (const char* link : {"mean", "product", "max", "relu_net"}) {
    Keys ordered = base, sorted = base;
    ordered.push_back({"link", link});
    sorted.push_back({"link", link});
    sorted.push_back({"pointers", "sorted"});
    const Batch a = draw("sparse_retrieval", ordered, 40);
    const Batch s = draw("sparse_retrieval", sorted, 40);
    ASSERT_EQ(a.raw[0].f64, s.raw[0].f64) << link;  // the same tokens z
    bool unsorted = false;
    double worst = 0;
    for (size_t k = 0; k < a.Y.size(); ++k) worst = std::max(worst, std::abs(a.Y[k] - s.Y[k]));
    for (int64_t r = 0; r < a.n; ++r)
      for (int64_t i = 0; i < 9; ++i) {
        const int64_t* t = a.raw_i64(1, r) + i * 3;
        unsorted = unsorted || !std::is_sorted(t, t + 3);
        std::vector<int64_t> u(t, t + 3), v(s.raw_i64(1, r) + i * 3, s.raw_i64(1, r) + i * 3 + 3);
        std::sort(u.begin(), u.end());
        ASSERT_EQ(u, v) << link;  // the same sets, another order
      }
    EXPECT_TRUE(unsorted) << link;
    if (std::string(link) == "relu_net")
      EXPECT_GT(worst, 1e-3);
    else
      EXPECT_LT(worst, 1e-15) << link;
  }
  const Batch b = draw("sparse_retrieval", {{"N", "6"}, {"d", "2"}, {"link", "product"}}, 3);
  const double* z = b.raw_f64(0, 1);
  const int64_t* t = b.raw_i64(1, 1) + 4 * 2;  // output 4 of sample 1
  EXPECT_EQ(b.y(1)[4 * 2 + 1], z[t[0] * 2 + 1] * z[t[1] * 2 + 1]);
  const Batch m = draw("sparse_retrieval", {{"N", "6"}, {"d", "2"}, {"link", "max"}}, 3);
  EXPECT_EQ(m.y(1)[4 * 2], std::max(m.raw_f64(0, 1)[m.raw_i64(1, 1)[8] * 2],
                                    m.raw_f64(0, 1)[m.raw_i64(1, 1)[9] * 2]));
}

// ---------------------------------------------------------------- the mean link is qsa

TEST(SparseRetrieval, MeanLinkIsQsaOnIdenticalInputs) {
  for (const char* dist : {"sphere", "ball"})
    for (const char* self : {"false", "true"}) {
      const std::string at = std::string(dist) + " exclude_self=" + self;
      const Batch qsa = draw("qsa",
                             {{"N", "10"},
                              {"q", "3"},
                              {"d_out", "4"},
                              {"encoding", "indices"},
                              {"z_dist", dist},
                              {"exclude_self", self}},
                             50, 3);
      const Keys keys = {{"N", "10"},
                         {"q", "3"},
                         {"d", "4"},
                         {"link", "mean"},
                         {"z_dist", dist},
                         {"exclude_self", self},
                         {"encoding", "indices"}};
      Keys sorted = keys;
      sorted.push_back({"pointers", "sorted"});
      const Batch same = draw("sparse_retrieval", sorted, 50, 3);
      // Sorted pointers with index encoding: qsa's samples exactly, inputs and targets.
      EXPECT_EQ(same.X, qsa.X) << at;
      EXPECT_EQ(same.Y, qsa.Y) << at;
      EXPECT_EQ(same.find("z").f64, qsa.find("z").f64) << at;
      EXPECT_EQ(same.find("sets").i64, qsa.find("sets").i64) << at;
      // Ordered pointers (the default): the same targets, summed in another order.
      const Batch ordered = draw("sparse_retrieval", keys, 50, 3);
      ASSERT_EQ(ordered.Y.size(), qsa.Y.size());
      for (size_t k = 0; k < qsa.Y.size(); ++k) EXPECT_NEAR(ordered.Y[k], qsa.Y[k], 1e-15) << at;
      EXPECT_NE(ordered.X, qsa.X) << at;
    }
  // One-hot pointers against qsa's multi-hot sets: the same targets too.
  const Batch qsa = draw("qsa", {{"N", "8"}, {"d_out", "3"}}, 30);
  const Batch one_hot = draw("sparse_retrieval", {{"N", "8"}, {"d", "3"}}, 30);
  EXPECT_EQ(one_hot.find("z").f64, qsa.find("z").f64);
  for (size_t k = 0; k < qsa.Y.size(); ++k) EXPECT_NEAR(one_hot.Y[k], qsa.Y[k], 1e-15);
}

// ---------------------------------------------------------------- layouts

TEST(SparseRetrieval, SingleVariantHasOnePointerTokenFirstAndOneOutput) {
  const Batch b = draw(
      "sparse_retrieval",
      {{"N", "6"}, {"q", "2"}, {"d", "2"}, {"variant", "single"}, {"encoding", "indices"}}, 10);
  ASSERT_EQ(b.shape.T, 7);
  ASSERT_EQ(b.shape.T_out, 1);
  ASSERT_EQ(b.shape.d_in, 2 + 2 + 1);
  for (int64_t r = 0; r < b.n; ++r) {
    const double* x = b.x(r);
    const int64_t* t = b.raw_i64(1, r);
    EXPECT_EQ(x[0], 0.0);
    EXPECT_EQ(x[2], static_cast<double>(t[0]));
    EXPECT_EQ(x[3], static_cast<double>(t[1]));
    EXPECT_EQ(x[4], -1.0);  // the pointer token has no position
    for (int64_t j = 0; j < 6; ++j) {
      EXPECT_EQ(x[(j + 1) * 5 + 4], static_cast<double>(j));
      EXPECT_EQ(x[(j + 1) * 5 + 2], -1.0);  // data tokens carry no pointers
      EXPECT_EQ(x[(j + 1) * 5], b.raw_f64(0, r)[j * 2]);
    }
  }
}

// The one_hot layout, field by field (the targets' reference decodes only z and the pointers):
// [z (d) | q one-hot blocks of N | one-hot of the own position]; in `single` the pointer token
// has no position and the data tokens no pointers (zeros).
TEST(SparseRetrieval, OneHotTokensHoldExactlyTheirPointersAndTheirOwnPosition) {
  const int64_t N = 6, q = 2, d = 2, w = d + (q + 1) * N;
  for (const char* variant : {"seq2seq", "single"}) {
    SCOPED_TRACE(variant);
    const bool single = std::string(variant) == "single";
    Keys keys{{"N", "6"}, {"q", "2"}, {"d", "2"}, {"variant", variant}, {"encoding", "one_hot"}};
    if (single) keys.push_back({"exclude_self", "false"});
    const Batch b = draw("sparse_retrieval", keys, 10);
    ASSERT_EQ(b.shape.d_in, w);
    ASSERT_EQ(b.shape.T, single ? N + 1 : N);
    for (int64_t r = 0; r < b.n; ++r) {
      const double* x = b.x(r);
      const double* z = b.raw_f64(0, r);
      const int64_t* t = b.raw_i64(1, r);
      // A one-hot field of N entries at `at` of token `row`: exactly one 1 at `hot` (-1: all 0).
      auto expect_field = [&](int64_t row, int64_t at, int64_t hot, const char* what) {
        for (int64_t k = 0; k < N; ++k)
          EXPECT_EQ(x[row * w + at + k], k == hot ? 1.0 : 0.0)
              << what << ": sample " << r << " token " << row << " entry " << k;
      };
      for (int64_t row = 0; row < b.shape.T; ++row) {
        const bool pointer_token = single && row == 0;
        const int64_t j = single ? row - 1 : row;  // the data token's position
        for (int64_t k = 0; k < d; ++k)
          EXPECT_EQ(x[row * w + k], pointer_token ? 0.0 : z[j * d + k]) << "z, token " << row;
        for (int64_t blk = 0; blk < q; ++blk) {
          const int64_t hot = pointer_token ? t[blk] : single ? -1 : t[j * q + blk];
          expect_field(row, d + blk * N, hot, "pointer block");
        }
        expect_field(row, d + q * N, pointer_token ? -1 : j, "position");
      }
    }
  }
}

TEST(TokenSelection, TheQueryTokenNamesTheSelectedPositionsByTheirCodes) {
  for (const char* query : {"sum", "mean"}) {
    const Batch b =
        draw("token_selection",
             {{"N", "8"}, {"q", "3"}, {"d", "2"}, {"code_dim", "4"}, {"query_code", query}}, 20);
    const int64_t d_in = 2 + 4 + 1;
    ASSERT_EQ(b.shape.d_in, d_in);
    ASSERT_EQ(b.shape.T, 9);
    for (int64_t r = 0; r < b.n; ++r) {
      const double* x = b.x(r);
      const int64_t* S = b.raw_i64(0, r);
      EXPECT_EQ(x[0], 0.0);
      EXPECT_EQ(x[1], 0.0);
      EXPECT_EQ(x[d_in - 1], 1.0);  // the query flag
      for (int64_t k = 0; k < 4; ++k) {
        double sum = 0;
        for (int64_t t = 0; t < 3; ++t) sum += x[(S[t] + 1) * d_in + 2 + k];
        if (std::string(query) == "mean") sum /= 3;
        EXPECT_NEAR(x[2 + k], sum, 1e-15);
      }
      for (int64_t j = 1; j <= 8; ++j) {
        EXPECT_EQ(x[j * d_in + d_in - 1], 0.0);
        double norm = 0;
        for (int64_t k = 0; k < 4; ++k) norm += x[j * d_in + 2 + k] * x[j * d_in + 2 + k];
        EXPECT_NEAR(norm, 1.0, 1e-12);  // sphere codes
      }
    }
  }
}

// The code of position j in sample r, as X holds it.
std::vector<double> code_at(const Batch& b, int64_t r, int64_t j, int64_t d, int64_t m) {
  const double* c = b.x(r) + (j + 1) * b.shape.d_in + d;
  return {c, c + m};
}

TEST(TokenSelection, StochasticCodesDifferBetweenSequencesAndFixedCodesDoNot) {
  const Keys base = {{"N", "6"}, {"d", "2"}, {"code_dim", "3"}};
  Keys fixed = base;
  fixed.push_back({"codes", "fixed"});
  const Batch s = draw("token_selection", base, 10);
  const Batch f = draw("token_selection", fixed, 10);
  EXPECT_TRUE(s.constants.empty());  // no dataset constant: codes live in each sample
  ASSERT_EQ(f.constants.size(), 1u);
  const std::vector<double>& table = f.find("codes").f64;
  ASSERT_EQ(table.size(), 6u * 3u);
  for (int64_t j = 0; j < 6; ++j) {
    const std::vector<double> want(table.begin() + j * 3, table.begin() + (j + 1) * 3);
    for (int64_t r = 0; r < f.n; ++r) EXPECT_EQ(code_at(f, r, j, 2, 3), want) << r << " " << j;
    for (int64_t r = 1; r < s.n; ++r) EXPECT_NE(code_at(s, r, j, 2, 3), code_at(s, 0, j, 2, 3));
  }
  // Fixed codes are the dataset's: another seed draws others; another length keeps the
  // codes of the first N positions (what a model trained at N sees at eval.N = 2N).
  const Batch other = draw("token_selection", fixed, 2, 8);
  EXPECT_NE(other.find("codes").f64, table);
  Keys longer = fixed;
  longer.push_back({"N", "12"});
  const Batch twice = draw("token_selection", longer, 2);
  const std::vector<double>& long_table = twice.find("codes").f64;
  ASSERT_EQ(long_table.size(), 12u * 3u);
  EXPECT_TRUE(std::equal(table.begin(), table.end(), long_table.begin()));
  // The tokens and the subset do not depend on the code kind.
  EXPECT_EQ(s.Y, f.Y);
  EXPECT_EQ(s.raw[0].i64, f.raw[0].i64);
}

TEST(SparseRetrieval, ReluNetWeightsAreADatasetConstantOfTheSeed) {
  const Keys keys = {{"link", "relu_net"}, {"link_width", "8"}};
  const Batch a = draw("sparse_retrieval", keys, 4, 1);
  const Batch b = draw("sparse_retrieval", keys, 4, 1, 100);
  const Batch c = draw("sparse_retrieval", keys, 4, 2);
  ASSERT_EQ(a.find("link_w1").f64.size(), 8u * 2u * 4u);
  ASSERT_EQ(a.find("link_w2").f64.size(), 4u * 8u);
  EXPECT_EQ(a.find("link_w1").f64, b.find("link_w1").f64);
  EXPECT_EQ(a.find("link_w2").f64, b.find("link_w2").f64);
  EXPECT_NE(a.find("link_w1").f64, c.find("link_w1").f64);
  EXPECT_TRUE(draw("sparse_retrieval", {}, 2).constants.empty());  // mean has none
}

// ---------------------------------------------------------------- determinism

bool same(const Batch& a, const Batch& b) {
  if (a.X != b.X || a.Y != b.Y || a.raw.size() != b.raw.size()) return false;
  for (size_t k = 0; k < a.raw.size(); ++k)
    if (a.raw[k].f64 != b.raw[k].f64 || a.raw[k].i64 != b.raw[k].i64) return false;
  for (size_t k = 0; k < a.constants.size(); ++k)
    if (a.constants[k].f64 != b.constants[k].f64) return false;
  return true;
}

// Rows [from, from + n) of `all` as a batch of their own.
Batch rows(const Batch& all, int64_t from, int64_t n) {
  Batch out = batch_alloc(all.shape, n);
  out.constants = all.constants;
  std::copy(all.x(from), all.x(from + n), out.X.begin());
  std::copy(all.y(from), all.y(from + n), out.Y.begin());
  for (size_t k = 0; k < all.raw.size(); ++k) {
    const int64_t size = all.raw[k].spec.sample_size();
    if (all.raw[k].spec.integer)
      std::copy(all.raw[k].i64.begin() + from * size, all.raw[k].i64.begin() + (from + n) * size,
                out.raw[k].i64.begin());
    else
      std::copy(all.raw[k].f64.begin() + from * size, all.raw[k].f64.begin() + (from + n) * size,
                out.raw[k].f64.begin());
  }
  return out;
}

TEST(SepTasks, SamplesArePureFunctionsOfParamsSeedAndIndex) {
  std::vector<std::pair<std::string, Keys>> cases;
  for (const Keys& k : retrieval_cases()) cases.push_back({"sparse_retrieval", k});
  for (const Keys& k : selection_cases()) cases.push_back({"token_selection", k});
  for (const auto& [task, keys] : cases) {
    const std::string at = task + " " + keys_text(keys);
    threads_configure(1);
    const Batch one = draw(task, keys, 60, 4, 0, 60);
    threads_configure(2);
    const Batch two = draw(task, keys, 60, 4, 0, 7);
    const Batch tail = draw(task, keys, 25, 4, 35, 3);
    threads_configure(1);
    EXPECT_TRUE(same(one, two)) << at;
    EXPECT_TRUE(same(rows(one, 35, 25), tail)) << at;
    EXPECT_FALSE(same(one, draw(task, keys, 60, 5))) << at;
  }
}

// ---------------------------------------------------------------- bad parameters

std::string make_error(const std::string& task, const Keys& keys) {
  try {
    task_make(task, task_params(task, keys));
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(SepTasks, BadParametersAreOneLineUserErrorsNamingTheKeyAndTheFix) {
  struct Case {
    std::string task;
    Keys keys;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {
      {"sparse_retrieval", {{"N", "4"}, {"q", "5"}}, {"task.q = 5", "task.N = 4", "lower q"}},
      {"token_selection", {{"N", "4"}, {"q", "5"}}, {"task.q = 5", "task.N = 4", "lower q"}},
      {"sparse_retrieval", {{"q", "0"}}, {"task.q = 0", "between 1 and"}},
      {"token_selection", {{"q", "0"}}, {"task.q = 0", "between 1 and"}},
      {"sparse_retrieval", {{"link", "sum"}}, {"task.link", "'sum'", "mean, product, max"}},
      {"token_selection", {{"codes", "learned"}}, {"task.codes", "stochastic, fixed"}},
      {"sparse_retrieval",
       {{"N", "4"}, {"q", "4"}, {"exclude_self", "true"}},
       {"task.q = 4", "exclude_self", "lower q"}},
      {"sparse_retrieval",
       {{"variant", "single"}, {"exclude_self", "true"}},
       {"task.exclude_self", "seq2seq", "set task.exclude_self = false"}},
  };
  for (const Case& c : cases) {
    const std::string e = make_error(c.task, c.keys);
    ASSERT_FALSE(e.empty()) << c.task << " " << keys_text(c.keys);
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    for (const std::string& w : c.words) EXPECT_NE(e.find(w), std::string::npos) << e << " / " << w;
  }
}

// ---------------------------------------------------------------- other lengths (eval.N)

using SepEvalLength = test::SpecFileTest;

// `task` at N = 8 with `keys`, `model`, a short training, tested at eval.N = 16.
std::string eval_spec(const std::string& task, const std::string& keys, const std::string& model,
                      bool at_16 = true) {
  return "[experiment]\nname = \"sepeval\"\nseeds = [3]\n[task]\nname = \"" + task +
         "\"\nN = 8\nq = 2\n" + keys + "[model]\nname = \"" + model +
         "\"\n[train]\nn = 64\nsteps = 10\nbatch = 16\n[eval]\nn = 20\nfirst = 5000\n" +
         (at_16 ? "N = 16\n" : "");
}

TEST_F(SepEvalLength, LengthFreeEncodingsAreEvaluatedAtTwiceTheLength) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"token_selection", ""},
      {"token_selection", "codes = \"fixed\"\n"},
      {"sparse_retrieval", "encoding = \"indices\"\n"},
      {"sparse_retrieval", "encoding = \"indices\"\nvariant = \"single\"\n"},
  };
  for (const auto& [task, keys] : cases) {
    const std::string at = task + " " + keys;
    const RunOutcome run = run_point_execute(plan(eval_spec(task, keys, "attention"))[0]);
    ASSERT_TRUE(run.ok) << at << run.error;
    const RunOutcome own = run_point_execute(plan(eval_spec(task, keys, "attention", false))[0]);
    ASSERT_TRUE(own.ok) << at << own.error;
    std::map<std::string, double> m(run.metrics.begin(), run.metrics.end()),
        o(own.metrics.begin(), own.metrics.end());
    EXPECT_EQ(m.at("test_samples"), 20) << at;
    EXPECT_EQ(m.at("val_loss"), o.at("val_loss")) << at;  // the same training
    EXPECT_NE(m.at("test_mse"), o.at("test_mse")) << at;  // another test set: at N = 16
  }
}

TEST_F(SepEvalLength, LengthDependentShapesAreRefusedNamingTheReason) {
  // One-hot pointers: the token width grows with N.
  std::string e = error(eval_spec("sparse_retrieval", "", "attention"));
  EXPECT_NE(e.find("eval.N = 16"), std::string::npos) << e;
  EXPECT_NE(e.find("task sparse_retrieval's token widths change with N"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  // A model over the flattened sequence: its parameters depend on N.
  e = error(eval_spec("token_selection", "", "mlp"));
  EXPECT_NE(e.find("model mlp"), std::string::npos) << e;
  EXPECT_NE(e.find("its parameters depend on N"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

}  // namespace
}  // namespace attn
