#!/usr/bin/python3
"""The worst case of the neighbourly qSA construction (spec sanford2023 §3.2), per (N, q).

The gap of a set S at a non-member j is P_S(θ_j) = Π_{l∈S} f((l − j) mod N) with
f(k) = 1 − cos(2πk/N) = 2 sin²(πk/N) > 0 for k ≢ 0. The offsets (l − j) mod N form a q-subset of
{1, …, N−1} and every q-subset occurs, so the smallest gap over all sets is the product of the q
smallest f(k): the set of the q nearest neighbours of a non-member, j ± 1, j ± 2, … (closed form
below, checked against all q-subsets by tests/python/check_neighbourly_worst_case.py). The gaps of
experiments/constructions/e3_qsa_neighbourly.toml are minima over sampled sets: upper bounds on
this worst case.

For each (N, q) the script prints the worst gap Δ, the β of the temperature rule for it
(β = beta_factor · ln(2(N−q)/(qε))/Δ, ε = 1/(4q), the construction's defaults) and the bits the
construction needs when every row of a sequence has a worst-case set (row i: the q nearest
neighbours of i), measured with build/attnlab: `data qsa` draws the values z, this script
rewrites the sets, targets and inputs, and `fit construction` / `predict` at p bits give the
success rate; the fewest p ∈ [2, 53] at which every sequence succeeds is found by bisection, as
the construction's own bits_needed (−1: exact arithmetic or 53 bits fail). With --sampled DIR
(a run directory of e3_qsa_neighbourly) it adds the sampled minimum gap and bits_needed (min–max
over the seeds) from DIR/results.csv.

Usage: scripts/neighbourly_worst_case.py [--N 16,64,256] [--q 1,2,3,4] [--n 2] [--sampled DIR]
                                         [--attnlab build/attnlab] [--work DIR]
Exit 0, or 2 on a bad argument or a failing attnlab command (one line on stderr).
"""
import argparse
import csv
import math
import os
import re
import tempfile

import numpy as np

from script_cli import fail as _fail, number_list, run_cli

TOOL = "neighbourly_worst_case"


def fail(msg):
    _fail(TOOL, msg)


def attnlab(cli, *args):
    return run_cli(TOOL, cli, *args)


def offsets(N, q):
    """The q offsets k ∈ {1..N−1} with the smallest f(k): ±1, ±2, … (the last one +⌈q/2⌉ for odd q)."""
    out = []
    for k in range(1, N):
        for s in (k, N - k):
            if len(out) < q and s not in out:
                out.append(s)
    return out


def factor(k, N):
    """f(k) = 1 − cos(2πk/N), written as 2 sin²(πk/N) (no cancellation for small k/N)."""
    return 2.0 * math.sin(math.pi * k / N) ** 2


def worst_gap(N, q):
    """min over all q-subsets S of [N] of min_{j∉S} P_S(θ_j) (1 ≤ q < N)."""
    return math.prod(factor(k, N) for k in offsets(N, q))


def worst_sets(N, q):
    """(N, q) int64: row i holds the sorted worst-case set around the non-member i."""
    return np.array([sorted((i + k) % N for k in offsets(N, q)) for i in range(N)], dtype=np.int64)


def beta(N, q, gap, beta_factor=1.05):
    eps = 1.0 / (4 * q)
    return beta_factor * math.log(2 * (N - q) / (q * eps)) / gap




def write_worst_dataset(cli, N, q, n, seed, path):
    """A qsa dataset (multi-hot encoding) whose rows all have worst-case sets."""
    attnlab(cli, "data", "qsa", "--n", str(n), "--seed", str(seed), "--set", f"task.N={N}",
            "--set", f"task.q={q}", "--set", "task.d_out=4", "-o", path)
    d = dict(np.load(path))
    d_out = d["z"].shape[2]
    sets = np.broadcast_to(worst_sets(N, q), (n, N, q)).copy()
    X = d["X"].copy()
    X[:, :, d_out:d_out + N] = 0.0
    for b in range(n):
        for i in range(N):
            X[b, i, d_out + sets[b, i]] = 1.0
    d["X"], d["sets"] = X, sets
    d["Y"] = d["z"][np.arange(n)[:, None, None], sets].mean(axis=2)
    np.savez(path, **d)


