#pragma once
// A compiled program's plain execution as a tape: the kernel calls of one
// forward and one backward pass over a captured graph, with everything the
// executor decides per node (which kernel, which argument tensors, which
// gradients flow, when deferred weight gradients are summed) decided once.
// Replays of a program run without batching on one device walk the tape, so
// they cost the kernels and little else (exec/replay.cc, plain_executor.cc).
//
// The tape holds pointers into the graph's nodes, which never move, and relies
// on each pass laying its memory out as the recorded one did: values and
// gradients are allocated again in the same order from the same arena
// positions, and a backward pass whose gradient block lands elsewhere (its
// arena was reorganised) runs the ordinary way and records the tape again.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "dynet_lite/core/node.h"
#include "dynet_lite/core/op_info.h"

namespace dynet_lite {

struct PlainTape {
  /// One node's forward call.
  struct Forward {
    ForwardFn f;
    Node* n;
    uint32_t xs;        // offset of its argument tensors in `args`
    uint32_t nargs;
    bool allocate;      // the value is allocated here (not by the kernel)
    /// Its ColumnProduct, computed by a group: the offset of its column among
    /// the groups' products (columns_floats), or kNoColumn.
    uint32_t column = kNoColumn;
  };
  static constexpr uint32_t kNoColumn = ~uint32_t(0);
  /// The products W x of forward steps sharing W (core/op_info.h
  /// ColumnProduct), computed at once before step `at`, the first of them: the
  /// operands (k floats each) are copied side by side and multiplied in one
  /// column-exact call into the groups' products from `out`.
  struct ColumnGroup {
    uint32_t at;
    void (*product)(const float* w, size_t m, size_t k, const float* x, size_t n, float* y);
    const Tensor* w;
    uint32_t m, k;
    uint32_t operands;  // offset of its operands in column_operands
    uint32_t count;
    uint32_t out;
  };
  /// One step of the backward pass, in order.
  struct Backward {
    /// kZero: zeroes n's gradient.  kParameter: a dense parameter's node whose
    /// gradient no kernel wrote: its deferred terms are summed into the
    /// parameter's gradient (PlainBackward::reach_parameter).  kIntoParameter:
    /// a call (as kCall) whose argument is a large parameter's node that n
    /// alone reads: the kernel writes the weight gradient straight into the
    /// parameter's while that is zero (PlainBackward::into_parameter).
    /// kOnDemand: node n's backward on its gradient, which `arg`, its loss,
    /// remakes a block of columns at a time (GradientMark::OnDemand): bit j of
    /// k says that argument j's gradient goes into its parameter's while that
    /// is zero; without begin_node no argument gets a gradient (CPU tapes).
    enum Kind : uint8_t { kFlush, kAccumulate, kCall, kZero, kParameter, kIntoParameter, kOnDemand } kind;
    bool begin_node;    // kCall: the first call of its node (ExecContext::begin_node)
    bool weight_grads;  // kCall: weight gradients may be deferred (CPU to CPU)
    bool assign;        // kCall: the kernel is asked to assign dx (ExecContext::assign_dx)
    /// kCall: the operand's term of a ColumnProduct may be left in the input
    /// sink (ExecContext::input_grads).
    bool input_later;
    /// The input sink's terms are summed before this step: it reads or writes
    /// a gradient one of them adds to.
    bool flush_inputs;
    uint32_t k;         // kCall: the argument
    Node* n;
    Node* arg;          // kCall: node of argument k
    VariableIndex at;   // kIntoParameter: the index of `arg`; kOnDemand: of n
    uint32_t xs, nargs; // kCall: as in the node's Forward
    union {
      BackwardFn b;
      AccumulateFn accumulate;
    };
  };

