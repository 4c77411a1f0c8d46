"""The bad-input corpus of the Python calls (the CLI's is tests/test_bad_inputs.cpp).

One row per malformed call: the exception type, a text the one-line message must contain
(the offending argument, array, key or path), and nothing written where an output was asked.
Arrays: a NaN/inf in any array of any entry point is a ValueError naming the call and the
array; a result that overflows (finite input near 1e200) a ValueError naming the cause.
Flags must be bool and counts integers: anything else is a TypeError naming the parameter
(python/attnlab/_checks.py).
"""
import os

import numpy as np
import pytest

import attnlab

X = np.full((8, 2, 3), 0.5)
Y = np.ones((8, 1, 1))


def with_value(a, value, index=(0, 1, 2)):
    a = a.copy()
    a[index] = value
    return a


def fitted(name="linear"):
    return attnlab.model(name).fit(X, Y)


RF = attnlab.sample("rf_target", 8, N=4, d=3)      # X (8, 5, 3), constant beta
QSA = attnlab.sample("qsa", 8, N=8, q=2, d_out=2)  # X (8, 8, ...), constant success_threshold


def attention_model():
    return attnlab.model("attention", m=4).fit(QSA["X"], QSA["Y"], steps=2)


def with_entry(d, key, value, index=(0, 0, 0)):
    """A copy of sample dict d with d[key][index] = value."""
    d = dict(d)
    d[key] = with_value(np.asarray(d[key], dtype=np.float64), value, index)
    return d


DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "experiments", "demo", "baselines.toml")
NO_OUT = "/dev/null/attnlab-bad-input"  # cannot be created; never reached: the check comes first


def flag_rows():
    """One row per bool parameter of every public function: a str, an int or None."""
    calls = {
        "run": lambda **kw: attnlab.run(DEMO, NO_OUT, **kw),
        "reproduce": lambda **kw: attnlab.reproduce("demo", out=NO_OUT, **kw),
        "results": lambda **kw: attnlab.results(NO_OUT, **kw),
    }
    params = [("run", "quick", "yes"), ("run", "force_new", "no"), ("run", "retry_failed", 1),
              ("run", "groups", "no"), ("run", "progress", "off"),
              ("reproduce", "quick", "yes"), ("reproduce", "force_new", "no"),
              ("reproduce", "report_only", 0), ("reproduce", "verbose", None),
              ("reproduce", "run_groups", "no"), ("reproduce", "progress", 1.0),
              ("results", "as_frame", "yes")]
    return [(f"{fn}_{name}_not_bool", (lambda fn=fn, name=name, v=v: calls[fn](**{name: v})),
             TypeError, f"{fn}: {name} must be True") for fn, name, v in params]


def int_rows():
    """One row per integer parameter of every public function: a float, a str or a bool."""
    params = [
        ("run_jobs", lambda: attnlab.run(DEMO, NO_OUT, jobs=2.9), "run: jobs"),
        ("run_threads", lambda: attnlab.run(DEMO, NO_OUT, threads="2"), "run: threads"),
        ("reproduce_jobs", lambda: attnlab.reproduce("demo", out=NO_OUT, jobs=1.5), "reproduce: jobs"),
        ("reproduce_threads", lambda: attnlab.reproduce("demo", out=NO_OUT, threads=True),
         "reproduce: threads"),
        ("sample_n_float", lambda: attnlab.sample("qsa", n=10.5), "sample: n"),
        ("sample_n_bool", lambda: attnlab.sample("qsa", n=True), "sample: n"),
        ("sample_seed", lambda: attnlab.sample("qsa", 4, seed=1.0), "sample: seed"),
        ("sample_first", lambda: attnlab.sample("qsa", 4, first="0"), "sample: first"),
        ("model_seed", lambda: attnlab.model("linear", seed=0.5), "model: seed"),
        ("fit_task_eval_first", lambda: attnlab.model("linear").fit_task("qsa", eval_first=1e9),
         "fit_task: eval_first"),
        ("construct_seed", lambda: attnlab.construct("qsa_random_codes", seed=1.5), "construct: seed"),
        ("construct_shape", lambda: attnlab.construct("qsa_random_codes", shape=(4, 2.5, 4, 2)),
         "construct: shape[1]"),
        ("set_threads_k", lambda: attnlab.set_threads(1.5), "set_threads: k"),
        ("qk_stats_heads", lambda: attnlab.qk_stats(NO_OUT, heads=2.0), "qk_stats: heads"),
        ("qk_stats_head_size", lambda: attnlab.qk_stats(NO_OUT, head_size="64"), "qk_stats: head_size"),
        ("qk_stats_heatmap_block", lambda: attnlab.qk_stats(NO_OUT, heatmap_block=6.4),
         "qk_stats: heatmap_block"),
        ("qk_stats_seed", lambda: attnlab.qk_stats(NO_OUT, seed=None), "qk_stats: seed"),
        ("qk_stats_threads", lambda: attnlab.qk_stats(NO_OUT, threads=False), "qk_stats: threads"),
    ]
    return [(f"{name}_not_int", call, TypeError, f"{text} must be an integer")
            for name, call, text in params]


