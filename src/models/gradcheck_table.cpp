// The gradient-check table (see gradcheck_table.h).
#include "models/gradcheck_table.h"

namespace attn {

const std::vector<GradcheckRow>& gradcheck_table() {
  static const std::vector<GradcheckRow> table = [] {
    std::vector<GradcheckRow> t;
    gradcheck_rows_basic(t);
    gradcheck_rows_attention(t);
    gradcheck_rows_lstm(t);
    gradcheck_rows_models(t);
    return t;
  }();
  return table;
}

}  // namespace attn
