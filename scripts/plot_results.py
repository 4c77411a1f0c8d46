#!/usr/bin/env python3
"""Draw the plots an experiment spec asks for from the results of `attnlab run`.

Usage: /usr/bin/python3 scripts/plot_results.py DIR [--format png,svg]

Inputs (written by `attnlab run SPEC --out DIR`):
  DIR/results.csv  one row per run: run_id, seed, status (ok|failed), one column per swept
                   key (task.N, model.name, ...), one per metric (empty when absent),
                   wall_seconds, peak_rss_mb, error.
  DIR/spec.json    the spec; its "plots" entries give name, title, metric, x, line
                   ("" = one line), logx, logy and where ({key: [accepted values]}).

For each plot: runs with status ok that match `where` (numbers compared numerically, else
as text) are grouped by (line value, x value); each point is the mean of the metric over
its runs, with a band of +-1 sample standard deviation when it has more than one run. If
anything besides the seed varies within a point, a note on the figure says over what the
mean is taken. Numeric x is sorted; other x is categorical in first-seen order. On a log
axis, runs with a non-positive value are dropped (with a warning) and the band's lower
edge is clipped to the smallest run value of the point.

Outputs: DIR/figures/<name>.png (dpi 150) and/or .svg, one printed line per file, and
DIR/figures/index.json: [{"name", "title", "png", "svg", "runs_used"}] for each plot drawn
(file names relative to DIR/figures; null for a format not written). A plot with no
usable runs is skipped with a warning. Errors (missing DIR or file, a plot key that is not
a results.csv column) print one line "plot_results: error: ..." and exit 2.
"""
import argparse
import csv
import json
import math
import os
import sys

FORMATS = ("png", "svg")


def fail(message):
    print(f"plot_results: error: {message}", file=sys.stderr)
    sys.exit(2)


def warn(message):
    print(f"plot_results: warning: {message}", file=sys.stderr)


def as_number(text):
    """The float a cell holds, or None when it is not a finite number."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def canon(value):
    """A comparable form of a CSV cell or a JSON value: float, tuple (lists) or text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return tuple(canon(v) for v in value)
    text = str(value).strip()
    number = as_number(text)
    if number is not None:
        return number
    if text.startswith("[") and text.endswith("]"):
        return tuple(canon(t) for t in text[1:-1].split(",") if t.strip())
    return text


