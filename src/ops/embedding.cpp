// Embedding lookup: out[r] = table[index[r]]; backward dtable[index[r]] += dout[r].
//
// Shapes: table (vocab, dim), index (rows), out / dout (rows, dim). An index outside
// [0, vocab) is a UserError naming the row and the value (checked before anything is
// written). Backward has no vocab argument, so it checks only index >= 0; indices that
// passed the forward are in range.
#include "ops/embedding.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace attn {
namespace {

void embedding_check_index(int64_t r, int64_t value, int64_t vocab) {
  ATTN_CHECK(value >= 0 && value < vocab,
             "embedding: index " + std::to_string(value) + " at row " + std::to_string(r) +
                 " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
}

}  // namespace

template <class T>
void embedding_forward(T* out, const int64_t* index, const T* table, int64_t rows, int64_t vocab,
                       int64_t dim) {
  ATTN_CHECK(rows >= 0 && vocab >= 1 && dim >= 0,
             "embedding: need rows >= 0, vocab >= 1, dim >= 0 (rows " + std::to_string(rows) +
                 ", vocab " + std::to_string(vocab) + ", dim " + std::to_string(dim) + ")");
  for (int64_t r = 0; r < rows; ++r) embedding_check_index(r, index[r], vocab);
  for (int64_t r = 0; r < rows; ++r) {
    const T* src = table + index[r] * dim;
    std::copy(src, src + dim, out + r * dim);
  }
}

template <class T>
void embedding_backward(T* dtable, const T* dout, const int64_t* index, int64_t rows,
                        int64_t dim) {
  ATTN_CHECK(rows >= 0 && dim >= 0, "embedding: need rows >= 0 and dim >= 0 (rows " +
                                        std::to_string(rows) + ", dim " + std::to_string(dim) +
                                        ")");
  for (int64_t r = 0; r < rows; ++r) {
    ATTN_CHECK(index[r] >= 0, "embedding: negative index " + std::to_string(index[r]) +
                                  " at row " + std::to_string(r));
  }
  for (int64_t r = 0; r < rows; ++r) {
    T* dst = dtable + index[r] * dim;
    const T* g = dout + r * dim;
    for (int64_t k = 0; k < dim; ++k) dst[k] += g[k];
  }
}

template void embedding_forward<float>(float*, const int64_t*, const float*, int64_t, int64_t,
                                       int64_t);
template void embedding_forward<double>(double*, const int64_t*, const double*, int64_t, int64_t,
                                        int64_t);
template void embedding_backward<float>(float*, const float*, const int64_t*, int64_t, int64_t);
template void embedding_backward<double>(double*, const double*, const int64_t*, int64_t,
                                         int64_t);

}  // namespace attn
