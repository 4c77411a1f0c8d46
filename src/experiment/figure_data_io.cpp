// Figure data as JSON (DIR/figures/data/<plot>.json, docs/figure-data.md), written for every
// plot of an experiment directory, and the plots read back from its spec.json.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "experiment/experiment_dir.h"
#include "experiment/figure_data_detail.h"
#include "experiment/selection.h"
#include "experiment/spec_fields.h"
#include "io/atomic_file.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A number for JSON: an integer when whole, null when not finite.
json number_json(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<int64_t>(v);
  return v;
}

// An axis value: a number on a numeric axis, else its text.
json value_json(const FigureValue& v, bool numeric_axis) {
  return numeric_axis && v.numeric ? number_json(v.number) : json(v.label);
}

bool all_numeric(const std::vector<FigureValue>& vs) {
  for (const auto& v : vs)
    if (!v.numeric) return false;
  return true;
}

json filter_json(const RunFilter& f) {
  json j = json::object();
  for (const auto& [k, values] : f) {
    json list = json::array();
    for (const auto& v : values)
      list.push_back(std::visit([](const auto& x) { return json(x); }, v));
    j[k] = list;
  }
  return j;
}

// The statistics every averaged point carries.
json stats_json(const FigurePoint& p) {
  const Interval& iv = p.interval;
  return {{"mean", number_json(iv.mean)},
          {"lo", iv.ok ? number_json(iv.lo) : json(nullptr)},
          {"hi", iv.ok ? number_json(iv.hi) : json(nullptr)},
          {"band", p.banded ? json::array({number_json(p.band_lo), number_json(p.band_hi)})
                            : json(nullptr)},
          {"sd", p.sd >= 0 ? number_json(p.sd) : json(nullptr)},
          {"seeds", iv.seeds},
          {"runs", p.run_ids.size()},
          {"run_ids", p.run_ids},
          {"chosen", p.chosen.empty() ? json(nullptr) : json(p.chosen)}};
}

json lines_json(const FigureData& d, bool numeric_x) {
  json lines = json::array();
  for (const auto& line : d.lines) {
    json points = json::array();
    for (const auto& p : line.points) {
      json pj;
      if (d.kind == PlotKind::curve) {
        pj = {{"step", p.step}};
        pj.update(stats_json(p));
      } else if (d.kind == PlotKind::size_needed) {
        pj = {{"x", value_json(p.x, numeric_x)}, {"size", number_json(p.size)},
              {"may", number_json(p.may)},       {"sure", number_json(p.sure)},
              {"largest_tried", number_json(p.largest)}, {"runs", p.run_ids.size()},
              {"run_ids", p.run_ids}};
      } else {
        pj = {{"x", value_json(p.x, numeric_x)}};
        pj.update(stats_json(p));
      }
      points.push_back(pj);
    }
    lines.push_back({{"label", line.label},
                     {"same_as", line.same_as.empty() ? json(nullptr) : json(line.same_as)},
                     {"points", points}});
  }
  return lines;
}

json values_json(const std::vector<FigureValue>& vs) {
  json out = json::array();
  const bool numeric = all_numeric(vs);
  for (const auto& v : vs) out.push_back(value_json(v, numeric));
  return out;
}

}  // namespace

