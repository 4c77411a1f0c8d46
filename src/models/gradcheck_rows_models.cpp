// Gradient-check rows for every neural model (nn/*_net.h through models/neural_models.h):
// the parameters of a small network are the probed input; the data x is fixed.
// Shapes: B = 2 sequences of T = 4 tokens, d_in = 3, d_out = 2 (or T_out = 1).
#include <cstring>

#include "core/error.h"
#include "models/neural_models.h"
#include "models/gradcheck_table.h"

namespace attn {
namespace {

struct ModelRowSpec {
  std::string row;
  std::string model;
  std::vector<std::pair<std::string, std::string>> set;  // [model] key = value (text)
  int64_t T_out = 4;
};

GradcheckProblem model_problem(const ModelRowSpec& spec, uint64_t seed) {
  TaskShape shape;
  shape.T = 4;
  shape.d_in = 3;
  shape.T_out = spec.T_out;
  shape.d_out = 2;
  const int64_t B = 2;
  Params params = neural_default_params(spec.model);
  for (const auto& [k, v] : spec.set) params.set_text(k, v);
  auto net = std::shared_ptr<Net<double>>(neural_net_make<double>(spec.model, params, shape));
  net->init(seed);
  GradcheckProblem p;
  p.inputs.push_back(gradcheck_uniform("x", {B, shape.T, shape.d_in}, seed, -1, 1));
  p.inputs[0].differentiable = false;
  GradTensor theta{"theta", {net->params().size()}, net->params().values(), true};
  // Scale the initial weights up a little so that every path carries a visible gradient.
  for (double& v : theta.data) v *= 1.5;
  p.inputs.push_back(theta);
  const int64_t y_size = B * shape.T_out * shape.d_out;
  p.forward = [net, B, y_size](const GradInputs& in) {
    net->params().values() = in[1].data;
    std::vector<double> y(y_size);
    net->forward(in[0].data.data(), B, y.data());
    return y;
  };
  p.backward = [net, B, y_size](const GradInputs& in, const std::vector<double>& dout) {
    net->params().values() = in[1].data;
    std::vector<double> y(y_size);
    net->forward(in[0].data.data(), B, y.data());
    net->params().zero_grad();
    net->backward(dout.data());
    return std::vector<std::vector<double>>{{}, net->params().grads()};
  };
  return p;
}

}  // namespace

void gradcheck_rows_models(std::vector<GradcheckRow>& table) {
  const std::vector<ModelRowSpec> specs = {
      {"model/attention", "attention",
       {{"m", "3"}, {"heads", "2"}, {"phi_width", "5"}, {"psi", "mlp"}, {"psi_width", "4"},
        {"activation", "gelu"}}},
      {"model/attention/relu", "attention", {{"m", "3"}, {"phi_width", "5"}}},
      {"model/attention/identity_psi", "attention",
       {{"m", "3"}, {"phi", "linear"}, {"psi", "identity"}, {"residual", "false"},
        {"temperature", "fixed"}, {"exclude_self", "true"}}},
      {"model/attention/token0", "attention",
       {{"m", "3"}, {"heads", "2"}, {"qk_dim", "2"}, {"value_dim", "3"}, {"phi", "linear"}},
       1},
      {"model/third_order", "third_order",
       {{"m", "3"}, {"heads", "2"}, {"phi_width", "5"}, {"activation", "tanh"}}},
      {"model/third_order/exclude_self", "third_order",
       {{"m", "3"}, {"phi", "linear"}, {"exclude_self", "true"}}},
      {"model/transformer", "transformer",
       {{"layers", "2"}, {"m", "4"}, {"heads", "2"}, {"mlp_width", "5"}, {"activation", "gelu"}}},
      {"model/transformer/no_layernorm", "transformer",
       {{"layers", "1"}, {"m", "3"}, {"layernorm", "false"}, {"phi", "mlp"}, {"phi_width", "4"},
        {"psi", "mlp"}, {"psi_width", "4"}, {"activation", "tanh"}, {"temperature", "inv_sqrt_dk"}}},
      {"model/mlp", "mlp", {{"hidden", "[6, 5]"}, {"activation", "tanh"}}},
      {"model/mlp/relu", "mlp", {{"hidden", "[7]"}}},
      {"model/lstm", "lstm", {{"hidden", "3"}}},
      {"model/lstm/three_layers", "lstm", {{"hidden", "3"}, {"layers", "3"}}},
      {"model/lstm/bidirectional", "lstm",
       {{"hidden", "3"}, {"layers", "2"}, {"bidirectional", "true"}, {"head_width", "4"},
        {"activation", "tanh"}}},
      {"model/lstm/per_position", "lstm",
       {{"hidden", "3"}, {"bidirectional", "true"}, {"readout", "per_position"}}},
  };
  for (const auto& spec : specs) {
    GradcheckRow row;
    row.name = spec.row;
    row.group = "model";
    row.make = [spec](uint64_t seed) { return model_problem(spec, seed); };
    table.push_back(row);
  }
}

}  // namespace attn
