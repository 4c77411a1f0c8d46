#!/usr/bin/python3
"""Runs every command of README.md, docs/python.md and docs/constructions.md, in order, as a reader
would paste them.

For each document, in a fresh scratch directory (holding symlinks `build` -> the build tree and
`experiments`, `examples`, `scripts` -> the checkout, so that paths read as in the repository root):

- every fenced block opened by ```sh runs line by line (a trailing backslash continues a line;
  blank and comment-only lines are left out), each command with `bash -e -o pipefail -c`;
- every fenced block opened by ```python runs as one script with Debian's /usr/bin/python3.
Both see PYTHONPATH=BUILD/python (what `make python` or the README's PYTHONPATH line provides).

Sizes are reduced by the explicit table SHRINK below (plain text replacements, per document); a
command the table does not touch runs exactly as written. A non-zero exit fails the test, printing
the command as written, as run, and the tail of its output; the rest of that document is not run.

What is not run, each with its reason:
- commands in SKIP (setup, root, MPI, Slurm, the test suites themselves), matched by their start;
- RULE for blocks that need a virtual environment or an install (tested by their own test,
  tests/python): a fenced block is skipped when the nearest non-blank line above its opening fence
  is `<!-- docs-test: skip REASON -->`, or when a line of it contains `pip install`, `-m pip`,
  `-m venv`, `-m build` or `venv/bin/`.

After a document ran, the checks of AFTER look at what it left in its scratch directory: the
README's outputs all lie in tour/ (and reproduce's results/), none is larger than 50 MB, and each
"disjoint test set" has the same task parameters as its training set.

Usage: run_doc_commands.py --source CHECKOUT --build BUILD_DIR --scratch DIR DOC.md...
Exit 0 when every command that ran succeeded, 1 otherwise, 77 (skipped) when the build has no
Python module (the sanitizer preset), which half of the commands need.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

PYTHON = "/usr/bin/python3"

# (document, text as written, text as run). Each replacement applies wherever the text occurs
# in a command of that document.
SHRINK = [
    ("README.md", "--n 20000", "--n 400"),
    ("README.md", "--n 10000", "--n 300"),
    ("README.md", "--n 8192", "--n 300"),
    ("README.md", "--n 4096", "--n 300"),
    ("README.md", "train.steps=5000", "train.steps=20"),
    ("README.md", "model.heads=256", "model.heads=16"),
    ("README.md", "steps=2000", "steps=20"),
    ("README.md", "n=1000", "n=200"),
    ("docs/python.md", "n=2000", "n=300"),
    ("docs/python.md", "steps=2000", "steps=20"),
    ("docs/python.md", "n=4096", "n=300"),
    ("docs/python.md", "heads=512", "heads=16"),
    ("docs/constructions.md", "e3_qsa_neighbourly.toml --out", "e3_qsa_neighbourly.toml --quick --out"),
    ("docs/constructions.md", "--sampled tour/e3", "--sampled tour/e3 --N 16 --q 1,2"),
    ("docs/constructions.md", "--n 100000", "--n 300"),
    ("docs/constructions.md", "train.steps=10000", "train.steps=20"),
    ("docs/constructions.md", "--d-out 2", "--d-out 2 --n 50"),
]

# (document, start of the command, reason).
SKIP = [
    ("README.md", "make reproduce", "setup: installs Debian packages and builds (CI runs it as the main job)"),
    ("README.md", "make test", "runs the test suite this test is part of"),
    ("README.md", "apt-get ", "setup as root, needs Debian's mirrors"),
    ("README.md", "build/attnlab gradcheck", "is the unit test GradCheck.* (every op and model, minutes)"),
    ("docs/python.md", "make python", "writes a .pth into the user's site-packages; this test sets PYTHONPATH instead"),
    ("docs/python.md", "PYTHONPATH=build/python ATTNLAB_CLI=build/attnlab /usr/bin/python3 -m pytest",
     "is the ctest test python_bindings"),
]

# README.md: (training set, test set) pairs that must share task, seed and parameters.
TEST_SETS = [("tour/train.npz", "tour/test.npz"), ("tour/qsa.npz", "tour/qsa_test.npz"),
             ("tour/rf.npz", "tour/rf_test.npz")]
MAX_FILE_BYTES = 50 << 20


def check_layout(work):
    """The tour writes only below tour/ (and results/, reproduce's default); no file is huge."""
    errors = []
    extra = sorted(set(os.listdir(work)) - set(LINKS) - {"build", "tour", "results"})
    if extra:
        errors.append(f"outputs outside tour/ and results/: {extra}")
    for top in ("tour", "results"):
        for dirpath, _, files in os.walk(os.path.join(work, top)):
            for f in files:
                path = os.path.join(dirpath, f)
                if os.path.getsize(path) > MAX_FILE_BYTES:
                    errors.append(f"{os.path.relpath(path, work)} is {os.path.getsize(path) >> 20} MB")
    return errors


def check_test_sets(work):
    import json
    import numpy as np
    errors = []
    for train, test in TEST_SETS:
        missing = [f for f in (train, test) if not os.path.exists(os.path.join(work, f))]
        if missing:
            errors.append(f"the tour wrote no {missing}")
            continue
        a, b = (json.loads(str(np.load(os.path.join(work, f))["meta"])) for f in (train, test))
        for key in ("task", "seed", "params"):
            if a[key] != b[key]:
                errors.append(f"{test} has {key} {b[key]}, its training set {train} {a[key]}")
        if not (a["first"] + a["n"] <= b["first"] or b["first"] + b["n"] <= a["first"]):
            errors.append(f"{test} overlaps {train}")
    return errors


AFTER = {"README.md": [check_layout, check_test_sets]}

SKIP_MARK = re.compile(r"^<!--\s*docs-test:\s*skip\b(.*?)-->\s*$")
INSTALL_WORDS = ("pip install", "-m pip", "-m venv", "-m build", "venv/bin/")
LINKS = ("experiments", "examples", "scripts")


def blocks(text):
    """(line number, language, body lines, skip reason or None) of each sh/python fenced block."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        lang, start = m.group(1), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        body = lines[i + 1:j]
        i = j + 1
        if lang not in ("sh", "python"):
            continue
        above = start - 1
        while above >= 0 and not lines[above].strip():
            above -= 1
        mark = SKIP_MARK.match(lines[above].strip()) if above >= 0 else None
        reason = None
        if mark:
            reason = "marked: " + (mark.group(1).strip() or "docs-test: skip")
        elif any(w in line for line in body for w in INSTALL_WORDS):
            reason = "needs a venv or an install (rule at the top of this test)"
        out.append((start + 1, lang, body, reason))
    return out


def sh_commands(body):
    """Logical command lines of a sh block."""
    cmds, current = [], ""
    for line in body:
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        if current.strip() and not current.strip().startswith("#"):
            cmds.append(current.strip())
        current = ""
    if current.strip():
        cmds.append(current.strip())
    return cmds


def shrink(doc, text, used):
    for k, (d, old, new) in enumerate(SHRINK):
        if d == doc and old in text:
            text = text.replace(old, new)
            used.add(k)
    return text


def run_doc(doc, source, build, scratch, env):
    work = os.path.join(scratch, doc.replace("/", "_").replace(".md", ""))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.symlink(build, os.path.join(work, "build"))
    for name in LINKS:
        os.symlink(os.path.join(source, name), os.path.join(work, name))
    used_shrink, used_skip = set(), set()
    ran = skipped = 0
    for line_no, lang, body, reason in blocks(open(os.path.join(source, doc)).read()):
        where = f"{doc}:{line_no}"
        if reason:
            print(f"skip {where} ({lang} block): {reason}")
            skipped += 1
            continue
        if lang == "python":
            items = ["\n".join(body)]
        else:
            items = sh_commands(body)
        for written in items:
            skip = next(((k, r) for k, (d, start, r) in enumerate(SKIP)
                         if d == doc and written.startswith(start)), None)
            if skip:
                used_skip.add(skip[0])
                print(f"skip {where}: {written.splitlines()[0]}  ({skip[1]})")
                skipped += 1
                continue
            command = shrink(doc, written, used_shrink)
            t0 = time.monotonic()
            if lang == "python":
                argv = [PYTHON, "-c", command]
            else:
                argv = ["bash", "-e", "-o", "pipefail", "-c", command]
            p = subprocess.run(argv, cwd=work, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=600)
            seconds = time.monotonic() - t0
            shown = command if lang == "sh" else f"python block ({len(body)} lines)"
            print(f"{seconds:6.1f} s  {where}: {shown}")
            ran += 1
            if p.returncode != 0:
                print(f"FAIL {where}: exit code {p.returncode}")
                print("  as written: " + written.replace("\n", "\n    "))
                if command != written:
                    print("  as run:     " + command.replace("\n", "\n    "))
                print("  output (last 40 lines):")
                for line in p.stdout.splitlines()[-40:]:
                    print("    " + line)
                return False, ran, skipped
    errors = [e for check in AFTER.get(doc, []) for e in check(work)]
    for e in errors:
        print(f"FAIL {doc}: {e}")
    if errors:
        return False, ran, skipped
    for k, (d, old, new) in enumerate(SHRINK):
        if d == doc and k not in used_shrink:
            print(f"note: SHRINK entry {old!r} -> {new!r} matched no command of {doc}")
    for k, (d, start, r) in enumerate(SKIP):
        if d == doc and k not in used_skip:
            print(f"note: SKIP entry {start!r} matched no command of {doc}")
    return True, ran, skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("docs", nargs="+")
    a = ap.parse_args()
    source, build, scratch = (os.path.abspath(p) for p in (a.source, a.build, a.scratch))
    if not os.path.isdir(os.path.join(build, "python", "attnlab")):
        print(f"skipped: {build} has no Python module (ATTNLAB_PYTHON_MODULE is OFF)")
        return 77
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(build, "python")
    env.pop("ATTNLAB_NO_PROGRESS", None)
    os.makedirs(scratch, exist_ok=True)
    t0 = time.monotonic()
    ok = True
    for doc in a.docs:
        good, ran, skipped = run_doc(doc, source, build, scratch, env)
        print(f"{doc}: {ran} commands ran, {skipped} skipped{'' if good else ', FAILED'}")
        ok = ok and good
    print(f"{time.monotonic() - t0:.0f} s in all")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
