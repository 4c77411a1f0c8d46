#!/usr/bin/python3
"""Would one GEMM for a lockstep group's first layers pay? (issue #21, "many small models at once")

In a lockstep group (sanford2023 E1: six attention units, m = 1 … 32, the same seed and task)
every run's φ starts with the same first layer shape, 68 → 128, on the same inputs X (one
32-sample chunk: 1024 token rows × 68). So the k runs' products X·W_r could be one GEMM
X·[W_1 … W_k], and their weight gradients Xᵀ·G_r one GEMM Xᵀ·[G_1 … G_k]. This times both ways
through numpy's OpenBLAS (the library attnlab links), one thread, process CPU time, best of 5
repetitions, three rounds, and checks whether the fused product's columns equal the separate
products bit for bit (they must, for stored results to stay bit for bit those of separate
training).

  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OPENBLAS_VERBOSE=2 bench/fuse_first_layer.py
  OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1 OPENBLAS_VERBOSE=2 bench/fuse_first_layer.py
(OPENBLAS_VERBOSE=2 makes OpenBLAS print the core it picked.)
"""
import argparse
import time

import numpy as np


def best_cpu_seconds(f, reps):
    f()
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        for _ in range(reps):
            f()
        best = min(best, (time.process_time() - t0) / reps)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1024, help="token rows of one chunk (32 samples × N = 32)")
    ap.add_argument("--in-dim", type=int, default=68, help="input width (d' + 2N = 68 for qsa N = 32, d' = 4)")
    ap.add_argument("--out-dim", type=int, default=128, help="φ's hidden width")
    ap.add_argument("--runs", type=int, default=6, help="runs in the group (E1: six values of m)")
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((a.rows, a.in_dim), dtype=np.float32)
    Ws = [rng.standard_normal((a.in_dim, a.out_dim), dtype=np.float32) for _ in range(a.runs)]
    Gs = [rng.standard_normal((a.rows, a.out_dim), dtype=np.float32) for _ in range(a.runs)]
    Wf, Gf = np.concatenate(Ws, axis=1), np.concatenate(Gs, axis=1)
    cols = [slice(r * a.out_dim, (r + 1) * a.out_dim) for r in range(a.runs)]
    same_fwd = all(np.array_equal((X @ Wf)[:, c], X @ W) for c, W in zip(cols, Ws))
    same_grad = all(np.array_equal((X.T @ Gf)[:, c], X.T @ G) for c, G in zip(cols, Gs))
    flops = 2 * a.rows * a.in_dim * a.out_dim * a.runs
    print(f"shape: {a.runs} × ({a.rows} × {a.in_dim}) · ({a.in_dim} × {a.out_dim}); fused columns bit for bit "
          f"the separate products: forward {same_fwd}, weight gradient {same_grad}")
    for r in range(a.rounds):
        sep = best_cpu_seconds(lambda: [X @ W for W in Ws], a.reps)
        fus = best_cpu_seconds(lambda: X @ Wf, a.reps)
        sepg = best_cpu_seconds(lambda: [X.T @ G for G in Gs], a.reps)
        fusg = best_cpu_seconds(lambda: X.T @ Gf, a.reps)
        print(f"round {r}: forward separate {sep * 1e6:.0f} µs ({flops / sep / 1e9:.0f} GFLOP/s), fused "
              f"{fus * 1e6:.0f} µs ({flops / fus / 1e9:.0f} GFLOP/s), separate/fused {sep / fus:.2f}; weight gradient "
              f"separate {sepg * 1e6:.0f} µs, fused {fusg * 1e6:.0f} µs, separate/fused {sepg / fusg:.2f}")


if __name__ == "__main__":
    main()
