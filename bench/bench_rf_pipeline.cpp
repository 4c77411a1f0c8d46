// The whole random-feature pipeline of one fu2023 run point, timed stage by stage
// (issue #4): rf_target data, the `rfa` model's features and Gram/kernel, the
// eigendecomposition, the λ grid on the validation split, the test predictions and the
// test λ path, the training-set predictions — the work `attnlab run` does for one point
// (src/experiment/run_point.cpp: fit, predict(test), evaluate(test), predict(train)).
// A pure OpenBLAS dgemm of a comparable size, timed in the same process, gives the
// machine's dgemm rate; attnlab's large products are reported against it.
//
// Workload (defaults): n = 8192 training samples (val_fraction 0.2: 6554 fit + 1638
// validation), 10⁴ test samples (eval.first = 10⁹ as in a spec), N = 16 keys, d = 16,
// target pair_power p = 2, M = 1000 heads (P = M·(d+1) = 17,000 features), the `rfa`
// defaults (relu, augment, w_var 1/4) and the ridge defaults (λ ∈ 10⁻⁸…10⁰, solver auto:
// dual when P > n_fit, block 512).
//
// How the stages are seen without touching ridge.cpp: the model is a RidgeSolver over an
// RfaFeatures wrapped in a FeatureMap that times every features() call — exactly what
// rfa_make builds — and this program defines dgemm_, dsyrk_, LAPACKE_dsytrd and LAPACKE_dstedc
// itself (ridge's eigendecomposition: the tridiagonal reduction and the tridiagonal eigenproblem).
// libattnlab.a's calls (Eigen with EIGEN_USE_BLAS, ridge.cpp) bind to these definitions,
// which log the call (time, shape, flops) and forward to the real OpenBLAS / LAPACKE
// function (dlsym RTLD_NEXT). LAPACK's own dgemm_ calls inside the eigendecomposition may come
// through too; they are logged as part of the eigendecomposition. Stages inside fit():
//   features    the features() time before the eigendecomposition
//   kernel      the rest of fit() before the eigendecomposition (K = ΦΦᵀ/n: dsyrk)
//   eig         LAPACKE_dsytrd + LAPACKE_dstedc
//   lambda_val  fit() after the eigendecomposition (validation features and products,
//               the λ loop, the read-out)
// Output: "stage NAME WALL s  cpu CPU s | details" lines (bench/run_fu2023_pipeline.sh
// parses them), "dgemm ..." and "products ..." lines, and "result ..." lines (λ, NMSE).
// Times are wall seconds and CPU seconds of the process (all threads): on a shared machine
// the CPU time is the robust one at 1 thread. Rates are reported against the dgemm rate at
// the OpenBLAS thread count the calls actually ran with (logged per call), and the
// fraction of the run's thread budget is printed when ridge kept OpenBLAS at 1 thread.
//
// Usage: bench_rf_pipeline [--n 8192] [--n-test 10000] [--heads 1000] [--threads 1]
//          [--keys 16] [--dim 16] [--p 2] [--seed 0] [--solver auto|primal|dual]
//          [--dgemm 3072] [--weights-out W.npy]
#include <dlfcn.h>
#include <lapacke.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/blas_core.h"
#include "core/blas_threads.h"
#include "core/threads.h"
#include "io/npy.h"
#include "models/model_registry.h"
#include "models/rf_models.h"
#include "models/rfa_features.h"
#include "tasks/task.h"
#include "train/metrics.h"
#include "train/ridge.h"

extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
}

