#!/usr/bin/env python3
"""The error floor behind sep2025 E1's bar: predicting the link g of q-sparse token retrieval
from fewer than q linear mixtures of the q pointed tokens.

A head whose attention weights do not depend on the token values outputs a linear mixture of the
tokens it attends to. With H heads, ψ sees at most H linear measurements s_h = Σ_j M[h, j] z_j
(the same weights for every coordinate of the d-dimensional tokens) of the q pointed tokens
z_1 … z_q ~ N(0, I_d). The best predictor of y = g(z_1, …, z_q) from them leaves
E Var(y | s) unexplained; divided by Var(y) (pooled over the output coordinates, as attnlab's
test_nmse) it is the NMSE floor of every such model. Writing M's null space with orthonormal
directions W (q × r, r = q − H) and its complement B, z = B u + W t with u ~ N(0, I_{H×d}) and
t ~ N(0, I_{r×d}), and

  floor(g, H) = min over W of  E_u Var_t g(B u + W t) / Var g(z).

- product (coordinate-wise z_1 ⊙ … ⊙ z_q; Var 1 per coordinate): each coordinate is the scalar
  problem, and both expectations are exact by Gauss–Hermite quadrature (the integrand is a
  polynomial of degree at most 2q in each variable: q + 1 points are exact). Closed form at
  q = 2, H = 1: 1 − 2α²β² for s = αa + βb, minimum 1/2 (--check tests both).
- relu_net (sep2025's random ReLU link, drawn per dataset seed): its weights come from
  `attnlab data sparse_retrieval` (constants link_w1, link_w2); both expectations by Monte Carlo
  (fixed draws, so the minimisation sees a smooth function; the variance inside is the unbiased
  one), the minimum then re-estimated on fresh draws.

  /usr/bin/python3 scripts/retrieval_floor.py product [--q-max 4]
  /usr/bin/python3 scripts/retrieval_floor.py relu_net --attnlab build/attnlab [--seeds 0,1,2]
  /usr/bin/python3 scripts/retrieval_floor.py --check [--attnlab build/attnlab]
Prints one line per case: the floor (relu_net: ± the Monte Carlo standard error of the
re-estimate) and the unmeasured directions that attain it. The random stream runs through the
seeds and q in the order printed, so a number is reproduced by the whole command.
"""
import argparse
import itertools
import os
import sys
import tempfile

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.optimize import minimize

from script_cli import number_list, run_cli

TOOL = "retrieval_floor"


def quadrature(dim, points):
    """Nodes (P, dim) and weights (P,) of the tensor Gauss–Hermite rule for N(0, I_dim)."""
    x, w = hermegauss(points)
    w = w / w.sum()
    nodes = np.array(list(itertools.product(x, repeat=dim))).reshape(-1, dim)
    weights = np.array([np.prod(c) for c in itertools.product(w, repeat=dim)])
    return nodes, weights


def split(W):
    """An orthonormal basis B (q × (q − r)) of the complement of W's columns (q × r)."""
    q, r = W.shape
    full, _ = np.linalg.qr(np.hstack([W, np.eye(q)]))
    return full[:, r:q]


def product_conditional_variance(W, points):
    """E_u Var_t(prod(B u + W t)) for one coordinate: exact by quadrature."""
    q, r = W.shape
    u, wu = quadrature(q - r, points)
    t, wt = quadrature(r, points)
    z = (u @ split(W).T)[:, None, :] + (t @ W.T)[None, :, :]  # (U, T, q)
    y = np.prod(z, axis=2)
    mean = y @ wt
    return float(wu @ ((y * y) @ wt - mean * mean))


def relu_net(w1, w2, z):
    """g(z) for z (..., q, d): W2 relu(W1 [z_1; …; z_q]), the task's own layout."""
    u = z.reshape(*z.shape[:-2], -1)
    return np.maximum(u @ w1.T, 0.0) @ w2.T


