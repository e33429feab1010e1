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
// The table is open addressing over node indices, reset in O(1) by a generation
// counter; an entry is trusted only after comparing the node it names.
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
      for (Slot& s : slots_) s.generation = 0;
      for (Key& k : keys_) k.generation = 0;
      generation_ = 1;
    }
    count_ = 0;
  }
  /// For node `idx`, filled in but for its shape (op, arguments, `params_size`
  /// bytes of parameters, trainability, device): the hash add() will look up,
  /// its slot already on the way to the cache; 0 for a node not looked up (not
  /// pure, or a leaf).  Its shape is left out: the rest determines it.
  uint64_t prepare(const GraphMemory& m, const OpInfo* ops, VariableIndex idx, size_t params_size);
  /// Node `idx` now has its shape (and is not yet counted in the graph).  Returns
  /// an earlier node equal to it, marking that node and the arguments told equal
  /// as merged, or `idx` after recording it.  Every node added while merging is
  /// on comes here, so that its consumers find its key.  Nodes of another
  /// `stamp` (before a revert) are not reused.  `ops`: the op table's rows.
  VariableIndex add(GraphMemory& m, const OpInfo* ops, VariableIndex idx, uint64_t hash, uint32_t stamp);

 private:
  struct Slot {
    uint64_t hash;
    VariableIndex node;
    uint32_t generation;  // the slot is empty unless it equals generation_
  };
  // What a node contributes to its consumers' hash: its own hash for a pure
  // leaf (two lookups of one row are the same argument), else its index.
  struct Key {
    uint64_t key;
    uint32_t generation;
    uint32_t stamp;  // the node's: a slot reused after a revert has another
  };
  void grow();
  uint64_t key_of(const GraphMemory& m, const OpInfo* ops, VariableIndex a) const;
  void set_key(VariableIndex idx, uint64_t key, uint32_t stamp);

  std::vector<Slot> slots_;  // size a power of two (or 0)
  std::vector<Key> keys_;    // by node index
  size_t count_ = 0;
  uint32_t generation_ = 1;
};

}  // namespace dynet_lite