def overflow_rows():
    """Finite inputs whose result overflows double precision: refused, the cause named."""
    big = "overflows double precision; X's largest |entry| is"
    return [
        ("features_overflow_rfa", lambda: attnlab.model("rfa", heads=4).features(RF["X"] * 1e200),
         ValueError, "features(X): the result Phi holds NaN"),
        ("features_overflow_exp", lambda: attnlab.model("brfa", heads=4, activation="exp")
         .features(RF["X"] * 1e3), ValueError, big),
        ("predict_overflow", lambda: attnlab.model("rfa", heads=4).fit(RF["X"], RF["Y"])
         .predict(RF["X"] * 1e200), ValueError, "predict(X): the result pred holds NaN"),
        ("attention_overflow", lambda: attention_model().attention(QSA["X"] * 1e200), ValueError,
         "attention(X): the result layer0 holds NaN"),
        ("metrics_overflow", lambda: attnlab.metrics(QSA["Y"] * 1e200, QSA["Y"]), ValueError,
         "metrics: mse is inf although pred and Y are finite"),
    ]


def nonfinite_rows():
    """A NaN or inf in each array of each entry point that takes arrays."""
    tail = "; every value must be finite"
    return [
        ("features_nan_x", lambda: attnlab.model("rfa", heads=4).features(with_value(RF["X"], np.nan)),
         ValueError, "features(X): X holds NaN at sample 0 (row 1, column 2)" + tail),
        ("features_inf_x", lambda: attnlab.model("rfmlp").features(with_value(RF["X"], np.inf, (5, 0, 0))),
         ValueError, "features(X): X holds inf at sample 5 (row 0, column 0)"),
        ("features_neg_inf_x", lambda: attnlab.model("brfa", heads=2).features(with_value(RF["X"], -np.inf)),
         ValueError, "features(X): X holds -inf"),
        ("features_nan_list", lambda: attnlab.model("rfa", heads=2).features(
            with_value(RF["X"], np.nan).tolist()), ValueError, "features(X): X holds NaN"),
        ("features_nan_float32", lambda: attnlab.model("rfa", heads=2).features(
            with_value(RF["X"], np.nan).astype(np.float32)), ValueError, "features(X): X holds NaN"),
        ("attention_nan_x", lambda: attention_model().attention(with_value(QSA["X"], np.nan)),
         ValueError, "attention(X): X holds NaN"),
        ("attention_inf_x", lambda: attention_model().attention(with_value(QSA["X"], np.inf, (7, 0, 0))),
         ValueError, "attention(X): X holds inf at sample 7"),
        ("attention_dict_nan", lambda: attention_model().attention(with_entry(QSA, "X", np.nan)),
         ValueError, "attention(X): X holds NaN"),
        ("attention_dict_constant_nan", lambda: attention_model().attention(
            with_entry(QSA, "success_threshold", np.nan, ())), ValueError,
         "attention(X): constant 'success_threshold' holds NaN"),
        ("predict_dict_constant_inf", lambda: attnlab.model("rfa", heads=2).fit(RF["X"], RF["Y"])
         .predict(with_entry(RF, "beta", np.inf, (0,))), ValueError,
         "predict(X): constant 'beta' holds inf at entry 0"),
        ("predict_dict_nan_x", lambda: attnlab.model("rfa", heads=2).fit(RF["X"], RF["Y"])
         .predict(with_entry(RF, "X", np.nan)), ValueError, "predict(X): X holds NaN"),
        ("evaluate_nan_y", lambda: fitted().evaluate(X, with_value(Y, np.nan, (2, 0, 0))), ValueError,
         "evaluate(X, Y): Y holds NaN at sample 2"),
        ("evaluate_inf_x", lambda: fitted().evaluate(with_value(X, np.inf), Y), ValueError,
         "evaluate(X, Y): X holds inf"),
        ("evaluate_dict_nan_y", lambda: attention_model().evaluate(with_entry(QSA, "Y", np.nan)),
         ValueError, "evaluate(X, Y): Y holds NaN"),
        ("fit_list_nan", lambda: attnlab.model("linear").fit(with_value(X, np.nan).tolist(), Y),
         ValueError, "fit(X, Y): X holds NaN"),
        # The user's NaN is named, not blamed on "the fit" (the C++ metrics' wording).
        ("metrics_nan_pred", lambda: attnlab.metrics(with_value(QSA["Y"], np.nan, (0, 0, 0)), QSA),
         ValueError, "metrics: pred holds NaN at sample 0 (row 0, column 0)" + tail),
        ("metrics_inf_pred", lambda: attnlab.metrics(with_value(Y, np.inf, (1, 0, 0)), Y), ValueError,
         "metrics: pred holds inf at sample 1"),
        ("metrics_nan_y", lambda: attnlab.metrics(Y, with_value(Y, np.nan, (3, 0, 0))), ValueError,
         "metrics: Y holds NaN at sample 3"),
        ("metrics_dict_nan_y", lambda: attnlab.metrics(QSA["Y"], with_entry(QSA, "Y", -np.inf)),
         ValueError, "metrics: Y holds -inf"),
        ("metrics_threshold_nan", lambda: attnlab.metrics(Y, Y, success_threshold=np.nan), ValueError,
         "metrics: success_threshold is nan; it must be finite"),
        ("metrics_threshold_text", lambda: attnlab.metrics(Y, Y, success_threshold="0.25"), TypeError,
         "metrics: success_threshold must be a number"),
    ]


