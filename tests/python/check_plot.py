#!/usr/bin/env python3
"""scripts/plot_results.py draws, indexes and skips plots as documented, and fails cleanly.

Usage: check_plot.py SCRATCH_DIR. Builds a fake `attnlab run` output directory (results.csv,
series.csv and spec.json written by hand), runs the script with this interpreter, and checks
exit codes, the figures of every plot kind (line, heatmap, curve, matrix), index.json's
runs_used counts and titles, the matrix layout, and the error paths.
Exits 77 (ctest: skipped) if numpy or matplotlib is missing.
"""
import csv
import importlib.util
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

# Series (series.csv): every N=8 run logs val_loss at steps 0, 10, ..., 90 (the failed run
# too: left out; one point of (rfmlp, 8, 100, seed 1) is not finite: left out); every N=16
# run logs attention_sample0, a 4x4 matrix with entry (i, j) = 4i + j + 100 * seed; run
# (rfa, 16, 100, seed 0) also logs attn_bad (12 points: not a square) and attn_gap (steps
# 0, 1, 2, 4: not 0 .. 3).
series_header = ["run_id", "seed", "status", "task.N", "train.n", "model.name", "train.lrs",
                 "series", "step", "value"]
series_rows = []
for row in rows:
    run_id, seed, status, N, n, model, lrs = row[:7]
    prefix = [run_id, seed, status, N, n, model, lrs]
    if N == 8:
        for step in range(0, 100, 10):
            value = (3.0 if model == "rfmlp" else 1.0) / (1 + step) * (1 + 0.1 * seed)
            if (model, n, seed, step) == ("rfmlp", 100, 1, 50):
                value = ""
            series_rows.append(prefix + ["val_loss", step, value])
    if N == 16:
        for k in range(16):
            series_rows.append(prefix + ["attention_sample0", k, k + 100 * seed])
        if (model, n, seed) == ("rfa", 100, 0):
            series_rows += [prefix + ["attn_bad", k, 0.5] for k in range(12)]
            series_rows += [prefix + ["attn_gap", k, 0.5] for k in (0, 1, 2, 4)]

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
    # Heatmap over (train.n, task.N) for rfa: 18 runs, 1 failed -> 17.
    {"name": "heat_rfa", "kind": "heatmap", "title": "", "metric": "test_nmse", "x": "train.n",
     "y": "task.N", "series": "", "line": "", "logx": True, "logy": True,
     "where": {"model.name": ["rfa"]}},
    # The same cells as heat_rfa with the x·y = c overlay: accuracy 1 − nmse >= 0.95 holds in
    # (n, N) = (1000, 8) (mean nmse 0.029), (10000, 8) and (10000, 16); c = 1000·8 = 8000.
    {"name": "heat_boundary", "kind": "heatmap", "title": "", "metric": "test_accuracy",
     "x": "train.n", "y": "task.N", "series": "", "line": "", "logx": True, "logy": True,
     "product_boundary": 0.95, "where": {"model.name": ["rfa"]}},
    # Categorical x (model.name), every ok run with test_accuracy: 36 - 1 failed - 1 -> 34;
    # each cell also averages over task.N.
    {"name": "heat_acc", "kind": "heatmap", "title": "accuracy", "metric": "test_accuracy",
     "x": "model.name", "y": "train.n", "series": "", "line": "", "logx": False,
     "logy": False, "where": {}},
    # Learning curves of the N=8 runs, one line per model: 18 runs, 1 failed -> 17.
    {"name": "loss_by_model", "kind": "curve", "title": "", "metric": "", "x": "", "y": "",
     "series": "val_loss", "line": "model.name", "logx": False, "logy": True, "where": {}},
    # One line, rfmlp only: 9 runs.
    {"name": "loss_rfmlp", "kind": "curve", "title": "", "metric": "", "x": "", "y": "",
     "series": "val_loss", "line": "", "logx": True, "logy": False,
     "where": {"model.name": ["rfmlp"]}},
    # The first ok rfmlp run with the series: (rfmlp, 16, 100, seed 0).
    {"name": "attn_rfmlp", "kind": "matrix", "title": "attention", "metric": "", "x": "",
     "y": "", "series": "attention_sample0", "line": "", "logx": False, "logy": False,
     "where": {"model.name": ["rfmlp"]}},
    # No rfa run with N=8 logged the matrix: skipped.
    {"name": "attn_none", "kind": "matrix", "title": "", "metric": "", "x": "", "y": "",
     "series": "attention_sample0", "line": "", "logx": False, "logy": False,
     "where": {"task.N": [8]}},
]
expected_used = {"nmse_vs_n": 17, "mse_all": 35, "acc_by_model": 10, "maxerr_rfa": 11,
                 "heat_rfa": 17, "heat_boundary": 17, "heat_acc": 34, "loss_by_model": 17, "loss_rfmlp": 9,
                 "attn_rfmlp": 1}
