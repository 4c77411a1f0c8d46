#!/usr/bin/python3
"""The fu2023 random-feature pipeline in numpy / scikit-learn: the baseline of
bench_rf_pipeline (bench/run_fu2023_pipeline.sh runs both on the same data and prints
the ratios).

The job is one `rfa` run point (spec §1.3, §1.6, §1.7), as attnlab does it: RFA features
of rf_target samples, ridge on centred labels in the dual (P = M·(d+1) > n_fit, the
formulation attnlab's `auto` solver picks), λ ∈ {1e-8, …, 1} chosen on the last 20 % of
the training set, test predictions at the chosen λ, the test NMSE along the whole λ path
(and at λ → 0⁺ where the variant can give it), and training-set predictions.

Shapes: X n × (N+1) × d (row 0 the query), W M × e × e (e = d+1), Φ n × M·e (head-major:
Φ[j, m·e + k]), K n_fit × n_fit, V P × L (one read-out column per λ).

Best formulation found for numpy (each stage prints its wall and CPU seconds):
  features    per block of B samples: U = X̃_0 [W_1 … W_M] (one GEMM), then batched
              np.matmul S = U_mat X̃_keysᵀ, relu/N in place, Φ = A X̃_keys written into Φ
  kernel      K = Φ Φᵀ / n_fit (numpy runs A @ A.T as dsyrk)
  solver variants (all four timed with --variants all; the fastest is the baseline):
    numpy_eigh   np.linalg.eigh (LAPACK dsyevd), one decomposition for every λ
    scipy_evd    scipy.linalg.eigh(driver="evd", overwrite_a=True), the same LAPACK call
                 without numpy's copies
    skl_kr       sklearn KernelRidge(kernel="precomputed") fitted once per λ (Cholesky)
    skl_ridge    sklearn Ridge(solver="cholesky", fit_intercept=False) on Φ with one
                 target column per λ and alpha = n_fit·λ per column (sklearn forms its own
                 K = Φ Φᵀ and loops Cholesky over the alphas): one call
  every variant then forms the primal read-out V = Φ_fitᵀ α_λ / n_fit for all λ (P × L),
  so that validation and test predictions are Φ V — O(n·P·L), no n_test × n_fit kernel.
Validation and test features are computed once and shared by the variants (the
read-out columns of all variants are applied in one pass); their time is charged to every
variant. The Cholesky variants cannot give the λ → 0⁺ (pseudo-inverse) point.

Threads: OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS are set from --threads
before numpy is imported. The environment's OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are not
touched here (the shell script unsets them on this command); the OpenBLAS core in use is
printed (threadpoolctl).

Usage: fu2023_pipeline_numpy.py --train TRAIN.npz --test TEST.npz [--weights W.npy]
         [--heads 1000] [--threads 1] [--variants all|fastest-of-list|NAME,NAME]
Data files: `attnlab data rf_target --n 8192 --set task.N=16 --set task.d=16
  --set task.target=pair_power --set task.p=2 -o TRAIN.npz` (and --first 1000000000
  --n 10000 for TEST.npz). W.npy: bench_rf_pipeline --weights-out (the same W as attnlab,
  so that the NMSE numbers match digit for digit); without it W is drawn here.
"""
import argparse
import os
import sys
import time

VARIANTS = ["numpy_eigh", "scipy_evd", "skl_kr", "skl_ridge"]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--train", required=True)
    p.add_argument("--test", required=True)
    p.add_argument("--weights", default="", help="W (M × e × e) .npy from bench_rf_pipeline")
    p.add_argument("--heads", type=int, default=1000, help="M when W is drawn here")
    p.add_argument("--seed", type=int, default=0, help="seed of W when drawn here")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--block", type=int, default=32, help="samples per feature block")
    p.add_argument("--val-fraction", type=float, default=0.2)
    p.add_argument("--variants", default="all",
                   help="comma-separated subset of " + ",".join(VARIANTS) + ", or all")
    p.add_argument("--dgemm", type=int, default=3072, help="reference dgemm size (0: skip)")
    a = p.parse_args()
    a.variants = VARIANTS if a.variants == "all" else a.variants.split(",")
    for v in a.variants:
        if v not in VARIANTS:
            p.error("unknown variant %r (known: %s)" % (v, ", ".join(VARIANTS)))
    return a


