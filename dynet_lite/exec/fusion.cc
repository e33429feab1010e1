#include "dynet_lite/exec/fusion.h"

#include <algorithm>
#include <cstring>

#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/exec/batch_memory.h"
#include "dynet_lite/exec/graph_memory.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

/// Arguments a fused node may have (their pointers are kept on the stack).
constexpr unsigned kMaxFusedArgs = 8;

inline VariableIndex node_id(uint32_t arg_id) { return arg_id & ~BatchGroup::kVariableBit; }

/// Where pick_range's range starts in its argument's value, or -1 when the range
/// is not one block of it (a dimension after the range's, or the batch, is not 1).
long slice_offset(const Dim& arg, const op_params::RangeParams& p) {
  size_t outer = arg.bd;
  for (unsigned k = p.dim + 1; k < arg.nd; ++k) outer *= arg.d[k];
  if (outer != 1) return -1;
  size_t inner = 1;
  for (unsigned k = 0; k < p.dim; ++k) inner *= arg.d[k];
  return static_cast<long>(p.start * inner);
}

/// Whether a group whose first member is n may run in a fused region: an op with
/// span kernels whose arguments all have its shape, or a slice that is one block
/// of its argument.  Its signature gives every member the same op, shapes and
/// parameters.
bool fusible(const GraphMemory& m, const Node& n) {
  if (n.value.device->type != DeviceType::CPU || n.num_args == 0 || n.num_args > kMaxFusedArgs) return false;
  if (n.op == OpKind::PickRange) return slice_offset(m.node(n.args[0]).value.d, n.p<op_params::RangeParams>()) >= 0;
  const OpInfo& info = op_info(n.op);
  if (!info.span_forward || !info.span_backward) return false;
  for (unsigned p = 0; p < n.num_args; ++p)
    if (!(m.node(n.args[p]).value.d == n.value.d)) return false;
  return true;
}

uint32_t find_lane(std::vector<uint32_t>& lane, uint32_t q) {
  while (lane[q] != q) q = lane[q] = lane[lane[q]];
  return q;
}

/// Appends the region's members to schedule.fused_tasks lane by lane: a lane is
/// the members linked by the region's own edges (one instance's chain), each
/// lane in schedule order, so every member runs after its arguments.  The lane
/// of a member is the smallest position in it (union by smaller root).
void order_lanes(ScheduleScratch& sc, const SegmentNodes& seg, const FusedRegion& region, size_t member_pos) {
  Schedule& s = sc.schedule;
  const uint32_t* members = s.members.data() + member_pos;
  std::vector<uint32_t>& position = sc.fusion_position;
  std::vector<uint32_t>& lane = sc.fusion_lane;
  lane.resize(region.tasks);
  for (uint32_t q = 0; q < region.tasks; ++q) {
    lane[q] = q;
    position[members[q]] = q;
  }
  for (uint32_t q = 0; q < region.tasks; ++q) {
    const uint32_t o = members[q];
    for (uint32_t e = seg.inner_arg_start[o]; e < seg.inner_arg_start[o + 1]; ++e) {
      const uint32_t qa = position[seg.inner_args[e]];
      if (qa == kNoNode) continue;
      const uint32_t ra = find_lane(lane, qa), rq = find_lane(lane, q);
      if (ra < rq) lane[rq] = ra;
      if (rq < ra) lane[ra] = rq;
    }
  }
  // Counting sort by lane, stable: lane[q] becomes the number of members of
  // the lanes before q's plus those of q's lane before q.
  std::vector<uint32_t>& start = sc.fusion_count;
  start.assign(region.tasks + 1, 0);
  for (uint32_t q = 0; q < region.tasks; ++q) {
    lane[q] = find_lane(lane, q);
    ++start[lane[q] + 1];
  }
  for (uint32_t q = 0; q < region.tasks; ++q) start[q + 1] += start[q];
  s.fused_tasks.resize(2 * (size_t(region.first_task) + region.tasks));
  uint32_t* tasks = s.fused_tasks.data() + 2 * size_t(region.first_task);
  uint32_t q = 0;
  for (uint32_t g = 0; g < region.groups; ++g)
    for (uint32_t j = 0; j < s.group_sizes[region.first_group + g]; ++j, ++q) {
      const uint32_t slot = start[lane[q]]++;
      tasks[2 * slot] = g;
      tasks[2 * slot + 1] = j;
    }
  for (uint32_t r = 0; r < region.tasks; ++r) position[members[r]] = kNoNode;
}