  std::vector<const Tensor*> args;  // argument tensors of every call, node after node
  std::vector<Forward> forward;
  Device* device = nullptr;         // every node's
  std::vector<ColumnGroup> column_groups;  // in the order their steps run
  std::vector<const Tensor*> column_operands;
  /// The groups' products, side by side: the floats a replay takes for them
  /// (from its scratch memory, for the forward pass).
  size_t columns_floats = 0;
  /// The forward steps' order when a group's operands (leaves) run earlier
  /// than their nodes' places; empty: node order.
  std::vector<uint32_t> order;

  bool has_backward = false;
  std::vector<Backward> backward;
  VariableIndex backward_from = 0;  // the loss it ran from
  bool full = false;
  const float* block = nullptr;     // where the gradient block lay
  size_t block_floats = 0;
  /// The block is zeroed slot by slot, by kZero steps and assigning kernels,
  /// instead of as a whole before the first step (CPU); the small gradients'
  /// slots, zeroed when given, lie in these ranges of it (offset, floats),
  /// zeroed before the first step.
  bool zeroes_slots = false;
  std::vector<std::pair<size_t, size_t>> zeroed_ranges;
  /// Arguments whose gradient is their node's memory (plan_passed_gradients).
  size_t passed = 0;

  void clear() {
    args.clear();
    forward.clear();
    device = nullptr;
    column_groups.clear();
    column_operands.clear();
    columns_floats = 0;
    order.clear();
    drop_backward();
  }
  void drop_backward() {
    has_backward = false;
    backward.clear();
    zeroed_ranges.clear();
    passed = 0;
  }
};

/// For each step of a backward tape, the earlier steps it must follow when
/// steps may run side by side (a GPU's recorded graph, backends/device_graph.h):
/// a step reading a node's gradient follows the last step that wrote it; every
/// step writing a gradient follows the last one that wrote the same gradient
/// (so the additions into it keep the tape's order); the calls of one node
/// follow each other (they may share what its first call computed); and the
/// steps writing parameters' gradients follow each other.  Steps with no
/// predecessor follow only what the pass did before its first step (zeroing
/// the gradients).  `after[s]` lists step s's predecessors, all below s.
struct StepOrder {
  std::vector<uint32_t> offsets;  // step s: after[offsets[s] .. offsets[s + 1])
  std::vector<uint32_t> after;
  const uint32_t* of(size_t s) const { return after.data() + offsets[s]; }
  size_t count(size_t s) const { return offsets[s + 1] - offsets[s]; }
};
StepOrder backward_step_order(const std::vector<PlainTape::Backward>& steps);

/// Groups the forward steps whose op has a ColumnProduct that applies by their
/// weight: steps sharing W whose operands are computed before the first of them
/// (or are leaves that can run earlier, PlainTape::order) get their products
/// from one call there (PlainTape::column_groups).  CPU tapes.
void plan_column_groups(PlainTape& tape, const OpInfo* ops);
/// Drops the backward calls that would only copy a node's gradient into an
/// argument's (OpInfo::passes_gradient: the x of x + b, say) where that call is
/// the only write to the argument's gradient: the argument's gradient becomes
/// the node's own memory (its Node::grad points there), which holds what the
/// call would have written, 0 + dy (a zero's sign aside: -0 stays -0).  Its
/// zeroing steps go too, and a dropped call that began its node hands that to
/// the node's next call (a node with no other call keeps its step).  Internal
/// nodes (whose slots are reused), leaves and nodes of kOnDemand steps keep
/// their own gradients.  CPU tapes, before plan_input_terms.
void plan_passed_gradients(PlainTape& tape, const OpInfo* ops);
/// Marks the backward calls that leave an operand's term for later (those of
/// the grouped forward steps) and the steps before which the pending terms are
/// summed: the first step after a term that reads or writes its target
/// gradient, so that each gradient gets its additions in the tape's order.
/// Gradients are told apart by their memory, so that one shared by
/// plan_passed_gradients is one gradient.
void plan_input_terms(PlainTape& tape, const OpInfo* ops);

}  // namespace dynet_lite
