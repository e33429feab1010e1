#include "dynet_lite/exec/cse.h"

#include <algorithm>
#include <cstring>

#include "dynet_lite/core/hash.h"
#include "dynet_lite/exec/graph_memory.h"

namespace dynet_lite {

namespace {

using hash::finish;
using hash::mix_fast;
inline uint64_t index_key(VariableIndex i) { return (uint64_t(i) + 1) * 0xd6e8feb86659fd93ULL; }

// Everything of a node but its arguments (and, unless `with_shape`, its shape);
// `words`: how many 8-byte words of its parameters may be non-zero.
uint64_t own_hash(const Node& n, size_t words, bool with_shape = true) {
  uint64_t h = mix_fast(static_cast<uint64_t>(n.op) | (uint64_t(n.num_args) << 16) | (uint64_t(n.variable) << 32),
                        reinterpret_cast<uintptr_t>(n.value.device));
  if (with_shape) h = hash::dim(h, n.value.d, mix_fast);
  uint64_t w[Node::kParamBytes / 8];
  std::memcpy(w, n.params, sizeof(w));
  for (size_t k = 0; k < words; ++k) h = mix_fast(h, w[k]);
  return h;
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

// A node's key computed from the node itself (see Key): a pure leaf's hashes
// all its parameter words, so that it does not depend on how it was added.
uint64_t key_from_node(const OpInfo* ops, const Node& n, VariableIndex i) {
  return pure_leaf(ops, n) ? finish(own_hash(n, Node::kParamBytes / 8)) : index_key(i);
}

}  // namespace

void SubexpressionTable::set_key(VariableIndex idx, uint64_t key, uint32_t stamp) {
  if (idx >= keys_.size()) keys_.resize(std::max<size_t>(1024, 2 * size_t(idx)), Key{0, 0, 0});
  keys_[idx] = Key{key, generation_, stamp};
}

uint64_t SubexpressionTable::key_of(const GraphMemory& m, const OpInfo* ops, VariableIndex a) const {
  const Node& n = m.node(a);
  if (a < keys_.size() && keys_[a].generation == generation_ && keys_[a].stamp == n.stamp) return keys_[a].key;
  return key_from_node(ops, n, a);  // added while merging was off
}

uint64_t SubexpressionTable::prepare(const GraphMemory& m, const OpInfo* ops, VariableIndex idx, size_t params_size) {
  const Node& n = m.node(idx);
  if (n.num_args == 0 || !is_pure(ops[static_cast<unsigned>(n.op)], n)) return 0;
  uint64_t h = own_hash(n, (params_size + 7) / 8, false);
  for (unsigned k = 0; k < n.num_args; ++k) h = mix_fast(h, key_of(m, ops, n.args[k]));
  h = finish(h) | 1;  // never 0
  if (2 * (count_ + 1) > slots_.size()) grow();
  __builtin_prefetch(&slots_[h & (slots_.size() - 1)]);
  return h;
}

VariableIndex SubexpressionTable::add(GraphMemory& m, const OpInfo* ops, VariableIndex idx, uint64_t h,
                                      uint32_t stamp) {
  const Node& n = m.node(idx);
  if (h == 0) {  // not looked up
    set_key(idx, key_from_node(ops, n, idx), stamp);
    return idx;
  }
  const size_t mask = slots_.size() - 1;
  for (size_t s = h & mask;; s = (s + 1) & mask) {
    Slot& slot = slots_[s];
    if (slot.generation != generation_) {
      slot = Slot{h, idx, generation_};
      ++count_;
      set_key(idx, index_key(idx), stamp);
      return idx;
    }
    if (slot.hash != h || slot.node >= idx) continue;  // a node reverted away may have left its slot
    const Node& other = m.node(slot.node);
    if (other.stamp != stamp || !same_own(other, n)) continue;
    bool same = true;
    for (unsigned k = 0; k < n.num_args && same; ++k) {
      const VariableIndex a = other.args[k], b = n.args[k];
      same = a == b || (pure_leaf(ops, m.node(a)) && same_own(m.node(a), m.node(b)));
    }
    if (!same) continue;
    // The node and the arguments told equal stand for their copies from now on.
    m.node(slot.node).merged = true;
    for (unsigned k = 0; k < n.num_args; ++k)
      if (other.args[k] != n.args[k]) m.node(other.args[k]).merged = m.node(n.args[k]).merged = true;
    return slot.node;
  }
}

void SubexpressionTable::grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.empty() ? 1024 : 2 * old.size(), Slot{0, 0, 0});
  const size_t mask = slots_.size() - 1;
  const uint32_t g = generation_;
  for (const Slot& o : old) {
    if (o.generation != g) continue;
    size_t s = o.hash & mask;
    while (slots_[s].generation == g) s = (s + 1) & mask;
    slots_[s] = o;
  }
}

}  // namespace dynet_lite
