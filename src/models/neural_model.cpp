// NeuralModel: a Model (model_api/model.h) around a gradient-trained network (nn/net.h):
// builds the network, trains it with train/trainer.h on a fixed training set or on fresh
// samples (train.n = 0), optionally once per learning rate, predicts, saves and loads.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "core/error.h"
#include "core/log.h"
#include "core/rng.h"
#include "models/neural_models.h"
#include "tasks/named_arrays.h"
#include "tasks/shared_batches.h"
#include "tasks/task.h"
#include "train/trainer.h"
#include "train/val_split.h"

namespace attn {
namespace {

template <class T>
void to_scalar(std::vector<T>& out, const std::vector<double>& in, int64_t first, int64_t count) {
  out.resize(count);
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(in[first + i]);
}

template <class T>
TrainSet<T> train_set(const Batch& b, int64_t first, int64_t n) {
  TrainSet<T> s;
  s.n = n;
  s.x_size = b.shape.x_size();
  s.y_size = b.shape.y_size();
  to_scalar(s.X, b.X, first * s.x_size, n * s.x_size);
  to_scalar(s.Y, b.Y, first * s.y_size, n * s.y_size);
  return s;
}

// The tensor that records the loss a model was trained with: "meta.loss.<loss_name>" (a
// scalar 1). Files of the previous release have "meta.loss_bce" instead (1: bce, 0: mse).
constexpr const char* kLossTensorPrefix = "meta.loss.";
constexpr const char* kLegacyLossTensor = "meta.loss_bce";

Loss loss_tensor_read(const ModelTensors& in) {
  const std::string prefix = kLossTensorPrefix;
  for (const ModelTensor& t : in.tensors)
    if (t.name.rfind(prefix, 0) == 0) return loss_parse(t.name.substr(prefix.size()));
  return in.get(kLegacyLossTensor, {})[0] != 0 ? Loss::bce_logits : Loss::mse;
}

// Network outputs z (rows of d_out values) as predictions: mse → z, bce → sigmoid(z),
// cross_entropy → softmax over each row of d_out logits.
void loss_outputs_to_predictions(Loss loss, double* z, int64_t count, int64_t d_out) {
  switch (loss) {
    case Loss::mse: return;
    case Loss::bce_logits:
      for (int64_t i = 0; i < count; ++i) z[i] = 1.0 / (1.0 + std::exp(-z[i]));
      return;
    case Loss::cross_entropy:
      for (int64_t r = 0; r < count / d_out; ++r) {
        double* row = z + r * d_out;
        const double m = *std::max_element(row, row + d_out);
        double sum = 0;
        for (int64_t k = 0; k < d_out; ++k) sum += (row[k] = std::exp(row[k] - m));
        for (int64_t k = 0; k < d_out; ++k) row[k] /= sum;
      }
      return;
  }
  ATTN_ASSERT(false, "loss_outputs_to_predictions: unknown loss");
}

// The network and what fitting decided, for one scalar type.
template <class T>
struct Trained {
  std::unique_ptr<Net<T>> net;
};

class NeuralModel : public Model {
 public:
  NeuralModel(const ModelContext& ctx, std::string name)
      : name_(std::move(name)),
        model_params_(ctx.model),
        train_params_(ctx.train),
        shape_(ctx.shape),
        seed_(ctx.seed),
        task_(ctx.task),
        index_limit_(ctx.index_limit),
        shared_(ctx.shared_batches),
        party_(ctx.shared_party),
        float64_(net_dtype_from_params(ctx.train) == NetDtype::float64) {
    neural_train_check(train_params_);
    // Build once now so that bad settings fail before any data is generated.
    if (float64_) {
      net64_ = neural_net_make<double>(name_, model_params_, shape_);
    } else {
      net32_ = neural_net_make<float>(name_, model_params_, shape_);
    }
    const std::string loss = train_params_.get_string("loss");
    if (loss != "auto") loss_ = loss_parse(loss);
  }

