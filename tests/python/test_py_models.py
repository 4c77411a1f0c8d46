"""attnlab.model / load / Model.* against `attnlab fit`, `predict` and `features`."""
import gc
import os
import signal
import threading
import time
import weakref

import numpy as np
import pytest

import attnlab
from conftest import cli_error, load_npz


@pytest.fixture(scope="module")
def rf_data(tmp_path_factory, run_cli):
    """rf_target train (n = 300) and test (n = 100, first = 10^6) files and arrays."""
    tmp = tmp_path_factory.mktemp("rf")
    train, test = tmp / "train.npz", tmp / "test.npz"
    run_cli("data", "rf_target", "--n", 300, "--seed", 0, "--set", "task.N=4", "--set", "task.d=4", "-q", "-o", train)
    run_cli("data", "rf_target", "--n", 100, "--seed", 0, "--first", 1000000, "--set", "task.N=4",
            "--set", "task.d=4", "-q", "-o", test)
    return tmp, load_npz(train), load_npz(test)


@pytest.fixture(scope="module")
def qsa_data(tmp_path_factory, run_cli):
    tmp = tmp_path_factory.mktemp("qsa")
    train, test = tmp / "train.npz", tmp / "test.npz"
    sets = ["--set", "task.N=6", "--set", "task.q=2", "--set", "task.d_out=2"]
    run_cli("data", "qsa", "--n", 128, "--seed", 0, *sets, "-q", "-o", train)
    run_cli("data", "qsa", "--n", 16, "--seed", 0, "--first", 1000000, *sets, "-q", "-o", test)
    return tmp, load_npz(train), load_npz(test)


def cli_metrics(stdout):
    """{name: value} of the "test_NAME value" pairs `attnlab predict` prints."""
    words = stdout.split()
    return {w[5:]: float(words[i + 1]) for i, w in enumerate(words) if w.startswith("test_")}


def test_rfa_fit_predict_equals_cli(run_cli, rf_data):
    tmp, train, test = rf_data
    run_cli("fit", "rfa", "--in", tmp / "train.npz", "--set", "model.heads=16", "--set",
            "train.refit=true", "--seed", 1, "-q", "--save", tmp / "cli.safetensors")
    p = run_cli("predict", "--model", tmp / "cli.safetensors", "--in", tmp / "test.npz", "-o", tmp / "cli_pred.npz")
    want = load_npz(tmp / "cli_pred.npz")["Y_pred"]

    m = attnlab.model("rfa", seed=1, heads=16).fit(train["X"], train["Y"], refit=True)
    got = m.predict(test["X"])
    assert got.shape == (100, 1, 1) and np.array_equal(got, want)
    ours = attnlab.metrics(got, test["Y"])
    for name, value in cli_metrics(p.stdout).items():
        assert ours[name] == pytest.approx(value, rel=1e-5, abs=1e-12), name
    assert m.train_params["n"] == 300 and m.train_params["refit"] is True
    assert m.params["heads"] == 16 and m.shape == {"T": 5, "d_in": 4, "T_out": 1, "d_out": 1}
    assert "lambda" in m.log["scalars"]

    # Our file through the CLI, the CLI's file through Python: the same predictions.
    m.save(tmp / "py.safetensors")
    run_cli("predict", "--model", tmp / "py.safetensors", "--in", tmp / "test.npz", "-q", "-o", tmp / "py_pred.npz")
    assert np.array_equal(load_npz(tmp / "py_pred.npz")["Y_pred"], want)
    loaded = attnlab.load(tmp / "cli.safetensors")
    assert loaded.name == "rfa" and loaded.seed == 1 and loaded.metadata["format"] == "attnlab.model"
    assert np.array_equal(loaded.predict(test["X"]), want)


def test_train_n_takes_first_samples(run_cli, rf_data):
    tmp, train, test = rf_data
    run_cli("fit", "linear", "--in", tmp / "train.npz", "--set", "train.n=50", "-q", "--save", tmp / "lin.safetensors")
    run_cli("predict", "--model", tmp / "lin.safetensors", "--in", tmp / "test.npz", "-q", "-o", tmp / "lin.npz")
    m = attnlab.model("linear").fit(train["X"], train["Y"], n=50)
    assert np.array_equal(m.predict(test["X"]), load_npz(tmp / "lin.npz")["Y_pred"])


