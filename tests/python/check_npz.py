#!/usr/bin/env python3
"""numpy reads what `attnlab data` writes, and the labels check out when recomputed in numpy.

Usage: check_npz.py ATTNLAB_BINARY TMPDIR. Exits 77 (ctest: skipped) if numpy is missing.
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not importable by", sys.executable, "(install python3-numpy)")
    sys.exit(77)

binary, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def generate(task, n, *sets):
    path = os.path.join(tmp, f"py_{task}.npz")
    args = [binary, "data", task, "--n", str(n), "--seed", "4", "-q", "-o", path]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True)
    return np.load(path, allow_pickle=False)


# qsa: shapes, dtypes, meta, and targets recomputed from z and sets.
d = generate("qsa", 50, "task.N=10", "task.q=3", "task.d_out=2")
meta = json.loads(str(d["meta"]))
check(meta["task"] == "qsa" and meta["params"]["q"] == 3 and meta["n"] == 50, f"qsa meta {meta}")
check(d["X"].shape == (50, 10, 2 + 20) and d["X"].dtype == np.float64, f"qsa X {d['X'].shape}")
check(d["Y"].shape == (50, 10, 2), "qsa Y shape")
check(d["z"].shape == (50, 10, 2) and d["sets"].shape == (50, 10, 3), "qsa raw shapes")
check(d["sets"].dtype == np.int64, "qsa sets dtype")
expected = d["z"][np.arange(50)[:, None, None], d["sets"]].mean(axis=2)
check(np.allclose(d["Y"], expected, atol=1e-14), "qsa targets differ from numpy's recomputation")
multi_hot = np.zeros((50, 10, 10))
np.put_along_axis(multi_hot, d["sets"], 1.0, axis=2)
check(np.array_equal(d["X"][:, :, 2:12], multi_hot), "qsa multi-hot encoding")
check(np.array_equal(d["X"][:, :, 12:], np.broadcast_to(np.eye(10), (50, 10, 10))), "qsa one-hot i")

# match2: labels recomputed by brute force.
d = generate("match2", 40, "task.N=8", "task.M=13", "task.encoding=scalar")
tok = d["tokens"]
check(tok.shape == (40, 8) and tok.dtype == np.int64, "match2 tokens")
brute = ((tok[:, :, None] + tok[:, None, :]) % 13 == 0).any(axis=2).astype(float)
check(np.array_equal(d["Y"][:, :, 0], brute), "match2 labels differ from numpy brute force")
check(np.array_equal(d["X"][:, :, 0], tok.astype(float)), "match2 scalar encoding")

# rf_target: the pair_power target from X and the constant beta.
d = generate("rf_target", 30, "task.N=5", "task.d=4", "task.p=3")
X = d["X"]
check(X.shape == (30, 6, 4) and d["Y"].shape == (30, 1, 1), "rf_target shapes")
check(d["beta"].shape == (4,) and abs(np.linalg.norm(d["beta"]) - 1) < 1e-12, "rf_target beta")
t = np.einsum("nd,nkd->nk", X[:, 0], X[:, 1:]) * np.sqrt(4)
check(np.allclose(d["Y"][:, 0, 0], (t ** 3).mean(axis=1), rtol=1e-12), "rf_target pair_power p=3")
check(json.loads(str(d["meta"]))["constants"] == ["beta"], "rf_target meta constants")

if failures:
    for f in failures:
        print("FAIL:", f)
    sys.exit(1)
print("numpy read and verified qsa, match2, rf_target datasets")
