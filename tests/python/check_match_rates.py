#!/usr/bin/env python3
"""scripts/match_rates.py: the Match2 rate formula is exact (all M^N token tuples of tiny sizes,
labelled by `attnlab data`'s own rule recomputed here), the Match3 approximation is close to
what `attnlab data` samples, and the nearest-miss margins equal a brute-force loop.

Usage: check_match_rates.py ATTNLAB_BINARY SOURCE_DIR TMPDIR.
Exits 77 (ctest: skipped) if numpy is missing.
"""
import itertools
import math

import script_check

mr, binary, source, tmp = script_check.load("match_rates")  # exits 77 without numpy
import numpy as np  # noqa: E402

check = script_check.Checks()


# Match2: the exact rate over every tuple (non-distinct witnesses, M odd).
for N, M in [(2, 5), (3, 5), (4, 7), (3, 9)]:
    pos = total = 0
    for x in itertools.product(range(M), repeat=N):
        for i in range(N):
            pos += any((x[i] + x[j]) % M == 0 for j in range(N))
            total += 1
    check(abs(pos / total - mr.predicted_rate("match2", N, M)) < 1e-12,
          f"match2 N={N} M={M}: exact {pos / total} vs formula {mr.predicted_rate('match2', N, M)}")

# Match3: the approximation against attnlab's uniform samples (N = 16, M ≈ N²), and the labels
# of those samples against the definition.
x, y = mr.tokens(binary, "match3", 16, 257, 400, tmp, uniform=True)
check(abs(y.mean() - mr.predicted_rate("match3", 16, 257)) < 0.03,
      f"match3 N=16 M=257: measured {y.mean()} vs formula {mr.predicted_rate('match3', 16, 257)}")
for b in range(5):
    for i in range(16):
        want = any((x[b, i] + x[b, j] + x[b, k]) % 257 == 0 for j in range(16) for k in range(16))
        check(bool(y[b, i]) == want, f"match3 label of sequence {b} position {i}")

# Nearest-miss margins against a loop.
rng = np.random.default_rng(0)
for task, k in (("match2", 1), ("match3", 2)):
    M, N = 101, 6
    xs = rng.integers(0, M, size=(3, N))
    g = mr.nearest_miss_margins(task, xs, M)
    for b in range(3):
        for i in range(N):
            best = math.inf
            for js in itertools.product(range(N), repeat=k):
                s = (xs[b, i] + sum(xs[b, j] for j in js)) % M
                if s:
                    best = min(best, 1 - math.cos(2 * math.pi * min(s, M - s) / M))
            check(abs(g[b, i] - best) < 1e-15, f"{task} margin of sequence {b} position {i}: {g[b, i]} vs {best}")

check(mr.prime_at_least(2560) == 2579 and mr.prime_at_least(640) == 641, "prime_at_least")

check.finish("Match2 rate exact, Match3 rate close, margins = brute force")
