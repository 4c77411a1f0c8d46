"""attnlab.sample / list_tasks / metrics against `attnlab data` and numpy."""
import json

import numpy as np
import pytest

import attnlab
from conftest import cli_error, load_npz


def test_sample_equals_cli_data(run_cli, tmp_path):
    path = tmp_path / "qsa.npz"
    run_cli("data", "qsa", "--n", 40, "--seed", 3, "--first", 7, "--set", "task.N=8",
            "--set", "task.q=2", "-q", "-o", path)
    want = load_npz(path)
    got = attnlab.sample("qsa", n=40, seed=3, first=7, N=8, q=2)
    for key in want:
        if key == "meta":
            meta = json.loads(str(want["meta"]))
            assert got["meta"]["params"] == meta["params"]
            assert (got["meta"]["task"], got["meta"]["seed"], got["meta"]["first"]) == ("qsa", 3, 7)
            continue
        assert got[key].dtype == want[key].dtype, key
        assert got[key].shape == want[key].shape, key
        assert np.array_equal(got[key], want[key]), key


def test_sample_rf_target_constants_and_slices():
    d = attnlab.sample("rf_target", n=10, seed=1, N=4, d=3)
    assert d["X"].shape == (10, 5, 3) and d["Y"].shape == (10, 1, 1) and d["beta"].shape == (3,)
    tail = attnlab.sample("rf_target", n=4, seed=1, first=6, N=4, d=3)
    assert np.array_equal(tail["X"], d["X"][6:]) and np.array_equal(tail["Y"], d["Y"][6:])


def test_sample_arrays_own_cxx_memory():
    d = attnlab.sample("qsa", n=5, seed=0)
    for key in ("X", "Y", "z", "sets"):
        a = d[key]
        assert a.flags.c_contiguous and a.flags.writeable
        assert type(a.base).__name__ == "PyCapsule", key  # wraps the C++ vector, no copy
    assert d["sets"].dtype == np.int64 and d["z"].dtype == np.float64


def test_sample_empty():
    d = attnlab.sample("qsa", n=0, seed=0, N=8, q=2)
    assert d["X"].shape[0] == 0 and d["Y"].shape[0] == 0 and d["sets"].shape == (0, 8, 2)


@pytest.mark.parametrize("args,sets,kwargs", [
    (["qsa"], ["task.q=20"], {"q": 20}),                 # q >= N: cross-parameter rule
    (["qsa"], ["task.Q=2"], {"Q": 2}),                   # unknown key, did-you-mean
    (["qsa"], ["task.N=many"], {"N": "many"}),           # wrong type
    (["qsx"], [], {}),                                   # unknown task
    (["match3"], ["task.encoding=hex"], {"encoding": "hex"}),  # not a choice
])
def test_sample_errors_equal_cli_messages(run_cli, tmp_path, args, sets, kwargs):
    cmd = ["data", *args, "--n", 3, "-o", tmp_path / "x.npz"]
    for s in sets:
        cmd += ["--set", s]
    want = cli_error(run_cli(*cmd, expect_fail=True))
    with pytest.raises(ValueError) as e:
        attnlab.sample(args[0], n=3, **kwargs)
    assert str(e.value) == want


def test_sample_bad_sizes():
    with pytest.raises(ValueError, match="n = -1 must be >= 0"):
        attnlab.sample("qsa", n=-1)
    with pytest.raises(ValueError, match="first"):
        attnlab.sample("qsa", n=1, first=-5)
    with pytest.raises(ValueError, match="too large|memory|available"):
        attnlab.sample("qsa", n=10**13)
    with pytest.raises(ValueError, match="list of numbers"):
        attnlab.sample("qsa", n=1, N=["a"])


def test_list_tasks_schema():
    tasks = attnlab.list_tasks()
    assert "qsa" in tasks and "rf_target" in tasks
    row = {p["name"]: p for p in tasks["qsa"]["params"]}
    assert row["N"]["type"] == "int" and isinstance(row["N"]["default"], int) and row["N"]["help"]


def test_metrics_equal_numpy_and_threshold():
    d = attnlab.sample("qsa", n=50, seed=2, N=8, q=2, d_out=3)
    rng = np.random.default_rng(0)
    pred = d["Y"] + 0.01 * rng.standard_normal(d["Y"].shape)
    m = attnlab.metrics(pred, d)  # takes Y and success_threshold from the dict
    err = pred - d["Y"]
    assert m["mse"] == pytest.approx(np.mean(err ** 2), rel=1e-12)
    assert m["nmse"] == pytest.approx(np.mean(err ** 2) / np.var(d["Y"]), rel=1e-12)
    assert m["max_abs_err"] == pytest.approx(np.abs(err).max(), rel=1e-12)
    assert m["mean_max_pos_err"] == pytest.approx(np.linalg.norm(err, axis=2).max(axis=1).mean(), rel=1e-12)
    assert m["success_rate"] == 1.0
    assert "success_rate" not in attnlab.metrics(pred, d["Y"])
    assert attnlab.metrics(pred.astype(np.float32), d["Y"])["mse"] == pytest.approx(m["mse"], rel=1e-5)


def test_metrics_errors():
    Y = np.zeros((4, 2, 1))
    with pytest.raises(ValueError, match="must be equal"):
        attnlab.metrics(np.zeros((4, 2, 2)), Y)
    with pytest.raises(ValueError, match=r"\(n, T_out, d_out\)"):
        attnlab.metrics(np.zeros((4, 2)), Y)
    with pytest.raises(ValueError):
        attnlab.metrics(np.full((4, 2, 1), np.nan), Y)
    with pytest.raises(ValueError):
        attnlab.metrics(np.zeros((0, 2, 1)), np.zeros((0, 2, 1)))
    with pytest.raises(ValueError, match="dtype"):
        attnlab.metrics(np.zeros((4, 2, 1), dtype=np.int64), Y)
