// The [train] keys of the gradient-trained models, in one place: their schema (whose defaults
// for the training loop's settings are TrainerConfig{}'s, train/trainer.h), the rules between
// them, and the readers from resolved [train] Params to the loop's TrainerConfig and to the
// network's arithmetic (train.dtype). tests/test_param_defaults.cpp checks that the schema's
// defaults read back as TrainerConfig{} and that the reader reads every key.
//
// Keys the NeuralModel reads itself (epochs, lrs, val_fraction, val_n, loss) have their
// default in the schema alone.
#pragma once

#include <vector>

#include "core/choice.h"
#include "core/params.h"

namespace attn {

struct TrainerConfig;  // train/trainer.h

// train.dtype: the scalar type the network computes in.
enum class NetDtype { float32, float64 };
inline constexpr Choice<NetDtype> kNetDtypes[] = {{NetDtype::float32, "float32"},
                                                  {NetDtype::float64, "float64"}};

std::vector<ParamSpec> neural_train_schema();
// Rules between [train] keys of the gradient loop (e.g. min_delta needs patience): UserError.
void neural_train_check(const Params& train);

// The training loop's settings from resolved [train] Params (loss is left at TrainerConfig{}'s:
// NeuralModel decides it from train.loss and the data).
TrainerConfig trainer_config_from_params(const Params& train);
NetDtype net_dtype_from_params(const Params& train);

}  // namespace attn
