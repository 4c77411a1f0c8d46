// Training-step throughput of attnlab's neural networks (issue #5, "Performance"): the
// attnlab side of bench/run_sanford2023_train.sh, timed against the same models in PyTorch
// (bench/sanford2023_train_torch.py).
//
// Configurations (qsa task shapes, multi-hot encoding: d_in = d' + 2N, T_out = N):
//   a  `attention`, N = 32, d' = 4, m = 16, 1 head, batch 64 (the paper-scale unit)
//   b  `attention`, N = 32, d' = 4, m = 64, 4 heads, batch 256
//   c  `lstm`, N = 32 (sequence length), d' = 4, hidden 128, 1 layer, batch 256
//   d  `attention`, N = 32, d' = 4, m = 16, 1 head, batch 256 (issue #32)
//   e  `attention`, N = 32, d' = 4, m = 32, 1 head, batch 256 (issue #32)
//   f  `third_order`, N = 16, d' = 4, m = 16, 1 head, batch 256 (issue #32)
//   g, h  `attention`, N = 64, d' = 4, m = 128 and 64, 1 head, batch 256 (sanford2023 E1's
//         largest shapes: the input is 7 of 132 columns non-zero, φ's first layer sparse)
//   i  `attention`, N = 16, d' = 4, m = 64, 1 head, batch 256 (E1 at N = 16: 7 of 36 columns
//      non-zero, φ's first layer sparse since 2026-12-07)
//   j  `mlp`, N = 16, d' = 4, width 1024, depth 3, relu, batch 256 (sanford2023 E2's largest
//      MLP: 576 → 1024 → 1024 → 64; no PyTorch twin: bench_mlp_gemms times its GEMMs alone)
//   k  config c with the shipped experiments' LSTM head (sanford2023 E2, E3: head_width 128,
//      relu): [h_T; x_i] → 128 → d'
//   l  `lstm`, N = 16, d' = 4, hidden 128, head 128, batch 256: sanford2023's largest LSTM (E2
//      and E3 at N = 16), the shape of issue #32's LSTM row
// and the k-hop experiments' causal transformer (hop task, N = 64, A = 4, k_max = 8: one-hot
// input width A + k_max + 1 = 13, categorical output A + 2 = 6 classes, cross-entropy loss):
//   t2 … t5  `transformer`, causal, learned positions, m = 128, 4 heads, 2 … 5 layers, batch 32
// Every other [model] key at its default (neural_schemas.cpp): attention φ = MLP
// d_in → 128 → m (relu), Q, K (m, H·m), V (m, H·d'), heads summed, learned temperature,
// ψ linear on [φ(x_i); a_i]; third_order the same with K1, K2, V1, V2; lstm: readout "final"
// (head on [h_T; x_i]), linear head; transformer: φ, ψ linear, pre-layernorm, V (m, H·m)
// heads summed, MLP m → 4m → m (relu), learned temperature.
//
// Share of the sgemm rate: before the configs (and so in every round of the run script) the
// 1-thread sgemm rate is measured on a 2048³ product (best of 3, the same gemm<float> the
// models call); each result line gives the model's flops per step (model_flops below: the
// matrix products of the model as written, forward counted once and backward twice, causal
// attention counting the unmasked pairs only), the GFLOP/s they make at the median CPU time
// per step and the share of the sgemm rate.
//
// A step is what trainer_run (src/train/trainer.cpp) does per step, minus drawing the
// batch: forward, MSE loss and its gradient, zero_grad, backward, Adam (lr 1e-3, β =
// (0.9, 0.999), ε = 1e-8), float32, 1 thread (OpenBLAS pinned to 1). The input batches are
// drawn once from the qsa task (`--batches` of them, cycled; not timed).
// Timing: `--warmup` steps, then steps per repetition chosen so that one repetition takes
// about `--rep-seconds`; `--reps` repetitions, each timed in wall and process CPU time;
// steps/s is the median over repetitions. One more repetition with clock reads between
// the phases gives the split (forward / loss / backward / optimiser) per step.
// Output: "result config=... key=value ..." and "phases config=..." lines (parsed by
// run_sanford2023_train.sh). With --dump DIR, DIR/<config>.npz holds the initial
// parameters ("init.<tensor>", attnlab's layout), the batches ("x", "y") and the losses of
// the first steps ("losses"), so the PyTorch script can start from the same weights and
// check that its losses agree (same architecture, same Adam).
//
// With --trainer-threads T1,T2,..., each config is instead timed through trainer_run itself
// (src/train/trainer.h: the batch in its chunks, one replica per thread, gradients summed in
// chunk order; validation on one sample once per repetition) at each thread count, printing
// "trainer config=... threads=T steps_per_s=..." lines; this is the cost of determinism
// across thread counts (docs/performance.md).
//
// With --isa-ab C1,C2 (copies of the float kernels, src/ops/isa.h: generic, avx2, avx512), each
// config's repetitions instead alternate between the copies in one process (isa_force; C1 then C2
// in odd repetitions, C2 then C1 in even ones), so that both see the same load and the same
// network: the copies give the same bits, so training goes on identically whichever runs. Prints
// "isa_ab config=... copies=C1,C2" lines with each copy's median steps/s (wall and CPU) and the
// median and range of the per-repetition ratios C2/C1 (> 1: C2 faster).
//
// Usage: bench_nn_train [--configs a,b,c] [--reps 7] [--warmup 20] [--rep-seconds 1]
//          [--batches 8] [--seed 0] [--dump DIR] [--trainer-threads 1,2] [--isa-ab avx2,avx512]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "bench_rates.h"
#include "core/blas_core.h"
#include "core/error.h"
#include "core/float_env.h"
#include "core/threads.h"
#include "core/version.h"
#include "io/npy.h"
#include "models/neural_models.h"
#include "ops/isa.h"
#include "ops/loss.h"
#include "tasks/task.h"
#include "train/optimizer.h"
#include "train/trainer.h"

