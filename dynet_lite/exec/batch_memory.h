#pragma once
// Memory layout of batched groups.  A group runs its op's kernel once on its
// members' arguments stacked side by side.  Outputs of a group are allocated
// side by side in member order, so a later group whose arguments are an earlier
// group's outputs in the same order reads them in place; otherwise they are
// gathered into one block (forward), and gradients computed into one block are
// added back to the scattered arguments (backward).
#include <cstddef>
#include <cstdint>

#include "dynet_lite/exec/batch_state.h"

namespace dynet_lite {

struct GraphMemory;
struct DeviceArenas;
class Device;

/// The members' arguments and the values of nodes, read from BatchState's dense
/// arrays (filled while hashing and as groups run) instead of from the Nodes: a
/// group's members are scattered over the node arena, and reading a Node for each
/// member and each argument missed the cache.
struct DenseView {
  const BatchState& st;
  VariableIndex first;  // the segment's first node
  /// Argument p of segment node i, kVariableBit set when it needs a gradient.
  uint32_t arg_id(VariableIndex i, unsigned p) const { return st.segment.arg_ids[st.segment.arg_start[i - first] + p]; }
  VariableIndex arg(VariableIndex i, unsigned p) const { return arg_id(i, p) & ~BatchGroup::kVariableBit; }
  const float* value(VariableIndex a) const { return st.node_values[a]; }
  const float* arg_value(VariableIndex i, unsigned p) const { return value(arg(i, p)); }
};

/// Orders a group's members for the memory layout.  The schedule's order (longest
/// chain first, free groups in the order of their readers) is kept when it reads
/// its arguments in place; otherwise the order of the largest stacked argument's
/// address (arguments produced side by side by earlier groups, which allocate
/// their outputs in member order, are then read in place) is taken when it breaks
/// the layout less.
void order_members_by_layout(const GraphMemory& m, BatchState& st, const DenseView& dv, VariableIndex* members,
                             unsigned k);

/// Splits an ordered group into the pieces it runs as (st.forward.pieces), in
/// member order.  A group whose arguments come in a few long runs runs run by
/// run, each in place, rather than gathering every argument into one block;
/// consecutive members of short runs form one piece that gathers.  The pieces
/// write their outputs into one block for the group, so a later group sees them
/// side by side in member order.  Fragmented groups (short runs on average)
/// gather as a whole.  Counts split groups in st.stats.
void split_into_pieces(GraphMemory& m, BatchState& st, const DenseView& dv, VariableIndex* members, unsigned k);

/// Copies the k values `ids` (node ids, kVariableBit ignored), sz floats each,
/// side by side into `dst` on `dev`.
void gather_values(BatchState& st, const DenseView& dv, Device* dev, DeviceArenas& da, float* dst, const uint32_t* ids,
                   size_t sz, unsigned k);

/// Adds the k gradients of sz floats side by side at `src` into the gradients
/// (st.node_gradients) of the nodes `ids` that get one (m.marks), on `dev`.
/// Counts the bytes.
void scatter_add_gradients(const GraphMemory& m, BatchState& st, Device* dev, DeviceArenas& da, const float* src,
                           const uint32_t* ids, size_t sz, unsigned k);

}  // namespace dynet_lite
