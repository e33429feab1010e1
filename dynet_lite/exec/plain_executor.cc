// Plain execution: nodes run one by one in the order they were added.
#include <chrono>
#include <cmath>
#include <cstring>

#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/float_mode.h"
#include "dynet_lite/core/graph_memory.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

// Argument tensors of n: in `small` when there are few, else in m.xs.
inline const Tensor* const* gather_args(GraphMemory& m, const Node& n, const Tensor** small) {
  const Tensor** xs = small;
  if (n.num_args > 8) {
    m.xs.resize(n.num_args);
    xs = m.xs.data();
  }
  for (unsigned k = 0; k < n.num_args; ++k) xs[k] = &m.node(n.args[k]).value;
  return xs;
}

void check_finite(const Tensor& t, const char* what, const OpInfo& info, VariableIndex i) {
  if (t.is_valid()) return;
  DYNET_LITE_CHECK(false, numeric_error, "set_check_validity: the " << what << " of node " << i << " (" << info.name
                                                                    << ", shape " << t.d << ") contains NaN or inf");
}

constexpr size_t kGradAlign = 8;  // floats: keeps every gradient 32-byte aligned
inline size_t padded(size_t n) { return (n + kGradAlign - 1) & ~(kGradAlign - 1); }

}  // namespace

void throw_missing_kernel(const OpInfo& info, const Device* d, const char* pass) {
  DYNET_LITE_CHECK(false, unsupported_error, info.name << " is not implemented on " << d->name << " (" << pass << ")");
}

