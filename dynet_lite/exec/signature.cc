#include "dynet_lite/exec/signature.h"

#include <cstring>
#include <list>
#include <utility>

#include "dynet_lite/core/hash.h"
#include "dynet_lite/exec/graph_memory.h"
#include "dynet_lite/exec/scheduler.h"

namespace dynet_lite {

namespace {

using hash::fold_dim;
using hash::mix;

bool can_batch(const Node& n, const OpInfo& info, const GraphMemory& m) {
  if (info.batch == BatchKind::Never) return false;
  if (info.batch == BatchKind::Custom && !info.batch_combine) return false;
  for (unsigned p = 0; p < n.num_args; ++p) {
    const Node& a = m.node(n.args[p]);
    if (is_shared_leaf(a)) continue;
    // Stacking needs every stacked argument to carry the node's own batch.
    if (a.value.d.bd != n.value.d.bd) return false;
  }
  return true;
}

/// The parameter words folded (hash::fold; most ops have none: all zero).
uint64_t fold_params(const Node& n) {
  static_assert(Node::kParamBytes == 48, "fold of six parameter words");
  uint64_t w[6];
  std::memcpy(w, n.params, sizeof(w));
  return hash::fold(w, 6);
}

/// Op, shape, each argument's shape (a shared leaf: which one) and the
/// parameters (or the op's batch key).  One mixed term per argument, combined
/// at the end: the terms are independent, so their multiplies overlap.
uint64_t signature_hash(const Node& n, const OpInfo& info, const GraphMemory& m) {
  uint64_t h = mix(fold_dim(n.value.d), 0x1234567ULL + static_cast<uint64_t>(n.op));
  for (unsigned p = 0; p < n.num_args; ++p) {
    const Node& a = m.node(n.args[p]);
    h ^= is_shared_leaf(a) ? mix(0x100000000ULL | n.args[p], 0x100 + p) : mix(fold_dim(a.value.d), 1 + p);
  }
  uint64_t own = 0;
  if (info.batch == BatchKind::Custom) {
    if (info.batch_key) own = info.batch_key(n);
  } else {
    own = fold_params(n);
  }
  return mix(h, own);
}

/// Where argument `a` of a segment node comes from: an offset inside the
/// segment (low bit 0) or a node before it (low bit 1).
inline uint64_t wiring(VariableIndex first, VariableIndex a) {
  return a >= first ? (static_cast<uint64_t>(a - first) << 1) : ((static_cast<uint64_t>(a) << 1) | 1);
}

class PlanCache {
 public:
  const BatchPlan* find(uint64_t key, const std::vector<uint64_t>& structure) {
    for (auto it = plans_.begin(); it != plans_.end(); ++it) {
      if (it->first == key && it->second.structure == structure) {
        plans_.splice(plans_.begin(), plans_, it);
        return &plans_.front().second;
      }
    }
    return nullptr;
  }
  bool contains(uint64_t key) const {
    for (const auto& p : plans_)
      if (p.first == key) return true;
    return false;
  }
  void insert(uint64_t key, BatchPlan plan) {
    plans_.emplace_front(key, std::move(plan));
    if (plans_.size() > kCapacity) plans_.pop_back();
  }
  // A plan is stored only when its structure comes a second time: a minibatch of
  // random sentences never repeats, and copying its description (a few hundred
  // KB) every graph would cost more than the look-up saves.  Structures seen once
  // are remembered by key in a small ring.
  bool seen_before(uint64_t key) {
    for (uint64_t k : seen_)
      if (k == key) return true;
    seen_[seen_next_] = key;
    seen_next_ = (seen_next_ + 1) % kSeen;
    return false;
  }

