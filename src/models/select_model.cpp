// Validation-based choice among candidate models.
#include "models/select_model.h"

#include <cmath>
#include <limits>

#include "core/error.h"

namespace attn {

SelectByValidation::SelectByValidation(std::vector<std::unique_ptr<Model>> candidates,
                                       std::vector<double> labels, std::string label_name)
    : candidates_(std::move(candidates)),
      labels_(std::move(labels)),
      label_name_(std::move(label_name)) {
  ATTN_ASSERT(!candidates_.empty() && candidates_.size() == labels_.size());
}

void SelectByValidation::fit(const Batch& train, FitLog& log) {
  double best_mse = std::numeric_limits<double>::infinity();
  size_t best = candidates_.size();
  FitLog best_log;
  for (size_t k = 0; k < candidates_.size(); ++k) {
    FitLog cand_log;
    candidates_[k]->fit(train, cand_log);
    double val = NAN;
    for (const auto& [name, value] : cand_log.scalars)
      if (name == "val_mse") val = value;
    ATTN_CHECK(!std::isnan(val), "model selection over " + label_name_ +
                                     " needs a validation split: set train.val_fraction > 0 "
                                     "(and more than one λ, or val_fraction > 0 with one λ)");
    log.point("val_mse_by_" + label_name_, static_cast<int64_t>(k), val);
    if (val < best_mse) {
      best_mse = val;
      best = k;
      best_log = std::move(cand_log);
    }
    if (best != k) candidates_[k].reset();  // keep memory to one fitted candidate at a time
  }
  ATTN_CHECK(best < candidates_.size(),
             "no candidate of " + label_name_ + " gave a finite validation error");
  best_ = std::move(candidates_[best]);
  candidates_.clear();
  for (auto& s : best_log.scalars) log.scalars.push_back(s);
  for (auto& p : best_log.points) log.points.push_back(p);
  log.scalar(label_name_, labels_[best]);
}

std::vector<double> SelectByValidation::predict(const Batch& data) const {
  ATTN_CHECK(best_ != nullptr, "predict() before fit()");
  return best_->predict(data);
}

void SelectByValidation::evaluate(const Batch& test, FitLog& log) const {
  ATTN_CHECK(best_ != nullptr, "evaluate() before fit()");
  best_->evaluate(test, log);
}

}  // namespace attn
