// MlpNet (see mlp_net.h).
#include "nn/mlp_net.h"

#include "core/error.h"

namespace attn {

template <class T>
MlpNet<T>::MlpNet(const MlpNetConfig& config) : c_(config) {
  ATTN_CHECK(!c_.hidden.empty(), "model." + c_.name + ".hidden: give at least one hidden width");
  std::vector<int64_t> dims{c_.T * c_.d_in};
  for (int64_t w : c_.hidden) {
    ATTN_CHECK(w >= 1, "model." + c_.name + ".hidden: widths must be >= 1");
    dims.push_back(w);
  }
  dims.push_back(c_.T_out * c_.d_out);
  mlp_.declare(this->params_, "mlp", dims, c_.activation);
  this->params_.allocate();
}

template <class T>
std::vector<std::pair<std::string, double>> MlpNet<T>::sizes() const {
  return {{"first_layer_width", double(c_.hidden.front())},
          {"depth", double(c_.hidden.size() + 1)}};
}

template class MlpNet<float>;
template class MlpNet<double>;

}  // namespace attn
