"""Experiment specs: attnlab.run and attnlab.results (the results store as columns)."""
import json
import math
import os

import numpy as np

from . import _attnlab
from ._util import toml_text


class Results(dict):
    """A results table: a dict column name -> 1-D numpy array, one row per run (ordered by
    point index), ready for `pandas.DataFrame(results)`.

    Columns: run_id, point, seed, status; every parameter by dotted key (the swept keys
    first, in axis order, then the others; numbers as int64/float64, true/false as bool,
    text as str; NaN or "" where a run lacks the key); every metric (float64, NaN where
    absent, e.g. failed runs); wall_seconds, peak_rss_mb, error.

    Attributes:
        dir (str): the output directory.
        swept (list of str): the swept keys, in axis order.
        experiment (str): the spec's name.
        series (dict): column name -> array of the logged series, one row per point
            (run_id, seed, status, the swept keys, series, step, value), as series.csv.
    """

    def __init__(self, columns, dir="", swept=(), experiment="", series=None):
        super().__init__(columns)
        self.dir = dir
        self.swept = list(swept)
        self.experiment = experiment
        self.series = series if series is not None else {}

    def __len__(self):
        return len(self["run_id"]) if "run_id" in self else 0

    def __repr__(self):
        return (f"<attnlab.Results {self.experiment!r}: {len(self)} runs, "
                f"{dict.__len__(self)} columns; swept {self.swept}>")

    def rows(self):
        """The table as a list of dicts, one per run."""
        keys = list(self.keys())
        return [{k: self[k][i].item() if hasattr(self[k][i], "item") else self[k][i] for k in keys}
                for i in range(len(self))]

    def where(self, filters=None, **columns):
        """The runs whose columns equal the given values (a value may be a list: any of them).

        Example: res.where({"model.name": "rfa", "train.n": [64, 256]}, status="ok").
        """
        filters = dict(filters or {}, **columns)
        mask = np.ones(len(self), dtype=bool)
        for key, want in filters.items():
            if key not in self:
                raise ValueError(f"no column '{key}'; columns: {', '.join(self.keys())}")
            wants = want if isinstance(want, (list, tuple, set)) else [want]
            mask &= np.isin(self[key], list(wants))
        out = Results({k: v[mask] for k, v in self.items()}, self.dir, self.swept, self.experiment)
        ids = set(out["run_id"].tolist())
        if self.series:
            keep = np.array([r in ids for r in self.series["run_id"]], dtype=bool)
            out.series = {k: v[keep] for k, v in self.series.items()}
        return out


def _column(values):
    """Text parameter values (None where absent) as a typed numpy array."""
    present = [v for v in values if v is not None]
    if present and all(v in ("true", "false") for v in present):
        if len(present) == len(values):
            return np.array([v == "true" for v in values], dtype=bool)
        return np.array([None if v is None else v == "true" for v in values], dtype=object)
    try:
        ints = [int(v) for v in present]
        if len(present) == len(values):
            return np.array(ints, dtype=np.int64)
        return np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)
    except ValueError:
        pass
    try:
        [float(v) for v in present]
        return np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)
    except ValueError:
        return np.array(["" if v is None else v for v in values], dtype=str)


