"""What the checks of scripts/*.py share: argv (ATTNLAB_BINARY SOURCE_DIR TMPDIR), the skip
without numpy (exit 77, ctest: skipped), loading the script as a module, and collecting
failed checks so that one run reports all of them.
"""
import importlib.util
import os
import sys


def load(name):
    """(the module scripts/NAME.py, binary, source dir, tmp dir); exits 77 without numpy."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        print("SKIP: numpy is not importable by", sys.executable, "(install python3-numpy)")
        sys.exit(77)
    binary, source, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(tmp, exist_ok=True)
    scripts = os.path.join(source, "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)  # the scripts' own shared module, script_cli
    spec = importlib.util.spec_from_file_location(name, os.path.join(scripts, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, binary, source, tmp


class Checks:
    """check(cond, what) records `what` when cond is false; finish(ok) prints and exits."""

    def __init__(self):
        self.failures = []

    def __call__(self, cond, what):
        if not cond:
            self.failures.append(what)

    def finish(self, ok_message):
        if self.failures:
            print("FAILED:\n  " + "\n  ".join(self.failures[:20]))
            sys.exit(1)
        print("ok: " + ok_message)
