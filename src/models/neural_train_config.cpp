// The [train] schema of the gradient-trained models and its readers (see neural_train_config.h).
#include "models/neural_train_config.h"

#include "core/error.h"
#include "train/trainer.h"

namespace attn {

std::vector<ParamSpec> neural_train_schema() {
  const TrainerConfig c;  // the defaults of the loop's settings
  return {
      param_int("steps", c.steps, "optimiser steps (see epochs)", 1, 1e12),
      param_int("epochs", 0, "if > 0: steps = epochs · ceil(n_fit / batch) (fixed training sets)",
                0, 1e9),
      param_int("batch", c.batch, "samples per step", 1, 1 << 24),
      param_choice("optimizer", choice_name(c.optimizer.kind, kOptimizerKinds),
                   choice_names(kOptimizerKinds), "optimiser (PyTorch's definitions)"),
      param_real("lr", c.lr, "learning rate", 0, 1e6),
      param_real_list(
          "lrs", {},
          "train once per learning rate and keep the best on validation (empty: lr alone)", 0, 1e6),
      param_real("beta1", c.optimizer.beta1, "Adam β₁", 0, 1),
      param_real("beta2", c.optimizer.beta2, "Adam β₂", 0, 1),
      param_real("eps", c.optimizer.eps, "Adam ε", 0, 1),
      param_real("weight_decay", c.optimizer.weight_decay,
                 "L2 penalty (adam, sgd) or decoupled decay (adamw)", 0, 1e6),
      param_real("momentum", c.optimizer.momentum, "SGD momentum", 0, 1),
      param_choice("schedule", choice_name(c.schedule.kind, kLrScheduleKinds),
                   choice_names(kLrScheduleKinds),
                   "learning-rate schedule after the warm-up: constant, cosine or linear decay "
                   "to min_lr_factor at the last step (src/train/lr_schedule.h)"),
      param_int("warmup_steps", c.schedule.warmup, "linear warm-up steps", 0, 1e12),
      param_real("min_lr_factor", c.schedule.min_factor,
                 "final lr / lr of the cosine and linear schedules", 0, 1),
      param_real("clip_norm", c.clip_norm, "cap on the global gradient norm (0: no clipping)", 0,
                 1e12),
      param_int("eval_every", c.eval_every, "steps between validation evaluations", 1, 1e12),
      param_int("patience", c.patience,
                "stopping rule: stop after this many evaluations in a row without an improvement "
                "of at least min_delta (0: off)",
                0, 1e12),
      // Added after results were stored: out of run ids at its default.
      param_id_omit_default(param_real(
          "min_delta", c.min_delta,
          "stopping rule: the validation-loss decrease an evaluation must reach to count as an "
          "improvement (needs patience)",
          0, 1e12)),
      param_bool("restore_best", c.restore_best,
                 "end with the parameters of the best validation loss"),
      param_real("val_fraction", 0.1, "fixed training sets (n > 0): the last fraction is held out",
                 0, 0.9),
      param_int("val_n", 1024, "fresh samples (n = 0): validation samples 0 .. val_n-1", 1, 1e9),
      param_choice("loss", "auto", {"auto", "mse", "bce", "cross_entropy"},
                   "training loss; auto = the task's target kind (real: mse, binary: bce with "
                   "logits, categorical: cross_entropy); data no task declared: bce when every "
                   "target is 0 or 1, else mse"),
      param_choice("dtype", choice_name(NetDtype::float32, kNetDtypes), choice_names(kNetDtypes),
                   "arithmetic of the network"),
      param_int("eval_batch", c.eval_batch, "samples per forward pass when evaluating", 1, 1 << 24),
  };
}

void neural_train_check(const Params& train) {
  if (train.has("n") && train.get_int("n") > 0 && train.get_real("val_fraction") == 0)
    throw UserError("train.val_fraction = 0 leaves a fixed training set (train.n > 0) no "
                    "validation samples, which gradient training needs (eval_every, restore_best, "
                    "lrs); set train.val_fraction > 0, e.g. 0.1");
  const double min_delta = train.get_real("min_delta");
  if (min_delta > 0 && train.get_int("patience") == 0)
    throw UserError("train.min_delta = " + param_value_text(ParamValue(min_delta)) +
                    " has no effect without train.patience (the number of evaluations in a row "
                    "without such an improvement after which training stops); set train.patience "
                    "or remove train.min_delta");
}

TrainerConfig trainer_config_from_params(const Params& p) {
  TrainerConfig c;
  c.optimizer.kind = choice_parse(p.get_string("optimizer"), kOptimizerKinds, "train.optimizer");
  c.optimizer.beta1 = p.get_real("beta1");
  c.optimizer.beta2 = p.get_real("beta2");
  c.optimizer.eps = p.get_real("eps");
  c.optimizer.weight_decay = p.get_real("weight_decay");
  c.optimizer.momentum = p.get_real("momentum");
  c.schedule.kind = choice_parse(p.get_string("schedule"), kLrScheduleKinds, "train.schedule");
  c.schedule.warmup = p.get_int("warmup_steps");
  c.schedule.min_factor = p.get_real("min_lr_factor");
  c.lr = p.get_real("lr");
  c.steps = p.get_int("steps");
  c.batch = p.get_int("batch");
  c.clip_norm = p.get_real("clip_norm");
  c.eval_every = p.get_int("eval_every");
  c.patience = p.get_int("patience");
  c.min_delta = p.get_real("min_delta");
  c.restore_best = p.get_bool("restore_best");
  c.eval_batch = p.get_int("eval_batch");
  return c;
}

NetDtype net_dtype_from_params(const Params& train) {
  return choice_parse(train.get_string("dtype"), kNetDtypes, "train.dtype");
}

}  // namespace attn
