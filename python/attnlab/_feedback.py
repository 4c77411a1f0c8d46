"""What long work tells a Python user: warnings and progress (internal).

Library warnings (core/log.h) arrive as plain lines and become warnings.warn(...,
AttnlabWarning), so a notebook cell shows them. Progress of runs, and of a gradient fit's
steps (Model.fit, shown once the fit has taken a second), arrives as (done, total) and is drawn
with tqdm when it is installed (Debian's python3-tqdm; tqdm.auto picks the notebook widget where
there is one), else as a plain line at most every 10 seconds and at the end.
"""
import os
import sys
import time
import warnings


class AttnlabWarning(UserWarning):
    """A warning of attnlab's C++ core (a failed run, a λ below the numerical floor, ...)."""


def warn_line(line):
    """Issues a line of the core as an AttnlabWarning attributed to the user's code (the
    first frame outside this package)."""
    here = os.path.dirname(os.path.abspath(__file__))
    level, frame = 1, sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        level, frame = level + 1, frame.f_back
    warnings.warn(line, AttnlabWarning, stacklevel=level + 1)


def progress_wanted(progress):
    """progress=None: on unless ATTNLAB_NO_PROGRESS is set; else progress (a bool, checked by
    the caller)."""
    if progress is None:
        return not os.environ.get("ATTNLAB_NO_PROGRESS")
    return progress


class Progress:
    """Progress of runs (or of a fit's steps: unit="step"), fed with update(done, total);
    close() ends it. Nothing is shown before `delay` seconds, so short work stays silent."""

    def __init__(self, desc, enabled, interval=10.0, unit="run", delay=0.0):
        self.desc, self.enabled, self.interval = desc, enabled, interval
        self.unit, self.delay = unit, delay
        self._bar, self._last, self._done, self._total = None, 0.0, 0, 0
        self._start = time.monotonic()

    def update(self, done, total):
        if not self.enabled:
            return
        self._done, self._total = done, total
        if self._bar is None and time.monotonic() - self._start < self.delay:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            if self._bar is None or self._bar.total != total:
                if self._bar is not None:
                    self._bar.close()
                self._bar = tqdm(total=total, desc=self.desc, unit=self.unit)
            self._bar.update(done - self._bar.n)
            if done >= total:
                self.close()
            return
        now = time.monotonic()
        if done >= total or now - self._last >= self.interval:
            self._last = now
            print(f"{self.desc}: {done}/{total} {self.unit}s, {now - self._start:.0f} s",
                  file=sys.stderr, flush=True)

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

