#!/usr/bin/env python3
"""Draw an experiment's figures from the figure data attnlab computed for them.

Usage: /usr/bin/python3 scripts/plot_results.py DIR [--format png,svg]

`attnlab plot DIR` (and `attnlab reproduce`) first computes every number a figure shows, with
the functions the claims use, and writes it to DIR/figures/data/ (format: docs/figure-data.md):
  index.json     {"plots": [names in spec order], "skipped": {name: reason}}
  <name>.json    one plot: kind (line, heatmap, curve, matrix, size_needed), title, axis
                 labels, notes, and its points (means over seeds, the claims' bounds as a
                 band, sizes needed with their brackets, a matrix's values).
This script only draws them: no filtering, averaging, size search or spec checks happen here.

  line     mean vs x, one line per legend label, a band where the point has bounds; a
           numeric x is a number axis, other x categorical in the given order. A line with
           same_as set is dashed with hollow markers.
  heatmap  the mean in each (x, y) cell, written in the cell, viridis with a colorbar; with a
           product boundary c, the curve x·y = c (placed between the rows by log y).
  curve    mean vs step, one line per label, with bands.
  matrix   the S x S values (rows i, columns j), the marked entries outlined.
  size_needed
           the smallest size whose mean reaches the goal per x, lines broken where none
           does, a hollow triangle at the largest size tried there; log axes have the values
           tried as ticks.

Outputs: DIR/figures/<name>.png (dpi 150) and/or .svg, one printed line per file, and
DIR/figures/index.json: [{"name", "title", "png", "svg", "runs_used", "notes"}] for each plot
drawn (file names relative to DIR/figures; null for a format not written; line plots also
"lines": the legend labels, matrix plots "marked": the number of outlined entries; heatmaps
"product_boundary_c", size_needed plots "size_needed": [{"x", "line", "size", "largest_tried"}]).
Errors (a missing DIR or data file, unreadable JSON) print one line "plot_results: error: ..."
and exit 2 before any figure is written.
"""
import argparse
import json
import math
import os
import sys
import textwrap

FORMATS = ("png", "svg")
CMAP = "viridis"  # perceptually uniform, readable in grey and by colour-blind readers
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def fail(message):
    print(f"plot_results: error: {message}", file=sys.stderr)
    sys.exit(2)


def pretty(value):
    """A tick label: numbers with 6 significant digits, text as it is."""
    return f"{value:.6g}" if isinstance(value, (int, float)) else (str(value) or "(empty)")


def read_json(path, out_dir):
    if not os.path.isfile(path):
        fail(f"{path}: not found; `attnlab plot {out_dir}` writes it")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: cannot read JSON ({e}); rerun `attnlab plot {out_dir}`")


def load_data(out_dir):
    if not os.path.isdir(out_dir):
        fail(f"{out_dir}: no such directory; pass the --out directory of `attnlab run`")
    data_dir = os.path.join(out_dir, "figures", "data")
    index = read_json(os.path.join(data_dir, "index.json"), out_dir)
    if not isinstance(index, dict) or not isinstance(index.get("plots"), list):
        fail(f"{data_dir}/index.json: 'plots' must be a list; rerun `attnlab plot {out_dir}`")
    return [read_json(os.path.join(data_dir, f"{name}.json"), out_dir) for name in index["plots"]]


def note(fig, lines):
    """The figure's footnote lines, and room for them."""
    if lines:
        fig.text(0.01, 0.01, "\n".join(textwrap.fill(t, 110) for t in lines), fontsize=7,
                 color="0.35", va="bottom")
    height = sum(t.count("\n") + 1 for t in (textwrap.fill(t, 110) for t in lines))
    fig.tight_layout(rect=(0, min(0.03 * height, 0.3), 1, 1))


def set_title(ax, title, width=60):
    ax.set_title(textwrap.fill(title, width), fontsize=10 if len(title) > 50 else None)


