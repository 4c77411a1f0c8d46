"""attnlab.run / attnlab.results against `attnlab run` and the store."""
import csv
import os
import signal
import threading

import numpy as np
import pytest

import attnlab
from conftest import cli_error, spec_path

DEMO = spec_path("experiments", "demo", "baselines.toml")
SMALL = ["experiment.seeds=2", "sweep.train.n=[64, 128]"]  # 2 models x 2 tasks x 2 n x 2 seeds


def test_run_equals_cli(run_cli, tmp_path):
    run_cli("run", DEMO, "--out", tmp_path / "cli", "--jobs", 1, "-q", *sum((["--set", s] for s in SMALL), []))
    res = attnlab.run(DEMO, out=tmp_path / "py", set=SMALL)
    assert res.summary == {"planned": 16, "skipped": 0, "ok": 16, "failed": 0}
    with open(tmp_path / "cli" / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(res["run_id"]) == [r["run_id"] for r in rows]
    # The swept keys in axis order, then the keys the plots' titles name (results.csv's columns).
    assert res.swept[:3] == ["model.name", "task.name", "train.n"]
    assert res.swept == list(rows[0].keys())[3:3 + len(res.swept)]
    for k in ("test_nmse", "test_mse", "train_mse"):
        assert np.array_equal(res[k], np.array([float(r[k]) for r in rows])), k
    assert res["train.n"].dtype == np.int64 and list(res["train.n"][:4]) == [64, 64, 128, 128]
    assert res["model.name"][0] == "mean" and res["status"].tolist() == ["ok"] * 16
    assert res["seed"].dtype == np.int64 and res["test_nmse"].dtype == np.float64
    assert len(res.rows()) == 16 and res.rows()[0]["run_id"] == rows[0]["run_id"]
    lin = res.where({"model.name": "linear", "task.name": "rf_target"})
    assert len(lin) == 4 and np.all(lin.where({"train.n": 128})["test_nmse"] < 1e-6)  # n > (N+1)d
    # The same spec through Python and the CLI writes the same results.csv (timings aside).
    with open(tmp_path / "py" / "results.csv") as f:
        py_rows = list(csv.DictReader(f))
    timing = {"wall_seconds", "peak_rss_mb", "fit_seconds"}
    assert [{k: v for k, v in r.items() if k not in timing} for r in py_rows] == \
           [{k: v for k, v in r.items() if k not in timing} for r in rows]
    again = attnlab.results(tmp_path / "cli")
    assert np.array_equal(again["test_nmse"], res["test_nmse"])
    assert "series" in res.series and len(res.series["run_id"]) == len(res.series["value"])


def test_run_resumes_after_ctrl_c(tmp_path):
    out = tmp_path / "r"
    # 2 x 2 x 6 x 12 = 288 runs, one process each: about 2 s here, so the Ctrl-C at 0.6 s lands
    # while runs remain (with 96 runs a machine with fast BLAS kernels had finished them all).
    sets = ["experiment.seeds=12"]
    total = 288
    timer = threading.Timer(0.6, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    interrupted = False
    try:
        attnlab.run(DEMO, out=out, set=sets)
    except KeyboardInterrupt:
        interrupted = True
    timer.join()
    done = len(attnlab.results(out)) if (out / "results.sqlite").exists() else 0
    res = attnlab.run(DEMO, out=out, set=sets)
    assert len(res) == total and np.all(res["status"] == "ok")
    assert res.summary["skipped"] == done and res.summary["ok"] == total - done
    assert interrupted and done < total  # the Ctrl-C landed while runs remained
    again = attnlab.run(DEMO, out=out, set=sets)
    assert again.summary == {"planned": total, "skipped": total, "ok": 0, "failed": 0}


def test_run_errors_equal_cli(run_cli, tmp_path):
    want = cli_error(run_cli("run", DEMO, "--out", tmp_path / "c", "--set", "task.qsa.q=99", expect_fail=True))
    with pytest.raises(ValueError) as e:
        attnlab.run(DEMO, out=tmp_path / "p", set={"task.qsa.q": 99})
    assert str(e.value) == want
    with pytest.raises(OSError, match="no such spec file"):
        attnlab.run(tmp_path / "missing.toml", out=tmp_path / "m")
    attnlab.run(DEMO, out=tmp_path / "one", set=SMALL)
    with pytest.raises(ValueError, match="holds results of a different spec") as e:
        attnlab.run(DEMO, out=tmp_path / "one", set=SMALL + ["eval.n=100"])  # (a grid change is taken)
    # The advice names Python's keywords, not the command line's flags (core/front_option.h).
    assert "(out=), or add force_new=True" in str(e.value) and "--" not in str(e.value)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError):
        attnlab.run(DEMO, out=tmp_path / "file")
    with pytest.raises(OSError, match=r"no results.sqlite here; run `attnlab\.run\(SPEC, out="):
        attnlab.results(tmp_path / "empty")  # the hint is a Python call (FrontCommand::kRunInto)
    with pytest.raises(ValueError, match="jobs"):
        attnlab.run(DEMO, out=tmp_path / "j", jobs=0)
    with pytest.raises(ValueError, match="no column"):
        attnlab.results(tmp_path / "one").where({"nope": 1})


def test_run_records_failed_runs(tmp_path):
    spec = tmp_path / "fail.toml"
    # rfa needs rf_target-style data (one scalar output): the run fails, run() does not.
    spec.write_text('[task]\nname = "qsa"\nN = 6\nq = 2\n[model]\nname = "rfa"\nheads = 2\n'
                    '[train]\nn = 64\n[eval]\nn = 16\n')
    res = attnlab.run(spec, out=tmp_path / "o")
    assert res.summary["failed"] == 1 and res["status"][0] == "failed"
    assert res["error"][0] and "test_mse" not in res


@pytest.mark.parametrize("n", [64, 0])  # a fixed training set, and fresh samples every step
def test_fit_task_equals_one_run_of_a_spec(tmp_path, n):
    spec = tmp_path / "one.toml"
    spec.write_text('[experiment]\nseeds = [3]\n[task]\nname = "qsa"\nN = 6\nq = 2\n'
                    '[model]\nname = "attention"\nm = 4\n'
                    f'[train]\nn = {n}\nsteps = 12\nbatch = 16\neval_every = 6\nval_n = 32\n[eval]\nn = 32\n')
    res = attnlab.run(spec, out=tmp_path / "o")
    assert res["status"][0] == "ok", res["error"][0]
    m = attnlab.model("attention", seed=3, m=4).fit_task("qsa", {"N": 6, "q": 2}, n=n, steps=12, batch=16,
                                                          eval_every=6, val_n=32)
    test = attnlab.sample("qsa", n=32, seed=3, first=10**9, N=6, q=2)
    ours = attnlab.metrics(m.predict(test), test)
    assert ours["mse"] == res["test_mse"][0] and ours["success_rate"] == res["test_success_rate"][0]
    with pytest.raises(ValueError, match="needs a training set"):
        attnlab.model("linear").fit_task("qsa", n=0)


def test_run_is_refused_while_another_runner_holds_the_directory(tmp_path):
    import fcntl
    out = tmp_path / "o"
    out.mkdir()
    with open(out / ".attnlab.lock", "a+") as f:  # the lock a runner takes (fcntl, whole file)
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(ValueError, match=f"is in use by another attnlab runner \\(pid {os.getpid()}"):
            attnlab.run(DEMO, out=out, set=SMALL)
        assert not (out / "results.sqlite").exists()
    res = attnlab.run(DEMO, out=out, set=SMALL)
    assert res.summary["ok"] == 16
    assert not (out / "results.sqlite-wal").exists()


SELECT_SPEC = """
experiment = { seeds = 2 }
task = { name = "qsa", N = 4, q = 1, d_out = 2 }
model = { name = "attention" }
train = { n = 100, steps = 40, batch = 16, eval_every = 20 }
eval = { n = 50 }
sweep = { "model.m" = [4, 8] }
select = { axes = ["model.m"], max_params = 2500 }
"""


def test_results_hold_the_selection(tmp_path):
    """A spec's [select]: Results.selected has the chosen run of each seed (the candidate with
    the smallest val_loss within the budget), Results.selection every candidate."""
    (tmp_path / "s.toml").write_text(SELECT_SPEC)
    res = attnlab.run(tmp_path / "s.toml", out=tmp_path / "out", progress=False)
    sel, cur = res.selected, res.selection
    assert list(sel["seed"]) == [0, 1]
    for s in (0, 1):
        mine = cur["seed"] == s
        eligible = mine & (cur["eligible"] == 1)
        best = cur["run_id"][eligible][np.argmin(cur["val_loss"][eligible])]
        assert sel["run_id"][sel["seed"] == s][0] == best
        assert cur["run_id"][mine & (cur["chosen"] == 1)][0] == best
    assert (sel["n_params"] <= 2500).all()
    assert list(cur["why"][cur["model.m"] == 8]) == ["n_params 2607 > 2500"] * 2
    plain = attnlab.run(DEMO, out=tmp_path / "plain", set=SMALL, progress=False)
    assert plain.selected is None and plain.selection is None


def test_selection_csv_keeps_run_ids_as_text(tmp_path):
    # A run id is 16 hex digits; one made only of digits (or digits and one 'e') must stay text.
    path = tmp_path / "selected.csv"
    path.write_text("run_id,seed,status,model.m\n1234567890123456,0,ok,4\n12e4567890123456,1,ok,8\n")
    from attnlab._experiments import _csv_columns
    cols = _csv_columns(str(path))
    assert cols["run_id"].tolist() == ["1234567890123456", "12e4567890123456"]
    assert cols["model.m"].dtype == np.int64
