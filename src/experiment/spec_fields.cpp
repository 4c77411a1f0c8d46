// The field tables of a spec's sections (spec_fields.h), their reader (spec_loader.h:
// fields_read) and their spec.json writer and reader.
#include "experiment/spec_fields.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/params_json.h"
#include "experiment/spec_loader.h"

#pragma GCC diagnostic error "-Wswitch"

namespace attn {
namespace {

using nlohmann::json;
using F = FieldType;

std::string goal_check(const std::string& s, const std::string& what) {
  if (s == "below" || s == "above") return "";
  return what + " must be \"below\" or \"above\" (got \"" + s + "\")";
}

std::string compare_check(const std::string& s, const std::string& what) {
  if (s == "equal" || s == "at_most" || s == "at_least") return "";
  return what + " = '" + s + "' is not one of equal, at_most, at_least";
}

// claim.doc: "docs/NAME.md#anchor", a paragraph of the repository's docs (tests/
// test_claim_docs.cpp checks that the shipped specs' files and anchors exist).
std::string doc_check(const std::string& s, const std::string& what) {
  const size_t hash = s.find('#');
  const std::string file = s.substr(0, hash);
  if (file.rfind("docs/", 0) != 0 || file.size() <= 8 || file.substr(file.size() - 3) != ".md" ||
      hash == std::string::npos || hash + 1 == s.size() || file.find("..") != std::string::npos)
    return what + " = \"" + s + "\" must be \"docs/NAME.md#anchor\" (the paragraph of the docs "
                                "that explains the claim)";
  return "";
}

std::string finite_check(double x, const std::string& what) {
  if (std::isfinite(x)) return "";
  return what + " = " + std::to_string(x) + " must be a finite number";
}

std::string positive_check(double x, const std::string& what) {
  if (!(x > 0)) return what + " must be > 0 (the success level)";
  return finite_check(x, what);
}

std::string margin_check(double x, const std::string& what) {
  if (!(x >= 0)) return what + " = " + std::to_string(x) + " must be >= 0";
  return finite_check(x, what);
}

std::string confidence_check(double x, const std::string& what) {
  if (x >= 0.5 && x < 1) return "";
  return what + " = " + std::to_string(x) +
         " must be in [0.5, 1), e.g. 0.95 (the level of each one-sided bound)";
}

const char* plot_kind_text(const PlotSpec& p) { return plot_kinds().name(p.kind); }
bool plot_kind_set(PlotSpec& p, const std::string& name) {
  const PlotKind* kind = plot_kinds().find(name);
  if (kind) p.kind = *kind;
  return kind != nullptr;
}
const char* claim_kind_text(const ClaimSpec& c) { return claim_kinds().name(c.type); }
bool claim_kind_set(ClaimSpec& c, const std::string& name) {
  const ClaimKind* kind = claim_kinds().find(name);
  if (kind) c.type = *kind;
  return kind != nullptr;
}

json filter_json(const RunFilter& f) {
  json j = json::object();
  for (const auto& [k, values] : f) {
    json list = json::array();
    for (const auto& v : values) list.push_back(param_value_json(v));
    j[k] = list;
  }
  return j;
}

template <class S>
json fields_json(const std::vector<SpecField<S>>& fields, const S& s) {
  json j = json::object();
  for (const auto& f : fields) {
    switch (f.type) {
      case F::Text:
        if (!(f.omit_empty && (s.*f.text).empty())) j[f.key] = s.*f.text;
        break;
      case F::Flag: j[f.key] = s.*f.flag; break;
      case F::Number:
        if (!f.given || s.*f.given) j[f.key] = s.*f.number;
        break;
      case F::Filter: j[f.key] = filter_json(s.*f.filter); break;
      case F::Kind: j[f.key] = f.kind_name(s); break;
      case F::Custom: break;
    }
  }
  return j;
}

template <class S>
void fields_from_json(const std::vector<SpecField<S>>& fields, const json& j, S& s) {
  ATTN_CHECK(j.is_object(), "spec.json: a plot or claim is not a JSON object; rerun `attnlab "
                            "export` to rewrite it");
  for (const auto& f : fields) {
    if (!j.contains(f.key)) continue;
    const json& v = j.at(f.key);
    switch (f.type) {
      case F::Text: s.*f.text = v.get<std::string>(); break;
      case F::Flag: s.*f.flag = v.get<bool>(); break;
      case F::Number:
        s.*f.number = v.get<double>();
        if (f.given) s.*f.given = true;
        break;
      case F::Filter:
        for (const auto& [k, values] : v.items())
          for (const auto& value : values)
            (s.*f.filter)[k].push_back(
                param_value_from_json(value, std::string("spec.json ") + f.key));
        break;
      case F::Kind:
        ATTN_CHECK(f.kind_set(s, v.get<std::string>()),
                   "spec.json: " + std::string(f.key) + " '" + v.get<std::string>() +
                       "' is not known to this attnlab; rerun the spec with it");
        break;
      case F::Custom: break;
    }
  }
}

// plot.goal and claim.goal: the same key with the same check.
template <class S>
SpecField<S> goal_field() {
  return {.key = "goal", .type = F::Text, .doc_type = "string", .doc_default = "`\"below\"`",
          .text = &S::goal, .check_text = goal_check};
}

// A number (integer or float) at v, or a user error naming `what`.
double number_of(const spec_detail::Loader& L, const SpecTree& v, const std::string& what) {
  const ParamValue x = L.value_of(v, what);
  if (auto* i = std::get_if<int64_t>(&x)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&x)) return *d;
  L.fail(v.line, what + " must be a number");
}

}  // namespace

