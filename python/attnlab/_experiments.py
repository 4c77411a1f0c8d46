"""Experiment specs: attnlab.run, attnlab.reproduce and attnlab.results (the results store
as columns, or a pandas DataFrame)."""
import json
import math
import os

import numpy as np

from . import _attnlab
from ._checks import flag, integer
from ._feedback import Progress, progress_wanted, warn_line
from ._util import spec_file, toml_text


def _cli():
    """The attnlab binary that runs run()'s and reproduce()'s jobs (attnlab.cli_path())."""
    from . import cli_path
    path = cli_path()
    if path is None:
        here = os.path.dirname(os.path.abspath(__file__))
        raise OSError("no attnlab binary to run the job: none in the package "
                      f"({here}/bin/attnlab) or next to the build tree's python/ folder; "
                      "reinstall the package, build the target attnlab_cli, or set ATTNLAB_CLI "
                      "to the binary")
    return os.path.abspath(path)


class Results(dict):
    """A results table: a dict column name -> 1-D numpy array, one row per run (ordered by
    point index), ready for `pandas.DataFrame(results)`.

    Columns: run_id, point, seed, status; every parameter by dotted key (the swept keys
    first, in axis order, then the others; numbers as int64/float64, true/false as bool,
    text as str; NaN or "" where a run lacks the key); every metric (float64, NaN where
    absent, e.g. failed runs); wall_seconds, peak_rss_mb, error.

    Attributes:
        dir (str): the output directory.
        swept (list of str): the parameter columns: the swept keys in axis order, then the
            other keys the spec's plots use (x, where, line, title), as in results.csv.
        experiment (str): the spec's name.
        series (dict): column name -> array of the logged series, one row per point
            (run_id, seed, status, the swept keys, series, step, value), as series.csv.
        selected (dict or None): with a spec's [select], the chosen runs as columns, one row
            per seed and reported point (DIR/selected.csv: run_id, seed, status, the swept
            keys with the chosen values, candidates, eligible, n_params, the metrics); None
            without [select]. Of the whole directory (where() does not filter it).
        selection (dict or None): every candidate as columns (DIR/selection.csv: the
            validation curves, with n_params, the `by` metric, eligible, chosen, why).
        claims (list of dict): the verdicts of the spec's [[claim]]s on the stored runs, as
            `attnlab reproduce` decides them (the chosen runs under [select]): {"id", "text",
            "verdict" ("PASS", "FAIL", "INCONCLUSIVE" or "NOT EVALUATED"), "detail"}; [] for a
            spec without claims. Computed when read, on the whole directory.
    """

    def __init__(self, columns, dir="", swept=(), experiment="", series=None, selected=None,
                 selection=None):
        super().__init__(columns)
        self.dir = dir
        self.swept = list(swept)
        self.experiment = experiment
        self.series = series if series is not None else {}
        self.selected = selected
        self.selection = selection

    def __len__(self):
        return len(self["run_id"]) if "run_id" in self else 0

    @property
    def claims(self):
        return list(_attnlab.claims(dir=self.dir))

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
        out = Results({k: v[mask] for k, v in self.items()}, self.dir, self.swept, self.experiment,
                      selected=self.selected, selection=self.selection)
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


def _csv_columns(path):
    """A CSV file attnlab writes (selected.csv, selection.csv) as typed numpy columns, as
    results() types parameters; None when the file is absent."""
    import csv
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        rows = list(reader)
    if header is None:
        return None
    # Run ids are text even when all 16 hex digits happen to be digits (as results() keeps them).
    return {name: (np.array([row[i] for row in rows], dtype=str) if name == "run_id" else
                   _column([row[i] if row[i] != "" else None for row in rows]))
            for i, name in enumerate(header)}


def results(out_dir, as_frame=False):
    """Loads the results store of an experiment directory (DIR/results.sqlite), as
    `attnlab export` does but as columns in memory; readable while a run is writing.

    Args:
        out_dir (str): the --out directory of `attnlab run` / attnlab.run().
        as_frame (bool): return a pandas DataFrame (one row per run, the same columns;
            .attrs holds dir, swept, experiment) when pandas is installed (Debian's
            python3-pandas); without pandas, the numpy columns (Results) as for False.

    Returns:
        Results: dict of numpy columns (see Results), plus .series, .swept, .rows();
        or a pandas.DataFrame with as_frame=True.

    Raises:
        OSError: no results.sqlite in out_dir, or not an attnlab store.
    """
    as_frame = flag("results", "as_frame", as_frame)
    raw = _attnlab.load_runs(dir=os.fspath(out_dir))
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
    # [select]: the chosen runs and every candidate, as `attnlab run`/`export` wrote them.
    selected = _csv_columns(os.path.join(os.fspath(out_dir), "selected.csv"))
    selection = _csv_columns(os.path.join(os.fspath(out_dir), "selection.csv"))
    res = Results(cols, os.fspath(out_dir), swept, raw["experiment"], series, selected, selection)
    return _as_frame(res) if as_frame else res


