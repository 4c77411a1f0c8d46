#!/usr/bin/python3
"""Training-step throughput of the sanford2023 networks in PyTorch: the baseline of
bench_nn_train (bench/run_sanford2023_train.sh runs both and prints the ratios).

The same configurations as bench_nn_train.cpp (qsa shapes, multi-hot encoding
d_in = d' + 2N, one output per position):
  a  attention unit, N = 32, d' = 4, m = 16, 1 head, batch 64 (the paper-scale unit)
  b  attention unit, N = 32, d' = 4, m = 64, 4 heads, batch 256
  c  LSTM, length 32, d' = 4, hidden 128, 1 layer, batch 256
  k  config c with the shipped experiments' head: [h_T; x_i] → 128 (ReLU) → d'
  d, e  attention unit, N = 32, d' = 4, m = 16 / 32, 1 head, batch 256
  f  third-order unit, N = 16, d' = 4, m = 16, 1 head, batch 256
  t2 … t5  the k-hop experiments' causal transformer (hop task: N = 64, one-hot input width 9,
     6 classes, cross-entropy), m = 128, 4 heads, 2 … 5 layers, learned positions, batch 32
with attnlab's defaults: φ = Linear(d_in, 128) → ReLU → Linear(128, m); per head
Q, K ∈ R^{m×m}, V ∈ R^{m×d'} (no bias), scores exp(τ)·q kᵀ with τ learned, heads summed;
ψ = Linear(m + d', d') on [φ(x_i); a_i]. LSTM: nn.LSTM with b_hh frozen at 0 (attnlab folds
PyTorch's two biases into one, so the trainable parameter counts match), head
Linear(hidden + d_in, d') on [h_T; x_i]. Third order: Q, K1, K2 ∈ R^{m×m}, V1, V2 ∈ R^{m×d'}
per head, scores exp(τ)·Σ_l q_il k1_jl k2_kl softmaxed over the N² pairs (j, k), output
Σ p_ijk v1_j ∘ v2_k, computed as attnlab does (the pair keys q_i ∘ k1_j against k2 in one
batched matmul). Transformer: φ = Linear(13, m) + learned positions (N, m); per layer pre-LayerNorm
(eps 1e-5), per head Q, K, V ∈ R^{m×m} (no bias), causal softmax(exp(τ)·q kᵀ) v, heads summed,
residual; pre-LayerNorm MLP m → 4m → m (ReLU), residual; ψ = Linear(m, 6). Written as a researcher would: nn.Module,
F.mse_loss, torch.optim.Adam(lr=1e-3) with its defaults, zero_grad / backward / step,
float32, torch.set_num_threads(1), subnormals flushed to zero (torch.set_flush_denormal(True)),
as attnlab's trainer computes (src/core/float_env.h).

Timing as in bench_nn_train: warm-up steps, then repetitions of about --rep-seconds each
(wall and process CPU time); steps/s is the median; one more repetition gives the phase
split (forward / loss / backward incl. zero_grad / optimiser). Output lines
"result config=... key=value ..." and "phases config=...".

--data DIR: start from attnlab's initial weights and train on its batches
(DIR/<config>.npz from `bench_nn_train --dump DIR`); the first steps' losses are compared
with attnlab's (a "check" line) — the same architecture and the same Adam give the same
losses to float32 rounding. Without it the weights and qsa-like batches are drawn here.
Parameter counts (trainable) are printed; the run script checks they equal attnlab's.

Threads: OMP/OPENBLAS/MKL_NUM_THREADS are set to 1 before torch is imported. The
OPENBLAS_CORETYPE environment is left as given (the run script unsets it for both
programs); the OpenBLAS core in use is printed when threadpoolctl is available.
Without torch (Debian: python3-torch) this prints a message and exits 0.

Usage: sanford2023_train_torch.py [--configs a,b,c] [--reps 7] [--warmup 20]
         [--rep-seconds 1] [--batches 8] [--seed 0] [--data DIR]
"""
import argparse
import os
import statistics
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:
    print(f"sanford2023_train_torch.py: skipped, {sys.executable} cannot import torch/numpy ({e}); "
          "install python3-torch (scripts/install-deps --bench)")
    sys.exit(0)

