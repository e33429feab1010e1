#include "dynet_lite/backends/cpu/weight_grads.h"

#include <cstring>

#include "dynet_lite/backends/cpu/gemm.h"
#include "dynet_lite/core/arena.h"

namespace dynet_lite {

void WeightGradSink::add(float* dw, const float* a, const float* b, size_t m, size_t k, size_t n) {
  if (n == 0) return;
  terms_.push_back({dw, a, b, static_cast<uint32_t>(m), static_cast<uint32_t>(k), static_cast<uint32_t>(n)});
}

void WeightGradSink::flush(float* dw, Arena& scratch) {
  batch_.clear();
  size_t keep = 0;
  for (const Term& t : terms_) {
    if (t.dw == dw)
      batch_.push_back(t);
    else
      terms_[keep++] = t;
  }
  terms_.resize(keep);
  if (batch_.empty()) return;
  const size_t m = batch_[0].m, k = batch_[0].k;
  if (batch_.size() == 1) {
    cpu::gemm_nt(batch_[0].a, batch_[0].b, dw, m, k, batch_[0].n);
    return;
  }
  // Stack the terms' columns side by side (in the order of the uses) and run one
  // product.  Terms whose columns already follow each other in memory could be
  // read in place, but the copy is (m + k) floats a column against m * k
  // multiply-adds, so it is not worth the bookkeeping.
  size_t total = 0;
  for (const Term& t : batch_) total += t.n;
  Arena::Mark mark = scratch.mark();
  float* a = scratch.allocate_floats(m * total);
  float* b = scratch.allocate_floats(k * total);
  size_t at = 0;
  for (const Term& t : batch_) {
    std::memcpy(a + at * m, t.a, size_t(t.n) * m * sizeof(float));
    std::memcpy(b + at * k, t.b, size_t(t.n) * k * sizeof(float));
    at += t.n;
  }
  cpu::gemm_nt(a, b, dw, m, k, total);
  scratch.rewind(mark);
}

void WeightGradSink::flush_all(Arena& scratch) {
  while (!terms_.empty()) flush(terms_.front().dw, scratch);
}

}  // namespace dynet_lite
