// Embedding lookup: row r of the output is row index[r] of the table.
//
// Shapes: table (vocab, dim), index (rows) with 0 <= index[r] < vocab (checked: UserError),
// out (rows, dim). Backward accumulates dtable[index[r]] += dout[r].
#pragma once

#include <cstdint>

namespace attn {

template <class T>
void embedding_forward(T* out, const int64_t* index, const T* table, int64_t rows, int64_t vocab,
                       int64_t dim);
template <class T>
void embedding_backward(T* dtable, const T* dout, const int64_t* index, int64_t rows,
                        int64_t dim);

}  // namespace attn