# id: (model, N, d_out, m, heads, hidden, batch)
CONFIGS = {"a": ("attention", 32, 4, 16, 1, 0, 64),
           "b": ("attention", 32, 4, 64, 4, 0, 256),
           "c": ("lstm", 32, 4, 0, 0, 128, 256),
           "d": ("attention", 32, 4, 16, 1, 0, 256),
           "e": ("attention", 32, 4, 32, 1, 0, 256),
           "f": ("third_order", 16, 4, 16, 1, 0, 256),
           "g": ("attention", 64, 4, 128, 1, 0, 256),
           "h": ("attention", 64, 4, 64, 1, 0, 256),
           "i": ("attention", 16, 4, 64, 1, 0, 256),
           "k": ("lstm", 32, 4, 0, 0, 128, 256),
           "l": ("lstm", 16, 4, 0, 0, 128, 256)}
HEAD_WIDTH = {"k": 128, "l": 128}  # LSTM configs with an MLP head (else linear)
HOP_D_IN = 13  # A + k_max + 1 with A = 4, k_max = 8
LAYERS = {}
for _l in (2, 3, 4, 5):
    CONFIGS[f"t{_l}"] = ("transformer", 64, 6, 128, 4, 0, 32)
    LAYERS[f"t{_l}"] = _l
CHECK_STEPS = 5


class AttentionUnit(nn.Module):
    def __init__(self, d_in, d_out, m, heads, phi_width=128):
        super().__init__()
        self.heads = heads
        self.phi = nn.Sequential(nn.Linear(d_in, phi_width), nn.ReLU(), nn.Linear(phi_width, m))
        self.q = nn.Linear(m, heads * m, bias=False)
        self.k = nn.Linear(m, heads * m, bias=False)
        self.v = nn.Linear(m, heads * d_out, bias=False)
        self.log_temperature = nn.Parameter(torch.zeros(1))
        self.psi = nn.Linear(m + d_out, d_out)

    def forward(self, x):  # x (B, N, d_in) -> (B, N, d_out)
        B, N, _ = x.shape
        f = self.phi(x)
        q, k, v = (p(f).view(B, N, self.heads, -1).transpose(1, 2) for p in (self.q, self.k, self.v))
        scores = self.log_temperature.exp() * (q @ k.transpose(-2, -1))  # (B, H, N, N)
        a = (scores.softmax(dim=-1) @ v).sum(dim=1)  # heads summed: (B, N, d_out)
        return self.psi(torch.cat([f, a], dim=-1))

    def attnlab_names(self):  # attnlab tensor -> (torch parameter, transpose?)
        return {"phi.w0": (self.phi[0].weight, True), "phi.b0": (self.phi[0].bias, False),
                "phi.w1": (self.phi[2].weight, True), "phi.b1": (self.phi[2].bias, False),
                "q": (self.q.weight, True), "k": (self.k.weight, True), "v": (self.v.weight, True),
                "log_temperature": (self.log_temperature, False),
                "psi.w0": (self.psi.weight, True), "psi.b0": (self.psi.bias, False)}


class ThirdOrderUnit(nn.Module):
    def __init__(self, d_in, d_out, m, heads, phi_width=128):
        super().__init__()
        self.heads = heads
        self.phi = nn.Sequential(nn.Linear(d_in, phi_width), nn.ReLU(), nn.Linear(phi_width, m))
        for name in ("q", "k1", "k2"):
            setattr(self, name, nn.Linear(m, heads * m, bias=False))
        for name in ("v1", "v2"):
            setattr(self, name, nn.Linear(m, heads * d_out, bias=False))
        self.log_temperature = nn.Parameter(torch.zeros(1))
        self.psi = nn.Linear(m + d_out, d_out)

    def forward(self, x):  # x (B, N, d_in) -> (B, N, d_out)
        B, N, _ = x.shape
        f = self.phi(x)
        q, k1, k2, v1, v2 = (getattr(self, n)(f).view(B, N, self.heads, -1).transpose(1, 2)
                             for n in ("q", "k1", "k2", "v1", "v2"))
        pair = (q.unsqueeze(3) * k1.unsqueeze(2)).flatten(2, 3)  # (B, H, N·N, dk): q_i ∘ k1_j
        s = self.log_temperature.exp() * (pair @ k2.transpose(-2, -1))  # (B, H, N·N, N)
        p = s.view(B, self.heads, N, N * N).softmax(dim=-1).view(B, self.heads, N * N, N)
        w = (p @ v2).view(B, self.heads, N, N, -1)  # Σ_k p_ijk v2_k
        a = (w * v1.unsqueeze(2)).sum(dim=3).sum(dim=1)  # Σ_j v1_j ∘ w_ij, heads summed
        return self.psi(torch.cat([f, a], dim=-1))

    def attnlab_names(self):
        names = {"phi.w0": (self.phi[0].weight, True), "phi.b0": (self.phi[0].bias, False),
                 "phi.w1": (self.phi[2].weight, True), "phi.b1": (self.phi[2].bias, False),
                 "log_temperature": (self.log_temperature, False),
                 "psi.w0": (self.psi.weight, True), "psi.b0": (self.psi.bias, False)}
        for n in ("q", "k1", "k2", "v1", "v2"):
            names[n] = (getattr(self, n).weight, True)
        return names


