// Plain execution: nodes run one by one in the order they were added.
#include <cmath>
#include <cstring>

#include "dynet_lite/core/graph_memory.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/exec/exec_context.h"

namespace dynet_lite {

namespace {

const Tensor* const* gather_args(GraphMemory& m, const Node& n) {
  m.xs.resize(n.num_args);
  for (unsigned k = 0; k < n.num_args; ++k) m.xs[k] = &m.node(n.args[k]).value;
  return m.xs.data();
}

[[noreturn]] void not_on_device(const OpInfo& info, const Device* d, const char* pass) {
  DYNET_LITE_CHECK(false, unsupported_error, info.name << " is not implemented on " << d->name << " (" << pass << ")");
}

void check_finite(const Tensor& t, const char* what, const OpInfo& info, VariableIndex i) {
  if (t.is_valid()) return;
  DYNET_LITE_CHECK(false, numeric_error, "set_check_validity: the " << what << " of node " << i << " (" << info.name
                                                                    << ", shape " << t.d << ") contains NaN or inf");
}

}  // namespace

void ComputationGraph::run_forward(VariableIndex last) {
  if (autobatch_) {
    run_forward_batched(last);
    return;
  }
  GraphMemory& m = *mem_;
  // After batched execution, backward follows the recorded groups: nodes run
  // here join them as groups of one.
  const bool record = m.has_batch_groups();
  for (VariableIndex i = evaluated_; i <= last; ++i) {
    Node& n = m.node(i);
    const OpInfo& info = op_info(n.op);
    Device* dev = n.value.device;
    DeviceArenas& da = m.arenas(dev);
    ForwardFn f = info.forward[static_cast<unsigned>(dev->type)];
    if (!f) not_on_device(info, dev, "forward");
    const Tensor* const* xs = gather_args(m, n);
    if (!info.sets_own_value) n.value.v = da.values.allocate_floats(n.value.d.size());
    ExecContext ctx(&da.values, &da.scratch, &rng_, dev);
    Arena::Mark scratch_mark = da.scratch.mark();
    f(xs, n.num_args, n, ctx);
    da.scratch.rewind(scratch_mark);
    evaluated_ = i + 1;
    if (record) {
      VariableIndex* mem = static_cast<VariableIndex*>(m.meta.allocate(sizeof(VariableIndex)));
      *mem = i;
      m.batch_state().groups.push_back({&n, mem, 1, nullptr, nullptr});
    }
    if (check_validity_) check_finite(n.value, "value", info, i);
  }
}

void ComputationGraph::backward(const Expression& last, bool full) {
  DYNET_LITE_ARG_CHECK(last.pg == this && !last.is_stale(),
                       "backward: the expression is stale or belongs to another graph");
  backward(last.i, full);
}

void ComputationGraph::backward(VariableIndex last, bool full) {
  check_index(last, "backward");
  incremental_forward(last);
  GraphMemory& m = *mem_;
  Node& target = m.node(last);
  DYNET_LITE_DIM_CHECK(target.value.d.batch_size() == 1,
                       "backward: the loss must be a scalar (one element per batch element), but node "
                           << last << " (" << op_name(target.op) << ") has shape " << target.value.d);
  if (m.has_batch_groups()) {
    backward_batched(last, full);
    return;
  }

  // Mark the nodes that receive a gradient: those the target depends on and
  // that depend on a parameter (or all of them when `full`).
  m.marks.assign(last + 1, 0);
  for (auto& a : m.device_arenas) a->grads.reset();
  if (full || target.variable) m.marks[last] = 1;
  for (VariableIndex j = last + 1; j-- > 0;) {
    if (!m.marks[j]) {
      m.node(j).grad = Tensor();
      continue;
    }
    Node& n = m.node(j);
    DeviceArenas& da = m.arenas(n.value.device);
    size_t sz = n.value.d.size();
    n.grad = Tensor(n.value.d, da.grads.allocate_floats(sz), n.value.device, DeviceMempool::DEDFS);
    n.value.device->fill(n.grad.v, 0.f, sz);
    if (op_info(n.op).blocks_gradient) continue;
    for (unsigned k = 0; k < n.num_args; ++k)
      if (full || m.node(n.args[k]).variable) m.marks[n.args[k]] = 1;
  }
  backward_done_ = true;
  if (!m.marks[last]) return;  // the loss depends on no parameter
  target.value.device->fill(target.grad.v, 1.f, target.value.d.size());

  for (VariableIndex j = last + 1; j-- > 0;) {
    if (!m.marks[j]) continue;
    Node& n = m.node(j);
    const OpInfo& info = op_info(n.op);
    if (check_validity_) check_finite(n.grad, "gradient", info, j);
    if (info.accumulate) {
      if (n.variable) info.accumulate(n, n.grad);
      continue;
    }
    if (info.blocks_gradient || n.num_args == 0) continue;
    Device* dev = n.value.device;
    BackwardFn b = info.backward[static_cast<unsigned>(dev->type)];
    if (!b) not_on_device(info, dev, "backward");
    DeviceArenas& da = m.arenas(dev);
    ExecContext ctx(&da.values, &da.scratch, &rng_, dev);
    const Tensor* const* xs = gather_args(m, n);
    for (unsigned k = 0; k < n.num_args; ++k) {
      Node& a = m.node(n.args[k]);
      if (!m.marks[n.args[k]]) continue;
      Arena::Mark scratch_mark = da.scratch.mark();
      b(xs, n.num_args, n, n.grad, k, a.grad, ctx);
      da.scratch.rewind(scratch_mark);
    }
  }
}

}  // namespace dynet_lite
