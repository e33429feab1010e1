// Leaves: user inputs, constants, random tensors, parameters and lookups.
#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/backends/random_leaves.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/model.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using op_params::FillParams;
using op_params::InputParams;
using op_params::LookupParams;
using op_params::ParamParams;

// ---------------------------------------------------------------- input

// y = the user's data
void input_forward(const Tensor* const*, unsigned, Node& n, ExecContext& ctx) {
  const InputParams& p = n.p<InputParams>();
  size_t sz = n.value.d.size();
  Device* dev = ctx.device();
  if (p.pscalar) {
    dev->copy_from_host(n.value.v, p.pscalar, 1);
  } else if (p.pdata) {
    DYNET_LITE_DIM_CHECK(p.pdata->size() == sz, "input: the vector behind the pointer now holds " << p.pdata->size()
                                                     << " values, but the input was declared with shape "
                                                     << n.value.d << " (" << sz << " values)");
    dev->copy_from_host(n.value.v, p.pdata->data(), sz);
  } else if (p.sparse_ids) {
    dev->fill(n.value.v, p.defdata, sz);
    for (unsigned k = 0; k < p.nsparse; ++k) dev->copy_from_host(n.value.v + p.sparse_ids[k], p.data + k, 1);
  } else if (p.data) {
    dev->copy_from_host(n.value.v, p.data, sz);
  } else {
    dev->copy_from_host(n.value.v, &p.scalar, 1);
  }
}

// ---------------------------------------------------------------- constant / random

// Leaves get their shape from the expression function (add_node's leaf_dim).
Dim leaf_shape(const Tensor* const*, unsigned, const Node& n) {
  DYNET_LITE_DIM_CHECK(n.value.d.size() > 0, op_name(n.op) << ": shape " << n.value.d << " has no elements");
  return n.value.d;
}

// y = c
void constant_forward(const Tensor* const*, unsigned, Node& n, ExecContext& ctx) {
  ctx.device()->fill(n.value.v, n.p<FillParams>().a, n.value.d.size());
}

// The draws of random_normal, random_uniform, random_bernoulli, random_gumbel
// (backends/random_leaves.h), into the value (through scratch off the CPU).
void random_forward(const Tensor* const*, unsigned, Node& n, ExecContext& ctx) {
  size_t sz = n.value.d.size();
  float* host = ctx.device()->type == DeviceType::CPU ? n.value.v : ctx.scratch_floats(sz);
  draw_random_leaf(n.op, n.p<FillParams>(), ctx.rng(), host, sz);
  if (host != n.value.v) ctx.device()->copy_from_host(n.value.v, host, sz);
}

// ---------------------------------------------------------------- parameters

Dim param_shape(const Tensor* const*, unsigned, const Node& n) {
  const ParamParams& p = n.p<ParamParams>();
  return p.p ? p.p->dim : p.lp->all_dim;
}
// y = the parameter's own memory (no copy)
void param_forward(const Tensor* const*, unsigned, Node& n, ExecContext&) {
  const ParamParams& p = n.p<ParamParams>();
  n.value.v = p.p ? p.p->values.v : p.lp->all_values.v;
}
// grad(W) += dy
void param_accumulate(const Node& n, const Tensor& dy) {
  const ParamParams& p = n.p<ParamParams>();
  if (p.p) {
    p.p->accumulate_grad(dy.v);
  } else {
    float* g = p.lp->dense_grads().v;  // the whole table is used: its whole gradient
    std::lock_guard<std::mutex> lock(p.lp->mutex);
    size_t sz = p.lp->size();
    for (size_t i = 0; i < sz; ++i) g[i] += dy.v[i];
    p.lp->all_updated = true;
    p.lp->nonzero_grad = true;
  }
}

ParameterStorage* param_dense(const Node& n) { return n.p<ParamParams>().p; }

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

void check_rows(const char* what, const LookupParameterStorage& lp, const unsigned* idx, unsigned n) {
  for (unsigned b = 0; b < n; ++b)
    DYNET_LITE_INDEX_CHECK(idx[b] < lp.num_rows(), what << ": index " << idx[b] << " out of range for lookup parameter '"
                                                       << lp.name << "' with " << lp.num_rows() << " rows");
}


