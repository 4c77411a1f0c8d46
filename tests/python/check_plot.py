#!/usr/bin/env python3
"""scripts/plot_results.py draws every figure kind from figure data and fails cleanly.

Usage: check_plot.py SCRATCH_DIR. Writes DIR/figures/data/*.json by hand (the format of
docs/figure-data.md; the numbers themselves are computed and tested in C++,
tests/test_figure_data.cpp), runs the script with this interpreter, and checks the exit
code, the PNG and SVG files of every kind (line, heatmap, curve, matrix, size_needed),
figures/index.json, the drawn size_needed axes, --format, stable SVGs, and the error paths.
Exits 77 (ctest: skipped) if numpy or matplotlib is missing.
"""
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


def point(x, mean, band=None, key="x"):
    return {key: x, "mean": mean, "lo": band and band[0], "hi": band and band[1], "band": band,
            "sd": None, "seeds": 2 if band else 1, "runs": 2, "run_ids": ["a", "b"]}


COMMON = {"format": "attnlab figure data 1", "logx": False, "logy": False, "where": {},
          "legend_title": None, "notes": [], "runs_used": 4,
          "spread": {"rule": "claims", "confidence": 0.95}}
PLOTS = [
    dict(COMMON, name="nmse_by_n", kind="line", title="NMSE vs n", x_label="train.n",
         y_label="test_nmse", legend_title="model.name", logx=True, logy=True, x_numeric=True,
         x_values=[100, 1000, 10000], notes=["each point: mean over seeds and task.N"],
         lines=[{"label": "rfa", "same_as": None,
                 "points": [point(100, 0.3, [0.2, 0.4]), point(1000, 0.1, [0.05, 0.15]),
                            point(10000, 0.03)]},
                {"label": "rfmlp (same as rfa)", "same_as": "rfa",
                 "points": [point(100, 0.3), point(1000, 0.1), point(10000, 0.03)]}]),
    dict(COMMON, name="by_model", kind="line", title="acc by model", x_label="model.name",
         y_label="acc", x_numeric=False, x_values=["rfa", "rfmlp"],
         lines=[{"label": "acc", "same_as": None,
                 "points": [point("rfa", 0.9), point("rfmlp", 0.7)]}]),
    dict(COMMON, name="heat", kind="heatmap", title="acc over m and q", x_label="model.m",
         y_label="task.q", value_label="mean acc", x_values=[10, 100, 1000], y_values=[1, 10],
         cells=[dict(point(m, 1.0 if m * q >= 1000 else 0.2), y=q)
                for m in (10, 100, 1000) for q in (1, 10) if (m, q) != (10, 1)],
         product_boundary={"level": 0.9, "c": 1000}),
    dict(COMMON, name="loss", kind="curve", title="val_loss vs step", x_label="step",
         y_label="val_loss", legend_title="model.m",
         lines=[{"label": str(m), "same_as": None,
                 "points": [point(s, 1.0 / (s + m), [0.5 / (s + m), 1.5 / (s + m)], "step")
                            for s in range(5)]} for m in (1, 2)]),
    {"format": "attnlab figure data 1", "name": "attn", "kind": "matrix",
     "title": "attention", "x_label": "position j (column)", "y_label": "position i (row)",
     "legend_title": None, "logx": False, "logy": False, "where": {}, "runs_used": 1,
     "notes": [], "value_label": "attention_sample0", "run_id": "00000000000000ab",
     "run_label": "model.m=4, seed=0", "mark": "target_sample0",
     "values": [[0.5, 0.5, None], [0.2, 0.3, 0.5], [1.0, 0.0, 0.0]],
     "marked": [[0, 1], [2, 0]]},
    dict(COMMON, name="width_needed", kind="size_needed",
         title="model.width needed for mean test_loss < 0.25", x_label="task.N",
         y_label="smallest model.width with mean test_loss < 0.25", legend_title="model.name",
         logy=True, size_key="model.width", goal="below", threshold=0.25,
         sizes_tried=[4, 8, 16, 256], x_numeric=True, x_values=[4, 8, 16],
         lines=[{"label": "attention", "same_as": None,
                 "points": [{"x": 4, "size": 4, "may": 4, "sure": 8, "largest_tried": 256,
                             "runs": 2, "run_ids": []},
                            {"x": 8, "size": 8, "may": 8, "sure": 8, "largest_tried": 256,
                             "runs": 2, "run_ids": []},
                            {"x": 16, "size": None, "may": None, "sure": None,
                             "largest_tried": 256, "runs": 2, "run_ids": []}]}]),
]


def write_dir(name, plots, index=None):
    out = os.path.join(scratch, name)
    data = os.path.join(out, "figures", "data")
    os.makedirs(data)
    for p in plots:
        with open(os.path.join(data, p["name"] + ".json"), "w") as f:
            json.dump(p, f)
    with open(os.path.join(data, "index.json"), "w") as f:
        json.dump(index or {"plots": [p["name"] for p in plots], "skipped": {}}, f)
    return out


