// The order a backward tape's steps must keep when they may run side by side
// (exec/plain_tape.h).
#include "dynet_lite/exec/plain_tape.h"

#include <algorithm>
#include <unordered_map>

namespace dynet_lite {

StepOrder backward_step_order(const std::vector<PlainTape::Backward>& steps) {
  constexpr uint32_t kNone = ~0u;
  std::unordered_map<const Node*, uint32_t> last_write;  // of a node's gradient
  std::unordered_map<const Node*, uint32_t> last_call;   // of a node's backward calls
  uint32_t last_accumulate = kNone;
  auto last_of = [](const std::unordered_map<const Node*, uint32_t>& m, const Node* n) {
    auto it = m.find(n);
    return it == m.end() ? kNone : it->second;
  };
  StepOrder order;
  order.offsets.reserve(steps.size() + 1);
  order.offsets.push_back(0);
  uint32_t deps[4];
  for (uint32_t s = 0; s < steps.size(); ++s) {
    const PlainTape::Backward& step = steps[s];
    unsigned nd = 0;
    deps[nd++] = last_of(last_write, step.n);  // reads (and, flushing, writes) the node's gradient
    switch (step.kind) {
      case PlainTape::Backward::kFlush:
      case PlainTape::Backward::kZero:
        last_write[step.n] = s;
        break;
      case PlainTape::Backward::kParameter:
        last_write[step.n] = s;
        [[fallthrough]];
      case PlainTape::Backward::kAccumulate:
        deps[nd++] = last_accumulate;
        last_accumulate = s;
        break;
      case PlainTape::Backward::kCall:
        deps[nd++] = last_of(last_call, step.n);
        deps[nd++] = last_of(last_write, step.arg);
        last_call[step.n] = s;
        last_write[step.arg] = s;
        break;
    }
    std::sort(deps, deps + nd);
    for (unsigned k = 0; k < nd; ++k)
      if (deps[k] != kNone && (k == 0 || deps[k] != deps[k - 1])) order.after.push_back(deps[k]);
    order.offsets.push_back(static_cast<uint32_t>(order.after.size()));
  }
  return order;
}

}  // namespace dynet_lite
