#!/usr/bin/env python3
"""scripts/disj_matched_values.py: rebuilding a DISJ dataset from its own values and sets gives
back attnlab's inputs and targets bit for bit, the mixed sets take values and sets from the
intended source, and the script runs end to end on a tiny fitted model.

Usage: check_disj_matched_values.py ATTNLAB_BINARY SOURCE_DIR TMPDIR.
Exits 77 (ctest: skipped) if numpy is missing.
"""
import os
import subprocess
import sys

import script_check

dm, binary, source, tmp = script_check.load("disj_matched_values")  # exits 77 without numpy
import numpy as np  # noqa: E402

check = script_check.Checks()
script = os.path.join(source, "scripts", "disj_matched_values.py")


def data(name, *extra):
    path = os.path.join(tmp, name)
    subprocess.run([binary, "data", "qsa", "--n", "20", "--seed", "3", "--set", "task.N=9", "--set", "task.q=4",
                    "--set", "task.d_out=2", "-q", "-o", path, *extra], check=True)
    return dict(np.load(path))


r, d = data("r.npz"), data("d.npz", "--set", "task.instances=disj")
same = dm.remake(d, d["z"], d["sets"], 2)
check(np.array_equal(same["X"], d["X"]) and np.array_equal(same["Y"], d["Y"]), "remake(disj) != disj")
mixed = dm.remake(d, r["z"], d["sets"], 2)
check(np.array_equal(mixed["X"][:, :, :2], r["z"]) and np.array_equal(mixed["sets"], d["sets"]),
      "disj sets, random values: wrong sources")
check(np.allclose(mixed["Y"][:, 8], r["z"][np.arange(20)[:, None], d["sets"][:, 8]].mean(axis=1)),
      "query-row targets not recomputed")

model = os.path.join(tmp, "m.safetensors")
subprocess.run([binary, "fit", "attention", "--in", os.path.join(tmp, "r.npz"), "--set", "model.m=4",
                "--set", "train.steps=3", "--save", model, "-q"], check=True)
out = subprocess.run([sys.executable, script, "--model", model, "--N", "9", "--q", "4", "--d-out", "2",
                      "--n", "20", "--attnlab", binary], capture_output=True, text=True)
check(out.returncode == 0 and out.stdout.count("\n") == 6, f"script: exit {out.returncode}, {out.stdout}{out.stderr}")
bad = subprocess.run([sys.executable, script, "--model", model, "--N", "8", "--q", "4", "--d-out", "2",
                      "--attnlab", binary], capture_output=True, text=True)
check(bad.returncode == 2 and "--N 8" in bad.stderr, f"N < 2q+1: exit {bad.returncode}, {bad.stderr}")

check.finish("DISJ datasets rebuilt exactly, mixed sets from the right sources, script end to end")
