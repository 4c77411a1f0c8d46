// How far one long loop has got (the training steps of a single fit), for whoever shows it:
// `attnlab fit` draws core/progress.h's bar or log lines, Python's Model.fit a tqdm bar.
//
// The meter belongs to the thread that installs it (StepMeterScope), so two fits on two
// threads (Python releases the GIL) each report to their own. Loops call
// step_meter_report(done, total) between steps on the thread that runs them; with no meter
// installed that is one thread-local load. A meter may throw (Python's rethrows what its
// callback raised, py::error_already_set): the loop unwinds like at any other error. Sweeps
// install none: their progress counts runs (core/progress.h), not steps.
#pragma once

#include <cstdint>
#include <functional>

namespace attn {

// Told `done` of `total` steps (done from 1 to total; a loop that stops early, e.g. early
// stopping, ends below total).
using StepMeter = std::function<void(int64_t done, int64_t total)>;

// Installs `meter` for this thread while the scope lives; the previous one comes back after.
class StepMeterScope {
 public:
  explicit StepMeterScope(StepMeter meter);
  ~StepMeterScope();
  StepMeterScope(const StepMeterScope&) = delete;
  StepMeterScope& operator=(const StepMeterScope&) = delete;

 private:
  StepMeter meter_;
  const StepMeter* previous_;
};

// Reports to this thread's meter, if one is installed.
void step_meter_report(int64_t done, int64_t total);

}  // namespace attn
