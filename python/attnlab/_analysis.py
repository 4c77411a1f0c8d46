"""attnlab.qk_stats: the query-key analysis of a model file (`attnlab qk-stats`);
attnlab.list_probes: the probes a spec may name in [eval] probes (`attnlab list probes`)."""
import json
import os

from . import _attnlab
from ._checks import integer


def qk_stats(file, layout="auto", heads=0, head_size=0, layers="", query_pattern="",
             key_pattern="", out=None, heatmap_layers="", heatmap_heads="0", heatmap_block=64,
             seed=0, threads=0):
    """How close a model's query-key products W_qᵀW_k are to c·I, per layer and head, next to
    a norm-matched Gaussian null model, like `attnlab qk-stats FILE` (docs/qk-analysis.md).

    Args are the command line's options (same names and defaults): layout ("auto", "bert",
    "gpt2", "custom"), heads / head_size (0: from the file's metadata), layers ("0,3,8-11";
    "" all), query_pattern / key_pattern (custom layout, "{l}" for the layer), out (a
    directory for qk_stats.csv, qk_stats.json and heatmaps/, or None), heatmap_layers,
    heatmap_heads, heatmap_block, seed (of the null model), threads.

    Returns:
        dict: qk_stats.json's content ("layers" and "heads" lists of statistics, "D",
        "num_heads", ...; NaN/inf as None).
    """
    o = _attnlab.QkStatsOptions()
    o.file = os.fspath(file)
    o.layout, o.query_pattern, o.key_pattern = layout, query_pattern, key_pattern
    o.heads, o.head_size = integer("qk_stats", "heads", heads), integer("qk_stats", "head_size", head_size)
    o.layers, o.heatmap_layers, o.heatmap_heads = str(layers), str(heatmap_layers), str(heatmap_heads)
    o.heatmap_block = integer("qk_stats", "heatmap_block", heatmap_block)
    o.out = "" if out is None else os.fspath(out)
    o.seed, o.threads = integer("qk_stats", "seed", seed), integer("qk_stats", "threads", threads)
    return json.loads(_attnlab.qk_stats(options=o))


def list_probes():
    """The probes a spec may name in ``[eval] probes = [...]`` (`attnlab list probes`).

    Returns:
        dict: name -> {"description", "models", "tasks", "eval_instances" (what it applies
        to; empty: any), "scalars" (what it logs), "doc" (where it is explained)}.
    """
    return _attnlab.list_probes()
