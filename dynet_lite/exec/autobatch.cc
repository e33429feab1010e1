// Automatic batching (--dynet-autobatch 1 agenda, 2 depth).
//
// Forward over a segment [first, last] of not-yet-computed nodes:
//  1. each node gets a signature: op, output shape, per argument either "the same
//     parameter node" (shared, passed once and broadcast) or its shape (stacked),
//     and the op's parameters (or its batch key for Custom ops); equal signatures
//     can run as one kernel call;
//  2. a schedule groups ready nodes of one signature: agenda (repeatedly the
//     signature whose ready nodes have the greatest average height, the longest
//     path to the end of the segment) or depth (all nodes of one signature at one
//     depth together); schedules are cached by the segment's structure;
//  3. each group runs the op's own kernel once on a virtual node whose batch is
//     the members' batches stacked; outputs are allocated side by side, so a later
//     group whose arguments are an earlier group's outputs in the same order needs
//     no copy; otherwise arguments are gathered (bytes counted).
// Backward replays the groups in reverse with gradients laid out the same way.
#include "dynet_lite/exec/autobatch.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <list>
#include <mutex>
#include <utility>

#include <Eigen/Core>

#include "dynet_lite/backends/batch_copies.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/graph_memory.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::mutex& totals_mutex() {
  static std::mutex m;
  return m;
}
AutobatchStats& totals() {
  static AutobatchStats s;
  return s;
}

inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

uint64_t hash_dim(uint64_t h, const Dim& d) {
  h = mix(h, d.nd | (static_cast<uint64_t>(d.bd) << 32));
  for (unsigned i = 0; i < d.nd; i += 2)  // two dimensions a word
    h = mix(h, d.d[i] | (i + 1 < d.nd ? static_cast<uint64_t>(d.d[i + 1]) << 32 : 0));
  return h;
}

/// A parameter node is passed once to a batched kernel rather than stacked.
inline bool is_shared_leaf(const Node& a) { return a.op == OpKind::Parameter; }

bool can_batch(const Node& n, const OpInfo& info, GraphMemory& m) {
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

uint64_t signature_hash(const Node& n, const OpInfo& info, GraphMemory& m) {
  uint64_t h = mix(0x1234567ULL, static_cast<uint64_t>(n.op));
  h = hash_dim(h, n.value.d);
  for (unsigned p = 0; p < n.num_args; ++p) {
    const Node& a = m.node(n.args[p]);
    if (is_shared_leaf(a))
      h = mix(h, 0x100000000ULL | n.args[p]);
    else
      h = hash_dim(mix(h, 2), a.value.d);
  }
  if (info.batch == BatchKind::Custom) {
    if (info.batch_key) h = mix(h, info.batch_key(n));
  } else {
    // The parameter words folded with independent multiplies, then mixed once
    // (most ops have none: all zero).
    static_assert(Node::kParamBytes == 48, "fold of six parameter words");
    uint64_t w[6];
    std::memcpy(w, n.params, sizeof(w));
    const uint64_t folded = (w[0] * 0x9e3779b97f4a7c15ULL) ^ (w[1] * 0xc2b2ae3d27d4eb4fULL) ^
                            (w[2] * 0x165667b19e3779f9ULL) ^ (w[3] * 0xd6e8feb86659fd93ULL) ^
                            (w[4] * 0xff51afd7ed558ccdULL) ^ (w[5] * 0xc4ceb9fe1a85ec53ULL) ^
                            ((w[0] ^ w[1] ^ w[2] ^ w[3] ^ w[4] ^ w[5]) >> 29);
    h = mix(h, folded);
  }
  return h;
}

constexpr uint32_t kSolo = 0xffffffffu;

// ------------------------------------------------------------ plan cache
struct PlanCache {
  static constexpr size_t kCapacity = 64;
  std::list<std::pair<uint64_t, BatchPlan>> plans;  // most recent first

  const BatchPlan* find(uint64_t key, const std::vector<uint64_t>& structure) {
    for (auto it = plans.begin(); it != plans.end(); ++it) {
      if (it->first == key && it->second.structure == structure) {
        plans.splice(plans.begin(), plans, it);
        return &plans.front().second;
      }
    }
    return nullptr;
  }
  bool contains(uint64_t key) const {
    for (const auto& p : plans)
      if (p.first == key) return true;
    return false;
  }
  void insert(uint64_t key, BatchPlan plan) {
    plans.emplace_front(key, std::move(plan));
    if (plans.size() > kCapacity) plans.pop_back();
  }
  // A plan is stored only when its structure comes a second time: a minibatch of
  // random sentences never repeats, and copying its description (a few hundred
  // KB) every graph would cost more than the look-up saves.  Structures seen once
  // are remembered by key in a small ring.
  static constexpr size_t kSeen = 256;
  uint64_t seen[kSeen] = {};
  size_t seen_next = 0;
  bool seen_before(uint64_t key) {
    for (uint64_t k : seen)
      if (k == key) return true;
    seen[seen_next] = key;
    seen_next = (seen_next + 1) % kSeen;
    return false;
  }
};
PlanCache& plan_cache() {
  thread_local PlanCache cache;
  return cache;
}

}  // namespace

void AutobatchStats::add(const AutobatchStats& o) {
  nodes += o.nodes;
  kernels += o.kernels;
  batched_groups += o.batched_groups;
  split_groups += o.split_groups;
  bytes_gathered += o.bytes_gathered;
  bytes_scattered += o.bytes_scattered;
  plan_hits += o.plan_hits;
  plan_misses += o.plan_misses;
  graphs += o.graphs;
  cse_merged += o.cse_merged;
  build_seconds += o.build_seconds;
  copy_seconds += o.copy_seconds;
  schedule_seconds += o.schedule_seconds;
  forward_seconds += o.forward_seconds;
  backward_seconds += o.backward_seconds;
}

std::string AutobatchStats::summary() const {
  char buf[512];
  auto ms = [](double s) { return s * 1e3; };
  std::snprintf(buf, sizeof(buf),
                "nodes %llu, kernels %llu (%llu batched groups, %llu run in place in pieces; %llu without batching), "
                "build %.3f ms, "
                "schedule %.3f ms, forward %.3f ms, backward %.3f ms, copies %.3f ms (gathered %llu B, "
                "scattered %llu B), plan cache %llu hits / %llu misses, %llu expressions merged",
                static_cast<unsigned long long>(nodes), static_cast<unsigned long long>(kernels),
                static_cast<unsigned long long>(batched_groups), static_cast<unsigned long long>(split_groups),
                static_cast<unsigned long long>(nodes), ms(build_seconds), ms(schedule_seconds), ms(forward_seconds),
                ms(backward_seconds), ms(copy_seconds), static_cast<unsigned long long>(bytes_gathered),
                static_cast<unsigned long long>(bytes_scattered), static_cast<unsigned long long>(plan_hits),
                static_cast<unsigned long long>(plan_misses), static_cast<unsigned long long>(cse_merged));
  return buf;
}

