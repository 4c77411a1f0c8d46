// Batch <-> .npz.
#include "io/dataset_file.h"

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/choice.h"
#include "core/error.h"
#include "core/params.h"
#include "core/suggest.h"
#include "core/version.h"
#include "io/npy.h"

namespace attn {
namespace {

std::vector<int64_t> full_shape(int64_t n, const std::vector<int64_t>& tail) {
  std::vector<int64_t> shape{n};
  shape.insert(shape.end(), tail.begin(), tail.end());
  return shape;
}

}  // namespace

uint64_t dataset_file_bytes(const TaskShape& shape, int64_t n) {
  uint64_t bytes = 0;
  if (!batch_bytes(shape, n, &bytes)) return UINT64_MAX;
  for (const auto& c : shape.constants) bytes += 8 * static_cast<uint64_t>(c.sample_size());
  return bytes + 64 * 1024;  // headers, zip records and meta
}

std::string dataset_meta_json(const Batch& b, const DatasetMeta& meta) {
  std::string constants;
  for (const auto& c : b.constants)
    constants += (constants.empty() ? "" : ", ") + json_quote(c.spec.name);
  std::string target;
  if (b.shape.target) {
    target = ", \"target\": " + json_quote(choice_name(*b.shape.target, kTargetKinds));
    if (*b.shape.target == TargetKind::categorical)
      target += ", \"classes\": " + std::to_string(b.shape.d_out);
  }
  return "{\"task\": " + json_quote(meta.task) + ", \"seed\": " + std::to_string(meta.seed) +
         ", \"first\": " + std::to_string(meta.first) + ", \"n\": " + std::to_string(b.n) +
         ", \"attnlab\": " + json_quote(kVersion) + target + ", \"constants\": [" + constants +
         "], \"params\": " + (meta.params_json.empty() ? "{}" : meta.params_json) + "}";
}

void dataset_write(const std::string& path, const Batch& b, const DatasetMeta& dataset_meta) {
  const std::string meta_json = dataset_meta_json(b, dataset_meta);
  const TaskShape& s = b.shape;
  std::vector<NpyView> arrays;
  arrays.push_back({"X", DType::F64, {b.n, s.T, s.d_in}, b.X.data()});
  arrays.push_back({"Y", DType::F64, {b.n, s.T_out, s.d_out}, b.Y.data()});
  for (const auto& r : b.raw) {
    if (r.spec.integer)
      arrays.push_back(
          {r.spec.name, DType::I64, full_shape(b.n, r.spec.sample_shape), r.i64.data()});
    else
      arrays.push_back(
          {r.spec.name, DType::F64, full_shape(b.n, r.spec.sample_shape), r.f64.data()});
  }
  for (const auto& c : b.constants) {
    if (c.spec.integer)
      arrays.push_back({c.spec.name, DType::I64, c.spec.sample_shape, c.i64.data()});
    else
      arrays.push_back({c.spec.name, DType::F64, c.spec.sample_shape, c.f64.data()});
  }
  const std::u32string meta(meta_json.begin(), meta_json.end());
  arrays.push_back(npy_text("meta", meta));
  npz_write(path, arrays);
}

namespace {

// The target kind `meta` records ("target", and "classes" for categorical), checked against
// Y's d_out; unset when it records none (a file of the previous release, or from numpy).
std::optional<TargetKind> dataset_meta_target(const std::string& path, const nlohmann::json& meta,
                                              int64_t d_out) {
  if (!meta.contains("target")) return std::nullopt;
  const nlohmann::json& t = meta["target"];
  const TargetKind* kind =
      t.is_string() ? choice_find(t.get<std::string>(), kTargetKinds) : nullptr;
  if (kind == nullptr)
    throw IoError(path + ": meta's \"target\" is " + t.dump() + ", not one of " +
                  join_names(choice_names(kTargetKinds)) +
                  "; fix it or remove it (then the kind is inferred from Y)");
  if (*kind != TargetKind::categorical) return *kind;
  const bool classes_ok = meta.contains("classes") && meta["classes"].is_number_integer() &&
                          meta["classes"].get<int64_t>() == d_out && d_out >= 2;
  if (!classes_ok)
    throw IoError(
        path + ": meta says the targets are categorical with \"classes\": " +
        (meta.contains("classes") ? meta["classes"].dump() : std::string("(missing)")) +
        " but Y has d_out = " + std::to_string(d_out) +
        " (categorical needs classes = d_out >= 2); rewrite the file with `attnlab data`");
  return *kind;
}

// dataset_read's body; without Y when !y_required and the file has none.
Batch dataset_file_read(const std::string& path, std::string* meta_json, bool y_required,
                        bool* has_y) {
  auto entries = npz_read(path);
  auto take = [&](const char* name) -> NpyArray& {
    auto it = entries.find(name);
    if (it == entries.end())
      throw IoError(path + ": no array '" + name + "'; an attnlab dataset needs X" +
                    (y_required ? " and Y" : " (Y is optional)"));
    return it->second;
  };
  NpyArray& X = take("X");
  const bool y_present = y_required || entries.count("Y") > 0;
  if (has_y) *has_y = y_present;
  if (!y_present) {
    if (X.shape.size() != 3) throw IoError(path + ": X must be (n, T, d_in)");
  } else {
    NpyArray& Y = take("Y");
    if (X.shape.size() != 3 || Y.shape.size() != 3 || X.shape[0] != Y.shape[0])
      throw IoError(path + ": X must be (n, T, d_in) and Y (n, T_out, d_out) with the same n");
  }
  Batch b;
  b.n = X.shape[0];
  b.shape.T = X.shape[1];
  b.shape.d_in = X.shape[2];
  for (const char* name : {"X", "Y"})
    if (entries.count(name) > 0 && entries[name].dtype == DType::Unicode)
      throw IoError(path + ": " + name + " holds text, not numbers; an attnlab dataset's X and Y "
                    "are numeric arrays (rewrite the file with `attnlab data` or numpy.savez)");
  b.X = X.to_f64();
  if (y_present) {
    const NpyArray& Y = entries["Y"];
    b.shape.T_out = Y.shape[1];
    b.shape.d_out = Y.shape[2];
    b.Y = Y.to_f64();
  }
  const auto m = entries.find("meta");
  if (m != entries.end() && (m->second.dtype != DType::Unicode || m->second.size() != 1))
    throw IoError(path + ": entry 'meta' must be one JSON string (numpy.str_), not a numeric or "
                  "multi-element array; remove it or store json.dumps(...) as meta");
  const std::string meta = m != entries.end() ? m->second.text() : std::string();
  if (meta_json) *meta_json = meta;
  std::vector<std::string> constant_names;
  if (!meta.empty()) {
    const auto parsed = nlohmann::json::parse(meta, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_object())
      throw IoError(path +
                    ": entry 'meta' is not valid JSON; rewrite the file with `attnlab data`");
    if (parsed.contains("constants") && parsed["constants"].is_array())
      for (const auto& c : parsed["constants"])
        if (c.is_string()) constant_names.push_back(c.get<std::string>());
    if (y_present) b.shape.target = dataset_meta_target(path, parsed, b.shape.d_out);
  }
  for (auto& [name, a] : entries) {
    if (name == "X" || name == "Y" || name == "meta" || a.dtype == DType::Unicode) continue;
    bool is_constant = false;
    for (const auto& c : constant_names) is_constant = is_constant || c == name;
    const bool per_sample = !is_constant && !a.shape.empty() && a.shape[0] == b.n;
    RawArraySpec spec{name, {}, a.dtype != DType::F64 && a.dtype != DType::F32};
    spec.sample_shape.assign(a.shape.begin() + (per_sample ? 1 : 0), a.shape.end());
    RawArray r{spec, {}, {}};
    if (spec.integer)
      r.i64 = a.to_i64();
    else
      r.f64 = a.to_f64();
    (per_sample ? b.shape.raw : b.shape.constants).push_back(spec);
    (per_sample ? b.raw : b.constants).push_back(std::move(r));
  }
  return b;
}

}  // namespace

Batch dataset_read(const std::string& path, std::string* meta_json) {
  return dataset_file_read(path, meta_json, true, nullptr);
}

Batch dataset_read_inputs(const std::string& path, std::string* meta_json, bool* has_y) {
  return dataset_file_read(path, meta_json, false, has_y);
}

}  // namespace attn
