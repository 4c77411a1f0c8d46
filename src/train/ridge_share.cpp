// Sharing between the ridge fits of one process (ridge_share.h): the entries and their lookup.
#include "train/ridge_share.h"

#include <algorithm>
#include <cstring>
#include <list>

#include "core/memory.h"

namespace attn {
namespace {

bool g_enabled = false;
int64_t g_hits = 0;
std::list<RidgeShareEntry>& entries() {
  static std::list<RidgeShareEntry> list;
  return list;
}

double available() { return static_cast<double>(memory_available_bytes()); }

}  // namespace

void ridge_share_enable(bool on) {
  g_enabled = on;
  if (!on) ridge_share_clear();
}
bool ridge_share_enabled() { return g_enabled; }
void ridge_share_clear() { entries().clear(); }
int64_t ridge_share_hits() { return g_hits; }

RidgeShareEntry* ridge_share_features(const FeatureMap& features, const Batch& data, int64_t n,
                                      int64_t block, bool dual) {
  if (!g_enabled || n <= 0) return nullptr;
  const int64_t x_size = data.shape.x_size(), P = features.dim();
  const int64_t first = std::min(block, n);
  RowMat head(first, P);
  features.features(data.x(0), first, head.data());
  const size_t x_bytes = static_cast<size_t>(n * x_size) * sizeof(double);
  for (auto it = entries().begin(); it != entries().end(); ++it) {
    if (it->rows < n || it->x_size != x_size || it->block != block || it->Phi.cols() != P)
      continue;
    if (std::memcmp(it->X.data(), data.X.data(), x_bytes) != 0) continue;
    if (it->first_block.rows() < first ||
        std::memcmp(it->first_block.data(), head.data(),
                    static_cast<size_t>(first * P) * sizeof(double)) != 0)
      continue;
    entries().splice(entries().begin(), entries(), it);  // most recently used first
    ++g_hits;
    return &entries().front();
  }
  // A new entry: Φ (n × P) and two systems, in half the available memory.
  const double nd = static_cast<double>(n), Pd = static_cast<double>(P);
  const double need = 8.0 * (nd * Pd + 2 * (dual ? nd * nd : Pd * Pd));
  while (!entries().empty() && need > 0.5 * available()) entries().pop_back();
  if (need > 0.5 * available()) return nullptr;
  RidgeShareEntry e;
  e.rows = n;
  e.x_size = x_size;
  e.block = block;
  e.X.assign(data.X.begin(), data.X.begin() + n * x_size);
  e.first_block = std::move(head);
  e.Phi.resize(n, P);
  ridge_advise_huge(e.Phi);
  ridge_features_rows(features, data, 0, n, block, e.Phi);
  entries().push_front(std::move(e));
  return &entries().front();
}

namespace {

// The partial last block of rows [0, count): its first row and its features (one call of
// that size; empty when count is a multiple of the block or the entry's own row count).
int64_t tail_first(const RidgeShareEntry& e, int64_t count) {
  return count == e.rows ? count : count - count % e.block;
}

RowMat tail_rows(const RidgeShareEntry& e, const FeatureMap& features, const Batch& data,
                 int64_t count) {
  const int64_t lo = tail_first(e, count);
  RowMat T(count - lo, e.Phi.cols());
  if (count > lo) features.features(data.x(lo), count - lo, T.data());
  return T;
}

}  // namespace

RowMat ridge_share_rows(const RidgeShareEntry& e, const FeatureMap& features, const Batch& data,
                        int64_t count) {
  const int64_t lo = tail_first(e, count);
  RowMat F(count, e.Phi.cols());
  ridge_advise_huge(F);
  F.topRows(lo) = e.Phi.topRows(lo);
  F.bottomRows(count - lo) = tail_rows(e, features, data, count);
  return F;
}

const ColMat& ridge_share_system(RidgeShareEntry& e, const FeatureMap& features,
                                 const Batch& data, bool dual, int64_t count) {
  for (const auto& s : e.systems)
    if (s.dual == dual && s.count == count) {
      ++g_hits;
      return s.A;
    }
  if (e.systems.size() >= 2) e.systems.erase(e.systems.begin());
  const int64_t D = dual ? count : e.Phi.cols();
  ColMat A(D, D);
  ridge_advise_huge(A);
  A.setZero();
  if (dual) {
    A.selfadjointView<Eigen::Lower>().rankUpdate(ridge_share_rows(e, features, data, count));
  } else {
    const int64_t tail = tail_first(e, count);
    const RowMat T = tail_rows(e, features, data, count);
    for (int64_t lo = 0; lo < count; lo += e.block) {
      const int64_t b = std::min(e.block, count - lo);
      if (lo < tail)
        A.selfadjointView<Eigen::Lower>().rankUpdate(e.Phi.middleRows(lo, b).transpose());
      else
        A.selfadjointView<Eigen::Lower>().rankUpdate(T.transpose());
    }
  }
  e.systems.push_back({dual, count, std::move(A)});
  return e.systems.back().A;
}

void ridge_share_labels_product(const RidgeShareEntry& e, const FeatureMap& features,
                                const Batch& data, int64_t count, const ColMat& Y, ColMat& Bv) {
  const int64_t tail = tail_first(e, count);
  const RowMat T = tail_rows(e, features, data, count);
  for (int64_t lo = 0; lo < count; lo += e.block) {
    const int64_t b = std::min(e.block, count - lo);
    if (lo < tail)
      Bv.noalias() += e.Phi.middleRows(lo, b).transpose() * Y.middleRows(lo, b);
    else
      Bv.noalias() += T.transpose() * Y.middleRows(lo, b);
  }
}

}  // namespace attn
