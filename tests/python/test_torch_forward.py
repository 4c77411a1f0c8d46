"""An independent PyTorch forward of every gradient-trained model, against `attnlab predict`.

Written from docs/models.md §6 alone (the tensor names and shapes of "Saved tensors", the formulas
of the model table, the [model] keys), not from the C++ forward. Each case trains a model briefly in
float64 (`train.dtype = "float64"`, a few Adam steps at a large learning rate, so the weights are
trained ones, not the initialisation), saves it with `attnlab fit --save`, reads the safetensors file
with the reader of docs/models.md §4 (numpy, no attnlab), runs the forward below in torch.float64 on a
test set and compares with the `Y_pred` of `attnlab predict`: max |ours − attnlab| ≤ 1e-12 · max(1,
max|attnlab|) (an absolute bound, relative to the predictions' size once they exceed 1).

Skipped (pytest skip; exit code 77 when run as a script, which ctest reports as skipped) where
Debian's python3-torch is not installed. Run by hand:
    ATTNLAB_CLI=build/attnlab /usr/bin/python3 tests/python/test_torch_forward.py [-k lstm]
"""
import json
import math
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

try:
    import torch
except ImportError:
    torch = None

pytestmark = pytest.mark.skipif(torch is None, reason="PyTorch is not importable by this python "
                                "(Debian: apt-get install python3-torch)")

TOL = 1e-12
STEPS = 6          # Adam steps: trained weights, not the initialisation
LR = 0.02


# --- reading a saved model: the numpy reader of docs/models.md §4 -----------------------------------

def load_safetensors(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = b[8 + n:]
    tensors = {}
    for k, v in header.items():
        assert v["dtype"] == "F64", (k, v["dtype"])
        a = np.frombuffer(data[v["data_offsets"][0]:v["data_offsets"][1]], "<f8").reshape(v["shape"])
        tensors[k] = torch.from_numpy(a.copy())
    return tensors, meta


# --- the forward, from docs/models.md §6 ------------------------------------------------------------

def act(name, x):
    """The `activation` key: identity, relu, gelu, tanh, sigmoid."""
    return {"identity": lambda t: t, "relu": torch.relu, "gelu": torch.nn.functional.gelu,
            "tanh": torch.tanh, "sigmoid": torch.sigmoid}[name](x)


def dense_stack(t, prefix, x, activation):
    """Linear maps stored as (in, out), y = x·W + b: `PREFIX.w0`, `.b0`, `.w1`, … with the activation
    between layers, none after the last."""
    layers = 0
    while f"{prefix}.w{layers}" in t:
        layers += 1
    assert layers > 0, prefix
    for l in range(layers):
        x = x @ t[f"{prefix}.w{l}"] + t[f"{prefix}.b{l}"]
        if l + 1 < layers:
            x = act(activation, x)
    return x


def score_scale(t, p, prefix, dk):
    """s = exp(τ) (learned, `log_temperature`), temperature_init (fixed) or 1/√dk (inv_sqrt_dk)."""
    if p["temperature"] == "learned":
        return torch.exp(t[prefix + "log_temperature"][0])
    if p["temperature"] == "fixed":
        return torch.tensor(p["temperature_init"], dtype=torch.float64)
    return torch.tensor(1.0 / math.sqrt(dk), dtype=torch.float64)


def head_cols(w, h, width):
    """Head h of a (m, H·width) projection: columns h·width … (h + 1)·width − 1."""
    return w[:, h * width:(h + 1) * width]


# Sequences in which some value / scale lies within 1e-9 of a half level. Scores of rounded q and k
# are multiples of one number, so with `bits_scores` exact ties happen, and which way a tie rounds
# depends on the last bit of the score, i.e. on the summation order: such sequences are not compared.
TIES = set()


def quantize(bits, x, keep=None):
    """`bits = p` (docs/precision.md): sign + (p − 1) bits, L = 2^(p−1) − 1, scale = max|x|/L over each
    sequence's values (the dims after the batch dim), x ← round_half_even(x / scale)·scale, a zero
    tensor stays zero; KEEP (bool, like x) marks the entries that take part (the unmasked scores)."""
    L = 2.0 ** (bits - 1) - 1
    mag = x.abs() if keep is None else torch.where(keep, x.abs(), torch.zeros_like(x))
    scale = mag.reshape(x.shape[0], -1).max(dim=1).values / L
    scale = scale.reshape(-1, *([1] * (x.dim() - 1)))
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))
    r = x / safe
    tie = (r - torch.floor(r) - 0.5).abs() < 1e-9
    if keep is not None:
        tie = tie & keep
    TIES.update(torch.nonzero(tie.reshape(x.shape[0], -1).any(dim=1)).flatten().tolist())
    q = torch.clamp(torch.round(r), -L, L) * safe
    return torch.where(scale > 0, q, torch.zeros_like(x)) if keep is None else torch.where(keep, q, x)


