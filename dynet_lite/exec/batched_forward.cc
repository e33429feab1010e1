// Batched forward over a segment [first, last] of not-yet-computed nodes: the
// segment is described (exec/signature.h) and scheduled (exec/scheduler.h), and
// each group runs the op's own kernel once on a "virtual" node whose batch is the
// members' batches stacked, its arguments laid out by exec/batch_memory.h.
#include <chrono>

#include "dynet_lite/except.h"
#include "dynet_lite/exec/batch_memory.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/exec/executor.h"
#include "dynet_lite/exec/fusion.h"
#include "dynet_lite/exec/signature.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// Runs the groups of one segment's schedule.
class BatchedForward {
 public:
  BatchedForward(GraphMemory& m, BatchState& st, const DenseView& dv, std::mt19937& rng, const RunOptions& options)
      : m_(m), st_(st), dv_(dv), rng_(rng), options_(options) {}

  /// Runs the groups recorded by an earlier forward again, on the current
  /// values of their members' arguments (a compiled program's replay).
  void replay() {
    for (size_t gi = 0; gi < st_.groups.size(); ++gi) {
      // Fusion (exec/fusion.h): a fused region runs as a whole.
      if (st_.groups[gi].fused) {
        const size_t count = replay_fused_region(m_, st_, gi);
        check_values(gi, count);
        gi += count - 1;
        continue;
      }
      const BatchGroup& g = st_.groups[gi];
      if (g.k == 1) {
        replay_single(g.members[0]);
      } else {
        replay_batched(g);
      }
      if (options_.check_validity)
        for (unsigned j = 0; j < g.k; ++j) {
          const Node& node = m_.node(g.members[j]);
          check_finite(node.value, "value", op_name(node.op), g.members[j]);
        }
    }
  }

  void run(const Schedule& schedule) {
    size_t pos = 0, region = 0;
    for (size_t g = 0; g < schedule.group_sizes.size(); ++g) {
      // Fusion (exec/fusion.h): the region's groups run as one, unless its nodes
      // are not on the CPU; then they run one by one below.
      const bool fused_here =
          region < schedule.fused_regions.size() && schedule.fused_regions[region].first_group == g;
      if (fused_here && options_.fusion) {
        const FusedRegion& r = schedule.fused_regions[region++];
        const size_t groups_before = st_.groups.size();
        if (run_fused_region(m_, st_, dv_, schedule, region - 1, pos)) {
          check_values(groups_before, r.groups);
          g += r.groups - 1;
          pos += r.tasks;
          continue;
        }
      } else if (fused_here) {
        ++region;
      }
      const uint32_t k = schedule.group_sizes[g];
      VariableIndex* members = static_cast<VariableIndex*>(m_.meta.allocate(k * sizeof(VariableIndex)));
      for (unsigned j = 0; j < k; ++j) members[j] = dv_.first + schedule.members[pos + j];
      pos += k;
      run_group(members, k);
    }
  }

 private:
  /// With check_validity, the values of the recorded groups [g, g + count).
  void check_values(size_t g, size_t count) {
    if (!options_.check_validity) return;
    for (size_t gi = g; gi < g + count; ++gi)
      for (unsigned j = 0; j < st_.groups[gi].k; ++j) {
        const VariableIndex i = st_.groups[gi].members[j];
        const Node& node = m_.node(i);
        check_finite(node.value, "value", op_name(node.op), i);
      }
  }

  void run_group(VariableIndex* members, unsigned k) {
    if (k > 1) order_members_by_layout(m_, st_, dv_, members, k);
    st_.stats.nodes += k;
    split_into_pieces(m_, st_, dv_, members, k);
    // One output block for all pieces, so the group's outputs lie in member order.
    const auto& pieces = st_.forward.pieces;
    const Node& n0 = m_.node(members[0]);
    const size_t out = n0.value.d.size();
    float* block = nullptr;
    if (pieces.size() > 1 && !op_info(n0.op).sets_own_value)
      block = m_.arenas(n0.value.device).values.allocate_floats(out * k);
    for (const auto& piece : pieces)
      run_piece(piece.first, piece.second, block ? block + (piece.first - members) * out : nullptr);
    if (options_.check_validity)
      for (unsigned j = 0; j < k; ++j) {
        const Node& node = m_.node(members[j]);
        check_finite(node.value, "value", op_name(node.op), members[j]);
      }
  }