def test_attention_model_equals_cli(run_cli, qsa_data):
    tmp, train, test = qsa_data
    run_cli("fit", "attention", "--in", tmp / "train.npz", "--set", "model.m=8", "--set", "train.steps=30",
            "--set", "train.batch=32", "--seed", 2, "-q", "--save", tmp / "att.safetensors")
    run_cli("predict", "--model", tmp / "att.safetensors", "--in", tmp / "test.npz", "-q", "-o", tmp / "att.npz")
    want = load_npz(tmp / "att.npz")
    m = attnlab.model("attention", seed=2, m=8).fit(train["X"], train["Y"], steps=30, batch=32)
    assert np.array_equal(m.predict(test["X"]), want["Y_pred"])
    A = m.attention(test["X"])
    assert set(A) == {"layer0"} and A["layer0"].shape == (16, 1, 6, 6)
    assert np.array_equal(A["layer0"], want["attention.layer0"])
    assert np.allclose(A["layer0"].sum(axis=-1), 1.0)
    assert "val_loss" in m.log["series"]
    steps, values = m.log["series"]["val_loss"]
    assert steps[-1] == 30 and np.all(np.isfinite(values))


@pytest.mark.parametrize("name", ["rfa", "rfmlp"])
def test_features_equal_cli(run_cli, rf_data, name):
    tmp, train, _ = rf_data
    out = tmp / f"phi_{name}.npz"
    run_cli("features", "--model", name, "--set", "model.heads=8", "--seed", 5, "--in", tmp / "train.npz", "-q", "-o", out)
    want = load_npz(out)
    got = attnlab.model(name, seed=5, heads=8).features(train["X"])
    weights = "W" if name == "rfa" else "w"
    assert set(got) == {weights, "Phi"}
    assert np.array_equal(got["Phi"], want["Phi"]) and np.array_equal(got[weights], want[weights])


def test_every_registered_model_fits_and_predicts(rf_data, qsa_data):
    _, rf, _ = rf_data
    _, qsa, _ = qsa_data
    quick = {"attention": {"m": 4}, "third_order": {"m": 2}, "transformer": {"m": 4, "layers": 1},
             "mlp": {"width": 8, "depth": 2}, "lstm": {"hidden": 4}, "rfa": {"heads": 4},
             "brfa": {"heads": 4}, "rfmlp": {"heads": 4}}
    for name, info in attnlab.list_models().items():
        if name == "construction":
            continue  # no training: test_py_constructions.py
        neural = info["fresh_samples"]
        data = qsa if neural else rf
        train = {"steps": 3, "batch": 16, "eval_every": 3} if neural else {}
        m = attnlab.model(name, **quick.get(name, {})).fit(data["X"][:64], data["Y"][:64], **train)
        pred = m.predict(data["X"][:5])
        assert pred.shape == (5,) + data["Y"].shape[1:] and np.all(np.isfinite(pred)), name


def test_float32_and_noncontiguous_inputs(rf_data):
    _, train, test = rf_data
    m = attnlab.model("linear").fit(train["X"], train["Y"])
    X = test["X"]
    x32 = X.astype(np.float32)
    assert np.array_equal(m.predict(x32), m.predict(x32.astype(np.float64)))
    strided = np.repeat(X, 2, axis=0)[::2]
    assert not strided.flags.c_contiguous
    assert np.array_equal(m.predict(strided), m.predict(X))
    fortran = np.asfortranarray(X)
    assert np.array_equal(m.predict(fortran), m.predict(X))
    assert np.array_equal(m.predict(X.tolist()), m.predict(X))  # nested lists become arrays
    # fit on float32 / non-contiguous targets too
    m32 = attnlab.model("linear").fit(train["X"].astype(np.float32), np.asfortranarray(train["Y"]))
    assert np.array_equal(m32.predict(X), attnlab.model("linear").fit(
        train["X"].astype(np.float32).astype(np.float64), train["Y"]).predict(X))
    empty = m.predict(X[:0])
    assert empty.shape == (0, 1, 1) and empty.dtype == np.float64


