// Model selection on the validation split: fits every candidate and keeps the one whose
// fit reported the lowest validation MSE (the `val_mse` scalar of its FitLog, which ridge
// models report). Used e.g. by brfa with a list of mean scales: the bias strength is then
// chosen on validation data like λ, never on the test set.
//
// FitLog: the chosen candidate's scalars and series, plus `<label>` (its label value) and
// the series `val_mse_by_<label>` (step = candidate index).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/model_registry.h"

namespace attn {

class SelectByValidation final : public Model {
 public:
  // make(k) builds candidate k; labels[k] names it in the log (e.g. the mean scale).
  SelectByValidation(std::vector<std::unique_ptr<Model>> candidates, std::vector<double> labels,
                     std::string label_name);
  void fit(const Batch& train, FitLog& log) override;
  std::vector<double> predict(const Batch& data) const override;
  void evaluate(const Batch& test, FitLog& log) const override;

 private:
  std::vector<std::unique_ptr<Model>> candidates_;
  std::vector<double> labels_;
  std::string label_name_;
  std::unique_ptr<Model> best_;
};

}  // namespace attn
