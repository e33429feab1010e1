#pragma once
// Broadcasting for binary element-wise ops (DyNet's cwise semantics): in every
// dimension, and in the batch, the two sizes are equal or one of them is 1.
#include "dynet_lite/tensor.h"

namespace dynet_lite {

/// The broadcast shape of a and b, or a dim_error naming `op` and both shapes.
Dim broadcast_shape(const char* op, const Dim& a, const Dim& b);

/// Walks the elements of `out` (shape `od`) together with the matching element of
/// an argument of shape `ad` (broadcast into od).  Calls f(out_index, arg_index).
/// Dimensions are treated as 7 + 1 (batch), flattened where contiguous.
class BroadcastIndex {
 public:
  BroadcastIndex(const Dim& od, const Dim& ad);
  /// True when the argument has od's exact layout (no broadcasting).
  bool identity() const { return identity_; }
  template <class F>
  void for_each(F&& f) const {
    if (identity_) {
      for (size_t i = 0; i < total_; ++i) f(i, i);
      return;
    }
    size_t idx[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t a = 0;
    for (size_t o = 0; o < total_; ++o) {
      f(o, a);
      // increment the 8-digit counter
      for (unsigned k = 0; k < 8; ++k) {
        a += astride_[k];
        if (++idx[k] < size_[k]) break;
        a -= astride_[k] * size_[k];
        idx[k] = 0;
      }
    }
  }

 private:
  size_t size_[8];
  size_t astride_[8];  // 0 where the argument is broadcast
  size_t total_;
  bool identity_;
};

}  // namespace dynet_lite
