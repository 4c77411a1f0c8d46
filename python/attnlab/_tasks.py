"""Tasks and metrics (attnlab.sample, attnlab.list_tasks, attnlab.metrics)."""
import json
import math

from . import _attnlab
from ._checks import finite, integer, largest, real
from ._util import norm_params, schema_text


def list_tasks():
    """Every task with its parameters, as `attnlab list tasks` prints them.

    Returns:
        dict: task name -> {"description": str, "params": [ {"name", "type", "default",
        "help", "choices", "min", "max"}, ... ]}, in the order `attnlab list` shows them.
    """
    return _attnlab.list_tasks()


def sample(task, n, seed=0, first=0, **params):
    """Samples `first` .. `first + n - 1` of a task's dataset, like `attnlab data`.

    Sample i is a pure function of (task parameters, seed, i): the same seed gives the same
    arrays as `attnlab data TASK --n n --seed seed --first first --set task.KEY=VALUE`,
    whatever the thread count, and disjoint `first` ranges are disjoint parts of one dataset
    (e.g. a test set at first=1_000_000).

    Args:
        task (str): task name (see list_tasks(); e.g. "rf_target", "qsa", "match3").
        n (int): number of samples (>= 0).
        seed (int): dataset seed (default 0).
        first (int): index of the first sample (default 0).
        **params: task parameters with the same names as `task.KEY` in specs and the CLI,
            e.g. N=16, q=2, d_out=4. Unknown keys and bad values raise ValueError with the
            CLI's one-line message.

    Returns:
        dict of numpy arrays (each owns C++ memory; nothing is copied):
            "X": (n, T, d_in) float64 inputs; "Y": (n, T_out, d_out) float64 targets;
            each raw task variable, (n, ...) int64 or float64 (e.g. qsa's "z", "sets");
            each dataset constant (e.g. rf_target's "beta", qsa's "success_threshold");
            and "meta": a dict (task, seed, first, n, resolved params), as the .npz `meta`.
    """
    arrays, meta = _attnlab.sample(task=task, n=integer("sample", "n", n),
                                   seed=integer("sample", "seed", seed),
                                   first=integer("sample", "first", first),
                                   params=norm_params("task", params))
    arrays["meta"] = json.loads(meta)
    return arrays


# The arrays of a sample() dict that the metrics read (tasks/named_arrays.h): DISJ instances'
# disjointness, hop's metric_mask (which positions count) and slice label k.
_METRIC_ARRAYS = ("disjoint", "query_position", "disj_threshold", "metric_mask", "k")


def metrics(pred, Y, success_threshold=None):
    """The metrics of train/metrics.h (what `attnlab predict` and result tables report).

    Pass the dict sample() returned as Y to measure as a run does: the task's target kind
    (meta["target"]: categorical targets get token_accuracy, token_error, exact_match), its
    metric_mask (hop: only the positions whose target is a real symbol count) and its slice
    labels (hop's k: the series token_error_by_k). Plain arrays carry none of these: the kind is
    then inferred from Y (one-hot rows read as 0/1 targets) and every position counts.

    Args:
        pred: predictions, (n, T_out, d_out) float64 or float32.
        Y: targets of the same shape, or a dict returned by sample() (its "Y" is used, with
            its target kind, its "success_threshold" constant, and the arrays "disjoint",
            "query_position", "disj_threshold", "metric_mask" and "k" when present).
        success_threshold (float, optional): qsa's success threshold 1/(2q); adds
            "success_rate".

    Returns:
        dict name -> float, in order: mse, nmse, max_abs_err, mean_max_pos_err, max_pos_err,
        success_rate (with a threshold), and for 0/1 targets accuracy, balanced_accuracy,
        exact_match, for categorical targets token_accuracy, token_error, exact_match, and
        disj_accuracy for a sample dict of DISJ instances (task.instances = "disj"); then, for
        a dict with a slice label (hop's k), "token_error_by_k" and "token_error_se_by_k":
        dicts {k: value} over the values of k present.

    Raises:
        ValueError: shapes differ, no samples, a NaN/inf in pred or Y (named), or metrics
            that overflow double precision (entries near 1e154 and beyond).
        TypeError: success_threshold is not a number.
    """
    extra, target = {}, None
    if isinstance(Y, dict):
        if success_threshold is None and "success_threshold" in Y:
            success_threshold = float(Y["success_threshold"])
        extra = {k: Y[k] for k in _METRIC_ARRAYS if k in Y}
        target = Y.get("meta", {}).get("target")
        Y = Y["Y"]
    finite("metrics", "pred", pred)
    finite("metrics", "Y", Y)
    if success_threshold is not None:
        success_threshold = real("metrics", "success_threshold", success_threshold)
    out = _attnlab.metrics(pred=pred, Y=Y, extra=extra, success_threshold=success_threshold,
                           target=target)
    for name, value in out.items():
        if not isinstance(value, dict) and not math.isfinite(value):
            raise ValueError(f"metrics: {name} is {value} although pred and Y are finite: it "
                             "overflows double precision (the largest |entry| of pred is "
                             f"{largest(pred)}, of Y {largest(Y)}); scale both down")
    return out


def _sample_doc():
    lines = ["", "    Tasks and their parameters (name = default):"]
    for name, info in _attnlab.list_tasks().items():
        lines.append(f"      {name}: {info['description']}")
        lines.append(schema_text(info["params"], ""))
    return "\n".join(lines)


sample.__doc__ += _sample_doc()