  /// One kernel call for the piece, or one per member when they cannot batch.
  /// `out`: where the piece's outputs go (null: allocated here).
  void run_piece(VariableIndex* run, unsigned len, float* out) {
    ++st_.stats.kernels;
    if (len > 1 && run_batched(run, len, out)) {
      ++st_.stats.batched_groups;
      return;
    }
    st_.stats.kernels += len - 1;
    for (unsigned j = 0; j < len; ++j) {
      Node& n = m_.node(run[j]);
      run_single(n, out ? out + j * n.value.d.size() : nullptr);
      st_.node_values[run[j]] = n.value.v;
      st_.groups.push_back({&n, run + j, 1, nullptr, nullptr, nullptr});
    }
  }

  /// Runs one node alone (a group of one), its output at `out` (null: allocated here).
  void run_single(Node& n, float* out) {
    const OpInfo& info = op_info(n.op);
    Device* dev = n.value.device;
    DeviceArenas& da = m_.arenas(dev);
    ForwardFn f = forward_kernel(info, dev);
    m_.xs.resize(n.num_args);
    for (unsigned k = 0; k < n.num_args; ++k) m_.xs[k] = &m_.node(n.args[k]).value;
    if (!info.sets_own_value) n.value.v = out ? out : da.values.allocate_floats(n.value.d.size());
    ExecContext ctx(&da.values, &da.scratch, &rng_, dev, &m_.meta);
    Arena::Mark mark = da.scratch.mark();
    f(m_.xs.data(), n.num_args, n, ctx);
    da.scratch.rewind(mark);
  }

  /// A group of one again: its value stays where the capture put it (a node
  /// that points at its own value, a parameter or a looked-up row, points anew).
  void replay_single(VariableIndex i) {
    Node& n = m_.node(i);
    run_single(n, n.value.v);
    st_.node_values[i] = n.value.v;
    ++st_.stats.kernels;
  }

  /// A batched group again: its arguments laid out anew (a value may lie
  /// elsewhere than at the capture: a looked-up row), its output where it was.
  void replay_batched(const BatchGroup& g) {
    Node& v = *g.exec;
    const OpInfo& info = op_info(v.op);
    Device* dev = v.value.device;
    DeviceArenas& da = m_.arenas(dev);
    ExecContext ctx(&da.values, &da.scratch, &rng_, dev, &m_.meta);
    if (info.batch == BatchKind::Custom)
      DYNET_LITE_CHECK(combine(info, g.members, g.k, v, ctx), std::runtime_error,
                       "compiled program: the " << info.name << " group of " << g.k
                                                << " nodes no longer batches; build the graph again");
    bool layout_changed = false;
    for (unsigned p = 0; p < v.num_args; ++p) layout_changed |= restack_argument(g, p, dev, da);
    if (layout_changed) {
      StackedArgs a{nullptr, const_cast<const Tensor**>(g.xs), nullptr, nullptr};
      DYNET_LITE_CHECK(shape_accepts(info, a, v.num_args, v), std::runtime_error,
                       "compiled program: the arguments of the " << info.name << " group of " << g.k
                                                                 << " nodes no longer stack as captured (shape "
                                                                 << v.value.d << "); build the graph again");
    }
    Arena::Mark mark = da.scratch.mark();
    forward_kernel(info, dev)(g.xs, v.num_args, v, ctx);
    da.scratch.rewind(mark);
    const size_t out = v.value.d.size() / g.k;
    for (unsigned j = 0; j < g.k; ++j) {
      m_.node(g.members[j]).value.v = v.value.v + j * out;
      st_.node_values[g.members[j]] = v.value.v + j * out;
    }
    ++st_.stats.kernels;
  }

  /// Argument p of a recorded group, as stack_argument() lays it out, from the
  /// members' current values.  Returns whether it is now passed once where it
  /// was stacked at the capture, or the other way round.
  bool restack_argument(const BatchGroup& g, unsigned p, Device* dev, DeviceArenas& da) {
    Tensor& arg = *const_cast<Tensor*>(g.xs[p]);
    unsigned char& stacked = const_cast<unsigned char&>(g.stacked[p]);
    const uint32_t* ids = g.arg_ids + size_t(p) * g.k;
    const unsigned member_bd = stacked ? arg.d.bd / g.k : arg.d.bd;
    const float* first = dv_.value(ids[0] & ~BatchGroup::kVariableBit);
    const size_t sz = arg.d.size() / arg.d.bd * member_bd;
    bool same = true, contiguous = true;
    for (unsigned j = 1; j < g.k; ++j) {
      const float* vj = dv_.value(ids[j] & ~BatchGroup::kVariableBit);
      same &= same_argument(ids[j], ids[0], vj, first);
      contiguous &= vj == first + j * sz;
    }
    const bool was_stacked = stacked != 0;
    if (same && member_bd == 1) {
      arg.v = const_cast<float*>(first);
      arg.d.bd = member_bd;
      stacked = 0;
      return was_stacked;
    }
    arg.d.bd = member_bd * g.k;
    stacked = 1;
    if (contiguous) {
      arg.v = const_cast<float*>(first);
    } else {
      float* buf = da.gathers.allocate_floats(sz * g.k);
      gather_values(st_, dv_, dev, da, buf, ids, sz, g.k);
      arg.v = buf;
      st_.stats.bytes_gathered += sz * g.k * sizeof(float);
    }
    return !was_stacked;
  }

