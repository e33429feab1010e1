#pragma once
// What a kernel may use besides its node: scratch memory that lives for one
// kernel call, memory that lives until the graph is cleared, memory a backward
// call keeps for its node's other calls and for the weight-gradient terms it
// leaves for later, and the graph's own random engine.
#include <cstring>
#include <random>

#include "dynet_lite/core/arena.h"

namespace dynet_lite {

class WeightGradSink;
class TransposedWeights;
class InputGradSink;

class ExecContext {
 public:
  ExecContext(Arena* graph_memory, Arena* scratch, std::mt19937* rng, Device* device, Arena* host_memory = nullptr)
      : graph_memory_(graph_memory), scratch_(scratch), rng_(rng), device_(device), host_memory_(host_memory) {}

  /// Device memory valid until the graph is cleared (e.g. a dropout mask for backward).
  float* persistent_floats(size_t n) { return graph_memory_->allocate_floats(n); }
  /// Host memory valid until the graph is cleared (index lists the host builds,
  /// e.g. when batching merges nodes); the same as persistent on the CPU.
  void* host_bytes(size_t n) { return (host_memory_ ? host_memory_ : graph_memory_)->allocate(n); }
  /// Host memory that forward keeps for the backward that follows (indices read
  /// through a user's pointer): on the CPU in the value memory, taken back with
  /// the values when the graph is computed again; elsewhere as host_bytes.
  void* forward_host_bytes(size_t n) {
    if (device_ && device_->type == DeviceType::CPU) return graph_memory_->allocate(n);
    return host_bytes(n);
  }
  /// Memory valid during the current kernel call only.
  float* scratch_floats(size_t n) { return scratch_->allocate_floats(n); }
  /// Backward: memory valid for the rest of the current node's calls (its
  /// node_memo) and until every weight-gradient term left for later has been
  /// summed.  The CPU executors take it back between nodes once no term is
  /// pending (GraphMemory::end_backward_node); elsewhere it is persistent.
  float* kept_floats(size_t n) { return (kept_ ? kept_ : graph_memory_)->allocate_floats(n); }
  void set_kept(Arena* kept) { kept_ = kept; }
  std::mt19937& rng() { return *rng_; }
  Device* device() const { return device_; }
  /// Backward of a product whose weight is a parameter node (CPU): where the
  /// kernel may leave dW += A B^T for later (see backends/cpu/weight_grads.h); null when
  /// it must add the term itself.
  WeightGradSink* weight_grads() const { return weight_grads_; }
  void set_weight_grads(WeightGradSink* sink) { weight_grads_ = sink; }
  /// Backward on the CPU: transposed copies of the matrices kept for the pass
  /// (backends/cpu/transposed_weights.h); null elsewhere.
  TransposedWeights* transposes() const { return transposes_; }
  void set_transposes(TransposedWeights* t) { transposes_ = t; }
  /// Backward runs once per argument of a node.  What those calls share (the
  /// gradient of a fused op's pre-activation, say) a kernel may compute at the
  /// first call, in kept memory, and leave here: the executor clears it
  /// (begin_node) before the first argument of each node.
  float*& node_memo() { return memo_; }
  void begin_node() { memo_ = nullptr; }
  /// Backward on the CPU, for an op whose OpInfo has assigns_gradient: dx holds
  /// no gradient yet (not even zeros), and the kernel must write every element of
  /// it instead of adding to it, or else leave its term in the weight-gradient
  /// sink (weight_grads) without touching dx.  The executors set it where dx is
  /// a gradient no kernel has written yet, which is then not zeroed first.
  bool assign_dx() const { return assign_dx_; }
  void set_assign_dx(bool a) { assign_dx_ = a; }
  /// Forward of an op with a ColumnProduct (core/op_info.h): its product W x,
  /// computed by a compiled program with other nodes' (m floats), or null.
  const float* precomputed_product() const { return precomputed_; }
  void set_precomputed_product(const float* p) { precomputed_ = p; }
  /// Backward of such an op for its operand (CPU, a compiled program): where the
  /// kernel leaves its term dx += W^T d for later instead of adding it, or null.
  InputGradSink* input_grads() const { return input_grads_; }
  void set_input_grads(InputGradSink* sink) { input_grads_ = sink; }
  /// For such a kernel on a path that adds to dx (n floats): zeroes dx first when
  /// it was asked to assign it.
  void zero_if_assigned(float* dx, size_t n) const {
    if (assign_dx_) std::memset(dx, 0, n * sizeof(float));
  }
  /// For a kernel writing dx (n floats) batch element by batch element:
  /// whether it assigns dx, as asked to (assign_dx).  It can where dx has the
  /// node's batch (`same_batch`); a dx broadcast over the batch sums the
  /// elements' terms, so it is zeroed here where it was asked to be assigned,
  /// and the kernel adds.
  bool assign_by_batch(float* dx, size_t n, bool same_batch) const {
    if (same_batch && assign_dx_) return true;
    zero_if_assigned(dx, n);
    return false;
  }

 private:
  Arena* graph_memory_;
  Arena* scratch_;
  std::mt19937* rng_;
  Device* device_;
  Arena* host_memory_;
  Arena* kept_ = nullptr;
  WeightGradSink* weight_grads_ = nullptr;
  TransposedWeights* transposes_ = nullptr;
  float* memo_ = nullptr;
  const float* precomputed_ = nullptr;
  InputGradSink* input_grads_ = nullptr;
  bool assign_dx_ = false;
};

}  // namespace dynet_lite
