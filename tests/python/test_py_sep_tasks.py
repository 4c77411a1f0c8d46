"""The statistical-separation tasks from Python (docs/sep2025.md): attnlab.sample("sparse_retrieval")
and attnlab.sample("token_selection") equal `attnlab data` with every named array, the mean link is
qsa's target, the other links and the query code follow their definitions in numpy, and a bad key
is a ValueError with the CLI's one-line message."""
import json

import numpy as np
import pytest

import attnlab
from conftest import load_npz

RETRIEVAL = dict(N=7, q=3, d=2, link="relu_net", link_width=6)
SELECTION = dict(N=9, q=3, d=2, code_dim=5, codes="fixed")


def _cli_args(params):
    out = []
    for k, v in params.items():
        out += ["--set", f"task.{k}={v}"]
    return out


@pytest.mark.parametrize("task,params,arrays", [
    ("sparse_retrieval", RETRIEVAL, {"z", "sets", "link_w1", "link_w2"}),
    ("sparse_retrieval", dict(RETRIEVAL, variant="single"), {"z", "pointers"}),
    ("token_selection", SELECTION, {"selected", "codes"}),
    ("token_selection", dict(SELECTION, codes="stochastic"), {"selected"}),
])
def test_sample_equals_cli_data(run_cli, tmp_path, task, params, arrays):
    path = tmp_path / "d.npz"
    run_cli("data", task, "--n", 12, "--seed", 4, "--first", 3, *_cli_args(params), "-q",
            "-o", path)
    want = load_npz(path)
    got = attnlab.sample(task, n=12, seed=4, first=3, **params)
    assert arrays <= set(got)
    assert set(got) == set(want)
    for key in want:
        if key == "meta":
            assert got["meta"]["params"] == json.loads(str(want["meta"]))["params"]
            continue
        assert np.array_equal(got[key], want[key]), key


def test_mean_link_is_qsa():
    qsa = attnlab.sample("qsa", n=20, seed=1, N=8, q=2, d_out=3, encoding="indices")
    sr = attnlab.sample("sparse_retrieval", n=20, seed=1, N=8, q=2, d=3, encoding="indices",
                        pointers="sorted")
    for key in ("X", "Y", "z", "sets"):
        assert np.array_equal(sr[key], qsa[key]), key


def test_links_by_hand():
    n, N, q, d = 15, 6, 3, 2
    for link in ("mean", "product", "max", "relu_net"):
        got = attnlab.sample("sparse_retrieval", n=n, seed=2, N=N, q=q, d=d, link=link,
                             link_width=4)
        z, t = got["z"], got["sets"]                          # (n, N, d), (n, N, q)
        picked = np.take_along_axis(z[:, None, :, :], t[..., None], axis=2)  # (n, N, q, d)
        if link == "mean":
            want = picked.mean(axis=2)
        elif link == "product":
            want = picked.prod(axis=2)
        elif link == "max":
            want = picked.max(axis=2)
        else:
            u = picked.reshape(n, N, q * d)
            want = np.maximum(u @ got["link_w1"].T, 0) @ got["link_w2"].T
        np.testing.assert_allclose(got["Y"], want, rtol=1e-12, atol=1e-14, err_msg=link)


def test_token_selection_target_and_query_code_by_hand():
    got = attnlab.sample("token_selection", n=10, seed=3, **SELECTION)
    X, S, d = got["X"], got["selected"], SELECTION["d"]
    tokens, codes = X[:, 1:, :d], X[:, 1:, d:-1]
    rows = np.arange(10)[:, None]
    np.testing.assert_allclose(got["Y"][:, 0], tokens[rows, S].mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(X[:, 0, d:-1], codes[rows, S].sum(axis=1), rtol=1e-12)
    assert np.array_equal(codes, np.broadcast_to(got["codes"], codes.shape))  # fixed codes
    stochastic = attnlab.sample("token_selection", n=10, seed=3,
                                **dict(SELECTION, codes="stochastic"))
    assert not np.array_equal(stochastic["X"][0, 1:, d:-1], stochastic["X"][1, 1:, d:-1])


def test_bad_keys_are_value_errors_with_the_cli_message():
    with pytest.raises(ValueError, match=r"task\.q = 8 is larger than task\.N = 4.*lower q"):
        attnlab.sample("token_selection", n=1, N=4, q=8)
    with pytest.raises(ValueError, match=r"task\.link = 'sum' is not allowed"):
        attnlab.sample("sparse_retrieval", n=1, link="sum")
