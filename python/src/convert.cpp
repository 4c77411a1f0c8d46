// Array and parameter conversion at the Python boundary, and the Ctrl-C check.
#include <chrono>
#include <iterator>

#include "bindings.h"
#include "core/error.h"
#include "core/interrupt.h"

namespace attnpy {

std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t k = 0; k < a.ndim(); ++k) s += (k ? ", " : "") + std::to_string(a.shape(k));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

F64Array as_f64(const py::handle& obj, const std::string& name,
                                                 int ndim, const std::string& dims) {
  if (obj.is_none()) throw attn::UserError(name + " is None; give a numpy array of shape " + dims);
  py::array a = py::array::ensure(obj);
  if (!a) {
    PyErr_Clear();
    throw attn::UserError(name + " is not an array (got " +
                          std::string(py::str(py::type::of(obj).attr("__name__"))) +
                          "); give a numpy array of shape " + dims);
  }
  const py::dtype dt = a.dtype();
  const char kind = dt.kind();
  if (kind != 'f' || (dt.itemsize() != 8 && dt.itemsize() != 4))
    throw attn::UserError(name + " has dtype " + std::string(py::str(py::handle(dt))) +
                          "; give float64 or float32 (e.g. " + name + ".astype(numpy.float64))");
  if (a.ndim() != ndim)
    throw attn::UserError(name + " has shape " + shape_text(a) + " (" + std::to_string(a.ndim()) +
                          " dimensions); it must be " + dims);
  // A view when it already is C-contiguous float64, else one converted copy.
  return F64Array::ensure(a);
}

namespace {
template <class T>
py::array wrap(std::vector<T>&& data, const std::vector<int64_t>& shape) {
  auto* owned = new std::vector<T>(std::move(data));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  return py::array_t<T>(dims, owned->data(), owner);
}
}  // namespace

attn::RawArray raw_array_from(const std::string& name, const py::handle& value) {
  attn::RawArray r;
  r.spec.name = name;
  const py::array a = py::array::ensure(value);
  if (!a) {
    PyErr_Clear();  // ensure() left a Python error set; the UserError replaces it
    throw attn::UserError(name + " is not an array");
  }
  for (py::ssize_t d = 0; d < a.ndim(); ++d) r.spec.sample_shape.push_back(a.shape(d));
  const char kind = a.dtype().kind();
  if (kind == 'i' || kind == 'u' || kind == 'b') {
    r.spec.integer = true;
    const auto i = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    r.i64.assign(i.data(), i.data() + i.size());
  } else {
    const auto f = as_f64(a, name, static_cast<int>(a.ndim()), "numeric");
    r.f64.assign(f.data(), f.data() + f.size());
  }
  return r;
}

py::array to_array(std::vector<double>&& data, const std::vector<int64_t>& shape) {
  return wrap(std::move(data), shape);
}
py::array to_array(std::vector<int64_t>&& data, const std::vector<int64_t>& shape) {
  return wrap(std::move(data), shape);
}

void params_set(attn::Params& params, const py::dict& values) {
  for (const auto& [k, v] : values) {
    const std::string key = py::str(k);
    attn::ParamValue value;
    if (py::isinstance<py::bool_>(v)) {
      value = v.cast<bool>();
    } else if (py::isinstance<py::int_>(v)) {
      value = v.cast<int64_t>();
    } else if (py::isinstance<py::float_>(v)) {
      value = v.cast<double>();
    } else if (py::isinstance<py::str>(v)) {
      // Text is read as the command line reads it (by the key's type), with its messages.
      params.set_text(key, v.cast<std::string>());
      continue;
    } else if ((py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) && py::len(v) > 0 &&
               py::isinstance<py::str>(v[py::int_(0)])) {
      std::vector<std::string> names;  // a list of names (ParamType::NameList)
      for (const auto& x : v) {
        if (!py::isinstance<py::str>(x))
          throw attn::UserError(params.section() + "." + key +
                                ": a list of names must hold strings only");
        names.push_back(x.cast<std::string>());
      }
      value = std::move(names);
    } else if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
      std::vector<double> list;
      for (const auto& x : v) {
        if (!py::isinstance<py::int_>(x) && !py::isinstance<py::float_>(x))
          throw attn::UserError(params.section() + "." + key +
                                " must be a number or a list of numbers");
        list.push_back(x.cast<double>());
      }
      value = std::move(list);
    } else {
      throw attn::UserError(params.section() + "." + key + ": unsupported value of type " +
                            std::string(py::str(py::type::of(v).attr("__name__"))) +
                            "; give a bool, int, float, str or list of numbers");
    }
    params.set(key, value);
  }
}

