#!/usr/bin/python3
"""A fitted qSA model on the DISJ hard instances with the value law matched (docs/constructions.md, E5).

The DISJ instances (`task.instances = disj`) differ from random inputs in two ways: the query
row's set (one slot of each of the q pairs) and the values (every z = ±e₁, almost all −e₁, so
most targets are nearly constant). To tell the two apart this script evaluates a model saved by
`attnlab fit` on four test sets of the same size and seed range, built with `attnlab data qsa`
(multi-hot encoding) and numpy:

  random                  random sets, random values (the task's default)
  disj                    DISJ sets, DISJ values (the hard instances as shipped)
  disj sets, random values  the DISJ sets with the random set's values z (targets recomputed)
  random sets, disj values  the random sets with the DISJ values

and prints, per set, the mean over sequences of the max-position error (the spec's metric), the
query row's (position 2q) mean error with its standard error, and the mean error of the other rows.

Usage: scripts/disj_matched_values.py --model FILE --N 16 --q 4 --d-out 2 [--n 2000] [--seed 0]
                                      [--first 1000000] [--attnlab build/attnlab] [--work DIR]
Exit 0, or 2 on a bad argument or a failing attnlab command (one line on stderr).
"""
import argparse
import os
import tempfile

import numpy as np

from script_cli import fail as _fail, run_cli

TOOL = "disj_matched_values"


def fail(msg):
    _fail(TOOL, msg)


def attnlab(cli, *args):
    return run_cli(TOOL, cli, *args)




def remake(base, z, sets, d_out):
    """base's arrays with values z and sets (n, N, q): inputs and targets rebuilt."""
    out = dict(base)
    X = base["X"].copy()
    n, N, _ = X.shape
    X[:, :, :d_out] = z
    X[:, :, d_out:d_out + N] = 0.0
    for b in range(n):
        for i in range(N):
            X[b, i, d_out + sets[b, i]] = 1.0
    out["X"], out["z"], out["sets"] = X, z, sets
    out["Y"] = z[np.arange(n)[:, None, None], sets].mean(axis=2)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a model saved by `attnlab fit` on qsa data")
    ap.add_argument("--N", type=int, required=True)
    ap.add_argument("--q", type=int, required=True)
    ap.add_argument("--d-out", type=int, required=True)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--first", type=int, default=1000000, help="first sample index (default: disjoint from a fit on the first 10^6)")
    ap.add_argument("--attnlab", default="build/attnlab")
    ap.add_argument("--work", help="scratch directory (default: a temporary one)")
    a = ap.parse_args()
    if not os.access(a.attnlab, os.X_OK):
        fail(f"--attnlab {a.attnlab}: not an executable; build it (make build) or pass its path")
    if not os.path.exists(a.model):
        fail(f"--model {a.model}: no such file; make one with `attnlab fit attention ... --save FILE`")
    if a.N < 2 * a.q + 1 or a.n < 2:
        fail(f"--N {a.N} --q {a.q} --n {a.n}: DISJ needs N >= 2q + 1, and n >= 2")
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or tmp
        os.makedirs(work, exist_ok=True)
        base = ["--n", str(a.n), "--seed", str(a.seed), "--first", str(a.first), "--set", f"task.N={a.N}",
                "--set", f"task.q={a.q}", "--set", f"task.d_out={a.d_out}", "-q"]
        paths = {k: os.path.join(work, f"{k}.npz") for k in ("random", "disj")}
        attnlab(a.attnlab, "data", "qsa", *base, "-o", paths["random"])
        attnlab(a.attnlab, "data", "qsa", *base, "--set", "task.instances=disj", "-o", paths["disj"])
        r, d = dict(np.load(paths["random"])), dict(np.load(paths["disj"]))
        sets = {"random": r, "disj": d,
                "disj sets, random values": remake(d, r["z"], d["sets"], a.d_out),
                "random sets, disj values": remake(r, d["z"], r["sets"], a.d_out)}
        query = 2 * a.q
        print(f"| test inputs | mean max error | query row (position {query}) | other rows |")
        print("|---|---|---|---|")
        for k, data in enumerate(sets.values()):
            path = os.path.join(work, f"set{k}.npz")
            np.savez(path, **data)
            pred_path = os.path.join(work, f"pred{k}.npz")
            attnlab(a.attnlab, "predict", "--model", a.model, "--in", path, "-o", pred_path, "-q")
            err = np.linalg.norm(np.load(pred_path)["Y_pred"] - data["Y"], axis=2)  # (n, N)
            qe = err[:, query]
            print(f"| {list(sets)[k]} | {err.max(axis=1).mean():.3f} | {qe.mean():.4f} ± "
                  f"{qe.std(ddof=1) / np.sqrt(len(qe)):.4f} | {np.delete(err, query, axis=1).mean():.3f} |")


if __name__ == "__main__":
    main()
