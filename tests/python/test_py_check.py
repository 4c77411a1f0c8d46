"""attnlab.check: a spec's claims from its results directory, as reproduce() gives them."""
import shutil

import pytest

import attnlab
from conftest import spec_path

DEMO = spec_path("experiments", "demo", "baselines.toml")


def verdicts(rep):
    return [(c["id"], c["verdict"], c["detail"]) for c in rep.claims]


def test_check_of_a_spec_outside_experiments_gives_reproduces_verdicts(tmp_path):
    rep = attnlab.reproduce("demo", quick=True, out=tmp_path / "rep", verbose=False, progress=False)
    mine = tmp_path / "mine" / "my_baselines.toml"
    mine.parent.mkdir()
    shutil.copy(DEMO, mine)
    res = attnlab.check(mine, out=tmp_path / "rep" / "baselines", quick=True, verbose=False)
    assert verdicts(res) == verdicts(rep) and len(verdicts(res)) > 0
    assert res["exit_code"] == rep["exit_code"]
    assert (tmp_path / "rep" / "baselines" / "report.html").exists()


def test_check_errors(tmp_path):
    with pytest.raises(ValueError, match="is not a .toml spec file"):
        attnlab.check(tmp_path / "spec.txt", out=tmp_path)
    with pytest.raises(OSError, match="no results.sqlite here"):
        attnlab.check(DEMO, out=tmp_path / "empty")
    attnlab.run(DEMO, out=tmp_path / "o", quick=True, progress=False)
    with pytest.raises(ValueError, match="eval.n: stored 2000, now 100"):
        mine = tmp_path / "mine.toml"
        mine.write_text(open(DEMO).read().replace("n = 2000", "n = 100"))
        attnlab.check(mine, out=tmp_path / "o", quick=True, verbose=False)