  /// Whether two members' argument (node ids a and b, values va and vb) is one
  /// value passed once: the same node, or two parameter nodes of one parameter.
  /// Not any two nodes with the same memory: two equal slices of one value are
  /// views of the same floats (exec/fusion.h) but have gradients of their own.
  bool same_argument(uint32_t a, uint32_t b, const float* va, const float* vb) const {
    return a == b || (va == vb && is_shared_leaf(m_.node(a & ~BatchGroup::kVariableBit)));
  }

  /// The arguments of a batched kernel call, in host memory (graph meta arena).
  struct StackedArgs {
    Tensor* args;
    const Tensor** xs;
    unsigned char* stacked;  // per argument: 1 stacked, 0 passed once (shared)
    uint32_t* ids;           // the members' arguments, argument after argument
  };

  StackedArgs allocate_args(unsigned nargs, unsigned k) {
    if (!nargs) return {nullptr, nullptr, nullptr, nullptr};
    return {static_cast<Tensor*>(m_.meta.allocate(nargs * sizeof(Tensor))),
            static_cast<const Tensor**>(m_.meta.allocate(nargs * sizeof(Tensor*))),
            static_cast<unsigned char*>(m_.meta.allocate(nargs)),
            static_cast<uint32_t*>(m_.meta.allocate(size_t(nargs) * k * sizeof(uint32_t)))};
  }

  /// Argument p of the members, stacked: passed once when it is one value of
  /// batch 1 for all, read in place when the members' values lie side by side,
  /// else gathered.  Returns the bytes gathered.
  uint64_t stack_argument(const Node& n0, const VariableIndex* members, unsigned k, unsigned p, Device* dev,
                          DeviceArenas& da, StackedArgs& a) {
    const Node& a0 = m_.node(n0.args[p]);
    const size_t sz = a0.value.d.size();
    uint32_t* ids = a.ids + size_t(p) * k;
    bool same = true, contiguous = true;
    ids[0] = dv_.arg_id(members[0], p);
    for (unsigned j = 1; j < k; ++j) {
      ids[j] = dv_.arg_id(members[j], p);
      const float* vj = dv_.value(ids[j] & ~BatchGroup::kVariableBit);
      same &= same_argument(ids[j], ids[0], vj, a0.value.v);
      contiguous &= vj == a0.value.v + j * sz;
    }
    a.args[p] = a0.value;
    a.xs[p] = &a.args[p];
    if (same && a0.value.d.bd == 1) {  // one argument for all members: broadcast by the kernel
      a.stacked[p] = 0;
      return 0;
    }
    a.args[p].d.bd = a0.value.d.bd * k;
    a.stacked[p] = 1;
    if (contiguous) return 0;
    float* buf = da.gathers.allocate_floats(sz * k);
    gather_values(st_, dv_, dev, da, buf, ids, sz, k);
    a.args[p].v = buf;
    return sz * k * sizeof(float);
  }

  /// Whether the op's own shape rule accepts the stacked arguments.
  static bool shape_accepts(const OpInfo& info, const StackedArgs& a, unsigned nargs, Node& v) {
    if (!nargs) return true;
    try {
      return info.shape(a.xs, nargs, v) == v.value.d;
    } catch (const std::exception&) {
      return false;
    }
  }

