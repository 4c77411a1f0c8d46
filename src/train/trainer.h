// The gradient-training loop for neural networks (nn/net.h): minibatches, loss, backward,
// gradient clipping, an optimiser step under a learning-rate schedule, evaluation on a
// held-out set every `eval_every` steps, early stopping, and keeping the best parameters.
//
// Shapes: a source fills x (batch, x_size) and y (batch, y_size) for each step; the
// validation set holds n rows of the same sizes. Losses are means over the loss's terms of
// the batch (ops/loss.h: every batch·y_size output for mse and bce, every labelled position for
// cross_entropy, whose grouping is loss_classes logits per position). Learning curves go to the
// FitLog as series "train_loss" (mean over the steps since the last evaluation) and "val_loss". A
// loss that is NaN or infinite stops the run with a UserError naming the step (the run is then
// recorded as failed). Training steps run the net in training mode (Net::set_training(true)),
// validation and trainer_loss in evaluation mode (e.g. model.bits quantises only there unless
// model.bits_in_training).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "model_api/model.h"
#include "nn/net.h"
#include "ops/loss.h"
#include "train/lr_schedule.h"
#include "train/optimizer.h"

namespace attn {

struct TrainerConfig {
  OptimizerConfig optimizer;
  LrSchedule schedule;
  double lr = 1e-3;
  int64_t steps = 2000, batch = 256;
  double clip_norm = 0;  // 0: no clipping; else the global gradient norm is capped
  int64_t eval_every = 200;
  // Stopping rule: stop after `patience` evaluations in a row without an improvement of at
  // least min_delta over the reference (the validation loss at the last improvement that
  // counted; 0: never stop early). The best parameters still follow the lowest loss seen.
  int64_t patience = 0;
  double min_delta = 0;
  bool restore_best = true;  // end with the parameters of the best validation loss
  Loss loss = Loss::mse;
  int64_t eval_batch = 1024;
  int64_t loss_classes = 0;  // cross_entropy: logits per output position (the task's d_out)
};

// The loss of a config with its grouping.
inline LossSpec trainer_loss_spec(const TrainerConfig& c) { return {c.loss, c.loss_classes}; }

template <class T>
struct TrainSet {
  int64_t n = 0, x_size = 0, y_size = 0;
  std::vector<T> X, Y;
};

// Fills x (batch, x_size), y (batch, y_size) with the samples of step `step` (1-based).
template <class T>
using BatchSource = std::function<void(int64_t step, int64_t batch, T* x, T* y)>;

struct TrainReport {
  int64_t steps_run = 0, best_step = 0;  // steps_run: the step training stopped at
  double best_val_loss = 0, last_train_loss = 0;
  bool stopped_early = false;
};

// Thrown by trainer_run when the training or validation loss becomes NaN or ±inf (a UserError: the
// run is recorded as failed with this message). A learning-rate selection (train.lrs) drops the
// rate.
class TrainingDiverged : public UserError {
 public:
  explicit TrainingDiverged(const std::string& message) : UserError(message) {}
};

// Builds another network of the same architecture (its parameters are overwritten).
template <class T>
using NetFactory = std::function<std::unique_ptr<Net<T>>()>;

// Each step's batch is split into trainer_chunks(batch, parameters) contiguous chunks, a number
// fixed by the batch size and the network's parameter count (never the thread count); chunk c
// runs forward and backward on its own (one network per compute thread: net itself and, with
// more than one thread and a factory, replicas), its loss and gradients are weighted by its
// share of the batch, and the chunks' losses and gradients are summed in chunk order. Results
// are therefore bit-identical for any thread count (core/threads.h); without a factory the
// chunks run one after another on net.
template <class T>
TrainReport trainer_run(Net<T>& net, const TrainerConfig& config, const BatchSource<T>& source,
                        const TrainSet<T>& val, FitLog& log,
                        const NetFactory<T>& make_replica = {});

// The number of chunks a step's batch is split into: batch / 32, at least 1, at most 8 (so up
// to 8 compute threads share a step); one chunk for a network of kTrainerOneChunkParams
// parameters or more, whose per-chunk gradient buffers (zeroed and summed per chunk: three
// passes over the parameters) and per-chunk weight repacking in the GEMMs cost more than a
// split gains (docs/performance.md#one-chunk-for-large-networks: an MLP of width 1024 trains
// 1.6–2.0× faster a step in one chunk, width 256 1.1–1.4×; an attention unit of 22 k
// parameters 1.1–1.5× slower). Chunk c holds the rows [batch·c/C, batch·(c+1)/C).
constexpr int64_t kTrainerOneChunkParams = int64_t{1} << 17;
int64_t trainer_chunks(int64_t batch, int64_t params);

// Mean loss of the network on a whole set (no gradients), in chunks of eval_batch: the
// chunks' losses weighted by loss_weight (ops/loss.h), so it is the mean over the set's terms.
template <class T>
double trainer_loss(Net<T>& net, const LossSpec& loss, const TrainSet<T>& data, int64_t eval_batch);

}  // namespace attn