# (id, call, exception type, expected text in the message)
CORPUS = [
    ("fit_nan_x", lambda: attnlab.model("linear").fit(with_value(X, np.nan), Y), ValueError, "X holds NaN"),
    ("fit_inf_x", lambda: attnlab.model("rfa").fit(with_value(X, np.inf), Y), ValueError, "X holds inf"),
    ("fit_nan_y", lambda: attnlab.model("mean").fit(X, with_value(Y, np.nan, (3, 0, 0))), ValueError,
     "Y holds NaN at sample 3"),
    ("fit_neg_inf_y", lambda: attnlab.model("linear").fit(X, with_value(Y, -np.inf, (0, 0, 0))), ValueError,
     "Y holds -inf"),
    ("predict_inf", lambda: fitted().predict(with_value(X, np.inf)), ValueError, "predict(X): X holds inf"),
    ("predict_nan", lambda: fitted("mean").predict(with_value(X, np.nan)), ValueError, "predict(X): X holds NaN"),
    ("evaluate_nan", lambda: fitted().evaluate(with_value(X, np.nan), Y), ValueError, "X holds NaN"),
    ("fit_x_none", lambda: attnlab.model("linear").fit(None, Y), ValueError, "X"),
    ("fit_x_2d", lambda: attnlab.model("linear").fit(np.zeros((8, 3)), Y), ValueError, "X"),
    ("fit_n_mismatch", lambda: attnlab.model("linear").fit(X, Y[:4]), ValueError, "samples"),
    ("fit_text_x", lambda: attnlab.model("linear").fit(np.array([["a"]]), Y), ValueError, "X"),
    ("predict_wrong_shape", lambda: fitted().predict(np.zeros((2, 5, 3))), ValueError, "X has shape"),
    ("predict_unfitted", lambda: attnlab.model("linear").predict(X), ValueError, "not fitted"),
    ("unknown_model", lambda: attnlab.model("nosuchmodel"), ValueError, "nosuchmodel"),
    ("unknown_param", lambda: attnlab.model("linear", nokey=1), ValueError, "nokey"),
    ("negative_lambda", lambda: attnlab.model("linear", **{"lambda": -1.0}).fit(X, Y), ValueError, "lambda"),
    ("train_n_too_large", lambda: attnlab.model("linear").fit(X, Y, n=100), ValueError, "train.n"),
    ("load_missing", lambda: attnlab.load("/nonexistent/m.safetensors"), OSError, "/nonexistent/m.safetensors"),
    ("sample_unknown_task", lambda: attnlab.sample("nosuchtask", 4), ValueError, "nosuchtask"),
    ("sample_bad_param", lambda: attnlab.sample("qsa", 4, q=100), ValueError, "q"),
] + nonfinite_rows() + overflow_rows() + flag_rows() + int_rows()


@pytest.mark.parametrize("name,call,exc,expected", CORPUS, ids=[c[0] for c in CORPUS])
def test_bad_python_call(name, call, exc, expected):
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    assert expected in message, message
    assert "\n" not in message.strip(), message


def test_corpus_size(capsys):
    with capsys.disabled():
        print(f"\n[ corpus ] {len(CORPUS)} malformed Python calls")
    assert len(CORPUS) >= 76


def test_non_bool_force_new_moves_nothing(tmp_path):
    """run(force_new="no") was True (a non-empty str) and moved earlier results aside; now it is
    refused before anything is touched."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.sqlite").write_text("earlier results")
    with pytest.raises(TypeError, match="run: force_new must be True or False, got 'no'"):
        attnlab.run(DEMO, out, force_new="no")
    assert os.listdir(tmp_path) == ["out"] and os.listdir(out) == ["results.sqlite"]


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_bool_flags_accept_bools(value):
    from attnlab._checks import flag
    assert flag("f", "x", value) is bool(value)


@pytest.mark.parametrize("value", [3, np.int64(3), np.uint8(3)])
def test_integers_accept_numpy_integers(value):
    from attnlab._checks import integer
    assert integer("f", "x", value) == 3 and type(integer("f", "x", value)) is int


def test_save_nan_fit_writes_nothing(tmp_path):
    """A refused fit leaves the model unfitted: save() refuses and writes no file."""
    m = attnlab.model("linear")
    with pytest.raises(ValueError, match="X holds NaN"):
        m.fit(with_value(X, np.nan), Y)
    with pytest.raises(ValueError, match="not fitted"):
        m.save(str(tmp_path / "m.safetensors"))
    assert os.listdir(tmp_path) == []
