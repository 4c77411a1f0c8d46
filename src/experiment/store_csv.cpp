// CSV export of stored runs (see store_csv.h).
#include "experiment/store_csv.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "experiment/store.h"
#include "io/atomic_file.h"

namespace attn {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_number(double v) {
  if (std::isnan(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void results_export_csv(const std::vector<StoredRun>& runs, const std::vector<std::string>& swept,
                        const std::string& path) {
  std::vector<std::string> metric_names;
  for (const auto& r : runs)
    for (const auto& [name, value] : r.metrics) {
      bool known = false;
      for (const auto& m : metric_names) known = known || m == name;
      if (!known) metric_names.push_back(name);
    }
  std::string out = "run_id,seed,status";
  for (const auto& k : swept) out += "," + csv_field(k);
  for (const auto& m : metric_names) out += "," + csv_field(m);
  out += ",wall_seconds,peak_rss_mb,error\n";
  for (const auto& r : runs) {
    out += r.run_id + "," + std::to_string(r.seed) + "," + r.status;
    for (const auto& k : swept) out += "," + csv_field(r.param(k));
    for (const auto& m : metric_names) out += "," + csv_number(r.metric(m));
    out += "," + csv_number(r.wall_seconds) + "," +
           csv_number(static_cast<double>(r.peak_rss_bytes) / (1024.0 * 1024.0)) + "," +
           csv_field(r.error) + "\n";
  }
  atomic_file_write(path, out);
  series_export_csv(runs, swept,
                    (std::filesystem::path(path).parent_path() / "series.csv").string());
}

void series_export_csv(const std::vector<StoredRun>& runs, const std::vector<std::string>& swept,
                       const std::string& path) {
  // Streamed in chunks: the series of a sweep (attention matrices) can be large.
  output_path_check(path, 0);
  AtomicFile file(path);
  std::string out = "run_id,seed,status";
  for (const auto& k : swept) out += "," + csv_field(k);
  out += ",series,step,value\n";
  for (const auto& r : runs) {
    if (r.series.empty()) continue;
    std::string prefix = r.run_id + "," + std::to_string(r.seed) + "," + r.status;
    for (const auto& k : swept) prefix += "," + csv_field(r.param(k));
    prefix += ",";
    for (const auto& p : r.series) {
      out += prefix + csv_field(p.series) + "," + std::to_string(p.step) + "," +
             csv_number(std::isfinite(p.value) ? p.value : NAN) + "\n";
      if (out.size() >= (1u << 20)) {
        file.write(out.data(), out.size());
        out.clear();
      }
    }
  }
  file.write(out.data(), out.size());
  file.commit();
}

}  // namespace attn
