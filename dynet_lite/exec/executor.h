#pragma once
// The graph's executor: runs the nodes of one ComputationGraph forward and
// backward and keeps track of how far it got.  Each ComputationGraph owns one.
//  - plain execution (exec/plain_executor.cc): node by node in the order they
//    were added;
//  - automatic batching: each segment of new nodes is described by signatures
//    (exec/signature.*), scheduled into groups (exec/scheduler.*), and each group
//    runs as one kernel call over its members' arguments laid out side by side
//    (exec/batch_memory.*, exec/batched_forward.cc); backward replays the groups
//    in reverse (exec/batched_backward.cc).
// Everything it allocates lives in the graph's memory (exec/graph_memory.h).
#include <memory>
#include <random>
#include <vector>

#include "dynet_lite/backends/device_graph.h"
#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/exec/graph_memory.h"
#include "dynet_lite/exec/plain_tape.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

/// The graph's settings a run follows.
struct RunOptions {
  AutobatchStrategy strategy = AutobatchStrategy::None;
  bool check_validity = false;  // throw on NaN or inf in values and gradients
  bool fusion = true;           // run the schedule's fused regions as such (exec/fusion.h)
};

class Executor {
 public:
  Executor(GraphMemory& memory, std::mt19937& rng) : m_(memory), rng_(rng) {}

  /// Computes the nodes [evaluated(), last].
  void forward(VariableIndex last, const RunOptions& options);
  /// Back-propagates from `last` (computed, one element per batch element),
  /// adding the parameter gradients into the model.  `full`: constant nodes
  /// get gradients too.
  void backward(VariableIndex last, bool full, const RunOptions& options);

  /// Nodes [0, evaluated()) have values.
  VariableIndex evaluated() const { return evaluated_; }
  bool backward_done() const { return backward_done_; }
  /// The node the last backward() started from (the loss).
  VariableIndex backward_from() const { return grads_upto_; }
  /// After backward(): points n.grad (node i) at its gradient and returns true,
  /// or returns false when no gradient reached it.
  bool find_gradient(VariableIndex i, Node& n) const;
  /// Forgets every value and gradient (the nodes stay).
  void invalidate();
  /// Starts over after the graph's memory was reset (ComputationGraph::clear).
  void reset() {
    evaluated_ = 0;
    captured_last_ = kNotCaptured;
    tape_.clear();
    backward_done_ = false;
    drop_device_graph();
  }
  /// Forgets the values computed after a checkpoint that had `evaluated` values.
  void revert(VariableIndex evaluated);

  /// Compiled programs (dynet_lite/compile.h, exec/replay.cc).  begin_capture()
  /// before the first forward of the whole graph, end_capture() after it: the
  /// values, the batched groups and the memory they used stay where they are,
  /// and replay_forward() computes every node [0, last] again, reading the
  /// inputs anew, without scheduling or allocating outside the graph's arenas
  /// (what the arenas hand out after the capture is taken back at each replay).
  void begin_capture();
  void end_capture(VariableIndex last);
  bool captured() const { return captured_last_ != kNotCaptured; }
  void replay_forward(const RunOptions& options);
  /// After a capture on one GPU `d`: a replay records the forward pass as a
  /// device graph (backends/device_graph.h) and launches it, later replays
  /// launch it again; a program of large nodes runs its first replay kernel by
  /// kernel before (replays_by_kernel_first_).  `live`: the host memory the
  /// graph's inputs are read from at each launch (the program's slots).  A
  /// batched capture's groups are recorded in their order; a launch first
  /// writes the groups' combined indices again (OpInfo::batch_refill).  Falls
  /// back to kernel-by-kernel replays when the device cannot record the pass.
  void use_device_graph(Device* d, std::vector<HostRange> live);
  /// Whether replays launch a recorded device graph.
  bool has_device_graph() const { return device_graph_ != nullptr; }
  /// Whether backward passes after such replays launch one too: the backward
  /// tape (exec/plain_tape.h) recorded on the device once the forward pass is
  /// a device graph.
  bool has_backward_device_graph() const { return backward_graph_ != nullptr; }
  /// Products of a captured graph run without batching that replays compute
  /// for several nodes at once (PlainTape::column_groups), and the nodes in them.
  std::pair<size_t, size_t> column_groups() const {
    size_t nodes = 0;
    for (const auto& g : tape_.column_groups) nodes += g.count;
    return {tape_.column_groups.size(), nodes};
  }
  /// Arguments of a captured graph run without batching on the CPU whose
  /// gradient replays take as their node's (PlainTape::passed).
  size_t passed_gradients() const { return tape_.has_backward ? tape_.passed : 0; }
  /// Forgets the device graphs (the values' memory is laid out anew).
  void drop_device_graph() {
    device_graph_.reset();
    drop_backward_device_graph();
    graph_device_ = nullptr;
    graph_failed_ = false;
    replays_by_kernel_ = 0;
  }

  /// Forgets the values and gradients but keeps the capture: a compiled
  /// program's memory went to another program.  (A graph that was run with
  /// batching loses the capture too.)
  void drop_values();
  /// A capture run with batching, its memory back after another program used
  /// it: where the arenas still have the capture's chunks, sets them at the
  /// capture's end and forgets the values (a replay computes them again where
  /// they were); otherwise drops the capture.
  void take_back_layout();
  /// Forgets the values of a capture run with batching, keeping the capture:
  /// its memory went to another program (take_back_layout takes it back).
  void forget_batched_values() {
    evaluated_ = 0;
    backward_done_ = false;
  }
  /// Whether the capture was run with batching (its groups hold where values lie).
  bool batched_capture() const { return captured() && m_.has_batch_groups(); }

