// The one body of a run (see run_body.h): blocks of training data, fit, test metrics and
// probes on rank 0, train metrics gathered on rank 0.
#include "experiment/run_body.h"

#include <chrono>
#include <ctime>
#include <memory>

#include "analysis/probes.h"
#include "core/error.h"
#include "core/float_env.h"
#include "experiment/eval_length.h"
#include "models/ridge_model.h"
#include "tasks/task.h"
#include "train/metrics.h"

namespace attn {
namespace {

using Metrics = std::vector<std::pair<std::string, double>>;

// The train metrics of a fit over several ranks: each rank predicts its block [lo, hi) of
// `train`; predictions and labels meet on rank 0, which computes them (others: {}).
Metrics train_metrics_gathered(const Comm& comm, const Model& model, const Batch& train,
                               int64_t lo, int64_t hi, int64_t n_train) {
  const int64_t K = train.shape.y_size();
  std::vector<double> pred;
  comm_phase(comm, [&] { pred = model.predict(train); });
  Batch all;
  if (comm.is_root()) {
    all.n = n_train;
    all.shape = train.shape;
    all.constants = train.constants;
    all.Y.resize(static_cast<size_t>(n_train * K));
  }
  std::vector<double> all_pred(comm.is_root() ? static_cast<size_t>(n_train * K) : 0);
  comm.gather(pred.data(), (hi - lo) * K, all_pred.data());
  comm.gather(train.Y.data(), (hi - lo) * K, all.Y.data());
  Metrics metrics;
  comm_phase(comm, [&] {
    if (comm.is_root()) metrics = metrics_compute(all, all_pred);
  });
  return metrics;
}

}  // namespace

double run_clock(const RunShare& share) {
  if (share.batches) {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void run_body(const RunPoint& p, const RunSite& site, RunOutcome& out) {
  ATTN_ASSERT(site.comm != nullptr, "run_body needs a communicator");
  const SubnormalsFlushed flush;  // fit and tests alike (core/float_env.h)
  const Comm& comm = *site.comm;
  ATTN_ASSERT(site.joint || comm.size() == 1, "only a joint fit runs on several ranks");
  const RunConfig& c = p.config;
  const int64_t n_train = c.train_params.get_int("n");
  const int64_t n_test = c.eval_params.get_int("n");
  const int64_t first_test = c.eval_params.get_int("first");

  // Data and model: rank r's block of the training samples.
  std::unique_ptr<Task> task;
  std::unique_ptr<Model> model;
  RidgeModel* ridge = nullptr;
  Batch train;
  int64_t lo = 0, hi = 0;
  comm_phase(comm, [&] {
    ATTN_ASSERT(first_test >= n_train, "config_resolve lets no test set overlap the training set");
    task = task_make(c.task, c.task_params);
    comm_block(n_train, comm.rank(), comm.size(), &lo, &hi);
    // n_train = 0: the model draws fresh samples itself (ModelContext::task).
    train.shape = task->shape();
    if (n_train > 0) train = task_generate(*task, p.seed, lo, hi - lo);
    const ModelInfo& info = model_find(c.model);
    ATTN_CHECK(n_train > 0 || info.fresh_samples,
               "model " + c.model + " needs a training set: train.n = 0 (fresh samples) is only "
               "for gradient-trained models");
    model = info.make(ModelContext{c.model_params, c.train_params, task->shape(), p.seed,
                                   task.get(), first_test, site.share.batches, site.share.party});
    if (!site.joint) return;
    ridge = dynamic_cast<RidgeModel*>(model.get());
    ATTN_CHECK(ridge != nullptr,
               "train.distributed = true: model " + c.model + " here is not one ridge fit (e.g. "
               "brfa with several model.mean_scales chooses between fits); set "
               "train.distributed = false");
  });

  FitLog log;
  const double fit_start = run_clock(site.share);
  if (site.joint)
    ridge->solver().fit_distributed(train, lo, n_train, comm, log);
  else
    comm_phase(comm, [&] { model->fit(train, log); });
  const double fit_seconds = run_clock(site.share) - fit_start;

  // Test metrics, evaluate and probes: rank 0 only.
  comm_phase(comm, [&] {
    if (!comm.is_root()) return;
    const Params test_params = eval_task_params(c);  // eval.instances, eval.N
    const auto test_task = task_make(c.task, test_params);
    const Batch test = task_generate(*test_task, p.seed, first_test, n_test);
    // At another length (eval.N): the trained model's copy at the test shapes.
    const std::unique_ptr<Model> at_length =
        eval_length_model(*model, c, task->shape(), test.shape, p.seed);
    const Model& tested = at_length ? *at_length : *model;
    run_outcome_add_test(test, tested.predict(test), out);
    tested.evaluate(test, log);  // right after predict(test): models may reuse its work
    for (ProbeKind probe : c.probes)
      probe_run(probe, ProbeInput{tested, c.model, c.model_params, test_params, test}, log);
  });

  // Train metrics (none without a training set), then the fit's scalars and series.
  Metrics train_metrics;
  if (comm.size() > 1)
    train_metrics = train_metrics_gathered(comm, *model, train, lo, hi, n_train);
  else if (n_train > 0)
    comm_phase(comm, [&] { train_metrics = metrics_compute(train, model->predict(train)); });
  comm_phase(comm, [&] {
    if (comm.is_root()) run_outcome_add_fit(train_metrics, log, fit_seconds, out);
  });
}

}  // namespace attn
