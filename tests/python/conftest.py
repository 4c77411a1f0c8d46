"""pytest set-up for the Python bindings (test_py_*.py; ctest test python_bindings).

Run by hand: PYTHONPATH=build/python ATTNLAB_CLI=build/attnlab /usr/bin/python3 -m pytest tests/python
"""
import os
import subprocess

# Before numpy: attnlab chooses OpenBLAS's kernels as its command line does (attnlab/__init__.py),
# so the bindings and the command line the tests compare them with round alike. (The torch
# check runs without the module.)
try:
    import attnlab  # noqa: F401
except ImportError:
    pass
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def cli():
    """Path of the attnlab binary the module was built with (ATTNLAB_CLI), for comparisons."""
    path = os.environ.get("ATTNLAB_CLI", os.path.join(ROOT, "build", "attnlab"))
    if not os.access(path, os.X_OK):
        pytest.skip(f"no attnlab binary at {path}; set ATTNLAB_CLI")
    return path


@pytest.fixture(scope="session")
def run_cli(cli):
    """run_cli(*args) -> CompletedProcess; check=True unless expect_fail."""
    def run(*args, expect_fail=False):
        env = dict(os.environ, ATTNLAB_NO_PROGRESS="1", ATTNLAB_THREADS="1")
        p = subprocess.run([cli, *map(str, args)], capture_output=True, text=True, env=env)
        if expect_fail:
            assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
        else:
            assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
        return p
    return run


def cli_error(p):
    """The one-line message of a CLI user error ("attnlab: error: MSG" -> MSG)."""
    line = p.stderr.strip().splitlines()[-1]
    prefix = "attnlab: error: "
    assert line.startswith(prefix), p.stderr
    return line[len(prefix):]


def spec_path(*parts):
    return os.path.join(ROOT, *parts)


def load_npz(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files}
