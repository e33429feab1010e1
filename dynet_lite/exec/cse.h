#pragma once
// Common subexpression elimination while a graph is built.
//
// A minibatch of sentences or trees repeats itself: "the" is looked up, and its
// Tree-LSTM leaf computed, once per occurrence; a character LSTM runs the same
// first steps for every word that begins with "un".  When a node is added whose
// op is pure (OpInfo::pure: no randomness, no user memory read at forward time)
// and whose op, arguments, parameters, shape, device and trainability equal
// those of a node already in the graph, the graph returns that node instead of
// adding a copy.  Its arguments are then already shared, so a node built on top
// of it is found again too, and a repeated subtree costs nothing at all.
// Leaves (lookups, parameters, constants) are never merged themselves: they
// cost nothing, and a batched lookup block keeps the layout its reader wants.
// They are compared by what they are instead of by index, so two lookups of
// one row are the same argument.
//
// Values are those of the copies; every parameter gradient is the same sum as
// without merging.  What changes is that the copies are one node (and two equal
// leaves feed it as one): its gradient (get_gradient) is theirs together, so the
// graph refuses to report the gradient of a node marked merged
// (ComputationGraph::get_gradient says why).  On by default when automatic
// batching is (--dynet-cse, ComputationGraph::set_cse).
//
// A node equal to a new one reads the same arguments, so it is found among
// the earlier readers of one of them: each node keeps the list of the pure
// nodes that took it as their newest argument, and a new node walks the list
// of its own newest argument (a few nodes, added shortly before, so in the
// caches).  Pure leaves are made one by a hash table of their contents, the
// only table lookups left (a table over every node missed the caches on almost
// every lookup).  Everything is reset in O(1) by a generation counter; a
// candidate is trusted only after comparing the node it names.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dynet_lite/core/node.h"
#include "dynet_lite/core/op_info.h"

namespace dynet_lite {

struct GraphMemory;

class SubexpressionTable {
 public:
  /// Forgets every node (a new graph).  O(1).
  void reset() {
    if (++generation_ == 0) {  // wrapped: old entries could look current
      for (LeafSlot& s : leaf_slots_) s.generation = 0;
      for (Entry& e : entries_) e.generation = 0;
      generation_ = 1;
    }
    leaf_count_ = 0;
  }
  /// Node `n` (of op row `info`), filled in but for its shape, is about to be
  /// added: fetches what add() will read while the shape is computed.  Returns
  /// 0 for a node that is never merged (not pure, or a leaf), else non-zero.
  /// Inline: the graph calls it for every node it adds.
  uint64_t prepare(const Node& n, const OpInfo& info) {
    if (n.num_args == 0 || !info.pure || (info.pure_node && !info.pure_node(n))) return 0;
    // The list to walk starts at the newest argument's entry.
    VariableIndex newest = n.args[0];
    for (unsigned k = 1; k < n.num_args; ++k) newest = std::max(newest, n.args[k]);
    if (newest < entries_.size()) __builtin_prefetch(&entries_[newest]);
    return 1;
  }
  /// Node `idx` now has its shape (and is not yet counted in the graph).  Returns
  /// an earlier node equal to it, marking that node and the arguments told equal
  /// as merged, or `idx` after recording it.  Every node added while merging is
  /// on comes here, so that its consumers find it.  Nodes of another `stamp`
  /// (before a revert) are not reused.  `ops`: the op table's rows;
  /// `candidate`: what prepare() returned.
  VariableIndex add(GraphMemory& m, const OpInfo* ops, VariableIndex idx, uint64_t candidate, uint32_t stamp);

 private:
  /// What the table knows of node i (valid when `generation` is current).
  struct Entry {
    uint32_t generation;
    VariableIndex canonical;     // the node standing for it as an argument (an equal earlier leaf, or itself)
    VariableIndex first_reader;  // newest pure node whose newest argument it is (kNone: none)
    VariableIndex next_reader;   // the next older node in the list of its own newest argument
  };
  struct LeafSlot {
    uint64_t hash;
    VariableIndex node;
    uint32_t generation;  // the slot is empty unless it equals generation_
  };
  static constexpr VariableIndex kNone = 0xffffffffu;

  Entry& entry(VariableIndex i);
  VariableIndex canonical(const GraphMemory& m, const OpInfo* ops, VariableIndex a);
  VariableIndex canonical_leaf(const GraphMemory& m, VariableIndex a);
  VariableIndex newest_argument(const GraphMemory& m, const OpInfo* ops, VariableIndex idx);
  void grow_leaves();

  std::vector<Entry> entries_;        // by node index
  std::vector<LeafSlot> leaf_slots_;  // size a power of two (or 0)
  size_t leaf_count_ = 0;
  uint32_t generation_ = 1;
};

}  // namespace dynet_lite