def save(fig, plt, data, formats, fig_dir, title=None):
    note(fig, data["notes"])
    entry = {"name": data["name"], "title": title or data["title"], "png": None, "svg": None,
             "runs_used": data["runs_used"]}
    for fmt in formats:
        path = os.path.join(fig_dir, f"{data['name']}.{fmt}")
        tmp = f"{path}.tmp.{os.getpid()}"
        fig.savefig(tmp, format=fmt, dpi=150, metadata={"Date": None} if fmt == "svg" else None)
        os.replace(tmp, path)
        entry[fmt] = os.path.basename(path)
        print(path)
    plt.close(fig)
    entry["notes"] = data["notes"]
    return entry


def plain_ticks(axis, values):
    """The values that ran as the ticks of a log axis, as plain numbers (not 10^k)."""
    from matplotlib.ticker import NullLocator
    axis.set_ticks(values)
    axis.set_ticklabels([pretty(v) for v in values])
    axis.set_minor_locator(NullLocator())


def band(ax, xs, points, color):
    """Fills the points' bands (the claims' bounds), pinched to the mean at a point without
    one; nothing when no point has one."""
    if any(p["band"] for p in points):
        lows = [p["band"][0] if p["band"] else p["mean"] for p in points]
        highs = [p["band"][1] if p["band"] else p["mean"] for p in points]
        ax.fill_between(xs, lows, highs, color=color, alpha=0.2, linewidth=0)


def draw_line(data, formats, fig_dir, plt, np):
    numeric_x = data["x_numeric"]
    x_values = data["x_values"]
    position = {json.dumps(v): (v if numeric_x else i) for i, v in enumerate(x_values)}
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for k, line in enumerate(data["lines"]):
        xs = [position[json.dumps(p["x"])] for p in line["points"]]
        means = [p["mean"] for p in line["points"]]
        twin = line["same_as"] is not None
        drawn = ax.plot(xs, means, marker=MARKERS[k % len(MARKERS)], markersize=7 if twin else 4,
                        markerfacecolor="none" if twin else None, linestyle="--" if twin else "-",
                        label=line["label"])[0]
        band(ax, xs, line["points"], drawn.get_color())
        for x, p in zip(xs, line["points"]):  # [select]: the chosen values and parameter counts
            if p.get("chosen"):
                ax.annotate(p["chosen"], (x, p["mean"]), textcoords="offset points",
                            xytext=(3, 4), fontsize=6, color=drawn.get_color())
    if data["logx"] and numeric_x:
        ax.set_xscale("log")
    if data["logy"]:
        ax.set_yscale("log")
    if not numeric_x:
        ax.set_xticks(range(len(x_values)))
        ax.set_xticklabels(x_values, rotation=30 if len(x_values) > 6 else 0)
        ax.set_xlim(-0.5, len(x_values) - 0.5)
    if numeric_x and (len(x_values) == 1 or (data["logx"] and len(x_values) <= 12)):
        plain_ticks(ax.xaxis, x_values)
    ax.set_xlabel(data["x_label"])
    ax.set_ylabel(data["y_label"])
    set_title(ax, data["title"])
    ax.grid(True, which="major", alpha=0.3)
    if data["legend_title"]:
        ax.legend(title=data["legend_title"], fontsize=8, title_fontsize=8)
    entry = save(fig, plt, data, formats, fig_dir)
    entry["lines"] = [line["label"] for line in data["lines"]]
    return entry


def cell_texts(ax, image, values, fontsize):
    """Writes each finite value in its cell, dark text on light colours and vice versa."""
    rows, cols = values.shape
    for i in range(rows):
        for j in range(cols):
            value = float(values[i, j])
            if not math.isfinite(value):
                continue
            r, g, b, _ = image.cmap(image.norm(value))
            colour = "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"
            ax.text(j, i, f"{value:.3g}", ha="center", va="center", fontsize=fontsize,
                    color=colour)


