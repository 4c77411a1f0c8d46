// sparse_retrieval: q-sparse token retrieval (Mousavi-Hosseini, Sanford, Wu, Erdogdu, NeurIPS
// 2025, "When do transformers outperform feedforward and recurrent networks? A statistical
// perspective"; docs/sep2025.md says which details are the paper's and which are ours).
//
// N tokens z_0 … z_{N−1} ∈ R^d (task.z_dist: unit sphere, unit ball or N(0, I)); pointers t_i,
// an ordered q-tuple of distinct positions (a uniform q-subset in uniform random order;
// task.pointers = sorted keeps it sorted, as qsa). The link g (sparse_retrieval_link.h) applied
// to the q retrieved tokens in pointer order gives the target.
//   variant seq2seq (the paper's model): every position i carries its own pointers t_i and
//     y_i = g(z_{t_i1}, …, z_{t_iq}); with link mean and sphere/ball tokens this is qsa (the
//     same z and sets as qsa's streams draw: pointers = sorted, encoding = indices gives qsa's
//     samples exactly).
//   variant single (our reading of the paper's simplified model): one pointer tuple t for the
//     whole sequence, carried by a pointer token before the data tokens; one output y = g(z_t).
// Token layout [z (d) | pointer fields | own position]:
//   one_hot  pointer fields q one-hot blocks of N (block j: t_j), position one-hot of N
//            d_in = d + (q+1)·N (widths change with N: no evaluation at another length)
//   indices  pointer fields t_1 … t_q, position i (0-based)       d_in = d + q + 1
// seq2seq: X n × N × d_in (row i: [z_i, t_i, i]), Y n × N × d. single: X n × (N+1) × d_in,
// row 0 the pointer token [0, t, no position], row j+1 the data token [z_j, no pointers, j]
// ("no" = zeros in one_hot, −1 in indices); Y n × 1 × d, read at token 0.
// Raw: z (N, d) float64; seq2seq sets (N, q) int64 (the named array: the ordered t_i);
// single pointers (q,) int64. Constants (relu_net): link_w1 (width, q·d), link_w2 (d, width).
// Streams: qsa.z, qsa.sets (seq2seq z on sphere/ball and the sets, exactly as qsa),
// sparse_retrieval.order (the order of each tuple), sparse_retrieval.z (gaussian z; single's
// z), sparse_retrieval.pointers (single), sparse_retrieval.link (relu_net's weights).
#pragma once

#include <memory>
#include <vector>

#include "core/params.h"
#include "tasks/task.h"

namespace attn {

std::vector<ParamSpec> sparse_retrieval_schema();
std::unique_ptr<Task> sparse_retrieval_make(const Params& params);

// The registry's reference (TaskReference): the pointers and tokens decoded from the sample's
// X, the link computed from its definition (relu_net with the batch's link_w1, link_w2).
void sparse_retrieval_batch_reference(const Params& params, const Batch& batch, int64_t row,
                                      double* y);

}  // namespace attn