/// One group of a region as the tasks see it.
struct Step {
  SpanForwardFn forward;
  SpanBackwardFn backward;
  const Node* n0;  // parameters and shape, equal for every member
  const VariableIndex* members;
  const uint32_t* ids;  // arguments, argument after argument (p * k + j)
  size_t out;           // floats per member
  long view;            // a slice: its offset in the argument; else -1
  size_t arg_size;      // a slice: its argument's floats
  unsigned k, nargs;
  bool needs_gradient;
};

/// The steps of the region of `count` groups from st.groups[base], in m.meta
/// (rewound by the caller).  Returns the number of tasks.
size_t make_steps(GraphMemory& m, const BatchState& st, size_t base, size_t count, Step* steps) {
  size_t tasks = 0;
  for (size_t gi = 0; gi < count; ++gi) {
    const BatchGroup& g = st.groups[base + gi];
    const Node& n0 = *g.exec;
    const OpInfo& info = op_info(n0.op);
    Step& s = steps[gi];
    s.forward = info.span_forward;
    s.backward = info.span_backward;
    s.n0 = &n0;
    s.members = g.members;
    s.ids = g.arg_ids;
    s.out = n0.value.d.size();
    s.view = -1;
    if (n0.op == OpKind::PickRange) {
      const Dim& arg = m.node(n0.args[0]).value.d;
      s.view = slice_offset(arg, n0.p<op_params::RangeParams>());
      s.arg_size = arg.size();
    }
    s.k = g.k;
    s.nargs = n0.num_args;
    s.needs_gradient = false;
    tasks += g.k;
  }
  return tasks;
}

/// Computes the values of the region of st.groups[base ...], lane by lane.
void forward_tasks(GraphMemory& m, BatchState& st, size_t base) {
  const size_t count = st.groups[base].fused;
  const uint32_t* tasks = st.groups[base].fused_tasks;
  const Arena::Mark mark = m.meta.mark();
  Step* steps = static_cast<Step*>(m.meta.allocate(count * sizeof(Step)));
  const size_t ntasks = make_steps(m, st, base, count, steps);
  std::vector<float*>& values = st.node_values;
  const float* x[kMaxFusedArgs];
  for (size_t t = 0; t < ntasks; ++t) {
    const Step& s = steps[tasks[2 * t]];
    const unsigned j = tasks[2 * t + 1];
    const VariableIndex i = s.members[j];
    for (unsigned p = 0; p < s.nargs; ++p) x[p] = values[node_id(s.ids[p * s.k + j])];
    if (s.view >= 0) {
      float* v = const_cast<float*>(x[0]) + s.view;
      m.node(i).value.v = v;
      values[i] = v;
    } else {
      s.forward(x, s.nargs, values[i], s.out, *s.n0);
    }
  }
  m.meta.rewind(mark);
}

/// The gradients of a region's nodes while it runs backward.  A group whose
/// block nothing had written when the region started (its readers are all in
/// the region) is the region's own: it is not zeroed as a whole; a member's
/// first write assigns instead of adding, and a member never written is zeroed
/// when it is reached.  Per node, BackwardScratch::fused_slot holds the
/// region's stamp and that state.
class RegionGradients {
 public:
  RegionGradients(BatchState& st, FusedBackwardHost& host)
      : slot_(st.backward.fused_slot), grads_(st.node_gradients), host_(host) {
    if (slot_.size() < grads_.size()) slot_.resize(grads_.size(), 0);
    if (++st.backward.fused_stamp >= (1u << 30)) {  // stamps ran out: start over
      std::fill(slot_.begin(), slot_.end(), 0u);
      st.backward.fused_stamp = 1;
    }
    stamp_ = st.backward.fused_stamp << 2;
  }

