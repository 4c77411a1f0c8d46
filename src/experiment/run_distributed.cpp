// A run point over all ranks: block of the training data per rank, joint ridge fit,
// metrics on rank 0.
#include "experiment/run_distributed.h"

#include <sys/resource.h>

#include <chrono>

#include "core/error.h"
#include "mpi/mpi_session.h"
#include "tasks/task.h"
#include "train/metrics.h"
#include "models/ridge_model.h"

namespace attn {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void distributed_body(const RunPoint& p, const Comm& comm, RunOutcome& out) {
  const RunConfig& c = p.config;
  const int64_t n_train = c.train_params.get_int("n");
  const int64_t n_test = c.eval_params.get_int("n");
  const int64_t first_test = c.eval_params.get_int("first");
  std::unique_ptr<Task> task;
  std::unique_ptr<Model> model;
  RidgeModel* ridge = nullptr;
  Batch train;
  int64_t lo = 0, hi = 0;
  comm_phase(comm, [&] {
    ATTN_ASSERT(first_test >= n_train, "config_resolve lets no test set overlap the training set");
    task = task_make(c.task, c.task_params);
    comm_block(n_train, comm.rank(), comm.size(), &lo, &hi);
    train = task_generate(*task, p.seed, lo, hi - lo);
    model = model_find(c.model).make(ModelContext{c.model_params, c.train_params, task->shape(), p.seed});
    ridge = dynamic_cast<RidgeModel*>(model.get());
    ATTN_CHECK(ridge != nullptr,
               "train.distributed = true: model " + c.model + " here is not one ridge fit (e.g. "
               "brfa with several model.mean_scales chooses between fits); set "
               "train.distributed = false");
  });

  FitLog log;
  const auto fit_start = std::chrono::steady_clock::now();
  ridge->solver().fit_distributed(train, lo, n_train, comm, log);
  const double fit_seconds = seconds_since(fit_start);

  // Test metrics and the λ path: rank 0 only.
  comm_phase(comm, [&] {
    if (!comm.is_root()) return;
    const auto test_task = task_make(c.task, eval_task_params(c));  // eval.instances
    const Batch test = task_generate(*test_task, p.seed, first_test, n_test);
    run_outcome_add_test(test, model->predict(test), out);
    model->evaluate(test, log);  // right after predict(test): models may reuse its work
  });

  // Train metrics: every rank predicts its block; predictions and labels meet on rank 0.
  const int64_t K = train.shape.y_size();
  std::vector<double> pred;
  comm_phase(comm, [&] { pred = model->predict(train); });
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
  comm_phase(comm, [&] {
    if (comm.is_root()) run_outcome_add_fit(metrics_compute(all, all_pred), log, fit_seconds, out);
  });
}

}  // namespace

bool run_point_is_distributed(const RunPoint& point) {
  const Params& train = point.config.train_params;
  return train.has("distributed") && train.get_bool("distributed");
}

RunOutcome run_point_execute_distributed(const RunPoint& point, const Comm& comm,
                                         const std::string& setup_error) {
  RunOutcome out;
  out.run_id = point.run_id;
  const auto start = std::chrono::steady_clock::now();
  try {
    comm.agree(setup_error);
    distributed_body(point, comm, out);
    out.ok = true;
  } catch (const UserError& e) {  // every error inside is agreed on, hence a UserError
    out.error = e.what();
  } catch (const std::exception& e) {
    // Thrown outside a comm_phase: this rank is out of step with the others.
    mpi_abort("rank " + std::to_string(comm.rank()) + " failed inside distributed run " +
              point.run_id + ": " + e.what());
  }
  if (!out.ok) {
    out.metrics.clear();
    out.series.clear();
  }
  out.wall_seconds = seconds_since(start);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::vector<double> peaks(static_cast<size_t>(comm.size()));
  const double mine = static_cast<double>(usage.ru_maxrss) * 1024;
  comm.gather(&mine, 1, peaks.data());
  double peak = 0;
  for (double v : peaks) peak = std::max(peak, v);
  out.peak_rss_bytes = static_cast<int64_t>(peak);
  return out;
}

}  // namespace attn
