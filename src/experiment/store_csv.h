// CSV export of stored runs: results.csv (one row per run) and series.csv (one row per
// logged point), each written atomically. Numbers as %.17g, empty when NaN; text fields
// quoted as RFC 4180 when they hold a comma, quote or newline.
#pragma once

#include <string>
#include <vector>

namespace attn {

struct StoredRun;

// One CSV field: quoted (RFC 4180) when it holds a comma, quote or newline.
std::string csv_field(const std::string& s);
// A number as %.17g; "" for NaN.
std::string csv_number(double v);

// Writes results.csv (atomically): run_id, seed, status, one column per swept key (in the
// order given), one per metric (first-seen order), wall_seconds, peak_rss_mb, error.
// Then writes series.csv in the same directory (series_export_csv).
void results_export_csv(const std::vector<StoredRun>& runs, const std::vector<std::string>& swept,
                        const std::string& path);

// Writes series.csv (atomically): one row per logged point, runs in the given order (by
// point), points in the order logged: run_id, seed, status, one column per swept key (the
// same as results.csv), then series, step, value (empty when not finite). A header only
// when no run logged a series.
void series_export_csv(const std::vector<StoredRun>& runs, const std::vector<std::string>& swept,
                       const std::string& path);

}  // namespace attn