  void claim_if_unwritten(const BatchGroup& g) {
    if (!host_.unwritten(g.members[0])) return;
    host_.claim(g.members[0]);
    for (unsigned j = 0; j < g.k; ++j) slot_[g.members[j]] = stamp_ | kUnwritten;
  }

  /// Node a's gradient (of `size` floats) is about to get the floats
  /// [offset, offset + n) added: returns whether they may be assigned instead.
  bool before_write(VariableIndex a, size_t offset, size_t n, size_t size) {
    uint32_t& state = slot_[a];
    if (state == (stamp_ | kWritten)) return false;
    if (state != (stamp_ | kUnwritten)) {
      host_.ensure_zero(a);  // not the region's: its group's block is zeroed once
      return false;
    }
    state = stamp_ | kWritten;
    if (offset == 0 && n == size) return true;
    std::fill(grads_[a], grads_[a] + size, 0.f);
    return false;
  }

  /// Whether member i (of `size` floats) got no gradient; its gradient is then
  /// zeroed.
  bool zero(VariableIndex i, size_t size) {
    uint32_t& state = slot_[i];
    if (state != (stamp_ | kUnwritten)) return false;
    state = stamp_ | kWritten;
    std::fill(grads_[i], grads_[i] + size, 0.f);
    return true;
  }

  /// Every marked node must get a writer: one outside the region gets its
  /// block zeroed though nothing is added.
  void touch(VariableIndex a) {
    if ((slot_[a] & ~3u) != stamp_) host_.ensure_zero(a);
  }

 private:
  static constexpr uint32_t kUnwritten = 1, kWritten = 2;
  std::vector<uint32_t>& slot_;
  const std::vector<float*>& grads_;
  FusedBackwardHost& host_;
  uint32_t stamp_;
};

/// Member j of step s backward: its gradient into its arguments'.  Every reader
/// of the member has run (in a later group of the region, or after it).
void backward_task(GraphMemory& m, BatchState& st, const Step& s, unsigned j, RegionGradients& region) {
  const VariableIndex i = s.members[j];
  const bool zero = region.zero(i, s.out);
  const float* x[kMaxFusedArgs];
  for (unsigned p = 0; p < s.nargs; ++p) x[p] = st.node_values[node_id(s.ids[p * s.k + j])];
  const float* dy = st.node_gradients[i];
  for (unsigned p = 0; p < s.nargs; ++p) {
    const VariableIndex a = node_id(s.ids[p * s.k + j]);
    if (m.marks[a] == GradientMark::None) continue;
    if (zero) {
      region.touch(a);
      continue;
    }
    float* dx = st.node_gradients[a];
    if (s.view >= 0) {
      const bool assign = region.before_write(a, s.view, s.out, s.arg_size);
      dx += s.view;
      if (assign)
        std::memcpy(dx, dy, s.out * sizeof(float));
      else
        for (size_t e = 0; e < s.out; ++e) dx[e] += dy[e];
    } else {
      const bool assign = region.before_write(a, 0, s.out, s.out);
      s.backward(x, s.nargs, st.node_values[i], dy, p, dx, s.out, assign, *s.n0);
    }
  }
}

}  // namespace

namespace {

/// Builds the fused regions of a schedule: fusible groups join the open region
/// and wait; a group that cannot be fused runs where it was, unless it reads a
/// node of the open region, which then closes and runs first, its groups
/// together.  A region so runs after the groups it was put off past: none of
/// them reads it, and its own arguments were all computed before its groups'
/// places.  The schedule is rewritten in the new order.
class RegionBuilder {
 public:
  RegionBuilder(const GraphMemory& m, BatchState& st, VariableIndex first)
      : m_(m), seg_(st.segment), sc_(st.scheduling), s_(sc_.schedule), starts_(sc_.fusion_starts), first_(first) {}