def conditional_variances(W, g, u, t):
    """Var_t g(B u + W t) summed over g's output coordinates, per draw of u: (U,). Monte Carlo:
    u (U, H, d) and t (U, T, r, d) standard normal, t drawn afresh for every u (draws of t
    shared by all u would bias every estimate alike: the mean over u would not average their
    error out, and its standard error would not show it); g maps (..., q, d) to (..., d_out)."""
    z = (np.einsum("jh,uhk->ujk", split(W), u)[:, None]
         + np.einsum("js,utsk->utjk", W, t))
    return g(z).var(axis=1, ddof=1).sum(axis=-1)  # g(z): (U, T, d_out)


def relu_conditional_variance(W, w1, w2, u, t):
    """E_u Var_t g(B u + W t) for the relu_net link (Monte Carlo draws u, t)."""
    return float(conditional_variances(W, lambda z: relu_net(w1, w2, z), u, t).mean())


def minimise(objective, q, r, restarts, rng):
    """The smallest objective(W) over `restarts` Nelder–Mead starts, and its W."""
    best = (np.inf, None)

    def directions(x):
        return np.linalg.qr(x.reshape(q, r))[0]

    for _ in range(restarts):
        res = minimize(lambda x: objective(directions(x)), rng.standard_normal(q * r),
                       method="Nelder-Mead",
                       options={"maxiter": 2000, "xatol": 1e-6, "fatol": 1e-10})
        if res.fun < best[0]:
            best = (res.fun, directions(res.x))
    return best


def product_floor(q, H, restarts, rng):
    return minimise(lambda W: product_conditional_variance(W, q + 1), q, q - H, restarts, rng)


