"""examples/rfa_vs_rfmlp.py runs, draws its figure and shows what it should (RFA < RFMLP)."""
import os
import runpy

import pytest

from conftest import ROOT

pytest.importorskip("matplotlib")


def test_example_rfa_vs_rfmlp(tmp_path):
    example = runpy.run_path(os.path.join(ROOT, "examples", "rfa_vs_rfmlp.py"), run_name="example")
    out = tmp_path / "fig.png"
    curves = example["main"](str(out))
    assert out.stat().st_size > 10_000
    rfa, rfmlp = curves["rfa"].mean(axis=0), curves["rfmlp"].mean(axis=0)
    assert rfa[-1] < 0.5 * rfmlp[-1] and rfa[-1] < rfa[0]