def load_inputs(out_dir):
    if not os.path.isdir(out_dir):
        fail(f"{out_dir}: no such directory; pass the --out directory of `attnlab run`")
    csv_path, spec_path = os.path.join(out_dir, "results.csv"), os.path.join(out_dir, "spec.json")
    for path in (csv_path, spec_path):
        if not os.path.isfile(path):
            fail(f"{path}: not found; run `attnlab run SPEC --out {out_dir}` first")
    try:
        with open(spec_path, encoding="utf-8") as f:
            spec = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{spec_path}: cannot read JSON ({e}); rerun `attnlab run` to rewrite it")
    with open(csv_path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        columns = reader.fieldnames or []
    if "status" not in columns:
        fail(f"{csv_path}: no 'status' column; is this a results.csv written by `attnlab run`?")
    if not isinstance(spec, dict) or not isinstance(spec.get("plots", []), list):
        fail(f"{spec_path}: 'plots' must be a list; rerun `attnlab run` to rewrite it")
    return rows, columns, spec, csv_path, spec_path


def check_plot(plot, columns, csv_path, spec_path):
    name = plot.get("name") if isinstance(plot, dict) else None
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        fail(f"{spec_path}: plot {name!r}: needs a 'name' usable as a file name")
    where = plot.get("where") or {}
    if not isinstance(where, dict) or not all(isinstance(v, list) for v in where.values()):
        fail(f"{spec_path}: plot '{name}': 'where' must map keys to lists of values")
    for role in ("metric", "x"):
        if not plot.get(role):
            fail(f"{spec_path}: plot '{name}': '{role}' is missing; set it in the spec's [[plot]]")
    keys = [("metric", plot["metric"]), ("x", plot["x"])]
    keys += [("line", plot["line"])] if plot.get("line") else []
    keys += [("where", k) for k in where]
    for role, key in keys:
        if key not in columns:
            fail(f"{csv_path}: plot '{name}': {role} key '{key}' is not a column; "
                 f"use one of: {', '.join(columns)}")


def select(rows, plot):
    """Runs with status ok matching `where`, as (x cell, line cell, metric value, row)."""
    where = {k: {canon(v) for v in vs} for k, vs in (plot.get("where") or {}).items()}
    name, metric, line = plot["name"], plot["metric"], plot.get("line") or ""
    picked, missing = [], 0
    for row in rows:
        if row["status"] != "ok" or any(canon(row[k]) not in ok for k, ok in where.items()):
            continue
        value = as_number(row[metric])
        if value is None:
            missing += 1
            continue
        picked.append((row[plot["x"]], row[line] if line else "", value, row))
    if missing:
        warn(f"plot '{name}': {missing} matching ok run(s) have no finite {metric}; left out")
    numeric_x = all(as_number(p[0]) is not None for p in picked)
    for axis, index in (("x", 0), ("y", 2)):
        if plot.get(f"log{axis}") and (axis == "y" or numeric_x):
            keep = [p for p in picked if as_number(p[index]) > 0]
            if len(keep) < len(picked):
                warn(f"plot '{name}': log {axis} axis: skipped {len(picked) - len(keep)} run(s) "
                     f"with a non-positive {plot[axis] if axis == 'x' else metric}")
            picked = keep
    return picked


def ordered(cells):
    """Distinct canonical values of `cells` with a label: numeric sorted, else first-seen."""
    labels = {}
    for cell in cells:
        labels.setdefault(canon(cell), cell)
    keys = list(labels)
    if all(isinstance(k, float) for k in keys):
        keys.sort()
    return keys, labels


def draw(plot, picked, spec, formats, fig_dir, plt, np):
    name, metric, x_key = plot["name"], plot["metric"], plot["x"]
    line_key = plot.get("line") or ""
    title = plot.get("title") or f"{metric} vs {x_key}"
    x_keys, x_labels = ordered(p[0] for p in picked)
    numeric_x = all(isinstance(k, float) for k in x_keys)
    if plot.get("logx") and not numeric_x:
        warn(f"plot '{name}': x '{x_key}' is not numeric; logx ignored")
    position = {k: (k if numeric_x else i) for i, k in enumerate(x_keys)}
    others = [k for k in spec.get("swept", []) if k not in (x_key, line_key) and k in picked[0][3]]
    also_varying = set()

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    line_keys, line_labels = ordered(p[1] for p in picked)
    for lk in line_keys:
        xs, means, lows, highs, banded = [], [], [], [], False
        for xk in x_keys:
            group = [p for p in picked if canon(p[1]) == lk and canon(p[0]) == xk]
            if not group:
                continue
            for key in others:
                if len({canon(p[3][key]) for p in group}) > 1:
                    also_varying.add(key)
            values = np.array([p[2] for p in group])
            mean = values.mean()
            sd = values.std(ddof=1) if len(values) > 1 else 0.0
            banded |= len(values) > 1
            low = mean - sd
            if plot.get("logy") and low <= 0:
                low = values.min()
            xs.append(position[xk])
            means.append(mean)
            lows.append(low)
            highs.append(mean + sd)
        label = (line_labels[lk] or "(empty)") if line_key else metric
        drawn = ax.plot(xs, means, marker="o", markersize=4, label=label)[0]
        if banded:
            ax.fill_between(xs, lows, highs, color=drawn.get_color(), alpha=0.2, linewidth=0)

    if plot.get("logx") and numeric_x:
        ax.set_xscale("log")
    if plot.get("logy"):
        ax.set_yscale("log")
    if not numeric_x:
        ax.set_xticks(range(len(x_keys)))
        ax.set_xticklabels([x_labels[k] for k in x_keys], rotation=30 if len(x_keys) > 6 else 0)
        ax.set_xlim(-0.5, len(x_keys) - 0.5)
    ax.set_xlabel(x_key)
    ax.set_ylabel(metric)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    if line_key:
        ax.legend(title=line_key, fontsize=8, title_fontsize=8)
    if also_varying:
        fig.text(0.01, 0.01, "each point: mean over seeds and " + ", ".join(sorted(also_varying)),
                 fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.03 if also_varying else 0, 1, 1))

    entry = {"name": name, "title": title, "png": None, "svg": None, "runs_used": len(picked)}
    for fmt in formats:
        path = os.path.join(fig_dir, f"{name}.{fmt}")
        tmp = f"{path}.tmp.{os.getpid()}"
        fig.savefig(tmp, format=fmt, dpi=150, metadata={"Date": None} if fmt == "svg" else None)
        os.replace(tmp, path)
        entry[fmt] = os.path.basename(path)
        print(path)
    plt.close(fig)
    return entry


def main():
    parser = argparse.ArgumentParser(prog="plot_results", description=__doc__.split("\n")[0])
    parser.add_argument("dir", help="output directory of `attnlab run SPEC --out DIR`")
    parser.add_argument("--format", default="png,svg", help="comma-separated: png, svg")
    args = parser.parse_args()
    formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
    if not formats or any(f not in FORMATS for f in formats):
        fail(f"--format {args.format!r}: use a comma-separated list of png, svg")
    rows, columns, spec, csv_path, spec_path = load_inputs(args.dir)
    plots = spec.get("plots", [])
    for plot in plots:
        check_plot(plot, columns, csv_path, spec_path)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError as e:
        fail(f"{e}; install python3-matplotlib and python3-numpy and use /usr/bin/python3")
    plt.rcParams["svg.hashsalt"] = "attnlab"  # stable SVG ids: same data, same file

    fig_dir = os.path.join(args.dir, "figures")
    os.makedirs(fig_dir, exist_ok=True)
    if not plots:
        warn(f"{spec_path}: no plots in the spec; nothing to draw")
    index = []
    for plot in plots:
        picked = select(rows, plot)
        if not picked:
            warn(f"plot '{plot['name']}': no ok run with a {plot['metric']} value matches "
                 f"where={json.dumps(plot.get('where') or {})}; skipped")
            continue
        index.append(draw(plot, picked, spec, formats, fig_dir, plt, np))
    index_path = os.path.join(fig_dir, "index.json")
    with open(index_path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(index, f, indent=2)
        f.write("\n")
    os.replace(index_path + ".tmp", index_path)
    print(index_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