// Indices read through a user's pointer are kept with the node (n.aux, graph
// memory) at forward time: the gradient goes to the rows forward read, even when
// the user's variable has changed by backward.
const unsigned* keep_indices(const Node& n, const unsigned* idx, unsigned count, ExecContext& ctx) {
  unsigned* kept = static_cast<unsigned*>(ctx.forward_host_bytes(count * sizeof(unsigned)));
  std::memcpy(kept, idx, count * sizeof(unsigned));
  const_cast<Node&>(n).aux = kept;
  return kept;
}

// The indices forward used.
const unsigned* forward_indices(const Node& n, unsigned bd) {
  const LookupParams& p = n.p<LookupParams>();
  if (p.pindex || p.pindices) {
    DYNET_LITE_CHECK(n.aux != nullptr, std::logic_error, "lookup: gradient before forward");
    return static_cast<const unsigned*>(n.aux);
  }
  return lookup_indices(p, bd);
}

// y[:, b] = E[:, idx[b]]  (one row is used in place, a batch is copied)
void lookup_forward(const Tensor* const*, unsigned, Node& n, ExecContext& ctx) {
  const LookupParams& p = n.p<LookupParams>();
  unsigned bd = n.value.d.bd;
  const unsigned* idx = lookup_indices(p, bd);
  if (p.pindex || p.pindices) {
    check_rows("lookup", *p.lp, idx, bd);
    idx = keep_indices(n, idx, bd, ctx);
  }
  if (bd == 1) {
    n.value.v = p.lp->values[idx[0]].v;
    return;
  }
  size_t row = p.lp->dim.size();
  n.value.v = ctx.persistent_floats(row * bd);
  for (unsigned b = 0; b < bd; ++b) ctx.device()->copy(n.value.v + b * row, p.lp->values[idx[b]].v, row);
}
// grad(E[:, idx[b]]) += dy[:, b]
void lookup_accumulate(const Node& n, const Tensor& dy) {
  const LookupParams& p = n.p<LookupParams>();
  unsigned bd = n.value.d.bd;
  const unsigned* idx = forward_indices(n, bd);
  size_t row = p.lp->dim.size();
  for (unsigned b = 0; b < bd; ++b) p.lp->accumulate_grad(idx[b], dy.v + b * row);
}

// A batched group of lookups: their gradient rows lie side by side, in the order
// of the members' indices; rows of one table are added under one lock.
void lookup_accumulate_group(const Node* const* members, unsigned k, const float* dy, ExecContext&) {
  thread_local std::vector<unsigned> rows;
  LookupParameterStorage* table = nullptr;
  const float* from = dy;  // first gradient row of the pending run
  auto flush = [&] {
    if (!rows.empty()) table->accumulate_grads(rows.data(), rows.size(), from);
    rows.clear();
  };
  const size_t row = members[0]->p<LookupParams>().lp->dim.size();
  for (unsigned j = 0; j < k; ++j) {
    const Node& n = *members[j];
    const LookupParams& p = n.p<LookupParams>();
    const unsigned bd = n.value.d.bd;
    const float* d = dy;
    dy += size_t(bd) * row;
    if (!n.variable || p.lp != table) {
      flush();
      table = p.lp;
      from = n.variable ? d : dy;
      if (!n.variable) continue;
    }
    const unsigned* idx = forward_indices(n, bd);
    rows.insert(rows.end(), idx, idx + bd);
  }
  flush();
}

