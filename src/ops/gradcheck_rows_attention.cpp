// Gradient-check rows for the attention ops: softmax attention (H = 1 and 3, dk ≠ dv,
// exclude_self off/on, causal, the scale as an input so ∂L/∂scale is checked), head_sum, and
// third-order attention (H = 1 and 2, exclude_self off/on, causal).
//
// Inputs (double): q, k (B, N, H, dk), v (B, N, H, dv), scale {} for attention;
// q, k1, k2 (B, N, H, dk), v1, v2 (B, N, H, dv), scale {} for third order;
// inp (rows, H, dv) for head_sum. Outputs: out (B, N, H, dv), resp. out_sum (rows, dv).
// Everything is smooth (softmax, products), so no input needs to stay away from a kink;
// scores are O(1) so the softmax is neither saturated nor uniform.
#include <string>

#include "ops/attention.h"
#include "ops/gradcheck.h"
#include "ops/third_order_attention.h"

namespace attn {
namespace {

GradcheckRow attention_row(const std::string& name, AttentionShape s) {
  GradcheckRow row;
  row.name = name;
  row.group = "op";
  row.make = [s](uint64_t seed) {
    const std::vector<int64_t> kshape{s.B, s.N, s.H, s.dk}, vshape{s.B, s.N, s.H, s.dv};
    const std::vector<int64_t> shared{s.B, s.N, s.dk};
    GradcheckProblem p;
    p.inputs = {gradcheck_uniform("q", kshape, seed, -1.5, 1.5),
                gradcheck_uniform("k", s.shared_keys ? shared : kshape, seed, -1.5, 1.5),
                gradcheck_uniform("v", vshape, seed, -1.0, 1.0),
                gradcheck_uniform("scale", {}, seed, 0.5, 1.5)};
    const size_t n_out = static_cast<size_t>(s.B * s.N * s.H * s.dv);
    const size_t n_probs = static_cast<size_t>(s.B * s.H * s.N * s.N);
    p.forward = [s, n_out, n_probs](const GradInputs& in) {
      std::vector<double> out(n_out), probs(n_probs);
      attention_forward<double>(out.data(), probs.data(), in[0].data.data(), in[1].data.data(),
                                in[2].data.data(), in[3].data[0], s);
      return out;
    };
    p.backward = [s, n_out, n_probs](const GradInputs& in, const std::vector<double>& dout) {
      std::vector<double> out(n_out), probs(n_probs);
      attention_forward<double>(out.data(), probs.data(), in[0].data.data(), in[1].data.data(),
                                in[2].data.data(), in[3].data[0], s);
      std::vector<std::vector<double>> g;
      for (const auto& t : in) g.emplace_back(t.data.size(), 0.0);
      attention_backward<double>(g[0].data(), g[1].data(), g[2].data(), g[3].data(), dout.data(),
                                 in[0].data.data(), in[1].data.data(), in[2].data.data(),
                                 probs.data(), in[3].data[0], s);
      return g;
    };
    return p;
  };
  return row;
}

GradcheckRow third_order_row(const std::string& name, ThirdOrderShape s) {
  GradcheckRow row;
  row.name = name;
  row.group = "op";
  row.make = [s](uint64_t seed) {
    const std::vector<int64_t> kshape{s.B, s.N, s.H, s.dk}, vshape{s.B, s.N, s.H, s.dv};
    GradcheckProblem p;
    p.inputs = {gradcheck_uniform("q", kshape, seed, -1.5, 1.5),
                gradcheck_uniform("k1", kshape, seed, -1.5, 1.5),
                gradcheck_uniform("k2", kshape, seed, -1.5, 1.5),
                gradcheck_uniform("v1", vshape, seed, -1.0, 1.0),
                gradcheck_uniform("v2", vshape, seed, -1.0, 1.0),
                gradcheck_uniform("scale", {}, seed, 0.5, 1.5)};
    const size_t n_out = static_cast<size_t>(s.B * s.N * s.H * s.dv);
    const size_t n_probs = static_cast<size_t>(s.B * s.H * s.N * s.N * s.N);
    auto fwd = [s, n_out, n_probs](const GradInputs& in, std::vector<double>& probs) {
      std::vector<double> out(n_out);
      probs.assign(n_probs, 0.0);
      third_order_forward<double>(out.data(), probs.data(), in[0].data.data(), in[1].data.data(),
                                  in[2].data.data(), in[3].data.data(), in[4].data.data(),
                                  in[5].data[0], s);
      return out;
    };
    p.forward = [fwd](const GradInputs& in) {
      std::vector<double> probs;
      return fwd(in, probs);
    };
    p.backward = [s, fwd](const GradInputs& in, const std::vector<double>& dout) {
      std::vector<double> probs;
      fwd(in, probs);
      std::vector<std::vector<double>> g;
      for (const auto& t : in) g.emplace_back(t.data.size(), 0.0);
      third_order_backward<double>(g[0].data(), g[1].data(), g[2].data(), g[3].data(),
                                   g[4].data(), g[5].data(), dout.data(), in[0].data.data(),
                                   in[1].data.data(), in[2].data.data(), in[3].data.data(),
                                   in[4].data.data(), probs.data(), in[5].data[0], s);
      return g;
    };
    return p;
  };
  return row;
}

GradcheckRow head_sum_row(int64_t rows, int64_t H, int64_t dv) {
  GradcheckRow row;
  row.name = "head_sum";
  row.group = "op";
  row.make = [rows, H, dv](uint64_t seed) {
    GradcheckProblem p;
    p.inputs = {gradcheck_uniform("inp", {rows, H, dv}, seed, -1.0, 1.0)};
    p.forward = [rows, H, dv](const GradInputs& in) {
      std::vector<double> out(static_cast<size_t>(rows * dv));
      head_sum_forward<double>(out.data(), in[0].data.data(), rows, H, dv);
      return out;
    };
    p.backward = [rows, H, dv](const GradInputs& in, const std::vector<double>& dout) {
      std::vector<std::vector<double>> g{std::vector<double>(in[0].data.size(), 0.0)};
      head_sum_backward<double>(g[0].data(), dout.data(), rows, H, dv);
      return g;
    };
    return p;
  };
  return row;
}

}  // namespace

void gradcheck_rows_attention(std::vector<GradcheckRow>& table) {
  // Attention: B, N, H, dk, dv, exclude_self.
  table.push_back(attention_row("attention/H1", {2, 5, 1, 3, 4, false}));
  table.push_back(attention_row("attention/H1_exclude_self", {2, 5, 1, 3, 4, true}));
  table.push_back(attention_row("attention/H3", {2, 4, 3, 4, 2, false}));
  table.push_back(attention_row("attention/H3_exclude_self", {2, 4, 3, 4, 2, true}));
  AttentionShape shared{2, 4, 3, 4, 2, false};
  shared.shared_keys = true;
  table.push_back(attention_row("attention/H3_shared_keys", shared));
  // Causal (B, N, H, dk, dv, exclude_self, score_bits, shared_keys, causal); N = 20 > 16
  // runs the fast kernel's blocks of query rows (causal_row_block).
  table.push_back(attention_row("attention/H1_causal", {2, 5, 1, 3, 4, false, 0, false, true}));
  table.push_back(attention_row("attention/H3_causal", {2, 4, 3, 4, 2, false, 0, false, true}));
  table.push_back(
      attention_row("attention/H3_shared_keys_causal", {2, 4, 3, 4, 2, false, 0, true, true}));
  table.push_back(
      attention_row("attention/H2_causal_blocks", {1, 20, 2, 2, 3, false, 0, false, true}));
  table.push_back(head_sum_row(6, 3, 4));
  // Third order: B, N, H, dk, dv, exclude_self (N ≥ 3 for the mask, 4 so that each query
  // still has several pairs left).
  table.push_back(third_order_row("third_order/H1", {2, 4, 1, 3, 2, false}));
  table.push_back(third_order_row("third_order/H1_exclude_self", {2, 4, 1, 3, 2, true}));
  table.push_back(third_order_row("third_order/H2", {1, 4, 2, 2, 3, false}));
  table.push_back(third_order_row("third_order/H2_exclude_self", {1, 5, 2, 2, 3, true}));
  // Causal (…, exclude_self, score_bits, causal); N = 5 runs three query blocks.
  table.push_back(third_order_row("third_order/H1_causal", {2, 4, 1, 3, 2, false, 0, true}));
  table.push_back(third_order_row("third_order/H2_causal", {1, 5, 2, 3, 2, false, 0, true}));
}

}  // namespace attn