def _as_frame(res):
    """res as a pandas DataFrame, or res itself when pandas is not installed."""
    try:
        import pandas
    except ImportError:
        return res
    frame = pandas.DataFrame(dict(res))
    frame.attrs.update(dir=res.dir, swept=res.swept, experiment=res.experiment,
                       selected=res.selected, selection=res.selection)
    return frame


def _call(fn, args, desc, progress, on_line=None):
    """Calls a job of the core (run in a fresh attnlab process) with the keyword arguments `args` (a dict) and
    warnings.warn and a progress bar as its handlers. Its error messages name Python keywords
    (force_new=True, out=, ...): the module installs them as the core's option spellings
    (core/front_option.h)."""
    bar = Progress(desc, progress_wanted(progress))
    try:
        handlers = dict(on_warning=warn_line, on_progress=bar.update)
        if on_line is not None:
            handlers["on_line"] = on_line
        return fn(**args, **handlers)
    finally:
        bar.close()


def _jobs(where, jobs):
    """jobs= as the core takes it: None is the command line's --jobs default, the CPUs this
    process may use (its affinity mask, capped by SLURM_CPUS_PER_TASK; docs/cluster.md)."""
    return _attnlab.jobs_default() if jobs is None else integer(where, "jobs", jobs)


def run(spec, out, quick=False, jobs=None, set=(), force_new=False, retry_failed=False,
        progress=None, threads=0, groups=True):
    """Runs (or resumes) an experiment spec, like `attnlab run SPEC --out OUT`, and returns
    its results table.

    The sweep runs in a fresh process of the attnlab binary (attnlab.cli_path(); never a fork
    of this interpreter, so a notebook's threads cannot block it) that starts one worker
    process per run (`jobs` at a time), as the command line does; this call waits with the GIL
    released. Ctrl-C stops it
    (KeyboardInterrupt): runs finished so far stay in OUT/results.sqlite and calling run()
    again with the same arguments runs only the rest. Runs that fail are stored with
    status "failed" and their error (they do not raise).

    Args:
        spec (str, os.PathLike or dict): the spec (docs/spec-format.md): a path, e.g.
            "experiments/demo/baselines.toml"; TOML text (a str holding a newline); or a
            dict of sections, {"task": {"name": "qsa", "N": 8}, "sweep": {"model.m": [4, 8]},
            "claim": [{...}]} (a dict value is a [section], a list of dicts a [[table]]).
            Text and dicts are written to a temporary OUT_NAME.toml (its stem names the
            experiment) that is removed afterwards; OUT/spec.json keeps the resolved spec.
        out (str): output directory (results.sqlite, results.csv, series.csv, spec.json).
        quick (bool): apply the spec's [quick] overrides (--quick); use its own `out`.
        jobs (int or None): runs at once, each in its own process; None (default): the CPUs
            this process may use, as `attnlab run` and `attnlab reproduce` do without --jobs
            (docs/cluster.md; attnlab.jobs_default()).
        set (list of str, or dict): overrides as `--set` takes them: ["task.N=16",
            "sweep.train.n=[64, 256]"], or {"task.N": 16, "sweep.train.n": [64, 256]}.
        force_new (bool): move another spec's results in `out` aside and start again.
        retry_failed (bool): run failed runs again.
        progress (bool or None): show the runs done so far (tqdm when installed, else a
            plain line every 10 s); None (default): on unless ATTNLAB_NO_PROGRESS is set.
        threads (int): compute threads per run (0: ATTNLAB_THREADS or 1).
        groups (bool): run groups (default True): ridge runs that share their inputs run in
            one worker and share features, Gram/kernel and spectrum; False is the CLI's
            --no-groups, one worker per run (docs/performance.md). Results equal to rounding.

    Warnings of the core (a run that failed, a λ below the numerical floor, ...) are issued
    as attnlab.AttnlabWarning through the warnings module as they happen.

    Returns:
        Results: the table of every stored run (see results()); `.summary` holds
        {"planned", "skipped", "ok", "failed"} for this call.

    Raises:
        ValueError: a bad spec or override, or `out` holds another spec's results (the
            CLI's one-line message); OSError: unreadable spec, unwritable `out`.
        TypeError: a flag that is not a bool (force_new="no") or a count that is not an
            integer (jobs=2.9), before anything is touched.
        KeyboardInterrupt: Ctrl-C (resumable, see above).
    """
    if isinstance(set, dict):
        overrides = [f"{k}={toml_text(v)}" for k, v in set.items()]
    elif isinstance(set, str):
        overrides = [set]
    else:
        overrides = [str(s) for s in set]
    args = dict(out=os.fspath(out), quick=flag("run", "quick", quick),
                jobs=_jobs("run", jobs), overrides=overrides,
                force_new=flag("run", "force_new", force_new),
                retry_failed=flag("run", "retry_failed", retry_failed),
                threads=integer("run", "threads", threads), groups=flag("run", "groups", groups))
    want_progress = flag("run", "progress", progress, True)
    stem = os.path.basename(os.path.normpath(os.fspath(out)))
    with spec_file(spec, stem) as path:
        summary = _call(_attnlab.run, dict(args, cli=_cli(), spec=path), desc="runs",
                        progress=want_progress)
    res = results(out)
    res.summary = summary
    return res


