"""Argument normalisation shared by the attnlab package (internal)."""
import numbers

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
    raise ValueError(f"cannot write {value!r} ({type(value).__name__}) as a TOML value")


def schema_text(schema, prefix):
    """Lines 'prefix.KEY = DEFAULT  help [choices]' for a docstring."""
    lines = []
    for p in schema:
        d = p["default"]
        default = ("true" if d else "false") if isinstance(d, bool) else repr(d) if isinstance(d, str) else str(d)
        extra = " [" + "|".join(p["choices"]) + "]" if p["choices"] else ""
        lines.append(f"        {prefix}{p['name']} = {default}  ({p['type']}) {p['help']}{extra}")
    return "\n".join(lines)