def rounded(p, *tensors):
    """Each head's q, k, v rounded with its own scale when `bits` > 0."""
    return [quantize(p["bits"], x) for x in tensors] if p["bits"] else list(tensors)


def masked_softmax(p, S, mask):
    """softmax over the last dim of the scores S after `bits_scores` rounding; MASK (True = excluded)."""
    keep = None if mask is None else ~mask.expand(S.shape)
    if p["bits"] and p["bits_scores"]:
        S = quantize(p["bits"], S, keep)
    if mask is not None:
        S = S.masked_fill(mask, float("-inf"))
    return torch.softmax(S, dim=-1)


def softmax_attention(p, s, Q, K, V):
    """(A V, A) with A = softmax_rows(s·Q Kᵀ) (n, N, N) for (n, N, dk) Q, K and (n, N, dv) V;
    exclude_self masks j = i."""
    Q, K, V = rounded(p, Q, K, V)
    S = s * Q @ K.transpose(1, 2)
    mask = torch.eye(S.shape[-1], dtype=torch.bool) if p["exclude_self"] else None
    A = masked_softmax(p, S, mask)
    return A @ V, A


def third_order_attention(p, s, Q, K1, K2, V1, V2):
    """Each query i attends to ordered pairs (j, k): score s·Σ_l q_il k¹_jl k²_kl, value v¹_j ∘ v²_k,
    one softmax over the N² pairs (exclude_self: over the pairs with j ≠ i, k ≠ i, j ≠ k).
    Returns (out (n, N, dv), A (n, N, N, N))."""
    n, N, _ = Q.shape
    Q, K1, K2, V1, V2 = rounded(p, Q, K1, K2, V1, V2)
    S = s * torch.einsum("nil,njl,nkl->nijk", Q, K1, K2)
    mask = None
    if p["exclude_self"]:
        i, j, k = torch.meshgrid(torch.arange(N), torch.arange(N), torch.arange(N), indexing="ij")
        mask = ((j == i) | (k == i) | (j == k)).reshape(1, N, N * N)
    A = masked_softmax(p, S.reshape(n, N, N * N), mask).reshape(n, N, N, N)
    return torch.einsum("nijk,njv,nkv->niv", A, V1, V2), A


def phi_map(t, p, X):
    return dense_stack(t, "phi", X, p["activation"])


def psi_map(t, p, z):
    return z if p["psi"] == "identity" else dense_stack(t, "psi", z, p["activation"])


def forward_attention(t, p, X, third, maps):
    """Φ = φ(X); a = Σ_h head_h(Φ); out = ψ([Φ, a]) (residual) or ψ(a). MAPS gets `layer0` (n, H, N, N)
    (third order: `layer0.first`[i, j] = Σ_k A_ijk and `layer0.second`[i, k] = Σ_j A_ijk)."""
    Phi = phi_map(t, p, X)
    H, m = p["heads"], Phi.shape[-1]
    dk = t["q"].shape[1] // H
    s = score_scale(t, p, "", dk)
    a, probs = 0, []
    for h in range(H):
        Q = Phi @ head_cols(t["q"], h, dk)
        if third:
            dv = t["v1"].shape[1] // H
            out, A = third_order_attention(p, s, Q, Phi @ head_cols(t["k1"], h, dk),
                                           Phi @ head_cols(t["k2"], h, dk),
                                           Phi @ head_cols(t["v1"], h, dv), Phi @ head_cols(t["v2"], h, dv))
        else:
            dv = t["v"].shape[1] // H
            out, A = softmax_attention(p, s, Q, Phi @ head_cols(t["k"], h, dk), Phi @ head_cols(t["v"], h, dv))
        a = a + out
        probs.append(A)
    A = torch.stack(probs, dim=1)
    if third:
        maps["layer0.first"], maps["layer0.second"] = A.sum(dim=-1), A.sum(dim=-2)
    else:
        maps["layer0"] = A
    return psi_map(t, p, torch.cat([Phi, a], dim=-1) if p["residual"] else a)


def layer_norm(t, prefix, x):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], t[prefix + ".gamma"], t[prefix + ".beta"], eps=1e-5)


