"""Argument normalisation shared by the attnlab package (internal)."""
import contextlib
import numbers
import os
import re
import shutil
import tempfile

import numpy as np


def norm_value(key, value):
    """A keyword value as the C++ core takes it: bool, int, float, str or list of numbers."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return norm_value(key, value.item())
        if value.ndim != 1:
            raise ValueError(f"{key}: a list parameter must be 1-dimensional, got shape {value.shape}")
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        out = []
        for x in value:
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
                raise ValueError(f"{key} must be a list of numbers, got element {x!r}")
            out.append(int(x) if isinstance(x, numbers.Integral) else float(x))
        return out
    raise ValueError(f"{key}: unsupported value {value!r} of type {type(value).__name__}; "
                     "give a bool, int, float, str or list of numbers")


def norm_params(section, params):
    """{key: normalised value} for a dict of keyword parameters of `section`."""
    return {k: norm_value(f"{section}.{k}", v) for k, v in params.items()}


def toml_text(value):
    """A Python value as the TOML text `attnlab run --set KEY=VALUE` takes."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_text(v)}" for k, v in value.items()) + " }"
    raise ValueError(f"cannot write {value!r} ({type(value).__name__}) as a TOML value")


def toml_key(key):
    """A TOML key: bare when it can be ("seeds"), else quoted ("model.m")."""
    key = str(key)
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_text(key)


def toml_document(spec):
    """A spec given as a dict ({"task": {"name": "qsa", ...}, "sweep": {"model.m": [4, 8]},
    "claim": [{...}, ...]}) as the text of a TOML file: a dict value is a [section], a list
    of dicts an array of tables ([[claim]]), anything else a top-level key."""
    if not isinstance(spec, dict):
        raise TypeError(f"a spec must be a path, TOML text or a dict, got {type(spec).__name__}")
    top, sections = [], []
    for key, value in spec.items():
        if isinstance(value, dict):
            sections.append(f"[{toml_key(key)}]")
            sections += [f"{toml_key(k)} = {toml_text(v)}" for k, v in value.items()]
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
            for table in value:
                sections.append(f"[[{toml_key(key)}]]")
                sections += [f"{toml_key(k)} = {toml_text(v)}" for k, v in table.items()]
        else:
            top.append(f"{toml_key(key)} = {toml_text(value)}")
    return "\n".join(top + sections) + "\n"


@contextlib.contextmanager
def spec_file(spec, stem="spec"):
    """The path of a spec given as a path (str or os.PathLike, used as it is), as TOML text
    (a str holding a newline) or as a dict (toml_document): the text is written to
    STEM.toml in a fresh temporary directory, removed on leaving (the spec's name, as the
    store records it, is STEM; OUT/spec.json keeps the resolved spec)."""
    if isinstance(spec, dict) or (isinstance(spec, str) and "\n" in spec):
        text = toml_document(spec) if isinstance(spec, dict) else spec
        folder = tempfile.mkdtemp(prefix="attnlab-spec-")
        try:
            path = os.path.join(folder, (stem or "spec") + ".toml")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            yield path
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    elif isinstance(spec, (str, os.PathLike)):
        yield os.fspath(spec)
    else:
        raise TypeError("spec must be a path, TOML text (a str with a newline) or a dict, got "
                        f"{type(spec).__name__}")


def schema_text(schema, prefix):
    """Lines 'prefix.KEY = DEFAULT  help [choices]' for a docstring."""
    lines = []
    for p in schema:
        d = p["default"]
        default = ("true" if d else "false") if isinstance(d, bool) else repr(d) if isinstance(d, str) else str(d)
        extra = " [" + "|".join(p["choices"]) + "]" if p["choices"] else ""
        lines.append(f"        {prefix}{p['name']} = {default}  ({p['type']}) {p['help']}{extra}")
    return "\n".join(lines)