def draw_heatmap(data, formats, fig_dir, plt, np):
    x_values, y_values = data["x_values"], data["y_values"]
    col = {json.dumps(v): j for j, v in enumerate(x_values)}
    row = {json.dumps(v): i for i, v in enumerate(y_values)}
    means = np.full((len(y_values), len(x_values)), np.nan)
    for c in data["cells"]:
        if c["mean"] is not None:
            means[row[json.dumps(c["y"])], col[json.dumps(c["x"])]] = c["mean"]
    nx, ny = len(x_values), len(y_values)
    fig, ax = plt.subplots(figsize=(min(max(5.2, 0.7 * nx + 2.6), 16), min(max(4.2, 0.5 * ny + 2.0), 12)))
    image = ax.imshow(np.ma.masked_invalid(means), cmap=CMAP, origin="lower", aspect="auto",
                      interpolation="nearest")
    cell_texts(ax, image, means, max(5, min(9, 110 // max(nx, ny, 1))))
    bar = fig.colorbar(image, ax=ax)
    bar.set_label(data["value_label"])
    ax.set_xticks(range(nx))
    ax.set_xticklabels([pretty(v) for v in x_values], rotation=30 if nx > 8 else 0)
    ax.set_yticks(range(ny))
    ax.set_yticklabels([pretty(v) for v in y_values])
    ax.set_xlabel(data["x_label"])
    ax.set_ylabel(data["y_label"])
    set_title(ax, data["title"])
    boundary = data["product_boundary"]
    if boundary and boundary["c"] is not None:
        product_curve(ax, data, boundary, np)
    entry = save(fig, plt, data, formats, fig_dir)
    if boundary and boundary["c"] is not None:
        entry["product_boundary_c"] = boundary["c"]
    return entry


def product_curve(ax, data, boundary, np):
    """The curve x·y = c on the categorical axes: y = c/x at each column, placed between the
    rows by interpolating log y over the row values."""
    c, level = boundary["c"], boundary["level"]
    log_y = np.log(np.array(data["y_values"], dtype=float))
    cols, rows = [], []
    for j, x in enumerate(data["x_values"]):
        y = c / x
        if log_y[0] <= np.log(y) <= log_y[-1]:
            cols.append(j)
            rows.append(float(np.interp(np.log(y), log_y, np.arange(len(log_y)))))
    ax.plot(cols, rows, color="white", lw=2.2)
    ax.plot(cols, rows, color="crimson", lw=1.2, ls="--",
            label=f"{data['x_label']} · {data['y_label']} = {c:g}\n(smallest product with mean >= {level:g})")
    ax.legend(loc="best", fontsize=7, framealpha=0.85)


def draw_curve(data, formats, fig_dir, plt, np):
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for line in data["lines"]:
        steps = [p["step"] for p in line["points"]]
        drawn = ax.plot(steps, [p["mean"] for p in line["points"]],
                        marker="o" if len(steps) <= 30 else None, markersize=3, linewidth=1.2,
                        label=line["label"])[0]
        band(ax, steps, line["points"], drawn.get_color())
    if data["logx"]:
        ax.set_xscale("log")
    if data["logy"]:
        ax.set_yscale("log")
    ax.set_xlabel(data["x_label"])
    ax.set_ylabel(data["y_label"])
    set_title(ax, data["title"])
    ax.grid(True, which="major", alpha=0.3)
    if data["legend_title"]:
        ax.legend(title=data["legend_title"], fontsize=8, title_fontsize=8)
    return save(fig, plt, data, formats, fig_dir)


def draw_size_needed(data, formats, fig_dir, plt, np):
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    found, any_missed = [], False
    for line in data["lines"]:
        points = line["points"]
        xs = [p["x"] for p in points]
        ys = [np.nan if p["size"] is None else p["size"] for p in points]  # nan: the line breaks
        missed = [(p["x"], p["largest_tried"]) for p in points if p["size"] is None]
        drawn = ax.plot(xs, ys, marker="o", markersize=4, label=line["label"])[0]
        if missed:
            any_missed = True
            ax.plot([m[0] for m in missed], [m[1] for m in missed], linestyle="none",
                    marker="^", markersize=7, markerfacecolor="none",
                    markeredgecolor=drawn.get_color())
        found += [{"x": p["x"], "line": line["label"] if data["legend_title"] else None,
                   "size": p["size"], "largest_tried": p["largest_tried"]} for p in points]
    if any_missed:
        ax.plot([], [], linestyle="none", marker="^", markersize=7, markerfacecolor="none",
                markeredgecolor="0.3", label="none reached (marker at largest size tried)")
    for log, set_scale, axis, values in ((data["logx"], ax.set_xscale, ax.xaxis, data["x_values"]),
                                         (data["logy"], ax.set_yscale, ax.yaxis,
                                          data["sizes_tried"])):
        if not log:
            continue
        set_scale("log")
        if len(values) <= 16:  # more would crowd the axis: keep matplotlib's decades
            plain_ticks(axis, values)
    if len(data["x_values"]) == 1:  # one value: a tick at it, not a range around it
        plain_ticks(ax.xaxis, data["x_values"])
    ax.set_xlabel(data["x_label"])
    ax.set_ylabel(data["y_label"])
    set_title(ax, data["title"])
    ax.grid(True, which="major", alpha=0.3)
    if data["legend_title"] or any_missed:
        ax.legend(title=data["legend_title"], fontsize=8, title_fontsize=8)
    entry = save(fig, plt, data, formats, fig_dir)
    entry["size_needed"] = found
    return entry


def draw_matrix(data, formats, fig_dir, plt, np):
    from matplotlib.patches import Rectangle
    from matplotlib.ticker import MaxNLocator
    values = np.array([[np.nan if v is None else v for v in r] for r in data["values"]], dtype=float)
    size = values.shape[0]
    fig, ax = plt.subplots(figsize=(5.6, 4.8))
    image = ax.imshow(np.ma.masked_invalid(values), cmap=CMAP, origin="upper",
                      interpolation="nearest")
    if size <= 10:
        cell_texts(ax, image, values, 8 if size <= 6 else 6)
    bar = fig.colorbar(image, ax=ax)
    bar.set_label(data["value_label"])
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(data["x_label"])
    ax.set_ylabel(data["y_label"])
    marked = data["marked"] or []
    if marked:
        for i, j in marked:
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="crimson",
                                   linewidth=1.4))
        ax.plot([], [], linestyle="none", marker="s", markersize=8, markerfacecolor="none",
                markeredgecolor="crimson", label=f"outlined: {data['mark']} = 1")
        ax.legend(loc="upper left", bbox_to_anchor=(0, -0.12), fontsize=7, frameon=False)
    run = data["run_label"]
    ax.set_title(textwrap.fill(data["title"], 64) + "\n" +
                 textwrap.fill(f"run {data['run_id']}: {run}", 64), fontsize=9)
    entry = save(fig, plt, data, formats, fig_dir, f"{data['title']} ({run})")
    entry["marked"] = len(marked)
    return entry


# The drawer of each plot kind: one key per row of the C++ plot-kind table
# (src/experiment/plot_kinds.cpp); tests/python/test_py_tables.py fails when they differ.
DRAWERS = {"line": draw_line, "heatmap": draw_heatmap, "curve": draw_curve,
           "matrix": draw_matrix, "size_needed": draw_size_needed}


def main():
    parser = argparse.ArgumentParser(prog="plot_results", description=__doc__.split("\n")[0])
    parser.add_argument("dir", help="output directory of `attnlab run SPEC --out DIR`")
    parser.add_argument("--format", default="png,svg", help="comma-separated: png, svg")
    args = parser.parse_args()
    formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
    if not formats or any(f not in FORMATS for f in formats):
        fail(f"--format {args.format!r}: use a comma-separated list of png, svg")
    plots = load_data(args.dir)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError as e:
        fail(f"{e}; install python3-matplotlib and python3-numpy and use /usr/bin/python3")
    plt.rcParams["svg.hashsalt"] = "attnlab"  # stable SVG ids: same data, same file

    fig_dir = os.path.join(args.dir, "figures")
    index = [DRAWERS[data["kind"]](data, formats, fig_dir, plt, np) for data in plots]
    path = os.path.join(fig_dir, "index.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(index, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