def forward_transformer(t, p, X, maps):
    """h = φ(X); L × [h += Σ_h attention(LN(h)); h += MLP(LN(h))]; out = ψ(h). MAPS gets `layer<l>`."""
    h = phi_map(t, p, X)
    m, H = h.shape[-1], p["heads"]
    for l in range(p["layers"]):
        pre = f"layer{l}."
        u = layer_norm(t, pre + "ln1", h) if p["layernorm"] else h
        s = score_scale(t, p, pre, m)
        probs = []
        for k in range(H):
            out, A = softmax_attention(p, s, u @ head_cols(t[pre + "q"], k, m), u @ head_cols(t[pre + "k"], k, m),
                                       u @ head_cols(t[pre + "v"], k, m))
            h = h + out
            probs.append(A)
        maps[f"layer{l}"] = torch.stack(probs, dim=1)
        u = layer_norm(t, pre + "ln2", h) if p["layernorm"] else h
        h = h + dense_stack(t, pre + "mlp", u, p["activation"])
    return psi_map(t, p, h)


def forward_mlp(t, p, X, shape):
    """The N token encodings concatenated, `depth` linear layers, all T_out·d_out outputs at once."""
    y = dense_stack(t, "mlp", X.reshape(X.shape[0], -1), p["activation"])
    return y.reshape(X.shape[0], shape["T_out"], shape["d_out"])


def lstm_direction(t, prefix, x, reverse):
    """One LSTM layer and direction: gates = x·wx + h·wh + b, columns [i, f, g, o] (PyTorch's order);
    c ← σ(f)∘c + σ(i)∘tanh(g), h ← σ(o)∘tanh(c), from h = c = 0. Returns (n, N, hidden)."""
    wx, wh, b = t[prefix + ".wx"], t[prefix + ".wh"], t[prefix + ".b"]
    n, N, _ = x.shape
    hid = wh.shape[0]
    h = torch.zeros(n, hid, dtype=torch.float64)
    c = torch.zeros(n, hid, dtype=torch.float64)
    out = [None] * N
    for step in range(N):
        i_pos = N - 1 - step if reverse else step
        g = x[:, i_pos] @ wx + h @ wh + b
        gi, gf, gg, go = g.split(hid, dim=-1)
        c = torch.sigmoid(gf) * c + torch.sigmoid(gi) * torch.tanh(gg)
        h = torch.sigmoid(go) * torch.tanh(c)
        out[i_pos] = h
    return torch.stack(out, dim=1)


def forward_lstm(t, p, X):
    """`layers` LSTM layers (bidirectional: [forward; reverse] per position feeds the next layer);
    output i = head([h_final; x_i]) (readout final) or head(h_i) (per_position)."""
    x = X
    for l in range(p["layers"]):
        fwd = lstm_direction(t, f"lstm{l}", x, reverse=False)
        if p["bidirectional"]:
            rev = lstm_direction(t, f"lstm{l}.reverse", x, reverse=True)
            x = torch.cat([fwd, rev], dim=-1)
        else:
            x = fwd
            rev = None
    if p["readout"] == "final":
        final = fwd[:, -1] if rev is None else torch.cat([fwd[:, -1], rev[:, 0]], dim=-1)
        z = torch.cat([final[:, None, :].expand(-1, X.shape[1], -1), X], dim=-1)
    else:
        z = x
    return dense_stack(t, "head", z, p["activation"])


def forward_gpt2(t, p, X, maps):
    """GPT-2's layout (docs/models.md, gpt2): the forward of tests/python/gen_gpt2_reference.py, with
    attnlab's `pos` as GPT-2's wpe.weight."""
    from gen_gpt2_reference import gpt2_forward
    g = {k: v for k, v in t.items() if not k.startswith("meta.")}
    g["wpe.weight"] = g.pop("pos")
    return gpt2_forward(g, X, p["heads"], p["causal"], maps)


def torch_predict(path, X):
    """(Y_pred (n, T_out, d_out), {name: attention map}) of the saved model at PATH on inputs X (n, N,
    d_in); the maps as `attnlab predict` names them without the `attention.` prefix."""
    t, meta = load_safetensors(path)
    p = json.loads(meta["model_params"])
    shape = json.loads(meta["shape"])
    X = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float64))
    name, maps = meta["model"], {}
    if name in ("attention", "third_order"):
        y = forward_attention(t, p, X, name == "third_order", maps)
    elif name == "transformer":
        y = forward_transformer(t, p, X, maps)
    elif name == "mlp":
        y = forward_mlp(t, p, X, shape)
    elif name == "lstm":
        y = forward_lstm(t, p, X)
    elif name == "gpt2":
        y = forward_gpt2(t, p, X, maps)
    else:
        raise ValueError(f"no torch forward for {name}")
    if y.shape[1] != shape["T_out"]:     # one output per sequence: token 0's
        y = y[:, :shape["T_out"]]
    if "meta.loss.bce" in t:  # trained with bce: probabilities
        y = torch.sigmoid(y)
    elif "meta.loss.cross_entropy" in t:  # softmax over each position's d_out logits
        y = torch.softmax(y, dim=-1)
    return y.numpy(), {k: v.numpy() for k, v in maps.items()}