  /// Tries to run `k` members as one kernel call, their outputs side by side at
  /// `out_block` (null: allocated here); false if they cannot (the caller then
  /// runs them one by one).
  bool run_batched(const VariableIndex* members, unsigned k, float* out_block) {
    Node& n0 = m_.node(members[0]);
    const OpInfo& info = op_info(n0.op);
    Device* dev = n0.value.device;
    DeviceArenas& da = m_.arenas(dev);
    ForwardFn f = forward_kernel(info, dev);
    // Bookkeeping (the virtual node, argument lists, merged indices) lives in host
    // memory; gathered arguments and outputs in the device's arena.
    const Arena::Mark values_mark = da.values.mark(), gathers_mark = da.gathers.mark(), host_mark = m_.meta.mark();
    auto give_up = [&] {
      da.values.rewind(values_mark);
      da.gathers.rewind(gathers_mark);
      m_.meta.rewind(host_mark);
      return false;
    };
    ExecContext ctx(&da.values, &da.scratch, &rng_, dev, &m_.meta);
    Node* v = new (m_.meta.allocate(sizeof(Node))) Node(n0);
    v->value.d.bd = n0.value.d.bd * k;
    v->aux = nullptr;
    v->args = nullptr;
    if (info.batch == BatchKind::Custom && !combine(info, members, k, *v, ctx)) return give_up();
    const unsigned nargs = n0.num_args;
    StackedArgs a = allocate_args(nargs, k);
    uint64_t gathered = 0;
    Clock::time_point copy_start;
    if (st_.profiling) copy_start = Clock::now();
    for (unsigned p = 0; p < nargs; ++p) gathered += stack_argument(n0, members, k, p, dev, da, a);
    if (st_.profiling) st_.stats.copy_seconds += seconds_since(copy_start);
    if (!shape_accepts(info, a, nargs, *v)) return give_up();
    const size_t out = n0.value.d.size();
    if (!info.sets_own_value) v->value.v = out_block ? out_block : da.values.allocate_floats(out * k);
    Arena::Mark mark = da.scratch.mark();
    f(a.xs, nargs, *v, ctx);
    da.scratch.rewind(mark);
    for (unsigned j = 0; j < k; ++j) {
      m_.node(members[j]).value.v = v->value.v + j * out;
      st_.node_values[members[j]] = v->value.v + j * out;
    }
    st_.stats.bytes_gathered += gathered;
    st_.groups.push_back({v, members, k, a.xs, a.stacked, a.ids});
    return true;
  }

  /// Custom batching: the op fills the virtual node's parameters from the members'.
  bool combine(const OpInfo& info, const VariableIndex* members, unsigned k, Node& v, ExecContext& ctx) {
    st_.member_nodes.resize(k);
    for (unsigned j = 0; j < k; ++j) st_.member_nodes[j] = &m_.node(members[j]);
    return info.batch_combine(st_.member_nodes.data(), k, v, ctx);
  }

  GraphMemory& m_;
  BatchState& st_;
  const DenseView& dv_;
  std::mt19937& rng_;
  const RunOptions& options_;
};

}  // namespace

void Executor::replay_batched(const RunOptions& options) {
  BatchState& st = m_.batch_state();
  const auto t0 = Clock::now();
  const DenseView dv{st, 0};
  BatchedForward(m_, st, dv, rng_, options).replay();
  st.node_values_valid = captured_last_ + 1;
  st.stats.forward_seconds += seconds_since(t0);
}

void Executor::forward_batched(VariableIndex last, const RunOptions& options) {
  GraphMemory& m = m_;
  BatchState& st = m.batch_state();
  const auto t0 = Clock::now();
  // Nodes computed earlier without batching become groups of one.
  if (st.groups.empty() && evaluated_ > 0) {
    for (VariableIndex i = 0; i < evaluated_; ++i) {
      VariableIndex* mem = static_cast<VariableIndex*>(m.meta.allocate(sizeof(VariableIndex)));
      *mem = i;
      st.groups.push_back({&m.node(i), mem, 1, nullptr, nullptr, nullptr});
    }
  }
  const VariableIndex first = evaluated_;
  const uint32_t n = last - first + 1;
  const uint64_t key = describe_segment(m, st, first, n, options.strategy);
  // Values of the nodes before the segment, for DenseView (those of earlier
  // batched segments are there already).
  st.node_values.resize(static_cast<size_t>(last) + 1);
  for (VariableIndex i = std::min(st.node_values_valid, first); i < first; ++i) st.node_values[i] = m.node(i).value.v;
  const Schedule& schedule = plan_segment(m, st, first, n, key, options.strategy);
  const auto t1 = Clock::now();
  st.stats.schedule_seconds += std::chrono::duration<double>(t1 - t0).count();

  const size_t groups_before = st.groups.size();
  const DenseView dv{st, first};
  try {
    BatchedForward(m, st, dv, rng_, options).run(schedule);
  } catch (...) {
    st.groups.resize(groups_before);
    throw;
  }
  evaluated_ = last + 1;
  st.node_values_valid = last + 1;
  st.stats.forward_seconds += seconds_since(t1);
}

}  // namespace dynet_lite
