"""attnlab from Python: numpy in, numpy out (docs/python.md).

A thin skin over attnlab's C++ core: the same tasks, models, parameter names and defaults
as the `attnlab` command line and the TOML specs, arrays checked and converted once at the
boundary, the work done in C++ with the GIL released.

    import attnlab, numpy as np
    d = attnlab.sample("qsa", n=1000, seed=0, N=16, q=2, d_out=4)    # dict of arrays
    m = attnlab.model("attention", m=16, heads=1).fit(d["X"], d["Y"], steps=500)
    err = attnlab.metrics(m.predict(d["X"]), d)                     # dict of metrics
    A = m.attention(d["X"][:4])["layer0"]                           # (4, H, N, N)
    res = attnlab.run("experiments/demo/baselines.toml", out="runs/demo", quick=True)

Functions: sample, list_tasks, model, load, construct, list_models, metrics, run, results,
set_threads, threads. Classes: Model (fit, fit_task, predict, attention, features, evaluate,
save), Results (a dict of numpy columns). Errors: ValueError for bad input (the
CLI's one-line message), OSError for files, KeyboardInterrupt on Ctrl-C.
"""
from . import _attnlab
from ._experiments import Results, results, run
from ._models import Model, construct, list_models, load, model
from ._tasks import list_tasks, metrics, sample

__version__ = _attnlab.__version__
git_commit = _attnlab.git_commit


def set_threads(k):
    """Sets the compute-thread budget of this process: k >= 1, or 0 for ATTNLAB_THREADS
    (default 1). Results never depend on it. Returns the budget now in force."""
    return _attnlab.set_threads(int(k))


def threads():
    """The compute-thread budget in force (1 unless set_threads or ATTNLAB_THREADS)."""
    return _attnlab.threads()


__all__ = ["sample", "list_tasks", "model", "load", "construct", "list_models", "metrics",
           "run", "results", "set_threads", "threads", "Model", "Results"]
