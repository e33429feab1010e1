// Batched backward: the groups of batched forward replayed in reverse, each
// group's gradients side by side in one block, laid out as its values were.
#include <algorithm>
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

inline VariableIndex node_id(uint32_t arg_id) { return arg_id & ~BatchGroup::kVariableBit; }

/// One backward pass over the recorded groups.  Each group that needs a gradient
/// gets a block for its members' gradients, side by side, zeroed only when
/// something first writes to it (ensure_zero): zeroed up front, megabytes per
/// graph left the caches before the kernels came to add to them.
class BatchedBackward : public FusedBackwardHost {
 public:
  BatchedBackward(GraphMemory& m, BatchState& st, std::mt19937& rng, bool full, const RunOptions& options)
      : m_(m), st_(st), bk_(st.backward), grad_of_(st.node_gradients), rng_(rng), full_(full), options_(options) {}

  /// Marks the nodes that get a gradient and gives their groups blocks.
  void prepare(VariableIndex last) {
    // Groups may hold nodes past `last` (computed by a later forward): they take
    // part with zero gradient.
    VariableIndex top = last;
    for (const BatchGroup& g : st_.groups)
      for (unsigned j = 0; j < g.k; ++j) top = std::max(top, g.members[j]);
    m_.marks.assign(top + 1, GradientMark::None);
    grad_of_.assign(top + 1, nullptr);
    m_.begin_backward();
    if (full_ || m_.node(last).variable) m_.marks[last] = GradientMark::Flows;
    mark_groups(top);
    find_on_demand(top);
    give_blocks();
    record_on_demand();
  }

  /// Runs the groups in reverse from the loss `last` (marked by prepare()).
  void run(VariableIndex last) {
    Node& target = m_.node(last);
    ensure_zero(last);
    target.value.device->fill(grad_of_[last], 1.f, target.value.d.size());
    for (size_t gi = st_.groups.size(); gi-- > 0;) {
      // Fusion (exec/fusion.h): a fused region, reached at its last group, runs as a whole.
      if (st_.groups[gi].fused) {
        const size_t first = backward_fused_region(m_, st_, gi, *this);
        check_gradients(first, gi + 1);
        gi = first;
        continue;
      }
      if (!bk_.group_needs_gradient[gi]) continue;
      if (!bk_.on_demand.empty() && bk_.on_demand_role[gi]) {
        // A loss group leaves its argument's gradient to be remade; the scores
        // group remakes it block by block.
        if (bk_.on_demand_role[gi] == kScoresGroup) backward_on_demand(gi);
        continue;
      }
      backward_group(st_.groups[gi]);
    }
    if (!m_.weight_grads.empty()) m_.weight_grads.flush_all(m_.arenas(target.value.device).scratch);
  }

 private:
  /// Which groups need a gradient (a member is marked), the size of their
  /// blocks, and the marks of their arguments.
  void mark_groups(VariableIndex top) {
    const size_t ngroups = st_.groups.size();
    bk_.group_needs_gradient.assign(ngroups, 0);
    bk_.group_of.resize(top + 1);
    bk_.unzeroed_block.assign(ngroups, nullptr);
    bk_.block_floats.resize(ngroups);
    for (size_t gi = ngroups; gi-- > 0;) {
      const BatchGroup& g = st_.groups[gi];
      bool any = false;
      for (unsigned j = 0; j < g.k; ++j) any |= m_.marks[g.members[j]] != GradientMark::None;
      if (!any) continue;  // its members keep grad_of_ null: no gradient
      bk_.group_needs_gradient[gi] = 1;
      const Node& n0 = m_.node(g.members[0]);
      bk_.block_floats[gi] = n0.value.d.size() * g.k;
      for (unsigned j = 0; j < g.k; ++j) {
        m_.marks[g.members[j]] = GradientMark::Flows;
        bk_.group_of[g.members[j]] = static_cast<uint32_t>(gi);
      }
      if (!op_info(n0.op).blocks_gradient) mark_arguments(g, n0);
    }
  }

