#include "dynet_lite/backends/cpu/weight_grads.h"

#include <algorithm>
#include <cstring>

#include "dynet_lite/backends/cpu/gemm.h"
#include "dynet_lite/core/arena.h"

namespace dynet_lite {

void WeightGradSink::add(float* dw, const float* a, const float* b, size_t m, size_t k, size_t n) {
  if (n == 0) return;
  terms_.push_back({dw, a, b, static_cast<uint32_t>(m), static_cast<uint32_t>(k), static_cast<uint32_t>(n)});
}

void WeightGradSink::flush(float* dw, Arena& scratch, float* into) {
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
  if (into) dw = into;
  const size_t m = batch_[0].m, k = batch_[0].k;
  // Stack the terms' columns side by side (in the order of the uses) and run one
  // product per chunk of kFlushFloats stacked floats: a weight used by a
  // thousand thin groups (a language model's output layer, sentence ends making
  // the late groups thin) would otherwise stack all of them at once, tens of
  // megabytes of scratch for a product that is as fast in chunks.  Terms whose
  // columns already follow each other in memory could be read in place, but the
  // copy is (m + k) floats a column against m * k multiply-adds, so it is not
  // worth the bookkeeping.
  const size_t chunk_columns = std::max<size_t>(kMaxColumns, kFlushFloats / (m + k));
  size_t first = 0;
  while (first < batch_.size()) {
    size_t last = first, total = 0;
    while (last < batch_.size() && (last == first || total + batch_[last].n <= chunk_columns)) total += batch_[last++].n;
    if (last == first + 1) {
      cpu::gemm_nt(batch_[first].a, batch_[first].b, dw, m, k, batch_[first].n);
    } else {
      Arena::Mark mark = scratch.mark();
      float* a = scratch.allocate_floats(m * total);
      float* b = scratch.allocate_floats(k * total);
      size_t at = 0;
      for (size_t t = first; t < last; ++t) {
        std::memcpy(a + at * m, batch_[t].a, size_t(batch_[t].n) * m * sizeof(float));
        std::memcpy(b + at * k, batch_[t].b, size_t(batch_[t].n) * k * sizeof(float));
        at += batch_[t].n;
      }
      cpu::gemm_nt(a, b, dw, m, k, total);
      scratch.rewind(mark);
    }
    first = last;
  }
}

void WeightGradSink::flush_all(Arena& scratch) {
  while (!terms_.empty()) flush(terms_.front().dw, scratch);
}

}  // namespace dynet_lite