// The members' indices, one after the other, into idx; each member that reads
// its indices through a pointer keeps its part of idx for its gradient.
void write_member_indices(const Node* const* members, unsigned k, unsigned* idx) {
  unsigned pos = 0;
  for (unsigned j = 0; j < k; ++j) {
    const LookupParams& pj = members[j]->p<LookupParams>();
    unsigned bd = members[j]->value.d.bd;
    const unsigned* src = lookup_indices(pj, bd);
    if (pj.pindex || pj.pindices) {
      check_rows("lookup", *pj.lp, src, bd);
      const_cast<Node*>(members[j])->aux = idx + pos;
    }
    for (unsigned b = 0; b < bd; ++b) idx[pos++] = src[b];
  }
}
// Batching: the members' indices, one after the other, in graph memory.
bool lookup_combine(const Node* const* members, unsigned k, Node& batched, ExecContext& ctx) {
  const LookupParams& p0 = members[0]->p<LookupParams>();
  unsigned total = 0;
  for (unsigned j = 0; j < k; ++j) total += members[j]->value.d.bd;
  unsigned* idx = static_cast<unsigned*>(ctx.host_bytes(total * sizeof(unsigned)));
  write_member_indices(members, k, idx);
  LookupParams& pv = batched.p<LookupParams>();
  pv = LookupParams();
  pv.lp = p0.lp;
  pv.indices = idx;
  return true;
}
// A recorded group's indices again, where lookup_combine put them.
void lookup_refill(const Node* const* members, unsigned k, Node& batched) {
  write_member_indices(members, k, const_cast<unsigned*>(batched.p<LookupParams>().indices));
}
// Lookups batch when they read the same table.
uint64_t lookup_batch_key(const Node& n) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(n.p<LookupParams>().lp));
}

}  // namespace

void register_input_ops(OpTable& t) {
  // Constants of one shape and value (the zero initial states of every sequence
  // of a minibatch) fill one block together.  Random leaves stay unbatched, so
  // that batching never changes which numbers they draw.
  const auto value_leaf = [&t](OpKind op, const char* name, ForwardFn f, BatchKind batch, Purity purity) {
    OpInfo& o = t.define(op, "inputs", name, leaf_shape, f, nullptr, batch, purity, Devices::CpuAndCuda);
    o.blocks_gradient = true;
    o.leaf = true;
  };
  value_leaf(OpKind::Input, "input", input_forward, BatchKind::Never, Purity::Impure);
  value_leaf(OpKind::Constant, "constant", constant_forward, BatchKind::Elementwise, Purity::Pure);
  value_leaf(OpKind::RandomNormal, "random_normal", random_forward, BatchKind::Never, Purity::Impure);
  value_leaf(OpKind::RandomUniform, "random_uniform", random_forward, BatchKind::Never, Purity::Impure);
  value_leaf(OpKind::RandomBernoulli, "random_bernoulli", random_forward, BatchKind::Never, Purity::Impure);
  value_leaf(OpKind::RandomGumbel, "random_gumbel", random_forward, BatchKind::Never, Purity::Impure);

  OpInfo& p = t.define(OpKind::Parameter, "inputs", "parameter", param_shape, param_forward, nullptr, BatchKind::Never,
                       Purity::Pure, Devices::CpuAndCuda);
  p.accumulate = param_accumulate;
  p.dense_parameter = param_dense;
  p.sets_own_value = true;
  p.trainable_leaf = true;
  p.leaf = true;

  OpInfo& l = t.define(OpKind::Lookup, "inputs", "lookup", leaf_shape, lookup_forward, nullptr, BatchKind::Custom,
                       Purity::Pure, Devices::CpuAndCuda);
  l.accumulate = lookup_accumulate;
  l.accumulate_group = lookup_accumulate_group;
  l.sets_own_value = true;
  l.trainable_leaf = true;
  l.leaf = true;
  l.batch_combine = lookup_combine;
  l.batch_refill = lookup_refill;
  l.batch_key = lookup_batch_key;
  l.pure_node = [](const Node& n) {
    const LookupParams& p = n.p<LookupParams>();
    return !p.pindex && !p.pindices;
  };
}

// ---------------------------------------------------------------- expressions