  /// The blocks of the groups that need a gradient, but for the groups whose
  /// gradient is remade on demand.  Only grad_of_ is set here: a member's Node
  /// (its grad tensor) is written when a kernel or the user needs it
  /// (gradient_tensor, get_gradient), not for each of the thousands of members,
  /// whose Nodes are rarely in cache.
  void give_blocks() {
    for (size_t gi = st_.groups.size(); gi-- > 0;) {
      if (!bk_.group_needs_gradient[gi]) continue;
      if (!bk_.on_demand.empty() && bk_.on_demand_role[gi] == kScoresGroup) continue;
      const BatchGroup& g = st_.groups[gi];
      const Node& n0 = m_.node(g.members[0]);
      float* block = m_.arenas(n0.value.device).grads.allocate_floats(bk_.block_floats[gi]);
      bk_.unzeroed_block[gi] = block;
      const size_t sz = n0.value.d.size();
      for (unsigned j = 0; j < g.k; ++j) grad_of_[g.members[j]] = block + j * sz;
    }
  }

  /// Groups worth leaving unstored (as plain backward leaves a loss's large
  /// argument, plain_executor.cc): groups of an op that batches element-wise,
  /// with kMinOnDemandFloats of gradient or more, whose members only losses read
  /// (OpInfo::input_gradient: pickneglogsoftmax), in groups of their own whose
  /// every member reads such a group.  Such a group gets no block: its
  /// members' gradients are remade from their losses' (bk_.on_demand_reads) when
  /// backward reaches it, and their losses' groups are skipped.
  void find_on_demand(VariableIndex top) {
    bk_.on_demand.clear();
    if (full_ || options_.check_validity || m_.loss_nodes.empty()) return;
    const size_t ngroups = st_.groups.size();
    bk_.on_demand_role.assign(ngroups, 0);
    // Candidates: the groups that losses read (a loss's own group is no candidate).
    for (size_t gi = 0; gi < ngroups; ++gi) {
      const BatchGroup& g = st_.groups[gi];
      const Node& n0 = m_.node(g.members[0]);
      if (!op_info(n0.op).input_gradient || n0.num_args != 1) continue;
      for (unsigned j = 0; j < g.k; ++j) {
        const VariableIndex a = argument(g, j, 0);
        if (m_.marks[a] != GradientMark::None) bk_.on_demand_role[bk_.group_of[a]] = kScoresGroup;
      }
    }
    for (size_t gi = 0; gi < ngroups; ++gi) {
      if (bk_.on_demand_role[gi] != kScoresGroup) continue;
      bk_.on_demand_role[gi] = 0;
      const BatchGroup& S = st_.groups[gi];
      if (!bk_.group_needs_gradient[gi] || S.fused || (S.k > 1 && !S.arg_ids)) continue;
      const Node& v = *S.exec;
      const OpInfo& info = op_info(v.op);
      if (v.value.device->type != DeviceType::CPU || v.aux || info.batch != BatchKind::Elementwise || info.leaf ||
          info.blocks_gradient || v.num_args > kMaxArgs || v.value.d.bd % S.k || v.value.d.size() < kMinOnDemandFloats)
        continue;
      bk_.on_demand_role[gi] = kScoresGroup;
      bk_.on_demand.push_back(gi);
    }
    if (bk_.on_demand.empty()) return;
    bk_.member_pos.assign(top + 1, 0);
    for (size_t gi : bk_.on_demand) {
      const BatchGroup& S = st_.groups[gi];
      for (unsigned j = 0; j < S.k; ++j) bk_.member_pos[S.members[j]] = j + 1;
    }
    // Every reader of a member: a loss in a group whose members all read such
    // members (else that group is dropped, and the groups of losses reading it
    // are looked at again).
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t gi = 0; gi < ngroups; ++gi) {
        const BatchGroup& g = st_.groups[gi];
        const Node& n0 = m_.node(g.members[0]);
        const bool loss =
            op_info(n0.op).input_gradient && n0.num_args == 1 && !g.fused && (g.k == 1 || g.stacked[0]);
        bool reads = false, all = true;
        for (unsigned j = 0; j < g.k; ++j)
          for (unsigned p = 0; p < n0.num_args; ++p) {
            const VariableIndex a = argument(g, j, p);
            const bool od = a <= top && bk_.member_pos[a] && bk_.on_demand_role[bk_.group_of[a]] == kScoresGroup;
            reads |= od;
            // a loss of the argument's batch (not one summing over a batch of 1)
            all &= od && m_.node(g.members[j]).value.d.bd == m_.node(a).value.d.bd;
          }
        if (!reads) continue;
        if (loss && all) {
          bk_.on_demand_role[gi] = kLossGroup;
          continue;
        }
        for (unsigned j = 0; j < g.k; ++j)  // drops the groups it reads
          for (unsigned p = 0; p < n0.num_args; ++p) {
            const VariableIndex a = argument(g, j, p);
            if (a <= top && bk_.member_pos[a] && bk_.on_demand_role[bk_.group_of[a]] == kScoresGroup) {
              bk_.on_demand_role[bk_.group_of[a]] = 0;
              changed = true;
            }
          }
      }
    }
    size_t kept = 0;
    for (size_t gi : bk_.on_demand)
      if (bk_.on_demand_role[gi] == kScoresGroup) bk_.on_demand[kept++] = gi;
    bk_.on_demand.resize(kept);
    for (size_t gi = 0; gi < ngroups; ++gi)  // loss groups of dropped groups run as usual
      if (bk_.on_demand_role[gi] == kLossGroup) {
        const BatchGroup& g = st_.groups[gi];
        const VariableIndex a = argument(g, 0, 0);
        if (bk_.on_demand_role[bk_.group_of[a]] != kScoresGroup) bk_.on_demand_role[gi] = 0;
      }
  }

  /// Argument p of member j of group g.
  VariableIndex argument(const BatchGroup& g, unsigned j, unsigned p) const {
    return g.arg_ids ? node_id(g.arg_ids[size_t(p) * g.k + j]) : m_.node(g.members[j]).args[p];
  }

  /// Marks the members of the groups left unstored OnDemand, and lists every
  /// loss that reads them, with how to remake its part of their gradient
  /// (GraphMemory::on_demand_gradients: for get_gradient; bk_.on_demand_reads:
  /// for backward, by group and member).
  void record_on_demand() {
    bk_.on_demand_reads.clear();
    if (bk_.on_demand.empty()) return;
    for (size_t gi = 0; gi < st_.groups.size(); ++gi) {
      if (bk_.on_demand_role[gi] != kLossGroup) continue;
      const BatchGroup& L = st_.groups[gi];
      const unsigned ml = L.exec->value.d.bd / L.k;
      for (unsigned j = 0; j < L.k; ++j) {
        const VariableIndex a = argument(L, j, 0);
        const float* dy = grad_of_[L.members[j]];
        if (!dy) continue;  // no gradient reached this loss
        const Tensor& x = L.k > 1 ? *L.xs[0] : m_.node(a).value;
        const unsigned b0 = L.k > 1 ? j * ml : 0;
        const float* loss_dy = L.k > 1 ? grad_of_[L.members[0]] : dy;
        bk_.on_demand_reads.push_back({bk_.group_of[a], bk_.member_pos[a] - 1, m_.on_demand_gradients.size()});
        m_.on_demand_gradients.push_back({a, L.exec, x, loss_dy, b0, b0 + ml, nullptr});
      }
    }
    for (size_t gi : bk_.on_demand) {
      const BatchGroup& S = st_.groups[gi];
      for (unsigned j = 0; j < S.k; ++j) m_.marks[S.members[j]] = GradientMark::OnDemand;
    }
    std::sort(bk_.on_demand_reads.begin(), bk_.on_demand_reads.end(), [](const OnDemandRead& a, const OnDemandRead& b) {
      return a.group != b.group ? a.group < b.group : a.member < b.member;
    });
  }

  /// Writes the gradient of members [j0, j1) of group gi (each `sz` floats) to
  /// `out`, from the losses that read them (`r`: the first read of the group
  /// at or after member j0, moved past the block).
  void remake_members(size_t gi, unsigned j0, unsigned j1, size_t sz, float* out, size_t& r, float* spare) {
    for (unsigned j = j0; j < j1; ++j) {
      float* dst = out + (j - j0) * sz;
      bool written = false;
      for (; r < bk_.on_demand_reads.size() && bk_.on_demand_reads[r].group == gi && bk_.on_demand_reads[r].member == j; ++r) {
        const GraphMemory::OnDemandGradient& od = m_.on_demand_gradients[bk_.on_demand_reads[r].record];
        const InputGradientFn remake = op_info(od.loss->op).input_gradient;
        remake(od.x, *od.loss, od.dy, od.b0, od.b1, written ? spare : dst);
        if (written)
          for (size_t i = 0; i < sz; ++i) dst[i] += spare[i];
        written = true;
      }
      if (!written) std::fill(dst, dst + sz, 0.f);
    }
  }

  /// The backward of group gi, left unstored (find_on_demand): its members'
  /// gradient is remade from their losses', and the group's kernel runs on it.
  /// A group of one block (on_demand_columns) has it in the kept memory, so
  /// that a parameter's weight-gradient term may be left for later as in
  /// backward_group; a larger one a block of members at a time in scratch
  /// memory, its kernel running on each block as on a group of those members,
  /// and no term left for later (it would read the block after it is gone).
  /// The arguments' gradients are zeroed first and only added to.
  void backward_on_demand(size_t gi) {
    const BatchGroup& S = st_.groups[gi];
    const Node& n0 = m_.node(S.members[0]);
    const Node& v = *S.exec;
    Device* dev = v.value.device;
    BackwardFn b = backward_kernel(op_info(v.op), dev);
    DeviceArenas& da = m_.arenas(dev);
    ExecContext ctx(&da.values, &da.scratch, &rng_, dev, &m_.meta);
    m_.offer_backward_memory(ctx, da);
    m_.end_backward_node(da);
    ctx.set_weight_grads(nullptr);
    const unsigned k = S.k, m = v.value.d.bd / k, nargs = v.num_args;
    const unsigned per = std::max(1u, on_demand_columns(v.value.d) / m);  // members per block
    const size_t col = v.value.d.batch_size(), sz = col * m;
    for (unsigned p = 0; p < nargs; ++p) {
      const bool stacked = k > 1 && S.stacked[p];
      for (unsigned j = 0; j < (stacked ? k : 1); ++j) {
        const VariableIndex a = stacked ? node_id(S.arg_ids[size_t(p) * k + j]) : n0.args[p];
        if (m_.marks[a] != GradientMark::None) ensure_zero(a);
      }
    }
    const bool one_block = per >= k;
    const Arena::Mark outer = da.scratch.mark();
    float* dy_block = one_block ? da.kept.allocate_floats(sz * k) : da.scratch.allocate_floats(sz * per);
    float* spare = da.scratch.allocate_floats(sz);
    size_t r = std::lower_bound(bk_.on_demand_reads.begin(), bk_.on_demand_reads.end(), gi,
                                [](const OnDemandRead& a, size_t g) { return a.group < g; }) -
               bk_.on_demand_reads.begin();
    Tensor part_args[kMaxArgs];
    const Tensor* part_xs[kMaxArgs];
    for (unsigned j0 = 0; j0 < k; j0 += per) {
      const unsigned members = std::min(per, k - j0);
      remake_members(gi, j0, j0 + members, sz, dy_block, r, spare);
      Node part = v;
      part.value.d.bd = members * m;
      part.value.v = v.value.v + size_t(j0) * sz;
      const Tensor dy(part.value.d, dy_block, dev, DeviceMempool::DEDFS);
      for (unsigned p = 0; p < nargs; ++p) {
        part_args[p] = *(S.k > 1 ? S.xs[p] : &m_.node(n0.args[p]).value);
        if (S.k > 1 && S.stacked[p]) {
          const unsigned ma = part_args[p].d.bd / k;
          part_args[p].v += size_t(j0) * ma * part_args[p].d.batch_size();
          part_args[p].d.bd = members * ma;
        }
        part_xs[p] = &part_args[p];
      }
      for (unsigned p = 0; p < nargs; ++p) {
        const Arena::Mark mark = da.scratch.mark();
        if (S.k == 1 || !S.stacked[p]) {
          const VariableIndex ai = n0.args[p];
          if (m_.marks[ai] != GradientMark::None) {
            Tensor dx = gradient_tensor(ai);
            ctx.set_weight_grads(one_block ? offer_sink(m_.node(ai), dev) : nullptr);
            call_noting_sink(ai, [&] { b(part_xs, nargs, part, dy, p, dx, ctx); });
            ctx.set_weight_grads(nullptr);
          }
          da.scratch.rewind(mark);
          continue;
        }
        const uint32_t* ids = S.arg_ids + size_t(p) * k + j0;
        const float* base = grad_of_[node_id(ids[0])];
        const size_t asz = m_.node(node_id(ids[0])).value.d.size();
        bool any = false, contiguous = true;
        for (unsigned j = 0; j < members; ++j) {
          const bool marked = m_.marks[node_id(ids[j])] != GradientMark::None;
          any |= marked;
          contiguous &= marked && grad_of_[node_id(ids[j])] == base + j * asz;
        }
        if (any) {
          Tensor dx = part_args[p];
          if (contiguous) {
            dx.v = const_cast<float*>(base);
            b(part_xs, nargs, part, dy, p, dx, ctx);
          } else {
            dx.v = ctx.scratch_floats(asz * members);
            dev->fill(dx.v, 0.f, asz * members);
            b(part_xs, nargs, part, dy, p, dx, ctx);
            scatter_add_gradients(m_, st_, dev, da, dx.v, ids, asz, members);
          }
        }
        da.scratch.rewind(mark);
      }
    }
    da.scratch.rewind(outer);
  }

  /// Marks the arguments of g's members that need a gradient.
  void mark_arguments(const BatchGroup& g, const Node& n0) {
    if (g.arg_ids) {  // from the group's argument list
      for (size_t e = 0, n = size_t(n0.num_args) * g.k; e < n; ++e)
        if (full_ || (g.arg_ids[e] & BatchGroup::kVariableBit)) m_.marks[node_id(g.arg_ids[e])] = GradientMark::Flows;
      return;
    }
    for (unsigned j = 0; j < g.k; ++j) {
      const Node& nj = m_.node(g.members[j]);
      for (unsigned p = 0; p < nj.num_args; ++p)
        if (full_ || m_.node(nj.args[p]).variable) m_.marks[nj.args[p]] = GradientMark::Flows;
    }
  }

  /// With check_validity, the gradients of the groups [g, end) that got one.
  void check_gradients(size_t g, size_t end) {
    if (!options_.check_validity) return;
    for (; g < end; ++g) {
      if (!bk_.group_needs_gradient[g]) continue;
      const BatchGroup& group = st_.groups[g];
      for (unsigned j = 0; j < group.k; ++j)
        check_finite(gradient_tensor(group.members[j]), "gradient", op_name(m_.node(group.members[j]).op),
                     group.members[j]);
    }
  }

  bool unwritten(VariableIndex i) const override { return bk_.unzeroed_block[bk_.group_of[i]] != nullptr; }
  void claim(VariableIndex i) override { bk_.unzeroed_block[bk_.group_of[i]] = nullptr; }

  /// Zeroes the gradient block of node i's group unless done already (the block
  /// pointer is cleared once it is).  Called for the loss and before every kernel
  /// that writes to a marked argument: every marked node has a writer.
  void ensure_zero(VariableIndex i) override {
    const uint32_t gi = bk_.group_of[i];
    if (float* block = bk_.unzeroed_block[gi]) {
      m_.node(i).value.device->fill(block, 0.f, bk_.block_floats[gi]);
      bk_.unzeroed_block[gi] = nullptr;
    }
  }

  /// Whether a kernel that writes the floats [dx, dx + n) of node i's group's
  /// block may assign them instead of adding (OpInfo::assigns_gradient): when
  /// nothing has written the block yet.  Claims the block if so, zeroing only the
  /// rest of it (the members past a shorter next step, say): the part assigned is
  /// never zeroed, a pass over megabytes of gradient per graph saved.
  bool claim_block(VariableIndex i, float* dx, size_t n) {
    const uint32_t gi = bk_.group_of[i];
    float* block = bk_.unzeroed_block[gi];
    if (!block) return false;
    const size_t before = static_cast<size_t>(dx - block), total = bk_.block_floats[gi];
    if (before + n > total) return false;  // contiguous across two groups' blocks
    Device* dev = m_.node(i).value.device;
    if (before) dev->fill(block, 0.f, before);
    if (before + n < total) dev->fill(dx + n, 0.f, total - before - n);
    bk_.unzeroed_block[gi] = nullptr;
    return true;
  }

  /// The gradient tensor of node i, its pointer written into its Node.
  Tensor gradient_tensor(VariableIndex i) {
    Node& n = m_.node(i);
    n.grad = grad_of_[i];
    return dynet_lite::gradient_tensor(n);
  }

  /// A CPU kernel may leave the product term of a parameter's gradient for
  /// later; the node is then marked PendingWeightGrads and flushed when its group
  /// is reached.  (Only parameters here: finding a computed weight among the
  /// members of every group would cost more than it saves, since batched
  /// products are rarely thin.)
  WeightGradSink* offer_sink(const Node& a, const Device* dev) {
    return is_shared_leaf(a) && dev->type == DeviceType::CPU ? &m_.weight_grads : nullptr;
  }

  /// Runs kernel call `b` for argument ai, marking it when it left weight
  /// gradients for later.
  template <class Call>
  void call_noting_sink(VariableIndex ai, Call call) {
    const size_t pending = m_.weight_grads.size();
    call();
    if (m_.weight_grads.size() != pending) m_.marks[ai] = GradientMark::PendingWeightGrads;
  }

  void backward_group(const BatchGroup& g) {
    Node& n0 = m_.node(g.members[0]);
    const OpInfo& info = op_info(n0.op);
    if (options_.check_validity)
      for (unsigned j = 0; j < g.k; ++j)
        check_finite(gradient_tensor(g.members[j]), "gradient", op_name(m_.node(g.members[j]).op), g.members[j]);
    if (info.accumulate) {
      accumulate(g, n0, info);
      return;
    }
    if (info.blocks_gradient || n0.num_args == 0) return;
    Device* dev = n0.value.device;
    BackwardFn b = backward_kernel(info, dev);
    DeviceArenas& da = m_.arenas(dev);
    ExecContext ctx(&da.values, &da.scratch, &rng_, dev, &m_.meta);
    m_.offer_backward_memory(ctx, da);
    if (dev->type == DeviceType::CPU) m_.end_backward_node(da);
    const bool may_assign = info.assigns_gradient && dev->type == DeviceType::CPU;
    if (g.k == 1) {
      backward_single(g.members[0], n0, b, da, ctx, may_assign);
      return;
    }
    Node& v = *g.exec;
    const Tensor dy(v.value.d, grad_of_[g.members[0]], dev, DeviceMempool::DEDFS);
    for (unsigned p = 0; p < n0.num_args; ++p) {
      Arena::Mark mark = da.scratch.mark();
      if (!g.stacked[p])
        backward_shared_argument(g, n0, dy, p, b, ctx);
      else
        backward_stacked_argument(g, n0, dy, p, b, ctx, may_assign);
      da.scratch.rewind(mark);
    }
  }

  /// Leaves (parameters, lookups): their gradients go into the model.
  void accumulate(const BatchGroup& g, const Node& n0, const OpInfo& info) {
    if (bk_.log_accumulates) bk_.accumulate_calls.push_back({size_t(&g - st_.groups.data()), m_.meta.mark()});
    if (info.accumulate_group && g.k > 1) {
      // Not offered the weight-gradient sink (not parameters): nothing to flush.
      st_.member_nodes.resize(g.k);
      for (unsigned j = 0; j < g.k; ++j) st_.member_nodes[j] = &m_.node(g.members[j]);
      Device* dev = n0.value.device;
      DeviceArenas& da = m_.arenas(dev);
      ExecContext ctx(&da.values, &da.scratch, &rng_, dev, &m_.meta);
      info.accumulate_group(st_.member_nodes.data(), g.k, grad_of_[g.members[0]], ctx);
      return;
    }
    for (unsigned j = 0; j < g.k; ++j) {
      const VariableIndex i = g.members[j];
      Node& node = m_.node(i);
      // Every use has run: the weight gradients left for later are summed now,
      // before they are read.
      if (m_.marks[i] == GradientMark::PendingWeightGrads)
        m_.weight_grads.flush(grad_of_[i], m_.arenas(node.value.device).scratch);
      if (node.variable) info.accumulate(node, gradient_tensor(i));
    }
  }

  /// A group of one: the node's own kernel, argument by argument.
  void backward_single(VariableIndex i, Node& n, BackwardFn b, DeviceArenas& da, ExecContext& ctx, bool may_assign) {
    m_.xs.resize(n.num_args);
    for (unsigned p = 0; p < n.num_args; ++p) m_.xs[p] = &m_.node(n.args[p]).value;
    const Tensor dy = gradient_tensor(i);
    for (unsigned p = 0; p < n.num_args; ++p) {
      const VariableIndex ai = n.args[p];
      Node& a = m_.node(ai);
      if (m_.marks[ai] == GradientMark::None) continue;
      // Parameters' gradients are never assigned: a kernel may leave their
      // terms for later (weight_grads.h).
      const bool assign = may_assign && !is_shared_leaf(a) && claim_block(ai, grad_of_[ai], a.value.d.size());
      if (!assign) ensure_zero(ai);
      Arena::Mark mark = da.scratch.mark();
      ctx.set_weight_grads(offer_sink(a, ctx.device()));
      ctx.set_assign_dx(assign);
      Tensor dx = gradient_tensor(ai);
      call_noting_sink(ai, [&] { b(m_.xs.data(), n.num_args, n, dy, p, dx, ctx); });
      ctx.set_assign_dx(false);
      da.scratch.rewind(mark);
    }
  }

  /// An argument passed once to the group's kernel (shared by every member).
  void backward_shared_argument(const BatchGroup& g, const Node& n0, const Tensor& dy, unsigned p, BackwardFn b,
                                ExecContext& ctx) {
    const VariableIndex ai = n0.args[p];
    if (m_.marks[ai] == GradientMark::None) return;
    ensure_zero(ai);
    Tensor dx = gradient_tensor(ai);
    ctx.set_weight_grads(offer_sink(m_.node(ai), ctx.device()));
    call_noting_sink(ai, [&] { b(g.xs, n0.num_args, *g.exec, dy, p, dx, ctx); });
    ctx.set_weight_grads(nullptr);
  }

  /// An argument stacked from the members': its gradients are written in place
  /// when they lie side by side as the stacked value did, else computed into
  /// scratch and added to each member's argument.
  void backward_stacked_argument(const BatchGroup& g, const Node& n0, const Tensor& dy, unsigned p, BackwardFn b,
                                 ExecContext& ctx, bool may_assign) {
    const size_t sz = m_.node(n0.args[p]).value.d.size();
    const uint32_t* ids = g.arg_ids + size_t(p) * g.k;
    const float* base = grad_of_[n0.args[p]];
    bool contiguous = true, any = false;
    for (unsigned j = 0; j < g.k; ++j) {
      const VariableIndex aj = node_id(ids[j]);
      const bool marked = m_.marks[aj] != GradientMark::None;
      any |= marked;
      contiguous &= marked && grad_of_[aj] == base + j * sz;
    }
    if (!any) return;
    const bool assign = contiguous && may_assign && claim_block(n0.args[p], grad_of_[n0.args[p]], sz * g.k);
    if (!assign)
      for (unsigned j = 0; j < g.k; ++j)
        if (m_.marks[node_id(ids[j])] != GradientMark::None) ensure_zero(node_id(ids[j]));
    Tensor dx = g.xs[p][0];
    Device* dev = ctx.device();
    if (contiguous) {
      dx.v = grad_of_[n0.args[p]];
      ctx.set_assign_dx(assign);
      b(g.xs, n0.num_args, *g.exec, dy, p, dx, ctx);
      ctx.set_assign_dx(false);
      return;
    }
    dx.v = ctx.scratch_floats(sz * g.k);
    if (!may_assign) dev->fill(dx.v, 0.f, sz * g.k);
    ctx.set_assign_dx(may_assign);
    b(g.xs, n0.num_args, *g.exec, dy, p, dx, ctx);
    ctx.set_assign_dx(false);
    scatter_add_gradients(m_, st_, dev, m_.arenas(dev), dx.v, ids, sz, g.k);
  }

  using OnDemandRead = BackwardScratch::OnDemandRead;
  static constexpr unsigned kMaxArgs = 8;
  static constexpr size_t kMinOnDemandFloats = size_t(1) << 16;  // 256 kB
  static constexpr unsigned char kLossGroup = 1, kScoresGroup = 2;

  GraphMemory& m_;
  BatchState& st_;
  BackwardScratch& bk_;
  std::vector<float*>& grad_of_;  // each node's gradient (st.node_gradients)
  std::mt19937& rng_;
  const bool full_;
  const RunOptions& options_;
};

}  // namespace