spec = {"name": "fake", "description": "hand-written check data", "path": "fake.toml",
        "swept": ["task.N", "train.n", "model.name", "train.lrs"], "plots": plots,
        "claims": []}

good = os.path.join(scratch, "good")
os.makedirs(good)
with open(os.path.join(good, "results.csv"), "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(header)
    writer.writerows(rows)
with open(os.path.join(good, "series.csv"), "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(series_header)
    writer.writerows(series_rows)
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
titles = {e["name"]: e["title"] for e in index}
check(titles["heat_rfa"] == "test_nmse over train.n and task.N", f"heatmap title {titles}")
check(titles["loss_by_model"] == "val_loss vs step", f"curve title {titles}")
boundary = {e["name"]: e.get("product_boundary_c") for e in index}
check(boundary["heat_boundary"] == 8000, f"fitted product boundary {boundary}")
check(boundary["heat_rfa"] is None, f"heat_rfa has no boundary {boundary}")
matrix_title = titles["attn_rfmlp"]
for part in ("attention", "task.N=16", "train.n=100", "model.name=rfmlp", "seed=0"):
    check(part in matrix_title, f"matrix title {matrix_title!r} lacks {part!r}")
check("'attn_none'" in r.stderr, f"no skip warning for the matrix: {r.stderr!r}")
check("not finite" in r.stderr, f"no warning for the non-finite series point: {r.stderr!r}")
check(not os.path.exists(os.path.join(figs, "attn_none.png")), "skipped matrix was drawn")

# The matrix layout: step k is entry (k // S, k % S), from the first matching ok run.
loader = importlib.util.spec_from_file_location("plot_results", SCRIPT)
plot_results = importlib.util.module_from_spec(loader)
loader.loader.exec_module(plot_results)
_, series_runs, seen = plot_results.load_series(os.path.join(good, "series.csv"), good,
                                                {"attention_sample0", "val_loss"})
check(seen == {"val_loss", "attention_sample0", "attn_bad", "attn_gap"}, f"series seen {seen}")
chosen = plot_results.select_matrix(series_runs, plots[-2], "series.csv")
check(chosen is not None and chosen[0]["run_id"] == rows[27][0] and
      chosen[1] == [[4.0 * i + j for j in range(4)] for i in range(4)],
      f"matrix of the first rfmlp run: {chosen}")
later = dict(plots[-2], where={"model.name": ["rfmlp"], "seed": [2]})
chosen = plot_results.select_matrix(series_runs, later, "series.csv")
check(chosen is not None and chosen[1][3][1] == 213.0, f"matrix of seed 2: {chosen}")

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
    for fname in ("results.csv", "series.csv", "spec.json"):
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
expect_error("bad kind", [broken("bad_kind", plot_change={"kind": "heatmp"})], "heatmp")
expect_error("heatmap without y", [broken("heat_no_y", plot_change={"kind": "heatmap"})],
             "'y' is missing")
expect_error("heatmap bad y", [broken("heat_bad_y", plot_change={"kind": "heatmap",
                                                                 "y": "task.Q"})], "task.Q")
expect_error("curve without series", [broken("curve_no_series", plot_change={"kind": "curve"})],
             "'series' is missing")
expect_error("curve unknown series",
             [broken("curve_bad_series", plot_change={"kind": "curve", "series": "val_los"})],
             "no run logged a series 'val_los'")
expect_error("curve bad line",
             [broken("curve_bad_line", plot_change={"kind": "curve", "series": "val_loss",
                                                    "line": "model.k"})], "model.k")
expect_error("no series.csv", [broken("no_series", drop="series.csv")], "series.csv")
expect_error("matrix not square",
             [broken("matrix_bad", plot_change={"kind": "matrix", "series": "attn_bad",
                                                         "where": {}})],
             "12 points, not a square number")
expect_error("matrix missing step",
             [broken("matrix_gap", plot_change={"kind": "matrix", "series": "attn_gap",
                                                         "where": {}})],
             "steps 0 .. 3")
check(not os.path.exists(os.path.join(scratch, "matrix_bad", "figures")),
      "a matrix error left a figures directory")

# An older output directory without series.csv still draws its line and heatmap plots.
old_dir = broken("old_dir", drop="series.csv")
with open(os.path.join(old_dir, "spec.json"), "w") as f:
    json.dump(dict(spec, plots=[p for p in plots if p.get("kind", "line") in ("line", "heatmap")]), f)
r = run(old_dir)
check(r.returncode == 0, f"dir without series.csv: exit {r.returncode}, stderr {r.stderr!r}")

for f in failures:
    print("FAIL:", f)
print(f"check_plot: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
