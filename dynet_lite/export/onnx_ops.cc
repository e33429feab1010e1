// The ONNX form of every exportable op, in canonical form (onnx_writer.h): an
// expression {d0, d1, ...} with batch B is [lead..., B, ..., d1, d0], so a
// matrix product W x is MatMul(x, W) on the transposed layouts, dimension k is
// axis -(k + 1), and a result whose rank differs is reshaped back.
#include "dynet_lite/export/onnx_ops.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "dynet_lite/backends/lstm_gates.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/except.h"
#include "dynet_lite/model.h"
#include "dynet_lite/onnx.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {
namespace onnx_export {

namespace {

using namespace op_params;

[[noreturn]] void fail(const EmitArgs& a, const std::string& why) {
  std::ostringstream os;
  os << "ONNX export: " << op_name(a.node.op) << ": " << why;
  throw onnx_error(os.str());
}

const Dim& out_dim(const EmitArgs& a) { return a.node.value.d; }
unsigned out_rank(const EmitArgs& a) { return canon_rank(out_dim(a)); }
// Argument i aligned to the output's rank (for broadcasting ops).
std::string arg(EmitArgs& a, unsigned i) { return a.w.align(a.in[i], canon_rank(a.dims[i]), out_rank(a)); }
// Reshapes x to the node's own shape, keeping the leading axes and the batch.
std::string to_out(EmitArgs& a, const std::string& x) {
  return a.w.reshape_keep_lead(x, a.lead + 1, canon_dims(out_dim(a)));
}

std::string unary(EmitArgs& a, const char* op) { return a.w.op(op, {a.in[0]}); }
std::string binary(EmitArgs& a, const char* op) { return a.w.op(op, {arg(a, 0), arg(a, 1)}); }

// The indices a node read when the sample ran: through the caller's vector or
// value (pvec, pone), else the `count` copied into the graph, else the one given
// by value.
std::vector<int64_t> index_list(const std::vector<unsigned>* pvec, const unsigned* pone, const unsigned* copied,
                                unsigned count, unsigned one) {
  std::vector<int64_t> v;
  if (pvec) {
    for (unsigned i : *pvec) v.push_back(i);
  } else if (pone) {
    v.push_back(*pone);
  } else if (copied) {
    for (unsigned k = 0; k < count; ++k) v.push_back(copied[k]);
  } else {
    v.push_back(one);
  }
  return v;
}

// Indices of a pick / select / pick_batch_elems node.
std::vector<int64_t> indices(const IndexSource& s) { return index_list(s.pvec, s.pone, s.values, s.count, s.one); }

// ---------------------------------------------------------------- leaves

// A leaf exported with its sample value (an undeclared input, a constant).
std::string constant_value(EmitArgs& a) {
  const Dim& d = a.value->d;
  std::vector<int64_t> shape{static_cast<int64_t>(d.bd)};
  for (int64_t x : canon_dims(d)) shape.push_back(x);
  std::vector<float> host(d.size());
  a.value->device->copy_to_host(host.data(), a.value->v, host.size());  // the value may live on a GPU
  return a.w.initializer("constant", host.data(), shape);
}

std::string parameter_leaf(EmitArgs& a) {
  const ParamParams& p = a.node.p<ParamParams>();
  if (p.p) return a.w.model()->parameter(p.p);
  std::string table = a.w.model()->lookup_table(p.lp);  // [rows, d...]: as one matrix {d, rows}
  return to_out(a, table);
}

std::string lookup_leaf(EmitArgs& a) {
  const LookupParams& p = a.node.p<LookupParams>();
  const std::vector<int64_t> ids = index_list(p.pindices, p.pindex, p.indices, a.node.value.d.bd, p.index);
  return a.w.op("Gather", {a.w.model()->lookup_table(p.lp), a.w.ints(ids)});
}

// ---------------------------------------------------------------- arithmetic

std::string scalar_op(EmitArgs& a, const char* op, bool scalar_first) {
  std::string c = a.w.scalar(a.node.p<OneFloat>().a);
  return scalar_first ? a.w.op(op, {c, a.in[0]}) : a.w.op(op, {a.in[0], c});
}

std::string nary(EmitArgs& a, const char* op) {
  std::vector<std::string> xs;
  for (unsigned i = 0; i < a.in.size(); ++i) xs.push_back(arg(a, i));
  return a.w.op(op, xs);
}

// ---------------------------------------------------------------- unary functions

std::string silu(EmitArgs& a) {
  std::string bx = a.w.op("Mul", {a.in[0], a.w.scalar(a.node.p<OneFloat>().a)});
  return a.w.op("Mul", {a.in[0], a.w.op("Sigmoid", {bx})});
}
std::string elu(EmitArgs& a) {
  NodeIr* n = a.w.add("Elu", {a.in[0]});
  GraphWriter::set_float(n, "alpha", a.node.p<OneFloat>().a);
  return GraphWriter::out(n);
}
std::string selu(EmitArgs& a) {
  NodeIr* n = a.w.add("Selu", {a.in[0]});
  GraphWriter::set_float(n, "alpha", 1.6732632423543772848170429916717f);
  GraphWriter::set_float(n, "gamma", 1.0507009873554804934193349852946f);
  return GraphWriter::out(n);
}
std::string log_sigmoid(EmitArgs& a) { return a.w.op("Neg", {a.w.op("Softplus", {a.w.op("Neg", {a.in[0]})})}); }
// std::round (halves away from zero), not ONNX Round (halves to even).
std::string round_away(EmitArgs& a) {
  std::string mag = a.w.op("Floor", {a.w.op("Add", {a.w.op("Abs", {a.in[0]}), a.w.scalar(0.5f)})});
  return a.w.op("Mul", {a.w.op("Sign", {a.in[0]}), mag});
}

// ---------------------------------------------------------------- products

// a * b for a {m, n}, b {n, k}: [.., k, n] x [.., n, m] in canonical form.
std::string product(EmitArgs& a, const std::string& x, const std::string& y) { return a.w.op("MatMul", {y, x}); }

std::string matmul(EmitArgs& a) { return product(a, a.in[0], a.in[1]); }

std::string affine(EmitArgs& a) {
  std::string acc = arg(a, 0);
  for (size_t i = 1; i + 1 < a.in.size(); i += 2) acc = a.w.op("Add", {acc, product(a, a.in[i], a.in[i + 1])});
  return acc;
}

std::string transpose(EmitArgs& a) {
  const TransposeParams& p = a.node.p<TransposeParams>();
  const unsigned r = canon_rank(a.dims[0]), lead = a.lead + 1;
  if (out_rank(a) != r) fail(a, "a transpose that changes the rank does not export");
  std::vector<int64_t> perm(lead + r);
  for (unsigned i = 0; i < lead; ++i) perm[i] = i;
  for (unsigned k = 0; k < r; ++k) {
    const unsigned from = k < p.n ? p.perm[k] : k;
    perm[lead + r - 1 - k] = lead + r - 1 - from;
  }
  NodeIr* n = a.w.add("Transpose", {a.in[0]});
  GraphWriter::set_ints(n, "perm", perm);
  return GraphWriter::out(n);
}

// ---------------------------------------------------------------- softmax

std::string softmax_along(EmitArgs& a, const char* op, int64_t axis) {
  NodeIr* n = a.w.add(op, {a.in[0]});
  GraphWriter::set_int(n, "axis", axis);
  return GraphWriter::out(n);
}
std::string softmax(EmitArgs& a) { return softmax_along(a, "Softmax", dim_axis(a.node.p<SoftmaxParams>().dim)); }
std::string log_softmax(EmitArgs& a) { return softmax_along(a, "LogSoftmax", -1); }

// log(sum_i exp(x_i)) element-wise, shifted by the maximum for stability.
std::string logsumexp(EmitArgs& a) {
  std::string m = nary(a, "Max");
  std::vector<std::string> terms;
  for (unsigned i = 0; i < a.in.size(); ++i) terms.push_back(a.w.op("Exp", {a.w.op("Sub", {arg(a, i), m})}));
  return a.w.op("Add", {m, a.w.op("Log", {a.w.op("Sum", terms)})});
}

std::string pickneglogsoftmax(EmitArgs& a) {
  const PnlsParams& p = a.node.p<PnlsParams>();
  const std::vector<int64_t> ids = index_list(p.pindices, p.pindex, p.indices, p.count, p.index);
  if (ids.size() != 1) fail(a, "one index per batch element ties the batch size; export log_softmax instead");
  std::string nls = a.w.op("Neg", {softmax_along(a, "LogSoftmax", -1)});
  NodeIr* n = a.w.add("Gather", {nls, a.w.ints(ids)});
  GraphWriter::set_int(n, "axis", -1);
  return to_out(a, GraphWriter::out(n));
}

// ---------------------------------------------------------------- reductions

// Axes of the dimensions in `mask` (and the batch when `batch`).
std::vector<int64_t> reduce_axes(const Dim& d, uint32_t mask, bool batch) {
  std::vector<int64_t> axes;
  for (unsigned k = 0; k < canon_rank(d); ++k)
    if (mask & (1u << k)) axes.push_back(dim_axis(k));
  if (batch) axes.push_back(batch_axis(d));
  return axes;
}
uint32_t all_dims(const Dim& d) { return (1u << canon_rank(d)) - 1; }

// ReduceSum takes its axes as an input (opset 13); the others as an attribute (until 18).
std::string reduce(EmitArgs& a, const char* op, const std::string& x, const std::vector<int64_t>& axes) {
  NodeIr* n = std::string(op) == "ReduceSum" ? a.w.add(op, {x, a.w.ints(axes)}) : a.w.add(op, {x});
  if (std::string(op) != "ReduceSum") GraphWriter::set_ints(n, "axes", axes);
  GraphWriter::set_int(n, "keepdims", 1);
  return GraphWriter::out(n);
}
// Reshapes a reduction's result (kept dims) to the node's shape; the batch is
// copied unless it was reduced.
std::string reduced_out(EmitArgs& a, const std::string& x, bool batch_reduced) {
  std::vector<int64_t> shape(a.lead, 0);
  shape.push_back(batch_reduced ? 1 : 0);
  for (int64_t d : canon_dims(out_dim(a))) shape.push_back(d);
  return a.w.op("Reshape", {x, a.w.ints(shape)});
}
std::string reduce_elems(EmitArgs& a, const char* op) {
  return reduced_out(a, reduce(a, op, a.in[0], reduce_axes(a.dims[0], all_dims(a.dims[0]), false)), false);
}
std::string reduce_batches(EmitArgs& a, const char* op) {
  return reduced_out(a, reduce(a, op, a.in[0], {batch_axis(a.dims[0])}), true);
}
std::string reduce_dims(EmitArgs& a, const char* op) {
  const DimReduceParams& p = a.node.p<DimReduceParams>();
  return reduced_out(a, reduce(a, op, a.in[0], reduce_axes(a.dims[0], p.mask, p.batch)), p.batch);
}
std::string reduce_one_dim(EmitArgs& a, const char* op) {
  return reduced_out(a, reduce(a, op, a.in[0], {dim_axis(a.node.p<ArgReduceParams>().dim)}), false);
}

// ---------------------------------------------------------------- distances and norms

std::string sum_all(EmitArgs& a, const std::string& x, const Dim& d) {
  return reduced_out(a, reduce(a, "ReduceSum", x, reduce_axes(d, all_dims(d), false)), false);
}
std::string squared_distance(EmitArgs& a) {
  std::string diff = binary(a, "Sub");
  return sum_all(a, a.w.op("Mul", {diff, diff}), a.dims[0]);
}
std::string l1_distance(EmitArgs& a) { return sum_all(a, a.w.op("Abs", {binary(a, "Sub")}), a.dims[0]); }
std::string squared_norm(EmitArgs& a) { return sum_all(a, a.w.op("Mul", {a.in[0], a.in[0]}), a.dims[0]); }
std::string l2_norm(EmitArgs& a) { return a.w.op("Sqrt", {squared_norm(a)}); }
std::string dot_product(EmitArgs& a) { return sum_all(a, binary(a, "Mul"), a.dims[0]); }

// ---------------------------------------------------------------- shapes

std::string reshape(EmitArgs& a) {
  if (out_dim(a).bd != a.dims[0].bd) fail(a, "a reshape that moves the batch into the dimensions does not export");
  return to_out(a, a.in[0]);
}

std::string gather(EmitArgs& a, const std::vector<int64_t>& ids, int64_t axis) {
  NodeIr* n = a.w.add("Gather", {a.in[0], a.w.ints(ids)});
  GraphWriter::set_int(n, "axis", axis);
  return GraphWriter::out(n);
}

std::string pick(EmitArgs& a) {
  const IndexSource& s = a.node.p<IndexSource>();
  if (s.per_batch) fail(a, "one index per batch element ties the batch size and does not export");
  return to_out(a, gather(a, indices(s), dim_axis(s.dim)));
}
std::string pick_range(EmitArgs& a) {
  const RangeParams& p = a.node.p<RangeParams>();
  return a.w.slice(a.in[0], dim_axis(p.dim), p.start, p.end);
}
std::string pick_batch_elems(EmitArgs& a) { return gather(a, indices(a.node.p<IndexSource>()), batch_axis(a.dims[0])); }
std::string select_rows(EmitArgs& a) { return gather(a, indices(a.node.p<IndexSource>()), dim_axis(0)); }
std::string select_cols(EmitArgs& a) { return gather(a, indices(a.node.p<IndexSource>()), dim_axis(1)); }

// The leading axes and the batch of the node's value, as a 1-d shape tensor:
// Concat needs its arguments' other axes equal where the other ops broadcast.
std::string lead_and_batch_shape(EmitArgs& a) {
  std::vector<std::string> parts;
  for (unsigned i = 0; i < a.in.size() && a.lead > 0; ++i)
    if (a.arg_lead[i]) {
      parts.push_back(a.w.slice(a.w.op("Shape", {a.in[i]}), 0, 0, a.lead));
      break;
    }
  std::string batch;
  for (unsigned i = 0; i < a.in.size(); ++i)
    if (a.dims[i].bd == out_dim(a).bd) {
      const int64_t b = a.arg_lead[i] ? a.lead : 0;  // index of its batch axis
      batch = a.w.slice(a.w.op("Shape", {a.in[i]}), 0, b, b + 1);
      break;
    }
  parts.push_back(batch.empty() ? a.w.ints({1}) : batch);
  NodeIr* n = a.w.add("Concat", parts);
  GraphWriter::set_int(n, "axis", 0);
  return GraphWriter::out(n);
}

// Argument i with the node's leading axes and batch (broadcast where it has not).
std::string arg_full(EmitArgs& a, unsigned i, const std::string& prefix, bool keep_batch) {
  const bool full_lead = a.lead == 0 || a.arg_lead[i];
  if (full_lead && (keep_batch || a.dims[i].bd == out_dim(a).bd)) return arg(a, i);
  std::string x = arg(a, i);
  Dim padded = a.dims[i];  // at the output's rank, as arg() made it
  while (padded.nd < out_rank(a)) padded.d[padded.nd++] = 1;
  std::string dims = a.w.ints(canon_dims(padded));
  std::string shape = prefix;
  if (keep_batch) {  // keep its own batch: only the leading axes are broadcast
    std::string own = a.w.slice(a.w.op("Shape", {x}), 0, full_lead ? a.lead : 0, (full_lead ? a.lead : 0) + 1);
    NodeIr* n = a.w.add("Concat", {a.w.slice(prefix, 0, 0, a.lead), own, dims});
    GraphWriter::set_int(n, "axis", 0);
    shape = GraphWriter::out(n);
  } else {
    NodeIr* n = a.w.add("Concat", {prefix, dims});
    GraphWriter::set_int(n, "axis", 0);
    shape = GraphWriter::out(n);
  }
  return a.w.op("Expand", {x, shape});
}

std::string concat_on(EmitArgs& a, int64_t axis, bool batch_axis = false) {
  const std::string prefix = lead_and_batch_shape(a);
  std::vector<std::string> xs;
  for (unsigned i = 0; i < a.in.size(); ++i) xs.push_back(arg_full(a, i, prefix, batch_axis));
  NodeIr* n = a.w.add("Concat", xs);
  GraphWriter::set_int(n, "axis", axis);
  return GraphWriter::out(n);
}
std::string concatenate(EmitArgs& a) { return concat_on(a, dim_axis(a.node.p<ConcatParams>().dim)); }
std::string concatenate_to_batch(EmitArgs& a) { return concat_on(a, batch_axis(out_dim(a)), true); }

// ---------------------------------------------------------------- layer norm

// y = g (x - mu) / sqrt(var + 1e-8) + b over all elements of each batch element.
std::string layer_norm(EmitArgs& a) {
  const Dim& d = a.dims[0];
  const std::vector<int64_t> axes = reduce_axes(d, all_dims(d), false);
  std::string mu = reduce(a, "ReduceMean", a.in[0], axes);
  std::string xc = a.w.op("Sub", {a.in[0], mu});
  std::string var = reduce(a, "ReduceMean", a.w.op("Mul", {xc, xc}), axes);
  std::string sd = a.w.op("Sqrt", {a.w.op("Add", {var, a.w.scalar(1e-8f)})});
  std::string xhat = a.w.op("Div", {xc, sd});
  return a.w.op("Add", {a.w.op("Mul", {arg(a, 1), xhat}), arg(a, 2)});
}

// ---------------------------------------------------------------- fused LSTM and Tree-LSTM steps

// Block k (of `size` rows) of a gates column.
std::string block(EmitArgs& a, const std::string& g, unsigned k, unsigned size, unsigned count = 1) {
  return a.w.slice(g, -1, static_cast<int64_t>(k) * size, static_cast<int64_t>(k + count) * size);
}

// gates = [sigmoid(i); sigmoid(f + 1); sigmoid(o); tanh(g)] of Wx x + Wh h + b
// (the fused op's own forget bias, lstm_gates::kForgetGateBias, as a constant).
std::string lstm_gates(EmitArgs& a) {
  if (a.node.p<GatesParams>().weightnoise_std > 0.f) fail(a, "weight noise is random and does not export");
  const unsigned h = out_dim(a).rows() / 4;
  std::vector<float> forget(4 * h, 0.f);
  std::fill(forget.begin() + h, forget.begin() + 2 * h, dynet_lite::lstm_gates::kForgetGateBias);
  std::string pre =
      a.w.op("Add", {a.w.op("Add", {product(a, a.in[2], a.in[0]), product(a, a.in[3], a.in[1])}), a.in[4]});
  pre = a.w.op("Add", {pre, a.w.floats(forget, {static_cast<int64_t>(4 * h)})});
  std::string sig = a.w.op("Sigmoid", {block(a, pre, 0, h, 3)});
  std::string cand = a.w.op("Tanh", {block(a, pre, 3, h)});
  NodeIr* n = a.w.add("Concat", {sig, cand});
  GraphWriter::set_int(n, "axis", -1);
  return GraphWriter::out(n);
}
// c = f c_tm1 + i g
std::string lstm_c(EmitArgs& a) {
  const unsigned h = a.dims[0].rows();
  const std::string& g = a.in[1];
  return a.w.op("Add",
                {a.w.op("Mul", {block(a, g, 1, h), a.in[0]}), a.w.op("Mul", {block(a, g, 0, h), block(a, g, 3, h)})});
}
// h = o tanh(c)
std::string lstm_h(EmitArgs& a) {
  const unsigned h = a.dims[0].rows();
  return a.w.op("Mul", {block(a, a.in[1], 2, h), a.w.op("Tanh", {a.in[0]})});
}

// [sigmoid(i); sigmoid(o); tanh(u); sigmoid(f_1..f_N)] of pre {(3 + N) h}
std::string tree_gates_of(EmitArgs& a, const std::string& pre, unsigned rows) {
  const unsigned N = a.node.p<TreeParams>().n, h = rows / (3 + N);
  std::vector<std::string> parts{a.w.op("Sigmoid", {block(a, pre, 0, h, 2)}), a.w.op("Tanh", {block(a, pre, 2, h)})};
  if (N > 0) parts.push_back(a.w.op("Sigmoid", {block(a, pre, 3, h, N)}));
  NodeIr* n = a.w.add("Concat", parts);
  GraphWriter::set_int(n, "axis", -1);
  return GraphWriter::out(n);
}
std::string tree_gates(EmitArgs& a) { return tree_gates_of(a, a.in[0], a.dims[0].rows()); }
std::string tree_gates_affine(EmitArgs& a) { return tree_gates_of(a, affine(a), out_dim(a).rows()); }
// c = i u + sum_k f_k c_k
std::string tree_c(EmitArgs& a) {
  const unsigned h = out_dim(a).rows();
  const std::string& g = a.in[0];
  std::string c = a.w.op("Mul", {block(a, g, 0, h), block(a, g, 2, h)});
  for (unsigned k = 1; k < a.in.size(); ++k) c = a.w.op("Add", {c, a.w.op("Mul", {block(a, g, 2 + k, h), a.in[k]})});
  return c;
}
// h = o tanh(c)
std::string tree_h(EmitArgs& a) {
  const unsigned h = a.dims[0].rows();
  return a.w.op("Mul", {block(a, a.in[1], 1, h), a.w.op("Tanh", {a.in[0]})});
}

// ---------------------------------------------------------------- the table

struct Row {
  OpKind op;
  OnnxForm form;
};

#define U(Kind, Op)                                \
  {                                                \
    OpKind::Kind, {                                \
      Op, [](EmitArgs& a) { return unary(a, Op); } \
    }                                              \
  }
#define B(Kind, Op)                                 \
  {                                                 \
    OpKind::Kind, {                                 \
      Op, [](EmitArgs& a) { return binary(a, Op); } \
    }                                               \
  }

const Row kRows[] = {
    {OpKind::Input, {"initializer (or a declared graph input)", constant_value}},
    {OpKind::Constant, {"initializer", constant_value}},
    {OpKind::Parameter, {"initializer", parameter_leaf}},
    {OpKind::Lookup, {"Gather of the table (or of a declared int64 input)", lookup_leaf}},
    B(Add, "Add"),
    B(Subtract, "Sub"),
    B(CMult, "Mul"),
    B(CDiv, "Div"),
    U(Negate, "Neg"),
    {OpKind::AddScalar, {"Add", [](EmitArgs& a) { return scalar_op(a, "Add", false); }}},
    {OpKind::MultiplyScalar, {"Mul", [](EmitArgs& a) { return scalar_op(a, "Mul", false); }}},
    {OpKind::ScalarMinus, {"Sub", [](EmitArgs& a) { return scalar_op(a, "Sub", true); }}},
    {OpKind::ScalarDivide, {"Div", [](EmitArgs& a) { return scalar_op(a, "Div", true); }}},
    B(Pow, "Pow"),
    B(Max, "Max"),
    B(Min, "Min"),
    {OpKind::Sum, {"Sum", [](EmitArgs& a) { return nary(a, "Sum"); }}},
    U(Tanh, "Tanh"),
    U(Logistic, "Sigmoid"),
    U(Rectify, "Relu"),
    {OpKind::Elu, {"Elu", elu}},
    {OpKind::Selu, {"Selu", selu}},
    {OpKind::Silu, {"Mul + Sigmoid", silu}},
    U(Softsign, "Softsign"),
    U(Exp, "Exp"),
    U(Log, "Log"),
    U(Sqrt, "Sqrt"),
    {OpKind::Square,
     {"Mul",
      [](EmitArgs& a) {
        return a.w.op("Mul", {a.in[0], a.in[0]});
      }}},
    {OpKind::Cube,
     {"Mul",
      [](EmitArgs& a) {
        return a.w.op("Mul", {a.in[0], a.w.op("Mul", {a.in[0], a.in[0]})});
      }}},
    U(Abs, "Abs"),
    U(Erf, "Erf"),
    {OpKind::LogSigmoid, {"Neg + Softplus", log_sigmoid}},
    {OpKind::MatMul, {"MatMul", matmul}},
    {OpKind::AffineTransform, {"MatMul + Add", affine}},
    {OpKind::Transpose, {"Transpose", transpose}},
    {OpKind::Softmax, {"Softmax", softmax}},
    {OpKind::LogSoftmax, {"LogSoftmax", log_softmax}},
    {OpKind::LogSumExp, {"Max, Exp, Sum, Log", logsumexp}},
    {OpKind::PickNegLogSoftmax, {"LogSoftmax + Gather (one index)", pickneglogsoftmax}},
    {OpKind::SquaredDistance, {"Sub, Mul, ReduceSum", squared_distance}},
    {OpKind::L1Distance, {"Sub, Abs, ReduceSum", l1_distance}},
    {OpKind::SquaredNorm, {"Mul, ReduceSum", squared_norm}},
    {OpKind::L2Norm, {"Mul, ReduceSum, Sqrt", l2_norm}},
    {OpKind::DotProduct, {"Mul, ReduceSum", dot_product}},
    {OpKind::SumElems, {"ReduceSum", [](EmitArgs& a) { return reduce_elems(a, "ReduceSum"); }}},
    {OpKind::SumBatches, {"ReduceSum", [](EmitArgs& a) { return reduce_batches(a, "ReduceSum"); }}},
    {OpKind::SumDim, {"ReduceSum", [](EmitArgs& a) { return reduce_dims(a, "ReduceSum"); }}},
    {OpKind::MeanElems, {"ReduceMean", [](EmitArgs& a) { return reduce_elems(a, "ReduceMean"); }}},
    {OpKind::MeanBatches, {"ReduceMean", [](EmitArgs& a) { return reduce_batches(a, "ReduceMean"); }}},
    {OpKind::MeanDim, {"ReduceMean", [](EmitArgs& a) { return reduce_dims(a, "ReduceMean"); }}},
    {OpKind::MaxDim, {"ReduceMax", [](EmitArgs& a) { return reduce_one_dim(a, "ReduceMax"); }}},
    {OpKind::MinDim, {"ReduceMin", [](EmitArgs& a) { return reduce_one_dim(a, "ReduceMin"); }}},
    {OpKind::Reshape, {"Reshape", reshape}},
    {OpKind::Pick, {"Gather (one index)", pick}},
    {OpKind::PickRange, {"Slice", pick_range}},
    {OpKind::PickBatchElems, {"Gather", pick_batch_elems}},
    {OpKind::SelectRows, {"Gather", select_rows}},
    {OpKind::SelectCols, {"Gather", select_cols}},
    {OpKind::Concatenate, {"Concat", concatenate}},
    {OpKind::ConcatenateToBatch, {"Concat", concatenate_to_batch}},
    {OpKind::NoBackprop, {"Identity", [](EmitArgs& a) { return unary(a, "Identity"); }}},
    {OpKind::FlipGradient, {"Identity", [](EmitArgs& a) { return unary(a, "Identity"); }}},
    {OpKind::ScaleGradient, {"Identity", [](EmitArgs& a) { return unary(a, "Identity"); }}},
    {OpKind::LayerNorm, {"ReduceMean, Sub, Div, Mul, Add", layer_norm}},
    U(Sin, "Sin"),
    U(Cos, "Cos"),
    U(Tan, "Tan"),
    U(Asin, "Asin"),
    U(Acos, "Acos"),
    U(Atan, "Atan"),
    U(Sinh, "Sinh"),
    U(Cosh, "Cosh"),
    U(Asinh, "Asinh"),
    U(Acosh, "Acosh"),
    U(Atanh, "Atanh"),
    {OpKind::Round, {"Sign, Abs, Floor (halves away from zero)", round_away}},
    U(Ceil, "Ceil"),
    U(Floor, "Floor"),
    {OpKind::VanillaLSTMGates, {"MatMul, Add, Slice, Sigmoid, Tanh, Concat", lstm_gates}},
    {OpKind::VanillaLSTMC, {"Slice, Mul, Add", lstm_c}},
    {OpKind::VanillaLSTMH, {"Slice, Tanh, Mul", lstm_h}},
    {OpKind::TreeLSTMGates, {"Slice, Sigmoid, Tanh, Concat", tree_gates}},
    {OpKind::TreeLSTMGatesAffine, {"MatMul, Add, Slice, Sigmoid, Tanh, Concat", tree_gates_affine}},
    {OpKind::TreeLSTMC, {"Slice, Mul, Add", tree_c}},
    {OpKind::TreeLSTMH, {"Slice, Tanh, Mul", tree_h}},
};

#undef U
#undef B

struct Table {
  const OnnxForm* rows[kNumOps] = {};
  Table() {
    for (const Row& r : kRows) rows[static_cast<unsigned>(r.op)] = &r.form;
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

const OnnxForm* onnx_form(OpKind op) { return table().rows[static_cast<unsigned>(op)]; }

const char* onnx_form_name(OpKind op) {
  const OnnxForm* f = onnx_form(op);
  return f ? f->form : nullptr;
}

}  // namespace onnx_export
}  // namespace dynet_lite
