// One run in this process (the body is run_body.h's), and the outcome's text form.
#include "experiment/run_point.h"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "experiment/run_body.h"
#include "mpi/comm.h"
#include "train/metrics.h"

namespace attn {

void run_outcome_add_test(const Batch& test, const std::vector<double>& prediction,
                          RunOutcome& out) {
  std::vector<std::pair<std::string, double>> standard_errors;
  for (const auto& [name, value] : metrics_compute(test, prediction, &standard_errors))
    out.metrics.emplace_back("test_" + name, value);
  for (const auto& [name, value] : standard_errors) out.metrics.emplace_back("test_" + name, value);
  out.metrics.emplace_back("test_samples", static_cast<double>(test.n));
  for (const MetricSeriesPoint& p : metrics_compute_slices(test, prediction))
    out.series.push_back({"test_" + p.series, p.step, p.value});
}

void run_outcome_add_fit(const std::vector<std::pair<std::string, double>>& train_metrics,
                         const FitLog& log, double fit_seconds, RunOutcome& out) {
  for (const auto& [name, value] : train_metrics)
    if (metric_is_summary(name)) out.metrics.emplace_back("train_" + name, value);
  for (const auto& [name, value] : log.scalars) out.metrics.emplace_back(name, value);
  out.metrics.emplace_back("fit_seconds", fit_seconds);
  out.series.insert(out.series.end(), log.points.begin(), log.points.end());
  for (const auto& [name, value] : out.metrics)
    ATTN_CHECK(std::isfinite(value) || name == "fit_seconds",
               "metric " + name + " is " + std::to_string(value) + " (NaN or inf)");
}

RunOutcome run_point_execute(const RunPoint& point, const RunShare& share) {
  RunOutcome out;
  out.run_id = point.run_id;
  const double start = run_clock(share);
  try {
    run_body(point, RunSite{&comm_self(), false, share}, out);
    out.ok = true;
  } catch (const std::bad_alloc&) {
    out.error = "out of memory";
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  if (!out.ok) {
    out.metrics.clear();
    out.series.clear();
  }
  out.wall_seconds = run_clock(share) - start;
  return out;
}

std::string run_outcome_encode(const RunOutcome& o) {
  nlohmann::json j;
  j["run_id"] = o.run_id;
  j["ok"] = o.ok;
  j["error"] = o.error;
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& [name, value] : o.metrics) {
    // JSON has no NaN/inf: carry the bits of the double.
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    metrics.push_back({name, bits});
  }
  j["metrics"] = metrics;
  nlohmann::json series = nlohmann::json::array();
  for (const auto& p : o.series) {
    uint64_t bits;
    std::memcpy(&bits, &p.value, sizeof bits);
    series.push_back({p.series, p.step, bits});
  }
  j["series"] = series;
  j["wall_seconds"] = o.wall_seconds;
  j["peak_rss_bytes"] = o.peak_rss_bytes;
  return j.dump();
}

RunOutcome run_outcome_decode(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  ATTN_ASSERT(!j.is_discarded() && j.is_object(), "malformed run outcome from a worker");
  RunOutcome o;
  o.run_id = j.at("run_id").get<std::string>();
  o.ok = j.at("ok").get<bool>();
  o.error = j.at("error").get<std::string>();
  for (const auto& m : j.at("metrics")) {
    const uint64_t bits = m.at(1).get<uint64_t>();
    double value;
    std::memcpy(&value, &bits, sizeof value);
    o.metrics.emplace_back(m.at(0).get<std::string>(), value);
  }
  for (const auto& s : j.at("series")) {
    const uint64_t bits = s.at(2).get<uint64_t>();
    double value;
    std::memcpy(&value, &bits, sizeof value);
    o.series.push_back({s.at(0).get<std::string>(), s.at(1).get<int64_t>(), value});
  }
  o.wall_seconds = j.at("wall_seconds").get<double>();
  o.peak_rss_bytes = j.at("peak_rss_bytes").get<int64_t>();
  return o;
}

}  // namespace attn
