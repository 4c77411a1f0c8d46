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
    rep = attnlab.reproduce("demo", quick=True)                     # claims and verdicts

Functions: sample, list_tasks, model, load, load_gpt2, construct, list_models, list_probes, metrics,
run, results, reproduce, groups, qk_stats, set_threads, threads. Classes: Model (fit, fit_task, predict,
attention, features, evaluate, save, export_gpt2), Results (a dict of numpy columns), Reproduction.
Errors: ValueError for bad input (the CLI's one-line message; also a NaN/inf in any array
passed, and a result that overflows), TypeError for a flag that is not a bool or a count
that is not an integer (attnlab/_checks.py), OSError for files, KeyboardInterrupt on Ctrl-C. Warnings of the core: AttnlabWarning (warnings module).
`python -m attnlab ARGS` runs the command line.
"""
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
# An installed package carries the shipped experiments and scripts in share/ (setup.py):
# point the core (core/home.h) and the bundled command line at them.
if os.path.isdir(os.path.join(_HERE, "share", "experiments")) and not os.environ.get("ATTNLAB_HOME"):
    os.environ["ATTNLAB_HOME"] = os.path.join(_HERE, "share")


def cli_path():
    """The attnlab command-line binary: ATTNLAB_CLI, the package's bin/attnlab, or the
    build tree's (a `make python` build); None if there is none."""
    for path in (os.environ.get("ATTNLAB_CLI"), os.path.join(_HERE, "bin", "attnlab"),
                 os.path.join(os.path.dirname(os.path.dirname(_HERE)), "attnlab")):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _blas_core_before_load():
    """Before the module loads OpenBLAS: OPENBLAS_CORETYPE set to the kernels the command line
    runs, when the user has not set it and no library of this process has loaded OpenBLAS yet.
    On a CPU model OpenBLAS does not know it falls back to kernels without AVX, several times
    slower (core/blas_core.h); the command line replaces them by re-executing itself, which a
    library cannot do. Elsewhere this names the kernels OpenBLAS would pick anyway. Returns what
    it did: "set", "user", "loaded" (numpy first), "no-cli" or "failed"."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return "user"
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        return "failed"
    import re
    if re.search(r"/libopenblas(p-r[0-9.]+)?\.so", maps):
        return "loaded"
    cli = cli_path()
    if cli is None:
        return "no-cli"
    try:
        # Only a binary is asked: a wrapper (the console script runs `python -m attnlab`) would
        # import this package again, and ask again.
        with open(cli, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return "no-cli"
    except OSError:
        return "no-cli"
    import subprocess
    try:
        out = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "failed"
    for line in out.splitlines():
        if line.startswith("OpenBLAS core "):
            core = line[len("OpenBLAS core "):].split(",")[0].strip()
            if core and core != "unknown":
                os.environ["OPENBLAS_CORETYPE"] = core
                return "set"
    return "failed"


# Set only while the module loads OpenBLAS, then back to the user's value (unset or empty), so
# programs this process starts see the user's setting, as the command line's do.
_blas_core_user = os.environ.get("OPENBLAS_CORETYPE")
_BLAS_PROBE = _blas_core_before_load()
try:
    from . import _attnlab  # noqa: E402
finally:
    if _BLAS_PROBE == "set":
        if _blas_core_user is None:
            del os.environ["OPENBLAS_CORETYPE"]
        else:
            os.environ["OPENBLAS_CORETYPE"] = _blas_core_user
from ._analysis import list_probes, qk_stats  # noqa: E402
from ._check import check  # noqa: E402
from ._checks import integer  # noqa: E402
from ._experiments import Reproduction, Results, reproduce, results, run  # noqa: E402
from ._feedback import AttnlabWarning  # noqa: E402
from ._models import Model, construct, list_models, load, load_gpt2, model  # noqa: E402
from ._tasks import list_tasks, metrics, sample  # noqa: E402

__version__ = _attnlab.__version__
git_commit = _attnlab.git_commit


def _blas_core_check():
    """Warns when OpenBLAS loaded kernels without AVX on a CPU with AVX or wider (its fallback
    on a CPU model it does not know, core/blas_core.h): a library of this process loaded it
    before attnlab could choose (numpy imported first), or the command line could not be asked.
    The command line, and the runs run() and reproduce() start in it, re-execute with the right
    ones."""
    wanted = _attnlab.blas_core_wanted()
    if not wanted:
        return
    import warnings
    how = (f"Import attnlab before numpy, or set OPENBLAS_CORETYPE={wanted} in the environment "
           f"before Python starts" if _BLAS_PROBE == "loaded" else
           f"Set OPENBLAS_CORETYPE={wanted} in the environment before Python starts")
    warnings.warn(
        f"OpenBLAS loaded its '{_attnlab.blas_core()}' kernels, which leave this CPU's vector units "
        f"unused (it does not know the CPU model): matrix products here run several times slower "
        f"than they could. {how} (run() and reproduce() already run with it).",
        AttnlabWarning, stacklevel=2)


_blas_core_check()


def home():
    """Where the core finds experiments/ and scripts/ (ATTNLAB_HOME, or the source tree)."""
    return _attnlab.home()


def groups():
    """The shipped experiment groups (folders of experiments/) for reproduce()."""
    return _attnlab.groups()


def jobs_default():
    """The runs at once that run() and reproduce() start when jobs=None, as `attnlab run` and
    `attnlab reproduce` without --jobs: the CPUs this process may use (its affinity mask,
    capped by SLURM_CPUS_PER_TASK; docs/cluster.md)."""
    return _attnlab.jobs_default()


def set_threads(k):
    """Sets the compute-thread budget of this process: k >= 1, or 0 for ATTNLAB_THREADS
    (default 1). Results never depend on it. Returns the budget now in force."""
    return _attnlab.set_threads(k=integer("set_threads", "k", k))


def threads():
    """The compute-thread budget in force (1 unless set_threads or ATTNLAB_THREADS)."""
    return _attnlab.threads()


def subnormals():
    """'flushed' (the default) or 'kept' (ATTNLAB_SUBNORMALS=keep): whether attnlab's calls
    compute with subnormal floats read and written as 0 (x86's FTZ and DAZ, only inside
    attnlab's calls: numpy and torch in this process keep theirs; docs/models.md)."""
    return _attnlab.subnormals()


__all__ = ["sample", "list_tasks", "model", "load", "load_gpt2", "construct", "list_models",
           "list_probes", "metrics", "run", "results", "reproduce", "check", "groups", "qk_stats",
           "home", "cli_path", "jobs_default", "set_threads", "threads", "subnormals", "Model",
           "Results", "Reproduction", "AttnlabWarning"]
