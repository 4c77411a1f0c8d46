// MlpBlock (see mlp_block.h).
#include "nn/mlp_block.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/rng.h"
#include "ops/linear.h"
#include "ops/linear_relu_backward.h"
#include "ops/sparse_rows.h"

namespace attn {

std::vector<int64_t> token_map_dims(TokenMap map, int64_t in, int64_t width, int64_t out) {
  if (map == TokenMap::identity) return {in};
  if (map == TokenMap::linear) return {in, out};
  return {in, width, out};
}

template <class T>
void param_init_uniform(T* out, int64_t count, double bound, uint64_t seed,
                        const std::string& stream) {
  Rng rng(seed, stream, 0);
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(bound * (2 * rng.uniform() - 1));
}

template <class T>
void MlpBlock<T>::declare(ParamSet<T>& ps, const std::string& prefix, std::vector<int64_t> dims,
                          Activation act) {
  ATTN_ASSERT(!dims.empty(), "MlpBlock needs at least its input dimension");
  dims_ = std::move(dims);
  act_ = act;
  w_.clear();
  b_.clear();
  for (int l = 0; l < layers(); ++l) {
    w_.push_back(ps.add(prefix + ".w" + std::to_string(l), {dims_[l], dims_[l + 1]}));
    b_.push_back(ps.add(prefix + ".b" + std::to_string(l), {dims_[l + 1]}));
  }
}

template <class T>
void MlpBlock<T>::init(ParamSet<T>& ps, uint64_t seed, const std::string& stream) const {
  for (int l = 0; l < layers(); ++l) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(dims_[l]));
    param_init_uniform(ps.value(w_[l]), ps.entry(w_[l]).size, bound, seed,
                       stream + "." + ps.entry(w_[l]).name);
    param_init_uniform(ps.value(b_[l]), ps.entry(b_[l]).size, bound, seed,
                       stream + "." + ps.entry(b_[l]).name);
  }
}

template <class T>
void MlpBlock<T>::forward(ParamSet<T>& ps, const T* inp, int64_t rows, T* out) {
  first_external_ = false;
  if (layers() == 0) {
    inp_ = inp;
    rows_ = rows;
    std::memcpy(out, inp, sizeof(T) * rows * dims_[0]);
    return;
  }
  inp_is_sparse_ = sparse_rows_build(inp_sparse_, inp, rows, dims_[0]);
  forward_layers(ps, inp, false, rows, out);
}

template <class T>
T* MlpBlock<T>::first_output(int64_t rows) {
  ATTN_ASSERT(layers() >= 1, "first_output needs a first layer");
  pre_.resize(layers());
  post_.resize(layers());
  std::vector<T>& buf = first_output_buffer();
  buf.resize(static_cast<size_t>(rows * dims_[1]));
  first_handed_out_ = true;
  return buf.data();
}

template <class T>
void MlpBlock<T>::forward_after_first(ParamSet<T>& ps, int64_t rows, T* out) {
  const std::vector<T>& buf = first_output_buffer();
  ATTN_ASSERT(first_handed_out_ && static_cast<int64_t>(buf.size()) == rows * dims_[1],
              "forward_after_first: first_output(rows) was not filled for these rows");
  first_handed_out_ = false;
  first_external_ = true;
  inp_is_sparse_ = false;
  forward_layers(ps, nullptr, true, rows, out);
}

