// Match family: parameters, sampling, planting, encoding.
#include "tasks/match_common.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "tasks/named_arrays.h"

namespace attn {

std::vector<ParamSpec> match_common_schema() {
  return {
      param_int("N", 16, "sequence length", 2, 1 << 16),
      param_int("M", 0, "modulus; 0 = smallest prime >= max(N+1, 10 N^2)", 0, 1e12),
      param_choice("sampling", choice_name(MatchConfig{}.sampling, kMatchSamplings),
                   choice_names(kMatchSamplings),
                   "uniform tokens; balanced: plant matches for ~plant_fraction positives; "
                   "plant_one: one planted match with probability 1/2"),
      param_choice("encoding", choice_name(MatchConfig{}.encoding, kMatchEncodings),
                   choice_names(kMatchEncodings),
                   "token encoding: one-hot in R^M, (cos, sin)(2πx/M), or x as a number"),
      param_bool("distinct", false, "witness positions must differ from i and from each other"),
      param_real("plant_fraction", 0.5, "balanced: target fraction of positive positions", 0.0,
                 1.0),
  };
}

bool match_is_prime(int64_t m) {
  if (m < 2) return false;
  for (int64_t f = 2; f * f <= m; ++f)
    if (m % f == 0) return false;
  return true;
}

int64_t match_auto_modulus(int64_t N) {
  int64_t m = std::max<int64_t>(N + 1, 10 * N * N);
  while (!match_is_prime(m)) ++m;
  return m;
}

ParamSpec match_auto_modulus_param() {
  // Added after results were stored: out of run ids at its default (today's rule).
  return param_id_omit_default(param_choice(
      "auto_modulus", "rare_matches", {"rare_matches", "uniform_half"},
      "the M that M = 0 picks: rare_matches = smallest prime >= max(N+1, 10 N^2); "
      "uniform_half = the prime >= N+1 at which uniform tokens make about half the "
      "positions positive"));
}

int64_t match_half_positive_prime(int64_t N, double m_half,
                                  const std::function<double(int64_t M)>& rate) {
  int64_t hi = std::max<int64_t>(N + 1, static_cast<int64_t>(std::ceil(m_half)));
  while (!match_is_prime(hi)) ++hi;
  int64_t lo = std::max<int64_t>(N + 1, static_cast<int64_t>(std::floor(m_half)));
  while (lo > N + 1 && !match_is_prime(lo)) --lo;
  if (!match_is_prime(lo)) return hi;  // no prime in [N+1, m_half]
  return std::fabs(rate(lo) - 0.5) < std::fabs(rate(hi) - 0.5) ? lo : hi;
}

void match_apply_auto_modulus(MatchConfig& c, const Params& params,
                              int64_t (*half_positive_modulus)(int64_t N, bool distinct)) {
  if (params.get_string("auto_modulus") != "uniform_half") return;
  ATTN_CHECK(params.get_int("M") == 0,
             "task.auto_modulus = uniform_half chooses M itself, but task.M = " +
                 std::to_string(params.get_int("M")) +
                 " is set: set task.M = 0 or drop task.auto_modulus");
  c.M = half_positive_modulus(c.N, c.distinct);
}

MatchConfig match_config(const std::string& task, const Params& params) {
  MatchConfig c;
  c.task = task;
  c.N = params.get_int("N");
  c.M = params.get_int("M");
  ATTN_CHECK(c.M != 1, "task.M = 1 is not allowed: use M >= 2, or M = 0 for the automatic prime");
  if (c.M == 0) c.M = match_auto_modulus(c.N);
  c.sampling = choice_parse(params.get_string("sampling"), kMatchSamplings, "task.sampling");
  c.encoding = choice_parse(params.get_string("encoding"), kMatchEncodings, "task.encoding");
  c.distinct = params.get_bool("distinct");
  c.plant_fraction = params.get_real("plant_fraction");
  return c;
}

ValueCounts::ValueCounts(const int64_t* tokens, int64_t N) : sorted_(tokens, tokens + N) {
  std::sort(sorted_.begin(), sorted_.end());
}

int64_t ValueCounts::count(int64_t value) const {
  const auto range = std::equal_range(sorted_.begin(), sorted_.end(), value);
  return range.second - range.first;
}

MatchTask::MatchTask(MatchConfig config) : c_(std::move(config)) {
  token_dim_ = c_.encoding == MatchEncoding::one_hot  ? c_.M
               : c_.encoding == MatchEncoding::circle ? 2
                                                      : 1;
  shape_.T = c_.N;
  shape_.d_in = token_dim_;
  shape_.T_out = c_.N;
  shape_.d_out = 1;
  shape_.target = TargetKind::binary;
  shape_.raw.push_back({"tokens", {c_.N}, true});
  // The M in use (resolved when M = 0).
  shape_.constants.push_back(named_array_spec(NamedArray::modulus, {}, c_.N));
}

void MatchTask::fill_constants(uint64_t /*seed*/, Batch& out) const {
  out.constants[0].i64[0] = c_.M;
}

void MatchTask::sample_range(uint64_t seed, int64_t first, int64_t count, Batch& out,
                             int64_t row) const {
  const int64_t N = c_.N, M = c_.M, d_in = shape_.d_in;
  const uint64_t token_stream = rng_stream_key(c_.task + ".tokens");
  const uint64_t aux_stream = rng_stream_key(c_.task + ".aux");
  const uint64_t plant_stream = rng_stream_key(c_.task + ".plant");
  std::vector<int64_t> label(N), order(N);
  std::vector<int64_t*> aux(shape_.raw.size() - 1);
  for (int64_t s = 0; s < count; ++s) {
    const uint64_t index = static_cast<uint64_t>(first + s);
    int64_t* tokens = out.raw_i64(0, row + s);
    for (size_t k = 1; k < shape_.raw.size(); ++k) aux[k - 1] = out.raw_i64(k, row + s);

    Rng token_rng(seed, token_stream, index);
    if (c_.sum_free_background) {
      // The middle third lo..hi = {x : M < 3x < 2M}: three of them sum to strictly
      // between M and 2M, never to 0 mod M.
      const int64_t lo = M / 3 + 1, hi = (2 * M - 1) / 3;
      const uint64_t count_mid = static_cast<uint64_t>(hi - lo + 1);
      for (int64_t i = 0; i < N; ++i)
        tokens[i] = lo + static_cast<int64_t>(token_rng.uniform_int(count_mid));
    } else {
      for (int64_t i = 0; i < N; ++i) tokens[i] = static_cast<int64_t>(token_rng.uniform_int(M));
    }
    Rng aux_rng(seed, aux_stream, index);
    draw_aux(aux_rng, aux);

    if (c_.sampling != MatchSampling::uniform) {
      Rng plant_rng(seed, plant_stream, index);
      for (int64_t i = 0; i < N; ++i) order[i] = i;
      for (int64_t i = N - 1; i > 0; --i)  // Fisher-Yates
        std::swap(order[i], order[plant_rng.uniform_int(static_cast<uint64_t>(i) + 1)]);
      int64_t plants = 0;
      if (c_.sampling == MatchSampling::balanced)
        plants = std::llround(c_.plant_fraction * static_cast<double>(N) /
                              static_cast<double>(positives_per_plant()));
      else
        plants = plant_rng.uniform() < 0.5 ? 1 : 0;
      if (c_.sum_free_background) plants = std::max<int64_t>(plants, 1);
      plant(plant_rng, plants, order, tokens, aux);
    }
    labels(tokens, aux, label.data());

    double* x = out.x(row + s);
    double* y = out.y(row + s);
    for (int64_t i = 0; i < N; ++i) {
      double* xi = x + i * d_in;
      if (c_.encoding == MatchEncoding::one_hot) {
        xi[tokens[i]] = 1.0;
      } else if (c_.encoding == MatchEncoding::circle) {
        const double angle = 2.0 * std::numbers::pi * static_cast<double>(tokens[i]) /
                             static_cast<double>(M);
        xi[0] = std::cos(angle);
        xi[1] = std::sin(angle);
      } else {
        xi[0] = static_cast<double>(tokens[i]);
      }
      encode_aux(i, aux, xi + token_dim_);
      y[i] = static_cast<double>(label[i]);
    }
  }
}

bool match_all_distinct(int64_t i, const int64_t* j, int64_t k) {
  for (int64_t a = 0; a < k; ++a) {
    if (j[a] == i) return false;
    for (int64_t b = a + 1; b < k; ++b)
      if (j[a] == j[b]) return false;
  }
  return true;
}

void match_reference_labels(const int64_t* tokens, int64_t N, int64_t M, int64_t k,
                            const std::function<bool(int64_t, const int64_t*)>& allowed,
                            int64_t* labels) {
  std::vector<int64_t> j(k);
  for (int64_t i = 0; i < N; ++i) {
    labels[i] = 0;
    std::fill(j.begin(), j.end(), 0);
    for (;;) {
      int64_t sum = tokens[i];
      for (int64_t a = 0; a < k; ++a) sum += tokens[j[a]];
      if (sum % M == 0 && allowed(i, j.data())) {
        labels[i] = 1;
        break;
      }
      int64_t a = 0;  // next tuple, odometer order
      while (a < k && ++j[a] == N) j[a++] = 0;
      if (a == k) break;
    }
  }
}

MatchReferenceInputs match_reference_inputs(const Params& params, const Batch& batch, int64_t row) {
  const RawArray* modulus = named_array_find(batch, NamedArray::modulus);
  const RawArray& tokens = batch.find("tokens");
  ATTN_ASSERT(modulus != nullptr);
  const int64_t N = tokens.spec.sample_shape[0];
  return {tokens.i64.data() + row * N, N, modulus->i64[0], params.get_bool("distinct"),
          std::vector<int64_t>(static_cast<size_t>(N), 0)};
}

void MatchReferenceInputs::write(double* y) const {
  for (int64_t i = 0; i < N; ++i) y[i] = static_cast<double>(labels[i]);
}

}  // namespace attn