# --- the cases --------------------------------------------------------------------------------------

TASKS = {  # task name -> (train args, test args): small sizes, fast
    "qsa": ["qsa", "--set", "task.N=6", "--set", "task.q=2", "--set", "task.d_out=2"],
    "rf": ["rf_target", "--set", "task.N=4", "--set", "task.d=3"],            # T_out = 1
    "match2": ["match2", "--set", "task.N=5"],                                 # 0/1 targets: bce
    "onehot": ["match2", "--set", "task.N=5", "--set", "task.M=31", "--set", "task.encoding=one_hot"],
}

# (id, model, task, model keys). Every gradient-trained model (the table src/models/neural_kinds.cpp)
# needs at least one case: tests/test_neural_kinds.cpp reads this list and fails otherwise.
CASES = [
    ("attention", "attention", "qsa", {}),
    ("attention_heads", "attention", "qsa", {"heads": 2, "qk_dim": 3, "value_dim": 5, "phi": "linear",
                                              "psi": "mlp", "psi_width": 7, "activation": "gelu"}),
    ("attention_bare", "attention", "qsa", {"psi": "identity", "residual": False, "phi_width": 8,
                                            "activation": "tanh", "temperature": "inv_sqrt_dk"}),
    ("attention_excl_fixed", "attention", "qsa", {"exclude_self": True, "temperature": "fixed",
                                                  "temperature_init": 0.7, "activation": "sigmoid"}),
    ("attention_rf", "attention", "rf", {"m": 4, "phi_width": 8}),
    ("attention_bce", "attention", "match2", {"m": 6, "phi_width": 8}),
    ("attention_bits", "attention", "qsa", {"bits": 6, "heads": 2}),
    ("attention_bits_scores", "attention", "qsa", {"bits": 5, "bits_scores": True, "exclude_self": True,
                                                   "bits_in_training": True}),
    ("third_order", "third_order", "qsa", {"phi_width": 8}),
    ("third_order_heads", "third_order", "qsa", {"heads": 2, "qk_dim": 3, "value_dim": 4, "phi": "linear",
                                                 "psi": "mlp", "psi_width": 5, "exclude_self": True}),
    ("third_order_bce", "third_order", "match2", {"phi_width": 8, "temperature": "inv_sqrt_dk"}),
    ("third_order_bits", "third_order", "qsa", {"phi_width": 8, "bits": 7, "bits_scores": True,
                                                "exclude_self": True}),
    ("transformer", "transformer", "qsa", {"m": 8}),
    ("transformer_bits", "transformer", "qsa", {"m": 6, "heads": 2, "bits": 8, "bits_scores": True}),
    ("transformer_heads", "transformer", "qsa", {"m": 6, "heads": 2, "layers": 3, "mlp_width": 5,
                                                 "phi": "mlp", "phi_width": 7, "psi": "mlp", "psi_width": 5,
                                                 "activation": "gelu", "exclude_self": True}),
    ("transformer_noln", "transformer", "rf", {"m": 5, "layers": 1, "layernorm": False,
                                               "temperature": "inv_sqrt_dk"}),
    ("transformer_bce", "transformer", "match2", {"m": 4, "temperature": "fixed", "temperature_init": 2}),
    ("mlp", "mlp", "qsa", {"width": 16}),
    ("mlp_hidden", "mlp", "qsa", {"hidden": "[7,5,3]", "activation": "tanh"}),
    ("mlp_rf", "mlp", "rf", {"width": 8, "depth": 2}),
    ("mlp_bce", "mlp", "match2", {"width": 8, "depth": 2}),
    ("lstm", "lstm", "qsa", {"hidden": 8}),
    ("lstm_head", "lstm", "qsa", {"hidden": 5, "head_width": 6, "activation": "gelu"}),
    ("lstm_bi_layers", "lstm", "qsa", {"hidden": 4, "layers": 2, "bidirectional": True, "head_width": 3}),
    ("lstm_per_position", "lstm", "qsa", {"hidden": 6, "layers": 2, "readout": "per_position"}),
    ("lstm_bi_per_position", "lstm", "qsa", {"hidden": 3, "bidirectional": True, "readout": "per_position",
                                             "head_width": 4, "activation": "tanh"}),
    ("lstm_rf", "lstm", "rf", {"hidden": 4, "bidirectional": True}),
    ("lstm_bce", "lstm", "match2", {"hidden": 4, "head_width": 5}),
    ("lstm_sparse_inputs", "lstm", "onehot", {"hidden": 4, "layers": 2, "bidirectional": True}),
    ("gpt2", "gpt2", "qsa", {"m": 8, "heads": 2}),
    ("gpt2_onehot", "gpt2", "onehot", {"m": 6, "heads": 3, "layers": 1}),
    ("gpt2_rf_bidirectional", "gpt2", "rf", {"m": 4, "heads": 2, "causal": False}),
]