class CausalTransformer(nn.Module):
    def __init__(self, d_in, d_out, N, m, heads, layers):
        super().__init__()
        self.heads = heads
        self.phi = nn.Linear(d_in, m)
        self.pos = nn.Parameter(torch.zeros(N, m))
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            blk = nn.Module()
            blk.q, blk.k, blk.v = (nn.Linear(m, heads * m, bias=False) for _ in range(3))
            blk.log_temperature = nn.Parameter(torch.zeros(1))
            blk.ln1, blk.ln2 = nn.LayerNorm(m, eps=1e-5), nn.LayerNorm(m, eps=1e-5)
            blk.mlp = nn.Sequential(nn.Linear(m, 4 * m), nn.ReLU(), nn.Linear(4 * m, m))
            self.blocks.append(blk)
        self.psi = nn.Linear(m, d_out)
        self.register_buffer("mask", torch.ones(N, N, dtype=torch.bool).triu(1))

    def forward(self, x):  # x (B, N, d_in) -> (B, N, d_out) logits
        B, N, _ = x.shape
        h = self.phi(x) + self.pos
        for blk in self.blocks:
            u = blk.ln1(h)
            q, k, v = (p(u).view(B, N, self.heads, -1).transpose(1, 2) for p in (blk.q, blk.k, blk.v))
            s = blk.log_temperature.exp() * (q @ k.transpose(-2, -1))
            s = s.masked_fill(self.mask, float("-inf"))
            h = h + (s.softmax(dim=-1) @ v).sum(dim=1)
            h = h + blk.mlp(blk.ln2(h))
        return self.psi(h)

    def attnlab_names(self):
        names = {"phi.w0": (self.phi.weight, True), "phi.b0": (self.phi.bias, False),
                 "pos": (self.pos, False),
                 "psi.w0": (self.psi.weight, True), "psi.b0": (self.psi.bias, False)}
        for i, blk in enumerate(self.blocks):
            p = f"layer{i}."
            names.update({p + "q": (blk.q.weight, True), p + "k": (blk.k.weight, True),
                          p + "v": (blk.v.weight, True),
                          p + "log_temperature": (blk.log_temperature, False),
                          p + "ln1.gamma": (blk.ln1.weight, False), p + "ln1.beta": (blk.ln1.bias, False),
                          p + "ln2.gamma": (blk.ln2.weight, False), p + "ln2.beta": (blk.ln2.bias, False),
                          p + "mlp.w0": (blk.mlp[0].weight, True), p + "mlp.b0": (blk.mlp[0].bias, False),
                          p + "mlp.w1": (blk.mlp[2].weight, True), p + "mlp.b1": (blk.mlp[2].bias, False)})
        return names


class LstmReadout(nn.Module):
    def __init__(self, d_in, d_out, hidden, head_width=0):
        super().__init__()
        self.lstm = nn.LSTM(d_in, hidden, batch_first=True)
        with torch.no_grad():
            self.lstm.bias_hh_l0.zero_()
        self.lstm.bias_hh_l0.requires_grad_(False)  # one bias, as attnlab's
        if head_width:
            self.head = nn.Sequential(nn.Linear(hidden + d_in, head_width), nn.ReLU(),
                                      nn.Linear(head_width, d_out))
        else:
            self.head = nn.Linear(hidden + d_in, d_out)

    def forward(self, x):  # x (B, N, d_in) -> (B, N, d_out)
        _, (h, _) = self.lstm(x)
        s = h[-1].unsqueeze(1).expand(-1, x.shape[1], -1)  # final state at every position
        return self.head(torch.cat([s, x], dim=-1))

    def attnlab_names(self):
        names = {"lstm0.wx": (self.lstm.weight_ih_l0, True),
                 "lstm0.wh": (self.lstm.weight_hh_l0, True),
                 "lstm0.b": (self.lstm.bias_ih_l0, False)}
        linears = [self.head[0], self.head[2]] if isinstance(self.head, nn.Sequential) else [self.head]
        for l, lin in enumerate(linears):
            names[f"head.w{l}"] = (lin.weight, True)
            names[f"head.b{l}"] = (lin.bias, False)
        return names


