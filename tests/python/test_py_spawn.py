"""attnlab.run()/reproduce() run their job in a fresh attnlab process, never in a fork of the
interpreter (python/src/bind_run.cpp, apps/cmd_job.cpp): a fork of a multi-threaded process
(a Jupyter kernel) could block for ever on a lock another thread held at the fork, e.g.
SQLite's memory mutex while IPython's history thread writes (issue #33). Also: a spec given as
TOML text or a dict."""
import inspect
import os
import subprocess
import signal
import sys
import tempfile
import textwrap
import threading
import time

import numpy as np
import pytest

import attnlab
from conftest import ROOT, spec_path

TINY = """
[experiment]
seeds = 1
[task]
name = "qsa"
q = 1
N = 5
d_out = 2
[model]
name = "linear"
[train]
n = 32
[eval]
n = 32
"""

SLOW = TINY.replace('name = "linear"', 'name = "attention"\nm = 8').replace(
    "n = 32\n[eval]", "n = 64\nsteps = 4000\nbatch = 16\n[eval]")


def _children(pid):
    """The pids whose parent is pid (from /proc)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(name))
    return out


def test_the_job_runs_in_the_attnlab_binary(tmp_path):
    """The process run() starts is the attnlab binary (its /proc/PID/exe), not a copy of this
    interpreter; its own children (the fork server, the workers) are too."""
    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW)
    seen, stop = {}, threading.Event()

    def watch():
        while not stop.is_set():
            for pid in _children(os.getpid()):
                try:
                    seen[pid] = os.readlink(f"/proc/{pid}/exe")
                except OSError:
                    pass
            time.sleep(0.002)

    t = threading.Thread(target=watch)
    t.start()
    try:
        res = attnlab.run(spec, out=tmp_path / "o")
    finally:
        stop.set()
        t.join()
    assert res.summary["ok"] == 1
    binary = os.path.realpath(attnlab.cli_path())
    assert seen, "run() started no child process"
    assert set(os.path.realpath(p.replace(" (deleted)", "")) for p in seen.values()) == {binary}, seen
    assert os.path.realpath(sys.executable) not in seen.values()


def test_a_spec_may_be_toml_text_or_a_dict(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    os.mkdir(tmp_path / "tmp")
    by_path = tmp_path / "tiny.toml"
    by_path.write_text(TINY)
    a = attnlab.run(by_path, out=tmp_path / "a")
    b = attnlab.run(TINY, out=tmp_path / "tiny")
    spec = {"experiment": {"seeds": 1}, "task": {"name": "qsa", "q": 1, "N": 5, "d_out": 2},
            "model": {"name": "linear"}, "train": {"n": 32}, "eval": {"n": 32}}
    c = attnlab.run(spec, out=tmp_path / "c")
    assert a["run_id"].tolist() == b["run_id"].tolist() == c["run_id"].tolist()
    assert np.array_equal(a["test_mse"], b["test_mse"]) and np.array_equal(a["test_mse"], c["test_mse"])
    assert b.experiment == "tiny"  # the stem of the temporary file: the out directory's name
    # Resumes like a file: the same dict again runs nothing.
    assert attnlab.run(spec, out=tmp_path / "c").summary == {
        "planned": 1, "skipped": 1, "ok": 0, "failed": 0}
    # Sections, [[tables]], quoted keys and inline tables, as the shipped specs use them.
    grid = dict(spec, sweep={"train.n": [16, 32]}, quick={"sweep": {"train.n": [16]}},
                claim=[{"id": "c", "text": "t", "type": "below", "metric": "test_mse",
                        "threshold": 100.0, "where": {"train.n": 16}}])
    d = attnlab.run(grid, out=tmp_path / "d", quick=True)
    assert d["train.n"].tolist() == [16] and [c["id"] for c in d.claims] == ["c"]
    with pytest.raises(TypeError, match="spec must be a path, TOML text"):
        attnlab.run(42, out=tmp_path / "e")
    with pytest.raises(ValueError):
        attnlab.run("[task]\nname = \"nope\"\n", out=tmp_path / "f")
    assert os.listdir(tmp_path / "tmp") == []  # the temporary specs are removed


def test_a_binary_of_another_build_is_refused(tmp_path, monkeypatch):
    """The job checks that the binary is the module's build (its option spellings and store
    format could differ): a clear error, not a wrong run."""
    fake = tmp_path / "attnlab"
    fake.write_text("#!/usr/bin/python3\nimport os, sys\nargs = sys.argv[1:]\n"
                    "args = [a if not a.startswith('caller=') else 'caller=0.0.0 other' for a in args]\n"
                    "os.execv(os.environ['ATTNLAB_REAL'], [os.environ['ATTNLAB_REAL']] + args)\n")
    fake.chmod(0o755)
    monkeypatch.setenv("ATTNLAB_REAL", attnlab.cli_path())
    monkeypatch.setenv("ATTNLAB_CLI", str(fake))
    with pytest.raises(ValueError, match="is not the build of the Python module"):
        attnlab.run(TINY, out=tmp_path / "o")
    monkeypatch.setenv("ATTNLAB_CLI", "/bin/false")
    with pytest.raises(ValueError, match=r"the run process \(/bin/false\) exited with code 1"):
        attnlab.run(TINY, out=tmp_path / "o")


# The stress test: runs and reproductions while other threads hammer SQLite and malloc. It
# runs in a subprocess so that a hang (the forked child blocked on a lock) is a timeout, not
# a test that never ends. STRESS_ROUNDS rounds of one run() and one reproduce().
# The figures are not drawn (ATTNLAB_PYTHON=/bin/true: the plotting script is not run), so a
# round takes about a second.
STRESS_ROUNDS = int(os.environ.get("ATTNLAB_STRESS_ROUNDS", "20"))
STRESS_TIMEOUT = float(os.environ.get("ATTNLAB_STRESS_TIMEOUT", "90"))
STRESS = textwrap.dedent("""
    import os, sqlite3, sys, threading, time, warnings
    import numpy as np
    import attnlab
    out, rounds, tiny = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    stop = threading.Event()
    def hammer_sqlite(k):
        db = sqlite3.connect(os.path.join(out, f"h{k}.sqlite"), check_same_thread=False)
        db.execute("create table if not exists t(x)")
        while not stop.is_set():
            db.execute("insert into t values (randomblob(200))")
            db.execute("select count(*), sum(length(x)) from t").fetchall()
            if db.execute("select count(*) from t").fetchone()[0] > 2000:
                db.execute("delete from t")
            db.commit()
    def hammer_malloc():
        while not stop.is_set():
            [bytearray(n) for n in range(1, 4096, 37)]
            np.ones(50000).sum()
    threads = [threading.Thread(target=hammer_sqlite, args=(k,)) for k in range(4)]
    threads += [threading.Thread(target=hammer_malloc) for _ in range(2)]
    for t in threads:
        t.start()
    warnings.simplefilter("ignore")
    t0 = time.time()
    try:
        for i in range(rounds):
            res = attnlab.run(tiny, out=os.path.join(out, f"r{i}"), progress=False)
            assert res.summary["ok"] == 1, res.summary
            rep = attnlab.reproduce("demo", quick=True, out=os.path.join(out, "rep"),
                                    report_only=i > 0, progress=False, verbose=False)
            assert rep["sections"], rep
            print(f"round {i} done at {time.time() - t0:.1f} s", flush=True)
    finally:
        stop.set()
        for t in threads:
            t.join()
    print("stress: ok", flush=True)