const std::vector<SpecField<Spec>>& experiment_fields() {
  using S = Spec;
  static const std::vector<SpecField<S>> fields = {
      {.key = "name", .type = F::Text, .doc_type = "string",
       .doc_default = "file name without `.toml`", .text = &S::name},
      {.key = "description", .type = F::Text, .doc_type = "string", .doc_default = "`\"\"`",
       .text = &S::description},
      {.key = "seeds", .type = F::Custom, .doc_type = "integer or list of integers",
       .doc_default = "`1` (seed 0)"},
  };
  return fields;
}

const std::vector<SpecField<PlotSpec>>& plot_fields() {
  using S = PlotSpec;
  static const std::vector<SpecField<S>> fields = {
      {.key = "name", .type = F::Text, .doc_type = "string",
       .doc_default = "`plot<k>` (k = 1-based position)", .text = &S::name},
      {.key = "title", .type = F::Text, .doc_type = "string",
       .doc_default = "line: `\"<metric> vs <x>\"`; heatmap: `\"<metric> over <x> and <y>\"`; "
                      "curve: `\"<series> vs step\"`; matrix: `\"<series>\"`",
       .text = &S::title},
      {.key = "kind", .type = F::Kind, .doc_type = "string", .doc_default = "`\"line\"`",
       .kind_name = plot_kind_text, .kind_set = plot_kind_set},
      {.key = "metric", .type = F::Text, .doc_type = "string",
       .doc_default = "required (line, heatmap, size_needed)", .text = &S::metric},
      {.key = "x", .type = F::Text, .doc_type = "string",
       .doc_default = "required (line, heatmap, size_needed)", .text = &S::x},
      {.key = "y", .type = F::Text, .doc_type = "string", .doc_default = "required (heatmap)",
       .text = &S::y},
      {.key = "series", .type = F::Text, .doc_type = "string",
       .doc_default = "required (curve, matrix)", .text = &S::series},
      {.key = "line", .type = F::Text, .doc_type = "string", .doc_default = "one line",
       .text = &S::line},
      {.key = "logx", .type = F::Flag, .doc_type = "bool", .doc_default = "false",
       .flag = &S::logx},
      {.key = "logy", .type = F::Flag, .doc_type = "bool", .doc_default = "false",
       .flag = &S::logy},
      {.key = "where", .type = F::Filter, .doc_type = "table", .doc_default = "all runs",
       .filter = &S::where},
      {.key = "product_boundary", .type = F::Number, .doc_type = "number > 0",
       .doc_default = "none", .number = &S::product_boundary, .check_number = positive_check},
      {.key = "size", .type = F::Text, .doc_type = "string",
       .doc_default = "required (size_needed)", .text = &S::size},
      {.key = "threshold", .type = F::Number, .doc_type = "number",
       .doc_default = "required (size_needed)", .number = &S::threshold,
       .check_number = finite_check},
      goal_field<S>(),
      {.key = "none", .type = F::Number, .doc_type = "number", .doc_default = "none",
       .number = &S::none, .given = &S::has_none, .check_number = finite_check},
      {.key = "mark", .type = F::Text, .doc_type = "string", .doc_default = "none",
       .text = &S::mark, .omit_empty = true},
  };
  return fields;
}