extern "C" int openblas_get_num_threads(void);

namespace {

using namespace attn;

struct Config {
  std::string id, model;
  int64_t N, d_out, m, heads, hidden, batch;
  int64_t layers = 0;  // transformer only (hop task, causal, learned positions)
  int64_t head_width = 0;  // lstm only: 0 a linear head, else an MLP head of this width
};
const Config kConfigs[] = {
    {"a", "attention", 32, 4, 16, 1, 0, 64},
    {"b", "attention", 32, 4, 64, 4, 0, 256},
    {"c", "lstm", 32, 4, 0, 0, 128, 256},
    {"d", "attention", 32, 4, 16, 1, 0, 256},
    {"e", "attention", 32, 4, 32, 1, 0, 256},
    {"f", "third_order", 16, 4, 16, 1, 0, 256},
    {"t2", "transformer", 64, 6, 128, 4, 0, 32, 2},
    {"t3", "transformer", 64, 6, 128, 4, 0, 32, 3},
    {"t4", "transformer", 64, 6, 128, 4, 0, 32, 4},
    {"t5", "transformer", 64, 6, 128, 4, 0, 32, 5},
    // sanford2023 E1's largest shapes (N = 64: inputs 5 % non-zero) and its N = 16 (19 %).
    {"g", "attention", 64, 4, 128, 1, 0, 256},
    {"h", "attention", 64, 4, 64, 1, 0, 256},
    {"i", "attention", 16, 4, 64, 1, 0, 256},
    // sanford2023 E2's largest MLP: width 1024, depth 3, N = 16 (one chunk: 1.7 M parameters).
    {"j", "mlp", 16, 4, 0, 0, 1024, 256},
    {"k", "lstm", 32, 4, 0, 0, 128, 256, 0, 128},
    {"l", "lstm", 16, 4, 0, 0, 128, 256, 0, 128},
};
constexpr int64_t kHopA = 4, kHopKMax = 8;  // the k-hop experiments' alphabet and k_max
constexpr int kCheckSteps = 5;  // losses recorded for the PyTorch check

struct Options {
  std::vector<std::string> configs{"a", "b", "c"};
  int reps = 7, warmup = 20, batches = 8;
  double rep_seconds = 1.0;
  uint64_t seed = 0;
  std::string dump;
  std::vector<int> trainer_threads;  // non-empty: time trainer_run at these thread counts
  std::vector<IsaCopy> isa_ab;       // two copies: alternate them (see the top of the file)
};

double wall_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
using bench::cpu_s;
using bench::median;
using bench::sgemm_gflops;

// One training step; `phase` (forward, loss, backward, optimiser) gets the seconds of each
// phase when non-null.
struct Stepper {
  Net<float>& net;
  Optimizer<float> opt;
  LossSpec loss_spec;
  int64_t count;
  std::vector<float> pred, dpred;
  double step(const float* x, const float* y, int64_t B, double* phase) {
    ParamSet<float>& ps = net.params();
    const double t0 = phase ? wall_s() : 0;
    net.forward(x, B, pred.data());
    const double t1 = phase ? wall_s() : 0;
    const double loss = loss_forward(loss_spec, pred.data(), y, count);
    std::fill(dpred.begin(), dpred.end(), 0.0f);
    loss_backward(loss_spec, dpred.data(), pred.data(), y, count, 1.0f);
    const double t2 = phase ? wall_s() : 0;
    ps.zero_grad();
    net.backward(dpred.data());
    const double t3 = phase ? wall_s() : 0;
    opt.step(ps.values().data(), ps.grads().data(), 1e-3);
    if (phase) {
      const double t4 = wall_s();
      phase[0] += t1 - t0;
      phase[1] += t2 - t1;
      phase[2] += t3 - t2;
      phase[3] += t4 - t3;
    }
    return loss;
  }
};

// --isa-ab: o.reps repetitions of `steps` steps per copy, alternated (see the top of the file).
template <class Step>
void isa_ab(const Config& c, const Options& o, Step step, int64_t steps) {
  std::vector<double> rate[2], cpu_rate[2], ratio, cpu_ratio;
  for (int r = 0; r < o.reps; ++r) {
    double w[2], cp[2];
    for (int j = 0; j < 2; ++j) {
      const int copy = r % 2 ? 1 - j : j;
      isa_force(o.isa_ab[copy]);
      const double w0 = wall_s(), c0 = cpu_s();
      for (int64_t s = 0; s < steps; ++s) step();
      w[copy] = wall_s() - w0;
      cp[copy] = std::max(cpu_s() - c0, 1e-9);
    }
    for (int copy = 0; copy < 2; ++copy) {
      rate[copy].push_back(double(steps) / w[copy]);
      cpu_rate[copy].push_back(double(steps) / cp[copy]);
    }
    ratio.push_back(w[0] / w[1]);
    cpu_ratio.push_back(cp[0] / cp[1]);
  }
  isa_force(IsaCopy::automatic);
  const auto [lo, hi] = std::minmax_element(ratio.begin(), ratio.end());
  const auto [clo, chi] = std::minmax_element(cpu_ratio.begin(), cpu_ratio.end());
  std::printf("isa_ab config=%s copies=%s,%s reps=%d steps_per_rep=%lld steps_per_s=%.2f,%.2f "
              "cpu_steps_per_s=%.2f,%.2f ratio=%.3f ratio_min=%.3f ratio_max=%.3f cpu_ratio=%.3f "
              "cpu_ratio_min=%.3f cpu_ratio_max=%.3f\n",
              c.id.c_str(), isa_name(o.isa_ab[0]), isa_name(o.isa_ab[1]), o.reps, (long long)steps,
              median(rate[0]), median(rate[1]), median(cpu_rate[0]), median(cpu_rate[1]),
              median(ratio), *lo, *hi, median(cpu_ratio), *clo, *chi);
  std::fflush(stdout);
}

// The task, the [model] parameters and the loss of config c.
struct Setup {
  std::unique_ptr<Task> task;
  Params mp;
  LossSpec loss;
};
Setup setup_make(const Config& c) {
  const bool hop = c.model == "transformer";
  Params tp = task_default_params(hop ? "hop" : "qsa");
  tp.set_text("N", std::to_string(c.N));
  if (hop) {
    tp.set_text("A", std::to_string(kHopA));
    tp.set_text("k_max", std::to_string(kHopKMax));
  } else {
    tp.set_text("d_out", std::to_string(c.d_out));
  }
  Setup st{task_make(hop ? "hop" : "qsa", tp), neural_default_params(c.model),
           hop ? LossSpec(Loss::cross_entropy, c.d_out) : LossSpec(Loss::mse)};
  ATTN_CHECK(st.task->shape().d_out == c.d_out, "bench_nn_train: config " + c.id + " d_out");
  if (c.model == "lstm") {
    st.mp.set_text("hidden", std::to_string(c.hidden));
    st.mp.set_text("head_width", std::to_string(c.head_width));
  } else if (c.model == "mlp") {
    st.mp.set_text("width", std::to_string(c.hidden));
    st.mp.set_text("depth", "3");
  } else {
    st.mp.set_text("m", std::to_string(c.m));
    st.mp.set_text("heads", std::to_string(c.heads));
  }
  if (hop) {
    st.mp.set_text("layers", std::to_string(c.layers));
    st.mp.set_text("causal", "true");
    st.mp.set_text("positions", "learned");
  }
  return st;
}

// Flops of one training step of config c at batch B: the model's matrix products as written
// (Q and K projected separately, no shared-key shortcut), 2 flops a multiply-add, forward
// once and backward twice; causal attention counts the N(N+1)/2 unmasked pairs only.
double model_flops(const Config& c, const TaskShape& shape, int64_t B) {
  const double rows = double(B) * double(c.N), N = double(c.N), m = double(c.m);
  const double H = double(c.heads), din = double(shape.d_in), dout = double(c.d_out);
  double f = 0;  // forward multiply-adds
  if (c.model == "lstm") {
    const double h = double(c.hidden);
    const double hw = double(c.head_width);  // the head on the formed rows [h_T; x_i]
    f = rows * (din + h) * 4 * h +
        (hw > 0 ? rows * ((h + din) * hw + hw * dout) : rows * (h + din) * dout);
  } else if (c.model == "mlp") {  // depth 3: N·d_in → w → w → N·d_out on each sample
    const double w = double(c.hidden);
    f = double(B) * (N * din * w + w * w + w * N * dout);
  } else if (c.model == "transformer") {
    const double pairs = N * (N + 1) / 2;  // causal
    f = rows * din * m + rows * m * dout;
    f += double(c.layers) *
         (rows * 3 * m * H * m + double(B) * H * pairs * 2 * m + rows * 2 * m * 4 * m);
  } else {
    const double dk = m, dv = dout;
    f = rows * (din * 128 + 128 * m) + rows * (m + dv) * dout;  // φ (width 128) and ψ
    if (c.model == "third_order") {
      f += rows * m * H * (3 * dk + 2 * dv) + double(B) * H * N * N * N * (dk + dv);
    } else {
      f += rows * m * H * (2 * dk + dv) + double(B) * H * N * N * (dk + dv);
    }
  }
  return 2 * 3 * f;
}

void run_config(const Config& c, const Options& o, double sgemm_rate) {
  const Setup setup = setup_make(c);
  const auto& task = setup.task;
  const TaskShape& shape = task->shape();
  const Params& mp = setup.mp;
  auto net = neural_net_make<float>(c.model, mp, shape);
  net->init(o.seed);
  ParamSet<float>& ps = net->params();
  const std::vector<float> init = ps.values();

  // Fixed input batches, drawn once (samples 0 .. batches·B − 1 of the task).
  const int64_t B = c.batch, xs = shape.x_size(), ys = shape.y_size();
  const Batch data = task_generate(*task, o.seed, 0, o.batches * B);
  const std::vector<float> X(data.X.begin(), data.X.end()), Y(data.Y.begin(), data.Y.end());

  const int64_t count = B * ys;
  Stepper st{*net,
             Optimizer<float>(OptimizerConfig{}, ps.size()),
             setup.loss,
             count,
             std::vector<float>(count),
             std::vector<float>(count)};
  int64_t k = 0;  // steps so far; step k uses batch k mod batches
  auto one = [&](double* phase) {
    const int64_t b = k++ % o.batches;
    return st.step(X.data() + b * B * xs, Y.data() + b * B * ys, B, phase);
  };
  std::vector<double> losses;
  const int warm = std::max(o.warmup, kCheckSteps), half = warm / 2;
  double t_warm = 0;  // the second half of the warm-up calibrates the repetition length
  for (int i = 0; i < warm; ++i) {
    const double t0 = wall_s();
    const double loss = one(nullptr);
    if (i < kCheckSteps) losses.push_back(loss);
    if (i >= half) t_warm += wall_s() - t0;
  }
  const int64_t steps = std::max<int64_t>(
      3, std::llround(o.rep_seconds / std::max(t_warm / double(warm - half), 1e-7)));

  if (!o.isa_ab.empty()) return isa_ab(c, o, [&] { one(nullptr); }, steps);

  std::vector<double> rate, cpu_rate;
  double last_loss = 0;
  for (int r = 0; r < o.reps; ++r) {
    const double w0 = wall_s(), c0 = cpu_s();
    for (int64_t s = 0; s < steps; ++s) last_loss = one(nullptr);
    const double w = wall_s() - w0, cp = cpu_s() - c0;
    rate.push_back(double(steps) / w);
    cpu_rate.push_back(double(steps) / std::max(cp, 1e-9));
  }
  double phase[4] = {0, 0, 0, 0};
  for (int64_t s = 0; s < steps; ++s) one(phase);

  std::printf("result config=%s model=%s params=%lld batch=%lld N=%lld d_in=%lld d_out=%lld "
              "reps=%d steps_per_rep=%lld steps_per_s=%.2f steps_per_s_min=%.2f "
              "steps_per_s_max=%.2f cpu_steps_per_s=%.2f loss_first=%.6g loss_last=%.6g\n",
              c.id.c_str(), c.model.c_str(), (long long)ps.size(), (long long)B, (long long)c.N,
              (long long)shape.d_in, (long long)c.d_out, o.reps, (long long)steps, median(rate),
              *std::min_element(rate.begin(), rate.end()),
              *std::max_element(rate.begin(), rate.end()), median(cpu_rate), losses[0], last_loss);
  const double flops = model_flops(c, shape, B), gflops = flops * median(cpu_rate) * 1e-9;
  std::printf(
      "rate config=%s cpu_ms_per_step=%.4f flops_per_step=%.6g gflops=%.2f "
      "sgemm_gflops=%.2f share_of_sgemm=%.3f\n",
      c.id.c_str(), 1e3 / median(cpu_rate), flops, gflops, sgemm_rate, gflops / sgemm_rate);
  const double ms = 1e3 / double(steps);
  std::printf("phases config=%s forward_ms=%.4f loss_ms=%.4f backward_ms=%.4f optimizer_ms=%.4f "
              "total_ms=%.4f\n",
              c.id.c_str(), phase[0] * ms, phase[1] * ms, phase[2] * ms, phase[3] * ms,
              (phase[0] + phase[1] + phase[2] + phase[3]) * ms);
  std::fflush(stdout);

  if (!o.dump.empty()) {
    std::vector<NpyView> views;
    std::vector<std::string> names;
    names.reserve(ps.entries().size());
    for (const ParamEntry& e : ps.entries()) names.push_back("init." + e.name);
    for (size_t i = 0; i < ps.entries().size(); ++i) {
      const ParamEntry& e = ps.entries()[i];
      views.push_back({names[i], DType::F32, e.shape, init.data() + e.offset});
    }
    views.push_back({"x", DType::F32, {o.batches, B, c.N, shape.d_in}, X.data()});
    views.push_back({"flops_per_step", DType::F64, {1}, &flops});
    views.push_back({"y", DType::F32, {o.batches, B, c.N, c.d_out}, Y.data()});
    views.push_back({"losses", DType::F64, {int64_t(kCheckSteps)}, losses.data()});
    npz_write(o.dump + "/" + c.id + ".npz", views);
  }
}

// Steps/s of trainer_run on config c at `threads` compute threads (the same batches as
// run_config, cycled; the same initial parameters for every thread count).
void run_trainer_config(const Config& c, const Options& o, int threads) {
  const Setup setup = setup_make(c);
  const auto& task = setup.task;
  const TaskShape& shape = task->shape();
  const Params& mp = setup.mp;
  auto net = neural_net_make<float>(c.model, mp, shape);
  net->init(o.seed);
  const NetFactory<float> replica = [&] { return neural_net_make<float>(c.model, mp, shape); };
  const int64_t B = c.batch, xs = shape.x_size(), ys = shape.y_size();
  const Batch data = task_generate(*task, o.seed, 0, o.batches * B);
  const std::vector<float> X(data.X.begin(), data.X.end()), Y(data.Y.begin(), data.Y.end());
  TrainSet<float> val;
  val.n = 1;
  val.x_size = xs;
  val.y_size = ys;
  val.X.assign(X.begin(), X.begin() + xs);
  val.Y.assign(Y.begin(), Y.begin() + ys);
  const BatchSource<float> source = [&](int64_t step, int64_t batch, float* x, float* y) {
    const int64_t b = (step - 1) % o.batches;
    std::copy_n(X.data() + b * batch * xs, batch * xs, x);
    std::copy_n(Y.data() + b * batch * ys, batch * ys, y);
  };
  TrainerConfig tc;
  tc.batch = B;
  tc.loss = setup.loss.loss;
  tc.loss_classes = setup.loss.classes;
  tc.restore_best = false;
  threads_configure(threads);
  FitLog log;
  auto train = [&](int64_t steps) {
    tc.steps = steps;
    tc.eval_every = steps;
    return trainer_run<float>(*net, tc, source, val, log, replica).last_train_loss;
  };
  const int warm = std::max(o.warmup, 4);
  train(warm / 2);
  const double t0 = wall_s();
  train(warm - warm / 2);
  const double per_step = (wall_s() - t0) / double(warm - warm / 2);
  const int64_t steps =
      std::max<int64_t>(3, std::llround(o.rep_seconds / std::max(per_step, 1e-7)));

  std::vector<double> rate, cpu_rate;
  double last_loss = 0;
  for (int r = 0; r < o.reps; ++r) {
    const double w0 = wall_s(), c0 = cpu_s();
    last_loss = train(steps);
    const double w = wall_s() - w0, cp = cpu_s() - c0;
    rate.push_back(double(steps) / w);
    cpu_rate.push_back(double(steps) / std::max(cp, 1e-9));
  }
  threads_configure(1);
  std::printf("trainer config=%s model=%s batch=%lld threads=%d reps=%d steps_per_rep=%lld "
              "steps_per_s=%.2f steps_per_s_min=%.2f steps_per_s_max=%.2f cpu_steps_per_s=%.2f "
              "loss_last=%.9g\n",
              c.id.c_str(), c.model.c_str(), (long long)B, threads, o.reps, (long long)steps,
              median(rate), *std::min_element(rate.begin(), rate.end()),
              *std::max_element(rate.begin(), rate.end()), median(cpu_rate), last_loss);
  std::fflush(stdout);
}

int bench_main(int argc, char** argv) {
  const SubnormalsFlushed flush;  // as trainer_run computes (core/float_env.h)
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    ATTN_CHECK(i + 1 < argc,
               "bench_nn_train: " + a + " needs a value (see the header of bench_nn_train.cpp)");
    const std::string v = argv[++i];
    if (a == "--configs") {
      o.configs.clear();
      for (size_t p = 0; p <= v.size();) {
        const size_t q = std::min(v.find(',', p), v.size());
        o.configs.push_back(v.substr(p, q - p));
        p = q + 1;
      }
    } else if (a == "--reps") {
      o.reps = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--warmup") {
      o.warmup = std::max(2, std::atoi(v.c_str()));
    } else if (a == "--rep-seconds") {
      o.rep_seconds = std::atof(v.c_str());
    } else if (a == "--batches") {
      o.batches = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--seed") {
      o.seed = std::strtoull(v.c_str(), nullptr, 10);
    } else if (a == "--dump") {
      o.dump = v;
    } else if (a == "--trainer-threads") {
      for (size_t p = 0; p <= v.size();) {
        const size_t q = std::min(v.find(',', p), v.size());
        o.trainer_threads.push_back(std::max(1, std::atoi(v.substr(p, q - p).c_str())));
        p = q + 1;
      }
    } else if (a == "--isa-ab") {
      const size_t comma = v.find(',');
      const std::string second = comma == std::string::npos ? "" : v.substr(comma + 1);
      for (const std::string& name : {v.substr(0, comma), second}) {
        ATTN_CHECK(!name.empty(), "bench_nn_train: --isa-ab needs two copies, e.g. avx2,avx512");
        o.isa_ab.push_back(isa_choose(name.c_str()));
      }
    } else {
      throw UserError("bench_nn_train: unknown option " + a +
                      " (--configs, --reps, --warmup, --rep-seconds, --batches, --seed, --dump, "
                      "--trainer-threads, --isa-ab)");
    }
  }
  threads_configure(1);
  const double sgemm_rate = sgemm_gflops();
  std::printf("sgemm n=2048 threads=1 gflops=%.2f\n", sgemm_rate);
  std::printf("bench_nn_train: attnlab %s (%s) float32 threads=1 openblas_threads=%d "
              "openblas_core=%s isa=%s reps=%d warmup=%d rep_seconds=%g batches=%d\n",
              kVersion, kGitCommit, openblas_get_num_threads(), blas_core_name(),
              isa_name(isa_active()), o.reps, o.warmup, o.rep_seconds, o.batches);
  for (const std::string& id : o.configs) {
    const Config* c = nullptr;
    for (const Config& k : kConfigs)
      if (k.id == id) c = &k;
    ATTN_CHECK(c != nullptr, "bench_nn_train: unknown config '" + id +
                                 "' (a, b, c, d, e, f, g, h, i, t2, t3, t4, t5)");
    if (o.trainer_threads.empty()) run_config(*c, o, sgemm_rate);
    for (int t : o.trainer_threads) run_trainer_config(*c, o, t);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return attn::bench::run_main(bench_main, argc, argv); }
