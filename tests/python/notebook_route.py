#!/usr/bin/python3
"""ctest python_notebook_route: docs/python.md's notebook route, run as written, then the tour
notebook executed several times in a row from it.

1. The sh block of docs/python.md that follows the line `<!-- notebook-route -->` runs line by
   line from the source root (a fresh venv seeing Debian's packages, `pip install` reusing the
   CMake build tree offline, a Jupyter kernel registered, examples/tour.ipynb executed by
   nbconvert), with PYTHONPATH unset, so that `import attnlab` in the notebook can only come
   from the venv's kernel. Replaced, so that the test writes only in its scratch directory:
   `~/venvs/attnlab` -> SCRATCH/v, `--user` -> `--prefix SCRATCH/jupyter` (found through
   JUPYTER_PATH), `ATTNLAB_BUILD_DIR=build` -> this build tree, `--output-dir /tmp/tour` ->
   SCRATCH/out; TMPDIR -> SCRATCH/tmp (the tour's own temporary folders).
2. Checks: the installed extension is the build tree's file byte for byte (no second compile)
   and the registered kernel runs the venv's python.
3. The notebook runs REPEAT more times through the same kernel, in a smaller mode: the two
   model fits are shrunk by text replacement (SMALLER below: fewer steps and heads); the run and
   reproduce cells, where a forked child used to hang (issue #33), run as written. Each
   execution is timed; nbconvert's cell timeout (120 s) fails a hang.
Exit 77 (skipped) without python3-venv, jupyter-nbconvert or python3-ipykernel.
Usage: notebook_route.py SOURCE_DIR BUILD_DIR SCRATCH_DIR [REPEAT]
"""
import filecmp
import glob
import json
import os
import shutil
import subprocess
import sys
import time

SMALLER = [("steps=1500", "steps=60"), ("heads=64", "heads=8"), ("m=64", "m=8")]


def route_commands(doc):
    """The commands of the sh block after `<!-- notebook-route -->`, as the docs test splits
    them (tests/docs/run_doc_commands.py)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "docs"))
    from run_doc_commands import sh_commands
    lines = open(doc, encoding="utf-8").read().split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip() == "<!-- notebook-route -->")
    assert lines[start + 1].startswith("```sh"), "the notebook route is not a sh block"
    end = next(i for i in range(start + 2, len(lines)) if lines[i].startswith("```"))
    return sh_commands(lines[start + 2:end])


def main():
    src, build, tmp = (os.path.abspath(p) for p in sys.argv[1:4])
    repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 9
    py = "/usr/bin/python3"
    if subprocess.run([py, "-c", "import ensurepip, venv, ipykernel, nbconvert"]).returncode != 0 \
            or shutil.which("jupyter-nbconvert") is None:
        print("skipped: needs python3-venv, python3-ipykernel and jupyter-nbconvert")
        return 77
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "out"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ATTNLAB_CLI")}
    # TMPDIR: the tour's tempfile.mkdtemp() folders land in the scratch directory, not in /tmp.
    os.makedirs(os.path.join(tmp, "tmp"))
    env.update(JUPYTER_PATH=os.path.join(tmp, "jupyter", "share", "jupyter"), MPLBACKEND="Agg",
               PATH="/usr/bin:" + env.get("PATH", ""), TMPDIR=os.path.join(tmp, "tmp"))
    replace = [("~/venvs/attnlab", os.path.join(tmp, "v")),
               ("--user", "--prefix " + os.path.join(tmp, "jupyter")),
               ("ATTNLAB_BUILD_DIR=build", "ATTNLAB_BUILD_DIR=" + build),
               ("--output-dir /tmp/tour", "--output-dir " + os.path.join(tmp, "out"))]
    commands = route_commands(os.path.join(src, "docs", "python.md"))
    assert any("nbconvert" in c for c in commands) and any("ipykernel install" in c for c in commands)
    for written in commands:
        command = written
        for old, new in replace:
            command = command.replace(old, new)
        t0 = time.monotonic()
        p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=src, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(f"{time.monotonic() - t0:6.1f} s  {written}")
        if p.returncode != 0:
            print(f"FAIL: exit code {p.returncode}\n  as run: {command}\n" + p.stdout[-4000:])
            return 1
    # No second compile: the venv's extension is the build tree's.
    (built,) = glob.glob(os.path.join(build, "python", "attnlab", "_attnlab*.so"))
    (installed,) = glob.glob(os.path.join(tmp, "v", "lib", "python3*", "site-packages", "attnlab",
                                          "_attnlab*.so"))
    assert filecmp.cmp(built, installed, shallow=False), (built, installed)
    (spec,) = glob.glob(os.path.join(tmp, "jupyter", "share", "jupyter", "kernels", "*", "kernel.json"))
    argv0 = json.load(open(spec))["argv"][0]
    assert argv0.startswith(os.path.join(tmp, "v")), (spec, argv0)
    # The tour again, REPEAT times, smaller.
    nb = json.load(open(os.path.join(src, "examples", "tour.ipynb"), encoding="utf-8"))
    kernel = os.path.basename(os.path.dirname(spec))
    whole = "".join("".join(cell["source"]) for cell in nb["cells"])
    for old, _ in SMALLER:
        assert old in whole, f"the tour no longer holds {old!r}: update SMALLER"
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        for old, new in SMALLER:
            text = text.replace(old, new)
        cell["source"] = text
    small = os.path.join(tmp, "examples", "tour.ipynb")
    os.makedirs(os.path.dirname(small))
    json.dump(nb, open(small, "w", encoding="utf-8"))
    times = []
    for k in range(repeat):
        t0 = time.monotonic()
        p = subprocess.run(["jupyter-nbconvert", "--to", "notebook", "--execute",
                            f"--ExecutePreprocessor.kernel_name={kernel}",
                            "--ExecutePreprocessor.timeout=120", small, "--output-dir",
                            os.path.join(tmp, "out"), "--output", f"small-{k}"],
                           cwd=os.path.dirname(small), env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        times.append(time.monotonic() - t0)
        if p.returncode != 0:
            print(f"FAIL: execution {k + 1} of the smaller tour\n" + p.stdout[-4000:])
            return 1
    print("smaller tour executions (s): " + " ".join(f"{t:.1f}" for t in times))
    print("python_notebook_route: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
