// Gradient-check rows for the LSTM layer, reading forward and in reverse.
//
// Rows: lstm, lstm/reverse, lstm/no_bias. Inputs x (B=2, T=4, C=3), wx (3, 4·5),
// wh (5, 4·5), b (20); output h (2, 4, 5) — every h[:, t], so the check covers the
// gradient through time from every step. C ≠ Hd catches transposed weight products.
// lstm/one_hot and lstm/one_hot_reverse: x one-hot over C = 8 channels (data, not probed), Hd = 9,
// so the input products take the sparse path (ops/sparse_rows.h) with a full 32-wide slice and a
// tail of the 36 gate columns.
// Weights in [−0.8, 0.8] keep the gates away from saturation, where the gradients would be
// tiny and the check weak. Tolerance 1e-6 (the harness default); step h = 1e-5 rather than
// the default 1e-6: wh's gradients are small next to |L| = |<dout, h>|, so at h = 1e-6 the
// rounding error O(ε·|L|/h) of the difference quotient reaches 3.5e-6 on wh (seeds 1..300,
// with kink-guard skips from the same noise); at h = 1e-5 the worst probe error is 5e-7 and
// the O(h²) truncation error is still ~1e-10 (at h = 1e-4 it grows to 1e-6).
#include <cstdint>
#include <string>
#include <vector>

#include "ops/gradcheck.h"
#include "ops/lstm.h"

namespace attn {
namespace {

GradcheckRow lstm_row(const std::string& name, bool reverse, bool with_bias, bool one_hot = false) {
  GradcheckRow row;
  row.name = name;
  row.group = "op";
  row.step = 1e-5;
  row.make = [reverse, with_bias, one_hot](uint64_t seed) {
    LstmShape s;
    s.B = 2;
    s.T = 4;
    s.C = one_hot ? 8 : 3;
    s.Hd = one_hot ? 9 : 5;
    s.reverse = reverse;
    const int64_t G = 4 * s.Hd;
    const size_t nh = static_cast<size_t>(s.B * s.T * s.Hd);
    const size_t ng = static_cast<size_t>(s.B * s.T * G);
    GradcheckProblem p;
    p.inputs.push_back(gradcheck_uniform("x", {s.B, s.T, s.C}, seed, -1, 1));
    if (one_hot) {
      GradTensor& x = p.inputs.back();
      for (int64_t r = 0; r < s.B * s.T; ++r)
        for (int64_t k = 0; k < s.C; ++k)
          x.data[r * s.C + k] = k == (r * 3 + static_cast<int64_t>(seed)) % s.C ? 1.0 : 0.0;
      x.differentiable = false;
    }
    p.inputs.push_back(gradcheck_uniform("wx", {s.C, G}, seed, -0.8, 0.8));
    p.inputs.push_back(gradcheck_uniform("wh", {s.Hd, G}, seed, -0.8, 0.8));
    if (with_bias) p.inputs.push_back(gradcheck_uniform("b", {G}, seed, -0.5, 0.5));
    p.forward = [=](const GradInputs& in) {
      std::vector<double> h(nh), c(nh), tc(nh), gates(ng);
      lstm_forward<double>(h.data(), c.data(), tc.data(), gates.data(), in[0].data.data(),
                           in[1].data.data(), in[2].data.data(),
                           with_bias ? in[3].data.data() : nullptr, s);
      return h;
    };
    p.backward = [=](const GradInputs& in, const std::vector<double>& dout) {
      std::vector<double> h(nh), c(nh), tc(nh), gates(ng);
      const double* b = with_bias ? in[3].data.data() : nullptr;
      lstm_forward<double>(h.data(), c.data(), tc.data(), gates.data(), in[0].data.data(),
                           in[1].data.data(), in[2].data.data(), b, s);
      std::vector<std::vector<double>> g;
      for (const auto& t : in) g.emplace_back(t.data.size(), 0.0);
      lstm_backward<double>(g[0].data(), g[1].data(), g[2].data(),
                            with_bias ? g[3].data() : nullptr, dout.data(), in[0].data.data(),
                            in[1].data.data(), in[2].data.data(), h.data(), c.data(), tc.data(),
                            gates.data(), s);
      return g;
    };
    return p;
  };
  return row;
}

}  // namespace

void gradcheck_rows_lstm(std::vector<GradcheckRow>& table) {
  table.push_back(lstm_row("lstm", false, true));
  table.push_back(lstm_row("lstm/reverse", true, true));
  table.push_back(lstm_row("lstm/no_bias", false, false));
  table.push_back(lstm_row("lstm/one_hot", false, true, true));
  table.push_back(lstm_row("lstm/one_hot_reverse", true, true, true));
}

}  // namespace attn