std::string figure_data_json(const FigureData& d) {
  json j = {{"format", "attnlab figure data 1"},
            {"name", d.name},
            {"kind", plot_kinds().name(d.kind)},
            {"title", d.title},
            {"x_label", d.x_label},
            {"y_label", d.y_label},
            {"legend_title", d.legend_title.empty() ? json(nullptr) : json(d.legend_title)},
            {"logx", d.logx},
            {"logy", d.logy},
            {"where", filter_json(d.where)},
            {"runs_used", d.runs_used},
            {"notes", d.notes}};
  if (d.kind == PlotKind::matrix) {
    json values = json::array();
    for (const auto& row : d.matrix) {
      json r = json::array();
      for (double v : row) r.push_back(std::isfinite(v) ? json(v) : json(nullptr));
      values.push_back(r);
    }
    json marked = nullptr;
    if (d.has_marked) {
      marked = json::array();
      for (const auto& [i, k] : d.marked) marked.push_back({i, k});
    }
    j.update(json{{"value_label", d.value_label},
                  {"run_id", d.run_id},
                  {"run_label", d.run_label},
                  {"mark", d.mark.empty() ? json(nullptr) : json(d.mark)},
                  {"values", values},
                  {"marked", marked}});
    return j.dump(1) + "\n";
  }
  j["spread"] = {{"rule", "the claims' bounds on the mean over seeds: Student-t over seeds, each "
                          "bound one-sided at the confidence; one seed: its test samples' "
                          "standard error when stored, else none (null)"},
                 {"confidence", kFigureConfidence}};
  if (d.kind == PlotKind::heatmap) {
    const bool nx = all_numeric(d.x_values), ny = all_numeric(d.y_values);
    json cells = json::array();
    for (const auto& p : d.lines.at(0).points) {
      json c = {{"x", value_json(p.x, nx)}, {"y", value_json(p.y, ny)}};
      c.update(stats_json(p));
      cells.push_back(c);
    }
    j.update(json{{"value_label", d.value_label}, {"x_values", values_json(d.x_values)},
              {"y_values", values_json(d.y_values)}, {"cells", cells},
              {"product_boundary", d.product_level > 0
                                       ? json{{"level", d.product_level},
                                              {"c", d.product_c > 0 ? number_json(d.product_c)
                                                                    : json(nullptr)}}
                                       : json(nullptr)}});
  } else {
    const bool nx = d.kind == PlotKind::curve || all_numeric(d.x_values);
    if (d.kind != PlotKind::curve) {
      j["x_numeric"] = nx;
      j["x_values"] = values_json(d.x_values);
    }
    if (d.kind == PlotKind::size_needed) {
      json sizes = json::array();
      for (double s : d.sizes_tried) sizes.push_back(number_json(s));
      j.update(json{{"size_key", d.size_key},
                    {"goal", d.goal},
                    {"threshold", number_json(d.threshold)},
                    {"sizes_tried", sizes}});
    }
    j["lines"] = lines_json(d, nx);
  }
  return j.dump(1) + "\n";
}

std::vector<PlotSpec> plots_from_spec_json(const std::string& text,
                                           std::vector<std::string>* swept) {
  const json j = json::parse(text, nullptr, false);
  ATTN_CHECK(
      j.is_object() && j.value("plots", json::array()).is_array(),
      "spec.json: not the JSON of a spec; rerun `attnlab run` (or `attnlab export`) to rewrite it");
  if (swept) *swept = j.value("swept", std::vector<std::string>{});
  std::vector<PlotSpec> plots;
  for (const auto& p : j.value("plots", json::array())) plots.push_back(plot_from_json(p));
  return plots;
}

