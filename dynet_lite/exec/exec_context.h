#pragma once
// What a kernel may use besides its node: scratch memory that lives for one
// kernel call, memory that lives until the graph is cleared, and the graph's own
// random engine.
#include <random>

#include "dynet_lite/core/arena.h"

namespace dynet_lite {

class ExecContext {
 public:
  ExecContext(Arena* graph_memory, Arena* scratch, std::mt19937* rng, Device* device)
      : graph_memory_(graph_memory), scratch_(scratch), rng_(rng), device_(device) {}

  /// Memory valid until the graph is cleared (e.g. a dropout mask for backward).
  float* persistent_floats(size_t n) { return graph_memory_->allocate_floats(n); }
  /// Memory valid during the current kernel call only.
  float* scratch_floats(size_t n) { return scratch_->allocate_floats(n); }
  std::mt19937& rng() { return *rng_; }
  Device* device() const { return device_; }

 private:
  Arena* graph_memory_;
  Arena* scratch_;
  std::mt19937* rng_;
  Device* device_;
};

}  // namespace dynet_lite
