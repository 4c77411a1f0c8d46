"""The bindings take keyword arguments: every function of the C++ module names its arguments
(py::arg), so the Python wrappers call it by keyword and a reordered C++ signature fails
loudly instead of passing values to the wrong parameter; the public functions accept their
documented arguments as keywords."""
import inspect

import numpy as np

import attnlab
from attnlab import _attnlab


def _bound_functions():
    """(name, docstring) of every function and method of the C++ module."""
    out = []
    for name, obj in vars(_attnlab).items():
        if name.startswith("__"):
            continue
        if inspect.isclass(obj):
            for mname, m in vars(obj).items():
                if mname == "__init__" or (callable(m) and not mname.startswith("_")):
                    out.append((f"{name}.{mname}", getattr(m, "__doc__", "") or ""))
        elif callable(obj):
            out.append((name, obj.__doc__ or ""))
    return out


def test_every_bound_function_names_its_arguments():
    funcs = _bound_functions()
    assert {"run", "reproduce", "sample", "metrics", "ModelCore.fit", "ModelCore.__init__"} <= {
        n for n, _ in funcs}
    # pybind11 writes "arg0: ..." into the signature line of an argument without py::arg.
    unnamed = [n for n, doc in funcs if "arg0" in doc]
    assert unnamed == []


def test_public_functions_take_keywords(tmp_path):
    data = attnlab.sample(task="qsa", n=8, seed=1, first=0, N=6, q=2, d_out=2)
    X, Y = data["X"], data["Y"]
    m = attnlab.model(name="linear", seed=0)
    m.fit(X=X, Y=Y)
    assert m.predict(X=X).shape == Y.shape
    assert set(m.evaluate(X=X, Y=Y)) >= {"scalars"}
    path = tmp_path / "m.safetensors"
    m.save(path=path)
    again = attnlab.load(path=path)
    assert np.array_equal(again.predict(X=X), m.predict(X=X))
    assert attnlab.metrics(pred=m.predict(X=X), Y=Y, success_threshold=0.25)
    assert attnlab.set_threads(k=1) == 1
