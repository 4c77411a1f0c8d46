"""The bad-input corpus of the Python calls (the CLI's is tests/test_bad_inputs.cpp).

One row per malformed call: the exception type, a text the one-line message must contain
(the offending argument, array, key or path), and nothing written where an output was asked.
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
]


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
    assert len(CORPUS) >= 20


def test_save_nan_fit_writes_nothing(tmp_path):
    """A refused fit leaves the model unfitted: save() refuses and writes no file."""
    m = attnlab.model("linear")
    with pytest.raises(ValueError, match="X holds NaN"):
        m.fit(with_value(X, np.nan), Y)
    with pytest.raises(ValueError, match="not fitted"):
        m.save(str(tmp_path / "m.safetensors"))
    assert os.listdir(tmp_path) == []