def test_array_errors(rf_data):
    _, train, test = rf_data
    X, Y = train["X"], train["Y"]
    m = attnlab.model("linear")
    with pytest.raises(ValueError, match=r"X has shape \(300, 20\) \(2 dimensions\); it must be \(n, T, d_in\)"):
        m.fit(X.reshape(300, -1), Y)
    with pytest.raises(ValueError, match="X has dtype int64; give float64 or float32"):
        m.fit(X.astype(np.int64), Y)
    with pytest.raises(ValueError, match="dtype"):
        m.fit(X.astype(np.float16), Y)
    with pytest.raises(ValueError, match="dtype"):
        m.fit(X.astype(np.complex128), Y)
    with pytest.raises(ValueError, match="X is None"):
        m.fit(None, Y)
    with pytest.raises(ValueError, match="no samples"):
        m.fit(X[:0], Y[:0])
    with pytest.raises(ValueError, match="one target per input"):
        m.fit(X, Y[:10])
    with pytest.raises(ValueError, match="Y has dtype"):
        m.fit(X, np.array([["a"]]))
    with pytest.raises(ValueError, match=r"train.n = 500 but X holds 300 samples; lower train.n"):
        m.fit(X, Y, n=500)
    with pytest.raises(ValueError, match="fresh samples"):
        m.fit(X, Y, n=0)
    m.fit(X, Y)
    with pytest.raises(ValueError, match=r"was fitted on inputs \(n, 5, 4\)"):
        m.predict(np.zeros((3, 6, 4)))
    with pytest.raises(ValueError, match="must be \\(n, 5, 4\\)"):
        m.predict(np.zeros((5, 4)))


def test_model_errors(rf_data, tmp_path, run_cli):
    tmp, train, test = rf_data
    with pytest.raises(ValueError, match="unknown model 'rfx'.*did you mean"):
        attnlab.model("rfx")
    with pytest.raises(ValueError, match="model.haeds"):
        attnlab.model("rfa", haeds=3)
    with pytest.raises(ValueError, match="model.heads"):
        attnlab.model("rfa", heads=-3)
    with pytest.raises(ValueError, match="model.activation"):
        attnlab.model("rfa", activation="tanh")
    with pytest.raises(ValueError, match="train.lambdsa"):
        attnlab.model("rfa", heads=2).fit(train["X"], train["Y"], lambdsa=[1.0])
    # The same message as the CLI for a bad key.
    want = cli_error(run_cli("fit", "rfa", "--in", tmp / "train.npz", "--set", "model.haeds=3",
                             "--save", tmp_path / "x.safetensors", expect_fail=True))
    with pytest.raises(ValueError) as e:
        attnlab.model("rfa", haeds=3)
    assert str(e.value) == want
    m = attnlab.model("rfa", heads=2)
    for call in (lambda: m.predict(test["X"]), lambda: m.attention(test["X"]),
                 lambda: m.save(tmp_path / "a.safetensors")):
        with pytest.raises(ValueError, match="not fitted"):
            call()
    m.fit(train["X"], train["Y"])
    with pytest.raises(ValueError, match="no attention matrices"):
        m.attention(test["X"])
    with pytest.raises(ValueError):
        attnlab.model("mean").features(train["X"])
    with pytest.raises(ValueError, match="must end in .safetensors"):
        m.save(tmp_path / "a.bin")
    with pytest.raises(OSError):
        m.save(tmp_path / "no" / "such" / "dir" / "a.safetensors")
    with pytest.raises(OSError):
        attnlab.load(tmp_path / "missing.safetensors")
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}")
    with pytest.raises((OSError, ValueError)):
        attnlab.load(junk)
    # An altered file: the seed no longer gives the saved frozen weights.
    m.save(tmp_path / "ok.safetensors")
    raw = (tmp_path / "ok.safetensors").read_bytes()
    altered = raw.replace(b'"seed":"0"', b'"seed":"7"')
    assert altered != raw
    (tmp_path / "bad.safetensors").write_bytes(altered)
    with pytest.raises(ValueError, match="frozen weights"):
        attnlab.load(tmp_path / "bad.safetensors")
    with pytest.raises(ValueError, match="unsupported value"):
        attnlab.model("rfa", heads=object())
    with pytest.raises(ValueError, match="diverged"):
        attnlab.model("mlp", width=8, depth=2).fit(train["X"], train["Y"] * 1e200, steps=20)


def test_fit_is_interrupted_by_ctrl_c(qsa_data):
    _, train, _ = qsa_data
    m = attnlab.model("attention", m=8)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        m.fit(train["X"], train["Y"], steps=10**8, batch=32)
    elapsed = time.monotonic() - start
    timer.join()
    assert elapsed < 3.0, elapsed  # the fit stopped within a few steps of the signal
    assert not m.fitted
    m.fit(train["X"], train["Y"], steps=5, batch=32)  # the model is usable again
    assert m.fitted and m.predict(train["X"][:2]).shape == (2, 6, 2)


