"""The attnlab package's front: version, python -m attnlab, reproduce, results as a frame,
warnings of the core, and Python's words in the other-size error."""
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import attnlab
from conftest import spec_path

DEMO = spec_path("experiments", "demo", "baselines.toml")


def test_version_matches_the_cli(run_cli):
    assert run_cli("--version").stdout.split()[1] == attnlab.__version__
    with open(spec_path("CMakeLists.txt")) as f:
        assert f"project(attnlab VERSION {attnlab.__version__} " in f.read()


def test_python_m_attnlab_runs_the_command_line(cli):
    env = dict(os.environ, ATTNLAB_CLI=cli)
    p = subprocess.run([sys.executable, "-m", "attnlab", "--version"], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"attnlab {attnlab.__version__}")
    bad = subprocess.run([sys.executable, "-m", "attnlab", "reproduce", "nosuch"], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2 and "no shipped experiments named 'nosuch'" in bad.stderr


def test_reproduce_returns_the_claims_the_cli_prints(run_cli, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rep = attnlab.reproduce("demo", quick=True, progress=False)
    assert rep["exit_code"] == 0 and rep["passed"] == 3 and rep["failed"] == 0
    assert "== baselines" in capsys.readouterr().out
    cli = run_cli("reproduce", "demo", "--quick", "-q", "--out", tmp_path / "cli")
    lines = [l for l in cli.stdout.splitlines() if l.startswith(("PASS ", "FAIL "))]
    assert lines == [f"{c['verdict']} {c['section']}/{c['id']}: {c['text']} -- {c['detail']}"
                     for c in rep.claims]
    # The default output folder gets the index of every group's latest report.
    index = (tmp_path / "results" / "reproduce" / "index.html").read_text()
    assert 'href="demo-quick/report.html"' in index and "<td>3</td><td>0</td>" in index
    assert os.path.exists(rep.report)


def test_reproduce_without_run_groups_stores_the_same_values(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    (home / "experiments" / "shared").mkdir(parents=True)
    (home / "experiments" / "shared" / "g.toml").write_text(
        '[experiment]\nname = "grouped"\nseeds = 1\n[task]\nname = "rf_target"\nd = 4\nN = 4\n'
        '[model]\nname = "rfa"\nheads = 16\n[eval]\nn = 200\n[sweep]\n"train.n" = [64, 128, 256]\n')
    (home / "scripts").mkdir()
    shutil.copy(spec_path("scripts", "plot_results.py"), home / "scripts")
    monkeypatch.setenv("ATTNLAB_HOME", str(home))
    attnlab.reproduce("shared", out=tmp_path / "grouped", progress=False)
    assert "3 runs: 3 ran (3 ok, 0 failed); 3 in 1 run group," in capsys.readouterr().out
    attnlab.reproduce("shared", out=tmp_path / "single", progress=False, run_groups=False)
    assert "3 runs: 3 ran (3 ok, 0 failed), 0 already done" in capsys.readouterr().out
    grouped = attnlab.results(tmp_path / "grouped" / "g")
    single = attnlab.results(tmp_path / "single" / "g")
    assert len(grouped) == 3 and np.array_equal(grouped["test_nmse"], single["test_nmse"])


def test_reproduce_errors_are_value_errors():
    with pytest.raises(ValueError, match="no shipped experiments named 'nosuch'"):
        attnlab.reproduce("nosuch")


def test_failed_runs_arrive_as_warnings(tmp_path):
    spec = tmp_path / "fail.toml"
    spec.write_text('[task]\nname = "qsa"\nN = 6\nq = 2\n[model]\nname = "rfa"\nheads = 2\n'
                    '[train]\nn = 64\n[eval]\nn = 16\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = attnlab.run(spec, out=tmp_path / "o", progress=False)
    assert res.summary["failed"] == 1
    msgs = [str(w.message) for w in caught if issubclass(w.category, attnlab.AttnlabWarning)]
    assert len(msgs) == 1 and msgs[0].startswith(f"run {res['run_id'][0]} (point 0, seed 0) failed: ")


def test_worker_warnings_arrive_as_warnings(tmp_path):
    spec = tmp_path / "floor.toml"
    spec.write_text('[experiment]\nname = "floor"\nseeds = 1\n[task]\nname = "rf_target"\nN = 4\nd = 2\n'
                    'p = 1\n[model]\nname = "rfa"\nheads = 4\n[train]\nn = 32\nlambdas = [1e-300, 1.0]\n'
                    'solver = "dual"\n[eval]\nn = 16\n')
    with pytest.warns(attnlab.AttnlabWarning, match="below the numerical floor"):
        attnlab.run(spec, out=tmp_path / "o", progress=False)


def test_in_process_warnings_arrive_as_warnings():
    d = attnlab.sample("rf_target", n=32, seed=0, N=4, d=2, p=1)
    with pytest.warns(attnlab.AttnlabWarning, match="below the numerical floor"):
        attnlab.model("rfa", heads=4).fit(d["X"], d["Y"], lambdas=[1e-300, 1.0], solver="dual")


def test_progress_plain_lines_without_tqdm(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    attnlab.run(DEMO, out=tmp_path / "o", quick=True, progress=True, set=["experiment.seeds=1"])
    err = capsys.readouterr().err
    assert "runs: 12/12 runs" in err, err


def test_other_size_error_names_the_python_keyword(tmp_path):
    attnlab.run(DEMO, out=tmp_path / "o", quick=True, progress=False)
    with pytest.raises(ValueError) as e:
        attnlab.run(DEMO, out=tmp_path / "o", progress=False)
    msg = str(e.value)
    assert "holds the quick-size (quick=True) results of baselines" in msg and "this run is full-size" in msg
    assert "force_new=True" in msg and "--force-new" not in msg
    res = attnlab.run(DEMO, out=tmp_path / "o", force_new=True, progress=False, set=["experiment.seeds=1"])
    assert res.summary["ok"] == res.summary["planned"]


def test_results_as_frame(tmp_path, monkeypatch):
    res = attnlab.run(DEMO, out=tmp_path / "o", quick=True, progress=False, set=["experiment.seeds=1"])
    try:
        import pandas
    except ImportError:
        pandas = None
    if pandas is not None:
        frame = attnlab.results(tmp_path / "o", as_frame=True)
        assert isinstance(frame, pandas.DataFrame) and len(frame) == len(res)
        assert list(frame.columns) == list(res.keys())
        np.testing.assert_array_equal(frame["test_nmse"].to_numpy(), res["test_nmse"])
        assert frame.attrs["swept"] == res.swept
    monkeypatch.setitem(sys.modules, "pandas", None)  # without pandas: the numpy columns
    cols = attnlab.results(tmp_path / "o", as_frame=True)
    assert isinstance(cols, attnlab.Results) and len(cols) == len(res)


def _write_safetensors(path, tensors, metadata):
    """A minimal safetensors file of float32 tensors."""
    import json
    import struct
    header, blobs, at = {"__metadata__": metadata}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(a, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def test_qk_stats_equals_the_cli(run_cli, tmp_path):
    import json
    rng = np.random.default_rng(0)
    tensors = {}
    for l in range(2):
        q = rng.standard_normal((8, 8))
        tensors[f"encoder.layer.{l}.attention.self.query.weight"] = q
        tensors[f"encoder.layer.{l}.attention.self.key.weight"] = q + 0.1 * rng.standard_normal((8, 8))
    path = tmp_path / "m.safetensors"
    _write_safetensors(path, tensors, {"num_attention_heads": "2"})
    got = attnlab.qk_stats(path, seed=3)
    want = json.loads(run_cli("qk-stats", path, "--json", "--seed", "3").stdout)
    assert got == want and len(got["layers"]) == 2 and got["num_heads"] == 2
    with pytest.raises(ValueError, match="^layers=: layer 5 is not in"):  # Python's keyword
        attnlab.qk_stats(path, layers="5")


def _import_attnlab(coretype, numpy_first):
    """`import attnlab` in a fresh interpreter with OPENBLAS_CORETYPE set to coretype (unset when
    None), numpy imported first or not: the kernels OpenBLAS loaded, what the module says it
    should have loaded instead, and the AttnlabWarnings."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype is not None:
        env["OPENBLAS_CORETYPE"] = coretype
    code = ("import warnings\n" + ("import numpy\n" if numpy_first else "") +
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    import attnlab\n"
            "print(attnlab._attnlab.blas_core())\n"
            "print(attnlab._attnlab.blas_core_wanted())\n"
            "for x in w:\n"
            "    if issubclass(x.category, attnlab.AttnlabWarning): print(x.message)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    return lines[0], lines[1], lines[2:]


def test_subnormals_are_flushed_inside_attnlab_calls_only():
    # attnlab computes with FTZ/DAZ inside its calls (core/float_env.h) and leaves the
    # process's own mode alone: numpy still makes a subnormal after a fit.
    assert attnlab.subnormals() == "flushed"
    X = np.random.default_rng(0).standard_normal((20, 2, 3))
    attnlab.model("attention", m=4).fit(X, X[:, :1, :1].copy(), steps=2)
    tiny = np.array([np.finfo(np.float32).tiny], dtype=np.float32)
    assert (tiny * np.float32(0.5))[0] == np.finfo(np.float32).tiny / 2
    p = subprocess.run([sys.executable, "-c", "import attnlab; print(attnlab.subnormals())"],
                       capture_output=True, text=True, check=True,
                       env={**os.environ, "ATTNLAB_SUBNORMALS": "keep"})
    assert p.stdout.strip() == "kept"


def test_the_bindings_load_the_kernels_the_command_line_runs():
    # What the command line loads with OPENBLAS_CORETYPE unset, and whether that replaced
    # OpenBLAS's fallback without AVX (core/blas_core.h; Debian 12's OpenBLAS on an Intel model
    # 207: Prescott).
    cli = attnlab.cli_path()
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True,
                             env={k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"})
    line = version.stdout.splitlines()[1]
    want = line.split("OpenBLAS core ")[1].split(",")[0]
    replaced = "in place of OpenBLAS's fallback" in line
    # Imported first, attnlab loads the command line's kernels: no warning.
    core, wanted, found = _import_attnlab(None, numpy_first=False)
    assert (core, wanted, found) == (want, "", [])
    # numpy first loads OpenBLAS before attnlab can choose: a warning naming the replacement
    # exactly where the command line replaced the fallback.
    core, wanted, found = _import_attnlab(None, numpy_first=True)
    assert len(found) == (1 if replaced else 0), (line, found)
    if replaced:
        assert wanted == want and f"OPENBLAS_CORETYPE={want}" in found[0]
        assert "Import attnlab before numpy" in found[0] and f"'{core}'" in found[0]
    # A user's choice is the user's: kept, no warning.
    assert _import_attnlab("Prescott", numpy_first=True) == ("Prescott", "", [])
    assert _import_attnlab("Prescott", numpy_first=False) == ("Prescott", "", [])


def test_import_never_asks_a_wrapper_of_itself(tmp_path):
    # ATTNLAB_CLI naming the console script (`python -m attnlab`) must not make each import
    # start another (each asking again): the import only asks a binary.
    wrapper, ran = tmp_path / "attnlab", tmp_path / "ran"
    wrapper.write_text(f"#!/bin/sh\ntouch {ran}\nexec {sys.executable} -m attnlab \"$@\"\n")
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    env["ATTNLAB_CLI"] = str(wrapper)
    p = subprocess.run([sys.executable, "-c", "import attnlab"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert not ran.exists()
