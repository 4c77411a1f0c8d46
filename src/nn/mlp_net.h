// MlpNet: the fully connected comparator (spec sanford2023 §1.5): the T token encodings
// concatenated, hidden layers of the given widths, all T_out·d_out outputs at once.
//
// x (B, T·d_in) → hidden widths w_1 … w_k (activation after each) → y (B, T_out·d_out).
// Size measure: the first hidden layer's width (what Thm 10's rank argument constrains),
// plus the parameter count. Parameter tensors: mlp.w<l>, mlp.b<l>.
#pragma once

#include <string>
#include <vector>

#include "nn/mlp_block.h"
#include "nn/net.h"

namespace attn {

struct MlpNetConfig {
  std::vector<int64_t> hidden{256, 256};
  Activation activation = Activation::relu;
  int64_t T = 1, d_in = 1, T_out = 1, d_out = 1;
  std::string name = "mlp";
};

template <class T>
class MlpNet : public Net<T> {
 public:
  explicit MlpNet(const MlpNetConfig& config);
  void forward(const T* x, int64_t B, T* y) override { mlp_.forward(this->params_, x, B, y); }
  void backward(const T* dy) override {
    mlp_.backward(this->params_, dy, static_cast<T*>(nullptr));
  }
  void init(uint64_t seed) override { mlp_.init(this->params_, seed, c_.name + ".init"); }
  std::vector<std::pair<std::string, double>> sizes() const override;

 private:
  MlpNetConfig c_;
  MlpBlock<T> mlp_;
};

}  // namespace attn