Expression input(ComputationGraph& g, real s, Device* device) {
  InputParams p;
  p.scalar = s;
  return detail::add_leaf(g, OpKind::Input, Dim({1}), p, false, device);
}
Expression input(ComputationGraph& g, const real* ps, Device* device) {
  DYNET_LITE_ARG_CHECK(ps != nullptr, "input: null pointer for a scalar input");
  InputParams p;
  p.pscalar = ps;
  return detail::add_leaf(g, OpKind::Input, Dim({1}), p, false, device);
}
Expression input(ComputationGraph& g, const Dim& d, const std::vector<float>& data, Device* device) {
  DYNET_LITE_DIM_CHECK(data.size() == d.size(), "input: " << data.size() << " values given for shape " << d << " ("
                                                          << d.size() << " values)");
  InputParams p;
  p.data = detail::copy_to_graph(g, data.data(), data.size());
  return detail::add_leaf(g, OpKind::Input, d, p, false, device);
}
Expression input(ComputationGraph& g, const Dim& d, const std::vector<float>* pdata, Device* device) {
  DYNET_LITE_ARG_CHECK(pdata != nullptr, "input: null pointer for the input vector of shape " << d);
  DYNET_LITE_DIM_CHECK(pdata->size() == d.size(), "input: " << pdata->size() << " values given for shape " << d
                                                            << " (" << d.size() << " values)");
  InputParams p;
  p.pdata = pdata;
  return detail::add_leaf(g, OpKind::Input, d, p, false, device);
}
Expression input(ComputationGraph& g, const Dim& d, const std::vector<unsigned int>& ids,
                 const std::vector<float>& data, float defdata, Device* device) {
  DYNET_LITE_DIM_CHECK(ids.size() == data.size(), "input (sparse): " << ids.size() << " positions but " << data.size()
                                                                     << " values");
  for (unsigned id : ids)
    DYNET_LITE_INDEX_CHECK(id < d.size(), "input (sparse): position " << id << " out of range for shape " << d);
  InputParams p;
  p.sparse_ids = detail::copy_to_graph(g, ids.data(), ids.size());
  p.data = detail::copy_to_graph(g, data.data(), data.size());
  p.nsparse = static_cast<unsigned>(ids.size());
  p.defdata = defdata;
  return detail::add_leaf(g, OpKind::Input, d, p, false, device);
}

namespace {
Expression fill_leaf(ComputationGraph& g, OpKind op, const Dim& d, float a, float b) {
  FillParams p;
  p.a = a;
  p.b = b;
  return detail::add_leaf(g, op, d, p);
}
}  // namespace

Expression zeros(ComputationGraph& g, const Dim& d) { return fill_leaf(g, OpKind::Constant, d, 0.f, 0.f); }
Expression zeroes(ComputationGraph& g, const Dim& d) { return zeros(g, d); }
Expression ones(ComputationGraph& g, const Dim& d) { return fill_leaf(g, OpKind::Constant, d, 1.f, 0.f); }
Expression constant(ComputationGraph& g, const Dim& d, float val) {
  return fill_leaf(g, OpKind::Constant, d, val, 0.f);
}
Expression random_normal(ComputationGraph& g, const Dim& d, float mean, float stddev) {
  DYNET_LITE_ARG_CHECK(stddev >= 0.f, "random_normal: stddev must be >= 0, got " << stddev);
  return fill_leaf(g, OpKind::RandomNormal, d, mean, stddev);
}
Expression random_bernoulli(ComputationGraph& g, const Dim& d, real p, real scale) {
  DYNET_LITE_ARG_CHECK(p >= 0.f && p <= 1.f, "random_bernoulli: p must be in [0, 1], got " << p);
  return fill_leaf(g, OpKind::RandomBernoulli, d, p, scale);
}
Expression random_uniform(ComputationGraph& g, const Dim& d, real left, real right) {
  DYNET_LITE_ARG_CHECK(left <= right, "random_uniform: left " << left << " > right " << right);
  return fill_leaf(g, OpKind::RandomUniform, d, left, right);
}
Expression random_gumbel(ComputationGraph& g, const Dim& d, real mu, real beta) {
  DYNET_LITE_ARG_CHECK(beta > 0.f, "random_gumbel: beta must be > 0, got " << beta);
  return fill_leaf(g, OpKind::RandomGumbel, d, mu, beta);
}

namespace {
Expression param_leaf(ComputationGraph& g, ParameterStorage* ps, LookupParameterStorage* lps, bool trainable) {
  ParamParams p;
  p.p = ps;
  p.lp = lps;
  Device* dev = ps ? ps->device : lps->device;
  return detail::add_leaf(g, OpKind::Parameter, ps ? ps->dim : lps->all_dim, p, trainable, dev);
}
}  // namespace

