#include "dynet_lite/exec/executor.h"

#include <algorithm>

#include "dynet_lite/backends/cpu/gemm.h"
#include "dynet_lite/core/float_mode.h"
#include "dynet_lite/core/exec_context.h"

namespace dynet_lite {

void throw_missing_kernel(const OpInfo& info, const Device* d, const char* pass) {
  DYNET_LITE_CHECK(false, unsupported_error, info.name << " is not implemented on " << d->name << " (" << pass << ")");
}

void check_finite(const Tensor& t, const char* what, const char* op, VariableIndex i) {
  if (t.is_valid()) return;
  DYNET_LITE_CHECK(false, numeric_error,
                   "set_check_validity: the " << what << " of node " << i << " (" << op << ", shape " << t.d
                                              << ") contains NaN or inf");
}

void Executor::forward(VariableIndex last, const RunOptions& options) {
  FlushDenormals flush_denormals;
  // Values computed here lie elsewhere than the recorded graph's: it is recorded again.
  if (device_graph_ && evaluated_ <= last) device_graph_.reset();
  if (options.strategy != AutobatchStrategy::None)
    forward_batched(last, options);
  else
    forward_plain(last, options);
}

void Executor::backward(VariableIndex last, bool full, const RunOptions& options) {
  FlushDenormals flush_denormals;
  grads_upto_ = last;
  grads_full_ = full;
  // After batched execution, backward follows the recorded groups.
  if (m_.has_batch_groups()) {
    // After a launched forward graph of a batched capture: a recorded backward.
    if (!(device_graph_ && !options.check_validity && batched_backward_device_graph(last, full, options)))
      backward_batched(last, full, options);
  } else
    backward_plain(last, full, options);
  cpu::detail::release_library_heap();
}

bool Executor::find_gradient(VariableIndex i, Node& n) const {
  if (!m_.has_batch_groups()) return i <= grads_upto_ && m_.marks.size() > i && m_.marks[i] != GradientMark::None;
  // Batched backward keeps gradients in a dense array and leaves members' Nodes
  // alone.  A constant node batched with nodes that need gradients has a slot
  // too; without `full` it reports zero, as in plain execution.
  const std::vector<float*>& gradients = m_.batch_state().node_gradients;
  if (!(i < gradients.size() && gradients[i] && (grads_full_ || n.variable))) return false;
  n.grad = gradients[i];
  return true;
}

void Executor::invalidate() {
  evaluated_ = 0;
  captured_last_ = kNotCaptured;
  tape_.clear();
  drop_device_graph();
  backward_done_ = false;
  if (m_.batch_state_) m_.batch_state_->clear_groups();
  for (auto& a : m_.device_arenas) {
    a->values.reset();
    a->gathers.reset();
    a->grads.reset();
    a->kept.reset();
  }
}

void Executor::revert(VariableIndex evaluated) {
  // Values computed after the checkpoint (even of older nodes) are dropped.
  evaluated_ = std::min(evaluated_, evaluated);
  captured_last_ = kNotCaptured;
  tape_.clear();
  drop_device_graph();
  if (m_.batch_state_) {
    // Groups run after the checkpoint hold only nodes computed after it.
    auto& groups = m_.batch_state_->groups;
    while (!groups.empty() && groups.back().members[0] >= evaluated_) groups.pop_back();
  }
  backward_done_ = false;
}

}  // namespace dynet_lite