  void fit(const Batch& train, FitLog& log) override {
    if (float64_) {
      fit_typed<double>(train, log, net64_);
    } else {
      fit_typed<float>(train, log, net32_);
    }
  }

  std::vector<double> predict(const Batch& data) const override {
    return float64_ ? predict_typed<double>(data, *net64_) : predict_typed<float>(data, *net32_);
  }

  // Attention diagnostics on the test set (attention models only):
  //   attn_on_target        mean over samples, positions and heads of Σ_{j∈y_i} A_ij (qsa:
  //                         → 1 when attention finds the set, spec §5.2 metric (v))
  //   attn_kl_from_uniform  mean of KL(Unif(y_i) ‖ A_i) (0 when A_i is uniform on y_i)
  //   series attention_sample0: the first test sample's attention matrix (mean over heads;
  //                         third order: the weight on j), entry (i, j) at step i·N + j
  //   series target_sample0: 1 at (i, j) when j ∈ y_i for that sample (sets tasks), else 0
  void evaluate(const Batch& test, FitLog& log) const override {
    const auto maps = attention(test);
    if (maps.empty() || test.n == 0) return;
    const ModelTensor& a = maps[0];
    const int64_t H = a.shape[1], N = a.shape[2];
    if (N <= 64)
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double v = 0;
          for (int64_t h = 0; h < H; ++h) v += a.data[(h * N + i) * N + j];
          log.point("attention_sample0", i * N + j, v / static_cast<double>(H));
        }
    const RawArray* sets = named_array_find(test, NamedArray::sets);  // (n, T, q)
    if (!sets || sets->spec.sample_shape[0] != N) return;
    const int64_t q = sets->spec.sample_shape[1];
    auto sample_sets = [&](int64_t b) { return sets->i64.data() + b * N * q; };
    if (N <= 64) {  // series target_sample0: 1 where j ∈ y_i of the first test sample, else 0
      const int64_t* y = sample_sets(0);
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < N; ++j)
          log.point("target_sample0", i * N + j,
                    std::count(y + i * q, y + (i + 1) * q, j) > 0 ? 1.0 : 0.0);
    }
    long double on = 0, kl = 0;
    for (int64_t b = 0; b < test.n; ++b) {
      const int64_t* y = sample_sets(b);
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < N; ++i) {
          const double* row = a.data.data() + ((b * H + h) * N + i) * N;
          for (int64_t t = 0; t < q; ++t) {
            const double p = row[y[i * q + t]];
            on += p;
            kl += std::log((1.0 / static_cast<double>(q)) / std::max(p, 1e-300)) /
                  static_cast<double>(q);
          }
        }
    }
    const double count = static_cast<double>(test.n * H * N);
    log.scalar("attn_on_target", static_cast<double>(on / count));
    log.scalar("attn_kl_from_uniform", static_cast<double>(kl / count));
  }

  std::vector<ModelTensor> attention(const Batch& data) const override {
    return float64_ ? attention_typed<double>(data, *net64_)
                    : attention_typed<float>(data, *net32_);
  }

  void save(ModelTensors& out) const override {
    if (float64_) {
      save_typed<double>(out, *net64_);
    } else {
      save_typed<float>(out, *net32_);
    }
    out.add(std::string(kLossTensorPrefix) + loss_name(loss_.value_or(Loss::mse)), {}, {1.0});
  }

  void load(const ModelTensors& in) override {
    if (float64_) {
      load_typed<double>(in, *net64_);
    } else {
      load_typed<float>(in, *net32_);
    }
    loss_ = loss_tensor_read(in);
  }

 private:
  template <class T>
  void fit_typed(const Batch& train, FitLog& log, std::unique_ptr<Net<T>>& best_net) {
    TrainerConfig c = trainer_config_from_params(train_params_);
    const int64_t n = train_params_.get_int("n");
    const int64_t x_size = shape_.x_size(), y_size = shape_.y_size();
    TrainSet<T> val, fit_set;
    BatchSource<T> source;
    // Sampling state of the current learning rate's run (reset per run).
    std::vector<int64_t> order;
    int64_t position = 0, epoch = 0;
    Batch fresh;
    if (n == 0) {
      ATTN_CHECK(task_ != nullptr, "model " + name_ + ": train.n = 0 (fresh samples every step) "
                                   "needs the task; use `attnlab run`");
      const int64_t val_n = train_params_.get_int("val_n");
      ATTN_CHECK(val_n + c.steps * c.batch <= index_limit_,
                 "train.steps · train.batch + train.val_n = " +
                     std::to_string(val_n + c.steps * c.batch) +
                     " fresh samples would overlap the test set at eval.first = " +
                     std::to_string(index_limit_) + "; raise eval.first");
      val = train_set<T>(task_generate(*task_, seed_, 0, val_n), 0, val_n);
      if (!shared_) fresh = batch_alloc(shape_, c.batch);
      source = [&, val_n](int64_t step, int64_t batch, T* x, T* y) {
        const int64_t first = val_n + (step - 1) * batch;
        const Batch* drawn = &fresh;
        if (shared_) {
          // A lockstep group's batch, drawn once for all its runs (tasks/shared_batches.h).
          drawn = &shared_->next(party_, *task_, seed_, first, batch);
        } else {
          // sample_range writes into zeroed rows (one-hot encodings set only their ones).
          std::fill(fresh.X.begin(), fresh.X.end(), 0.0);
          std::fill(fresh.Y.begin(), fresh.Y.end(), 0.0);
          task_->sample_range(seed_, first, batch, fresh, 0);
        }
        for (int64_t i = 0; i < batch * x_size; ++i) x[i] = static_cast<T>(drawn->X[i]);
        for (int64_t i = 0; i < batch * y_size; ++i) y[i] = static_cast<T>(drawn->Y[i]);
      };
    } else {
      const double frac = train_params_.get_real("val_fraction");
      const int64_t n_val = val_split_count(frac, n);
      ATTN_CHECK(n_val >= 1, "model " + name_ + ": train.val_fraction = 0 leaves no validation "
                             "samples, which training needs (eval_every, restore_best, lrs); set "
                             "train.val_fraction > 0, e.g. 0.1");
      ATTN_CHECK(n - n_val >= 1, "model " + name_ + ": train.n = " + std::to_string(n) +
                                     " leaves no training samples after the validation split "
                                     "(train.val_fraction); use a larger train.n");
      const int64_t n_fit = n - n_val;
      fit_set = train_set<T>(train, 0, n_fit);
      val = train_set<T>(train, n_fit, n_val);
      c.batch = std::min(c.batch, n_fit);
      const int64_t epochs = train_params_.get_int("epochs");
      if (epochs > 0) c.steps = epochs * ((n_fit + c.batch - 1) / c.batch);
      source = [&, n_fit](int64_t /*step*/, int64_t batch, T* x, T* y) {
        for (int64_t r = 0; r < batch; ++r) {
          if (position == static_cast<int64_t>(order.size())) {
            // A new epoch: a fresh permutation from stream "<model>.shuffle", epoch index.
            order.resize(n_fit);
            for (int64_t i = 0; i < n_fit; ++i) order[i] = i;
            Rng rng(seed_, name_ + ".shuffle", static_cast<uint64_t>(epoch++));
            for (int64_t i = n_fit - 1; i > 0; --i)
              std::swap(order[i], order[rng.uniform_int(static_cast<uint64_t>(i + 1))]);
            position = 0;
          }
          const int64_t s = order[position++];
          std::copy_n(fit_set.X.data() + s * x_size, x_size, x + r * x_size);
          std::copy_n(fit_set.Y.data() + s * y_size, y_size, y + r * y_size);
        }
      };
    }
    if (!loss_) {
      // train.loss = auto: the task's target kind; data no task declared (arrays, files):
      // binary when the training targets are all 0 or 1, else real (tasks/target_kind.h).
      std::vector<double> targets;
      if (!shape_.target)
        targets = n > 0 ? train.Y : std::vector<double>(val.Y.begin(), val.Y.end());
      loss_ = loss_of_target(target_kind_of(shape_.target, targets));
    }
    c.loss = *loss_;
    if (c.loss == Loss::cross_entropy) {
      ATTN_CHECK(shape_.d_out >= 2, "model " + name_ + ": train.loss = cross_entropy needs at "
                                    "least 2 classes (d_out logits per position), but d_out = " +
                                        std::to_string(shape_.d_out) +
                                        "; use train.loss = bce for one 0/1 label per position");
      c.loss_classes = shape_.d_out;
    }

    std::vector<double> lrs = train_params_.get_real_list("lrs");
    if (lrs.empty()) lrs.push_back(c.lr);
    double best_loss = std::numeric_limits<double>::infinity();
    FitLog best_log;
    TrainReport best_report;
    int diverged = 0;
    std::string last_divergence;
    std::unique_ptr<Net<T>>
        chosen;  // the best rate's network (best_net keeps the old one until then)
    for (size_t k = 0; k < lrs.size(); ++k) {
      const double lr = lrs[k];
      c.lr = lr;
      order.clear();
      position = 0;
      epoch = 0;
      auto net = neural_net_make<T>(name_, model_params_, shape_);
      net->init(seed_);
      FitLog run_log;
      const NetFactory<T> replica = [this] {
        auto r = neural_net_make<T>(name_, model_params_, shape_);
        r->init(seed_);  // fixed position codes (nn/positions.h); parameters are synced
        return r;
      };
      TrainReport r;
      try {
        r = trainer_run<T>(*net, c, source, val, run_log, replica);
      } catch (const TrainingDiverged& e) {
        // One rate of a selection diverging drops that rate; if every rate does, the run fails.
        if (lrs.size() == 1) throw;
        ++diverged;
        last_divergence = e.what();
        log_warn("attnlab: %s: train.lrs: lr = %g dropped (%s)\n", name_.c_str(), lr,
                     e.what());
        continue;
      }
      if (lrs.size() > 1) log.point("val_loss_by_lr", static_cast<int64_t>(k), r.best_val_loss);
      if (r.best_val_loss < best_loss || !chosen) {
        best_loss = r.best_val_loss;
        chosen = std::move(net);
        best_log = std::move(run_log);
        best_report = r;
        chosen_lr_ = lr;
      }
    }
    if (!chosen)
      throw TrainingDiverged("every learning rate of train.lrs diverged (the last: " +
                             last_divergence + ")");
    best_net = std::move(chosen);
    if (lrs.size() > 1) log.scalar("lrs_diverged", diverged);
    for (auto& p : best_log.points) log.points.push_back(p);
    log.scalar("params", static_cast<double>(best_net->params().size()));
    // n_params: every model's trainable parameter count under one name (selection's budget).
    log.scalar("n_params", static_cast<double>(best_net->params().size()));
    for (const auto& [k, v] : best_net->sizes()) log.scalar(k, v);
    log.scalar("lr_chosen", chosen_lr_);
    log.scalar("val_loss", best_report.best_val_loss);
    log.scalar("best_step", static_cast<double>(best_report.best_step));
    log.scalar("steps_run", static_cast<double>(best_report.steps_run));
    log.scalar("stopped_early", best_report.stopped_early ? 1.0 : 0.0);
    // The name stays: loss_is_bce (1 bce, 0 otherwise) is a column of every published results.csv.
    log.scalar("loss_is_bce", c.loss == Loss::bce_logits ? 1.0 : 0.0);
    // A fit log holds numbers only: a loss other than mse and bce says itself with its own
    // loss_is_<name> = 1 (a saved model records the name as meta.loss.<name>).
    switch (c.loss) {
      case Loss::mse:
      case Loss::bce_logits: break;
      case Loss::cross_entropy: log.scalar(std::string("loss_is_") + loss_name(c.loss), 1.0); break;
    }
  }

  template <class T>
  std::vector<double> predict_typed(const Batch& data, const Net<T>& net_const) const {
    ATTN_CHECK(data.shape.x_size() == shape_.x_size() && data.shape.y_size() == shape_.y_size(),
               "model " + name_ + ": the data's shapes differ from the ones it was built for");
    auto& net = const_cast<Net<T>&>(net_const);  // forward() fills caches, not parameters
    const int64_t x_size = shape_.x_size(), y_size = shape_.y_size();
    const int64_t chunk = train_params_.get_int("eval_batch");
    std::vector<double> out(static_cast<size_t>(data.n * y_size));
    std::vector<T> x, y;
    for (int64_t first = 0; first < data.n; first += chunk) {
      const int64_t b = std::min(chunk, data.n - first);
      to_scalar(x, data.X, first * x_size, b * x_size);
      y.resize(b * y_size);
      net.forward(x.data(), b, y.data());
      for (int64_t i = 0; i < b * y_size; ++i) out[first * y_size + i] = static_cast<double>(y[i]);
    }
    // Trained on a cross-entropy: probabilities (sigmoid, or softmax per position).
    loss_outputs_to_predictions(loss_.value_or(Loss::mse), out.data(),
                                static_cast<int64_t>(out.size()), shape_.d_out);
    return out;
  }

  // Forward in chunks, concatenating each layer's maps along the sample axis.
  template <class T>
  std::vector<ModelTensor> attention_typed(const Batch& data, const Net<T>& net_const) const {
    auto& net = const_cast<Net<T>&>(net_const);
    const int64_t x_size = shape_.x_size(), y_size = shape_.y_size();
    const int64_t chunk = train_params_.get_int("eval_batch");
    std::vector<ModelTensor> out;
    std::vector<T> x, y;
    for (int64_t first = 0; first < data.n; first += chunk) {
      const int64_t b = std::min(chunk, data.n - first);
      to_scalar(x, data.X, first * x_size, b * x_size);
      y.resize(b * y_size);
      net.forward(x.data(), b, y.data());
      const auto maps = net.attention_maps();
      if (out.empty())
        for (const auto& m : maps) {
          std::vector<int64_t> shape = m.shape;
          shape[0] = data.n;
          out.push_back({m.name, shape, {}});
        }
      for (size_t k = 0; k < maps.size(); ++k)
        out[k].data.insert(out[k].data.end(), maps[k].data.begin(), maps[k].data.end());
    }
    return out;
  }

  template <class T>
  void save_typed(ModelTensors& out, const Net<T>& net) const {
    const auto& ps = net.params();
    for (size_t id = 0; id < ps.entries().size(); ++id) {
      const ParamEntry& e = ps.entry(static_cast<int>(id));
      const T* v = ps.value(static_cast<int>(id));
      out.add(e.name, e.shape, std::vector<double>(v, v + e.size));
    }
  }

  template <class T>
  void load_typed(const ModelTensors& in, Net<T>& net) {
    net.init(seed_);  // fixed position codes (nn/positions.h); parameters are read below
    auto& ps = net.params();
    for (size_t id = 0; id < ps.entries().size(); ++id) {
      const ParamEntry& e = ps.entry(static_cast<int>(id));
      const auto& data = in.get(e.name, e.shape);
      T* v = ps.value(static_cast<int>(id));
      for (int64_t i = 0; i < e.size; ++i) v[i] = static_cast<T>(data[i]);
    }
  }

  std::string name_;
  Params model_params_, train_params_;
  TaskShape shape_;
  uint64_t seed_;
  const Task* task_;
  int64_t index_limit_;
  SharedFreshBatches* shared_;  // a lockstep group's batches, or null
  int party_;
  bool float64_;
  std::unique_ptr<Net<float>> net32_;
  std::unique_ptr<Net<double>> net64_;
  std::optional<Loss> loss_;
  double chosen_lr_ = 0;
};

}  // namespace

std::unique_ptr<Model> neural_model_make(NeuralKind kind, const ModelContext& c) {
  return std::make_unique<NeuralModel>(c, neural_kind_info(kind).name);
}

}  // namespace attn
