// This thread's step meter (step_meter.h).
#include "core/step_meter.h"

#include <utility>

namespace attn {
namespace {
thread_local const StepMeter* t_meter = nullptr;
}  // namespace

StepMeterScope::StepMeterScope(StepMeter meter) : meter_(std::move(meter)), previous_(t_meter) {
  t_meter = meter_ ? &meter_ : nullptr;
}

StepMeterScope::~StepMeterScope() { t_meter = previous_; }

void step_meter_report(int64_t done, int64_t total) {
  if (t_meter != nullptr) (*t_meter)(done, total);
}

}  // namespace attn