AutobatchStats autobatch_totals() {
  std::lock_guard<std::mutex> lock(totals_mutex());
  return totals();
}
void add_to_autobatch_totals(const AutobatchStats& s) {
  std::lock_guard<std::mutex> lock(totals_mutex());
  totals().add(s);
}
void reset_autobatch_totals() {
  std::lock_guard<std::mutex> lock(totals_mutex());
  totals() = AutobatchStats();
}

std::vector<const char*> unbatchable_ops() {
  std::vector<const char*> r;
  for (unsigned i = 0; i < kNumOps; ++i) {
    const OpInfo& info = op_info(static_cast<OpKind>(i));
    if (info.leaf) continue;
    if (info.batch == BatchKind::Never || (info.batch == BatchKind::Custom && !info.batch_combine))
      r.push_back(info.name);
  }
  return r;
}

// ------------------------------------------------------------ scheduling

/// Whether a node reads no argument that batching would stack (none, or only
/// parameters): its group may lay its outputs out in any order.
static bool reads_nothing_stacked(GraphMemory& m, const Node& n) {
  for (unsigned p = 0; p < n.num_args; ++p)
    if (!is_shared_leaf(m.node(n.args[p]))) return false;
  return true;
}

/// A group free to choose its order (lookups, inputs, constants) takes the order
/// in which its outputs are first read: the first group reading them finds them
/// side by side, in its own order, and reads them in place.  For a BiLSTM the
/// word vectors come out step by step, each step's block in the order the
/// forward (or backward) LSTM's group of that step wants them.
static void order_free_groups(GraphMemory& m, BatchState& st, VariableIndex first, uint32_t n) {
  bool any_free = false;
  size_t pos = 0;
  for (uint32_t k : st.group_sizes_buf) {
    any_free |= k > 1 && reads_nothing_stacked(m, m.node(first + st.group_buf[pos]));
    pos += k;
  }
  if (!any_free) return;
  st.place.resize(n);
  pos = 0;
  for (size_t g = 0; g < st.group_sizes_buf.size(); ++g) {
    for (uint32_t j = 0; j < st.group_sizes_buf[g]; ++j)
      st.place[st.group_buf[pos + j]] = (static_cast<uint64_t>(g) << 32) | j;
    pos += st.group_sizes_buf[g];
  }
  pos = 0;
  for (size_t g = 0; g < st.group_sizes_buf.size(); ++g) {
    const uint32_t k = st.group_sizes_buf[g];
    uint32_t* members = st.group_buf.data() + pos;
    pos += k;
    if (k < 2 || !reads_nothing_stacked(m, m.node(first + members[0]))) continue;
    // Outputs read by two families of groups (a word vector by the forward and by
    // the backward LSTM, in different orders) can be laid out for one of them
    // only.  The family of the earliest reader is chosen, and every member goes
    // where its reader of that family wants it: that family's groups all read in
    // place and only the other one gathers.  (The first reader of each member,
    // family by family, made both families' groups part in place, part not, and
    // most of them gathered.)  Members no reader of that family reads follow
    // their first reader.
    uint64_t earliest = ~uint64_t(0);
    uint32_t family = kSolo;
    for (uint32_t j = 0; j < k; ++j)
      for (uint32_t d = st.dep_start[members[j]]; d < st.dep_start[members[j] + 1]; ++d)
        if (st.place[st.dep_list[d]] < earliest) {
          earliest = st.place[st.dep_list[d]];
          family = st.sig[st.dep_list[d]];
        }
    // (reader's place, member) pairs, sorted by place; ties keep their order.
    st.keyed.resize(k);
    for (uint32_t j = 0; j < k; ++j) {
      const uint32_t o = members[j];
      uint64_t use = ~uint64_t(0), use_in_family = ~uint64_t(0);
      for (uint32_t d = st.dep_start[o]; d < st.dep_start[o + 1]; ++d) {
        const uint32_t reader = st.dep_list[d];
        use = std::min(use, st.place[reader]);
        if (family != kSolo && st.sig[reader] == family) use_in_family = std::min(use_in_family, st.place[reader]);
      }
      st.keyed[j] = {use_in_family != ~uint64_t(0) ? use_in_family : use, o};
    }
    std::stable_sort(st.keyed.begin(), st.keyed.end(),
                     [](const std::pair<uint64_t, uint32_t>& a, const std::pair<uint64_t, uint32_t>& b) {
                       return a.first < b.first;
                     });
    for (uint32_t j = 0; j < k; ++j) members[j] = st.keyed[j].second;
  }
}

