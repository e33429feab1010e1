#include "dynet_lite/core/cse.h"

#include <cstring>

#include "dynet_lite/core/graph_memory.h"

namespace dynet_lite {

namespace {

inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

uint64_t subexpression_hash(const Node& n) {
  uint64_t h = mix(static_cast<uint64_t>(n.op), n.num_args | (uint64_t(n.variable) << 16));
  h = mix(h, reinterpret_cast<uintptr_t>(n.value.device));
  const Dim& d = n.value.d;
  h = mix(h, d.nd | (static_cast<uint64_t>(d.bd) << 32));
  for (unsigned i = 0; i < d.nd; ++i) h = mix(h, d.d[i]);
  for (unsigned k = 0; k < n.num_args; ++k) h = mix(h, n.args[k]);
  uint64_t w[Node::kParamBytes / 8];
  std::memcpy(w, n.params, sizeof(w));
  for (uint64_t x : w) h = mix(h, x);
  return h;
}

}  // namespace

bool same_subexpression(const Node& a, const Node& b) {
  if (a.op != b.op || a.num_args != b.num_args || a.variable != b.variable || a.value.device != b.value.device ||
      a.value.d != b.value.d)
    return false;
  for (unsigned k = 0; k < a.num_args; ++k)
    if (a.args[k] != b.args[k]) return false;
  return std::memcmp(a.params, b.params, Node::kParamBytes) == 0;
}

VariableIndex SubexpressionTable::find_or_insert(const GraphMemory& m, VariableIndex idx, uint32_t stamp) {
  const Node& n = m.node(idx);
  const uint64_t h = subexpression_hash(n);
  if (2 * (count_ + 1) > slots_.size()) grow();
  const size_t mask = slots_.size() - 1;
  for (size_t s = h & mask;; s = (s + 1) & mask) {
    Slot& slot = slots_[s];
    if (slot.generation != generation_) {
      slot = Slot{h, idx, generation_};
      ++count_;
      return idx;
    }
    if (slot.hash != h || slot.node >= idx) continue;  // a node reverted away may have left its slot
    const Node& other = m.node(slot.node);
    if (other.stamp == stamp && same_subexpression(other, n)) return slot.node;
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
