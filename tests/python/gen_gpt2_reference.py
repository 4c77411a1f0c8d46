#!/usr/bin/python3
"""Writes the GPT-2 import reference of tests/test_gpt2_import.cpp: two small GPT-2 checkpoints
with random weights (tests/data/gpt2_tied.safetensors, tests/data/gpt2_head.safetensors) and the
logits of a PyTorch GPT-2 forward on token sequences (tests/gpt2_torch_reference.inc).

The forward below is written from GPT-2's architecture (Radford et al. 2019 and the released
model's layout), not from attnlab's code nor Hugging Face's (transformers is not used):
  h = wte[tokens] + wpe[0 … N−1]
  per block l: a = LN(h; ln_1); [q k v] = a·c_attn.weight + c_attn.bias (Conv1D: weight (in, out));
      heads of width n_embd/n_head, softmax(q kᵀ/√(n_embd/n_head)) with the causal mask, merged;
      h += merged·attn.c_proj.weight + bias;  h += gelu_tanh(LN(h; ln_2)·c_fc.weight + b)·mlp.c_proj.weight + b
  logits = LN(h; ln_f) · lm_headᵀ, lm_head = wte when tied. LayerNorm eps 1e-5; no dropout.

Regenerate with Debian's interpreter and python3-torch (from the repository root):
    /usr/bin/python3 tests/python/gen_gpt2_reference.py > tests/gpt2_torch_reference.inc

The checkpoints: n_embd 16, n_head 4, n_layer 2, n_positions 12, vocab 9, F32 (as published GPT-2
files). gpt2_tied: Hugging Face's naming ("transformer." prefix), no lm_head (tied), metadata
{"format": "pt"} only (so n_head must be given on import), plus the causal-mask buffers
h.<l>.attn.bias that such files carry. gpt2_head: bare names, a separate lm_head.weight (5, 16),
metadata n_head = 4. Logits are computed in float64 from the float32 weights.
"""
import json
import math
import os
import struct
import sys

import torch

D, H, L, NPOS, VOCAB, D_OUT = 16, 4, 2, 12, 9, 5
N, SEQS = 10, 3          # sequences of N < NPOS tokens (the import keeps the first N rows of wpe)
EPS = 1e-5


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)   # biased, as GPT-2's LayerNorm
    return (x - mean) / torch.sqrt(var + EPS) * w + b


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gpt2_forward(t, X, n_head, causal=True, maps=None):
    """Logits (n, N, d_out) of the GPT-2 with tensors T (GPT-2 names, no prefix, wpe.weight with at
    least N rows, lm_head.weight optional) on X (n, N, vocab): rows of X pick rows of wte (one-hot
    tokens; any X is read as X·wte). CAUSAL = False drops the mask (attnlab's option). MAPS, if
    given, gets each block's attention probabilities as `layer<l>` (n, H, N, N)."""
    n, seq, _ = X.shape
    d = t["wte.weight"].shape[1]
    dh = d // n_head
    h = X @ t["wte.weight"] + t["wpe.weight"][:seq]
    layers = 0
    while f"h.{layers}.ln_1.weight" in t:
        layers += 1
    mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
    for l in range(layers):
        p = f"h.{l}."
        a = layer_norm(h, t[p + "ln_1.weight"], t[p + "ln_1.bias"])
        qkv = a @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]
        q, k, v = qkv.split(d, dim=-1)
        split = lambda z: z.reshape(n, seq, n_head, dh).transpose(1, 2)   # (n, H, N, dh)
        q, k, v = split(q), split(k), split(v)
        s = q @ k.transpose(-1, -2) / math.sqrt(dh)
        if causal:
            s = s.masked_fill(mask, float("-inf"))
        A = torch.softmax(s, dim=-1)
        if maps is not None:
            maps[f"layer{l}"] = A
        merged = (A @ v).transpose(1, 2).reshape(n, seq, d)
        h = h + merged @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"]
        m = layer_norm(h, t[p + "ln_2.weight"], t[p + "ln_2.bias"])
        h = h + gelu_tanh(m @ t[p + "mlp.c_fc.weight"] + t[p + "mlp.c_fc.bias"]) @ \
            t[p + "mlp.c_proj.weight"] + t[p + "mlp.c_proj.bias"]
    z = layer_norm(h, t["ln_f.weight"], t["ln_f.bias"])
    return z @ t.get("lm_head.weight", t["wte.weight"]).transpose(0, 1)