 private:
  static constexpr size_t kCapacity = 64;
  static constexpr size_t kSeen = 256;
  std::list<std::pair<uint64_t, BatchPlan>> plans_;  // most recent first
  uint64_t seen_[kSeen] = {};
  size_t seen_next_ = 0;
};

PlanCache& plan_cache() {
  thread_local PlanCache cache;
  return cache;
}

/// Writes the segment's full description into st.segment.structure: compared
/// against a cached plan (the key alone could collide) and stored with a new one.
void write_structure(const GraphMemory& m, BatchState& st, VariableIndex first, uint32_t n) {
  std::vector<uint64_t>& structure = st.segment.structure;
  structure.clear();
  for (uint32_t o = 0; o < n; ++o) {
    const Node& node = m.node(first + o);
    structure.push_back(st.segment.signature[o]);
    for (unsigned p = 0; p < node.num_args; ++p) structure.push_back(wiring(first, node.args[p]));
  }
}

}  // namespace

uint64_t describe_segment(const GraphMemory& m, BatchState& st, VariableIndex first, uint32_t n,
                          AutobatchStrategy strategy) {
  SegmentNodes& seg = st.segment;
  seg.signature.resize(n);
  seg.check.resize(n);
  seg.batchable.resize(n);
  seg.inner_arg_start.resize(n + 1);
  seg.inner_args.clear();
  seg.arg_start.resize(n + 1);
  seg.arg_ids.clear();
  uint64_t key = mix(n, static_cast<uint64_t>(strategy));
  const OpInfo* ops = op_rows();
  for (uint32_t o = 0; o < n; ++o) {
    const Node& node = m.node(first + o);
    const OpInfo& info = ops[static_cast<unsigned>(node.op)];
    const bool batchable = can_batch(node, info, m);
    const uint64_t h = batchable ? signature_hash(node, info, m)
                                 : mix(fold_dim(node.value.d), 0xabcdefULL + static_cast<uint64_t>(node.op));
    seg.signature[o] = h;
    // Checked when two nodes' signature hashes are equal (exec/scheduler.cc), so
    // that a collision of the 64-bit hashes cannot merge different ops or shapes.
    seg.check[o] =
        mix(fold_dim(node.value.d), 0x2545f4914f6cdd1dULL ^ (static_cast<uint64_t>(node.op) << 16 | node.num_args));
    seg.batchable[o] = batchable;
    seg.inner_arg_start[o] = static_cast<uint32_t>(seg.inner_args.size());
    seg.arg_start[o] = static_cast<uint32_t>(seg.arg_ids.size());
    // The node's part of the key, mixed with its position and added: the terms
    // of different nodes, and of one node's arguments, are independent (one
    // chain through the whole segment made hashing latency-bound).
    uint64_t local = h;
    for (unsigned p = 0; p < node.num_args; ++p) {
      const VariableIndex a = node.args[p];
      local ^= mix(wiring(first, a), 0x200 + p);
      if (a >= first) seg.inner_args.push_back(a - first);
      seg.arg_ids.push_back(a | (m.node(a).variable ? BatchGroup::kVariableBit : 0u));
    }
    key += mix(local, o);
  }
  seg.inner_arg_start[n] = static_cast<uint32_t>(seg.inner_args.size());
  seg.arg_start[n] = static_cast<uint32_t>(seg.arg_ids.size());
  return key;
}

const Schedule& plan_segment(const GraphMemory& m, BatchState& st, VariableIndex first, uint32_t n, uint64_t key,
                             AutobatchStrategy strategy) {
  PlanCache& cache = plan_cache();
  // The full description is written out only when a plan is compared or stored.
  bool described = false;
  if (cache.contains(key)) {
    write_structure(m, st, first, n);
    described = true;
    if (const BatchPlan* plan = cache.find(key, st.segment.structure)) {
      ++st.stats.plan_hits;
      return plan->schedule;
    }
  }
  ++st.stats.plan_misses;
  Schedule& schedule = st.scheduling.schedule;
  schedule_segment(m, st, first, n, strategy);
  if (cache.seen_before(key)) {
    if (!described) write_structure(m, st, first, n);
    cache.insert(key, BatchPlan{st.segment.structure, schedule});
  }
  return schedule;
}

}  // namespace dynet_lite
