#include "dynet_lite/exec/scheduler.h"

#include <algorithm>

#include "dynet_lite/exec/fusion.h"
#include "dynet_lite/exec/graph_memory.h"
#include "dynet_lite/exec/signature.h"

namespace dynet_lite {

namespace {

constexpr uint64_t kNever = ~uint64_t(0);  // a place no node has

/// The bucket of segment node `o`'s signature, added when it is the first.
/// Equal signatures are recognised by their 64-bit hash, which covers all of
/// the signature (as the plan cache's key does); op and shape are checked too.
uint32_t find_or_add_bucket(const GraphMemory& m, ScheduleScratch& sc, const SegmentNodes& seg, VariableIndex first,
                            uint32_t o) {
  const uint64_t h = seg.signature[o];
  const size_t mask = sc.bucket_table.size() - 1;
  for (size_t slot = h & mask;; slot = (slot + 1) & mask) {
    const uint32_t b = sc.bucket_table[slot];
    if (b == 0) {
      sc.buckets.push_back({kNoNode, kNoNode, 0, 0, ~0u, 0, 0, 0, o, h, seg.check[o]});
      sc.bucket_table[slot] = static_cast<uint32_t>(sc.buckets.size());
      return static_cast<uint32_t>(sc.buckets.size() - 1);
    }
    const SignatureBucket& bucket = sc.buckets[b - 1];
    if (bucket.hash == h) {
      // From the dense arrays: reading the Nodes here streamed megabytes per graph.
      DYNET_LITE_CHECK(seg.check[o] == bucket.check, internal_error,
                       "autobatch: nodes " << first + o << " (" << op_name(m.node(first + o).op) << ") and "
                                           << first + bucket.representative << " ("
                                           << op_name(m.node(first + bucket.representative).op)
                                           << ") of different ops or shapes share one signature hash");
      return b - 1;
    }
  }
}

/// Signature buckets, depths and argument counts of the segment's nodes, from
/// the arguments inside the segment listed while hashing: no node is read again.
/// Counts each node's dependents into dependents_start[o + 1].
void assign_buckets(const GraphMemory& m, ScheduleScratch& sc, const SegmentNodes& seg, VariableIndex first,
                    uint32_t n) {
  sc.bucket_of.assign(n, kNoNode);
  sc.depth.assign(n, 0);
  sc.pending_args.assign(n, 0);
  sc.dependents_start.assign(n + 1, 0);
  sc.buckets.clear();
  size_t table_size = 64;
  while (table_size < 2 * n) table_size <<= 1;
  sc.bucket_table.assign(table_size, 0);
  for (uint32_t o = 0; o < n; ++o) {
    uint32_t depth = 0;
    for (uint32_t q = seg.inner_arg_start[o]; q < seg.inner_arg_start[o + 1]; ++q) {
      const uint32_t a = seg.inner_args[q];
      depth = std::max(depth, sc.depth[a] + 1);
      ++sc.dependents_start[a + 1];
    }
    sc.depth[o] = depth;
    sc.pending_args[o] = seg.inner_arg_start[o + 1] - seg.inner_arg_start[o];
    if (seg.batchable[o]) sc.bucket_of[o] = find_or_add_bucket(m, sc, seg, first, o);
  }
}

/// The readers of each node inside the segment, in CSR form (counted by
/// assign_buckets), and each node's height: the longest path to the segment's end.
void link_dependents(ScheduleScratch& sc, const SegmentNodes& seg, uint32_t n) {
  for (uint32_t o = 0; o < n; ++o) sc.dependents_start[o + 1] += sc.dependents_start[o];
  sc.dependents.resize(sc.dependents_start[n]);
  sc.dependents_fill.assign(sc.dependents_start.begin(), sc.dependents_start.end() - 1);
  for (uint32_t o = 0; o < n; ++o)
    for (uint32_t q = seg.inner_arg_start[o]; q < seg.inner_arg_start[o + 1]; ++q)
      sc.dependents[sc.dependents_fill[seg.inner_args[q]]++] = o;
  sc.height.assign(n, 0);
  for (uint32_t o = n; o-- > 0;) {
    uint32_t h = 0;
    for (uint32_t k = sc.dependents_start[o]; k < sc.dependents_start[o + 1]; ++k)
      h = std::max(h, sc.height[sc.dependents[k]] + 1);
    sc.height[o] = h;
  }
}

/// Within a group, the members with the longest path still ahead come first: the
/// chains that stop earliest (the shorter sentences) sit at the end of the block,
/// so the next step's group, one member fewer per finished chain, reads a prefix
/// of it in place.
bool longer_first(const ScheduleScratch& sc, uint32_t a, uint32_t b) {
  return sc.height[a] != sc.height[b] ? sc.height[a] > sc.height[b] : a < b;
}

void add_group(Schedule& schedule, const uint32_t* members, uint32_t k) {
  schedule.group_sizes.push_back(k);
  schedule.members.insert(schedule.members.end(), members, members + k);
}

/// Depth strategy: nodes sorted by (depth, signature); each run is a group.
void schedule_by_depth(ScheduleScratch& sc, uint32_t n) {
  std::vector<uint32_t>& order = sc.order;
  order.resize(n);
  for (uint32_t o = 0; o < n; ++o) order[o] = o;
  std::sort(order.begin(), order.end(), [&sc](uint32_t a, uint32_t b) {
    if (sc.depth[a] != sc.depth[b]) return sc.depth[a] < sc.depth[b];
    if (sc.bucket_of[a] != sc.bucket_of[b]) return sc.bucket_of[a] < sc.bucket_of[b];
    return longer_first(sc, a, b);
  });
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i + 1;
    const uint32_t bucket = sc.bucket_of[order[i]];
    if (bucket != kNoNode)
      while (j < n && sc.depth[order[j]] == sc.depth[order[i]] && sc.bucket_of[order[j]] == bucket) ++j;
    add_group(sc.schedule, order.data() + i, j - i);
    i = j;
  }
}

/// Agenda strategy: ready nodes wait in their signature's bucket (a list through
/// next_ready); nodes that never batch run as soon as they are ready.
class Agenda {
 public:
  explicit Agenda(ScheduleScratch& sc) : sc_(sc) {}