  void run(uint32_t n) {
    s_.fused_regions.clear();
    s_.fused_tasks.clear();
    sc_.fusion_position.assign(n, kNoNode);  // here: 0 for a node of the open region
    sc_.fusion_open.clear();
    sc_.fusion_sizes.clear();
    sc_.fusion_members.clear();
    starts_.clear();
    for (uint32_t g = 0, pos = 0; g < s_.group_sizes.size(); pos += s_.group_sizes[g++]) starts_.push_back(pos);
    for (uint32_t g = 0; g < s_.group_sizes.size(); ++g) {
      if (fusible(m_, m_.node(first_ + s_.members[starts_[g]]))) {
        open(g);
        continue;
      }
      if (reads_open(g)) close();
      emit(g);
    }
    close();
    s_.group_sizes.swap(sc_.fusion_sizes);
    s_.members.swap(sc_.fusion_members);
    size_t pos = 0, g = 0;
    for (const FusedRegion& r : s_.fused_regions) {
      for (; g < r.first_group; ++g) pos += s_.group_sizes[g];
      order_lanes(sc_, seg_, r, pos);
    }
  }

 private:
  void open(uint32_t g) {
    sc_.fusion_open.push_back(g);
    for (uint32_t j = 0; j < s_.group_sizes[g]; ++j) sc_.fusion_position[s_.members[starts_[g] + j]] = 0;
  }

  bool reads_open(uint32_t g) const {
    if (sc_.fusion_open.empty()) return false;
    for (uint32_t j = 0; j < s_.group_sizes[g]; ++j) {
      const uint32_t o = s_.members[starts_[g] + j];
      for (uint32_t e = seg_.inner_arg_start[o]; e < seg_.inner_arg_start[o + 1]; ++e)
        if (sc_.fusion_position[seg_.inner_args[e]] == 0) return true;
    }
    return false;
  }

  void emit(uint32_t g) {
    sc_.fusion_sizes.push_back(s_.group_sizes[g]);
    const uint32_t* members = s_.members.data() + starts_[g];
    sc_.fusion_members.insert(sc_.fusion_members.end(), members, members + s_.group_sizes[g]);
  }

  void close() {
    if (sc_.fusion_open.empty()) return;
    FusedRegion r{static_cast<uint32_t>(sc_.fusion_sizes.size()), static_cast<uint32_t>(sc_.fusion_open.size()), tasks_,
                  0};
    for (const uint32_t g : sc_.fusion_open) {
      emit(g);
      r.tasks += s_.group_sizes[g];
      for (uint32_t j = 0; j < s_.group_sizes[g]; ++j) sc_.fusion_position[s_.members[starts_[g] + j]] = kNoNode;
    }
    tasks_ += r.tasks;
    s_.fused_regions.push_back(r);
    sc_.fusion_open.clear();
  }

  const GraphMemory& m_;
  const SegmentNodes& seg_;
  ScheduleScratch& sc_;
  Schedule& s_;
  std::vector<uint32_t>& starts_;  // each group's first member in s_.members
  const VariableIndex first_;
  uint32_t tasks_ = 0;
};

}  // namespace

void plan_fusion(const GraphMemory& m, BatchState& st, VariableIndex first, uint32_t n) {
  RegionBuilder(m, st, first).run(n);
}

