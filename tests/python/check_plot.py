#!/usr/bin/env python3
"""scripts/plot_results.py draws, indexes and skips plots as documented, and fails cleanly.

Usage: check_plot.py SCRATCH_DIR. Builds a fake `attnlab run` output directory (results.csv,
series.csv and spec.json written by hand), runs the script with this interpreter, and checks
exit codes, the figures of every plot kind (line, heatmap, curve, matrix, size_needed),
index.json's runs_used counts and titles, the matrix layout, the smallest sizes of
size_needed (from a second directory of its own), and the error paths.
Exits 77 (ctest: skipped) if numpy or matplotlib is missing.
"""
import contextlib
import csv
import importlib.util
import io
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

def write_fixture(name, csv_header, csv_rows, spec_json, series=None):
    """A results directory under scratch: results.csv, spec.json and (given) series.csv."""
    path = os.path.join(scratch, name)
    os.makedirs(path)
    tables = [("results.csv", csv_header, csv_rows)]
    if series:
        tables.append(("series.csv",) + series)
    for file_name, table_header, table_rows in tables:
        with open(os.path.join(path, file_name), "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(table_header)
            writer.writerows(table_rows)
    with open(os.path.join(path, "spec.json"), "w") as f:
        json.dump(spec_json, f, indent=2)
    return path


good = write_fixture("good", header, rows, spec, (series_header, series_rows))

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


# size_needed, in a directory of its own: test_loss of model.width at task.N, 3 seeds with
# mean exactly MEANS[...] (seed spread +-min(0.125, mean / 2), dyadic: the means are exact);
# test_acc = 1 - test_loss. Threshold 0.25 (goal below; test_acc > 0.75 is the same goal):
#   att N=4   0.5 0.3 0.2 0.125 0.3 0.0625  -> 64 (32 is not: seed 0 alone is below; 256 is
#                                              above again, the smallest still counts)
#   att N=8   0.75 0.5 0.375 0.25 0.125 ..  -> 256 (128's mean is equal: not below); seed 0
#                                              of 256 has no test_loss (left out, still 256)
#   att N=16  1 .75 .5 .375 .3, 512 failed  -> none reached, largest tried 256
#   mlp N=4   0.125 0.0625 0.5 (16..64)      -> 16, the smallest tried
#   mlp N=8   0.5 0.125 0.375                -> 32
WIDTHS = (16, 32, 64, 128, 256, 512)
MEANS = {("att", 4): (0.5, 0.3, 0.2, 0.125, 0.3, 0.0625),
         ("att", 8): (0.75, 0.5, 0.375, 0.25, 0.125, 0.0625),
         ("att", 16): (1.0, 0.75, 0.5, 0.375, 0.3, 0.25),
         ("mlp", 4): (0.125, 0.0625, 0.5), ("mlp", 8): (0.5, 0.125, 0.375)}
sized_header = ["run_id", "seed", "status", "task.N", "model.width", "model.name", "train.lr",
                "test_loss", "test_acc", "wall_seconds", "peak_rss_mb", "error"]
sized_rows = []
for (model, N), means in MEANS.items():
    for width, mean in zip(WIDTHS, means):
        for seed in (0, 1, 2):
            loss = mean + min(0.125, mean / 2) * (seed - 1)
            row = [f"{len(sized_rows):016x}", seed, "ok", N, width, model, 0.01, loss, 1 - loss,
                   0.5, 12.0, ""]
            if (model, N, width) == ("att", 16, 512):
                row[2], row[7:9], row[-1] = "failed", ["", ""], "out of memory"
            if (model, N, width, seed) == ("att", 8, 256, 0):
                row[7] = ""
            sized_rows.append(row)
size_plots = [
    # att: 54 runs - 3 failed - 1 without test_loss = 50; mlp: 18 -> 68.
    {"name": "width_needed", "kind": "size_needed", "title": "", "metric": "test_loss",
     "x": "task.N", "y": "", "series": "", "line": "model.name", "size": "model.width",
     "threshold": 0.25, "goal": "below", "logx": True, "logy": True, "where": {}},
    # att only, goal above on test_acc: 54 - 3 failed = 51.
    {"name": "width_above", "kind": "size_needed", "title": "acc", "metric": "test_acc",
     "x": "task.N", "y": "", "series": "", "line": "", "size": "model.width",
     "threshold": 0.75, "goal": "above", "logx": False, "logy": False,
     "where": {"model.name": ["att"]}},
]
att_expected = [{"x": 4, "line": "att", "size": 64, "largest_tried": 512},
                {"x": 8, "line": "att", "size": 256, "largest_tried": 512},
                {"x": 16, "line": "att", "size": None, "largest_tried": 256}]
mlp_expected = [{"x": 4, "line": "mlp", "size": 16, "largest_tried": 64},
                {"x": 8, "line": "mlp", "size": 32, "largest_tried": 64}]
sized = write_fixture("sized", sized_header, sized_rows,
                      dict(spec, swept=["task.N", "model.width", "model.name"], plots=size_plots))
r = run(sized)
check(r.returncode == 0, f"size_needed dir: exit {r.returncode}, stderr {r.stderr!r}")
written = r.stdout.split()
for name in ("width_needed", "width_above"):
    for fmt in ("png", "svg"):
        path = os.path.join(sized, "figures", f"{name}.{fmt}")
        check(path in written and os.path.getsize(path) > 1000, f"{path}: not written")
with open(os.path.join(sized, "figures", "index.json")) as f:
    sized_index = {e["name"]: e for e in json.load(f)}
needed = sized_index.get("width_needed", {})
check(needed.get("runs_used") == 68, f"width_needed runs_used {needed.get('runs_used')}")
check(needed.get("title") == "model.width needed for mean test_loss < 0.25", f"title {needed}")
check(needed.get("size_needed") == att_expected + mlp_expected,
      f"width_needed sizes {needed.get('size_needed')}")
above = sized_index.get("width_above", {})
check(above.get("runs_used") == 51, f"width_above runs_used {above.get('runs_used')}")
check(above.get("size_needed") == [dict(e, line=None) for e in att_expected],
      f"width_above sizes {above.get('size_needed')}")

# The figure: log axes ticked at the values tried, plain labels; the "none reached" marker
# is a hollow triangle at (16, 256), not on the line (which has a gap there).
import matplotlib.pyplot as plt  # noqa: E402
with open(os.path.join(sized, "results.csv"), newline="") as f:
    sized_csv = list(csv.DictReader(f))
figures, saved = [], plot_results.save
plot_results.save = lambda fig, *args: figures.append(fig) or {}
with contextlib.redirect_stderr(io.StringIO()):  # the warning about the run without test_loss
    picked = plot_results.select(sized_csv, size_plots[0])
plot_results.draw_size_needed(size_plots[0], picked, {"swept": []}, [], scratch, plt, numpy)
plot_results.save = saved
ax = figures[0].axes[0]
check(ax.get_yscale() == "log" and list(ax.get_yticks()) == list(WIDTHS) and
      [t.get_text() for t in ax.get_yticklabels()] == [str(w) for w in WIDTHS],
      f"y ticks {list(ax.get_yticks())}")
check([t.get_text() for t in ax.get_xticklabels()] == ["4", "8", "16"], "x tick labels")
check(ax.get_ylabel() == "smallest model.width with mean test_loss < 0.25", ax.get_ylabel())
hollow = [(list(l.get_xdata()), list(l.get_ydata())) for l in ax.get_lines()
          if l.get_marker() == "^" and len(l.get_xdata())]
check(hollow == [([16.0], [256.0])], f"none-reached markers {hollow}")
att_line = [l for l in ax.get_lines() if l.get_label() == "att"]
check(len(att_line) == 1 and list(att_line[0].get_xdata()) == [4.0, 8.0, 16.0] and
      list(att_line[0].get_ydata())[:2] == [64.0, 256.0] and
      numpy.isnan(att_line[0].get_ydata()[2]), "the att line")
check("none reached (marker at largest size tried)" in ax.get_legend_handles_labels()[1],
      f"legend {ax.get_legend_handles_labels()[1]}")


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
size_needed = {"kind": "size_needed", "size": "task.N", "threshold": 0.05}
for what, name, change, needle in [
        ("without size", "size_no_size", dict(size_needed, size=""), "'size' is missing"),
        ("size not a column", "size_bad_size", dict(size_needed, size="model.width"),
         "size key 'model.width' is not a column"),
        ("non-numeric size", "size_text_size", dict(size_needed, size="model.name"),
         "size key 'model.name' has the non-numeric value 'rfa'"),
        ("non-numeric x", "size_text_x", dict(size_needed, x="model.name"),
         "x key 'model.name' has the non-numeric value 'rfa'"),
        ("without threshold", "size_no_threshold", {"kind": "size_needed", "size": "task.N"},
         "'threshold' is missing"),
        ("text threshold", "size_text_threshold", dict(size_needed, threshold="0.05"),
         "'threshold' '0.05' is not a finite number"),
        ("bad goal", "size_bad_goal", dict(size_needed, goal="under"),
         "goal 'under' is not below or above")]:
    expect_error("size_needed " + what, [broken(name, plot_change=change)], needle)
check(not os.path.exists(os.path.join(scratch, "size_text_size", "figures")),
      "a size_needed error left a figures directory")

# An older output directory without series.csv still draws its line and heatmap plots.
old_dir = broken("old_dir", drop="series.csv")
with open(os.path.join(old_dir, "spec.json"), "w") as f:
    json.dump(dict(spec, plots=[p for p in plots if p.get("kind", "line") in ("line", "heatmap")]), f)
r = run(old_dir)
check(r.returncode == 0, f"dir without series.csv: exit {r.returncode}, stderr {r.stderr!r}")

# Figures a researcher reads, in a directory of their own: lines split by two keys, a line
# identical to another, a -1 "none" value, one x value, titles that follow the runs, skipped
# plots with their reasons, and the target set outlined on an attention matrix.
# 3 (task, model) pairs x N in (8, 16) x 2 seeds = 12 runs; task.q = 2 is fixed (not swept).
# acc: match2 0.9; match3 0.5 for both models (identical lines); bits: N / 2, -1 for
# (match3, third_order, N = 16).
read_header = ["run_id", "seed", "status", "task.N", "task.name", "model.name", "task.q", "acc",
               "bits_needed", "wall_seconds", "peak_rss_mb", "error"]
read_rows, read_series = [], []
for task, model in (("match2", "attention"), ("match3", "attention"), ("match3", "third_order")):
    for N in (8, 16):
        for seed in (0, 1):
            bits = -1 if (model, N) == ("third_order", 16) else N // 2
            row = [f"r{len(read_rows):015x}", seed, "ok", N, task, model, 2,
                   0.9 if task == "match2" else 0.5, bits, 0.5, 12.0, ""]
            read_rows.append(row)
            for k in range(16):
                read_series.append(row[:7] + ["attention_sample0", k, k / 16])
                if N == 8:  # the target set y_i = {i} of the first sample: the diagonal
                    read_series.append(row[:7] + ["target_sample0", k, 1 if k // 4 == k % 4 else 0])
pair = "task.name, model.name"
read_plots = [
    {"name": "by_pair", "title": "acc, q = {task.q}, N = {task.N}", "metric": "acc",
     "x": "task.N", "line": pair},
    {"name": "bits", "title": "", "metric": "bits_needed", "x": "task.N", "line": pair,
     "none": -1},
    {"name": "one_x", "title": "N = {task.N}", "metric": "acc", "x": "task.N", "line": pair,
     "where": {"task.N": [16]}},
    {"name": "all_none", "title": "", "metric": "bits_needed", "x": "task.N", "line": "",
     "none": -1, "where": {"model.name": ["third_order"], "task.N": [16]}},
    {"name": "nothing", "title": "", "metric": "acc", "x": "task.N", "line": "",
     "where": {"model.name": ["nope"]}},
    {"name": "attn", "kind": "matrix", "title": "attention (outlined: y_i)",
     "series": "attention_sample0", "mark": "target_sample0"},
    {"name": "attn_unmarked", "kind": "matrix", "title": "", "series": "attention_sample0",
     "mark": "target_sample0", "where": {"task.N": [16]}},
]
read_spec = {"name": "reads", "description": "", "path": "reads.toml",
             "swept": ["task.N", "task.name", "model.name"], "plots": read_plots, "claims": []}
reads = write_fixture("reads", read_header, read_rows, read_spec,
                      (read_header[:7] + ["series", "step", "value"], read_series))
r = run(reads, "--format", "png")
check(r.returncode == 0, f"reads: exit {r.returncode}, stderr {r.stderr!r}")
with open(os.path.join(reads, "figures", "index.json")) as f:
    drawn = {e["name"]: e for e in json.load(f)}
with open(os.path.join(reads, "figures", "skipped.json")) as f:
    skipped = json.load(f)
check(list(drawn) == ["by_pair", "bits", "one_x", "attn", "attn_unmarked"], f"drawn {list(drawn)}")
by_pair = drawn.get("by_pair", {})
check(by_pair.get("lines") == ["match2, attention", "match3, attention",
                               "match3, third_order (same as match3, attention)"],
      f"one line per (task, model), the identical one labelled: {by_pair.get('lines')}")
check(by_pair.get("runs_used") == 12 and by_pair.get("notes") == [],
      f"no mean over model.name any more: {by_pair}")
check(by_pair.get("title") == "acc, q = 2, N = 8, 16", f"title from the runs: {by_pair.get('title')}")
bits = drawn.get("bits", {})
check(bits.get("runs_used") == 10 and
      "2 run(s) with bits_needed = -1 (none) left out" in bits.get("notes", []),
      f"the -1 runs are left out and counted: {bits}")
one_x = drawn.get("one_x", {})
check(one_x.get("title") == "N = 16" and
      any(n.startswith("only task.N = 16 ran") for n in one_x.get("notes", [])),
      f"one x value is said: {one_x}")
check(set(skipped) == {"all_none", "nothing"} and "-1" in skipped.get("all_none", "") and
      "nope" in skipped.get("nothing", ""), f"skipped.json: {skipped}")
check(drawn.get("attn", {}).get("marked") == 4 and drawn["attn"].get("notes") == [],
      f"the diagonal target set is outlined: {drawn.get('attn')}")
check(drawn.get("attn_unmarked", {}).get("marked") == 0 and
      drawn["attn_unmarked"].get("notes") == ["target_sample0 not logged by this run: no entries outlined"],
      f"a run without the mark series says so: {drawn.get('attn_unmarked')}")
# A title key that is not a column is an error before anything is drawn.
bad_title = write_fixture("reads_bad_title", read_header, read_rows,
                          dict(read_spec, plots=[dict(read_plots[0], title="{task.M}")]))
expect_error("title key", [bad_title], "title key 'task.M' is not a column")

for f in failures:
    print("FAIL:", f)
print(f"check_plot: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
