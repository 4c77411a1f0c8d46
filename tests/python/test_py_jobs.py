"""jobs=: run() and reproduce() start as many runs at once as `attnlab run` and `attnlab
reproduce` do without --jobs (the CPUs this process may use, core/cpus.h), unless told."""
import os

import pytest

import attnlab
from attnlab import _attnlab
from conftest import spec_path

DEMO = spec_path("experiments", "demo", "baselines.toml")


class Stop(Exception):
    pass


def jobs_passed(monkeypatch, call, **kwargs):
    """The jobs value `call` hands to the core (the core's function replaced by a spy)."""
    seen = {}

    def spy(**args):
        seen.update(args)
        raise Stop()

    monkeypatch.setattr(_attnlab, call.__name__, spy)
    with pytest.raises(Stop):
        call(**kwargs)
    return seen["jobs"]


def test_jobs_default_is_the_command_lines(monkeypatch, tmp_path):
    monkeypatch.delenv("SLURM_CPUS_PER_TASK", raising=False)
    assert attnlab.jobs_default() == len(os.sched_getaffinity(0))
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "1")
    assert attnlab.jobs_default() == 1
    # The default of both calls is jobs_default() (here 7, whatever the machine has); a given
    # jobs= is passed as it is.
    monkeypatch.setattr(_attnlab, "jobs_default", lambda: 7)
    assert jobs_passed(monkeypatch, attnlab.run, spec=DEMO, out=tmp_path / "o") == 7
    assert jobs_passed(monkeypatch, attnlab.reproduce, name="demo", out=tmp_path / "r") == 7
    assert jobs_passed(monkeypatch, attnlab.run, spec=DEMO, out=tmp_path / "o", jobs=2) == 2
    assert jobs_passed(monkeypatch, attnlab.reproduce, name="demo", out=tmp_path / "r",
                       jobs=1) == 1
    with pytest.raises(TypeError, match="run: jobs must be an integer"):
        attnlab.run(DEMO, out=tmp_path / "o", jobs=2.5)
