"""attnlab.load_gpt2 / attnlab.load on the GPT-2 checkpoints of tests/data (gen_gpt2_reference.py),
against `attnlab import-gpt2` + `attnlab predict`."""
import os

import numpy as np
import pytest

import attnlab
from conftest import load_npz

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")


def tokens(n, N, vocab, seed=1):
    X = np.zeros((n, N, vocab))
    ids = np.random.default_rng(seed).integers(0, vocab, (n, N))
    np.put_along_axis(X, ids[..., None], 1.0, axis=-1)
    return X


def test_load_gpt2_equals_the_cli_import(run_cli, tmp_path):
    ckpt = os.path.join(DATA, "gpt2_tied.safetensors")
    m = attnlab.load_gpt2(ckpt, heads=4, T=10, dtype="float64")
    assert m.name == "gpt2" and m.params["heads"] == 4 and m.params["head"] == "tied"
    X = tokens(3, 10, 9)
    pred = m.predict(X)
    assert pred.shape == (3, 10, 9) and np.allclose(pred.sum(-1), 1)
    data, out, model = tmp_path / "x.npz", tmp_path / "p.npz", tmp_path / "m.safetensors"
    np.savez(data, X=X)
    run_cli("import-gpt2", ckpt, "--heads", 4, "--T", 10, "--dtype", "float64", "-o", model)
    run_cli("predict", "--model", model, "--in", data, "-o", out)
    assert np.array_equal(load_npz(out)["Y_pred"], pred)
    assert sorted(m.attention(X)) == ["layer0", "layer1"]


def test_load_reads_a_checkpoint_with_n_head(tmp_path):
    ckpt = os.path.join(DATA, "gpt2_head.safetensors")   # metadata n_head = 4, lm_head (5, 16)
    a, b = attnlab.load(ckpt), attnlab.load_gpt2(ckpt)
    X = tokens(2, 12, 9)
    assert a.predict(X).shape == (2, 12, 5)
    assert np.array_equal(a.predict(X), b.predict(X))


def test_export_gpt2_round_trips(tmp_path):
    X = tokens(40, 6, 5, seed=3)
    Y = tokens(40, 6, 4, seed=4)
    m = attnlab.model("gpt2", seed=2, m=8, heads=2).fit(X, Y, steps=3, batch=16, eval_every=3)
    m.export_gpt2(tmp_path / "ckpt.safetensors")
    back = attnlab.load(tmp_path / "ckpt.safetensors")
    assert np.array_equal(back.predict(X[:5]), m.predict(X[:5]))
    mlp = attnlab.model("mlp", width=4, depth=2).fit(X, Y, steps=1, eval_every=1)
    with pytest.raises(ValueError, match="no GPT-2 layout"):
        mlp.export_gpt2(tmp_path / "x.safetensors")


def test_load_gpt2_errors():
    with pytest.raises(ValueError, match="n_head"):
        attnlab.load_gpt2(os.path.join(DATA, "gpt2_tied.safetensors"))
    with pytest.raises(ValueError, match="wpe.weight has 12 rows"):
        attnlab.load_gpt2(os.path.join(DATA, "gpt2_head.safetensors"), T=13)
    with pytest.raises(TypeError):
        attnlab.load_gpt2(os.path.join(DATA, "gpt2_head.safetensors"), heads=2.5)