Expression parameter(ComputationGraph& g, Parameter p) {
  ParameterStorage& s = p.get_storage();
  return param_leaf(g, &s, nullptr, s.updated);
}
Expression parameter(ComputationGraph& g, LookupParameter lp) {
  LookupParameterStorage& s = lp.get_storage();
  return param_leaf(g, nullptr, &s, s.updated);
}
Expression const_parameter(ComputationGraph& g, Parameter p) { return param_leaf(g, &p.get_storage(), nullptr, false); }
Expression const_parameter(ComputationGraph& g, LookupParameter lp) {
  return param_leaf(g, nullptr, &lp.get_storage(), false);
}

namespace {
Expression lookup_leaf(ComputationGraph& g, LookupParameterStorage& s, LookupParams p, unsigned bd, bool trainable) {
  p.lp = &s;
  DYNET_LITE_DIM_CHECK(bd > 0, "lookup: empty list of indices for '" << s.name << "'");
  Dim d = s.dim;
  d.bd = bd;
  return detail::add_leaf(g, OpKind::Lookup, d, p, trainable, s.device);
}
Expression lookup_one(ComputationGraph& g, LookupParameter lp, unsigned index, bool trainable) {
  LookupParameterStorage& s = lp.get_storage();
  check_rows("lookup", s, &index, 1);
  LookupParams p;
  p.index = index;
  return lookup_leaf(g, s, p, 1, trainable && s.updated);
}
Expression lookup_ptr(ComputationGraph& g, LookupParameter lp, const unsigned* pindex, bool trainable) {
  DYNET_LITE_ARG_CHECK(pindex != nullptr, "lookup: null index pointer");
  LookupParameterStorage& s = lp.get_storage();
  LookupParams p;
  p.pindex = pindex;
  return lookup_leaf(g, s, p, 1, trainable && s.updated);
}
Expression lookup_many(ComputationGraph& g, LookupParameter lp, const std::vector<unsigned>& indices, bool trainable) {
  LookupParameterStorage& s = lp.get_storage();
  check_rows("lookup", s, indices.data(), static_cast<unsigned>(indices.size()));
  LookupParams p;
  if (indices.size() == 1) {
    p.index = indices[0];
  } else {
    p.indices = detail::copy_to_graph(g, indices.data(), indices.size());
  }
  return lookup_leaf(g, s, p, static_cast<unsigned>(indices.size()), trainable && s.updated);
}
Expression lookup_many_ptr(ComputationGraph& g, LookupParameter lp, const std::vector<unsigned>* pindices,
                           bool trainable) {
  DYNET_LITE_ARG_CHECK(pindices != nullptr, "lookup: null pointer to the index vector");
  LookupParameterStorage& s = lp.get_storage();
  LookupParams p;
  p.pindices = pindices;
  return lookup_leaf(g, s, p, static_cast<unsigned>(pindices->size()), trainable && s.updated);
}
}  // namespace

Expression lookup(ComputationGraph& g, LookupParameter p, unsigned index) { return lookup_one(g, p, index, true); }
Expression lookup(ComputationGraph& g, LookupParameter p, const unsigned* pindex) {
  return lookup_ptr(g, p, pindex, true);
}
Expression lookup(ComputationGraph& g, LookupParameter p, const std::vector<unsigned>& indices) {
  return lookup_many(g, p, indices, true);
}
Expression lookup(ComputationGraph& g, LookupParameter p, const std::vector<unsigned>* pindices) {
  return lookup_many_ptr(g, p, pindices, true);
}
Expression const_lookup(ComputationGraph& g, LookupParameter p, unsigned index) {
  return lookup_one(g, p, index, false);
}
Expression const_lookup(ComputationGraph& g, LookupParameter p, const unsigned* pindex) {
  return lookup_ptr(g, p, pindex, false);
}
Expression const_lookup(ComputationGraph& g, LookupParameter p, const std::vector<unsigned>& indices) {
  return lookup_many(g, p, indices, false);
}
Expression const_lookup(ComputationGraph& g, LookupParameter p, const std::vector<unsigned>* pindices) {
  return lookup_many_ptr(g, p, pindices, false);
}

}  // namespace dynet_lite
