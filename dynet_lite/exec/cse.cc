#include "dynet_lite/exec/cse.h"

#include <algorithm>
#include <cstring>

#include "dynet_lite/core/hash.h"
#include "dynet_lite/exec/graph_memory.h"

namespace dynet_lite {

namespace {

using hash::finish;
using hash::mix_fast;

// A leaf's own contents: op, device, trainability, shape and parameters.
uint64_t leaf_hash(const Node& n) {
  uint64_t h =
      mix_fast(static_cast<uint64_t>(n.op) | (uint64_t(n.variable) << 32), reinterpret_cast<uintptr_t>(n.value.device));
  h = hash::dim(h, n.value.d, mix_fast);
  uint64_t w[Node::kParamBytes / 8];
  std::memcpy(w, n.params, sizeof(w));
  for (uint64_t word : w) h = mix_fast(h, word);
  return finish(h) | 1;  // never 0
}

bool same_own(const Node& a, const Node& b) {
  return a.op == b.op && a.num_args == b.num_args && a.variable == b.variable && a.value.device == b.value.device &&
         a.value.d == b.value.d && std::memcmp(a.params, b.params, Node::kParamBytes) == 0;
}

bool is_pure(const OpInfo& info, const Node& n) { return info.pure && (!info.pure_node || info.pure_node(n)); }

bool pure_leaf(const OpInfo* ops, const Node& n) {
  const OpInfo& info = ops[static_cast<unsigned>(n.op)];
  return info.leaf && is_pure(info, n);
}

}  // namespace

// entry, canonical and newest_argument run for every node added while merging
// is on: inlined into add(), as calls they cost about 3% of the word tagger's
// batched training.
__attribute__((always_inline)) inline SubexpressionTable::Entry& SubexpressionTable::entry(VariableIndex i) {
  if (i >= entries_.size()) entries_.resize(std::max<size_t>(1024, 2 * size_t(i)), Entry{0, 0, 0, 0});
  Entry& e = entries_[i];
  if (e.generation != generation_) e = Entry{generation_, i, kNone, kNone};  // added while merging was off
  return e;
}

VariableIndex SubexpressionTable::canonical_leaf(const GraphMemory& m, VariableIndex a) {
  const Node& n = m.node(a);
  const uint64_t h = leaf_hash(n);
  if (2 * (leaf_count_ + 1) > leaf_slots_.size()) grow_leaves();
  const size_t mask = leaf_slots_.size() - 1;
  for (size_t s = h & mask;; s = (s + 1) & mask) {
    LeafSlot& slot = leaf_slots_[s];
    if (slot.generation != generation_) {
      slot = LeafSlot{h, a, generation_};
      ++leaf_count_;
      return a;
    }
    if (slot.hash != h || slot.node >= a) continue;  // a node reverted away may have left its slot
    const Node& other = m.node(slot.node);
    if (other.stamp == n.stamp && same_own(other, n)) return slot.node;
  }
}

__attribute__((always_inline)) inline VariableIndex SubexpressionTable::canonical(const GraphMemory& m,
                                                                                  const OpInfo* ops, VariableIndex a) {
  const bool known = a < entries_.size() && entries_[a].generation == generation_;
  Entry& e = entry(a);
  if (!known && pure_leaf(ops, m.node(a))) e.canonical = canonical_leaf(m, a);
  return e.canonical;
}

__attribute__((always_inline)) inline VariableIndex SubexpressionTable::newest_argument(const GraphMemory& m,
                                                                                        const OpInfo* ops,
                                                                                        VariableIndex idx) {
  const Node& n = m.node(idx);
  VariableIndex newest = 0;
  for (unsigned k = 0; k < n.num_args; ++k) newest = std::max(newest, canonical(m, ops, n.args[k]));
  return newest;
}

VariableIndex SubexpressionTable::add(GraphMemory& m, const OpInfo* ops, VariableIndex idx, uint64_t candidate,
                                      uint32_t stamp) {
  const Node& n = m.node(idx);
  if (candidate == 0) {  // never merged; a pure leaf still stands for its equals
    entry(idx).canonical = pure_leaf(ops, n) ? canonical_leaf(m, idx) : idx;
    return idx;
  }
  const VariableIndex newest = newest_argument(m, ops, idx);
  for (VariableIndex j = entry(newest).first_reader; j != kNone && j < idx; j = entries_[j].next_reader) {
    const Node& other = m.node(j);
    if (other.stamp != stamp) break;  // older readers are from before a revert too
    if (!same_own(other, n)) continue;
    bool same = true;
    for (unsigned k = 0; k < n.num_args && same; ++k) {
      const VariableIndex a = other.args[k], b = n.args[k];
      same = a == b || canonical(m, ops, a) == canonical(m, ops, b);
    }
    if (!same) continue;
    // The node and the arguments told equal stand for their copies from now on.
    m.node(j).merged = true;
    for (unsigned k = 0; k < n.num_args; ++k)
      if (other.args[k] != n.args[k]) m.node(other.args[k]).merged = m.node(n.args[k]).merged = true;
    return j;
  }
  Entry& mine = entry(idx);
  Entry& list = entry(newest);  // after entry(idx): that may grow the vector
  // A head at or after idx was reverted away: the lists only point backwards.
  mine.next_reader = list.first_reader < idx ? list.first_reader : kNone;
  list.first_reader = idx;
  return idx;
}

void SubexpressionTable::grow_leaves() {
  std::vector<LeafSlot> old;
  old.swap(leaf_slots_);
  leaf_slots_.assign(old.empty() ? 1024 : 2 * old.size(), LeafSlot{0, 0, 0});
  const size_t mask = leaf_slots_.size() - 1;
  const uint32_t g = generation_;
  for (const LeafSlot& o : old) {
    if (o.generation != g) continue;
    size_t s = o.hash & mask;
    while (leaf_slots_[s].generation == g) s = (s + 1) & mask;
    leaf_slots_[s] = o;
  }
}

}  // namespace dynet_lite
