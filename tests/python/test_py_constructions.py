"""attnlab.construct: explicit constructions, when this attnlab has the `construction` model."""
import numpy as np
import pytest

import attnlab
from attnlab._models import _task_for

HAVE = "construction" in attnlab.list_models()
needs_construction = pytest.mark.skipif(
    not HAVE, reason="the model registry has no 'construction' model yet (src/constructions/ not built in)")


def test_task_inferred_from_the_construction_name():
    tasks = attnlab.list_tasks()
    assert _task_for("qsa_random_codes", tasks) == "qsa"
    assert _task_for("match2_trig", tasks) == "match2"
    assert _task_for("match3_third_order", tasks) == "match3"
    assert _task_for("match3_local_window", tasks) == "match3_local"
    assert _task_for("histogram", tasks) is None
    # Variants whose task is not a prefix of the name.
    assert _task_for("smallm_match3", tasks) == "match3"
    assert _task_for("local_match3", tasks) == "match3_local"
    assert _task_for("adjacent_match3", tasks) == "match3_adjacent"
    assert _task_for("pointer_match3", tasks) == "match3_pointer"


@needs_construction
def test_local_match3_takes_the_tasks_window():
    c = attnlab.construct("local_match3", N=16, M=61, w=3, m_prime=32)
    assert c.params["window"] == 3
    d = attnlab.sample("match3_local", n=10, seed=5, N=16, M=61, w=3)
    assert attnlab.metrics(c.predict(d), d)["exact_match"] == 1.0
    # A model built for another window refuses data that says w = 3.
    other = attnlab.construct("local_match3", N=16, M=61, w=3, window=2, m_prime=32)
    with pytest.raises(ValueError, match="model.window = 2 but the data's task.w = 3"):
        other.predict(d)


@needs_construction
def test_every_match3_variant_construction_is_exact_on_its_task():
    for name, task, M in [("smallm_match3", "match3", 11), ("local_match3", "match3_local", 61),
                          ("adjacent_match3", "match3_adjacent", 61),
                          ("pointer_match3", "match3_pointer", 61)]:
        c = attnlab.construct(name, N=12, M=M, m_prime=32)
        d = attnlab.sample(task, n=10, seed=4, N=12, M=M)
        assert attnlab.metrics(c.predict(d["X"]), d)["exact_match"] == 1.0, name


@pytest.mark.skipif(HAVE, reason="the construction model exists: the missing-model error cannot occur")
def test_construct_without_the_model_is_a_clear_error():
    with pytest.raises(ValueError, match="no 'construction' model"):
        attnlab.construct("qsa_random_codes", N=16, q=2)


@needs_construction
def test_construct_qsa_predicts_the_task_shape():
    names = [p for p in attnlab.list_models()["construction"]["params"] if p["name"] == "construction"]
    assert names, "the construction model has no `construction` key"
    choices = names[0]["choices"] or ["qsa_random_codes"]
    name = "qsa_random_codes" if "qsa_random_codes" in choices else choices[0]
    task = _task_for(name, attnlab.list_tasks())
    kwargs = {"N": 16, "q": 2} if task == "qsa" else {}
    c = attnlab.construct(name, **kwargs)
    assert c.fitted and c.name == "construction" and c.params["construction"] == name
    d = attnlab.sample(task, n=8, seed=0, **kwargs)
    pred = c.predict(d["X"])
    assert pred.shape == d["Y"].shape and np.all(np.isfinite(pred))


@needs_construction
def test_construct_errors():
    with pytest.raises(ValueError):
        attnlab.construct("no_such_construction_xyz", task="qsa")
    with pytest.raises(ValueError, match="unknown parameter 'zzz'"):
        attnlab.construct("qsa_random_codes", zzz=1)
    with pytest.raises(ValueError, match="cannot tell which task"):
        attnlab.construct("histogram")


@needs_construction
def test_construct_equals_cli_fit_and_predict(run_cli, tmp_path):
    sets = ["--set", "task.N=16", "--set", "task.q=2"]
    run_cli("data", "qsa", "--n", 4, "--seed", 0, *sets, "-q", "-o", tmp_path / "train.npz")
    run_cli("data", "qsa", "--n", 20, "--seed", 0, "--first", 1000000, *sets, "-q", "-o", tmp_path / "test.npz")
    run_cli("fit", "construction", "--in", tmp_path / "train.npz", "--set", "model.construction=qsa_random_codes",
            "--set", "model.m_prime=32", "--seed", 3, "-q", "--save", tmp_path / "c.safetensors")
    run_cli("predict", "--model", tmp_path / "c.safetensors", "--in", tmp_path / "test.npz", "-q", "-o", tmp_path / "p.npz")
    with np.load(tmp_path / "p.npz") as z:
        want = z["Y_pred"]
    c = attnlab.construct("qsa_random_codes", seed=3, N=16, q=2, m_prime=32)
    test = attnlab.sample("qsa", n=20, seed=0, first=1000000, N=16, q=2)
    assert np.array_equal(c.predict(test["X"]), want)
    c.save(tmp_path / "py.safetensors")
    assert np.array_equal(attnlab.load(tmp_path / "py.safetensors").predict(test["X"]), want)


@needs_construction
def test_construct_match2_is_exact():
    c = attnlab.construct("match2_trig", N=16)
    d = attnlab.sample("match2", n=50, seed=0, first=1000000, N=16)
    m = attnlab.metrics(c.predict(d), d)  # the dict passes the modulus constant
    assert m["exact_match"] == 1.0
    scalars = c.evaluate(d)["scalars"]
    assert scalars["m"] == 3
    heads = c.attention(d["X"][:2])
    assert heads and all(a.shape[0] == 2 for a in heads.values())


def test_metrics_report_disj_accuracy_for_disj_instances_like_the_cli():
    d = attnlab.sample("qsa", n=40, seed=2, N=9, q=4, instances="disj")
    # A prediction that is exactly the target decides every instance.
    m = attnlab.metrics(d["Y"].copy(), d)
    assert m["disj_accuracy"] == 1.0
    # Predicting -e1 at the query says "disjoint" everywhere: right on the disjoint ones only.
    pred = d["Y"].copy()
    pred[:, 8, :] = 0.0
    pred[:, 8, 0] = -1.0
    expected = float(np.mean(d["disjoint"] == 1))
    assert abs(attnlab.metrics(pred, d)["disj_accuracy"] - expected) < 1e-12
    assert "disj_accuracy" not in attnlab.metrics(pred, d["Y"])