namespace {

// Whether a plot names one of the selected axes (x, y, line, size or a where key): it then
// draws every candidate (e.g. val_loss against model.m), not the chosen runs.
bool plot_names_selected_axis(const PlotSpec& plot, const SelectSpec& select) {
  std::vector<std::string> keys = plot_line_keys(plot.line);
  for (const std::string* k : {&plot.x, &plot.y, &plot.size}) keys.push_back(*k);
  for (const auto& [k, values] : plot.where) keys.push_back(k);
  for (const auto& k : keys)
    if (!select.axis_named_by(k).empty()) return true;
  return false;
}

// "a/b/c": the distinct texts, in first-seen order.
std::string distinct_joined(const std::vector<std::string>& texts) {
  std::vector<std::string> seen;
  for (const auto& t : texts)
    if (std::find(seen.begin(), seen.end(), t) == seen.end()) seen.push_back(t);
  std::string out;
  for (const auto& t : seen) out += (out.empty() ? "" : "/") + t;
  return out;
}

// Each point's `chosen`: the selected axes' values and the parameter counts of its runs.
void chosen_annotate(FigureData& d, const Selection& selection) {
  std::map<std::string, const SelectionCandidate*> by_id;
  for (const SelectedRow& row : selection.rows)
    if (const SelectionCandidate* c = row.chosen_candidate()) by_id[c->run->run_id] = c;
  for (FigureLine& line : d.lines)
    for (FigurePoint& p : line.points) {
      std::vector<const SelectionCandidate*> cs;
      for (const auto& id : p.run_ids)
        if (by_id.count(id)) cs.push_back(by_id[id]);
      if (cs.empty()) continue;
      std::string text;
      for (size_t a = 0; a < selection.spec.axes.size(); ++a) {
        std::vector<std::string> values;
        for (const auto* c : cs)
          if (!c->values[a].empty()) values.push_back(param_value_short(c->values[a]));
        if (!values.empty())
          text +=
              (text.empty() ? "" : ", ") + selection.spec.axes[a] + "=" + distinct_joined(values);
      }
      std::vector<std::string> counts;
      for (const auto* c : cs)
        if (std::isfinite(c->n_params))
          counts.push_back(std::to_string(static_cast<int64_t>(c->n_params)));
      if (!counts.empty())
        text += (text.empty() ? "" : " · ") + distinct_joined(counts) + " params";
      p.chosen = text;
    }
}

}  // namespace

void figure_data_write(const std::string& dir) {
  const fs::path spec_path = fs::path(dir) / "spec.json";
  std::ifstream in(spec_path);
  if (!in)
    throw IoError(spec_path.string() + ": not found; run `attnlab export " + dir + "` first");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> swept;
  const std::vector<PlotSpec> plots = plots_from_spec_json(text.str(), &swept);
  const auto runs = experiment_plan_runs(
      ResultsStore((fs::path(dir) / "results.sqlite").string(), StoreAccess::kRead));
  // [select]: a plot draws the chosen runs (their selected axes are not averaged over: each
  // seed has one value there), unless it names a selected axis.
  const json spec_json = json::parse(text.str(), nullptr, false);
  const SelectSpec select =
      spec_json.contains("select") ? select_from_json(spec_json["select"]) : SelectSpec{};
  const Selection selection = select.active() ? selection_make(select, swept, runs) : Selection{};
  const std::vector<StoredRun> chosen = selection_chosen_runs(selection);
  std::vector<FigureData> data;  // every plot first: a bad one writes nothing
  for (const auto& plot : plots) {
    if (!select.active() || plot_names_selected_axis(plot, select)) {
      data.push_back(figure_data_make(plot, swept, runs));
      continue;
    }
    data.push_back(figure_data_make(plot, selection.reported_keys, chosen));
    if (!data.back().skipped.empty()) continue;
    data.back().notes.push_back("runs " + selection_text(select) + " (selected.csv)");
    chosen_annotate(data.back(), selection);
  }
  const fs::path out = fs::path(dir) / "figures" / "data";
  fs::create_directories(out);
  json index = {{"plots", json::array()}, {"skipped", json::object()}};
  std::set<std::string> written = {"index.json"};
  for (const auto& d : data) {
    if (!d.skipped.empty()) {
      figure_detail::warn(d.name, d.skipped + "; skipped");
      index["skipped"][d.name] = d.skipped;
      continue;
    }
    atomic_file_write((out / (d.name + ".json")).string(), figure_data_json(d));
    index["plots"].push_back(d.name);
    written.insert(d.name + ".json");
  }
  for (const auto& e : fs::directory_iterator(out))  // data of plots no longer in the spec
    if (e.path().extension() == ".json" && !written.count(e.path().filename().string()))
      fs::remove(e.path());
  atomic_file_write((out / "index.json").string(), index.dump(2) + "\n");
  atomic_file_write((fs::path(dir) / "figures" / "skipped.json").string(),
                    index["skipped"].dump(2) + "\n");
}

}  // namespace attn
