"""What the measurement scripts (match_rates, neighbourly_worst_case, disj_matched_values)
share: one-line errors with exit 2, running the attnlab CLI, and comma-separated options.
"""
import subprocess
import sys


def fail(tool, msg):
    print(f"{tool}: {msg}", file=sys.stderr)
    sys.exit(2)


def run_cli(tool, cli, *args):
    """stdout of `cli args...`; on a non-zero exit, fail() with the command and its stderr."""
    try:
        r = subprocess.run([cli, *args], capture_output=True, text=True)
    except OSError as e:  # missing or not executable: one line, not a traceback
        fail(tool, f"cannot run {cli}: {e.strerror} (build it, or pass its path)")
    if r.returncode != 0:
        fail(tool, f"`{' '.join([cli, *args])}` failed (exit {r.returncode}): {r.stderr.strip()[-300:]}")
    return r.stdout


def number_list(tool, text, name, kind=float):
    """--NAME a,b,c as a list of `kind`; fail() naming the option otherwise."""
    try:
        return [kind(v) for v in text.split(",")]
    except ValueError:
        fail(tool, f"--{name} {text}: expected comma-separated numbers, e.g. --{name} 16,64")