def success_rate(cli, data, bits, work):
    model = os.path.join(work, "c.safetensors")
    attnlab(cli, "fit", "construction", "--in", data, "--set", "model.construction=qsa_neighbourly",
            "--set", f"model.bits={bits}", "--save", model, "-q")
    out = attnlab(cli, "predict", "--model", model, "--in", data, "-o", os.path.join(work, "p.npz"))
    m = re.search(r"test_success_rate (\S+)", out)
    if not m:
        fail(f"predict printed no test_success_rate: {out.strip()[-300:]}")
    return float(m.group(1))


def bits_needed(cli, data, work):
    """Fewest p ∈ [2, 53] with every sequence right (bisection, success assumed monotone in p)."""
    ok = lambda p: success_rate(cli, data, p, work) == 1.0
    if not ok(0) or not ok(53):
        return -1
    lo, hi = 2, 53
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi


def sampled(directory):
    """{(N, q): (min margin_min, min bits_needed, max bits_needed)} over the seeds of DIR."""
    path = os.path.join(directory, "results.csv")
    if not os.path.exists(path):
        fail(f"--sampled {directory}: no results.csv there; run experiments/constructions/"
             "e3_qsa_neighbourly.toml with --out DIR first")
    out = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if row.get("status", "ok") not in ("ok", "done", ""):
                continue
            key = (int(row["task.N"]), int(row["task.q"]))
            gap, bits = float(row["margin_min"]), int(float(row["bits_needed"]))
            g, lo, hi = out.get(key, (math.inf, 99, -99))
            out[key] = (min(g, gap), min(lo, bits), max(hi, bits))
    return out



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--N", default="16,64,256")
    ap.add_argument("--q", default="1,2,3,4")
    ap.add_argument("--n", type=int, default=2, help="sequences per (N, q) for the bits (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sampled", help="run directory of e3_qsa_neighbourly (adds the sampled minima)")
    ap.add_argument("--attnlab", default="build/attnlab")
    ap.add_argument("--work", help="scratch directory (default: a temporary one)")
    a = ap.parse_args()
    Ns, qs = number_list(TOOL, a.N, "N", int), number_list(TOOL, a.q, "q", int)
    if not os.access(a.attnlab, os.X_OK):
        fail(f"--attnlab {a.attnlab}: not an executable; build it (make build) or pass its path")
    if a.n < 1:
        fail(f"--n {a.n}: needs at least 1 sequence")
    for N in Ns:
        for q in qs:
            if not 1 <= q < N:
                fail(f"--q {q} with --N {N}: needs 1 <= q < N")
    samp = sampled(a.sampled) if a.sampled else {}
    head = "| N | q | worst Δ | worst set (non-member 0) | β for it | bits needed (worst) |"
    rule = "|---|---|---|---|---|---|"
    if samp:
        head += " sampled min Δ | sampled bits |"
        rule += "---|---|"
    print(head)
    print(rule)
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or tmp
        os.makedirs(work, exist_ok=True)
        for N in Ns:
            for q in qs:
                gap = worst_gap(N, q)
                data = os.path.join(work, f"worst_N{N}_q{q}.npz")
                write_worst_dataset(a.attnlab, N, q, a.n, a.seed, data)
                bits = bits_needed(a.attnlab, data, work)
                members = ", ".join(str(s) for s in sorted(offsets(N, q)))
                line = f"| {N} | {q} | {gap:.2e} | {{{members}}} | {beta(N, q, gap):.2g} | {bits} |"
                if samp:
                    if (N, q) in samp:
                        g, lo, hi = samp[(N, q)]
                        line += f" {g:.2e} | {lo if lo == hi else f'{lo}–{hi}'} |"
                    else:
                        line += " – | – |"
                print(line, flush=True)


if __name__ == "__main__":
    main()
