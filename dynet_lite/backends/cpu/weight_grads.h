#pragma once
// Deferred weight gradients.
//
// Every use of a weight matrix W in a product adds dW += dY X^T to its gradient.
// Done use by use, each is a rank-1 update (one instance, one column) or a thin
// product over one batched group, and each reads and writes the whole of dW: for
// a Tree-LSTM's 640 x 128 matrices that is 650 KB of traffic per tree node for
// a few thousand multiply-adds.  Nothing reads dW before backward reaches the
// weight's parameter node, which comes after every use, so a kernel may leave
// the term here instead; when backward reaches the parameter node, all its terms
// are summed as one product dW += [dY_1 ... dY_n] [X_1 ... X_n]^T.
//
// Only CPU kernels of thin products (fewer than kMaxColumns columns) defer.  The
// executors offer the sink (ExecContext::weight_grads), note by the sink's size
// whether the kernel left a term, mark the node, and flush its terms before its
// own backward reads its gradient.  Plain execution offers it for every CPU
// argument (a weight may be a computed node, such as rows of a parameter);
// batched execution for parameter nodes only.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dynet_lite {

class Arena;

class WeightGradSink {
 public:
  /// Terms of this many columns or more are added at once: their product is
  /// already efficient, and keeping their operands would cost memory.
  static constexpr size_t kMaxColumns = 32;
  /// A flush stacks at most this many floats of operands at once (4 MB), or
  /// kMaxColumns columns where those are more.
  static constexpr size_t kFlushFloats = size_t(1) << 20;
  /// The sink a kernel should leave a term of n columns in, or null.
  static WeightGradSink* for_columns(WeightGradSink* sink, size_t n) { return n < kMaxColumns ? sink : nullptr; }

  /// Forgets every pending term (start of a backward pass).
  void reset() { terms_.clear(); }
  /// Leaves dW (m x k) += A (m x n) * B^T (k x n) for later; A and B (column-major,
  /// contiguous) must stay valid until the flush.
  void add(float* dw, const float* a, const float* b, size_t m, size_t k, size_t n);
  /// Adds every pending term of dW to it (or, given `into`, to that memory of
  /// dW's shape instead).  `scratch` holds the stacked operands for the
  /// duration of the call.
  void flush(float* dw, Arena& scratch, float* into = nullptr);
  /// Adds every pending term to its target.
  void flush_all(Arena& scratch);
  bool empty() const { return terms_.empty(); }
  size_t size() const { return terms_.size(); }

 private:
  struct Term {
    float* dw;
    const float* a;
    const float* b;
    uint32_t m, k, n;
  };
  std::vector<Term> terms_;
  std::vector<Term> batch_;  // the terms of the target being flushed
};

}  // namespace dynet_lite