/// Fills st.group_buf / st.group_sizes_buf with the schedule of [first, last].
static void schedule_segment(GraphMemory& m, BatchState& st, VariableIndex first, VariableIndex last, int strategy) {
  const uint32_t n = last - first + 1;
  st.sig.assign(n, kSolo);
  st.depth.assign(n, 0);
  st.pending.assign(n, 0);
  st.dep_start.assign(n + 1, 0);
  st.buckets.clear();
  size_t table_size = 64;
  while (table_size < 2 * n) table_size <<= 1;
  st.table.assign(table_size, 0);

  // Signatures, depths, dependency counts, from the arguments inside the segment
  // listed while hashing (st.arg_start / st.arg_list): no node is read again.
  for (uint32_t o = 0; o < n; ++o) {
    uint32_t depth = 0;
    for (uint32_t q = st.arg_start[o]; q < st.arg_start[o + 1]; ++q) {
      const uint32_t a = st.arg_list[q];
      depth = std::max(depth, st.depth[a] + 1);
      ++st.dep_start[a + 1];
    }
    st.depth[o] = depth;
    st.pending[o] = st.arg_start[o + 1] - st.arg_start[o];
    if (!st.batchable[o]) continue;
    // Equal signatures are recognised by their 64-bit hash, which covers all of
    // the signature (as the plan cache's key does); op and shape are checked too.
    const uint64_t h = st.node_hash[o];
    const size_t mask = table_size - 1;
    for (size_t slot = h & mask;; slot = (slot + 1) & mask) {
      uint32_t b = st.table[slot];
      if (b == 0) {
        st.buckets.push_back({kSolo, kSolo, 0, 0, o, h, st.node_check[o]});
        st.table[slot] = static_cast<uint32_t>(st.buckets.size());
        st.sig[o] = static_cast<uint32_t>(st.buckets.size() - 1);
        break;
      }
      BatchState::Bucket& bk = st.buckets[b - 1];
      if (bk.hash == h) {
        // From the dense arrays: reading the Nodes here streamed megabytes per graph.
        DYNET_LITE_CHECK(st.node_check[o] == bk.check, internal_error,
                         "autobatch: nodes " << first + o << " (" << op_name(m.node(first + o).op) << ") and "
                                             << first + bk.rep << " (" << op_name(m.node(first + bk.rep).op)
                                             << ") of different ops or shapes share one signature hash");
        st.sig[o] = b - 1;
        break;
      }
    }
  }
  // Dependents in CSR form.
  for (uint32_t o = 0; o < n; ++o) st.dep_start[o + 1] += st.dep_start[o];
  st.dep_list.resize(st.dep_start[n]);
  {
    std::vector<uint32_t>& fill = st.next_ready;  // reused as a cursor here
    fill.assign(st.dep_start.begin(), st.dep_start.end() - 1);
    for (uint32_t o = 0; o < n; ++o)
      for (uint32_t q = st.arg_start[o]; q < st.arg_start[o + 1]; ++q) st.dep_list[fill[st.arg_list[q]]++] = o;
  }

  st.group_buf.clear();
  st.group_sizes_buf.clear();

  // Height: the longest path from a node to the end of the segment.
  st.height.assign(n, 0);
  for (uint32_t o = n; o-- > 0;) {
    uint32_t h = 0;
    for (uint32_t k = st.dep_start[o]; k < st.dep_start[o + 1]; ++k) h = std::max(h, st.height[st.dep_list[k]] + 1);
    st.height[o] = h;
  }

  // Within a group, the members with the longest path still ahead come first: the
  // chains that stop earliest (the shorter sentences) sit at the end of the block,
  // so the next step's group, one member fewer per finished chain, reads a prefix
  // of it in place.
  auto longer_first = [&](uint32_t a, uint32_t b) {
    return st.height[a] != st.height[b] ? st.height[a] > st.height[b] : a < b;
  };

  if (strategy == 2) {
    // Depth strategy: sort by (depth, signature); each run is a group.
    st.order.resize(n);
    for (uint32_t o = 0; o < n; ++o) st.order[o] = o;
    std::sort(st.order.begin(), st.order.end(), [&](uint32_t a, uint32_t b) {
      if (st.depth[a] != st.depth[b]) return st.depth[a] < st.depth[b];
      if (st.sig[a] != st.sig[b]) return st.sig[a] < st.sig[b];
      return longer_first(a, b);
    });
    for (uint32_t i = 0; i < n;) {
      uint32_t j = i + 1;
      uint32_t s = st.sig[st.order[i]];
      if (s != kSolo)
        while (j < n && st.depth[st.order[j]] == st.depth[st.order[i]] && st.sig[st.order[j]] == s) ++j;
      st.group_sizes_buf.push_back(j - i);
      for (uint32_t k = i; k < j; ++k) st.group_buf.push_back(st.order[k]);
      i = j;
    }
    order_free_groups(m, st, first, n);
    return;
  }

  // Agenda strategy.
  st.next_ready.assign(n, kSolo);
  st.active.clear();
  st.solo.clear();
  auto make_ready = [&](uint32_t o) {
    uint32_t s = st.sig[o];
    if (s == kSolo) {
      st.solo.push_back(o);
      return;
    }
    BatchState::Bucket& b = st.buckets[s];
    if (b.count == 0) {
      b.head = o;
      st.active.push_back(s);
    } else {
      st.next_ready[b.tail] = o;
    }
    b.tail = o;
    st.next_ready[o] = kSolo;
    ++b.count;
    b.height_sum += st.height[o];
  };
  for (uint32_t o = 0; o < n; ++o)
    if (st.pending[o] == 0) make_ready(o);
  auto finish = [&](uint32_t o) {
    for (uint32_t k = st.dep_start[o]; k < st.dep_start[o + 1]; ++k) {
      uint32_t d = st.dep_list[k];
      if (--st.pending[d] == 0) make_ready(d);
    }
  };
  std::vector<uint32_t>& ready_now = st.order;
  while (!st.solo.empty() || !st.active.empty()) {
    if (!st.solo.empty()) {
      // Nodes that never batch run as soon as they are ready.
      uint32_t o = st.solo.back();
      st.solo.pop_back();
      st.group_sizes_buf.push_back(1);
      st.group_buf.push_back(o);
      finish(o);
      continue;
    }
    // The signature whose ready nodes lie farthest from the end on average: the
    // critical path runs first, and work off it (an output layer, a softmax)
    // waits until more of it is ready, so it runs in fewer, larger groups.
    // Averages compared as fractions (sum_i count_best > sum_best count_i): no
    // division per candidate.
    size_t best = 0;
    uint64_t best_sum = st.buckets[st.active[0]].height_sum, best_count = st.buckets[st.active[0]].count;
    for (size_t i = 1; i < st.active.size(); ++i) {
      const BatchState::Bucket& b = st.buckets[st.active[i]];
      if (b.height_sum * best_count > best_sum * b.count) {
        best_sum = b.height_sum;
        best_count = b.count;
        best = i;
      }
    }
    uint32_t s = st.active[best];
    st.active[best] = st.active.back();
    st.active.pop_back();
    BatchState::Bucket& b = st.buckets[s];
    ready_now.clear();
    for (uint32_t o = b.head; o != kSolo; o = st.next_ready[o]) ready_now.push_back(o);
    b.count = 0;
    b.height_sum = 0;
    // Longest chain first (see longer_first), as one integer key per member.
    st.keys.clear();
    bool ordered = true;
    for (uint32_t o : ready_now) {
      st.keys.push_back((static_cast<uint64_t>(~st.height[o]) << 32) | o);
      ordered &= st.keys.size() == 1 || st.keys[st.keys.size() - 2] < st.keys.back();
    }
    if (!ordered) {
      std::sort(st.keys.begin(), st.keys.end());
      for (size_t j = 0; j < ready_now.size(); ++j) ready_now[j] = static_cast<uint32_t>(st.keys[j]);
    }
    st.group_sizes_buf.push_back(static_cast<uint32_t>(ready_now.size()));
    for (uint32_t o : ready_now) st.group_buf.push_back(o);
    for (uint32_t o : ready_now) finish(o);
  }
  order_free_groups(m, st, first, n);
}

