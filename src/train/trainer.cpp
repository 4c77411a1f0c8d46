// The gradient-training loop (see trainer.h).
#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/float_env.h"
#include "core/interrupt.h"
#include "core/step_meter.h"
#include "core/threads.h"

namespace attn {

int64_t trainer_chunks(int64_t batch, int64_t params) {
  if (params >= kTrainerOneChunkParams) return 1;
  return std::clamp<int64_t>(batch / 32, 1, 8);
}

template <class T>
double trainer_loss(Net<T>& net, const LossSpec& loss, const TrainSet<T>& data,
                    int64_t eval_batch) {
  std::vector<T> pred;
  double total = 0, weight = 0;
  for (int64_t first = 0; first < data.n; first += eval_batch) {
    const int64_t b = std::min(eval_batch, data.n - first);
    const T* y = data.Y.data() + first * data.y_size;
    // mse, bce: the weight is b (rows); cross_entropy: the chunk's labelled positions.
    const double w = loss_weight(loss, y, b, data.y_size);
    weight += w;
    if (w == 0) continue;  // every position of the chunk ignored: nothing to add
    pred.resize(b * data.y_size);
    net.forward(data.X.data() + first * data.x_size, b, pred.data());
    total += loss_forward(loss, pred.data(), y, b * data.y_size) * w;
  }
  ATTN_CHECK(weight > 0,
             "the validation set has no labelled position (every target row is "
             "ignored); use more validation samples (train.val_n or train.val_fraction)");
  return total / weight;
}

namespace {

// Training-mode forward passes (Net::set_training) for the guard's lifetime; evaluation
// mode (validation, predict) otherwise.
template <class T>
struct TrainingMode {
  explicit TrainingMode(Net<T>& n) : net(n) { net.set_training(true); }
  ~TrainingMode() { net.set_training(false); }
  TrainingMode(const TrainingMode&) = delete;
  TrainingMode& operator=(const TrainingMode&) = delete;
  Net<T>& net;
};

// Forward + backward of one step's batch in trainer_chunks(batch, parameters) chunks; returns
// the mean loss and leaves ∂L/∂θ in net's gradients. Chunk c runs on the network of the
// worker that takes it (worker 0: net, worker w: replicas[w − 1]); its gradients go into
// `total` in chunk order (total = g₀, then total += g₁, ...), which is then swapped into net's.
template <class T>
double step_gradients(Net<T>& net, std::vector<std::unique_ptr<Net<T>>>& replicas,
                      std::vector<T>& total, const LossSpec& loss, int64_t batch, int64_t x_size,
                      int64_t y_size, const T* x, const T* y, T* pred, T* dpred) {
  ParamSet<T>& ps = net.params();
  const int64_t count = batch * y_size, chunks = trainer_chunks(batch, ps.size());
  // The loss is a mean over the batch's terms: chunk c's mean and gradient count
  // weight(c) / weight(batch) (for mse and bce rows / batch, i.e. m / count).
  const double batch_weight = loss_weight(loss, y, batch, y_size);
  ATTN_CHECK(batch_weight > 0, "a training batch has no labelled position (every target row is "
                               "ignored); raise train.batch");
  std::fill(dpred, dpred + count, T(0));
  const int workers = std::min(parallel_workers(chunks), static_cast<int>(replicas.size()) + 1);
  std::vector<double> chunk_loss(chunks, 0.0);
  std::vector<char> synced(workers, 0);  // replica w holds this step's parameters
  auto worker_net = [&](int w) -> Net<T>& { return w == 0 ? net : *replicas[w - 1]; };
  auto work = [&](int w, int64_t c) {
    Net<T>& n = worker_net(w);
    if (w > 0 && !synced[w]) {
      n.params().values() = ps.values();
      synced[w] = 1;
    }
    const TrainingMode<T> mode(n);
    n.params().zero_grad();
    const int64_t r0 = batch * c / chunks, r1 = batch * (c + 1) / chunks, rows = r1 - r0;
    const int64_t m = rows * y_size;
    const double share = loss_weight(loss, y + r0 * y_size, rows, y_size) / batch_weight;
    n.forward(x + r0 * x_size, rows, pred + r0 * y_size);
    if (share > 0) {  // else every position of the chunk is ignored: no loss, zero gradient
      chunk_loss[c] = loss_forward(loss, pred + r0 * y_size, y + r0 * y_size, m) * share;
      loss_backward(loss, dpred + r0 * y_size, pred + r0 * y_size, y + r0 * y_size, m,
                    static_cast<T>(share));
    }
    n.backward(dpred + r0 * y_size);
  };
  auto reduce = [&](int w, int64_t c) {
    if (chunks == 1) return;  // the one chunk ran on net (worker 0): its gradients are in place
    const std::vector<T>& g = worker_net(w).params().grads();
    if (c == 0) {
      total = g;
    } else {
      for (size_t i = 0; i < total.size(); ++i) total[i] += g[i];
    }
  };
  parallel_ordered(chunks, workers, work, reduce);
  if (chunks > 1) std::swap(total, ps.grads());
  double value = 0;
  for (int64_t c = 0; c < chunks; ++c) value += chunk_loss[c];
  return value;
}

}  // namespace

template <class T>
TrainReport trainer_run(Net<T>& net, const TrainerConfig& c, const BatchSource<T>& source,
                        const TrainSet<T>& val, FitLog& log, const NetFactory<T>& make_replica) {
  ATTN_CHECK(c.steps >= 1, "train.steps must be at least 1");
  ATTN_CHECK(val.n >= 1, "training needs a validation set of at least one sample");
  const SubnormalsFlushed flush;  // trained softmax rows make subnormals (core/float_env.h)
  ParamSet<T>& ps = net.params();
  Optimizer<T> opt(c.optimizer, ps.size());
  std::vector<T> x(c.batch * val.x_size), y(c.batch * val.y_size), pred(c.batch * val.y_size),
      dpred(c.batch * val.y_size);
  std::vector<T> best = ps.values();
  std::vector<std::unique_ptr<Net<T>>> replicas;
  if (make_replica)
    for (int w = 1; w < parallel_workers(trainer_chunks(c.batch, ps.size())); ++w)
      replicas.push_back(make_replica());
  std::vector<T> total;  // the chunks' gradient sum (step_gradients)
  TrainReport r;
  r.best_val_loss = std::numeric_limits<double>::infinity();
  double reference =
      std::numeric_limits<double>::infinity();  // loss at the last counted improvement
  int64_t since_improvement = 0;
  double window_loss = 0;
  int64_t window_steps = 0;
  for (int64_t step = 1; step <= c.steps; ++step) {
    interrupt_poll();  // e.g. Ctrl-C in Python (core/interrupt.h)
    source(step, c.batch, x.data(), y.data());
    const double loss =
        step_gradients(net, replicas, total, trainer_loss_spec(c), c.batch, val.x_size, val.y_size,
                       x.data(), y.data(), pred.data(), dpred.data());
    if (!std::isfinite(loss)) {
      std::ostringstream msg;
      msg << "training diverged at step " << step << ": the " << loss_name(c.loss) << " loss is "
          << loss << "; lower train.lr (now " << c.lr << ") or set train.clip_norm";
      throw TrainingDiverged(msg.str());
    }
    if (c.clip_norm > 0) {
      double sq = 0;
      for (T g : ps.grads()) sq += static_cast<double>(g) * static_cast<double>(g);
      const double norm = std::sqrt(sq);
      if (norm > c.clip_norm) {
        const T f = static_cast<T>(c.clip_norm / norm);
        for (T& g : ps.grads()) g *= f;
      }
    }
    opt.step(ps.values().data(), ps.grads().data(),
             c.lr * lr_schedule_factor(c.schedule, step, c.steps));
    window_loss += loss;
    ++window_steps;
    r.steps_run = step;
    step_meter_report(step, c.steps);  // e.g. the bar of `attnlab fit` (core/step_meter.h)
    r.last_train_loss = loss;
    if (step % c.eval_every == 0 || step == c.steps) {
      const double val_loss = trainer_loss(net, trainer_loss_spec(c), val, c.eval_batch);
      if (!std::isfinite(val_loss))
        throw TrainingDiverged("training diverged at step " + std::to_string(step) +
                               ": the validation loss is not finite; lower train.lr");
      log.point("train_loss", step, window_loss / static_cast<double>(window_steps));
      log.point("val_loss", step, val_loss);
      window_loss = 0;
      window_steps = 0;
      if (val_loss < r.best_val_loss) {
        r.best_val_loss = val_loss;
        r.best_step = step;
        if (c.restore_best) best = ps.values();
      }
      if (val_loss < reference - c.min_delta) {
        reference = val_loss;
        since_improvement = 0;
      } else if (c.patience > 0 && ++since_improvement >= c.patience) {
        r.stopped_early = true;
        break;
      }
    }
  }
  if (c.restore_best) ps.values() = best;
  return r;
}

template double trainer_loss<float>(Net<float>&, const LossSpec&, const TrainSet<float>&, int64_t);
template double trainer_loss<double>(Net<double>&, const LossSpec&, const TrainSet<double>&,
                                     int64_t);
template TrainReport trainer_run<float>(Net<float>&, const TrainerConfig&,
                                        const BatchSource<float>&, const TrainSet<float>&, FitLog&,
                                        const NetFactory<float>&);
template TrainReport trainer_run<double>(Net<double>&, const TrainerConfig&,
                                         const BatchSource<double>&, const TrainSet<double>&,
                                         FitLog&, const NetFactory<double>&);

}  // namespace attn