void Executor::batched_accumulates_host_side() {
  BatchState& st = m_.batch_state();
  HostEffectsOnly host_only(graph_device_);
  for (const BackwardScratch::AccumulateCall& call : st.backward.accumulate_calls) {
    const BatchGroup& g = st.groups[call.group];
    Node& n0 = m_.node(g.members[0]);
    const OpInfo& info = op_info(n0.op);
    m_.meta.seek(call.meta);
    Device* dev = n0.value.device;
    DeviceArenas& da = m_.arenas(dev);
    ExecContext ctx(&da.values, &da.scratch, &rng_, dev, &m_.meta);
    if (info.accumulate_group && g.k > 1) {
      st.member_nodes.resize(g.k);
      for (unsigned j = 0; j < g.k; ++j) st.member_nodes[j] = &m_.node(g.members[j]);
      info.accumulate_group(st.member_nodes.data(), g.k, st.node_gradients[g.members[0]], ctx);
      continue;
    }
    for (unsigned j = 0; j < g.k; ++j) {
      Node& node = m_.node(g.members[j]);
      if (!node.variable) continue;
      node.grad = st.node_gradients[g.members[j]];
      info.accumulate(node, gradient_tensor(node));
    }
  }
}

void Executor::backward_batched(VariableIndex last, bool full, const RunOptions& options) {
  BatchState& st = m_.batch_state();
  const auto t0 = Clock::now();
  BatchedBackward pass(m_, st, rng_, full, options);
  pass.prepare(last);
  backward_done_ = true;
  if (m_.marks[last] == GradientMark::None) return;  // nothing was marked: no gradient blocks
  pass.run(last);
  st.stats.backward_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace dynet_lite