// ------------------------------------------------------------ execution

/// The members' arguments and the values of nodes, read from BatchState's dense
/// arrays (filled while hashing and as groups run) instead of from the Nodes: a
/// group's members are scattered over the node arena, and reading a Node for each
/// member and each argument missed the cache.
struct DenseView {
  const BatchState& st;
  VariableIndex first;  // the segment's first node
  /// Argument p of segment node i, kVariableBit set when it needs a gradient.
  uint32_t arg_id(VariableIndex i, unsigned p) const { return st.seg_args[st.seg_arg_start[i - first] + p]; }
  VariableIndex arg(VariableIndex i, unsigned p) const { return arg_id(i, p) & ~BatchGroup::kVariableBit; }
  const float* value(VariableIndex a) const { return st.value_of[a]; }
  const float* arg_value(VariableIndex i, unsigned p) const { return value(arg(i, p)); }
};

/// How far a group is from reading its stacked arguments in place, in this member
/// order: for each stacked argument, its size times the number of members whose
/// value does not follow the previous member's.  0: no copy at all; a few breaks:
/// a few runs that each read in place.
static size_t layout_breaks(GraphMemory& m, const DenseView& dv, const VariableIndex* members, unsigned k) {
  const Node& n0 = m.node(members[0]);
  size_t cost = 0;
  for (unsigned p = 0; p < n0.num_args; ++p) {
    const Node& a0 = m.node(n0.args[p]);
    if (is_shared_leaf(a0)) continue;
    const size_t sz = a0.value.d.size();
    const float* prev = a0.value.v;
    bool same = true;
    size_t breaks = 0;
    for (unsigned j = 1; j < k; ++j) {
      const float* v = dv.arg_value(members[j], p);
      same &= v == a0.value.v;
      breaks += v != prev + sz;
      prev = v;
    }
    if (!(same && a0.value.d.bd == 1)) cost += breaks * sz;
  }
  return cost;
}

/// Orders a group's members for the memory layout.  The schedule's order (longest
/// chain first, free groups in the order of their readers) is kept when it reads
/// its arguments in place; otherwise the order of the largest stacked argument's
/// address (arguments produced side by side by earlier groups, which allocate
/// their outputs in member order, are then read in place) is taken when it breaks
/// the layout less.
static void order_members_by_layout(GraphMemory& m, const DenseView& dv, VariableIndex* members, unsigned k) {
  const size_t planned = layout_breaks(m, dv, members, k);
  if (planned == 0) return;
  const Node& n0 = m.node(members[0]);
  unsigned p = n0.num_args;
  size_t largest = 0;
  for (unsigned q = 0; q < n0.num_args; ++q) {
    const Node& a = m.node(n0.args[q]);
    if (is_shared_leaf(a)) continue;
    if (p == n0.num_args || a.value.d.size() > largest) {
      p = q;
      largest = a.value.d.size();
    }
  }
  if (p == n0.num_args) return;  // leaves and ops on shared parameters only
  // Sort (address, member) pairs: one look-up per member instead of two per comparison.
  thread_local std::vector<std::pair<const float*, VariableIndex>> keyed;
  thread_local std::vector<VariableIndex> sorted_members;
  keyed.resize(k);
  bool sorted = true;
  for (unsigned j = 0; j < k; ++j) {
    keyed[j] = {dv.arg_value(members[j], p), members[j]};
    sorted &= j == 0 || keyed[j - 1] < keyed[j];
  }
  if (sorted) return;
  std::sort(keyed.begin(), keyed.end());
  sorted_members.resize(k);
  for (unsigned j = 0; j < k; ++j) sorted_members[j] = keyed[j].second;
  if (layout_breaks(m, dv, sorted_members.data(), k) < planned)
    std::copy(sorted_members.begin(), sorted_members.end(), members);
}

/// A group splits into runs only when they average at least this many members;
/// below, one gather and one kernel call cost less than the extra calls.
constexpr unsigned kMinRunLength = 8;

/// Splits an ordered group into runs whose stacked arguments already lie side by
/// side: member j starts a new run when, for some argument that differs between
/// members, its value does not follow member j-1's directly.  Writes the run
/// lengths to `runs` and returns how many there are.  A group that mixes the
/// outputs of two earlier groups (the forward and backward LSTMs' cells, say)
/// splits into two runs that each read in place.
static unsigned contiguous_runs(GraphMemory& m, const DenseView& dv, const VariableIndex* members, unsigned k,
                                uint32_t* runs) {
  const Node& n0 = m.node(members[0]);
  unsigned count = 0, start = 0;
  for (unsigned j = 1; j < k; ++j) {
    bool follows = true;
    for (unsigned p = 0; p < n0.num_args && follows; ++p) {
      const float* a = dv.arg_value(members[j - 1], p);
      const float* b = dv.arg_value(members[j], p);
      // Members' arguments p have one shape (the signature says so): n0's.
      const Dim& d = m.node(n0.args[p]).value.d;
      if (a == b && d.bd == 1) continue;  // shared by both (broadcast if shared by all)
      follows = b == a + d.size();
    }
    if (!follows) {
      runs[count++] = j - start;
      start = j;
    }
  }
  runs[count++] = k - start;
  return count;
}

/// Runs one node alone (a group of one).
static void run_single(GraphMemory& m, Node& n, std::mt19937& rng) {
  const OpInfo& info = op_info(n.op);
  Device* dev = n.value.device;
  DeviceArenas& da = m.arenas(dev);
  ForwardFn f = info.forward[static_cast<unsigned>(dev->type)];
  if (!f) throw_missing_kernel(info, dev, "forward");
  m.xs.resize(n.num_args);
  for (unsigned k = 0; k < n.num_args; ++k) m.xs[k] = &m.node(n.args[k]).value;
  if (!info.sets_own_value) n.value.v = da.values.allocate_floats(n.value.d.size());
  ExecContext ctx(&da.values, &da.scratch, &rng, dev, &m.meta);
  Arena::Mark mark = da.scratch.mark();
  f(m.xs.data(), n.num_args, n, ctx);
  da.scratch.rewind(mark);
}