py::object param_value_py(const attn::ParamValue& value) {
  if (const auto* b = std::get_if<bool>(&value)) return py::bool_(*b);
  if (const auto* i = std::get_if<int64_t>(&value)) return py::int_(*i);
  if (const auto* d = std::get_if<double>(&value)) return py::float_(*d);
  if (const auto* s = std::get_if<std::string>(&value)) return py::str(*s);
  if (const auto* names = std::get_if<std::vector<std::string>>(&value)) return py::cast(*names);
  return py::cast(std::get<std::vector<double>>(value));
}

py::dict params_dict(const attn::Params& params) {
  py::dict out;
  const auto& schema = params.schema();
  const auto& values = params.values();
  for (size_t k = 0; k < schema.size(); ++k)
    out[py::str(schema[k].name)] = param_value_py(values[k]);
  return out;
}

py::list schema_list(const std::vector<attn::ParamSpec>& schema) {
  py::list out;
  for (const auto& s : schema) {
    py::dict row;
    row["name"] = s.name;
    static const char* const kTypes[] = {"bool", "int", "real", "str", "real_list", "name_list"};
    static_assert(std::size(kTypes) == static_cast<size_t>(attn::ParamType::NameList) + 1,
                  "schema_list: a name for every ParamType");
    row["type"] = kTypes[static_cast<int>(s.type)];
    row["default"] = param_value_py(s.default_value);
    row["help"] = s.help;
    row["choices"] = s.choices;
    row["min"] = s.min;
    row["max"] = s.max;
    out.append(row);
  }
  return out;
}

// ---- Ctrl-C ---------------------------------------------------------------------------
// The check runs in the thread doing the work (the thread that called into the module,
// with the GIL released). At most every 20 ms it takes the GIL and runs the interpreter's
// pending signal handlers; a KeyboardInterrupt they raise is kept and the work unwinds.
namespace {
thread_local PyObject* t_type = nullptr;
thread_local PyObject* t_value = nullptr;
thread_local PyObject* t_traceback = nullptr;
thread_local std::chrono::steady_clock::time_point t_last{};

bool python_interrupt_check() {
  const auto now = std::chrono::steady_clock::now();
  if (now - t_last < std::chrono::milliseconds(20)) return false;
  t_last = now;
  if (!Py_IsInitialized()) return false;
  const PyGILState_STATE gil = PyGILState_Ensure();
  bool stop = false;
  if (PyErr_CheckSignals() != 0) {
    Py_XDECREF(t_type);
    Py_XDECREF(t_value);
    Py_XDECREF(t_traceback);
    PyErr_Fetch(&t_type, &t_value, &t_traceback);
    stop = true;
  }
  PyGILState_Release(gil);
  return stop;
}
}  // namespace

void interrupt_install() { attn::interrupt_set_check(&python_interrupt_check); }
void interrupt_uninstall() { attn::interrupt_set_check(nullptr); }

void interrupt_restore_error() {
  if (t_type != nullptr) {
    PyErr_Restore(t_type, t_value, t_traceback);
    t_type = t_value = t_traceback = nullptr;
  } else {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
  }
}

}  // namespace attnpy