void ComputationGraph::run_forward(VariableIndex last) {
  if (!build_timed_) note_first_forward();
  FlushDenormals flush_denormals;
  if (autobatch_) {
    run_forward_batched(last);
    return;
  }
  GraphMemory& m = *mem_;
  // After batched execution, backward follows the recorded groups: nodes run
  // here join them as groups of one.
  const bool record = m.has_batch_groups();
  const OpInfo* ops = ops_;
  Device* cur = nullptr;
  DeviceArenas* da = nullptr;
  ExecContext ctx(nullptr, nullptr, &rng_, nullptr);
  const Tensor* small[8];
  const auto t0 = std::chrono::steady_clock::now();
  const VariableIndex first = evaluated_;
  for (VariableIndex i = evaluated_; i <= last; ++i) {
    Node& n = m.node(i);
    const OpInfo& info = ops[static_cast<unsigned>(n.op)];
    Device* dev = n.value.device;
    if (dev != cur) {
      cur = dev;
      da = &m.arenas(dev);
      ctx = ExecContext(&da->values, &da->scratch, &rng_, dev, &m.meta);
    }
    ForwardFn f = info.forward[static_cast<unsigned>(dev->type)];
    if (!f) throw_missing_kernel(info, dev, "forward");
    const Tensor* const* xs = gather_args(m, n, small);
    if (!info.sets_own_value) n.value.v = da->values.allocate_floats(n.value.d.size());
    Arena::Mark scratch_mark = da->scratch.mark();
    f(xs, n.num_args, n, ctx);
    da->scratch.rewind(scratch_mark);
    evaluated_ = i + 1;
    if (record) {
      VariableIndex* mem = static_cast<VariableIndex*>(m.meta.allocate(sizeof(VariableIndex)));
      *mem = i;
      m.batch_state().groups.push_back({&n, mem, 1, nullptr, nullptr, nullptr});
    }
    if (check_validity_) check_finite(n.value, "value", info, i);
  }
  AutobatchStats& stats = m.batch_state().stats;
  stats.nodes += last + 1 - first;
  stats.kernels += last + 1 - first;
  stats.forward_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void ComputationGraph::backward(const Expression& last, bool full) {
  DYNET_LITE_ARG_CHECK(last.pg == this && !last.is_stale(),
                       "backward: the expression is stale or belongs to another graph");
  backward(last.i, full);
}

void ComputationGraph::backward(VariableIndex last, bool full) {
  check_index(last, "backward");
  incremental_forward(last);
  FlushDenormals flush_denormals;
  GraphMemory& m = *mem_;
  Node& target = m.node(last);
  DYNET_LITE_DIM_CHECK(target.value.d.batch_size() == 1,
                       "backward: the loss must be a scalar (one element per batch element), but node "
                           << last << " (" << op_name(target.op) << ") has shape " << target.value.d);
  grads_upto_ = last;
  grads_full_ = full;
  if (m.has_batch_groups()) {
    backward_batched(last, full);
    return;
  }
  const OpInfo* ops = ops_;

  // One pass from the loss down.  A node's gradient memory is assigned when a
  // consumer first sends it gradient (from one zeroed block on a single-device
  // graph); when the pass reaches the node, every consumer has run, so its
  // gradient is complete and it passes it on.  Nodes that do not depend on a
  // parameter get nothing (unless `full`).
  m.marks.assign(last + 1, 0);
  for (auto& a : m.device_arenas) a->grads.reset();
  m.weight_grads.reset();
  m.transposes.reset(&m.device_arenas.front()->grads);
  backward_done_ = true;
  if (!(full || target.variable)) return;  // the loss depends on no parameter
  const bool one_device = m.device_arenas.size() == 1;
  float* block = nullptr;
  if (one_device) {
    size_t bound = 0;  // every node up to `last`, padded
    for (VariableIndex j = 0; j <= last; ++j) bound += padded(m.node(j).value.d.size());
    DeviceArenas& da = *m.device_arenas.front();
    block = da.grads.allocate_floats(bound);
    da.device->fill(block, 0.f, bound);
  }
  auto give_gradient = [&](Node& n) {
    size_t sz = n.value.d.size();
    float* g;
    if (block) {
      g = block;
      block += padded(sz);
    } else {
      g = m.arenas(n.value.device).grads.allocate_floats(sz);
      n.value.device->fill(g, 0.f, sz);
    }
    n.grad.d = n.value.d;
    n.grad.v = g;
    n.grad.device = n.value.device;
    n.grad.mem_pool = DeviceMempool::DEDFS;
  };
  m.marks[last] = 1;
  give_gradient(target);
  target.value.device->fill(target.grad.v, 1.f, target.value.d.size());

  Device* cur = nullptr;
  DeviceArenas* da = nullptr;
  ExecContext ctx(nullptr, nullptr, &rng_, nullptr);
  const Tensor* small[8];
  const auto t0 = std::chrono::steady_clock::now();
  for (VariableIndex j = last + 1; j-- > 0;) {
    if (!m.marks[j]) continue;
    Node& n = m.node(j);
    const OpInfo& info = ops[static_cast<unsigned>(n.op)];
    if (check_validity_) check_finite(n.grad, "gradient", info, j);
    // Every use of this node has run: the weight gradients they left for later
    // (marks 2) are summed now, as one product, before anything reads them.
    if (m.marks[j] == 2) m.weight_grads.flush(n.grad.v, m.arenas(n.value.device).scratch);
    if (info.accumulate) {
      if (n.variable) info.accumulate(n, n.grad);
      continue;
    }
    if (info.blocks_gradient || n.num_args == 0) continue;
    Device* dev = n.value.device;
    if (dev != cur) {
      cur = dev;
      da = &m.arenas(dev);
      ctx = ExecContext(&da->values, &da->scratch, &rng_, dev, &m.meta);
      ctx.set_transposes(dev->type == DeviceType::CPU ? &m.transposes : nullptr);
    }
    BackwardFn b = info.backward[static_cast<unsigned>(dev->type)];
    if (!b) throw_missing_kernel(info, dev, "backward");
    const Tensor* const* xs = gather_args(m, n, small);
    ctx.begin_node();
    for (unsigned k = 0; k < n.num_args; ++k) {
      VariableIndex a = n.args[k];
      Node& an = m.node(a);
      if (!full && !an.variable) continue;
      if (!m.marks[a]) {
        m.marks[a] = 1;
        give_gradient(an);
      }
      Arena::Mark scratch_mark = da->scratch.mark();
      const size_t pending = m.weight_grads.size();
      ctx.set_weight_grads(dev->type == DeviceType::CPU && an.value.device->type == DeviceType::CPU ? &m.weight_grads
                                                                                                   : nullptr);
      b(xs, n.num_args, n, n.grad, k, an.grad, ctx);
      if (m.weight_grads.size() != pending) m.marks[a] = 2;
      da->scratch.rewind(scratch_mark);
    }
  }
  // Nodes are flushed as they are reached; this is only a safety net.
  if (!m.weight_grads.empty()) m.weight_grads.flush_all(m.arenas(target.value.device).scratch);
  m.batch_state().stats.backward_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace dynet_lite