@pytest.fixture(scope="module")
def datasets(tmp_path_factory, run_cli):
    tmp = tmp_path_factory.mktemp("torch")
    files = {}
    for key, args in TASKS.items():
        train, test = tmp / f"{key}_train.npz", tmp / f"{key}_test.npz"
        run_cli("data", args[0], "--n", 48, "--seed", 2, *args[1:], "-q", "-o", train)
        run_cli("data", args[0], "--n", 16, "--seed", 2, "--first", 1000000, *args[1:], "-q", "-o", test)
        files[key] = (train, test)
    return tmp, files


def fit_and_predict(run_cli, tmp, files, case, model, task, keys, steps=STEPS):
    train, test = files[task]
    sets = [f"model.{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in keys.items()]
    sets += ["train.dtype=float64", f"train.steps={steps}", f"train.lr={LR}", "train.batch=16",
             "train.restore_best=false"]
    path = tmp / f"{case}.safetensors"
    run_cli("fit", model, "--in", train, "--seed", 5, *sum((["--set", s] for s in sets), []), "-q",
            "--save", path)
    pred = tmp / f"{case}_pred.npz"
    run_cli("predict", "--model", path, "--in", test, "-o", pred)
    with np.load(test) as z:
        X = z["X"]
    with np.load(pred) as z:
        want = {k: z[k] for k in z.files if k != "meta"}
    return path, X, want


def max_diffs(got, want):
    """(max absolute difference, max relative difference, tolerance) of two arrays."""
    diff = np.abs(got - want)
    rel = diff / np.maximum(np.abs(want), 1e-300)
    return float(diff.max()), float(rel.max()), TOL * max(1.0, float(np.abs(want).max()))


@pytest.mark.parametrize("case,model,task,keys", CASES, ids=[c[0] for c in CASES])
def test_torch_forward_matches_predict(run_cli, datasets, case, model, task, keys):
    tmp, files = datasets
    path, X, want = fit_and_predict(run_cli, tmp, files, case, model, task, keys)
    TIES.clear()
    y, maps = torch_predict(path, X)
    got = {"Y_pred": y, **{"attention." + k: v for k, v in maps.items()}}
    assert sorted(got) == sorted(want), (sorted(got), sorted(want))
    kept = list(range(len(X)))
    if TIES:  # only bits_scores rounds values that can tie exactly
        assert keys.get("bits_scores") and len(TIES) <= len(X) // 4, (case, sorted(TIES))
        kept = [i for i in kept if i not in TIES]
        print(f"{case}: {len(TIES)} of {len(X)} sequences have a rounding tie, not compared")
    assert np.isfinite(want["Y_pred"]).all() and np.abs(want["Y_pred"]).max() > 0
    for name in sorted(want):
        assert got[name].shape == want[name].shape, (name, got[name].shape, want[name].shape)
        abs_err, rel_err, tol = max_diffs(got[name][kept], want[name][kept])
        print(f"{case} {name}: max abs diff {abs_err:.3e}, max rel diff {rel_err:.3e}, max |value| "
              f"{np.abs(want[name]).max():.3g}")
        assert abs_err <= tol, f"{case} {name}: torch and attnlab differ by {abs_err:.3e} (tolerance {tol:.1e})"


def test_trained_weights_differ_from_init(run_cli, datasets):
    """The compared models are trained ones: a fit of one step predicts something else."""
    tmp, files = datasets
    _, _, trained = fit_and_predict(run_cli, tmp, files, "attention", "attention", "qsa", {})
    _, _, early = fit_and_predict(run_cli, tmp, files, "attention_1step", "attention", "qsa", {}, steps=1)
    assert np.abs(trained["Y_pred"] - early["Y_pred"]).max() > 1e-3


if __name__ == "__main__":
    if torch is None:
        print("SKIP: PyTorch is not importable by", sys.executable, "(Debian: apt-get install python3-torch)")
        sys.exit(77)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(pytest.main([os.path.abspath(__file__), "-q", "-p", "no:cacheprovider", *sys.argv[1:]]))