/// Tries to run `k` members as one kernel call; false if they cannot (the caller
/// then runs them one by one).
static bool run_group(GraphMemory& m, BatchState& st, const DenseView& dv, const VariableIndex* members, unsigned k,
                      std::mt19937& rng) {
  Node& n0 = m.node(members[0]);
  const OpInfo& info = op_info(n0.op);
  Device* dev = n0.value.device;
  DeviceArenas& da = m.arenas(dev);
  ForwardFn f = info.forward[static_cast<unsigned>(dev->type)];
  if (!f) throw_missing_kernel(info, dev, "forward");
  // Bookkeeping (the virtual node, argument lists, merged indices) lives in host
  // memory; gathered arguments and outputs in the device's arena.
  Arena::Mark values_mark = da.values.mark(), gathers_mark = da.gathers.mark();
  Arena::Mark host_mark = m.meta.mark();
  ExecContext ctx(&da.values, &da.scratch, &rng, dev, &m.meta);

  Node* v = new (m.meta.allocate(sizeof(Node))) Node(n0);
  v->value.d.bd = n0.value.d.bd * k;
  v->aux = nullptr;
  v->args = nullptr;
  if (info.batch == BatchKind::Custom) {
    st.member_nodes.resize(k);
    for (unsigned j = 0; j < k; ++j) st.member_nodes[j] = &m.node(members[j]);
    if (!info.batch_combine(st.member_nodes.data(), k, *v, ctx)) {
      da.values.rewind(values_mark);
      da.gathers.rewind(gathers_mark);
      m.meta.rewind(host_mark);
      return false;
    }
  }
  unsigned nargs = n0.num_args;
  Tensor* args = nargs ? static_cast<Tensor*>(m.meta.allocate(nargs * sizeof(Tensor))) : nullptr;
  const Tensor** xs = nargs ? static_cast<const Tensor**>(m.meta.allocate(nargs * sizeof(Tensor*))) : nullptr;
  unsigned char* stacked = nargs ? static_cast<unsigned char*>(m.meta.allocate(nargs)) : nullptr;
  uint32_t* arg_ids = nargs ? static_cast<uint32_t*>(m.meta.allocate(size_t(nargs) * k * sizeof(uint32_t))) : nullptr;
  uint64_t gathered = 0;
  Clock::time_point copy_start;
  if (st.profiling) copy_start = Clock::now();
  for (unsigned p = 0; p < nargs; ++p) {
    const Node& a0 = m.node(n0.args[p]);
    bool same = true, contiguous = true;
    size_t sz = a0.value.d.size();
    uint32_t* ids = arg_ids + size_t(p) * k;
    ids[0] = dv.arg_id(members[0], p);
    for (unsigned j = 1; j < k; ++j) {
      ids[j] = dv.arg_id(members[j], p);
      const float* vj = dv.value(ids[j] & ~BatchGroup::kVariableBit);
      same &= vj == a0.value.v;
      contiguous &= vj == a0.value.v + j * sz;
    }
    if (same && a0.value.d.bd == 1) {
      // One argument for all members: passed once, broadcast by the kernel.
      args[p] = a0.value;
      stacked[p] = 0;
    } else {
      args[p] = a0.value;
      args[p].d.bd = a0.value.d.bd * k;
      stacked[p] = 1;
      if (!contiguous) {
        float* buf = da.gathers.allocate_floats(sz * k);
        if (dev->type == DeviceType::CPU) {
          for (unsigned j = 0; j < k; ++j) dev->copy(buf + j * sz, dv.value(ids[j] & ~BatchGroup::kVariableBit), sz);
        } else {  // one kernel, not a copy per member
          st.copy_src.resize(k);
          for (unsigned j = 0; j < k; ++j) st.copy_src[j] = dv.value(ids[j] & ~BatchGroup::kVariableBit);
          Arena::Mark mark = da.scratch.mark();
          device_gather(dev, buf, st.copy_src.data(), sz, k, da.scratch);
          da.scratch.rewind(mark);
        }
        args[p].v = buf;
        gathered += sz * k * sizeof(float);
      }
    }
    xs[p] = &args[p];
  }
  if (st.profiling) st.stats.copy_seconds += seconds_since(copy_start);
  // The op's own shape rule must accept the stacked arguments.
  bool ok = true;
  if (nargs) {
    try {
      ok = info.shape(xs, nargs, *v) == v->value.d;
    } catch (const std::exception&) {
      ok = false;
    }
  }
  if (!ok) {
    da.values.rewind(values_mark);
    da.gathers.rewind(gathers_mark);
    m.meta.rewind(host_mark);
    return false;
  }
  size_t out = n0.value.d.size();
  if (!info.sets_own_value) v->value.v = da.values.allocate_floats(out * k);
  Arena::Mark mark = da.scratch.mark();
  f(xs, nargs, *v, ctx);
  da.scratch.rewind(mark);
  for (unsigned j = 0; j < k; ++j) {
    m.node(members[j]).value.v = v->value.v + j * out;
    st.value_of[members[j]] = v->value.v + j * out;
  }
  st.stats.bytes_gathered += gathered;
  st.groups.push_back({v, members, k, xs, stacked, arg_ids});
  return true;
}

