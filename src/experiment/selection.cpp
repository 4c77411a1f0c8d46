// Selection on validation (see selection.h): groups of candidates, the choice, the CSV files.
#include "experiment/selection.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "experiment/store_csv.h"
#include "io/atomic_file.h"

namespace attn {
namespace {

std::string number_short(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

SelectionCandidate candidate_of(const SelectSpec& spec, const StoredRun& run) {
  SelectionCandidate c;
  c.run = &run;
  for (const auto& axis : spec.axes) c.values.push_back(run.param(axis));
  c.by = run.metric(spec.by);
  c.n_params = run_param_count(run);
  if (run.status != "ok")
    c.why = "failed";
  else if (!std::isfinite(c.by))
    c.why = "no " + spec.by;
  else if (spec.has_max_params && !std::isfinite(c.n_params))
    c.why = "no n_params";
  else if (spec.has_max_params && c.n_params > spec.max_params)
    c.why = "n_params " + number_short(c.n_params) + " > " + number_short(spec.max_params);
  c.eligible = c.why.empty();
  return c;
}

}  // namespace

std::string param_value_short(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() ? number_short(v) : text;
}

double run_param_count(const StoredRun& run) {
  for (const char* name : {"n_params", "params", "param_count"}) {
    const double v = run.metric(name);
    if (!std::isnan(v)) return v;
  }
  return NAN;
}

Selection selection_make(const SelectSpec& spec, const std::vector<std::string>& swept,
                         const std::vector<StoredRun>& runs) {
  Selection out;
  out.spec = spec;
  // A key naming a selected axis by its other spelling (a plot's "model.m" beside a selected
  // "model.attention.m", kept in the store's swept list) is no reported key either: it would
  // split each group by the chosen value.
  for (const auto& k : swept)
    if (spec.axis_named_by(k).empty()) out.reported_keys.push_back(k);
  std::map<std::pair<uint64_t, std::vector<std::string>>, size_t> row_of;
  for (const StoredRun& run : runs) {
    std::vector<std::string> reported;
    for (const auto& k : out.reported_keys) reported.push_back(run.param(k));
    const auto [it, added] = row_of.emplace(std::pair{run.seed, reported}, out.rows.size());
    if (added) out.rows.push_back(SelectedRow{run.seed, reported, {}, -1});
    out.rows[it->second].candidates.push_back(candidate_of(spec, run));
  }
  for (SelectedRow& row : out.rows) {
    // Plan order (point index), whatever order the runs came in: the curve's order and the
    // tie-break.
    std::stable_sort(row.candidates.begin(), row.candidates.end(),
                     [](const SelectionCandidate& a, const SelectionCandidate& b) {
                       return a.run->point < b.run->point;
                     });
    for (size_t i = 0; i < row.candidates.size(); ++i) {
      const SelectionCandidate& c = row.candidates[i];
      if (c.eligible && (row.chosen < 0 || c.by < row.candidates[row.chosen].by))
        row.chosen = static_cast<int>(i);
    }
  }
  return out;
}

std::vector<StoredRun> selection_chosen_runs(const Selection& selection) {
  std::vector<StoredRun> out;
  for (const SelectedRow& row : selection.rows) {
    if (const SelectionCandidate* c = row.chosen_candidate()) {
      out.push_back(*c->run);
    } else if (!row.candidates.empty()) {
      // No eligible candidate: the group reads as one failed run (its first candidate's
      // parameters, no metrics), so claims say its runs failed instead of finding no run.
      StoredRun failed = *row.candidates.front().run;
      failed.status = "failed";
      failed.metrics.clear();
      failed.series.clear();
      failed.error = "no eligible candidate for [select]:";
      for (const SelectionCandidate& cand : row.candidates) failed.error += " " + cand.why + ";";
      failed.error.pop_back();
      out.push_back(std::move(failed));
    }
  }
  return out;
}

std::vector<StoredRun> selection_apply(const SelectSpec& spec,
                                       const std::vector<std::string>& swept,
                                       const std::vector<StoredRun>& runs) {
  if (!spec.active()) return runs;
  return selection_chosen_runs(selection_make(spec, swept, runs));
}

std::vector<StoredRun> selection_apply(const Spec& spec, const std::vector<StoredRun>& runs) {
  return selection_apply(spec.select, spec_swept_keys(spec), runs);
}

std::string selection_text(const SelectSpec& spec) {
  std::string axes;
  for (size_t i = 0; i < spec.axes.size(); ++i) axes += (i ? ", " : "") + spec.axes[i];
  return "chosen per seed on " + spec.by + " (minimum) over " + axes +
         (spec.has_max_params ? ", with at most " + number_short(spec.max_params) + " parameters"
                              : std::string());
}

std::vector<std::vector<std::string>> selection_table(const Selection& selection) {
  std::vector<std::string> head = selection.reported_keys;
  for (const auto& axis : selection.spec.axes) head.push_back("chosen " + axis);
  head.push_back("n_params");
  head.push_back(selection.spec.by);
  head.push_back("eligible/candidates");
  std::vector<std::vector<std::string>> table = {head};
  std::map<std::vector<std::string>, size_t> at;  // reported values -> table row
  std::vector<std::pair<int, int>> counts;        // eligible, candidates per table row
  for (const SelectedRow& row : selection.rows) {
    const auto [it, added] = at.emplace(row.reported, table.size());
    if (added) {
      std::vector<std::string> cells = row.reported;
      cells.resize(head.size());
      table.push_back(cells);
      counts.emplace_back(0, 0);
    }
    std::vector<std::string>& cells = table[it->second];
    const SelectionCandidate* c = row.chosen_candidate();
    auto append = [&](size_t col, const std::string& text) {
      cells[col] += (cells[col].empty() ? "" : ", ") + (text.empty() ? "-" : text);
    };
    size_t col = row.reported.size();
    for (size_t a = 0; a < selection.spec.axes.size(); ++a)
      append(col++, c ? param_value_short(c->values[a]) : "none");
    append(col++, c ? number_short(c->n_params) : "none");
    append(col++, c ? number_short(c->by) : "none");
    auto& [eligible, total] = counts[it->second - 1];
    for (const auto& k : row.candidates) eligible += k.eligible ? 1 : 0;
    total += static_cast<int>(row.candidates.size());
    cells[col] = std::to_string(eligible) + "/" + std::to_string(total);
  }
  return table;
}

void selection_files_remove(const std::string& dir) {
  std::error_code ignored;
  for (const char* name : {"selected.csv", "selection.csv"})
    std::filesystem::remove(std::filesystem::path(dir) / name, ignored);
}

void selection_export_csv(const Selection& selection, const std::vector<std::string>& swept,
                          const std::string& dir) {
  const SelectSpec& spec = selection.spec;
  if (!spec.active()) {
    selection_files_remove(dir);
    return;
  }
  // selected.csv: the chosen run of each group, with every metric it stored.
  std::vector<std::string> metrics;
  for (const SelectedRow& row : selection.rows)
    if (const SelectionCandidate* c = row.chosen_candidate())
      for (const auto& [name, value] : c->run->metrics)
        if (name != "n_params" && std::find(metrics.begin(), metrics.end(), name) == metrics.end())
          metrics.push_back(name);
  std::string head = "run_id,seed,status";
  for (const auto& k : swept) head += "," + csv_field(k);
  std::string out = head + ",candidates,eligible,n_params";
  for (const auto& m : metrics) out += "," + csv_field(m);
  out += "\n";
  for (const SelectedRow& row : selection.rows) {
    const SelectionCandidate* c = row.chosen_candidate();
    int eligible = 0;
    for (const auto& k : row.candidates) eligible += k.eligible ? 1 : 0;
    out += (c ? c->run->run_id : "") + "," + std::to_string(row.seed) + "," + (c ? "ok" : "none");
    for (const auto& k : swept) {
      std::string value;
      if (spec.axis_named_by(k).empty()) {
        value = row.candidates.front().run->param(k);
      } else if (c) {
        value = c->run->param(k);
      }
      out += "," + csv_field(value);
    }
    out += "," + std::to_string(row.candidates.size()) + "," + std::to_string(eligible) + "," +
           (c ? csv_number(c->n_params) : "");
    for (const auto& m : metrics) out += "," + (c ? csv_number(c->run->metric(m)) : "");
    out += "\n";
  }
  atomic_file_write((std::filesystem::path(dir) / "selected.csv").string(), out);
  // selection.csv: every candidate, the validation curves over the selected axes.
  std::string curves = head + ",n_params," + csv_field(spec.by) + ",eligible,chosen,why\n";
  for (const SelectedRow& row : selection.rows)
    for (size_t i = 0; i < row.candidates.size(); ++i) {
      const SelectionCandidate& c = row.candidates[i];
      curves += c.run->run_id + "," + std::to_string(c.run->seed) + "," + c.run->status;
      for (const auto& k : swept) curves += "," + csv_field(c.run->param(k));
      curves += "," + csv_number(c.n_params) + "," + csv_number(c.by) + "," +
                (c.eligible ? "1" : "0") + "," + (row.chosen == static_cast<int>(i) ? "1" : "0") +
                "," + csv_field(c.why) + "\n";
    }
  atomic_file_write((std::filesystem::path(dir) / "selection.csv").string(), curves);
}

}  // namespace attn
