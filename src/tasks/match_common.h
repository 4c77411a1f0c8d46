// Shared machinery of the Match family (Sanford et al. 2023, spec §2.2-2.3): scalar tokens
// x_i ∈ {0, ..., M-1}, one output bit per position saying whether x_i completes a match
// (a tuple of other tokens whose sum with x_i is ≡ 0 mod M). Each variant (match2, match3,
// match3_local, match3_adjacent, match3_pointer, match_s) says which tuples count.
//
// Sampling:
//   uniform    tokens i.i.d. uniform on {0..M-1}
//   balanced   uniform, then matches are planted so that about plant_fraction of the
//              positions are positive (exact labels are always recomputed afterwards)
//   plant_one  uniform, then with probability 1/2 one match is planted (spec §5.2)
// match3 also has instances = planted_triples (MatchConfig::sum_free_background).
// Encodings of a token: one_hot (M dims), circle (cos, sin of 2πx/M), scalar (x itself).
// Shapes: X n × N × d_in, Y n × N × 1 (0/1). Raw: tokens (n, N) int64 (+ variant arrays).
// Constant: modulus (0-d int64), the M in use (M = 0 resolves to the automatic prime).
// match2 and match3 also have auto_modulus, the rule M = 0 resolves by: rare_matches (the
// default, the smallest prime >= max(N+1, 10 N^2)) or uniform_half (the prime >= N+1 at which
// uniform tokens make about half the positions positive: labels balanced without planting).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/params.h"
#include "core/rng.h"
#include "tasks/task.h"

namespace attn {

enum class MatchSampling { uniform, balanced, plant_one };
inline constexpr Choice<MatchSampling> kMatchSamplings[] = {
    {MatchSampling::uniform, "uniform"},
    {MatchSampling::balanced, "balanced"},
    {MatchSampling::plant_one, "plant_one"}};
enum class MatchEncoding { one_hot, circle, scalar };
inline constexpr Choice<MatchEncoding> kMatchEncodings[] = {{MatchEncoding::one_hot, "one_hot"},
                                                            {MatchEncoding::circle, "circle"},
                                                            {MatchEncoding::scalar, "scalar"}};

struct MatchConfig {
  std::string task;  // names the random streams
  int64_t N = 0, M = 0;
  MatchSampling sampling = MatchSampling::balanced;
  MatchEncoding encoding = MatchEncoding::circle;
  bool distinct = false;
  double plant_fraction = 0.5;
  // match3's planted_triples instances: tokens before planting are uniform on the middle
  // third {x : M < 3x < 2M} (no x + y + z ≡ 0 mod M among them), and at least one match is
  // planted (sampling is then balanced).
  bool sum_free_background = false;
};

// N, M, sampling, encoding, distinct, plant_fraction: the parameters every variant has.
std::vector<ParamSpec> match_common_schema();
// Reads and validates the common parameters; M = 0 resolves to match_auto_modulus(N).
MatchConfig match_config(const std::string& task, const Params& params);
// The smallest prime >= max(N + 1, 10 N^2) (spec §5.2, A10).
int64_t match_auto_modulus(int64_t N);
bool match_is_prime(int64_t m);

// auto_modulus (match2 and match3 only; out of run ids at its default, rare_matches).
ParamSpec match_auto_modulus_param();
// Under auto_modulus = uniform_half: of the largest prime <= m_half and the smallest prime
// >= m_half, both at least N + 1 (the regime of San Thm 7), the one whose rate(M) is nearer
// 1/2 (the larger on a tie); rate(M) is the task's positive rate under uniform tokens.
int64_t match_half_positive_prime(int64_t N, double m_half,
                                  const std::function<double(int64_t M)>& rate);
// Applies auto_modulus to a config read by match_config: with uniform_half (needs task.M = 0,
// else UserError), c.M = half_positive_modulus(c.N, c.distinct).
void match_apply_auto_modulus(MatchConfig& c, const Params& params,
                              int64_t (*half_positive_modulus)(int64_t N, bool distinct));
// x mod M in {0..M-1} for any sign of x.
inline int64_t mod_m(int64_t x, int64_t M) {
  const int64_t r = x % M;
  return r < 0 ? r + M : r;
}

// Sorted multiset of token values, for O(log N) counts.
class ValueCounts {
 public:
  ValueCounts(const int64_t* tokens, int64_t N);
  int64_t count(int64_t value) const;

 private:
  std::vector<int64_t> sorted_;
};

// A Match variant: the base samples, plants, encodes; the variant defines the tuples.
class MatchTask : public Task {
 public:
  explicit MatchTask(MatchConfig config);
  const TaskShape& shape() const override { return shape_; }
  void fill_constants(uint64_t seed, Batch& out) const override;
  void sample_range(uint64_t seed, int64_t first, int64_t count, Batch& out,
                    int64_t row) const override;
  const MatchConfig& config() const { return c_; }

 protected:
  // Adds variant-specific per-sample arrays (after "tokens") and extra input columns.
  void add_raw(RawArraySpec spec) { shape_.raw.push_back(std::move(spec)); }
  void add_input_columns(int64_t k) { shape_.d_in += k; }
  int64_t token_dim() const { return token_dim_; }

  // Draws the variant's per-sample arrays (aux points at raw arrays 1.. of this sample).
  virtual void draw_aux(Rng& /*rng*/, std::vector<int64_t*>& /*aux*/) const {}
  // Writes extra input columns of position i (after the token encoding).
  virtual void encode_aux(int64_t /*i*/, const std::vector<int64_t*>& /*aux*/,
                          double* /*x_extra*/) const {}
  // Positions made positive by one planted match (used to size `balanced`).
  virtual int64_t positives_per_plant() const = 0;
  // Plants `plants` matches; order is a random permutation of the positions to use.
  virtual void plant(Rng& rng, int64_t plants, const std::vector<int64_t>& order,
                     int64_t* tokens, const std::vector<int64_t*>& aux) const = 0;
  // Exact labels (0/1) of all positions.
  virtual void labels(const int64_t* tokens, const std::vector<int64_t*>& aux,
                      int64_t* out) const = 0;

  MatchConfig c_;
  TaskShape shape_;

 private:
  int64_t token_dim_;
};

// Brute-force reference for tests: label_i = 1 iff some tuple (j_1..j_k) ∈ [N]^k with
// allowed(i, j) has x_i + Σ x_j ≡ 0 (mod M). Enumerates all N^k tuples.
void match_reference_labels(const int64_t* tokens, int64_t N, int64_t M, int64_t k,
                            const std::function<bool(int64_t, const int64_t*)>& allowed,
                            int64_t* labels);
// A sample's inputs to a brute-force reference: its tokens, N, the M in use (the batch's
// modulus constant) and task.distinct; labels() writes the 0/1 labels into targets y.
struct MatchReferenceInputs {
  const int64_t* tokens;
  int64_t N, M;
  bool distinct;
  std::vector<int64_t> labels;  // N, filled by the caller's reference
  void write(double* y) const;
};
MatchReferenceInputs match_reference_inputs(const Params& params, const Batch& batch, int64_t row);

// Whether i, j_1..j_k are pairwise different.
bool match_all_distinct(int64_t i, const int64_t* j, int64_t k);

}  // namespace attn
