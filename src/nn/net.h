// Net: a trainable network on token sequences, in float or double (train.dtype; gradient
// checks use double), built from the ops in src/ops/.
//
// Shapes: x (B, T, d_in) → y (B, T_out, d_out), as the task's Batch lays them out.
// forward() keeps what backward() needs for that batch (x must stay valid until then);
// backward(dy) accumulates ∂L/∂θ into params().grads() for the dy (B, T_out, d_out) of the
// same batch. A net starts in evaluation mode; the trainer switches it to training mode
// (set_training) around its forward/backward steps, so that a net may run its training
// forward differently (e.g. finite precision only in evaluation, nn/head_precision.h).
// Networks are built from the model's resolved [model] parameters and the task's shapes
// (neural_net_make, models/neural_models.h) and initialised from named streams of the run
// seed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nn/param_set.h"

namespace attn {

// Attention probabilities of the last forward, for `attnlab predict` and the experiments.
struct AttentionMap {
  std::string name;            // e.g. "layer0"
  std::vector<int64_t> shape;  // (B, H, N, N)
  std::vector<double> data;
};

template <class T>
class Net {
 public:
  virtual ~Net() = default;
  virtual void forward(const T* x, int64_t B, T* y) = 0;
  virtual void backward(const T* dy) = 0;
  // Draws the initial parameters from streams "<config name>.init.<tensor>" of `seed` (the
  // config's name: "attention", "mlp", ...).
  virtual void init(uint64_t seed) = 0;
  // Attention probabilities of the last forward (none for MLPs and LSTMs).
  virtual std::vector<AttentionMap> attention_maps() const { return {}; }
  // Size measures the experiments compare (e.g. "m", "heads", "first_layer_width",
  // "state_size"), reported as metrics; parameter count is added by the caller.
  virtual std::vector<std::pair<std::string, double>> sizes() const { return {}; }

  // Training mode (the trainer's steps) vs evaluation mode (the default: validation,
  // predict, attention maps).
  void set_training(bool on) { training_ = on; }
  bool training() const { return training_; }

  ParamSet<T>& params() { return params_; }
  const ParamSet<T>& params() const { return params_; }

 protected:
  ParamSet<T> params_;
  bool training_ = false;
};

}  // namespace attn