def retrieval_sample(attnlab, seed, q, d, width, n):
    """n samples of sparse_retrieval (relu_net link, Gaussian tokens, N = 8) from `attnlab data`:
    the npz's arrays (X, Y, z, sets, link_w1, link_w2)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "link.npz")
        run_cli(TOOL, attnlab, "data", "sparse_retrieval", "--n", str(n), "--seed", str(seed),
                "--set", f"task.q={q}", "--set", f"task.d={d}", "--set", "task.N=8",
                "--set", "task.link=relu_net", "--set", f"task.link_width={width}",
                "--set", "task.z_dist=gaussian", "-q", "-o", out)
        with np.load(out) as f:
            return {k: f[k] for k in f.files if k != "meta"}


def link_weights(attnlab, seed, q, d, width):
    """link_w1 (width, q·d) and link_w2 (d, width) of the dataset seed, from `attnlab data`."""
    f = retrieval_sample(attnlab, seed, q, d, width, 1)
    return f["link_w1"].reshape(width, q * d), f["link_w2"].reshape(d, width)


def relu_floor(w1, w2, q, d, H, restarts, rng):
    """(floor as an NMSE, W): minimised on one set of draws, re-estimated on fresh ones."""
    r = q - H

    def draws(n_u, n_t):
        return rng.standard_normal((n_u, H, d)), rng.standard_normal((n_u, n_t, r, d))

    u, t = draws(300, 100)
    _, W = minimise(lambda W: relu_conditional_variance(W, w1, w2, u, t), q, r, restarts, rng)
    u, t = draws(2000, 400)
    per_u = conditional_variances(W, lambda z: relu_net(w1, w2, z), u, t)
    y = relu_net(w1, w2, rng.standard_normal((400000, q, d)))
    pooled = d * y.var()  # as test_nmse's: the variance over every entry about their mean
    return per_u.mean() / pooled, per_u.std(ddof=1) / np.sqrt(len(per_u)) / pooled, W


def check(attnlab):
    """The product quadrature against its closed form at q = 2 and the minimiser's minimum 1/2;
    the Monte Carlo estimator the relu_net floor uses against the quadrature (product link); with
    a CLI, relu_net() against the targets `attnlab data` writes."""
    for angle in np.linspace(0.05, 1.5, 7):
        a, b = np.cos(angle), np.sin(angle)
        W = np.array([[b], [-a]])  # unmeasured direction; measured: a·z_1 + b·z_2
        got, want = product_conditional_variance(W, 3), 1 - 2 * a * a * b * b
        if abs(got - want) > 1e-12:
            print(f"retrieval_floor: q = 2, measured {a:.3f}·z1 + {b:.3f}·z2: {got} against {want}")
            return 1
    got = product_floor(2, 1, 4, np.random.default_rng(0))[0]
    if abs(got - 0.5) > 1e-6:
        print(f"retrieval_floor: floor(2, 1) = {got}, the closed form's minimum is 0.5")
        return 1
    rng = np.random.default_rng(1)
    W = np.linalg.qr(rng.standard_normal((3, 1)))[0]  # q = 3, H = 2, d = 1
    per_u = conditional_variances(W, lambda z: np.prod(z, axis=-2), rng.standard_normal(
        (4000, 2, 1)), rng.standard_normal((4000, 100, 1, 1)))
    exact, se = product_conditional_variance(W, 4), per_u.std(ddof=1) / np.sqrt(len(per_u))
    if abs(per_u.mean() - exact) > 4 * se:
        print(f"retrieval_floor: Monte Carlo {per_u.mean():.4f} ± {se:.4f} against the exact "
              f"{exact:.4f} (product, q = 3, H = 2)")
        return 1
    print("retrieval_floor: quadrature equals 1 − 2a²b² at q = 2; floor(2, 1) = 0.5; Monte Carlo "
          f"{per_u.mean():.4f} ± {se:.4f} against the exact {exact:.4f} (q = 3, H = 2)")
    if attnlab:
        f = retrieval_sample(attnlab, 0, 3, 4, 32, 50)
        pointed = np.take_along_axis(f["z"][:, None], f["sets"][..., None], axis=2)
        gap = np.abs(relu_net(f["link_w1"], f["link_w2"], pointed) - f["Y"]).max()
        if gap > 1e-12:
            print(f"retrieval_floor: relu_net differs from attnlab data's targets by {gap}")
            return 1
        print(f"retrieval_floor: relu_net equals attnlab data's targets (max difference {gap})")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("link", nargs="?", choices=["product", "relu_net"])
    ap.add_argument("--q-max", type=int, default=4)
    ap.add_argument("--d", type=int, default=4, help="token dimension (relu_net)")
    ap.add_argument("--width", type=int, default=32, help="task.link_width (relu_net)")
    ap.add_argument("--seeds", default="0,1,2", help="dataset seeds (relu_net)")
    ap.add_argument("--attnlab", default=None,
                    help="the CLI (relu_net's weights; default build/attnlab; with --check: "
                         "also test relu_net against its targets)")
    ap.add_argument("--restarts", type=int, default=4)
    ap.add_argument("--fewer", action="store_true", help="also H < q − 1")
    ap.add_argument("--check", action="store_true",
                    help="test the quadrature against the closed form at q = 2 and exit")
    args = ap.parse_args()
    if args.check:
        return check(args.attnlab)  # relu_net against its targets only when a CLI is named
    if args.link is None:
        ap.error("give a link (product or relu_net) or --check")
    rng = np.random.default_rng(0)
    for q in range(2, args.q_max + 1):
        heads = range(q - 1, 0, -1) if args.fewer else [q - 1]
        for H in heads:
            if args.link == "product":
                value, W = product_floor(q, H, args.restarts, rng)
                print(f"product q = {q}, H = {H}: floor {value:.4f}  "
                      f"(unmeasured directions {np.round(W.T, 3).tolist()})")
                continue
            for seed in number_list(TOOL, args.seeds, "seeds", int):
                w1, w2 = link_weights(args.attnlab or "build/attnlab", seed, q, args.d,
                                      args.width)
                value, se, W = relu_floor(w1, w2, q, args.d, H, args.restarts, rng)
                print(f"relu_net seed {seed} q = {q}, H = {H}: floor {value:.4f} ± {se:.4f}  "
                      f"(unmeasured directions {np.round(W.T, 3).tolist()})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