const std::vector<SpecField<ClaimSpec>>& claim_fields() {
  using S = ClaimSpec;
  static const std::vector<SpecField<S>> fields = {
      {.key = "id", .type = F::Text, .doc_type = "string", .doc_default = "`claim<k>`",
       .text = &S::id},
      {.key = "text", .type = F::Text, .doc_type = "string", .doc_default = "required",
       .text = &S::text},
      {.key = "type", .type = F::Kind, .doc_type = "string", .doc_default = "required",
       .kind_name = claim_kind_text, .kind_set = claim_kind_set},
      {.key = "metric", .type = F::Text, .doc_type = "string", .doc_default = "required",
       .text = &S::metric},
      {.key = "a", .type = F::Filter, .doc_type = "filter",
       .doc_default = "required for `less_than`, `ratio_increasing`, `size_ratio_increasing`",
       .filter = &S::a},
      {.key = "b", .type = F::Filter, .doc_type = "filter",
       .doc_default = "required for `less_than`, `ratio_increasing`, `size_ratio_increasing`",
       .filter = &S::b},
      {.key = "where", .type = F::Filter, .doc_type = "filter", .doc_default = "all runs",
       .filter = &S::where},
      {.key = "factor", .type = F::Number, .doc_type = "number",
       .doc_default = "1 (required ≥ 1 for `size_flat`)", .number = &S::factor,
       .check_number = finite_check},
      {.key = "threshold", .type = F::Number, .doc_type = "number",
       .doc_default = "required for `below`/`above`/`flat`/`size_*`/`reach*`",
       .number = &S::threshold,
       .check_number = finite_check},
      {.key = "along", .type = F::Text, .doc_type = "string (dotted key)",
       .doc_default = "required for the trend, size and rate types", .text = &S::along},
      {.key = "size", .type = F::Text,
       .doc_type = "string (dotted key, or a product of dotted keys)",
       .doc_default = "required for `size_*`", .text = &S::size},
      goal_field<S>(),
      {.key = "confidence", .type = F::Number, .doc_type = "number in [0.5, 1)",
       .doc_default = "0.95", .number = &S::confidence, .check_number = confidence_check},
      {.key = "exponent", .type = F::Number, .doc_type = "number",
       .doc_default = "required for `power_law`", .number = &S::exponent,
       .check_number = finite_check},
      {.key = "margin", .type = F::Number, .doc_type = "number ≥ 0", .doc_default = "0",
       .number = &S::margin, .check_number = margin_check},
      {.key = "compare", .type = F::Text, .doc_type = "string", .doc_default = "`\"equal\"`",
       .text = &S::compare, .check_text = compare_check},
      {.key = "slice", .type = F::Text, .doc_type = "string",
       .doc_default = "required for `reach*`", .text = &S::slice, .omit_empty = true},
      {.key = "reach", .type = F::Number, .doc_type = "number",
       .doc_default = "required for `reach`", .number = &S::reach, .given = &S::has_reach,
       .check_number = finite_check},
      {.key = "doc", .type = F::Text, .doc_type = "string", .doc_default = "none",
       .text = &S::doc, .check_text = doc_check},
  };
  return fields;
}

json plot_json(const PlotSpec& plot) { return fields_json(plot_fields(), plot); }
json claim_json(const ClaimSpec& claim) { return fields_json(claim_fields(), claim); }

PlotSpec plot_from_json(const json& j) {
  PlotSpec plot;
  fields_from_json(plot_fields(), j, plot);
  return plot;
}

ClaimSpec claim_from_json(const json& j) {
  ClaimSpec claim;
  fields_from_json(claim_fields(), j, claim);
  return claim;
}

json select_json(const SelectSpec& select) {
  json j = {{"axes", select.axes}, {"by", select.by}};
  if (select.has_max_params) j["max_params"] = select.max_params;
  return j;
}

