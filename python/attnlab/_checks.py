"""Argument checks at the Python boundary, shared by every public function (internal).

    flag(where, name, value, none_ok=False)   True/False (bool or numpy.bool_), else TypeError
    integer(where, name, value)               int or numpy integer (not bool) -> int, else TypeError
    real(where, name, value)                  finite int/float (not bool) -> float
    finite(where, name, array)                ValueError at the first NaN/inf entry of a float array
    finite_result(where, name, array, cause)  the same for a result: the input overflowed

`where` is the call as the user wrote it ("run", "features(X)"); every message starts with
it and names the argument. Arrays that are not numeric are left to the C++ boundary, whose
messages name their dtype and shape.
"""
import numbers

import numpy as np

# Entries checked at a time: the check's temporary stays small for large arrays.
_CHUNK = 1 << 22


def _what(value):
    return f"{value!r} (a {type(value).__name__})"


def flag(where, name, value, none_ok=False):
    """value as a bool: True or False only ("no", 1 or None are mistakes, not False)."""
    if none_ok and value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    allowed = "True, False or None" if none_ok else "True or False"
    raise TypeError(f"{where}: {name} must be {allowed}, got {_what(value)}")


def integer(where, name, value):
    """value as an int: a Python or numpy integer, not a bool, a float or a string."""
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    raise TypeError(f"{where}: {name} must be an integer, got {_what(value)}")


def real(where, name, value):
    """value as a finite float: a Python or numpy number, not a bool."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{where}: {name} must be a number, got {_what(value)}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{where}: {name} is {value}; it must be finite")
    return value


def _first_bad(a):
    """Flat index of the first non-finite entry of the float array a, or None."""
    flat = a.reshape(-1)
    for lo in range(0, flat.size, _CHUNK):
        bad = np.flatnonzero(~np.isfinite(flat[lo:lo + _CHUNK]))
        if bad.size:
            return lo + int(bad[0])
    return None


def _place(a, e):
    """Where flat entry e of a is, in words: the sample (axis 0), then row and column."""
    index = [int(i) for i in np.unravel_index(e, a.shape)]
    if a.ndim <= 1:
        return f" at entry {index[0]}" if index else ""
    rest = {2: "column {}", 3: "row {}, column {}"}.get(a.ndim, "index {}")
    return f" at sample {index[0]} (" + rest.format(*(index[1:] if a.ndim <= 3 else [tuple(index[1:])])) + ")"


def _value_text(v):
    return "NaN" if np.isnan(v) else "inf" if v > 0 else "-inf"


def _scan(array):
    """(array, flat index of its first NaN/inf) for a float numpy array, else (None, None)."""
    if isinstance(array, np.ndarray):
        a = array
    elif isinstance(array, (list, tuple, numbers.Real)) and not isinstance(array, bool):
        try:
            a = np.asarray(array)
        except (ValueError, TypeError):
            return None, None
    else:
        return None, None
    if a.dtype.kind not in "fc":
        return None, None
    return a, _first_bad(a)


def finite(where, name, array):
    """Raises ValueError naming `name` at its first NaN or inf entry; returns array."""
    a, e = _scan(array)
    if e is not None:
        v = a.reshape(-1)[e]
        raise ValueError(f"{where}: {name} holds {_value_text(v)}{_place(a, e)}; every value must "
                         "be finite: drop or replace that sample")
    return array


def finite_result(where, name, array, cause):
    """Raises ValueError when a result computed from finite inputs holds NaN or inf: `cause`
    says which input overflowed and what to do (e.g. "X's largest |entry| is 1e+200: ...")."""
    a, e = _scan(array)
    if e is not None:
        v = a.reshape(-1)[e]
        raise ValueError(f"{where}: the result {name} holds {_value_text(v)}{_place(a, e)} although "
                         f"every input is finite: it overflows double precision; {cause}")
    return array


def largest(array):
    """The largest |entry| of a float array, as text for messages (e.g. '1e+200')."""
    a = np.asarray(array)
    return f"{float(np.max(np.abs(a))):.3g}" if a.size and a.dtype.kind in "fc" else "0"
