// Gradient-check rows for every gradient-trained model: the rows of each model's entry in
// the table of gradient-trained models (models/neural_kinds.h), in table order. The parameters
// of a small network are the probed input; the data x is fixed.
// Shapes: B = 2 sequences of T = 4 tokens, d_in = 3, d_out = 2 (or T_out = 1); a row may ask for
// one-hot tokens of another width instead (NeuralGradcheckSpec::one_hot_d_in).
#include <algorithm>

#include "models/gradcheck_table.h"
#include "models/neural_kinds.h"

namespace attn {
namespace {

GradcheckProblem model_problem(const NeuralKindInfo& kind, const NeuralGradcheckSpec& spec,
                               uint64_t seed) {
  TaskShape shape;
  shape.T = 4;
  shape.d_in = spec.one_hot_d_in > 0 ? spec.one_hot_d_in : 3;
  shape.T_out = spec.T_out;
  shape.d_out = spec.d_out;
  const int64_t B = 2;
  Params params("model", kind.schema());
  for (const auto& [k, v] : spec.set) params.set_text(k, v);
  auto net = std::shared_ptr<Net<double>>(kind.nets.make_double(params, shape));
  net->init(seed);
  GradcheckProblem p;
  p.inputs.push_back(gradcheck_uniform("x", {B, shape.T, shape.d_in}, seed, -1, 1));
  p.inputs[0].differentiable = false;
  if (spec.one_hot_d_in > 0) {  // keep one entry a token, at a column drawn from its values
    std::vector<double>& x = p.inputs[0].data;
    for (int64_t r = 0; r < B * shape.T; ++r) {
      double* row = x.data() + r * shape.d_in;
      const auto hot = static_cast<int64_t>((row[0] + 1) / 2 * static_cast<double>(shape.d_in));
      for (int64_t k = 0; k < shape.d_in; ++k)
        if (k != std::min(hot, shape.d_in - 1)) row[k] = 0;
    }
  }
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
  for (const NeuralKindInfo& kind : neural_kinds())
    for (const NeuralGradcheckSpec& spec : kind.gradcheck) {
      GradcheckRow row;
      row.name = std::string("model/") + kind.name + (spec.suffix.empty() ? "" : "/" + spec.suffix);
      row.group = "model";
      row.make = [&kind, spec](uint64_t seed) { return model_problem(kind, spec, seed); };
      table.push_back(row);
    }
}

}  // namespace attn
