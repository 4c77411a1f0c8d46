#!/usr/bin/python3
"""Match2 and Match3 under uniform tokens: how often a position is positive, and how close the
nearest non-matching sum comes (docs/sanford2023.md, "Why Match3 is not learned").

Table 1, positive rate. Tokens i.i.d. uniform on [M] (`attnlab data TASK --set
task.sampling=uniform`), witnesses not necessarily distinct (the tasks' default). Measured over
--n sequences against the formulas: Match2, position i is negative iff −x_i is no token (x_i = 0
matches itself, M odd), so P(positive) = 1 − (1 − 1/M)^N ≈ N/M exactly; Match3, the N(N+1)/2
unordered pairs {j1, j2} each hit −x_i with probability 1/M, so P(positive) ≈ 1 − exp(−N(N+1)/(2M)),
a function of M/N² (the Poisson approximation, ignoring that pairs share tokens).

Table 2, margins, at the M the shipped protocol uses (the smallest prime ≥ max(N+1, 10N²)) and
its balanced sampling (`attnlab data TASK` defaults). For position i the nearest miss is the
smallest angle 2π·|s|/M (s the sum, reduced to (−M/2, M/2]) over the non-matching sums
s = x_i + x_j (Match2) or x_i + x_j1 + x_j2 (Match3), and its margin 1 − cos(angle): the gap
between a match's score cos 0 = 1 and the best non-match's score. Printed: the median over
positions and the median over sequences of the per-sequence minimum.

Usage: scripts/match_rates.py [--N 8,16,32] [--ratios 0.25,0.5,0.72,1,2,10] [--n 1000]
                              [--attnlab build/attnlab] [--work DIR]
Exit 0, or 2 on a bad argument or a failing attnlab command (one line on stderr).
"""
import argparse
import math
import os
import tempfile

import numpy as np

from script_cli import fail as _fail, number_list, run_cli

TOOL = "match_rates"


def fail(msg):
    _fail(TOOL, msg)


def attnlab(cli, *args):
    return run_cli(TOOL, cli, *args)



def is_prime(m):
    return m >= 2 and all(m % k for k in range(2, int(math.isqrt(m)) + 1))


def prime_at_least(m):
    while not is_prime(m):
        m += 1
    return m


def tokens(cli, task, N, M, n, work, uniform):
    path = os.path.join(work, f"{task}_{N}_{M}_{'u' if uniform else 'b'}.npz")
    args = [cli, "data", task, "--n", str(n), "--seed", "0", "--set", f"task.N={N}", "--set",
            f"task.M={M}", "-q", "-o", path]
    if uniform:
        args += ["--set", "task.sampling=uniform"]
    attnlab(*args)
    d = np.load(path)
    return d["tokens"].astype(np.int64), d["Y"][:, :, 0]


def predicted_rate(task, N, M):
    return 1 - (1 - 1 / M) ** N if task == "match2" else 1 - math.exp(-N * (N + 1) / (2 * M))


def nearest_miss_margins(task, x, M):
    """(n, N) margins 1 − cos(2π s/M) of the closest non-matching sum per position."""
    sums = x[:, :, None] + x[:, None, :]  # (n, N, N): x_i + x_j
    if task == "match3":
        sums = sums[:, :, :, None] + x[:, None, None, :]  # x_i + x_j1 + x_j2
    r = np.mod(sums, M).reshape(x.shape[0], x.shape[1], -1)
    dist = np.minimum(r, M - r).astype(float)
    dist[dist == 0] = np.inf  # matches are not misses
    return 1 - np.cos(2 * math.pi * dist.min(axis=2) / M)



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--N", default="8,16,32")
    ap.add_argument("--ratios", default="0.25,0.5,0.72,1,2,10", help="M/N² of table 1")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--attnlab", default="build/attnlab")
    ap.add_argument("--work", help="scratch directory (default: a temporary one)")
    a = ap.parse_args()
    Ns, ratios = number_list(TOOL, a.N, "N", int), number_list(TOOL, a.ratios, "ratios")
    if not os.access(a.attnlab, os.X_OK):
        fail(f"--attnlab {a.attnlab}: not an executable; build it (make build) or pass its path")
    if a.n < 1 or min(Ns) < 2 or min(ratios) <= 0:
        fail("--n must be >= 1, --N >= 2 and --ratios > 0")
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or tmp
        os.makedirs(work, exist_ok=True)
        print("Positive rate under uniform tokens (measured / formula):")
        print("| N | M/N² | M | Match2 | Match3 |")
        print("|---|---|---|---|---|")
        for N in Ns:
            for ratio in ratios:
                M = prime_at_least(max(N + 1, math.ceil(ratio * N * N)))
                cells = []
                for task in ("match2", "match3"):
                    _, y = tokens(a.attnlab, task, N, M, a.n, work, uniform=True)
                    cells.append(f"{y.mean():.3f} / {predicted_rate(task, N, M):.3f}")
                print(f"| {N} | {M / N ** 2:.2f} | {M} | {cells[0]} | {cells[1]} |", flush=True)
        print()
        print("Nearest-miss margin 1 − cos(angle) at the shipped M, balanced sampling:")
        print("| N | M | task | positive rate | median over positions | median per-sequence minimum |")
        print("|---|---|---|---|---|---|")
        for N in Ns:
            M = prime_at_least(max(N + 1, 10 * N * N))
            for task in ("match2", "match3"):
                x, y = tokens(a.attnlab, task, N, M, a.n, work, uniform=False)
                g = nearest_miss_margins(task, x, M)
                print(f"| {N} | {M} | {task} | {y.mean():.3f} | {np.median(g):.2e} | "
                      f"{np.median(g.min(axis=1)):.2e} |", flush=True)


if __name__ == "__main__":
    main()
