// mean: predicts the training mean of each of the T_out × d_out output coordinates.
//
// Shapes: fit reads Y n × T_out × d_out (X is ignored); predict returns n × T_out × d_out,
// every sample the same K = T_out·d_out means.
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "models/baselines.h"

namespace attn {
namespace {

class MeanModel final : public Model {
 public:
  void fit(const Batch& train, FitLog& log) override {
    const int64_t n = train.n, K = train.shape.y_size();
    ATTN_CHECK(n >= 1, "model 'mean': the training set is empty; set train.n >= 1");
    ATTN_CHECK(static_cast<int64_t>(train.Y.size()) == n * K,
               "model 'mean': the training batch holds " + std::to_string(train.Y.size()) +
                   " targets, expected n × T_out × d_out = " + std::to_string(n * K));
    std::vector<double> sum(K, 0.0);
    for (int64_t j = 0; j < n; ++j) {
      const double* y = train.y(j);
      for (int64_t k = 0; k < K; ++k) sum[k] += y[k];
    }
    for (int64_t k = 0; k < K; ++k) sum[k] /= static_cast<double>(n);
    means_ = std::move(sum);
    T_out_ = train.shape.T_out;
    d_out_ = train.shape.d_out;
    fitted_ = true;
    log.scalar("param_count", static_cast<double>(K));
    log.scalar("n_params", static_cast<double>(K));
  }

  std::vector<double> predict(const Batch& data) const override {
    ATTN_CHECK(fitted_, "model 'mean': predict() was called before fit()");
    ATTN_CHECK(data.shape.T_out == T_out_ && data.shape.d_out == d_out_,
               "model 'mean': fitted for targets of shape " + std::to_string(T_out_) + " × " +
                   std::to_string(d_out_) + ", asked to predict " +
                   std::to_string(data.shape.T_out) + " × " + std::to_string(data.shape.d_out) +
                   "; use data from the same task");
    const int64_t K = static_cast<int64_t>(means_.size());
    std::vector<double> out(static_cast<size_t>(data.n * K));
    for (int64_t j = 0; j < data.n; ++j)
      std::copy(means_.begin(), means_.end(), out.begin() + j * K);
    return out;
  }

  // Saved as "y_mean" (K).
  void save(ModelTensors& out) const override {
    ATTN_CHECK(fitted_, "model 'mean': save() was called before fit()");
    out.add("y_mean", {static_cast<int64_t>(means_.size())}, means_);
  }

  void load(const ModelTensors& in) override {
    means_ = in.get("y_mean", {in.shape.y_size()});
    T_out_ = in.shape.T_out;
    d_out_ = in.shape.d_out;
    fitted_ = true;
  }

 private:
  std::vector<double> means_;  // K = T_out·d_out
  int64_t T_out_ = 0, d_out_ = 0;
  bool fitted_ = false;
};

}  // namespace

std::vector<ParamSpec> mean_schema() { return {}; }
std::vector<ParamSpec> mean_train_schema() { return {}; }

std::unique_ptr<Model> mean_make(const ModelContext& /*context*/) {
  return std::make_unique<MeanModel>();
}

}  // namespace attn
