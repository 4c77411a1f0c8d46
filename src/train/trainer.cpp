// The gradient-training loop (see trainer.h).
#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/threads.h"

namespace attn {

template <class T>
double trainer_loss(Net<T>& net, Loss loss, const TrainSet<T>& data, int64_t eval_batch) {
  std::vector<T> pred;
  double total = 0;
  for (int64_t first = 0; first < data.n; first += eval_batch) {
    const int64_t b = std::min(eval_batch, data.n - first);
    pred.resize(b * data.y_size);
    net.forward(data.X.data() + first * data.x_size, b, pred.data());
    total += loss_forward(loss, pred.data(), data.Y.data() + first * data.y_size, b * data.y_size) *
             static_cast<double>(b);
  }
  return total / static_cast<double>(data.n);
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

// Forward + backward of one step's batch; returns the mean loss. Accumulates ∂L/∂θ into
// net's gradients (zeroed first). With replicas, chunk t of the batch runs on replica t.
template <class T>
double step_gradients(Net<T>& net, std::vector<std::unique_ptr<Net<T>>>& replicas, Loss loss,
                      int64_t batch, int64_t x_size, int64_t y_size, const T* x, const T* y,
                      T* pred, T* dpred) {
  ParamSet<T>& ps = net.params();
  ps.zero_grad();
  const int64_t count = batch * y_size;
  std::fill(dpred, dpred + count, T(0));
  if (replicas.empty()) {
    const TrainingMode<T> mode(net);
    net.forward(x, batch, pred);
    const double value = loss_forward(loss, pred, y, count);
    loss_backward(loss, dpred, pred, y, count, T(1));
    net.backward(dpred);
    return value;
  }
  const int64_t k = static_cast<int64_t>(replicas.size());
  std::vector<double> chunk_loss(k, 0.0);
  parallel_for(0, k, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t r0 = batch * t / k, r1 = batch * (t + 1) / k, rows = r1 - r0;
      if (rows == 0) continue;
      Net<T>& rep = *replicas[t];
      const TrainingMode<T> mode(rep);
      rep.params().values() = ps.values();
      rep.params().zero_grad();
      const int64_t n = rows * y_size;
      rep.forward(x + r0 * x_size, rows, pred + r0 * y_size);
      chunk_loss[t] = loss_forward(loss, pred + r0 * y_size, y + r0 * y_size, n) *
                      static_cast<double>(n) / static_cast<double>(count);
      // The loss is a mean over the whole batch: scale the chunk's mean-gradient by n / count.
      loss_backward(loss, dpred + r0 * y_size, pred + r0 * y_size, y + r0 * y_size, n,
                    static_cast<T>(static_cast<double>(n) / static_cast<double>(count)));
      rep.backward(dpred + r0 * y_size);
    }
  });
  double value = 0;
  for (int64_t t = 0; t < k; ++t) {
    value += chunk_loss[t];
    const std::vector<T>& g = replicas[t]->params().grads();
    std::vector<T>& total = ps.grads();
    for (size_t i = 0; i < total.size(); ++i) total[i] += g[i];
  }
  return value;
}

}  // namespace

template <class T>
TrainReport trainer_run(Net<T>& net, const TrainerConfig& c, const BatchSource<T>& source,
                        const TrainSet<T>& val, FitLog& log, const NetFactory<T>& make_replica) {
  ATTN_CHECK(c.steps >= 1, "train.steps must be at least 1");
  ATTN_CHECK(val.n >= 1, "training needs a validation set of at least one sample");
  ParamSet<T>& ps = net.params();
  Optimizer<T> opt(c.optimizer, ps.size());
  std::vector<T> x(c.batch * val.x_size), y(c.batch * val.y_size), pred(c.batch * val.y_size),
      dpred(c.batch * val.y_size);
  std::vector<T> best = ps.values();
  std::vector<std::unique_ptr<Net<T>>> replicas;
  const int threads = threads_count();
  if (threads > 1 && make_replica && c.batch >= 2 * threads)
    for (int t = 0; t < threads; ++t) replicas.push_back(make_replica());
  TrainReport r;
  r.best_val_loss = std::numeric_limits<double>::infinity();
  int64_t since_best = 0;
  double window_loss = 0;
  int64_t window_steps = 0;
  for (int64_t step = 1; step <= c.steps; ++step) {
    interrupt_poll();  // e.g. Ctrl-C in Python (core/interrupt.h)
    source(step, c.batch, x.data(), y.data());
    const double loss = step_gradients(net, replicas, c.loss, c.batch, val.x_size, val.y_size,
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
    r.last_train_loss = loss;
    if (step % c.eval_every == 0 || step == c.steps) {
      const double val_loss = trainer_loss(net, c.loss, val, c.eval_batch);
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
        since_best = 0;
        if (c.restore_best) best = ps.values();
      } else if (c.patience > 0 && ++since_best >= c.patience) {
        r.stopped_early = true;
        break;
      }
    }
  }
  if (c.restore_best) ps.values() = best;
  return r;
}

template double trainer_loss<float>(Net<float>&, Loss, const TrainSet<float>&, int64_t);
template double trainer_loss<double>(Net<double>&, Loss, const TrainSet<double>&, int64_t);
template TrainReport trainer_run<float>(Net<float>&, const TrainerConfig&, const BatchSource<float>&,
                                        const TrainSet<float>&, FitLog&, const NetFactory<float>&);
template TrainReport trainer_run<double>(Net<double>&, const TrainerConfig&,
                                         const BatchSource<double>&, const TrainSet<double>&,
                                         FitLog&, const NetFactory<double>&);

}  // namespace attn