def test_a_long_fit_shows_its_steps_and_a_short_one_stays_silent(qsa_data, capsys, monkeypatch):
    """Model.fit(progress=True) draws the fit's steps (here the plain lines, tqdm hidden) once it
    has run for _FIT_PROGRESS_DELAY seconds: a short fit shows nothing, a long one (the delay set
    to 0) its last line, and progress=False nothing at all."""
    _, train, _ = qsa_data
    import builtins
    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    attnlab.model("attention", m=4).fit(train["X"], train["Y"], steps=5, batch=8, progress=True)
    assert capsys.readouterr().err == ""  # well under the one-second delay
    monkeypatch.setattr(attnlab._models, "_FIT_PROGRESS_DELAY", 0.0)  # as if the fit were long
    m = attnlab.model("attention", m=8)
    m.fit(train["X"], train["Y"], steps=300, batch=32, progress=False)
    assert capsys.readouterr().err == ""
    m.fit(train["X"], train["Y"], steps=300, batch=32, progress=True)
    err = capsys.readouterr().err
    assert "fit attention: 300/300 steps, " in err, err
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        m.fit(train["X"], train["Y"], steps=5, progress="yes")


def test_an_error_in_the_progress_callback_stops_the_fit(qsa_data):
    _, train, _ = qsa_data
    m = attnlab.model("attention", m=8)
    seen = []

    def broken(done, total):
        seen.append(done)
        raise ZeroDivisionError("the bar broke")

    with pytest.raises(ZeroDivisionError, match="the bar broke"):
        m._core.fit(X=train["X"], Y=train["Y"], train={"steps": 10**7, "batch": 32},
                    progress=broken)
    assert seen == [1] and not m.fitted  # stopped at the first report, the model unfitted


def test_features_is_interrupted_by_ctrl_c():
    """Ctrl-C stops a large features() call within about a second: the loop polls between
    chunks of bounded work (not 4096 samples whatever their cost), and the output is not
    zeroed up front with the GIL held."""
    X = np.random.default_rng(0).standard_normal((4096, 257, 3))  # 256 keys: costly samples
    m = attnlab.model("rfa", heads=1024)
    sent = []
    timer = threading.Timer(0.5, lambda: (sent.append(time.monotonic()),
                                          os.kill(os.getpid(), signal.SIGINT)))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        m.features(X)
    stopped = time.monotonic()
    timer.join()
    assert sent and stopped - sent[0] < 1.0, stopped - sent[0]


def test_fit_releases_the_gil(qsa_data):
    _, train, _ = qsa_data
    m = attnlab.model("attention", m=8)
    ticks = 0
    done = threading.Event()

    def fit():
        m.fit(train["X"], train["Y"], steps=400, batch=64)
        done.set()

    t = threading.Thread(target=fit)
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert ticks > 20, ticks  # this thread ran while the fit was in C++


def test_no_leaks_over_many_calls(rf_data):
    _, train, test = rf_data
    m = attnlab.model("linear").fit(train["X"], train["Y"])

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    for _ in range(50):
        m.predict(test["X"])
        attnlab.sample("qsa", n=64, seed=0)
    gc.collect()
    before = rss()
    for _ in range(1000):
        pred = m.predict(test["X"])
        assert pred.base is not None
        d = attnlab.sample("qsa", n=64, seed=0)  # 64*16*36*8 B = 295 KiB of X per call
        attnlab.metrics(pred, test["Y"])
    del pred, d
    gc.collect()
    grown = rss() - before
    assert grown < 20 * 2**20, grown  # 1000 leaked X arrays alone would be ~290 MiB
    pred = m.predict(test["X"])
    assert __import__("sys").getrefcount(pred) == 2  # only `pred` and the call's argument
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is None


def test_docstrings():
    for name in attnlab.__all__:
        obj = getattr(attnlab, name)
        assert obj.__doc__ and len(obj.__doc__) > 40, name
    for meth in ("fit", "fit_task", "predict", "attention", "features", "evaluate", "save"):
        assert len(getattr(attnlab.Model, meth).__doc__) > 80, meth
    doc = attnlab.model.__doc__
    assert "rfa:" in doc and "model.heads = 512" in doc and "train.lambdas" in doc
    assert "qsa:" in attnlab.sample.__doc__ and "N = 16" in attnlab.sample.__doc__


def test_concurrent_calls_on_one_model_wait_for_each_other(qsa_data):
    _, train, test = qsa_data
    m = attnlab.model("attention", m=8).fit(train["X"], train["Y"], steps=2, batch=32)
    t = threading.Thread(target=lambda: m.fit(train["X"], train["Y"], steps=300, batch=64))
    t.start()
    time.sleep(0.05)
    pred = m.predict(test["X"])  # waits for the fit (GIL released while waiting), then runs
    t.join()
    assert m.fitted and m.train_params["steps"] == 300
    assert pred.shape == (16, 6, 2) and np.all(np.isfinite(pred))
    assert m.predict(test["X"]).shape == (16, 6, 2)
