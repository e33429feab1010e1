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
//
// Values are those of the copies; every parameter gradient is the same sum as
// without merging.  What changes is that the copies are one node: its gradient
// (get_gradient) is theirs together, so the graph refuses to report it
// (ComputationGraph::get_gradient says why).  On by default when automatic
// batching is (--dynet-cse, ComputationGraph::set_cse).
//
// The table is open addressing over node indices, reset in O(1) by a generation
// counter; an entry is trusted only after comparing the node it names.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dynet_lite/core/node.h"

namespace dynet_lite {

struct GraphMemory;

class SubexpressionTable {
 public:
  /// Forgets every node (a new graph).  O(1).
  void reset() {
    if (++generation_ == 0) {  // wrapped: old entries could look current
      for (Slot& s : slots_) s.generation = 0;
      generation_ = 1;
    }
    count_ = 0;
  }
  /// An earlier node equal to node `idx` (filled in, not yet counted in the
  /// graph), or `idx` itself after recording it.  Nodes of another `stamp` (added
  /// before a revert) are not reused.
  VariableIndex find_or_insert(const GraphMemory& m, VariableIndex idx, uint32_t stamp);

 private:
  struct Slot {
    uint64_t hash;
    VariableIndex node;
    uint32_t generation;  // the slot is empty unless it equals generation_
  };
  void grow();

  std::vector<Slot> slots_;  // size a power of two (or 0)
  size_t count_ = 0;
  uint32_t generation_ = 1;
};

/// Whether two filled nodes compute the same value (op, arguments, parameters,
/// shape, device, trainability).
bool same_subexpression(const Node& a, const Node& b);

}  // namespace dynet_lite
