#!/usr/bin/python3
"""PyTorch trains the lockstep slice's six attention units one after another: the
researcher's baseline for bench/lockstep_slice.sh --torch (issue #21).

The same set as the attnlab spec of bench/lockstep_slice.sh: qsa N = 32, q = 4, d' = 4
(multi-hot encoding, d_in = d' + 2N = 68, one output per position); the attention unit of
bench/sanford2023_train_torch.py (imported, not copied: phi = Linear(68, 128) -> ReLU ->
Linear(128, m), Q, K in R^{m x m}, V in R^{m x d'}, learned temperature, psi linear on
[phi(x_i); a_i]; 1 head) for m = 1, 2, 4, 8, 16, 32, trained in turn, each for --steps Adam
steps (lr 1e-3, PyTorch's defaults otherwise) on MSE with a fresh batch of 256 every step,
as `attnlab run` does with train.n = 0. Like attnlab's trainer: the validation loss on 1024
samples every --eval-every steps and at the last step, the parameters of the best one kept,
then the test MSE on 2000 samples. The batches are drawn here with torch (qsa_batch below,
written from docs/tasks.md §3: z_i uniform on the sphere, y_i a uniform q-subset of [N],
i in y_i allowed, target (1/q) sum_{j in y_i} z_j); the same distribution and encoding as
attnlab's qsa, not its random stream. float32, torch.set_num_threads(1) (and OMP / OPENBLAS /
MKL_NUM_THREADS = 1, set by the imported module before torch loads).

Prints one "model" line per m (parameters, seconds, time spent drawing batches, losses) and
a "total" line (wall and process CPU seconds inside Python, from before the first model to
after the last; the run script times the whole process from outside).

Usage: sanford2023_group_torch.py [--steps 1000] [--ms 1,2,4,8,16,32] [--eval-every 1000]
         [--seed 0]
"""
import argparse
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sanford2023_train_torch import AttentionUnit, F, torch  # noqa: E402 (exits 0 without torch)

N, Q, D_OUT, BATCH, VAL_N, TEST_N, EVAL_BATCH = 32, 4, 4, 256, 1024, 2000, 1024


def qsa_batch(gen, n):
    """n qsa samples (docs/tasks.md §3, multi_hot): x (n, N, d' + 2N), y (n, N, d')."""
    z = torch.randn(n, N, D_OUT, generator=gen)
    z = z / z.norm(dim=-1, keepdim=True)  # uniform on the unit sphere
    # A uniform q-subset per token: the q largest of N uniforms (topk: half argsort's time here).
    sets = torch.rand(n, N, N, generator=gen).topk(Q, dim=-1, sorted=False).indices
    hot = torch.zeros(n, N, N).scatter_(-1, sets, 1.0)  # hot[b, i, j] = 1{j in y_i}
    x = torch.cat([z, hot, torch.eye(N).expand(n, N, N)], dim=-1)
    return x, hot @ z / Q


def mse(model, x, y):
    with torch.no_grad():
        return sum(F.mse_loss(model(x[k:k + EVAL_BATCH]), y[k:k + EVAL_BATCH], reduction="sum").item()
                   for k in range(0, len(x), EVAL_BATCH)) / y.numel()


def train(m, steps, eval_every, gen, val, test):
    model = AttentionUnit(2 * N + D_OUT, D_OUT, m, heads=1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    best, best_state, t_sample = float("inf"), None, 0.0
    t0 = time.perf_counter()
    for step in range(1, steps + 1):
        s0 = time.perf_counter()
        x, y = qsa_batch(gen, BATCH)
        t_sample += time.perf_counter() - s0
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % eval_every == 0 or step == steps:
            val_loss = mse(model, *val)
            if val_loss < best:
                best, best_state = val_loss, {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    test_mse = mse(model, *test)
    params = sum(p.numel() for p in model.parameters())
    print(f"model m={m} params={params} seconds={time.perf_counter() - t0:.2f} "
          f"sample_seconds={t_sample:.2f} last_train_loss={loss.item():.5f} best_val_loss={best:.5f} "
          f"test_mse={test_mse:.5f}", flush=True)


def openblas_core():
    """The OpenBLAS kernel torch's BLAS uses (torch links the system libblas.so.3)."""
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line and ".so" in line}
    for lib in sorted(libs):
        try:
            fn = ctypes.CDLL(lib).openblas_get_corename
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_char_p
        return fn().decode()
    return "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--ms", default="1,2,4,8,16,32")
    p.add_argument("--eval-every", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)  # the initial weights
    gen = torch.Generator().manual_seed(args.seed + 1)  # the samples
    val, test = qsa_batch(gen, VAL_N), qsa_batch(gen, TEST_N)
    print(f"sanford2023_group_torch: torch {torch.__version__} threads={torch.get_num_threads()} "
          f"openblas_core={openblas_core()} steps={args.steps} batch={BATCH} N={N} q={Q} d_out={D_OUT} "
          f"eval_every={args.eval_every} val_n={VAL_N} test_n={TEST_N}", flush=True)
    w0, c0 = time.perf_counter(), time.process_time()
    for m in (int(v) for v in args.ms.split(",")):
        train(m, args.steps, args.eval_every, gen, val, test)
    print(f"total wall_s={time.perf_counter() - w0:.2f} cpu_s={time.process_time() - c0:.2f}")


if __name__ == "__main__":
    main()