  void run(uint32_t n) {
    sc_.next_ready.assign(n, kNoNode);
    sc_.active_buckets.clear();
    sc_.ready_solo.clear();
    list_bucket_nodes_by_depth(n);
    for (uint32_t o = 0; o < n; ++o)
      if (sc_.pending_args[o] == 0) make_ready(o);
    while (!sc_.ready_solo.empty() || !sc_.active_buckets.empty()) {
      if (!sc_.ready_solo.empty()) {
        const uint32_t o = sc_.ready_solo.back();
        sc_.ready_solo.pop_back();
        add_group(sc_.schedule, &o, 1);
        finish(o);
        continue;
      }
      const std::vector<uint32_t>& group = take_ready_group(take_best_bucket());
      add_group(sc_.schedule, group.data(), static_cast<uint32_t>(group.size()));
      for (uint32_t o : group) finish(o);
    }
  }

 private:
  /// Each bucket's nodes, shallowest first (two counting sorts: by depth, then
  /// stably by bucket).
  void list_bucket_nodes_by_depth(uint32_t n) {
    sc_.was_ready.assign(n, 0);
    uint32_t max_depth = 0;
    for (uint32_t o = 0; o < n; ++o) max_depth = std::max(max_depth, sc_.depth[o]);
    std::vector<uint32_t>& start = sc_.depth_start;
    start.assign(max_depth + 2, 0);
    for (uint32_t o = 0; o < n; ++o) ++start[sc_.depth[o] + 1];
    for (uint32_t d = 0; d <= max_depth; ++d) start[d + 1] += start[d];
    std::vector<uint32_t>& by_depth = sc_.order;
    by_depth.resize(n);
    for (uint32_t o = 0; o < n; ++o) by_depth[start[sc_.depth[o]]++] = o;
    uint32_t filled = 0;
    for (SignatureBucket& b : sc_.buckets) b.nodes_start = b.nodes_end = 0;
    for (uint32_t o = 0; o < n; ++o)
      if (sc_.bucket_of[o] != kNoNode) ++sc_.buckets[sc_.bucket_of[o]].nodes_end;
    for (SignatureBucket& b : sc_.buckets) {
      b.nodes_start = b.unready_cursor = filled;
      filled += b.nodes_end;
      b.nodes_end = b.nodes_start;
    }
    sc_.bucket_nodes.resize(filled);
    for (uint32_t o : by_depth)
      if (sc_.bucket_of[o] != kNoNode) sc_.bucket_nodes[sc_.buckets[sc_.bucket_of[o]].nodes_end++] = o;
  }

