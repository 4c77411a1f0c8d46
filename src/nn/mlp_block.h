// MlpBlock: a stack of linear layers with an activation between them, applied to every
// row — the token maps φ and ψ, the transformer's MLP, the `mlp` model, the LSTM's head.
//
// dims = [in, h_1, …, out]: layer l maps dims[l] → dims[l+1]; the activation follows every
// layer but the last. dims = [in] alone is the identity (no parameters).
// Parameters (in the ParamSet, names "<prefix>.w<l>" (dims[l], dims[l+1]) and
// "<prefix>.b<l>" (dims[l+1])), PyTorch's default init: U(−1/√fan_in, 1/√fan_in).
// Shapes: inp (rows, in), out (rows, out). forward() keeps its input pointer and the
// layers' activations for backward(): inp must stay valid until then.
// A first-layer input that is mostly zeros (the one- and multi-hot tokens of qsa and the like,
// at most sparse_rows_max_density(in) non-zero) is multiplied by its non-zeros only, in the forward
// and in the weight gradient (ops/sparse_rows.h); the dense GEMM otherwise. The two paths round
// differently; each gives the same bits at every thread count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/choice.h"
#include "nn/param_set.h"
#include "ops/activation.h"
#include "ops/sparse_rows.h"

namespace attn {

// A token map (the models' φ and ψ keys): "identity" (no layer; dims [in]), "linear" (one
// layer; [in, out]) or "mlp" (one hidden layer of `width`; [in, width, out]).
enum class TokenMap { identity, linear, mlp };
inline constexpr Choice<TokenMap> kTokenMaps[] = {
    {TokenMap::identity, "identity"}, {TokenMap::linear, "linear"}, {TokenMap::mlp, "mlp"}};
std::vector<int64_t> token_map_dims(TokenMap map, int64_t in, int64_t width, int64_t out);

template <class T>
class MlpBlock {
 public:
  void declare(ParamSet<T>& ps, const std::string& prefix, std::vector<int64_t> dims,
               Activation act);
  // Draws the weights from streams "<stream>.<prefix>.w<l>" of `seed`.
  void init(ParamSet<T>& ps, uint64_t seed, const std::string& stream) const;
  void forward(ParamSet<T>& ps, const T* inp, int64_t rows, T* out);
  // forward() with the first linear layer's output (rows, dims[1], before any activation)
  // computed by the caller (e.g. nn/state_concat_linear.h) into first_output(rows), the
  // block's own buffer (the next layer reads it there; a one-layer block copies it to out).
  // Needs layers() >= 1, and first_output(rows) called before each forward_after_first. The
  // backward() that follows leaves the first layer's weight gradient to the caller (from
  // first_layer_dout()) and takes no dinp; every other gradient, the first bias's included,
  // is accumulated as usual.
  T* first_output(int64_t rows);
  void forward_after_first(ParamSet<T>& ps, int64_t rows, T* out);
  // Accumulates parameter gradients, and dinp (rows, in) += ∂L/∂inp unless dinp is null.
  void backward(ParamSet<T>& ps, const T* dout, T* dinp);
  // After backward(): ∂L/∂(first linear layer's output) (rows, dims[1]). With the first layer's
  // weight it gives any linear function of ∂L/∂inp, e.g. sums over rows of some input columns,
  // without forming ∂L/∂inp. Needs layers() >= 1. With one layer this is backward()'s dout
  // itself (valid while the caller keeps it); otherwise internal scratch, valid until the next
  // backward().
  const T* first_layer_dout() const { return first_dout_; }
  int weight_id(int l) const { return w_[l]; }
  int bias_id(int l) const { return b_[l]; }
  // Whether the last forward()'s first layer ran on its input's non-zeros (see the top).
  bool first_layer_sparse() const { return inp_is_sparse_; }

  int64_t in_dim() const { return dims_.front(); }
  int64_t out_dim() const { return dims_.back(); }
  int layers() const { return static_cast<int>(dims_.size()) - 1; }
  const std::vector<int64_t>& dims() const { return dims_; }

 private:
  std::vector<int64_t> dims_{1};
  Activation act_ = Activation::relu;
  std::vector<int> w_, b_;
  const T* inp_ = nullptr;
  int64_t rows_ = 0;
  // Per hidden layer: pre-activation (not kept for a relu, applied in place), activation output.
  std::vector<std::vector<T>> pre_, post_;
  std::vector<T> grad_a_, grad_b_, grad_tmp_;  // scratch for backward
  const T* first_dout_ = nullptr;
  SparseRows<T> inp_sparse_;   // the input's non-zeros when the first layer took the sparse path
  bool inp_is_sparse_ = false;  // whether it did, for the last forward()
  bool first_external_ = false;  // whether the last forward was forward_after_first()
  bool first_handed_out_ = false;  // first_output() called since the last forward_after_first()
  // Where forward_after_first finds layer 0's output: post_[0] for a hidden relu (applied in
  // place), else pre_[0] (which a one-layer block, writing its output to out, has free).
  std::vector<T>& first_output_buffer() {
    return layers() > 1 && act_ == Activation::relu ? post_[0] : pre_[0];
  }
  void forward_layers(ParamSet<T>& ps, const T* inp, bool first_done, int64_t rows, T* out);
};

// Draws U(−bound, bound) into count values (bound = 1/√fan_in for a layer), from the
// stream `stream` of `seed`.
template <class T>
void param_init_uniform(T* out, int64_t count, double bound, uint64_t seed,
                        const std::string& stream);

}  // namespace attn
