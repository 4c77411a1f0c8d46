"""The tables Python follows: scripts/plot_results.py draws every plot kind of the C++ plot-kind
table (src/experiment/plot_kinds.cpp, exposed as attnlab._attnlab.plot_kinds()): a kind added to
the table without a drawer, or a drawer for a kind the table lacks, fails here; list_probes() is
the probe table, as `attnlab list probes` prints it."""
import importlib.util
import os

from attnlab import _attnlab

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "plot_results.py")


def _drawers():
    loader = importlib.util.spec_from_file_location("plot_results", SCRIPT)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module.DRAWERS


def test_the_drawer_handles_every_plot_kind_of_the_table():
    kinds = _attnlab.plot_kinds()
    assert "line" in kinds and len(kinds) == len(set(kinds))
    drawers = _drawers()
    assert sorted(drawers) == sorted(kinds), (
        "kinds without a drawer: %s; drawers without a kind: %s"
        % (sorted(set(kinds) - set(drawers)), sorted(set(drawers) - set(kinds))))
    assert all(callable(d) for d in drawers.values())


def test_list_probes_follows_the_probe_table(run_cli):
    probes = _attnlab.list_probes()
    assert "rank_pair" in probes
    row = probes["rank_pair"]
    assert row["description"] and row["doc"].startswith("docs/")
    assert row["models"] == ["mlp"]
    listed = run_cli("list", "probes").stdout
    for name, r in probes.items():
        assert name in listed and r["description"] in listed