  /// Whether bucket b should wait: one of its nodes not yet ready lies no deeper
  /// than its shallowest ready one, so it would join the group if its arguments
  /// ran first.  (The forward and the backward LSTM's cells share a signature;
  /// one direction's cells wait for the other's gates.)
  bool waits(SignatureBucket& b) {
    while (b.unready_cursor < b.nodes_end && sc_.was_ready[sc_.bucket_nodes[b.unready_cursor]]) ++b.unready_cursor;
    return b.unready_cursor < b.nodes_end && sc_.depth[sc_.bucket_nodes[b.unready_cursor]] <= b.ready_min_depth;
  }

  void make_ready(uint32_t o) {
    sc_.was_ready[o] = 1;
    const uint32_t s = sc_.bucket_of[o];
    if (s == kNoNode) {
      sc_.ready_solo.push_back(o);
      return;
    }
    SignatureBucket& b = sc_.buckets[s];
    b.ready_min_depth = std::min(b.ready_min_depth, sc_.depth[o]);
    if (b.ready_count == 0) {
      b.ready_head = o;
      sc_.active_buckets.push_back(s);
    } else {
      sc_.next_ready[b.ready_tail] = o;
    }
    b.ready_tail = o;
    sc_.next_ready[o] = kNoNode;
    ++b.ready_count;
    b.ready_height_sum += sc_.height[o];
  }

  void finish(uint32_t o) {
    for (uint32_t k = sc_.dependents_start[o]; k < sc_.dependents_start[o + 1]; ++k) {
      const uint32_t d = sc_.dependents[k];
      if (--sc_.pending_args[d] == 0) make_ready(d);
    }
  }

  /// Removes and returns the active bucket whose ready nodes lie farthest from
  /// the end on average: the critical path runs first, and work off it (an
  /// output layer, a softmax) waits until more of it is ready, so it runs in
  /// fewer, larger groups.  A bucket that waits (see waits()) is taken only when
  /// every active bucket waits.  Heights alone are not enough once merging made
  /// one node of several sentences' first steps: a merged node has its longest
  /// sentence's height, the two directions' averages drift apart, and one
  /// direction's cells would run before the other's gates.  Averages compared as
  /// fractions (sum_i count_best > sum_best count_i): no division per candidate.
  uint32_t take_best_bucket() {
    std::vector<uint32_t>& active = sc_.active_buckets;
    size_t best = active.size();
    bool best_waits = true;
    uint64_t best_sum = 0, best_count = 1;
    for (size_t i = 0; i < active.size(); ++i) {
      SignatureBucket& b = sc_.buckets[active[i]];
      const bool w = waits(b);
      if (w && !best_waits) continue;
      if (best == active.size() || (best_waits && !w) || b.ready_height_sum * best_count > best_sum * b.ready_count) {
        best_waits = w;
        best_sum = b.ready_height_sum;
        best_count = b.ready_count;
        best = i;
      }
    }
    const uint32_t s = active[best];
    active[best] = active.back();
    active.pop_back();
    return s;
  }

  /// Empties bucket s's ready list into sc_.order, longest chain first (see
  /// longer_first), as one integer key per member.
  const std::vector<uint32_t>& take_ready_group(uint32_t s) {
    SignatureBucket& b = sc_.buckets[s];
    std::vector<uint32_t>& group = sc_.order;
    group.clear();
    for (uint32_t o = b.ready_head; o != kNoNode; o = sc_.next_ready[o]) group.push_back(o);
    b.ready_count = 0;
    b.ready_height_sum = 0;
    b.ready_min_depth = ~0u;
    std::vector<uint64_t>& keys = sc_.member_keys;
    keys.clear();
    bool ordered = true;
    for (uint32_t o : group) {
      keys.push_back((static_cast<uint64_t>(~sc_.height[o]) << 32) | o);
      ordered &= keys.size() == 1 || keys[keys.size() - 2] < keys.back();
    }
    if (!ordered) {
      std::sort(keys.begin(), keys.end());
      for (size_t j = 0; j < group.size(); ++j) group[j] = static_cast<uint32_t>(keys[j]);
    }
    return group;
  }

