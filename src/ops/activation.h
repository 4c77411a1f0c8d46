// Element-wise activations: identity, relu, gelu (exact, with erf, as PyTorch's default),
// tanh, sigmoid.
//
// Shapes: inp, out, dinp, dout all hold `count` values. Backward accumulates
// dinp += dout · σ'(inp); it may read inp or out (the forward's result), whichever is cheaper.
// relu'(0) is taken as 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

enum class Activation { identity, relu, gelu, tanh, sigmoid };

// "identity", "relu", "gelu", "tanh", "sigmoid"; UserError with a did-you-mean otherwise.
Activation activation_parse(const std::string& name);
const char* activation_name(Activation a);
std::vector<std::string> activation_names();

template <class T>
void activation_forward(T* out, const T* inp, int64_t count, Activation a);
template <class T>
void activation_backward(T* dinp, const T* dout, const T* inp, const T* out, int64_t count,
                         Activation a);

// Scalar references: σ(x) and σ'(x) in double.
double activation_value_ref(double x, Activation a);
double activation_derivative_ref(double x, Activation a);

}  // namespace attn
