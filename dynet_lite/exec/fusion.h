#pragma once
// Fusion of element-wise work in batched execution.  Scheduled groups whose ops
// are element-wise (tanh, logistic, cmult, +, -, 1 - x, sum, ...: the ops with
// span kernels, OpInfo::span_forward) or contiguous slices (pick_range whose
// range is one block of each member's value) are put off until a group that
// cannot be fused reads one of them, and run together as one fused region,
// one kernel call: no virtual node, no stacking or gathering of
// arguments, no shape checks per group.  Each member reads its arguments where
// they lie, instance by instance (a lane: the nodes of one instance linked by
// the region's own edges, run one after another while they are in the cache),
// and a slice is a view of its argument: nothing is copied.  Every other node
// writes its value into its group's block, members side by side in schedule
// order, so the groups after the region find them as unfused groups would.
// Backward runs the region's groups in reverse, adding each member's gradient
// into its arguments' gradients where they lie.
//
// The regions are found when a segment is scheduled (plan_fusion) and cached
// with its schedule.
#include <cstddef>
#include <cstdint>

#include "dynet_lite/exec/batch_state.h"

namespace dynet_lite {

struct GraphMemory;
struct DenseView;

/// Fills the fused regions of st.scheduling.schedule, the schedule of the n
/// nodes from `first` described in st.segment (exec/scheduler.cc calls it).
void plan_fusion(const GraphMemory& m, BatchState& st, VariableIndex first, uint32_t n);

/// Runs region r of `schedule` (groups from `first_group`, whose members start at
/// `member_pos` in schedule.members) and records its groups in st.groups.
/// Returns false, having done nothing, when its nodes are not on the CPU (the
/// caller then runs its groups unfused).
bool run_fused_region(GraphMemory& m, BatchState& st, const DenseView& dv, const Schedule& schedule, size_t r,
                      size_t member_pos);

/// Computes again the values of the recorded fused region st.groups[g ...]
/// (a compiled program's replay): outputs where they were, slices pointed anew.
/// Returns the number of groups of the region.
size_t replay_fused_region(GraphMemory& m, BatchState& st, size_t g);

/// What backward of a fused region needs from the batched backward pass.
class FusedBackwardHost {
 public:
  /// Zeroes the gradient block of node i's group unless it was done already.
  virtual void ensure_zero(VariableIndex i) = 0;
  /// Whether the block of node i's group was never zeroed (nothing wrote to it).
  virtual bool unwritten(VariableIndex i) const = 0;
  /// Takes over the unwritten block of node i's group without zeroing it: the
  /// caller writes every float of it.
  virtual void claim(VariableIndex i) = 0;

 protected:
  ~FusedBackwardHost() = default;
};

/// Back-propagates through the fused region whose last group is st.groups[g]
/// (gradients in st.node_gradients, marks in m.marks).  Returns the index of the
/// region's first group.
size_t backward_fused_region(GraphMemory& m, BatchState& st, size_t g, FusedBackwardHost& host);

}  // namespace dynet_lite
