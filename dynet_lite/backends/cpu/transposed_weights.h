#pragma once
// Transposed copies of the matrices that backward multiplies by their transpose.
//
// Backward of y = W x adds dx += W^T dy.  Batched execution runs that product
// once per group, and the groups of one weight are many (one per LSTM step): an
// LSTM's 200 x 128 input weight, say, 20 to 60 times per graph.  A product with
// W^T reads W across its columns, which the CPU's tiled kernels cannot stream;
// Eigen would pack W again on every call, while a transposed copy (k x m) goes
// through the tiled kernel (bench/gemm_shapes measures both).  The copy is made
// at a matrix's second use in a backward pass (at the first, for a product of
// many columns) and kept until the next one: every argument a backward kernel
// reads is a node's value or memory kept with it, unchanged while the pass runs.
//
// CPU only; the executors offer the cache through ExecContext::transposes().
#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace dynet_lite {

class Arena;
class ExecContext;

class TransposedWeights {
 public:
  /// Forgets every copy (start of a backward pass); copies go to `memory`, which
  /// must live until the next reset.
  void reset(Arena* memory) {
    memory_ = memory;
    seen_.clear();
  }
  /// W^T (k x m, column-major) for the column-major m x k matrix at `w`, or null
  /// at its first use in this pass (the caller multiplies by W^T itself) unless
  /// `repays_at_once`: a product wide enough to repay the copy by itself.
  const float* get(const float* w, size_t m, size_t k, bool repays_at_once = false);

 private:
  struct Entry {
    uint32_t m, k;
    const float* wt;  // null until the second use
  };
  Arena* memory_ = nullptr;
  std::unordered_map<const float*, Entry> seen_;
};

/// dx (k x n) += W^T dy (W m x k, dy m x n; column-major, contiguous) for a CPU
/// kernel: through W's transposed copy (TransposedWeights) where the context
/// offers one and the shape gains by it, else cpu::gemm_tn.  With `accumulate`
/// false, dx = W^T dy (dx's old contents are not read).
void gemm_tn(ExecContext& ctx, const float* w, const float* dy, float* dx, size_t m, size_t k, size_t n,
             bool accumulate = true);

}  // namespace dynet_lite
