#!/usr/bin/env python3
"""scripts/plot_results.py draws, indexes and skips plots as documented, and fails cleanly.

Usage: check_plot.py SCRATCH_DIR. Builds a fake `attnlab run` output directory (results.csv
and spec.json written by hand), runs the script with this interpreter, and checks exit
codes, the figures, index.json's runs_used counts and the error paths.
Exits 77 (ctest: skipped) if numpy or matplotlib is missing.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

try:
    import matplotlib  # noqa: F401
    import numpy  # noqa: F401
except ImportError as e:
    print("SKIP:", e, "- not importable by", sys.executable, "(install python3-matplotlib)")
    sys.exit(77)

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "plot_results.py")
scratch = os.path.join(sys.argv[1], "check_plot")
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


# 2 models x 2 N x 3 train.n x 3 seeds = 36 runs. train.lrs is a list-valued key zipped
# with model.name. One failed run (rfa, N=8, n=1000, seed 2); one ok run without
# test_accuracy (rfmlp, N=16, n=1000, seed 0); one ok run with test_max_abs_err = 0
# (rfa, N=16, n=100, seed 1).
header = ["run_id", "seed", "status", "task.N", "train.n", "model.name", "train.lrs",
          "test_mse", "test_nmse", "test_max_abs_err", "test_accuracy",
          "wall_seconds", "peak_rss_mb", "error"]
rows = []
for model, lrs, scale in (("rfa", "[0.001, 0.01]", 1.0), ("rfmlp", "[0.1]", 3.0)):
    for N in (8, 16):
        for n in (100, 1000, 10000):
            for seed in (0, 1, 2):
                nmse = scale * N / 8 * n ** -0.5 * (1 + 0.15 * (seed - 1))
                row = [f"{len(rows):016x}", seed, "ok", N, n, model, lrs, 2 * nmse, nmse,
                       5 * nmse, 1 - nmse, 0.5, 12.0, ""]
                if (model, N, n, seed) == ("rfa", 8, 1000, 2):
                    row[2], row[7:11], row[-1] = "failed", ["", "", "", ""], "diverged, \"nan\""
                if (model, N, n, seed) == ("rfmlp", 16, 1000, 0):
                    row[10] = ""
                if (model, N, n, seed) == ("rfa", 16, 100, 1):
                    row[9] = 0
                rows.append(row)

plots = [
    # task.N=8: 18 runs, 1 failed -> 17.
    {"name": "nmse_vs_n", "title": "NMSE vs n (N=8)", "metric": "test_nmse", "x": "train.n",
     "line": "model.name", "logx": True, "logy": True, "where": {"task.N": [8]}},
    # Everything: 35 ok runs, one line, mean over seeds and task.N (and model.name).
    {"name": "mse_all", "title": "", "metric": "test_mse", "x": "train.n", "line": "",
     "logx": True, "logy": False, "where": {}},
    # No run matches: skipped with a warning.
    {"name": "nothing", "title": "", "metric": "test_mse", "x": "train.n", "line": "",
     "logx": False, "logy": False, "where": {"model.name": ["nope"]}},
    # Categorical x; 1000.0 matches "1000": 12 runs - 1 failed - 1 without accuracy -> 10.
    {"name": "acc_by_model", "title": "", "metric": "test_accuracy", "x": "model.name",
     "line": "task.N", "logx": False, "logy": False, "where": {"train.n": [1000.0]}},
    # List-valued filter (rfa) and seeds 0,1: 12 runs; logy drops the zero -> 11.
    {"name": "maxerr_rfa", "title": "", "metric": "test_max_abs_err", "x": "train.n",
     "line": "task.N", "logx": True, "logy": True,
     "where": {"train.lrs": [[0.001, 0.01]], "seed": [0, 1]}},
]
expected_used = {"nmse_vs_n": 17, "mse_all": 35, "acc_by_model": 10, "maxerr_rfa": 11}
spec = {"name": "fake", "description": "hand-written check data", "path": "fake.toml",
        "swept": ["task.N", "train.n", "model.name", "train.lrs"], "plots": plots,
        "claims": []}

good = os.path.join(scratch, "good")
os.makedirs(good)
with open(os.path.join(good, "results.csv"), "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(header)
    writer.writerows(rows)
with open(os.path.join(good, "spec.json"), "w") as f:
    json.dump(spec, f, indent=2)

r = run(good)
check(r.returncode == 0, f"good dir: exit {r.returncode}, stderr {r.stderr!r}")
figs = os.path.join(good, "figures")
written = r.stdout.split()
check(len(written) == 2 * len(expected_used) + 1, f"printed lines: {written}")
check("'nothing'" in r.stderr and "skipped" in r.stderr, f"no skip warning: {r.stderr!r}")
check("non-positive" in r.stderr, f"no log-axis warning: {r.stderr!r}")
check(not os.path.exists(os.path.join(figs, "nothing.png")), "skipped plot was drawn")
for name in expected_used:
    png, svg = os.path.join(figs, name + ".png"), os.path.join(figs, name + ".svg")
    check(png in written and svg in written, f"{name}: files not printed")
    with open(png, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{name}.png is not a PNG")
    try:
        check(ET.parse(svg).getroot().tag.endswith("svg"), f"{name}.svg root is not <svg>")
    except (OSError, ET.ParseError) as e:
        check(False, f"{name}.svg: {e}")
with open(os.path.join(figs, "index.json")) as f:
    index = json.load(f)
check([e["name"] for e in index] == list(expected_used), f"index names {index}")
for e in index:
    check(e["runs_used"] == expected_used.get(e["name"]), f"runs_used of {e}")
    check(e["png"] == e["name"] + ".png" and e["svg"] == e["name"] + ".svg", f"paths {e}")
check(index[0]["title"] == "NMSE vs n (N=8)", "explicit title")
check(index[1]["title"] == "test_mse vs train.n", "default title")

# Same data, same SVG; --format png writes only PNGs.
with open(os.path.join(figs, "nmse_vs_n.svg"), "rb") as f:
    first_svg = f.read()
shutil.rmtree(figs)
r = run(good, "--format", "png")
check(r.returncode == 0, f"--format png: exit {r.returncode}")
check(not any(n.endswith(".svg") for n in os.listdir(figs)), "--format png wrote SVGs")
r = run(good, "--format", "svg")
with open(os.path.join(figs, "nmse_vs_n.svg"), "rb") as f:
    check(f.read() == first_svg, "SVG differs between two runs on the same data")


# Errors: one line "plot_results: error: ..." on stderr, exit 2.
def expect_error(what, args, needle):
    r = run(*args)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2, f"{what}: exit {r.returncode}, want 2")
    check(len(lines) == 1 and lines[0].startswith("plot_results: error:") and needle in lines[0],
          f"{what}: stderr {r.stderr!r}")


def broken(name, drop=None, plot_change=None):
    d = os.path.join(scratch, name)
    os.makedirs(d)
    for fname in ("results.csv", "spec.json"):
        if fname != drop:
            shutil.copy(os.path.join(good, fname), d)
    if plot_change:
        s = json.loads(json.dumps(spec))
        s["plots"][0].update(plot_change)
        with open(os.path.join(d, "spec.json"), "w") as f:
            json.dump(s, f)
    return d


expect_error("missing dir", [os.path.join(scratch, "absent")], "absent")
expect_error("no results.csv", [broken("no_csv", drop="results.csv")], "results.csv")
expect_error("no spec.json", [broken("no_spec", drop="spec.json")], "spec.json")
expect_error("bad metric", [broken("bad_metric", plot_change={"metric": "test_f1"})], "test_f1")
expect_error("bad x", [broken("bad_x", plot_change={"x": "train.m"})], "train.m")
expect_error("bad line", [broken("bad_line", plot_change={"line": "model.k"})], "model.k")
expect_error("bad format", [good, "--format", "pdf"], "pdf")
check(not os.path.exists(os.path.join(scratch, "bad_metric", "figures")),
      "an error left a figures directory")

for f in failures:
    print("FAIL:", f)
print(f"check_plot: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
