#pragma once
// A graph node: plain data in the graph's node arena.  No virtual functions, no
// heap memory of its own: what an op needs to remember sits in `params`.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "dynet_lite/core/op_kind.h"
#include "dynet_lite/tensor.h"

namespace dynet_lite {

using VariableIndex = unsigned;

struct Node {
  static constexpr size_t kParamBytes = 48;

  Tensor value;                       // shape set when added; memory set by forward
  float* grad = nullptr;              // dE/dvalue, shaped as the value; set by backward
  const VariableIndex* args = nullptr;  // in the graph's arena
  void* aux = nullptr;                // per-node memory kept from forward to backward
  OpKind op = OpKind::Count;
  uint16_t num_args = 0;
  bool variable = false;  // depends on a trainable parameter (needs a gradient)
  bool merged = false;    // stands for several equal expressions (exec/cse.h)
  /// A builder's own step that no caller holds an expression to (an LSTM's
  /// gates): once its backward has run, plain backward may give its gradient's
  /// memory to another such node (exec/plain_executor.cc).
  bool internal = false;
  /// Nodes added after this one that read it, one per argument (saturates at
  /// 255; never fewer than the readers, so "1" means the only one).
  uint8_t readers = 0;
  uint32_t stamp = 0;     // the graph's revert count when added: old expressions to a reused slot are stale
  alignas(8) unsigned char params[kParamBytes];

  /// The op's parameters, stored inline.
  template <class P>
  const P& p() const {
    static_assert(sizeof(P) <= kParamBytes && std::is_trivially_copyable<P>::value,
                  "op parameters must be small plain data");
    return *reinterpret_cast<const P*>(params);
  }
  template <class P>
  P& p() {
    return *reinterpret_cast<P*>(params);
  }
};

/// A node's gradient as a tensor (its value's shape and device).
inline Tensor gradient_tensor(const Node& n) { return Tensor(n.value.d, n.grad, n.value.device, DeviceMempool::DEDFS); }

}  // namespace dynet_lite