// Layer by layer from inp, or from layer 0's output already in its buffer (first_done).
template <class T>
void MlpBlock<T>::forward_layers(ParamSet<T>& ps, const T* inp, bool first_done, int64_t rows,
                                 T* out) {
  inp_ = inp;
  rows_ = rows;
  pre_.resize(layers());
  post_.resize(layers());
  const T* a = inp;
  for (int l = 0; l < layers(); ++l) {
    const bool last = l + 1 == layers();
    const int64_t n_out = rows * dims_[l + 1];
    // A relu is applied in place: its backward needs only its output (> 0 where its input is).
    const bool in_place = !last && act_ == Activation::relu;
    std::vector<T>& z_buf = in_place ? post_[l] : pre_[l];
    T* z = last ? out : (z_buf.resize(n_out), z_buf.data());
    if (l == 0 && first_done) {
      if (last && n_out > 0) std::memcpy(out, pre_[0].data(), sizeof(T) * n_out);
    } else if (l == 0 && inp_is_sparse_) {
      sparse_rows_times(z, dims_[1], inp_sparse_, ps.value(w_[0]), dims_[1], SparseRowSet{},
                        ps.value(b_[0]));  // z = b + x · w on x's non-zeros
    } else {
      linear_forward(z, a, ps.value(w_[l]), ps.value(b_[l]), rows, dims_[l], dims_[l + 1]);
    }
    if (last) break;
    if (!in_place) post_[l].resize(n_out);
    activation_forward(post_[l].data(), z, n_out, act_);
    a = post_[l].data();
  }
}

template <class T>
void MlpBlock<T>::backward(ParamSet<T>& ps, const T* dout, T* dinp) {
  if (layers() == 0) {
    if (dinp)
      for (int64_t i = 0; i < rows_ * dims_[0]; ++i) dinp[i] += dout[i];
    return;
  }
  first_dout_ = dout;
  if (rows_ == 0) return;  // no rows: nothing to add (and no activations to read)
  // g: gradient w.r.t. layer l's output (its pre-activation for hidden layers).
  const T* g = dout;
  bool bias_done = false;  // whether layer l's bias gradient was summed with its input gradient
  for (int l = layers() - 1; l > 0; --l) {
    linear_backward<T>(nullptr, ps.grad(w_[l]), bias_done ? nullptr : ps.grad(b_[l]), g,
                       post_[l - 1].data(), ps.value(w_[l]), rows_, dims_[l], dims_[l + 1]);
    const size_t n_in = static_cast<size_t>(rows_ * dims_[l]);
    // g's next value goes to the scratch g is not in (a block of three or more layers reads
    // one while it writes the other).
    std::vector<T>& next = g == grad_a_.data() ? grad_b_ : grad_a_;
    if (act_ == Activation::relu) {
      // Through layer l and the relu before it in one pass, with layer l − 1's bias gradient.
      next.resize(n_in);
      linear_backward_input_relu(next.data(), ps.grad(b_[l - 1]), g, ps.value(w_[l]),
                                 post_[l - 1].data(), rows_, dims_[l], dims_[l + 1]);
      bias_done = true;
    } else {
      // Layer l's input gradient, set (not added: no zeroing pass) into grad_tmp_, then
      // through layer l − 1's activation added into `next`, zeroed.
      grad_tmp_.resize(n_in);
      linear_backward_input_set(grad_tmp_.data(), g, ps.value(w_[l]), rows_, dims_[l],
                                dims_[l + 1]);
      next.assign(n_in, T(0));
      activation_backward(next.data(), grad_tmp_.data(), pre_[l - 1].data(),
                          post_[l - 1].data(), n_in, act_);
      bias_done = false;
    }
    g = next.data();
  }
  ATTN_ASSERT(!(first_external_ && dinp), "the caller computed the first layer: no dinp here");
  linear_backward(dinp, inp_is_sparse_ || first_external_ ? nullptr : ps.grad(w_[0]),
                  bias_done ? nullptr : ps.grad(b_[0]), g, inp_, ps.value(w_[0]), rows_,
                  dims_[0], dims_[1]);
  if (inp_is_sparse_) sparse_rows_t_times(ps.grad(w_[0]), inp_sparse_, g, dims_[1], dims_[1]);
  first_dout_ = g;
}

template class MlpBlock<float>;
template class MlpBlock<double>;
template void param_init_uniform<float>(float*, int64_t, double, uint64_t, const std::string&);
template void param_init_uniform<double>(double*, int64_t, double, uint64_t, const std::string&);

}  // namespace attn
