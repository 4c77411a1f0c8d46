#!/usr/bin/env python3
"""RFA vs RFMLP sample complexity from Python (a small version of Fu et al. 2023, Fig. 1 /
experiments/fu2023/e1_rfa_vs_rfmlp.toml).

Both models get the same number of trainable parameters (RFMLP's width 0 matches M heads
of RFA); the target is rf_target's pair_power with p = 1 on N = 16 keys in d = 8. RFA,
which averages over the keys like the target, should need far fewer samples. Every
number comes from attnlab's C++ core; Python only loops, averages and plots.

Usage: /usr/bin/python3 examples/rfa_vs_rfmlp.py [OUT.png]   (about 5 s on one core)
Needs `import attnlab` to work: `make python` once (docs/python.md), or
PYTHONPATH=build/python.
"""
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import attnlab  # noqa: E402

TASK = dict(N=16, d=8, target="pair_power", p=1)
HEADS = 64                       # RFA: 64 heads x (d+1) = 576 trainable values; RFMLP: 576 features
SIZES = [128, 256, 512, 1024, 2048]
SEEDS = [0, 1, 2]
LAMBDAS = np.logspace(-8, 0, 9)  # ridge penalties, chosen on 20 % held-out samples (the spec default)


def main(out):
    start = time.time()
    curves = {}
    for name in ("rfa", "rfmlp"):
        curves[name] = np.zeros((len(SEEDS), len(SIZES)))
        for s, seed in enumerate(SEEDS):
            # Nested training sets (samples 0..n-1) and one test set far away (index 10^6).
            train = attnlab.sample("rf_target", n=max(SIZES), seed=seed, **TASK)
            test = attnlab.sample("rf_target", n=2000, seed=seed, first=10**6, **TASK)
            for k, n in enumerate(SIZES):
                m = attnlab.model(name, seed=seed, heads=HEADS)
                m.fit(train["X"][:n], train["Y"][:n], lambdas=LAMBDAS)
                curves[name][s, k] = attnlab.metrics(m.predict(test["X"]), test["Y"])["nmse"]
            print(f"{name} seed {seed}: test NMSE " +
                  "  ".join(f"n={n}: {v:.3g}" for n, v in zip(SIZES, curves[name][s])))

    fig, ax = plt.subplots(figsize=(5, 3.6))
    for name, c in curves.items():
        mean, sd = c.mean(axis=0), c.std(axis=0, ddof=1)
        ax.plot(SIZES, mean, marker="o", label=name.upper())
        ax.fill_between(SIZES, np.maximum(mean - sd, c.min(axis=0)), mean + sd, alpha=0.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training samples n")
    ax.set_ylabel("test NMSE")
    ax.set_title(f"rf_target pair_power p=1, N={TASK['N']}, d={TASK['d']}, M={HEADS}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out} in {time.time() - start:.1f} s")
    return curves


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "rfa_vs_rfmlp.png")