""")


def test_runs_and_reproductions_beside_threads_that_hammer_sqlite_and_malloc(tmp_path):
    tiny = tmp_path / "tiny.toml"
    tiny.write_text(TINY)
    script = tmp_path / "stress.py"
    script.write_text(STRESS)
    env = dict(os.environ, ATTNLAB_NO_PROGRESS="1", ATTNLAB_PYTHON="/bin/true")
    p = subprocess.Popen([sys.executable, str(script), str(tmp_path), str(STRESS_ROUNDS),
                          str(tiny)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=STRESS_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the script and whatever it started (a hung child)
        out, err = p.communicate()
        pytest.fail(f"hung after {STRESS_TIMEOUT} s: {out!r}")
    assert p.returncode == 0 and "stress: ok" in out, (p.returncode, out, err[-3000:])


CTRL_C = textwrap.dedent("""
    import os, signal, sys, threading, time
    import attnlab
    spec, out = sys.argv[1], sys.argv[2]
""") + inspect.getsource(_children) + textwrap.dedent("""
    def ctrl_c():
        # A terminal's Ctrl-C: SIGINT to the whole foreground process group, the job included,
        # once the job is running (a fixed delay raced a fast machine's whole run).
        while not _children(os.getpid()):
            time.sleep(0.01)
        time.sleep(0.3)
        os.killpg(os.getpgrp(), signal.SIGINT)
    threading.Thread(target=ctrl_c, daemon=True).start()
    try:
        attnlab.run(spec, out=out, progress=False)
        print("not interrupted")
    except KeyboardInterrupt:
        print("KeyboardInterrupt")
""")


def test_a_terminals_ctrl_c_is_a_keyboard_interrupt(tmp_path):
    """The job dies of the group's SIGINT at the same moment this process sees it: run() raises
    KeyboardInterrupt, not 'the run process was killed by signal 2'."""
    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW.replace("seeds = 1", "seeds = 64"))
    script = tmp_path / "ctrl_c.py"
    script.write_text(CTRL_C)
    p = subprocess.run([sys.executable, str(script), str(spec), str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=120, start_new_session=True)
    assert p.stdout.strip() == "KeyboardInterrupt", (p.stdout, p.stderr[-2000:])