def random_weights(gen, d_out):
    """float32 weights large enough that every part moves the logits."""
    r = lambda *shape, s=0.3: (torch.randn(*shape, generator=gen) * s).float()
    t = {"wte.weight": r(VOCAB, D, s=1.0), "wpe.weight": r(NPOS, D, s=0.5)}
    for l in range(L):
        p = f"h.{l}."
        t[p + "ln_1.weight"] = 1 + r(D, s=0.2)
        t[p + "ln_1.bias"] = r(D, s=0.1)
        t[p + "attn.c_attn.weight"] = r(D, 3 * D, s=0.5)
        t[p + "attn.c_attn.bias"] = r(3 * D, s=0.1)
        t[p + "attn.c_proj.weight"] = r(D, D)
        t[p + "attn.c_proj.bias"] = r(D, s=0.1)
        t[p + "ln_2.weight"] = 1 + r(D, s=0.2)
        t[p + "ln_2.bias"] = r(D, s=0.1)
        t[p + "mlp.c_fc.weight"] = r(D, 4 * D)
        t[p + "mlp.c_fc.bias"] = r(4 * D, s=0.1)
        t[p + "mlp.c_proj.weight"] = r(4 * D, D, s=0.2)
        t[p + "mlp.c_proj.bias"] = r(D, s=0.1)
    t["ln_f.weight"] = 1 + r(D, s=0.2)
    t["ln_f.bias"] = r(D, s=0.1)
    if d_out != VOCAB:
        t["lm_head.weight"] = r(d_out, D, s=0.5)
    return t


def safetensors_bytes(tensors, metadata):
    """The safetensors format by hand: u64 header length, JSON header, F32 data in order."""
    header, data = {"__metadata__": metadata}, b""
    for name, x in tensors.items():
        raw = x.contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(x.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def write_case(path, t, prefix, metadata, extra=None):
    named = {prefix + k: v for k, v in t.items()}
    named.update(extra or {})
    with open(path, "wb") as f:
        f.write(safetensors_bytes(named, metadata))


def c_array(name, values, per_line=4):
    vals = ["%.17g" % v for v in values]
    lines = [", ".join(vals[i:i + per_line]) for i in range(0, len(vals), per_line)]
    return "constexpr double %s[%d] = {\n    %s};\n" % (name, len(vals), ",\n    ".join(lines))


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    gen = torch.Generator().manual_seed(20240611)
    tokens = torch.randint(0, VOCAB, (SEQS, N), generator=gen)
    X = torch.nn.functional.one_hot(tokens, VOCAB).double()
    out = sys.stdout
    out.write("// Generated by tests/python/gen_gpt2_reference.py with torch " + torch.__version__ +
              "; do not edit.\n")
    out.write("// GPT-2 logits (float64 forward of the float32 weights in tests/data/gpt2_*.safetensors)\n")
    out.write("// for the token sequences kGpt2Tokens (%d sequences of %d tokens), C order.\n" % (SEQS, N))
    out.write("constexpr int kGpt2Seqs = %d, kGpt2N = %d, kGpt2Vocab = %d, kGpt2Heads = %d;\n"
              % (SEQS, N, VOCAB, H))
    rows = [", ".join(str(int(v)) for v in row) for row in tokens]   # one sequence a line
    out.write("constexpr int kGpt2Tokens[%d] = {\n    %s};\n" % (SEQS * N, ",\n    ".join(rows)))
    for case, d_out in (("tied", VOCAB), ("head", D_OUT)):
        t = random_weights(gen, d_out)
        t64 = {k: v.double() for k, v in t.items()}
        logits = gpt2_forward(t64, X, H)
        if case == "tied":
            buffers = {f"transformer.h.{l}.attn.bias": torch.tril(torch.ones(NPOS, NPOS)).reshape(1, 1, NPOS, NPOS)
                       for l in range(L)}
            write_case(os.path.join(root, "data", "gpt2_tied.safetensors"), t, "transformer.",
                       {"format": "pt"}, buffers)
        else:
            write_case(os.path.join(root, "data", "gpt2_head.safetensors"), t, "",
                       {"format": "pt", "n_head": str(H)})
        out.write("// %s: d_out = %d\n" % (case, d_out))
        out.write(c_array("kGpt2Logits_%s" % case, logits.flatten().tolist()))


if __name__ == "__main__":
    main()