void ComputationGraph::run_forward_batched(VariableIndex last) {
  GraphMemory& m = *mem_;
  BatchState& st = m.batch_state();
  auto t0 = Clock::now();
  // Nodes computed earlier without batching become groups of one.
  if (st.groups.empty() && evaluated_ > 0) {
    for (VariableIndex i = 0; i < evaluated_; ++i) {
      VariableIndex* mem = static_cast<VariableIndex*>(m.meta.allocate(sizeof(VariableIndex)));
      *mem = i;
      st.groups.push_back({&m.node(i), mem, 1, nullptr, nullptr, nullptr});
    }
  }
  VariableIndex first = evaluated_;
  uint32_t n = last - first + 1;

  // Structure of the segment, for the plan cache: each node's signature (or op and
  // shape for a node that never batches) and where its arguments come from.
  st.node_hash.resize(n);
  st.node_check.resize(n);
  st.batchable.resize(n);
  uint64_t key = mix(n, autobatch_);
  auto wiring = [first](VariableIndex a) {
    return a >= first ? (static_cast<uint64_t>(a - first) << 1) : ((static_cast<uint64_t>(a) << 1) | 1);
  };
  st.arg_start.resize(n + 1);
  st.arg_list.clear();
  st.seg_arg_start.resize(n + 1);
  st.seg_args.clear();
  for (uint32_t o = 0; o < n; ++o) {
    const Node& node = m.node(first + o);
    const OpInfo& info = op_info(node.op);
    const bool batchable = can_batch(node, info, m);
    uint64_t h = batchable ? signature_hash(node, info, m)
                           : hash_dim(mix(0xabcdefULL, static_cast<uint64_t>(node.op)), node.value.d);
    st.node_hash[o] = h;
    // Checked when two nodes' signature hashes are equal (schedule_segment), so
    // that a collision of the 64-bit hashes cannot merge different ops or shapes.
    st.node_check[o] =
        hash_dim(0x2545f4914f6cdd1dULL ^ (static_cast<uint64_t>(node.op) << 16 | node.num_args), node.value.d);
    st.batchable[o] = batchable;
    st.arg_start[o] = static_cast<uint32_t>(st.arg_list.size());
    st.seg_arg_start[o] = static_cast<uint32_t>(st.seg_args.size());
    // The node's part of the key, mixed with its position and added: the chains
    // of different nodes are independent (one chain through the whole segment
    // made hashing latency-bound).
    uint64_t local = h;
    for (unsigned p = 0; p < node.num_args; ++p) {
      const VariableIndex a = node.args[p];
      local = mix(local, wiring(a));
      if (a >= first) st.arg_list.push_back(a - first);
      st.seg_args.push_back(a | (m.node(a).variable ? BatchGroup::kVariableBit : 0u));
    }
    key += mix(local, o);
  }
  st.arg_start[n] = static_cast<uint32_t>(st.arg_list.size());
  st.seg_arg_start[n] = static_cast<uint32_t>(st.seg_args.size());
  // Values of the nodes before the segment, for DenseView (those of earlier
  // batched segments are there already).
  st.value_of.resize(static_cast<size_t>(last) + 1);
  for (VariableIndex i = std::min(st.value_of_valid, first); i < first; ++i) st.value_of[i] = m.node(i).value.v;
  const DenseView dv{st, first};
  // The full description, compared against a cached plan (the key alone could
  // collide) and stored with a new one: written out only when one of them happens.
  bool described = false;
  auto describe = [&] {
    if (described) return;
    described = true;
    st.structure.clear();
    for (uint32_t o = 0; o < n; ++o) {
      const Node& node = m.node(first + o);
      st.structure.push_back(st.node_hash[o]);
      for (unsigned p = 0; p < node.num_args; ++p) st.structure.push_back(wiring(node.args[p]));
    }
  };
  const BatchPlan* plan = nullptr;
  if (plan_cache().contains(key)) {
    describe();
    plan = plan_cache().find(key, st.structure);
  }
  const uint32_t* sizes;
  const uint32_t* offsets;
  size_t ngroups;
  if (plan) {
    ++st.stats.plan_hits;
    sizes = plan->group_sizes.data();
    offsets = plan->members.data();
    ngroups = plan->group_sizes.size();
  } else {
    ++st.stats.plan_misses;
    schedule_segment(m, st, first, last, autobatch_);
    sizes = st.group_sizes_buf.data();
    offsets = st.group_buf.data();
    ngroups = st.group_sizes_buf.size();
    if (plan_cache().seen_before(key)) {
      describe();
      BatchPlan fresh;
      fresh.structure = st.structure;
      fresh.group_sizes = st.group_sizes_buf;
      fresh.members = st.group_buf;
      plan_cache().insert(key, std::move(fresh));
    }
  }
  auto t1 = Clock::now();
  st.stats.schedule_seconds += std::chrono::duration<double>(t1 - t0).count();

  size_t groups_before = st.groups.size();
  try {
    size_t pos = 0;
    for (size_t g = 0; g < ngroups; ++g) {
      unsigned k = sizes[g];
      VariableIndex* members = static_cast<VariableIndex*>(m.meta.allocate(k * sizeof(VariableIndex)));
      for (unsigned j = 0; j < k; ++j) members[j] = first + offsets[pos + j];
      pos += k;
      if (k > 1) order_members_by_layout(m, dv, members, k);
      st.stats.nodes += k;
      // A group whose arguments come in a few long runs runs run by run, each in
      // place, rather than gathering every argument into one block: the runs'
      // outputs are allocated one after another, so the layout seen by later
      // groups is the same.  Members of short runs are collected, in order, into
      // one gathered piece run last.  Fragmented groups (short runs on average)
      // gather as a whole.
      st.pieces.clear();
      unsigned nruns = 1;
      st.runs.resize(k);
      // Products with a shared weight stay whole: one wide GEMM (the weight packed
      // once) beats a copy of the inputs less than splitting it into thin ones.
      bool shares_weight = false;
      for (unsigned p = 0; p < m.node(members[0]).num_args; ++p)
        shares_weight |= is_shared_leaf(m.node(m.node(members[0]).args[p]));
      if (k > 1 && !shares_weight) nruns = contiguous_runs(m, dv, members, k, st.runs.data());
      if (nruns == 1 || k < kMinRunLength * nruns) {
        st.pieces.push_back({members, k});
      } else {
        ++st.stats.split_groups;
        VariableIndex* rest = nullptr;
        unsigned nrest = 0, at = 0;
        for (unsigned r = 0; r < nruns; ++r) {
          const unsigned len = st.runs[r];
          if (len >= kMinRunLength) {
            st.pieces.push_back({members + at, len});
          } else {
            if (!rest) rest = static_cast<VariableIndex*>(m.meta.allocate(k * sizeof(VariableIndex)));
            for (unsigned j = 0; j < len; ++j) rest[nrest++] = members[at + j];
          }
          at += len;
        }
        if (nrest) st.pieces.push_back({rest, nrest});
      }
      for (const auto& piece : st.pieces) {
        VariableIndex* run = piece.first;
        const unsigned len = piece.second;
        ++st.stats.kernels;
        if (len > 1 && run_group(m, st, dv, run, len, rng_)) {
          ++st.stats.batched_groups;
        } else {
          st.stats.kernels += len - 1;
          for (unsigned j = 0; j < len; ++j) {
            run_single(m, m.node(run[j]), rng_);
            st.value_of[run[j]] = m.node(run[j]).value.v;
            st.groups.push_back({&m.node(run[j]), run + j, 1, nullptr, nullptr, nullptr});
          }
        }
      }
      if (check_validity_) {
        for (unsigned j = 0; j < k; ++j) {
          const Node& node = m.node(members[j]);
          DYNET_LITE_CHECK(node.value.is_valid(), numeric_error,
                           "set_check_validity: the value of node " << members[j] << " (" << op_name(node.op)
                                                                    << ", shape " << node.value.d
                                                                    << ") contains NaN or inf");
        }
      }
    }
  } catch (...) {
    st.groups.resize(groups_before);
    throw;
  }
  evaluated_ = last + 1;
  st.value_of_valid = last + 1;
  st.stats.forward_seconds += seconds_since(t1);
}

