// A run point over all ranks: the run body (run_body.h) with a joint ridge fit over comm.
#include "experiment/run_distributed.h"

#include <sys/resource.h>

#include <algorithm>

#include "core/error.h"
#include "experiment/run_body.h"
#include "mpi/mpi_session.h"

namespace attn {

bool run_point_is_distributed(const RunPoint& point) {
  const Params& train = point.config.train_params;
  return train.has("distributed") && train.get_bool("distributed");
}

RunOutcome run_point_execute_distributed(const RunPoint& point, const Comm& comm,
                                         const std::string& setup_error) {
  RunOutcome out;
  out.run_id = point.run_id;
  const double start = run_clock({});
  try {
    comm.agree(setup_error);
    run_body(point, RunSite{&comm, true, {}}, out);
    out.ok = true;
  } catch (const UserError& e) {  // every error inside is agreed on, hence a UserError
    out.error = e.what();
  } catch (const std::exception& e) {
    // Thrown outside a comm_phase: this rank is out of step with the others.
    mpi_abort("rank " + std::to_string(comm.rank()) + " failed inside distributed run " +
              point.run_id + ": " + e.what());
  }
  if (!out.ok) {
    out.metrics.clear();
    out.series.clear();
  }
  out.wall_seconds = run_clock({}) - start;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::vector<double> peaks(static_cast<size_t>(comm.size()));
  const double mine = static_cast<double>(usage.ru_maxrss) * 1024;
  comm.gather(&mine, 1, peaks.data());
  double peak = 0;
  for (double v : peaks) peak = std::max(peak, v);
  out.peak_rss_bytes = static_cast<int64_t>(peak);
  return out;
}

}  // namespace attn