  ScheduleScratch& sc_;
};

/// Whether a node reads no argument that batching would stack (none, or only
/// parameters): its group may lay its outputs out in any order.
bool reads_nothing_stacked(const GraphMemory& m, const Node& n) {
  for (unsigned p = 0; p < n.num_args; ++p)
    if (!is_shared_leaf(m.node(n.args[p]))) return false;
  return true;
}

/// Whether group g (of k members from `members`) is free to choose its order.
bool is_free_group(const GraphMemory& m, VariableIndex first, const uint32_t* members, uint32_t k) {
  return k > 1 && reads_nothing_stacked(m, m.node(first + members[0]));
}

/// The bucket of the earliest reader of any of the group's members: the family
/// of groups whose order the group's layout follows (kNoNode: no reader).
uint32_t earliest_reader_family(const ScheduleScratch& sc, const uint32_t* members, uint32_t k) {
  uint64_t earliest = kNever;
  uint32_t family = kNoNode;
  for (uint32_t j = 0; j < k; ++j)
    for (uint32_t d = sc.dependents_start[members[j]]; d < sc.dependents_start[members[j] + 1]; ++d)
      if (sc.place[sc.dependents[d]] < earliest) {
        earliest = sc.place[sc.dependents[d]];
        family = sc.bucket_of[sc.dependents[d]];
      }
  return family;
}

/// Outputs read by two families of groups (a word vector by the forward and by
/// the backward LSTM, in different orders) can be laid out for one of them
/// only.  The family of the earliest reader is chosen, and every member goes
/// where its reader of that family wants it: that family's groups all read in
/// place and only the other one gathers.  Members no reader of that family reads
/// follow their first reader.
void order_by_readers(ScheduleScratch& sc, uint32_t* members, uint32_t k) {
  const uint32_t family = earliest_reader_family(sc, members, k);
  // (reader's place, member) pairs, sorted by place; ties keep their order.
  sc.reader_keyed.resize(k);
  for (uint32_t j = 0; j < k; ++j) {
    const uint32_t o = members[j];
    uint64_t use = kNever, use_in_family = kNever;
    for (uint32_t d = sc.dependents_start[o]; d < sc.dependents_start[o + 1]; ++d) {
      const uint32_t reader = sc.dependents[d];
      use = std::min(use, sc.place[reader]);
      if (family != kNoNode && sc.bucket_of[reader] == family)
        use_in_family = std::min(use_in_family, sc.place[reader]);
    }
    sc.reader_keyed[j] = {use_in_family != kNever ? use_in_family : use, o};
  }
  std::stable_sort(
      sc.reader_keyed.begin(), sc.reader_keyed.end(),
      [](const std::pair<uint64_t, uint32_t>& a, const std::pair<uint64_t, uint32_t>& b) { return a.first < b.first; });
  for (uint32_t j = 0; j < k; ++j) members[j] = sc.reader_keyed[j].second;
}

/// A group free to choose its order (lookups, inputs, constants) takes the order
/// in which its outputs are first read: the first group reading them finds them
/// side by side, in its own order, and reads them in place.  For a BiLSTM the
/// word vectors come out step by step, each step's block in the order the
/// forward (or backward) LSTM's group of that step wants them.
void order_free_groups(const GraphMemory& m, ScheduleScratch& sc, VariableIndex first, uint32_t n) {
  Schedule& schedule = sc.schedule;
  bool any_free = false;
  size_t pos = 0;
  for (uint32_t k : schedule.group_sizes) {
    any_free |= is_free_group(m, first, schedule.members.data() + pos, k);
    pos += k;
  }
  if (!any_free) return;
  sc.place.resize(n);
  pos = 0;
  for (size_t g = 0; g < schedule.group_sizes.size(); ++g) {
    for (uint32_t j = 0; j < schedule.group_sizes[g]; ++j)
      sc.place[schedule.members[pos + j]] = (static_cast<uint64_t>(g) << 32) | j;
    pos += schedule.group_sizes[g];
  }
  pos = 0;
  for (const uint32_t k : schedule.group_sizes) {
    uint32_t* members = schedule.members.data() + pos;
    pos += k;
    if (is_free_group(m, first, members, k)) order_by_readers(sc, members, k);
  }
}

}  // namespace

void schedule_segment(const GraphMemory& m, BatchState& st, VariableIndex first, uint32_t n,
                      AutobatchStrategy strategy) {
  ScheduleScratch& sc = st.scheduling;
  assign_buckets(m, sc, st.segment, first, n);
  link_dependents(sc, st.segment, n);
  sc.schedule.group_sizes.clear();
  sc.schedule.members.clear();
  if (strategy == AutobatchStrategy::Depth)
    schedule_by_depth(sc, n);
  else
    Agenda(sc).run(n);
  order_free_groups(m, sc, first, n);
  plan_fusion(m, st, first, n);  // exec/fusion.h: cached with the schedule
}

}  // namespace dynet_lite