ARGS = parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402  (after the thread variables)

LAMBDAS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0]  # ridge defaults


class Clock:
    """Wall and process-CPU seconds (all threads) since construction."""

    def __init__(self):
        self.w, self.c = time.perf_counter(), time.process_time()

    def read(self):
        return time.perf_counter() - self.w, time.process_time() - self.c


def blas_info():
    try:
        import threadpoolctl
        infos = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
        return ", ".join("%s %s core=%s threads=%s" % (i.get("internal_api"), i.get("version"),
                                                        i.get("architecture"), i.get("num_threads"))
                         for i in infos) or "unknown"
    except ImportError:
        return "unknown (no threadpoolctl)"


def dgemm_rate(size):
    """a @ b (size³): GFLOP/s from the best wall time of 3, and per CPU second over all 3."""
    a = np.sin(0.001 * np.arange(size * size, dtype=np.float64)).reshape(size, size)
    b = np.cos(0.002 * np.arange(size * size, dtype=np.float64)).reshape(size, size)
    _ = a[:1024, :1024] @ b[:1024, :1024]  # warm up
    best = 1e300
    c0 = time.process_time()
    for _ in range(3):
        t0 = time.perf_counter()
        _ = a @ b
        best = min(best, time.perf_counter() - t0)
    cpu = time.process_time() - c0
    flops = 2.0 * size ** 3
    return flops / best * 1e-9, 3 * flops / cpu * 1e-9


def rfa_features(X, Wcat, M, e, block, out=None):
    """Φ (count × M·e) of samples X (count × T × d): relu scores, 1/N, x̃ = [x; 1]."""
    count, T, d = X.shape
    N = T - 1
    if out is None:
        out = np.empty((count, M * e))
    for lo in range(0, count, block):
        xb = X[lo:lo + block]
        b = xb.shape[0]
        q = np.empty((b, e))
        q[:, :d] = xb[:, 0]
        q[:, d] = 1.0
        keys = np.empty((b, N, e))
        keys[:, :, :d] = xb[:, 1:]
        keys[:, :, d] = 1.0
        U = (q @ Wcat).reshape(b, M, e)                 # U_mat of each sample, M × e
        S = np.matmul(U, keys.transpose(0, 2, 1))       # b × M × N scores
        np.maximum(S, 0.0, out=S)
        S *= 1.0 / N
        np.matmul(S, keys, out=out[lo:lo + b].reshape(b, M, e))
    return out


def nmse(pred, y):
    return float(np.mean((pred - y) ** 2) / np.var(y))