SelectSpec select_from_json(const json& j) {
  SelectSpec s;
  if (!j.is_object()) return s;
  ATTN_CHECK(
      j.contains("axes") && j.at("axes").is_array() && j.contains("by") && j.at("by").is_string(),
      "spec.json: select is not {axes, by}; rerun `attnlab export` to rewrite it");
  s.axes = j.at("axes").get<std::vector<std::string>>();
  s.by = j.at("by").get<std::string>();
  if (j.contains("max_params")) {
    s.max_params = j.at("max_params").get<double>();
    s.has_max_params = true;
  }
  return s;
}

void experiment_json(const Spec& spec, json& j) {
  j.update(fields_json(experiment_fields(), spec));
}

const std::vector<SpecSection>& spec_sections() {
  static const std::vector<SpecSection> sections = {
      {"experiment", false, true}, {"task", true, true},    {"model", true, true},
      {"train", true, true},       {"eval", true, true},    {"sweep", false, true},
      {"plot", false, false},      {"claim", false, false}, {"quick", false, false},
      {"select", false, false},
  };
  return sections;
}

std::vector<std::string> spec_section_names(bool runs_only, bool settable_only) {
  std::vector<std::string> names;
  for (const auto& s : spec_sections())
    if ((!runs_only || s.runs) && (!settable_only || s.settable)) names.emplace_back(s.name);
  return names;
}

namespace spec_detail {

template <class S>
KindText fields_read(const Loader& L, const SpecTree& table, const std::string& section,
                     const std::string& prefix, const std::vector<SpecField<S>>& fields, S& out) {
  L.check_keys(table, section, field_keys(fields));
  KindText kind;
  for (const auto& [key, v] : table.entries) {
    const SpecField<S>* f = nullptr;
    for (const auto& row : fields)
      if (key == row.key) f = &row;
    ATTN_ASSERT(f != nullptr, "fields_read: check_keys let " + key + " through");
    const std::string what = prefix + key;
    switch (f->type) {
      case F::Text: {
        const std::string s = L.string_of(v, what);
        if (f->check_text)
          if (const std::string wrong = f->check_text(s, what); !wrong.empty())
            L.fail(v.line, wrong);
        out.*f->text = s;
        break;
      }
      case F::Flag:
        if (v.kind != Kind::Value || !std::holds_alternative<bool>(v.value))
          L.fail(v.line, what + " must be true or false");
        out.*f->flag = std::get<bool>(v.value);
        break;
      case F::Number: {
        const double x = number_of(L, v, what);
        if (f->check_number)
          if (const std::string wrong = f->check_number(x, what); !wrong.empty())
            L.fail(v.line, wrong);
        out.*f->number = x;
        if (f->given) out.*f->given = true;
        break;
      }
      case F::Filter: out.*f->filter = L.filter_of(v, what); break;
      case F::Kind: kind = KindText{true, L.string_of(v, what), v.line}; break;
      case F::Custom: break;
    }
  }
  return kind;
}

template KindText fields_read(const Loader&, const SpecTree&, const std::string&,
                              const std::string&, const std::vector<SpecField<Spec>>&, Spec&);
template KindText fields_read(const Loader&, const SpecTree&, const std::string&,
                              const std::string&, const std::vector<SpecField<PlotSpec>>&,
                              PlotSpec&);
template KindText fields_read(const Loader&, const SpecTree&, const std::string&,
                              const std::string&, const std::vector<SpecField<ClaimSpec>>&,
                              ClaimSpec&);

// Whether a key counts as given: a string or filter non-empty, a number or flag present.
template <class S>
bool field_given(const std::vector<SpecField<S>>& fields, const std::string& key, const S& s,
                 const SpecTree& table) {
  for (const auto& f : fields) {
    if (key != f.key) continue;
    switch (f.type) {
      case F::Text: return !(s.*f.text).empty();
      case F::Filter: return !(s.*f.filter).empty();
      case F::Flag:
      case F::Number:
      case F::Kind:
      case F::Custom: return table.find(key) != nullptr;
    }
  }
  ATTN_ASSERT(false, "field_given: no field " + key);
  return false;
}

template bool field_given(const std::vector<SpecField<PlotSpec>>&, const std::string&,
                          const PlotSpec&, const SpecTree&);
template bool field_given(const std::vector<SpecField<ClaimSpec>>&, const std::string&,
                          const ClaimSpec&, const SpecTree&);

}  // namespace spec_detail
}  // namespace attn
