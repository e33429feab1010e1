// GPU kernels of ops/inputs.cc: inputs (through the device's staging ring),
// constants, random leaves (drawn on the host from the graph's engine, in the
// CPU kernels' order), parameters (no copy: the storage's device memory),
// lookups (a gather) and the gradient accumulation of parameters and lookup
// rows (scatter-add of the rows used).
#include <algorithm>
#include <cuda_runtime.h>

#include <mutex>
#include <random>
#include <vector>

#include "dynet_lite/backends/cuda/kernels.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/backends/random_leaves.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/model.h"

namespace dynet_lite {
namespace cuda {

namespace {

using op_params::FillParams;
using op_params::InputParams;
using op_params::LookupParams;
using op_params::ParamParams;

// The CPU rows' accumulate functions: parameters on the CPU still go there.
AccumulateFn cpu_param_accumulate = nullptr;
AccumulateFn cpu_lookup_accumulate = nullptr;
AccumulateGroupFn cpu_lookup_accumulate_group = nullptr;

__global__ void add_kernel(float* y, const float* x, size_t n) { DYNET_LITE_GRID_LOOP(i, n) y[i] += x[i]; }
void launch_add(CudaDevice& dev, float* y, const float* x, size_t n) {
  add_kernel<<<blocks_for(n), kThreads, 0, dev.stream()>>>(y, x, n);
  DYNET_LITE_CUDA_LAUNCH_CHECK("add_kernel");
}

// ---------------------------------------------------------------- input
// y = the user's data
void input_forward(const Tensor* const*, unsigned, Node& n, ExecContext& ctx) {
  CudaDevice& dev = device_of(ctx);
  const InputParams& p = n.p<InputParams>();
  size_t sz = n.value.d.size();
  if (p.pscalar) {
    dev.upload(n.value.v, p.pscalar, sizeof(float));
  } else if (p.pdata) {
    DYNET_LITE_DIM_CHECK(p.pdata->size() == sz, "input: the vector behind the pointer now holds "
                                                    << p.pdata->size()
                                                    << " values, but the input was declared with shape " << n.value.d
                                                    << " (" << sz << " values)");
    dev.upload(n.value.v, p.pdata->data(), sz * sizeof(float));
  } else if (p.sparse_ids) {
    thread_local std::vector<float> host;
    host.assign(sz, p.defdata);
    for (unsigned k = 0; k < p.nsparse; ++k) host[p.sparse_ids[k]] = p.data[k];
    dev.upload(n.value.v, host.data(), sz * sizeof(float));
  } else if (p.data) {
    dev.upload(n.value.v, p.data, sz * sizeof(float));
  } else {
    dev.upload(n.value.v, &p.scalar, sizeof(float));
  }
}

// y = c
void constant_forward(const Tensor* const*, unsigned, Node& n, ExecContext& ctx) {
  device_of(ctx).fill(n.value.v, n.p<FillParams>().a, n.value.d.size());
}

// The random leaves' draws (backends/random_leaves.h), made on the host and uploaded.
void random_forward(const Tensor* const*, unsigned, Node& n, ExecContext& ctx) {
  size_t sz = n.value.d.size();
  thread_local std::vector<float> host;
  host.resize(sz);
  draw_random_leaf(n.op, n.p<FillParams>(), ctx.rng(), host.data(), sz);
  device_of(ctx).upload(n.value.v, host.data(), sz * sizeof(float));
}

// ---------------------------------------------------------------- parameters
// y = the parameter's own memory
void param_forward(const Tensor* const*, unsigned, Node& n, ExecContext&) {
  const ParamParams& p = n.p<ParamParams>();
  n.value.v = p.p ? p.p->values.v : p.lp->all_values.v;
}
// grad(W) += dy
void param_accumulate(const Node& n, const Tensor& dy) {
  if (dy.device->type != DeviceType::GPU) {
    cpu_param_accumulate(n, dy);
    return;
  }
  CudaDevice& dev = device_of(dy.device);
  const ParamParams& p = n.p<ParamParams>();
  const bool queue = !dev.host_effects_only();  // else a launched graph added it
  if (p.p) {
    std::lock_guard<std::mutex> lock(p.p->mutex);
    if (queue) launch_add(dev, p.p->g.v, dy.v, p.p->size());
    p.p->nonzero_grad = true;
  } else {
    std::lock_guard<std::mutex> lock(p.lp->mutex);
    if (queue) launch_add(dev, p.lp->all_grads.v, dy.v, p.lp->size());
    p.lp->all_updated = true;
    p.lp->nonzero_grad = true;
  }
}

// ---------------------------------------------------------------- lookup
const unsigned* lookup_indices(const LookupParams& p, unsigned bd) {
  if (p.pindex) return p.pindex;
  if (p.pindices) {
    DYNET_LITE_DIM_CHECK(p.pindices->size() == bd, "lookup: the index vector behind the pointer now holds "
                                                       << p.pindices->size() << " indices, but the node was built for "
                                                       << bd);
    return p.pindices->data();
  }
  if (p.indices) return p.indices;
  return &p.index;
}
void check_rows(const LookupParameterStorage& lp, const unsigned* idx, unsigned n) {
  for (unsigned b = 0; b < n; ++b)
    DYNET_LITE_INDEX_CHECK(idx[b] < lp.num_rows(), "lookup: index " << idx[b] << " out of range for lookup parameter '"
                                                                    << lp.name << "' with " << lp.num_rows()
                                                                    << " rows");
}

// y[:, b] = E[:, idx[b]]
__global__ void gather_kernel(float* y, const float* table, const unsigned* idx, size_t row, size_t n) {
  DYNET_LITE_GRID_LOOP(e, n) y[e] = table[size_t(idx[e / row]) * row + e % row];
}
// grad(E[:, idx[b]]) += dy[:, b]  (atomics: an index may repeat in the batch)
__global__ void scatter_add_kernel(float* grads, const float* dy, const unsigned* idx, size_t row, size_t n) {
  DYNET_LITE_GRID_LOOP(e, n) atomicAdd(grads + size_t(idx[e / row]) * row + e % row, dy[e]);
}

// One row is used in place; a batch is gathered, and its device indices are kept
// in node.aux for the scatter-add of the gradient.
void lookup_forward(const Tensor* const*, unsigned, Node& n, ExecContext& ctx) {
  const LookupParams& p = n.p<LookupParams>();
  unsigned bd = n.value.d.bd;
  const unsigned* idx = lookup_indices(p, bd);
  if (p.pindex || p.pindices) check_rows(*p.lp, idx, bd);
  CudaDevice& dev = device_of(ctx);
  // While recording a graph the row is copied too: its readers are recorded
  // with this node's address, and the index may change between launches.
  if (bd == 1 && !dev.recording()) {
    n.value.v = p.lp->values[idx[0]].v;
    return;
  }
  size_t row = p.lp->dim.size();
  n.value.v = ctx.persistent_floats(row * bd);
  const unsigned* didx = upload_indices(ctx, idx, bd, true);
  n.aux = const_cast<unsigned*>(didx);
  gather_kernel<<<blocks_for(row * bd), kThreads, 0, dev.stream()>>>(n.value.v, p.lp->all_values.v, didx, row,
                                                                     row * bd);
  DYNET_LITE_CUDA_LAUNCH_CHECK("gather_kernel");
}
void lookup_accumulate(const Node& n, const Tensor& dy) {
  if (dy.device->type != DeviceType::GPU) {
    cpu_lookup_accumulate(n, dy);
    return;
  }
  CudaDevice& dev = device_of(dy.device);
  const LookupParams& p = n.p<LookupParams>();
  LookupParameterStorage& lp = *p.lp;
  unsigned bd = n.value.d.bd;
  const unsigned* idx = lookup_indices(p, bd);
  size_t row = lp.dim.size();
  std::lock_guard<std::mutex> lock(lp.mutex);
  if (dev.host_effects_only()) {
    // A launched graph added the rows: only which rows have gradients is kept.
  } else if (bd == 1 && !dev.recording()) {
    launch_add(dev, lp.grads[idx[0]].v, dy.v, row);
  } else {
    // Recorded, the row goes by the device index the recorded forward left in
    // node.aux (refilled at each launch), not by an address fixed now.
    const unsigned* didx = static_cast<const unsigned*>(n.aux);
    DYNET_LITE_ASSERT(didx != nullptr, "lookup: gradient of a batched lookup before its forward on " << dev.name);
    scatter_add_kernel<<<blocks_for(row * bd), kThreads, 0, dev.stream()>>>(lp.all_grads.v, dy.v, didx, row, row * bd);
    DYNET_LITE_CUDA_LAUNCH_CHECK("scatter_add_kernel");
  }
  for (unsigned b = 0; b < bd; ++b) lp.non_zero_grads.insert(idx[b]);
  lp.nonzero_grad = true;
}

// A batched group of lookups (exec/autobatch.cc): the members' gradient rows lie
// side by side from dy.  Each run of members of one table is one upload of their
// indices and one scatter-add, instead of a kernel per member.
void lookup_accumulate_group(const Node* const* members, unsigned k, const float* dy, ExecContext& ctx) {
  if (ctx.device()->type != DeviceType::GPU) {
    cpu_lookup_accumulate_group(members, k, dy, ctx);
    return;
  }
  CudaDevice& dev = device_of(ctx);
  thread_local std::vector<unsigned> rows;
  // Recorded in a graph, the row list lies in graph host memory, where a
  // launch's host side (host_effects_only) writes it again before the recorded
  // copy reads it.
  const bool in_graph_memory = dev.recording() || dev.host_effects_only();
  const size_t row = members[0]->p<LookupParams>().lp->dim.size();
  unsigned j = 0;
  while (j < k) {
    if (!members[j]->variable) {
      dy += size_t(members[j]->value.d.bd) * row;
      ++j;
      continue;
    }
    LookupParameterStorage& lp = *members[j]->p<LookupParams>().lp;
    const float* from = dy;
    rows.clear();
    for (; j < k && members[j]->variable && members[j]->p<LookupParams>().lp == &lp; ++j) {
      const unsigned bd = members[j]->value.d.bd;
      const unsigned* idx = lookup_indices(members[j]->p<LookupParams>(), bd);
      rows.insert(rows.end(), idx, idx + bd);
      dy += size_t(bd) * row;
    }
    const unsigned n = static_cast<unsigned>(rows.size());
    const unsigned* list = rows.data();
    if (in_graph_memory) {
      unsigned* kept = static_cast<unsigned*>(ctx.host_bytes(n * sizeof(unsigned)));
      std::copy(rows.begin(), rows.end(), kept);
      list = kept;
    }
    std::lock_guard<std::mutex> lock(lp.mutex);
    if (!dev.host_effects_only()) {
      const unsigned* didx = upload_indices(ctx, list, n, false);
      scatter_add_kernel<<<blocks_for(row * n), kThreads, 0, dev.stream()>>>(lp.all_grads.v, from, didx, row, row * n);
      DYNET_LITE_CUDA_LAUNCH_CHECK("scatter_add_kernel");
    }
    for (unsigned r : rows) lp.non_zero_grads.insert(r);
    lp.nonzero_grad = true;
  }
}

}  // namespace

void register_input_kernels(OpTable& t) {
  t.row(OpKind::Input).forward[1] = input_forward;
  t.row(OpKind::Constant).forward[1] = constant_forward;
  t.row(OpKind::RandomNormal).forward[1] = random_forward;
  t.row(OpKind::RandomUniform).forward[1] = random_forward;
  t.row(OpKind::RandomBernoulli).forward[1] = random_forward;
  t.row(OpKind::RandomGumbel).forward[1] = random_forward;

  // accumulate has no device column: wrap the CPU function with a dispatch on
  // the gradient's device.
  OpInfo& p = t.row(OpKind::Parameter);
  p.forward[1] = param_forward;
  if (p.accumulate != param_accumulate) {
    cpu_param_accumulate = p.accumulate;
    p.accumulate = param_accumulate;
  }
  OpInfo& l = t.row(OpKind::Lookup);
  l.forward[1] = lookup_forward;
  if (l.accumulate != lookup_accumulate) {
    cpu_lookup_accumulate = l.accumulate;
    l.accumulate = lookup_accumulate;
  }
  if (l.accumulate_group && l.accumulate_group != lookup_accumulate_group) {
    cpu_lookup_accumulate_group = l.accumulate_group;
    l.accumulate_group = lookup_accumulate_group;
  }
}

}  // namespace cuda
}  // namespace dynet_lite