def qsa_batches(rng, n_batches, B, N, d, q=2):
    """qsa samples: x_i = [z_i, multi-hot(y_i), one-hot(i)], target mean of z over y_i."""
    z = rng.standard_normal((n_batches, B, N, d))
    z /= np.linalg.norm(z, axis=-1, keepdims=True)
    sets = np.argsort(rng.random((n_batches, B, N, N)), axis=-1)[..., :q]
    hot = np.zeros((n_batches, B, N, N))
    np.put_along_axis(hot, sets, 1.0, axis=-1)
    x = np.concatenate([z, hot, np.broadcast_to(np.eye(N), hot.shape)], axis=-1)
    return x.astype(np.float32), (hot @ z / q).astype(np.float32)


def d_in_of(cfg):
    return HOP_D_IN if cfg[0] == "transformer" else cfg[2] + 2 * cfg[1]


def hop_like_batches(rng, n_batches, B, N, classes):
    """Random one-hot inputs and targets of the hop shapes (only without --data)."""
    x = np.eye(HOP_D_IN, dtype=np.float32)[rng.integers(0, HOP_D_IN, (n_batches, B, N))]
    y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, (n_batches, B, N))]
    return x, y


def make_model(cid, cfg):
    kind, N, d, m, heads, hidden, _ = cfg
    d_in = d_in_of(cfg)
    if kind == "transformer":
        return CausalTransformer(d_in, d, N, m, heads, LAYERS[cid])
    if kind == "third_order":
        return ThirdOrderUnit(d_in, d, m, heads)
    if kind == "attention":
        return AttentionUnit(d_in, d, m, heads)
    return LstmReadout(d_in, d, hidden, HEAD_WIDTH.get(cid, 0))


def loss_of(cfg, pred, y):
    if cfg[0] == "transformer":  # attnlab's cross_entropy: mean over positions, one-hot targets
        return F.cross_entropy(pred.reshape(-1, cfg[2]), y.reshape(-1, cfg[2]).argmax(dim=-1))
    return F.mse_loss(pred, y)


def sgemm_gflops(n=2048):
    """torch.mm's 1-thread float32 rate on n × n matrices (best of 3, CPU time)."""
    a, b = torch.full((n, n), 0.5), torch.full((n, n), 0.25)
    best = 1e30
    for _ in range(3):
        c0 = time.process_time()
        torch.mm(a, b)
        best = min(best, time.process_time() - c0)
    return 2.0 * n ** 3 / best * 1e-9


def load_init(model, arrays):
    names = model.attnlab_names()
    theirs = {k[5:] for k in arrays if k.startswith("init.")}
    assert theirs == set(names), f"tensor names differ: attnlab {sorted(theirs)}, here {sorted(names)}"
    with torch.no_grad():
        for name, (p, t) in names.items():
            a = torch.from_numpy(np.ascontiguousarray(arrays["init." + name]))
            p.copy_(a.T if t else a.reshape(p.shape))