 private:
  void forward_plain(VariableIndex last, const RunOptions& options);
  void forward_batched(VariableIndex last, const RunOptions& options);  // exec/batched_forward.cc
  void backward_plain(VariableIndex last, bool full, const RunOptions& options);
  void backward_batched(VariableIndex last, bool full, const RunOptions& options);  // exec/batched_backward.cc
  void replay_batched(const RunOptions& options);  // exec/batched_forward.cc
  /// Records the forward pass on graph_device_ and launches it; false when it
  /// cannot be recorded (nothing computed then).
  bool record_device_graph(const RunOptions& options);
  /// The same for a batched capture, and its launch.
  bool record_batched_device_graph(const RunOptions& options);
  /// A batched capture's arenas back at the capture's end, nothing computed.
  void rewind_batched_capture();
  /// The slots and the graph's host memory (where batched groups keep the
  /// indices and row lists a launch refills): what a batched recording reads
  /// again at each launch.
  std::vector<HostRange> live_with_graph_host_memory() const;
  void launch_batched_device_graph();
  /// After a batched forward launched as a device graph: launches the
  /// recorded backward pass from `last` (recording it the first time); false
  /// when the pass must run the ordinary way.
  bool batched_backward_device_graph(VariableIndex last, bool full, const RunOptions& options);
  /// A launched batched backward's host side: the leaf groups' accumulate
  /// calls logged while it was recorded (exec/batched_backward.cc).
  void batched_accumulates_host_side();
  /// The tape of a captured plain graph on one device (exec/plain_tape.h):
  /// its forward calls are written at the end of the capture, its backward
  /// steps while the first backward pass after it runs.
  void write_forward_tape(VariableIndex last);
  void replay_forward_tape();
  bool replay_backward_tape(VariableIndex last, bool full);
  void into_parameter_step(const PlainTape::Backward& step, const Tensor* const* args, ExecContext& ctx);
  void on_demand_step(const PlainTape::Backward& step, const Tensor* const* args, ExecContext& ctx, Arena& scratch);
  /// After a forward pass launched as a device graph: launches the backward
  /// tape's graph (recording it the first time); false when the pass must run
  /// the ordinary way.
  bool backward_device_graph(VariableIndex last, bool full);
  void drop_backward_device_graph() {
    backward_graph_.reset();
    backward_graph_failed_ = false;
  }
  PlainTape tape_;

  static constexpr VariableIndex kNotCaptured = ~VariableIndex(0);
  VariableIndex captured_last_ = kNotCaptured;
  Device* graph_device_ = nullptr;  // use_device_graph()
  std::vector<HostRange> graph_live_;
  std::unique_ptr<DeviceGraph> device_graph_;
  bool graph_failed_ = false;
  // Recording a device graph costs several kernel-by-kernel passes (most of
  // it the driver instantiating the graph).  A pass of small nodes is bound by
  // launching its kernels, so a launched graph soon pays for its recording:
  // such a program records at its first replay.  One of larger nodes (at
  // least kLaunchBoundFloats of value a kernel call on average) gains less a
  // launch and records at its second, so that a structure replayed only once
  // never pays for it; a batched one later still.
  static constexpr size_t kLaunchBoundFloats = 1024;
  // A batched pass of large groups (T6's minibatches of 64 sentences) gains
  // about a tenth of a replay a launch, and its graph holds 1,000-2,000 nodes
  // (4-10 ms to instantiate, 5-11 MB of the driver's host memory): it records
  // at its fourth replay, once the structure has shown that it repeats.
  static constexpr unsigned kBatchedReplaysByKernel = 3;
  unsigned replays_by_kernel_first_ = 1;
  unsigned replays_by_kernel_ = 0;  // since use_device_graph()
  std::unique_ptr<DeviceGraph> backward_graph_;  // of tape_.backward
  // A batched capture's recorded graph: the groups refilled before a launch,
  // and where the recording left the arenas (the graph's memory up to there).
  std::vector<size_t> refill_groups_;
  Arena::Mark graph_meta_end_;
  std::vector<Arena::Mark> graph_values_end_, graph_gathers_end_;
  // ... and of its backward: the loss it starts from, the gradient memory's
  // chunks and end, and where the graph's host memory stood after it.
  VariableIndex backward_graph_last_ = 0;
  bool backward_graph_full_ = false;
  std::vector<std::pair<const char*, size_t>> backward_graph_chunks_;
  Arena::Mark backward_grads_end_, backward_meta_end_;
  bool backward_graph_failed_ = false;
  // While a pass is recorded on graph_device_: each node (forward) or tape
  // step (backward) is marked as a step of the recording, with the steps it
  // waits for, and per-step scratch memory is kept apart (not rewound).
  bool mark_steps_ = false;
  class StepMarks;

  GraphMemory& m_;
  std::mt19937& rng_;
  VariableIndex evaluated_ = 0;
  VariableIndex grads_upto_ = 0;  // nodes [0, grads_upto_] have gradients after backward
  bool grads_full_ = false;       // the last backward() was full: constant nodes have gradients too
  bool backward_done_ = false;
};

/// The kernels of `info` on `device`; throw unsupported_error when it has none.
inline ForwardFn forward_kernel(const OpInfo& info, const Device* device) {
  const ForwardFn f = info.forward[static_cast<unsigned>(device->type)];
  if (!f) throw_missing_kernel(info, device, "forward");
  return f;
}
inline BackwardFn backward_kernel(const OpInfo& info, const Device* device) {
  const BackwardFn b = info.backward[static_cast<unsigned>(device->type)];
  if (!b) throw_missing_kernel(info, device, "backward");
  return b;
}

/// Throws numeric_error when node i's `what` ("value", "gradient") has a NaN or inf.
void check_finite(const Tensor& t, const char* what, const char* op, VariableIndex i);

}  // namespace dynet_lite