good = write_dir("good", PLOTS)
r = run(good)
check(r.returncode == 0, f"good dir: exit {r.returncode}, stderr {r.stderr!r}")
figs = os.path.join(good, "figures")
written = r.stdout.split()
check(len(written) == 2 * len(PLOTS) + 1, f"printed lines: {written}")
for p in PLOTS:
    png, svg = (os.path.join(figs, p["name"] + ext) for ext in (".png", ".svg"))
    check(png in written and svg in written, f"{p['name']}: files not printed")
    with open(png, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{p['name']}.png is not a PNG")
    try:
        check(ET.parse(svg).getroot().tag.endswith("svg"), f"{p['name']}.svg root is not <svg>")
    except ET.ParseError as e:
        check(False, f"{p['name']}.svg: {e}")
with open(os.path.join(figs, "index.json")) as f:
    index = {e["name"]: e for e in json.load(f)}
check(list(index) == [p["name"] for p in PLOTS], f"index names {list(index)}")
check(index["nmse_by_n"]["lines"] == ["rfa", "rfmlp (same as rfa)"], f"lines {index['nmse_by_n']}")
check(index["nmse_by_n"]["notes"] == ["each point: mean over seeds and task.N"], "notes")
check(index["heat"]["product_boundary_c"] == 1000, f"boundary {index['heat']}")
check(index["attn"]["marked"] == 2 and index["attn"]["runs_used"] == 1, f"matrix {index['attn']}")
check(index["attn"]["title"] == "attention (model.m=4, seed=0)", f"matrix title {index['attn']}")
check(index["width_needed"]["size_needed"] == [
    {"x": 4, "line": "attention", "size": 4, "largest_tried": 256},
    {"x": 8, "line": "attention", "size": 8, "largest_tried": 256},
    {"x": 16, "line": "attention", "size": None, "largest_tried": 256}],
    f"size_needed {index['width_needed']}")
check(all(e["png"] == e["name"] + ".png" and e["svg"] == e["name"] + ".svg"
          for e in index.values()), "file names in index.json")
with open(os.path.join(figs, "nmse_by_n.svg"), "rb") as f:
    first_svg = f.read()

# The drawn size_needed figure: log y ticks at the sizes tried, the line broken at N = 16,
# a hollow triangle there at the largest size tried.
loader = importlib.util.spec_from_file_location("plot_results", SCRIPT)
plot_results = importlib.util.module_from_spec(loader)
loader.loader.exec_module(plot_results)
import matplotlib.pyplot as plt  # noqa: E402

figures, saved = [], plot_results.save
plot_results.save = lambda fig, *args, **kw: figures.append(fig) or {}
plot_results.draw_size_needed(PLOTS[-1], [], scratch, plt, numpy)
plot_results.save = saved
ax = figures[0].axes[0]
check(ax.get_yscale() == "log" and list(ax.get_yticks()) == [4, 8, 16, 256], "y ticks")
hollow = [(list(l.get_xdata()), list(l.get_ydata())) for l in ax.get_lines()
          if l.get_marker() == "^" and len(l.get_xdata())]
check(hollow == [([16], [256])], f"none-reached markers {hollow}")
check("none reached (marker at largest size tried)" in ax.get_legend_handles_labels()[1], "legend")

r = run(good, "--format", "png")
check(r.returncode == 0, f"--format png: exit {r.returncode}")
r = run(good)
with open(os.path.join(figs, "nmse_by_n.svg"), "rb") as f:
    check(f.read() == first_svg, "SVG differs between two runs on the same data")

# Errors: one line "plot_results: error: ..." on stderr, exit 2, nothing drawn.
def error(args, needle, what):
    r = run(*args)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2, f"{what}: exit {r.returncode}, want 2")
    check(len(lines) == 1 and lines[0].startswith("plot_results: error:") and needle in lines[0],
          f"{what}: stderr {r.stderr!r}")


error([os.path.join(scratch, "absent")], "no such directory", "missing dir")
no_data = os.path.join(scratch, "no_data")
os.makedirs(no_data)
error([no_data], "index.json: not found", "no figure data")
missing = write_dir("missing", PLOTS[:1], {"plots": ["nmse_by_n", "gone"], "skipped": {}})
error([missing], "gone.json: not found", "a listed plot without its file")
check(not os.path.exists(os.path.join(missing, "figures", "nmse_by_n.png")), "drew before failing")
bad = write_dir("bad_json", PLOTS[:1])
with open(os.path.join(bad, "figures", "data", "nmse_by_n.json"), "w") as f:
    f.write("{not json")
error([bad], "cannot read JSON", "bad JSON")
error([good, "--format", "gif"], "--format", "bad format")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"ok: {len(PLOTS)} figures drawn from figure data, errors exit 2")
