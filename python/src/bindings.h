// The pybind11 module attnlab._attnlab: shared helpers of its translation units.
//
// Boundary rules (docs/python.md): arrays coming in are checked (dtype float64 or float32,
// number of dimensions, sizes) and converted to C-contiguous float64 once; arrays going
// out wrap the C++ std::vector that holds them (a capsule owns it), so nothing is copied
// on the way out. The GIL is released around every long computation, and long loops poll
// for Ctrl-C through core/interrupt.h. Errors: attn::IoError -> OSError, attn::UserError
// -> ValueError, attn::Interrupted -> the pending KeyboardInterrupt (module.cpp).
// No Eigen, CLI11 or nlohmann-json headers here: they would slow every unit down.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/params.h"
#include "tasks/batch.h"

namespace py = pybind11;

namespace attnpy {

using F64Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// `obj` as a C-contiguous float64 array with `ndim` dimensions: the same array when it
// already is one (no copy), else a converted copy. ValueError naming `name` and `dims`
// (e.g. "(n, T, d_in)") for another dtype than float64/float32 or another ndim.
F64Array as_f64(const py::handle& obj, const std::string& name,
                                                 int ndim, const std::string& dims);

// Wraps a vector as a numpy array without copying: the array owns the vector.
py::array to_array(std::vector<double>&& data, const std::vector<int64_t>& shape);
py::array to_array(std::vector<int64_t>&& data, const std::vector<int64_t>& shape);

// "(2, 3, 4)"
std::string shape_text(const py::array& a);

// A dataset array named `name` from any numpy-convertible value: int64 for integer or bool
// dtypes, else float64 (as_f64's rules); sample_shape is the array's whole shape. ValueError
// if it is not an array.
attn::RawArray raw_array_from(const std::string& name, const py::handle& value);

// Sets each key of `values` (Python bool, int, float, str or list of numbers, already
// normalised by the Python layer) on `params`; the Params setters validate and throw
// attn::UserError naming "<section>.<key>".
void params_set(attn::Params& params, const py::dict& values);
// The resolved values as a dict (schema order).
py::dict params_dict(const attn::Params& params);
// A schema as a list of dicts: name, type, default, help, choices, min, max.
py::list schema_list(const std::vector<attn::ParamSpec>& schema);
py::object param_value_py(const attn::ParamValue& value);

// Installs the Ctrl-C check of core/interrupt.h (module init), and removes it (in forked
// children, which must never touch the interpreter).
void interrupt_install();
void interrupt_uninstall();
// Moves the KeyboardInterrupt (or other exception) the check caught back into the
// interpreter; sets KeyboardInterrupt if there was none. Call with the GIL held.
void interrupt_restore_error();

void register_tasks(py::module_& m);
void register_models(py::module_& m);
void register_run(py::module_& m);
void register_analysis(py::module_& m);

}  // namespace attnpy
