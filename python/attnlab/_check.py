"""attnlab.check: the claims and figures of any spec from its results directory, like
`attnlab check SPEC --out DIR` (docs/python.md). It is reproduce() on one spec file with
report_only=True: the same report, verdicts and exit code, nothing run."""
import os

from ._checks import flag
from ._experiments import reproduce
from ._util import spec_file


def check(spec, out, quick=False, verbose=True):
    """Checks the [[claim]]s and draws the [[plot]]s of a spec (a .toml file anywhere, TOML text
    or a dict, as run() takes it) from the
    runs stored in `out` (where `attnlab.run(spec, out=...)` or `attnlab run` put them); runs
    nothing. Writes OUT/report.md, OUT/report.html and OUT/reproduce.json.

    Args:
        spec (str, os.PathLike or dict): the spec as run() takes it: the path of a .toml file
            (not necessarily in experiments/), TOML text (a str holding a newline), or a dict
            of sections; text and dicts are written to a temporary OUT_NAME.toml, as run()
            names them, so check(spec, out) reads what run(spec, out) stored.
        out (str or path): the spec's results directory (holding results.sqlite).
        quick (bool): the spec's [quick] overrides, as the runs were made.
        verbose (bool): print the status lines as they come.

    Returns:
        Reproduction: as reproduce() returns; "exit_code" 0 when no claim fails or is
        inconclusive, 1 when one fails, 3 when one is inconclusive and none fails.

    Raises:
        ValueError: `spec` is a path that is not a .toml file, a bad spec, or `out` holding
            another spec's runs (the key that differs is named).
        TypeError: `spec` is neither a path, TOML text nor a dict.
        OSError: no spec file, or no results.sqlite in `out`.
    """
    if out is None:
        raise ValueError("check() needs out=, the spec's results directory (run(spec, out=...))")
    quick = flag("check", "quick", quick)
    verbose = flag("check", "verbose", verbose)
    if isinstance(spec, (str, os.PathLike)):
        path = os.fspath(spec)
        if "\n" not in str(path) and not str(path).endswith(".toml"):
            raise ValueError(f"{path} is not a .toml spec file; check() takes the path of a "
                             "spec, TOML text (with a newline) or a dict")
    stem = os.path.basename(os.path.normpath(os.fspath(out)))
    with spec_file(spec, stem) as path:
        return reproduce(path, quick=quick, out=out, report_only=True, progress=False,
                         verbose=verbose)
