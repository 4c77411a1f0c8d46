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


SMALL = {
    "experiment": {"name": "small", "seeds": 2},
    "task": {"name": "rf_target",
             "rf_target": {"target": "keys_power", "p": 1, "N": 4, "d": 4}},
    "model": {"name": "linear"},
    "train": {"n": 200},
    "eval": {"n": 200},
    "sweep": {"model.name": ["mean", "linear"]},
    "claim": [{"id": "linear_beats_mean", "text": "ridge beats the mean", "type": "less_than",
               "metric": "test_nmse", "a": {"model.name": "linear"},
               "b": {"model.name": "mean"}, "factor": 0.5}],
}


def test_check_takes_a_spec_as_a_path_toml_text_or_a_dict(tmp_path):
    # The same spec three ways: run() stores it from a dict, check() reads it back from the
    # dict, from its TOML text and from a file holding that text; every verdict is the same.
    from attnlab._util import toml_document
    out = tmp_path / "small"
    attnlab.run(SMALL, out=out, progress=False)
    text = toml_document(SMALL)
    path = tmp_path / "small.toml"
    path.write_text(text)
    by_dict = attnlab.check(SMALL, out=out, verbose=False)
    by_text = attnlab.check(text, out=out, verbose=False)
    by_path = attnlab.check(path, out=out, verbose=False)
    assert [c["id"] for c in by_dict.claims] == ["linear_beats_mean"]
    assert verdicts(by_dict) == verdicts(by_text) == verdicts(by_path)
    assert by_dict["exit_code"] == by_text["exit_code"] == by_path["exit_code"] == 0
    with pytest.raises(TypeError, match="spec must be a path, TOML text"):
        attnlab.check(42, out=out)


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