class Reproduction(dict):
    """What attnlab.reproduce returns: the JSON of OUT/reproduce.json as a dict (name, out,
    passed, failed, inconclusive, not_evaluated, exit_code, sections: [{name, description,
    spec_path, dir, runs_ok,
    runs_failed, note, claims: [{id, text, verdict, detail}]}]), plus:

    Attributes:
        claims (list of dict): every claim, {"section", "id", "text", "verdict" ("PASS",
            "FAIL", "INCONCLUSIVE" or "NOT EVALUATED"; docs/spec-format.md, Claims), "detail"
            (the numbers compared, the bounds and seeds, in words)}.
        report (str): path of report.html.
    """

    @property
    def claims(self):
        return [dict(section=s["name"], **c) for s in self["sections"] for c in s["claims"]]

    @property
    def report(self):
        return os.path.join(self["out"], "report.html")

    def __repr__(self):
        lines = [f"<attnlab.Reproduction {self['name']!r}: {self['passed']} PASS, "
                 f"{self['failed']} FAIL, {self.get('inconclusive', 0)} INCONCLUSIVE, "
                 f"{self.get('not_evaluated', 0)} NOT EVALUATED; {self.report}>"]
        lines += [f"{c['verdict']} {c['section']}/{c['id']}: {c['detail']}" for c in self.claims]
        return "\n".join(lines)


def reproduce(name, quick=False, out=None, force_new=False, report_only=False, jobs=None,
              progress=None, threads=0, verbose=True, run_groups=True):
    """Reproduces a group of shipped experiments, like `attnlab reproduce NAME`: runs every
    spec of experiments/NAME/ (resuming what is stored), draws the figures, checks the
    claims, writes OUT/report.md, OUT/report.html and OUT/reproduce.json.

    Args:
        name (str): a folder of experiments/ (e.g. "demo", "fu2023"); see attnlab.groups().
        quick (bool): each spec's [quick] overrides (CI-sized).
        out (str or None): output directory (default results/reproduce/NAME or NAME-quick,
            relative to the working directory; then results/reproduce/index.html is
            refreshed too).
        force_new (bool): where a spec changed since its results were stored (or is run at
            the other size, quick vs full), move them aside and rerun.
        report_only (bool): run nothing; claims and figures from the runs stored so far.
        jobs (int or None): runs at once, each in its own process; None (default): the CPUs
            this process may use, as for run().
        progress (bool or None): as for run().
        threads (int): compute threads per run (0: ATTNLAB_THREADS or 1).
        verbose (bool): print the status lines ("== spec (path)", notes) as they come.
        run_groups (bool): as groups= for run() (default True); False is
            `attnlab reproduce --no-groups`, every run in its own worker.

    Returns:
        Reproduction: the claims with their verdicts and numbers (see Reproduction); its
        "exit_code" is what the command line would exit with (0: no claim fails or is
        inconclusive, 1: some claim fails, 3: some inconclusive and none fails).
        Failed runs and other warnings arrive as attnlab.AttnlabWarning.

    Raises:
        ValueError: unknown group, bad spec, or a directory holding another spec's (or
            another size's) results without force_new=True.
        TypeError: a flag that is not a bool or a count that is not an integer.
    """
    on_line = print if flag("reproduce", "verbose", verbose) else (lambda line: None)
    args = dict(name=str(name), out="" if out is None else os.fspath(out),
                quick=flag("reproduce", "quick", quick), jobs=_jobs("reproduce", jobs),
                force_new=flag("reproduce", "force_new", force_new),
                report_only=flag("reproduce", "report_only", report_only),
                threads=integer("reproduce", "threads", threads),
                run_groups=flag("reproduce", "run_groups", run_groups), cli=_cli())
    text = _call(_attnlab.reproduce, args, desc=f"reproduce {name}",
                 progress=flag("reproduce", "progress", progress, True), on_line=on_line)
    return Reproduction(json.loads(text))
