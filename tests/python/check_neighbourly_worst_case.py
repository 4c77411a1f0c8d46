#!/usr/bin/env python3
"""scripts/neighbourly_worst_case.py: its closed-form worst gap equals the minimum over every
q-subset and non-member (brute force, N ≤ 10), its worst-case dataset is what it claims (sets,
inputs, targets), and its bits search returns the first p at which the construction succeeds.

Usage: check_neighbourly_worst_case.py ATTNLAB_BINARY SOURCE_DIR TMPDIR.
Exits 77 (ctest: skipped) if numpy is missing.
"""
import itertools
import math
import os

import script_check

wc, binary, source, tmp = script_check.load("neighbourly_worst_case")  # exits 77 without numpy
import numpy as np  # noqa: E402

check = script_check.Checks()


def gap_ref(S, N, j):
    """P_S(θ_j) by the product formula with cos, as src/constructions/neighbourly.cpp."""
    return math.prod(1 - math.cos(2 * math.pi * (j - l) / N) for l in S)


# The closed form is the minimum over every set and every non-member.
for N in range(3, 11):
    for q in range(1, N):
        brute = min(gap_ref(S, N, j) for S in itertools.combinations(range(N), q)
                    for j in range(N) if j not in S)
        got = wc.worst_gap(N, q)
        check(abs(got - brute) <= 1e-12 * brute, f"N={N} q={q}: worst_gap {got} != brute force {brute}")
        # Row i of worst_sets attains it at its non-member i.
        rows = wc.worst_sets(N, q)
        for i in range(N):
            check(i not in rows[i] and len(set(rows[i])) == q, f"N={N} q={q} row {i}: {rows[i]}")
            g = min(gap_ref(rows[i], N, j) for j in range(N) if j not in rows[i])
            check(abs(g - brute) <= 1e-12 * brute, f"N={N} q={q} row {i}: gap {g} != {brute}")
# The example: N = 256, q = 4, j ± 1, j ± 2.
check(abs(wc.worst_gap(256, 4) - 1.32e-13) < 0.01e-13, f"N=256 q=4: {wc.worst_gap(256, 4)}")

# The worst-case dataset: multi-hot inputs, sets and qSA targets agree.
path = os.path.join(tmp, "worst_N16_q2.npz")
wc.write_worst_dataset(binary, 16, 2, 3, 0, path)
d = np.load(path)
z, sets, X, Y = d["z"], d["sets"], d["X"], d["Y"]
check((sets == wc.worst_sets(16, 2)[None]).all(), "dataset sets are not the worst-case sets")
hot = X[:, :, 4:4 + 16]
check(all(sorted(np.flatnonzero(hot[b, i])) == list(sets[b, i]) for b in range(3) for i in range(16)),
      "multi-hot part of X does not hold the sets")
check((X[:, :, 20:] == np.eye(16)[None]).all(), "one-hot positions changed")
check(np.allclose(Y, z[np.arange(3)[:, None, None], sets].mean(axis=2)), "targets are not qSA(z, sets)")

# The bits search: p succeeds, p − 1 fails, exact succeeds.
work = os.path.join(tmp, "bits")
os.makedirs(work, exist_ok=True)
p = wc.bits_needed(binary, path, work)
check(p > 2, f"bits_needed {p}")
check(wc.success_rate(binary, path, 0, work) == 1.0, "exact arithmetic fails on the worst case")
check(wc.success_rate(binary, path, p, work) == 1.0, f"fails at the bits_needed {p}")
check(wc.success_rate(binary, path, p - 1, work) < 1.0, f"succeeds below bits_needed {p}")

check.finish("worst gap = brute force for N <= 10, worst-case dataset, bits search")
