// The Match variants (Sanford et al. 2023, spec §2.2-2.3), one .cpp each. Every variant has
// the common parameters of match_common.h; label_i = 1 iff a witness tuple exists:
//   match2           ∃ j: x_i + x_j ≡ 0 (mod M)
//   match3           ∃ j1, j2: x_i + x_j1 + x_j2 ≡ 0
//   match3_local     match3 with |j1 - i| <= w and |j2 - i| <= w          (param w)
//   match3_adjacent  ∃ j: x_i + x_j + x_{j+1} ≡ 0   (j = 0..N-2)
//   match3_pointer   match3 with j1, j2 ∈ S_i, a uniform s-subset of [N] \ {i} carried by
//                    token i (param s; raw "pointers" (n, N, s); X gains multi-hot(S_i))
//   match_s          ∃ j_1..j_{s-1}: x_i + Σ x_j ≡ 0                        (param s >= 2)
// With distinct = true, witnesses differ from i and from each other. match2 and match3 also
// have auto_modulus (match_common.h): the rule by which M = 0 is resolved.
// Each variant also has a brute-force reference (all tuples enumerated) used by tests, and
// its registry form NAME_batch_reference (TaskReference: tokens from the raw arrays, M from
// the batch's modulus constant, the variant's parameters from params).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/params.h"
#include "tasks/task.h"

namespace attn {

std::vector<ParamSpec> match2_schema();
std::unique_ptr<Task> match2_make(const Params& params);
void match2_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y);
void match2_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct, int64_t* labels);

// Under uniform tokens (sampling = uniform): the probability that a position is positive
// (exact for odd M) and the modulus auto_modulus = uniform_half picks for M = 0.
double match2_uniform_positive_rate(int64_t N, int64_t M, bool distinct);
int64_t match2_half_positive_modulus(int64_t N, bool distinct);

std::vector<ParamSpec> match3_schema();
std::unique_ptr<Task> match3_make(const Params& params);
void match3_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y);
void match3_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct, int64_t* labels);
// The same for match3: the rate is the Poisson approximation 1 − exp(−pairs/M).
double match3_uniform_positive_rate(int64_t N, int64_t M, bool distinct);
int64_t match3_half_positive_modulus(int64_t N, bool distinct);

std::vector<ParamSpec> match3_local_schema();
std::unique_ptr<Task> match3_local_make(const Params& params);
void match3_local_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y);
void match3_local_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct, int64_t w,
                            int64_t* labels);

std::vector<ParamSpec> match3_adjacent_schema();
std::unique_ptr<Task> match3_adjacent_make(const Params& params);
void match3_adjacent_batch_reference(const Params& params, const Batch& batch, int64_t row,
                                     double* y);
void match3_adjacent_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct,
                               int64_t* labels);

std::vector<ParamSpec> match3_pointer_schema();
std::unique_ptr<Task> match3_pointer_make(const Params& params);
void match3_pointer_batch_reference(const Params& params, const Batch& batch, int64_t row,
                                    double* y);
void match3_pointer_reference(const int64_t* tokens, const int64_t* pointers, int64_t N,
                              int64_t M, bool distinct, int64_t s, int64_t* labels);

std::vector<ParamSpec> match_s_schema();
std::unique_ptr<Task> match_s_make(const Params& params);
void match_s_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y);
void match_s_reference(const int64_t* tokens, int64_t N, int64_t M, bool distinct, int64_t s,
                       int64_t* labels);

}  // namespace attn