namespace {

using Clock = std::chrono::steady_clock;
double now_s() {
  static const Clock::time_point start = Clock::now();
  return std::chrono::duration<double>(Clock::now() - start).count();
}
// CPU seconds of the whole process (all threads).
double cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// ---- Call log of the interposed BLAS / LAPACK functions --------------------------------

// Calls of at least this many flops are "large products" and logged one by one (they all
// come from one thread); smaller ones (the per-sample feature products, from the worker
// threads) are only counted.
constexpr double kLargeFlops = 1e8;

struct CallEvent {
  double t0, t1, c0, c1, flops;  // wall and CPU seconds at start and end
  std::string what;  // "dgemm 512x6554x17000", "dsyrk 6554x17000", "eig dsytrd 6554"
  bool in_eig;       // issued by LAPACK inside the eigendecomposition
  int blas_threads;  // OpenBLAS's thread count during the call
};

std::mutex g_log_mutex;
std::vector<CallEvent> g_calls;
std::atomic<bool> g_in_eig{false};
std::atomic<int64_t> g_small_calls{0};
std::atomic<double> g_small_flops{0.0};

void log_call(double t0, double c0, double flops, std::string what) {
  const double t1 = now_s(), c1 = cpu_s();
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_calls.push_back({t0, t1, c0, c1, flops, std::move(what), g_in_eig.load(),
                     openblas_get_num_threads()});
}

template <class Fn>
Fn real_symbol(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (p == nullptr) {
    // The linker may have dropped a library whose only use we interpose; load it.
    for (const char* lib : {"liblapacke.so.3", "libopenblas.so.0", "libblas.so.3"}) {
      if (void* h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL)) p = dlsym(h, name);
      if (p != nullptr) break;
    }
  }
  if (p == nullptr) {
    std::fprintf(stderr, "bench_rf_pipeline: cannot find the real %s\n", name);
    std::abort();
  }
  return reinterpret_cast<Fn>(p);
}

using DgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*,
                         const double*, const double*, const int*, const double*, const int*,
                         const double*, double*, const int*);
using DsyrkFn = void (*)(const char*, const char*, const int*, const int*, const double*,
                         const double*, const int*, const double*, double*, const int*);
using DsytrdFn = lapack_int (*)(int, char, lapack_int, double*, lapack_int, double*, double*,
                                double*);
using DstedcFn = lapack_int (*)(int, char, lapack_int, double*, double*, double*, lapack_int);

DgemmFn real_dgemm() {
  static const DgemmFn fn = real_symbol<DgemmFn>("dgemm_");
  return fn;
}

}  // namespace

