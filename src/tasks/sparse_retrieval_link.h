// The links g of q-sparse token retrieval (tasks/sparse_retrieval.h): g maps the q retrieved
// tokens z_{t_1}, …, z_{t_q} ∈ R^d, in pointer order, to R^d.
//   mean      (1/q) Σ_j z_{t_j}: qsa's target (summed in pointer order, then times 1/q)
//   product   coordinate-wise Π_j z_{t_j}
//   max       coordinate-wise max_j z_{t_j}
//   relu_net  W2 relu(W1 u), u = [z_{t_1}; …; z_{t_q}] ∈ R^{q·d}: a fixed random two-layer ReLU
//             network, W1 (width × q·d) entries N(0, 1/q), W2 (d × width) entries
//             N(0, 2/width), drawn once per dataset seed (stream sparse_retrieval.link, index 0):
//             a dataset constant, like rf_target's β. For unit-norm tokens the pre-activations
//             have unit variance and the outputs mean square about 1 (over the weights' draw;
//             for one draw each output coordinate has its own non-zero mean).
// Only mean is additive; product, max and relu_net are not (order matters for relu_net only).
#pragma once

#include <cstdint>
#include <vector>

#include "core/choice.h"

namespace attn {

enum class RetrievalLink { mean, product, max, relu_net };
inline constexpr Choice<RetrievalLink> kRetrievalLinks[] = {{RetrievalLink::mean, "mean"},
                                                            {RetrievalLink::product, "product"},
                                                            {RetrievalLink::max, "max"},
                                                            {RetrievalLink::relu_net, "relu_net"}};

// A link with its constants (w1, w2 empty unless relu_net).
struct RetrievalLinkFn {
  RetrievalLink link = RetrievalLink::mean;
  int64_t q = 0, d = 0, width = 0;
  std::vector<double> w1;  // width × (q·d), row-major
  std::vector<double> w2;  // d × width, row-major
};

// The link of dataset `seed` (relu_net: its weights drawn from the seed).
RetrievalLinkFn retrieval_link_make(RetrievalLink link, int64_t q, int64_t d, int64_t width,
                                    uint64_t seed);

// y (d values) = g(z_{p_1}, …, z_{p_q}) with z N' × d and pointers p (q values). scratch is
// resized as needed (relu_net's u and hidden units).
void retrieval_link_apply(const RetrievalLinkFn& g, const double* z, const int64_t* pointers,
                          double* y, std::vector<double>& scratch);

}  // namespace attn