bool run_fused_region(GraphMemory& m, BatchState& st, const DenseView& dv, const Schedule& schedule, size_t r,
                      size_t member_pos) {
  const FusedRegion& region = schedule.fused_regions[r];
  const uint32_t end = region.first_group + region.groups;
  // A plan is cached by structure, not device: a graph on a GPU runs it unfused.
  for (uint32_t g = region.first_group, pos = static_cast<uint32_t>(member_pos); g < end;
       pos += schedule.group_sizes[g++])
    if (m.node(dv.first + schedule.members[pos]).value.device->type != DeviceType::CPU) return false;
  const size_t base = st.groups.size();
  size_t pos = member_pos;
  for (uint32_t g = region.first_group; g < end; ++g) {
    const uint32_t k = schedule.group_sizes[g];
    VariableIndex* members = static_cast<VariableIndex*>(m.meta.allocate(k * sizeof(VariableIndex)));
    for (uint32_t j = 0; j < k; ++j) members[j] = dv.first + schedule.members[pos + j];
    pos += k;
    Node& n0 = m.node(members[0]);
    const unsigned nargs = n0.num_args;
    uint32_t* ids = static_cast<uint32_t*>(m.meta.allocate(size_t(nargs) * k * sizeof(uint32_t)));
    for (unsigned p = 0; p < nargs; ++p)
      for (uint32_t j = 0; j < k; ++j) ids[p * k + j] = dv.arg_id(members[j], p);
    if (n0.op != OpKind::PickRange) {  // a slice's value is a view, set when it runs
      const size_t out = n0.value.d.size();
      float* block = m.arenas(n0.value.device).values.allocate_floats(out * k);
      for (uint32_t j = 0; j < k; ++j) {
        m.node(members[j]).value.v = block + j * out;
        st.node_values[members[j]] = block + j * out;
      }
    }
    BatchGroup recorded{&n0, members, k, nullptr, nullptr, ids};
    recorded.fused = region.groups;
    st.groups.push_back(recorded);
    st.stats.nodes += k;
  }
  uint32_t* tasks = static_cast<uint32_t*>(m.meta.allocate(2 * size_t(region.tasks) * sizeof(uint32_t)));
  std::memcpy(tasks, schedule.fused_tasks.data() + 2 * size_t(region.first_task),
              2 * size_t(region.tasks) * sizeof(uint32_t));
  st.groups[base].fused_tasks = tasks;
  forward_tasks(m, st, base);
  ++st.stats.kernels;
  ++st.stats.fused_regions;
  st.stats.fused_groups += region.groups;
  return true;
}

size_t replay_fused_region(GraphMemory& m, BatchState& st, size_t g) {
  const size_t count = st.groups[g].fused;
  for (size_t gi = g; gi < g + count; ++gi) {
    const BatchGroup& group = st.groups[gi];
    if (group.exec->op == OpKind::PickRange) continue;
    for (unsigned j = 0; j < group.k; ++j) st.node_values[group.members[j]] = m.node(group.members[j]).value.v;
  }
  forward_tasks(m, st, g);
  ++st.stats.kernels;
  return count;
}

size_t backward_fused_region(GraphMemory& m, BatchState& st, size_t g, FusedBackwardHost& host) {
  const size_t count = st.groups[g].fused, base = g + 1 - count;
  const Arena::Mark mark = m.meta.mark();
  Step* steps = static_cast<Step*>(m.meta.allocate(count * sizeof(Step)));
  make_steps(m, st, base, count, steps);
  RegionGradients region(st, host);
  for (size_t gi = 0; gi < count; ++gi) {
    steps[gi].needs_gradient = st.backward.group_needs_gradient[base + gi] != 0;
    if (steps[gi].needs_gradient) region.claim_if_unwritten(st.groups[base + gi]);
  }
  // Group by group from the last, each group's members in memory order: the
  // values and gradients read here were written long before, and whole blocks
  // read in order stream from memory where the lanes' short pieces of many
  // blocks would wait on it.  Every reader of a member in the region belongs
  // to a later group, so its gradient is complete when the member is reached.
  for (size_t gi = count; gi-- > 0;) {
    const Step& s = steps[gi];
    if (!s.needs_gradient) continue;
    for (unsigned j = 0; j < s.k; ++j) backward_task(m, st, s, j, region);
  }
  m.meta.rewind(mark);
  return base;
}

}  // namespace dynet_lite