def main():
    a = ARGS
    print("fu2023_pipeline_numpy: numpy %s, python %s, threads=%d, BLAS: %s" %
          (np.__version__, sys.version.split()[0], a.threads, blas_info()))
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if var in os.environ:
            print("note: %s=%s is set (it selects/tunes the OpenBLAS kernel)" % (var, os.environ[var]))
    if a.dgemm > 0:
        print("dgemm %d^3 numpy a @ b, %d thread(s): %.1f GFLOP/s wall (best of 3), %.1f per CPU-s" %
              ((a.dgemm, a.threads) + dgemm_rate(a.dgemm)))
    sys.stdout.flush()

    shared = {}  # stage -> (wall, cpu)

    def timed(name, fn, store=shared):
        clk = Clock()
        r = fn()
        store[name] = clk.read()
        return r

    # ---- data
    def load():
        tr, te = np.load(a.train), np.load(a.test)
        return tr["X"], tr["Y"].reshape(tr["Y"].shape[0], -1)[:, 0], te["X"], \
            te["Y"].reshape(te["Y"].shape[0], -1)[:, 0]
    X, Y, Xt, Yt = timed("data", load)
    n, T, d = X.shape
    e = d + 1
    if a.weights:
        W = np.load(a.weights)
        w_source = a.weights
    else:
        W = np.random.default_rng(a.seed).standard_normal((a.heads, e, e)) * 0.5  # w_var 1/4
        w_source = "drawn here (seed %d)" % a.seed
    M = W.shape[0]
    P = M * e
    Wcat = np.ascontiguousarray(W.transpose(1, 0, 2).reshape(e, P))  # e × M·e
    n_val = int(np.floor(a.val_fraction * n + 0.5))
    n_fit = n - n_val
    L = len(LAMBDAS)
    print("job: n=%d (fit %d, val %d) n_test=%d N=%d d=%d M=%d P=%d, W %s" %
          (n, n_fit, n_val, Xt.shape[0], T - 1, d, M, P, w_source))

    y_mean = Y[:n_fit].mean()
    yc_fit = Y[:n_fit] - y_mean

    # ---- shared: features of the fit split, the kernel
    Phi = timed("features", lambda: rfa_features(X[:n_fit], Wcat, M, e, a.block))

    def kernel():
        K = Phi @ Phi.T                                # dsyrk
        K *= 1.0 / n_fit
        return K
    K = timed("kernel", kernel)

    # ---- solver variants: dual coefficients α_λ (n_fit × L [+ min-norm]) -> V (P × ...)
    per_variant = {}
    readouts = {}
    eps = np.finfo(np.float64).eps

    def spectral(w, Q):
        floor = max(w.max(), 0.0) * n_fit * eps
        C = Q.T @ yc_fit
        G = np.empty((n_fit, L + 1))
        for l, lam in enumerate(LAMBDAS + [0.0]):
            if lam <= floor:
                G[:, l] = np.where(w > floor, 1.0 / np.where(w > floor, w, 1.0), 0.0)
            else:
                G[:, l] = 1.0 / (np.maximum(w, 0.0) + lam)
        return Q @ (G * C[:, None])

    def readout(alpha):
        return (Phi.T @ alpha) * (1.0 / n_fit)         # P × columns

    for v in a.variants:
        st = {}
        if v == "numpy_eigh":
            w, Q = timed("eig", lambda: np.linalg.eigh(K), st)
            readouts[v] = timed("solve", lambda: readout(spectral(w, Q)), st)
            del w, Q
        elif v == "scipy_evd":
            import scipy.linalg
            Kc = K.copy()  # the copy is not timed: overwrite_a keeps K for the other variants
            w, Q = timed("eig", lambda: scipy.linalg.eigh(Kc, driver="evd", overwrite_a=True,
                                                           check_finite=False), st)
            readouts[v] = timed("solve", lambda: readout(spectral(w, Q)), st)
            del w, Q, Kc
        elif v == "skl_kr":
            from sklearn.kernel_ridge import KernelRidge

            def kr_loop():
                alpha = np.empty((n_fit, L))
                for l, lam in enumerate(LAMBDAS):
                    alpha[:, l] = KernelRidge(alpha=lam, kernel="precomputed").fit(K, yc_fit).dual_coef_
                return readout(alpha)
            readouts[v] = timed("solve", kr_loop, st)
        elif v == "skl_ridge":
            from sklearn.linear_model import Ridge

            def ridge_call():
                r = Ridge(alpha=n_fit * np.array(LAMBDAS), fit_intercept=False, solver="cholesky")
                r.fit(Phi, np.repeat(yc_fit[:, None], L, axis=1))
                return np.ascontiguousarray(r.coef_.T)  # P × L
            # Forms its own K: the shared kernel stage is replaced by this call.
            readouts[v] = timed("solve", ridge_call, st)
            st["kernel"] = (0.0, 0.0)
        per_variant[v] = st
        sys.stdout.flush()

    # ---- shared: validation features and the λ choice of every variant
    cols = np.concatenate([readouts[v] for v in a.variants], axis=1)
    offsets, off = {}, 0
    for v in a.variants:
        offsets[v] = off
        off += readouts[v].shape[1]

    def validation():
        F = rfa_features(X[n_fit:], Wcat, M, e, a.block)
        return F, F @ cols + y_mean
    Phi_val, pred_val = timed("lambda_val", validation)
    chosen = {}
    val_mse = {}
    for v in a.variants:
        mses = [float(np.mean((pred_val[:, offsets[v] + l] - Y[n_fit:]) ** 2)) for l in range(L)]
        chosen[v] = int(np.argmin(mses))
        val_mse[v] = mses

    # ---- shared: test features streamed through all read-out columns
    def test_pass():
        out = np.empty((Xt.shape[0], cols.shape[1]))
        F = np.empty((512, P))
        for lo in range(0, Xt.shape[0], 512):
            b = min(512, Xt.shape[0] - lo)
            rfa_features(Xt[lo:lo + b], Wcat, M, e, a.block, out=F[:b])
            out[lo:lo + b] = F[:b] @ cols
        return out + y_mean
    pred_test = timed("predict_test", test_pass)

    def train_pass():
        return {v: np.concatenate([Phi @ cols[:, offsets[v] + chosen[v]],
                                   Phi_val @ cols[:, offsets[v] + chosen[v]]]) + y_mean
                for v in a.variants}
    pred_train = timed("predict_train", train_pass)

    # ---- report
    order = ["data", "features", "kernel", "eig", "lambda_val", "predict_test", "path_test",
             "predict_train"]
    totals = {}
    for v in a.variants:
        st = per_variant[v]
        print("variant %s" % v)
        rows = {}
        for name in order:
            if name in ("eig",):
                if "eig" in st:
                    rows[name] = st["eig"]
                continue
            if name == "lambda_val":
                sw, sc = st["solve"]
                vw, vc = shared["lambda_val"]
                rows[name] = (sw + vw, sc + vc)
                continue
            if name == "kernel" and "kernel" in st:
                rows[name] = st["kernel"]
                continue
            if name == "path_test":
                rows[name] = (0.0, 0.0)  # every λ column came out of predict_test's pass
                continue
            rows[name] = shared[name]
        note = {
            "data": "np.load of the two .npz files",
            "features": "%d samples, block %d" % (n_fit, a.block),
            "kernel": "Phi @ Phi.T (dsyrk)" if v != "skl_ridge" else "inside sklearn Ridge (lambda_val)",
            "eig": "dsyevd n=%d" % n_fit,
            "lambda_val": "solve %.2f s + validation features/predictions %.2f s" %
                          (st["solve"][0], shared["lambda_val"][0]),
            "predict_test": "test features + Phi @ V for every λ (all variants' columns)",
            "path_test": "in predict_test",
            "predict_train": "stored Phi @ V",
        }
        tw = sum(r[0] for r in rows.values())
        tc = sum(r[1] for r in rows.values())
        totals[v] = (tw, tc)
        for name in order:
            if name in rows:
                print("stage %-14s %9.3f s  cpu %9.3f s | %s" % (name, rows[name][0], rows[name][1],
                                                                 note[name]))
        print("stage %-14s %9.3f s  cpu %9.3f s | end to end (W load/draw excluded)" % ("total", tw, tc))
        lam = LAMBDAS[chosen[v]]
        print("result lambda_chosen %.3g val_mse %.10g" % (lam, val_mse[v][chosen[v]]))
        print("result test_nmse %.10g train_nmse %.10g" %
              (nmse(pred_test[:, offsets[v] + chosen[v]], Yt), nmse(pred_train[v], Y)))
        for l in range(L):
            print("result val_mse_path lambda=%.0e %.10g" % (LAMBDAS[l], val_mse[v][l]))
        for l in range(L):
            print("result test_nmse_path lambda=%.0e %.10g" %
                  (LAMBDAS[l], nmse(pred_test[:, offsets[v] + l], Yt)))
        if readouts[v].shape[1] > L:
            print("result test_nmse_minnorm %.10g" % nmse(pred_test[:, offsets[v] + L], Yt))
        else:
            print("result test_nmse_minnorm nan (a Cholesky λ loop has no pseudo-inverse point)")
    best = min(totals, key=lambda v: totals[v][0])
    print("baseline %s (fastest end to end: %.3f s wall, %.3f s cpu)" % (best, *totals[best]))
    print("result data_checksum train_y_sum=%.12g test_y_sum=%.12g" % (Y.sum(), Yt.sum()))


if __name__ == "__main__":
    main()