// The interposed entry points (Fortran BLAS as Eigen declares them, and LAPACKE).
extern "C" int dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k,
                      const double* alpha, const double* a, const int* lda, const double* b,
                      const int* ldb, const double* beta, double* c, const int* ldc) {
  const double flops = 2.0 * *m * *n * *k;
  if (flops < kLargeFlops) {
    real_dgemm()(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    g_small_calls.fetch_add(1, std::memory_order_relaxed);
    g_small_flops.fetch_add(flops, std::memory_order_relaxed);
    return 0;
  }
  const double t0 = now_s(), c0 = cpu_s();
  real_dgemm()(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  log_call(t0, c0, flops,
           "dgemm " + std::to_string(*m) + "x" + std::to_string(*n) + "x" + std::to_string(*k));
  return 0;
}

extern "C" int dsyrk_(const char* uplo, const char* trans, const int* n, const int* k,
                      const double* alpha, const double* a, const int* lda, const double* beta,
                      double* c, const int* ldc) {
  static const DsyrkFn fn = real_symbol<DsyrkFn>("dsyrk_");
  const double flops = static_cast<double>(*n) * (*n + 1) * *k;
  const double t0 = now_s(), c0 = cpu_s();
  fn(uplo, trans, n, k, alpha, a, lda, beta, c, ldc);
  if (flops >= kLargeFlops) {
    log_call(t0, c0, flops, "dsyrk " + std::to_string(*n) + "x" + std::to_string(*k));
  } else {
    g_small_calls.fetch_add(1, std::memory_order_relaxed);
    g_small_flops.fetch_add(flops, std::memory_order_relaxed);
  }
  return 0;
}

extern "C" lapack_int LAPACKE_dsytrd(int layout, char uplo, lapack_int n, double* a,
                                     lapack_int lda, double* d, double* e, double* tau) {
  static const DsytrdFn fn = real_symbol<DsytrdFn>("LAPACKE_dsytrd");
  const double t0 = now_s(), c0 = cpu_s();
  g_in_eig = true;
  const lapack_int info = fn(layout, uplo, n, a, lda, d, e, tau);
  g_in_eig = false;
  // (4/3)·n³ for the tridiagonal reduction (nominal, for a rate only).
  log_call(t0, c0, 4.0 / 3.0 * std::pow(static_cast<double>(n), 3),
           "eig dsytrd " + std::to_string(n));
  return info;
}

extern "C" lapack_int LAPACKE_dstedc(int layout, char compz, lapack_int n, double* d, double* e,
                                     double* z, lapack_int ldz) {
  static const DstedcFn fn = real_symbol<DstedcFn>("LAPACKE_dstedc");
  const double t0 = now_s(), c0 = cpu_s();
  g_in_eig = true;
  const lapack_int info = fn(layout, compz, n, d, e, z, ldz);
  g_in_eig = false;
  // Divide and conquer with eigenvectors: of the order of n³ (nominal, for a rate only).
  log_call(t0, c0, std::pow(static_cast<double>(n), 3), "eig dstedc " + std::to_string(n));
  return info;
}

namespace attn {
namespace {

// ---- The feature map, timed --------------------------------------------------------------

struct FeatureEvent {
  double t0, t1, c0, c1;  // wall and CPU seconds
  int64_t count;
};

class TimedFeatures final : public FeatureMap {
 public:
  explicit TimedFeatures(std::unique_ptr<RfaFeatures> inner) : inner_(std::move(inner)) {}
  int64_t dim() const override { return inner_->dim(); }
  void features(const double* X, int64_t count, double* Phi) const override {
    const double t0 = now_s(), c0 = cpu_s();
    inner_->features(X, count, Phi);
    events_.push_back({t0, now_s(), c0, cpu_s(), count});  // RidgeSolver calls from one thread
  }
  const RfaFeatures& inner() const { return *inner_; }
  std::vector<FeatureEvent>& events() const { return events_; }

 private:
  std::unique_ptr<RfaFeatures> inner_;
  mutable std::vector<FeatureEvent> events_;
};

// ---- Options -------------------------------------------------------------------------------

struct Options {
  int64_t n = 8192, n_test = 10000, heads = 1000, keys = 16, dim = 16, p = 2;
  int threads = 1;
  uint64_t seed = 0;
  int64_t first_test = 1000000000;  // eval.first of a spec
  std::string solver = "auto";
  int64_t dgemm = 3072;  // size of the reference dgemm (0: skip)
  std::string weights_out;
};

[[noreturn]] void usage(const char* why, int code = 2) {
  std::fprintf(stderr,
               "bench_rf_pipeline: %s\nusage: bench_rf_pipeline [--n 8192] [--n-test 10000] "
               "[--heads 1000] [--threads 1] [--keys 16] [--dim 16] [--p 2] [--seed 0] "
               "[--solver auto|primal|dual] [--dgemm 3072] [--weights-out W.npy]\n",
               why);
  std::exit(code);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") usage("times the fu2023 rfa pipeline stage by stage", 0);
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    const char* v = argv[++i];
    auto integer = [&](int64_t lo) {
      char* end = nullptr;
      const long long x = std::strtoll(v, &end, 10);
      if (*end != '\0' || x < lo)
        usage((a + " needs a whole number >= " + std::to_string(lo)).c_str());
      return static_cast<int64_t>(x);
    };
    if (a == "--n") o.n = integer(4);
    else if (a == "--n-test") o.n_test = integer(1);
    else if (a == "--heads") o.heads = integer(1);
    else if (a == "--threads") o.threads = static_cast<int>(integer(1));
    else if (a == "--keys") o.keys = integer(1);
    else if (a == "--dim") o.dim = integer(1);
    else if (a == "--p") o.p = integer(0);
    else if (a == "--seed") o.seed = static_cast<uint64_t>(integer(0));
    else if (a == "--solver") o.solver = v;
    else if (a == "--dgemm") o.dgemm = integer(0);
    else if (a == "--weights-out") o.weights_out = v;
    else usage(("unknown option " + a).c_str());
  }
  return o;
}

// ---- Reporting ----------------------------------------------------------------------------

// Rates are given two ways: per wall second (what the user waits for) and per CPU second
// of the process (robust to a machine shared with other work: at one thread the CPU time
// is the time the code actually ran).
struct Rate {
  double wall = 0, cpu = 0;  // GFLOP/s
};

struct Tally {
  int64_t calls = 0;
  double flops = 0, wall = 0, cpu = 0;
  int threads_min = 1 << 20, threads_max = 0;  // OpenBLAS threads seen
  void add(const CallEvent& c) {
    threads_min = std::min(threads_min, c.blas_threads);
    threads_max = std::max(threads_max, c.blas_threads);
    ++calls;
    flops += c.flops;
    wall += c.t1 - c.t0;
    cpu += c.c1 - c.c0;
  }
  void add(const Tally& t) {
    threads_min = std::min(threads_min, t.threads_min);
    threads_max = std::max(threads_max, t.threads_max);
    calls += t.calls;
    flops += t.flops;
    wall += t.wall;
    cpu += t.cpu;
  }
  Rate rate() const { return {flops / wall * 1e-9, flops / cpu * 1e-9}; }
  std::string threads_text() const {
    return threads_min == threads_max
               ? std::to_string(threads_min)
               : std::to_string(threads_min) + "-" + std::to_string(threads_max);
  }
};

struct Products {
  Tally all;
  std::map<std::string, Tally> by_shape;
};

// The logged large products outside the eigendecomposition that started in [t0, t1).
Products products_in(double t0, double t1) {
  Products p;
  std::lock_guard<std::mutex> lock(g_log_mutex);
  for (const CallEvent& c : g_calls) {
    if (c.in_eig || c.what.rfind("eig ", 0) == 0 || c.t0 < t0 || c.t0 >= t1) continue;
    p.all.add(c);
    p.by_shape[c.what].add(c);
  }
  return p;
}

struct Stamp {
  double wall, cpu;
};
Stamp stamp() { return {now_s(), cpu_s()}; }

struct Stage {
  std::string name;
  double seconds = 0, cpu = 0;  // wall and process CPU
  double feature_seconds = 0, feature_cpu = 0;
  int64_t feature_samples = 0;
  Products products;
};

double log_value(const FitLog& log, const std::string& name) {
  for (const auto& [key, value] : log.scalars)
    if (key == name) return value;
  return NAN;
}

// The stage [a, b): wall and CPU time, the features() calls and large products in it.
Stage stage_window(const char* name, const TimedFeatures& f, Stamp a, Stamp b) {
  Stage s;
  s.name = name;
  s.seconds = b.wall - a.wall;
  s.cpu = b.cpu - a.cpu;
  for (const FeatureEvent& e : f.events())
    if (e.t0 >= a.wall && e.t0 < b.wall) {
      s.feature_seconds += e.t1 - e.t0;
      s.feature_cpu += e.c1 - e.c0;
      s.feature_samples += e.count;
    }
  s.products = products_in(a.wall, b.wall);
  return s;
}

double nmse_of(const Batch& data, const std::vector<double>& pred) {
  for (const auto& [name, value] : metrics_compute(data, pred))
    if (name == "nmse") return value;
  return NAN;
}

// OpenBLAS dgemm C = A·B (size³) at `threads` OpenBLAS threads: the best wall time of
// `reps` calls, and flops per CPU second over all of them.
Rate dgemm_rate(int64_t size, int threads, int reps) {
  const int s = static_cast<int>(size);
  std::vector<double> A(size * size), B(size * size), C(size * size, 0.0);
  for (int64_t i = 0; i < size * size; ++i) {
    A[i] = std::sin(0.001 * static_cast<double>(i));
    B[i] = std::cos(0.002 * static_cast<double>(i));
  }
  const double one = 1.0, zero = 0.0;
  openblas_set_num_threads(threads);
  double best = 1e300;
  const double c0 = cpu_s();
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_s();
    real_dgemm()("N", "N", &s, &s, &s, &one, A.data(), &s, B.data(), &s, &zero, C.data(), &s);
    best = std::min(best, now_s() - t0);
  }
  const double cpu = cpu_s() - c0;
  openblas_set_num_threads(1);
  const double flops = 2.0 * std::pow(static_cast<double>(size), 3);
  return {flops / best * 1e-9, reps * flops / cpu * 1e-9};
}

// "12.3 GFLOP/s wall, 14.5 per CPU-s (80% / 85% of dgemm)", against the dgemm rate at
// the OpenBLAS thread count the calls ran with (1 or the run's count k).
std::string rate_text(const Tally& t, const Rate& rate1, const Rate& rate_k, int k) {
  const Rate r = t.rate();
  const Rate& ref = t.threads_max == k ? rate_k : rate1;
  char buf[200];
  if (ref.wall > 0)
    std::snprintf(buf, sizeof buf,
                  "%.1f GFLOP/s wall, %.1f per CPU-s (%.0f%% / %.0f%% of the %s-thread dgemm)",
                  r.wall, r.cpu, 100.0 * r.wall / ref.wall, 100.0 * r.cpu / ref.cpu,
                  t.threads_text().c_str());
  else
    std::snprintf(buf, sizeof buf, "%.1f GFLOP/s wall, %.1f per CPU-s (OpenBLAS threads %s)",
                  r.wall, r.cpu, t.threads_text().c_str());
  return buf;
}

int bench_main(const Options& o) {
  threads_configure(o.threads);
  const int64_t e = o.dim + 1, P = o.heads * e;
  std::printf("bench_rf_pipeline: n=%lld n_test=%lld N=%lld d=%lld p=%lld M=%lld P=%lld "
              "threads=%d seed=%llu openblas_core=%s\n",
              (long long)o.n, (long long)o.n_test, (long long)o.keys, (long long)o.dim,
              (long long)o.p, (long long)o.heads, (long long)P, o.threads,
              (unsigned long long)o.seed, attn::blas_core_name());
  std::fflush(stdout);

  // The machine's dgemm rate, first (before the pipeline's allocations): at 1 thread (the
  // OpenBLAS budget of ridge's products outside the eigendecomposition) and at the run's thread
  // count.
  Rate rate1, rate_k;
  if (o.dgemm > 0) {
    dgemm_rate(std::min<int64_t>(o.dgemm, 1024), 1, 1);  // warm up
    rate1 = dgemm_rate(o.dgemm, 1, 3);
    std::printf("dgemm %lld^3 OpenBLAS, 1 thread: %.1f GFLOP/s wall (best of 3), %.1f per CPU-s\n",
                (long long)o.dgemm, rate1.wall, rate1.cpu);
    rate_k = rate1;
    if (o.threads > 1) {
      rate_k = dgemm_rate(o.dgemm, o.threads, 3);
      std::printf(
          "dgemm %lld^3 OpenBLAS, %d threads: %.1f GFLOP/s wall (best of 3), %.1f per CPU-s\n",
          (long long)o.dgemm, o.threads, rate_k.wall, rate_k.cpu);
    }
    std::fflush(stdout);
  }

  // The rfa model exactly as rfa_make builds it, with the features timed.
  Params model_params("model", rfa_schema());
  model_params.set_text("heads", std::to_string(o.heads));
  Params train_params("train", rf_train_schema());
  train_params.set_text("solver", o.solver);
  RfaConfig rc;
  rc.heads = model_params.get_int("heads");
  rc.activation = attn::choice_parse(model_params.get_string("activation"), attn::kRfaActivations,
                                     "model.activation");
  rc.augment = model_params.get_bool("augment");
  rc.w_var = model_params.get_real("w_var");
  rc.w_mean = model_params.get_real("w_mean");

  const Stamp t_start = stamp();

  // data
  Params task_params = task_default_params("rf_target");
  task_params.set_text("N", std::to_string(o.keys));
  task_params.set_text("d", std::to_string(o.dim));
  task_params.set_text("target", "pair_power");
  task_params.set_text("p", std::to_string(o.p));
  const auto task = task_make("rf_target", task_params);
  const Batch train = task_generate(*task, o.seed, 0, o.n);
  const Batch test = task_generate(*task, o.seed, o.first_test, o.n_test);
  const Stamp t_data = stamp();

  auto features = std::make_unique<TimedFeatures>(
      std::make_unique<RfaFeatures>(rc, task->shape().T, task->shape().d_in, o.seed));
  const TimedFeatures& timed = *features;
  if (!o.weights_out.empty()) {
    const std::vector<double>& W = timed.inner().weights();
    npy_write(o.weights_out, NpyView{"W", DType::F64, {o.heads, e, e}, W.data()});
  }
  RidgeSolver model(std::move(features), ridge_options(train_params));
  const Stamp t_model = stamp();  // the W draw (and optional write) is in no stage

  // fit, split at the eigendecomposition
  FitLog log;
  const Stamp t_fit0 = stamp();
  model.fit(train, log);
  const Stamp t_fit1 = stamp();
  // The eigendecomposition: from the start of dsytrd to the end of dstedc (the first pair).
  Stamp t_eig0 = t_fit1, t_eig1 = t_fit1;
  for (const CallEvent& c : g_calls) {
    if (c.t0 < t_fit0.wall) continue;
    if (c.what.rfind("eig dsytrd", 0) == 0 && t_eig0.wall == t_fit1.wall) t_eig0 = {c.t0, c.c0};
    if (c.what.rfind("eig dstedc", 0) == 0) {
      t_eig1 = {c.t1, c.c1};
      break;
    }
  }

  // what run_point does next
  const Stamp t_p0 = stamp();
  const std::vector<double> pred_test = model.predict(test);
  const Stamp t_p1 = stamp();
  FitLog eval_log;
  model.evaluate(test, eval_log);
  const Stamp t_v1 = stamp();
  const std::vector<double> pred_train = model.predict(train);
  const Stamp t_end = stamp();

  // ---- stages
  std::vector<Stage> stages;
  stages.push_back(stage_window("data", timed, t_start, t_data));
  {
    // Before the eigendecomposition: the fit split's features, then the kernel (or, in
    // primal, the Gram accumulated block by block between feature blocks).
    const Stage pre = stage_window("", timed, t_fit0, t_eig0);
    Stage f;
    f.name = "features";
    f.seconds = f.feature_seconds = pre.feature_seconds;
    f.cpu = f.feature_cpu = pre.feature_cpu;
    f.feature_samples = pre.feature_samples;
    stages.push_back(f);
    Stage k;
    k.name = "kernel";
    k.seconds = pre.seconds - pre.feature_seconds;
    k.cpu = pre.cpu - pre.feature_cpu;
    k.products = pre.products;
    stages.push_back(k);
  }
  stages.push_back(stage_window("eig", timed, t_eig0, t_eig1));
  stages.push_back(stage_window("lambda_val", timed, t_eig1, t_fit1));
  stages.push_back(stage_window("predict_test", timed, t_p0, t_p1));
  stages.push_back(stage_window("path_test", timed, t_p1, t_v1));
  stages.push_back(stage_window("predict_train", timed, t_v1, t_end));

  // ---- report
  const bool primal = log_value(log, "ridge_primal") > 0.5;
  const int64_t n_fit = static_cast<int64_t>(log_value(log, "n_fit"));
  char buf[320];
  Products all;
  for (const Stage& s : stages) {
    std::string details;
    if (s.feature_samples > 0) {
      std::snprintf(buf, sizeof buf, " features of %lld samples %.2f s (cpu %.2f s);",
                    (long long)s.feature_samples, s.feature_seconds, s.feature_cpu);
      details += buf;
    }
    const Tally& pr = s.products.all;
    if (pr.calls > 0) {
      std::snprintf(buf, sizeof buf, " large products %.3g flop in %.2f s (cpu %.2f s) = ",
                    pr.flops, pr.wall, pr.cpu);
      details += buf + rate_text(pr, rate1, rate_k, o.threads) + ";";
    }
    if (s.name == "eig") {
      Tally inner;
      int eig_threads = 0;
      for (const CallEvent& c : g_calls) {
        if (c.in_eig) inner.add(c);
        if (c.what.rfind("eig ", 0) == 0) eig_threads = c.blas_threads;
      }
      std::snprintf(buf, sizeof buf, " dsytrd + dstedc n=%lld (%s), OpenBLAS threads %d;",
                    (long long)(primal ? P : n_fit), primal ? "primal Gram" : "dual kernel",
                    eig_threads);
      details += buf;
      if (inner.calls > 0) {
        std::snprintf(buf, sizeof buf,
                      " LAPACK's own dgemm inside: %.3g flop in %.2f s (cpu %.2f s) = ",
                      inner.flops, inner.wall, inner.cpu);
        details += buf + rate_text(inner, rate1, rate_k, o.threads) + ";";
      }
    }
    if (!details.empty()) details.pop_back();
    std::printf("stage %-14s %9.3f s  cpu %9.3f s |%s\n", s.name.c_str(), s.seconds, s.cpu,
                details.c_str());
    all.all.add(s.products.all);
    for (const auto& [what, t] : s.products.by_shape) all.by_shape[what].add(t);
  }
  const double total = (t_end.wall - t_start.wall) - (t_model.wall - t_data.wall);
  const double total_cpu = (t_end.cpu - t_start.cpu) - (t_model.cpu - t_data.cpu);
  std::printf("stage %-14s %9.3f s  cpu %9.3f s | end to end (the W draw, %.3f s, excluded)\n",
              "total", total, total_cpu, t_model.wall - t_data.wall);
  if (all.all.calls > 0) {
    std::printf("products large (>= %.0e flop, outside the eigendecomposition): %lld calls, "
                "%.4g flop in %.2f s (cpu %.2f s) = %s; %.0f%% of the end-to-end wall time\n",
                kLargeFlops, (long long)all.all.calls, all.all.flops, all.all.wall, all.all.cpu,
                rate_text(all.all, rate1, rate_k, o.threads).c_str(), 100.0 * all.all.wall / total);
    if (o.threads > 1 && rate_k.wall > 0 && all.all.threads_max < o.threads)
      std::printf("products large against the %d-thread dgemm (the run's thread budget): "
                  "%.0f%% (wall)\n", o.threads, 100.0 * all.all.rate().wall / rate_k.wall);
  }
  for (const auto& [what, t] : all.by_shape)
    std::printf("products   %-24s x%-4lld %10.3g flop %8.2f s  %s\n", what.c_str(),
                (long long)t.calls, t.flops, t.wall,
                rate_text(t, rate1, rate_k, o.threads).c_str());
  std::printf(
      "products small (the features' per-block / per-sample GEMMs): %lld calls, %.4g flop\n",
      (long long)g_small_calls.load(), g_small_flops.load());

  // results (compare with the numpy script)
  const double y_sum_train = [&] { double s = 0; for (double y : train.Y) s += y; return s; }();
  const double y_sum_test = [&] { double s = 0; for (double y : test.Y) s += y; return s; }();
  std::printf("result data_checksum train_y_sum=%.12g test_y_sum=%.12g\n", y_sum_train, y_sum_test);
  std::printf("result solver %s n_fit=%lld\n",
              log_value(log, "ridge_primal") > 0.5 ? "primal" : "dual",
              (long long)log_value(log, "n_fit"));
  std::printf("result lambda_chosen %.3g val_mse %.10g\n", model.chosen_lambda(),
              log_value(log, "val_mse"));
  std::printf("result test_nmse %.10g train_nmse %.10g\n", nmse_of(test, pred_test),
              nmse_of(train, pred_train));
  std::vector<double> lambdas = ridge_options(train_params).lambdas;
  for (const FitLog::Point& pt : log.points)
    if (pt.series == "val_mse")
      std::printf("result val_mse_path lambda=%.0e %.10g\n", lambdas[pt.step], pt.value);
  for (const FitLog::Point& pt : eval_log.points)
    if (pt.series == "test_nmse_path")
      std::printf("result test_nmse_path lambda=%.0e %.10g\n", lambdas[pt.step], pt.value);
  std::printf("result test_nmse_minnorm %.10g\n", log_value(eval_log, "test_nmse_minnorm"));
  return 0;
}

}  // namespace
}  // namespace attn

int main(int argc, char** argv) {
  // The command line's kernels where OpenBLAS fell back to ones without AVX (core/blas_core.h);
  // the thread count stays this bench's own (--threads).
  attn::blas_reexec_once(argv, attn::BlasReexec::core_only);
  try {
    return attn::bench_main(attn::parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_rf_pipeline: error: %s\n", e.what());
    return 2;
  }
}