def results(out_dir):
    """Loads the results store of an experiment directory (DIR/results.sqlite), as
    `attnlab export` does but as columns in memory; readable while a run is writing.

    Args:
        out_dir (str): the --out directory of `attnlab run` / attnlab.run().

    Returns:
        Results: dict of numpy columns (see Results), plus .series, .swept, .rows().

    Raises:
        OSError: no results.sqlite in out_dir, or not an attnlab store.
    """
    raw = _attnlab.load_runs(os.fspath(out_dir))
    runs = raw["runs"]
    swept = json.loads(raw["swept"]) if raw["swept"] else []
    keys = list(swept)
    metric_names = []
    for r in runs:
        for k in r["params"]:
            if k not in keys:
                keys.append(k)
        for k in r["metrics"]:
            if k not in metric_names:
                metric_names.append(k)
    cols = {
        "run_id": np.array([r["run_id"] for r in runs], dtype=str),
        "point": np.array([r["point"] for r in runs], dtype=np.int64),
        "seed": np.array([r["seed"] for r in runs], dtype=np.int64),
        "status": np.array([r["status"] for r in runs], dtype=str),
    }
    for k in keys:
        if k not in cols:
            cols[k] = _column([r["params"].get(k) for r in runs])
    for k in metric_names:
        cols[k] = np.array([r["metrics"].get(k, math.nan) for r in runs], dtype=np.float64)
    cols["wall_seconds"] = np.array([r["wall_seconds"] for r in runs], dtype=np.float64)
    cols["peak_rss_mb"] = np.array([r["peak_rss_bytes"] / 2**20 for r in runs], dtype=np.float64)
    cols["error"] = np.array([r["error"] for r in runs], dtype=str)
    if not runs:
        cols = {k: v for k, v in cols.items()}
    # Series: one row per logged point.
    srows = [(r, s) for r in runs for s in r["series"]]
    series = {
        "run_id": np.array([r["run_id"] for r, _ in srows], dtype=str),
        "seed": np.array([r["seed"] for r, _ in srows], dtype=np.int64),
        "status": np.array([r["status"] for r, _ in srows], dtype=str),
    }
    for k in swept:
        if k not in series:
            series[k] = _column([r["params"].get(k) for r, _ in srows])
    series["series"] = np.array([s[0] for _, s in srows], dtype=str)
    series["step"] = np.array([s[1] for _, s in srows], dtype=np.int64)
    series["value"] = np.array([s[2] for _, s in srows], dtype=np.float64)
    return Results(cols, os.fspath(out_dir), swept, raw["experiment"], series)


def run(spec, out, quick=False, jobs=1, set=(), force_new=False, retry_failed=False,
        progress=False, threads=0):
    """Runs (or resumes) an experiment spec, like `attnlab run SPEC --out OUT`, and returns
    its results table.

    The sweep runs in a child process that starts one worker process per run (`jobs` at a
    time), as the command line does; this call waits with the GIL released. Ctrl-C stops it
    (KeyboardInterrupt): runs finished so far stay in OUT/results.sqlite and calling run()
    again with the same arguments runs only the rest. Runs that fail are stored with
    status "failed" and their error (they do not raise).

    Args:
        spec (str): path of the TOML spec (docs/spec-format.md), e.g.
            "experiments/demo/baselines.toml".
        out (str): output directory (results.sqlite, results.csv, series.csv, spec.json).
        quick (bool): apply the spec's [quick] overrides (--quick); use its own `out`.
        jobs (int): runs at once, each in its own process (default 1; the CLI's default is
            the CPU count).
        set (list of str, or dict): overrides as `--set` takes them: ["task.N=16",
            "sweep.train.n=[64, 256]"], or {"task.N": 16, "sweep.train.n": [64, 256]}.
        force_new (bool): move another spec's results in `out` aside and start again.
        retry_failed (bool): run failed runs again.
        progress (bool): draw the progress bar on a terminal's stderr (default off).
        threads (int): compute threads per run (0: ATTNLAB_THREADS or 1).

    Returns:
        Results: the table of every stored run (see results()); `.summary` holds
        {"planned", "skipped", "ok", "failed"} for this call.

    Raises:
        ValueError: a bad spec or override, or `out` holds another spec's results (the
            CLI's one-line message); OSError: unreadable spec, unwritable `out`.
        KeyboardInterrupt: Ctrl-C (resumable, see above).
    """
    if isinstance(set, dict):
        overrides = [f"{k}={toml_text(v)}" for k, v in set.items()]
    elif isinstance(set, str):
        overrides = [set]
    else:
        overrides = [str(s) for s in set]
    summary = _attnlab.run(os.fspath(spec), os.fspath(out), bool(quick), int(jobs), overrides,
                           bool(force_new), bool(retry_failed), bool(progress), int(threads))
    res = results(out)
    res.summary = summary
    return res