void ComputationGraph::backward_batched(VariableIndex last, bool full) {
  GraphMemory& m = *mem_;
  BatchState& st = m.batch_state();
  auto t0 = Clock::now();
  // Groups may hold nodes past `last` (computed by a later forward): they take
  // part with zero gradient.
  VariableIndex top = last;
  for (const BatchGroup& g : st.groups)
    for (unsigned j = 0; j < g.k; ++j) top = std::max(top, g.members[j]);
  m.marks.assign(top + 1, 0);
  std::vector<float*>& grad_of = st.grad_of;
  grad_of.assign(top + 1, nullptr);
  for (auto& a : m.device_arenas) a->grads.reset();
  m.weight_grads.reset();
  m.transposes.reset(&m.device_arenas.front()->grads);
  Node& target = m.node(last);
  if (full || target.variable) m.marks[last] = 1;

  // Which groups need a gradient; mark their arguments.  Each such group gets a
  // block for its members' gradients, side by side, zeroed only when something
  // first writes to it (ensure_zero): zeroed here, megabytes per graph left the
  // caches before the kernels came to add to them.
  std::vector<uint32_t>& need = st.order;
  need.assign(st.groups.size(), 0);
  st.group_of.resize(top + 1);
  st.grad_block.assign(st.groups.size(), nullptr);
  st.grad_floats.resize(st.groups.size());
  for (size_t gi = st.groups.size(); gi-- > 0;) {
    const BatchGroup& g = st.groups[gi];
    bool any = false;
    for (unsigned j = 0; j < g.k; ++j) any |= m.marks[g.members[j]] != 0;
    if (!any) continue;  // its members keep grad_of null: no gradient
    need[gi] = 1;
    const Node& n0 = m.node(g.members[0]);
    const OpInfo& info = op_info(n0.op);
    // Gradients of the members, side by side.
    DeviceArenas& da = m.arenas(n0.value.device);
    size_t sz = n0.value.d.size();
    float* block = da.grads.allocate_floats(sz * g.k);
    st.grad_block[gi] = block;
    st.grad_floats[gi] = sz * g.k;
    // Only grad_of is set here: a member's Node (its grad tensor) is written when
    // a kernel or the user needs it (gradient_tensor, get_gradient), not for each
    // of the thousands of members, whose Nodes are rarely in cache.
    for (unsigned j = 0; j < g.k; ++j) {
      m.marks[g.members[j]] = 1;
      grad_of[g.members[j]] = block + j * sz;
      st.group_of[g.members[j]] = static_cast<uint32_t>(gi);
    }
    if (!info.blocks_gradient && !g.arg_ids) {
      for (unsigned j = 0; j < g.k; ++j) {
        const Node& nj = m.node(g.members[j]);
        for (unsigned p = 0; p < nj.num_args; ++p)
          if (full || m.node(nj.args[p]).variable) m.marks[nj.args[p]] = 1;
      }
    }
    if (g.arg_ids && !info.blocks_gradient) {  // the same from the group's argument list
      const uint32_t* ids = g.arg_ids;
      for (size_t e = 0, n = size_t(n0.num_args) * g.k; e < n; ++e)
        if (full || (ids[e] & BatchGroup::kVariableBit)) m.marks[ids[e] & ~BatchGroup::kVariableBit] = 1;
    }
  }
  // Zeroes the gradient block of node i's group unless done already (the block
  // pointer is cleared once it is).  Called for the loss and before every kernel
  // that writes to a marked argument: every marked node has a writer.
  auto ensure_zero = [&m, &st](VariableIndex i) {
    const uint32_t gi = st.group_of[i];
    if (float* block = st.grad_block[gi]) {
      m.node(i).value.device->fill(block, 0.f, st.grad_floats[gi]);
      st.grad_block[gi] = nullptr;
    }
  };
  // Whether a kernel that writes the floats [dx, dx + n) of node i's group's
  // block may assign them instead of adding (OpInfo::assigns_gradient): when
  // nothing has written the block yet.  Claims the block if so, zeroing only the
  // rest of it (the members past a shorter next step, say): the part assigned is
  // never zeroed, a pass over megabytes of gradient per graph saved.
  auto claim_block = [&m, &st](VariableIndex i, float* dx, size_t n) {
    const uint32_t gi = st.group_of[i];
    float* block = st.grad_block[gi];
    if (!block) return false;
    const size_t before = static_cast<size_t>(dx - block), total = st.grad_floats[gi];
    if (before + n > total) return false;  // contiguous across two groups' blocks
    Device* dev = m.node(i).value.device;
    if (before) dev->fill(block, 0.f, before);
    if (before + n < total) dev->fill(dx + n, 0.f, total - before - n);
    st.grad_block[gi] = nullptr;
    return true;
  };
  backward_done_ = true;
  if (!m.marks[last]) return;  // nothing was marked: no gradient blocks
  ensure_zero(last);
  target.value.device->fill(grad_of[last], 1.f, target.value.d.size());
  // The gradient tensor of node i, written into its Node (kernels of one node take
  // a Tensor reference).
  auto gradient_tensor = [&m, &grad_of](VariableIndex i) -> Tensor& {
    Node& n = m.node(i);
    n.grad = Tensor(n.value.d, grad_of[i], n.value.device, DeviceMempool::DEDFS);
    return n.grad;
  };

  // A CPU kernel may leave the product term of a parameter's gradient for later;
  // the node is then marked 2 and flushed when its group is reached.  (Only
  // parameters here: finding a computed weight among the members of every group
  // would cost more than it saves, since batched products are rarely thin.)
  auto offer_sink = [&m](const Node& a, const Device* dev) -> WeightGradSink* {
    return is_shared_leaf(a) && dev->type == DeviceType::CPU ? &m.weight_grads : nullptr;
  };
  for (size_t gi = st.groups.size(); gi-- > 0;) {
    if (!need[gi]) continue;
    const BatchGroup& g = st.groups[gi];
    Node& n0 = m.node(g.members[0]);
    const OpInfo& info = op_info(n0.op);
    if (check_validity_) {
      for (unsigned j = 0; j < g.k; ++j) {
        const Node& node = m.node(g.members[j]);
        DYNET_LITE_CHECK(gradient_tensor(g.members[j]).is_valid(), numeric_error,
                         "set_check_validity: the gradient of node " << g.members[j] << " (" << op_name(node.op)
                                                                     << ", shape " << node.value.d
                                                                     << ") contains NaN or inf");
      }
    }
    if (info.accumulate) {
      if (info.accumulate_group && g.k > 1) {
        // Not offered the weight-gradient sink (not parameters): nothing to flush.
        st.member_nodes.resize(g.k);
        for (unsigned j = 0; j < g.k; ++j) st.member_nodes[j] = &m.node(g.members[j]);
        Device* dev = n0.value.device;
        DeviceArenas& da = m.arenas(dev);
        ExecContext ctx(&da.values, &da.scratch, &rng_, dev, &m.meta);
        info.accumulate_group(st.member_nodes.data(), g.k, grad_of[g.members[0]], ctx);
        continue;
      }
      for (unsigned j = 0; j < g.k; ++j) {
        Node& node = m.node(g.members[j]);
        // Every use has run: the weight gradients left for later (marks 2,
        // weight_grads.h) are summed now, before they are read.
        if (m.marks[g.members[j]] == 2)
          m.weight_grads.flush(grad_of[g.members[j]], m.arenas(node.value.device).scratch);
        if (node.variable) info.accumulate(node, gradient_tensor(g.members[j]));
      }
      continue;
    }
    if (info.blocks_gradient || n0.num_args == 0) continue;
    Device* dev = n0.value.device;
    BackwardFn b = info.backward[static_cast<unsigned>(dev->type)];
    if (!b) throw_missing_kernel(info, dev, "backward");
    DeviceArenas& da = m.arenas(dev);
    ExecContext ctx(&da.values, &da.scratch, &rng_, dev, &m.meta);
    ctx.set_transposes(dev->type == DeviceType::CPU ? &m.transposes : nullptr);
    const bool may_assign = info.assigns_gradient && dev->type == DeviceType::CPU;
    if (g.k == 1) {
      m.xs.resize(n0.num_args);
      for (unsigned p = 0; p < n0.num_args; ++p) m.xs[p] = &m.node(n0.args[p]).value;
      const Tensor& dy = gradient_tensor(g.members[0]);
      for (unsigned p = 0; p < n0.num_args; ++p) {
        const VariableIndex ai = n0.args[p];
        Node& a = m.node(ai);
        if (!m.marks[ai]) continue;
        // Parameters' gradients are never assigned: a kernel may leave their
        // terms for later (weight_grads.h).
        const bool assign = may_assign && !is_shared_leaf(a) && claim_block(ai, grad_of[ai], a.value.d.size());
        if (!assign) ensure_zero(ai);
        Arena::Mark mark = da.scratch.mark();
        const size_t pending = m.weight_grads.size();
        ctx.set_weight_grads(offer_sink(a, dev));
        ctx.set_assign_dx(assign);
        b(m.xs.data(), n0.num_args, n0, dy, p, gradient_tensor(ai), ctx);
        ctx.set_assign_dx(false);
        if (m.weight_grads.size() != pending) m.marks[ai] = 2;
        da.scratch.rewind(mark);
      }
      continue;
    }
    Node& v = *g.exec;
    Tensor dy(v.value.d, grad_of[g.members[0]], dev, DeviceMempool::DEDFS);
    for (unsigned p = 0; p < n0.num_args; ++p) {
      const Node& a0 = m.node(n0.args[p]);
      Arena::Mark mark = da.scratch.mark();
      if (!g.stacked[p]) {
        if (m.marks[n0.args[p]]) {
          ensure_zero(n0.args[p]);
          Tensor& dx = gradient_tensor(n0.args[p]);
          const size_t pending = m.weight_grads.size();
          ctx.set_weight_grads(offer_sink(a0, dev));
          b(g.xs, n0.num_args, v, dy, p, dx, ctx);
          ctx.set_weight_grads(nullptr);
          if (m.weight_grads.size() != pending) m.marks[n0.args[p]] = 2;
        }
      } else {
        size_t sz = a0.value.d.size();
        bool contiguous = true, any = false;
        const uint32_t* ids = g.arg_ids + size_t(p) * g.k;
        const float* base = grad_of[n0.args[p]];
        for (unsigned j = 0; j < g.k; ++j) {
          const VariableIndex aj = ids[j] & ~BatchGroup::kVariableBit;
          any |= m.marks[aj] != 0;
          contiguous &= m.marks[aj] && grad_of[aj] == base + j * sz;
        }
        const bool assign = contiguous && may_assign && claim_block(n0.args[p], grad_of[n0.args[p]], sz * g.k);
        if (any && !assign) {
          for (unsigned j = 0; j < g.k; ++j) {
            const VariableIndex aj = ids[j] & ~BatchGroup::kVariableBit;
            if (m.marks[aj]) ensure_zero(aj);
          }
        }
        if (any) {
          Tensor dx = g.xs[p][0];
          if (contiguous) {
            dx.v = grad_of[n0.args[p]];
            ctx.set_assign_dx(assign);
            b(g.xs, n0.num_args, v, dy, p, dx, ctx);
            ctx.set_assign_dx(false);
          } else {
            // Into scratch, then added to each member's gradient.
            dx.v = ctx.scratch_floats(sz * g.k);
            if (!may_assign) dev->fill(dx.v, 0.f, sz * g.k);
            ctx.set_assign_dx(may_assign);
            b(g.xs, n0.num_args, v, dy, p, dx, ctx);
            ctx.set_assign_dx(false);
            if (dev->type == DeviceType::CPU) {
              for (unsigned j = 0; j < g.k; ++j) {
                const VariableIndex aj = ids[j] & ~BatchGroup::kVariableBit;
                if (!m.marks[aj]) continue;
                Eigen::Map<Eigen::ArrayXf>(grad_of[aj], sz) += Eigen::Map<const Eigen::ArrayXf>(dx.v + j * sz, sz);
                st.stats.bytes_scattered += sz * sizeof(float);
              }
            } else {  // one kernel, not an addition per member
              st.copy_dst.resize(g.k);
              for (unsigned j = 0; j < g.k; ++j) {
                const VariableIndex aj = ids[j] & ~BatchGroup::kVariableBit;
                st.copy_dst[j] = m.marks[aj] ? grad_of[aj] : nullptr;
                if (m.marks[aj]) st.stats.bytes_scattered += sz * sizeof(float);
              }
              device_scatter_add(dev, st.copy_dst.data(), dx.v, sz, g.k, da.scratch);
            }
          }
        }
      }
      da.scratch.rewind(mark);
    }
  }
  if (!m.weight_grads.empty()) m.weight_grads.flush_all(m.arenas(target.value.device).scratch);
  st.stats.backward_seconds += seconds_since(t0);
}

AutobatchStats ComputationGraph::autobatch_stats() const {
  return mem_->batch_state_ ? mem_->batch_state_->stats : AutobatchStats();
}

}  // namespace dynet_lite