def run(cid, args, rng):
    cfg = CONFIGS[cid]
    B = cfg[6]
    model = make_model(cid, cfg)
    arrays = dict(np.load(os.path.join(args.data, cid + ".npz"))) if args.data else None
    if arrays:
        load_init(model, arrays)
        xs, ys = arrays["x"], arrays["y"]
    elif cfg[0] == "transformer":
        xs, ys = hop_like_batches(rng, args.batches, B, cfg[1], cfg[2])
    else:
        xs, ys = qsa_batches(rng, args.batches, B, cfg[1], cfg[2])
    batches = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in zip(xs, ys)]
    init_state = {k: v.clone() for k, v in model.state_dict().items()}
    params = [p for p in model.parameters() if p.requires_grad]
    n_params = sum(p.numel() for p in params)

    def fresh_optimizer():
        model.load_state_dict(init_state)
        return torch.optim.Adam(params, lr=1e-3)

    def step(opt, x, y, phase=None):
        t0 = time.perf_counter()
        pred = model(x)
        t1 = time.perf_counter()
        loss = loss_of(cfg, pred, y)
        t2 = time.perf_counter()
        opt.zero_grad()
        loss.backward()
        t3 = time.perf_counter()
        opt.step()
        value = loss.item()
        if phase is not None:
            t4 = time.perf_counter()
            for i, dt in enumerate((t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                phase[i] += dt
        return value

    if arrays:  # the first steps from attnlab's weights on attnlab's batches
        opt = fresh_optimizer()
        ours = [step(opt, *batches[i % len(batches)]) for i in range(CHECK_STEPS)]
        theirs = [float(v) for v in arrays["losses"][:CHECK_STEPS]]
        diff = max(abs(a - b) / max(abs(b), 1e-30) for a, b in zip(ours, theirs))
        print(f"check config={cid} max_rel_diff={diff:.2e} {'ok' if diff < 1e-3 else 'MISMATCH'} "
              f"losses_attnlab={','.join(f'{v:.7g}' for v in theirs)} "
              f"losses_torch={','.join(f'{v:.7g}' for v in ours)}", flush=True)

    opt = fresh_optimizer()
    k = 0
    warm, losses = max(args.warmup, CHECK_STEPS), []
    t_warm = 0.0
    for i in range(warm):
        t0 = time.perf_counter()
        losses.append(step(opt, *batches[k % len(batches)]))
        k += 1
        if i >= warm // 2:
            t_warm += time.perf_counter() - t0
    steps = max(3, round(args.rep_seconds / max(t_warm / (warm - warm // 2), 1e-7)))
    rate, cpu_rate = [], []
    for _ in range(args.reps):
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            last = step(opt, *batches[k % len(batches)])
            k += 1
        w, c = time.perf_counter() - w0, time.process_time() - c0
        rate.append(steps / w)
        cpu_rate.append(steps / max(c, 1e-9))
    phase = [0.0] * 4
    for _ in range(steps):
        step(opt, *batches[k % len(batches)], phase)
        k += 1
    d_in = d_in_of(cfg)
    print(f"result config={cid} model={cfg[0]} params={n_params} batch={B} N={cfg[1]} d_in={d_in} "
          f"d_out={cfg[2]} reps={args.reps} steps_per_rep={steps} "
          f"steps_per_s={statistics.median(rate):.2f} steps_per_s_min={min(rate):.2f} "
          f"steps_per_s_max={max(rate):.2f} cpu_steps_per_s={statistics.median(cpu_rate):.2f} "
          f"loss_first={losses[0]:.6g} loss_last={last:.6g}")
    if arrays and "flops_per_step" in arrays:  # attnlab's count of the same model's flops
        flops = float(arrays["flops_per_step"][0])
        cpu_med = statistics.median(cpu_rate)
        print(f"rate config={cid} cpu_ms_per_step={1e3 / cpu_med:.4f} flops_per_step={flops:.6g} "
              f"gflops={flops * cpu_med * 1e-9:.2f}", flush=True)
    ms = [1e3 * p / steps for p in phase]
    print(f"phases config={cid} forward_ms={ms[0]:.4f} loss_ms={ms[1]:.4f} backward_ms={ms[2]:.4f} "
          f"optimizer_ms={ms[3]:.4f} total_ms={sum(ms):.4f}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--configs", default="a,b,c")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--rep-seconds", type=float, default=1.0)
    p.add_argument("--batches", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", default="", help="directory of bench_nn_train --dump")
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)  # FTZ/DAZ, as attnlab trains (docs/performance.md#subnormals)
    torch.manual_seed(args.seed)
    core = "unknown (no threadpoolctl)"
    try:
        import threadpoolctl
        core = ";".join(f"{i.get('internal_api')}:{i.get('architecture')}:{i.get('num_threads')}"
                        for i in threadpoolctl.threadpool_info())
    except ImportError:
        pass
    print(f"sanford2023_train_torch: torch {torch.__version__} float32 threads={torch.get_num_threads()} "
          f"mkldnn={torch.backends.mkldnn.is_available()} blas={core} numpy {np.__version__} "
          f"reps={args.reps} warmup={args.warmup} rep_seconds={args.rep_seconds} "
          f"data={'attnlab ' + args.data if args.data else 'drawn here'}", flush=True)
    print(f"sgemm n=2048 threads=1 gflops={sgemm_gflops():.2f} (torch.mm)", flush=True)
    rng = np.random.default_rng(args.seed)
    for cid in args.configs.split(","):
        if cid not in CONFIGS:
            sys.exit(f"sanford2023_train_torch.py: unknown config '{cid}' (one of {', '.join(CONFIGS)})")
        run(cid, args, rng)


if __name__ == "__main__":
    main()
