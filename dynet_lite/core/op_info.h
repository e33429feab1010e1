#pragma once
// The row of an op in the op table: its name, how it infers its shape, its
// kernels per device and how it batches.  The kernels of every device fill
// rows of this type, so it lives below them; the table itself is filled by the
// family files under ops/ and the backends (ops/op_table.cc) on first use.
#include <cstddef>
#include <cstdint>

#include "dynet_lite/core/op_kind.h"
#include "dynet_lite/dim.h"
#include "dynet_lite/tensor.h"

namespace dynet_lite {

struct Node;
class ExecContext;
class ParameterStorage;

/// Shape inference; runs when the node is added and throws a dim_error naming the
/// op and the offending dimensions.  `xs[i]->d` are the argument shapes (values
/// may not be computed yet).
using ShapeFn = Dim (*)(const Tensor* const* xs, unsigned n, const Node& node);
/// y = f(xs): writes node.value (memory already allocated unless the op sets
/// `sets_own_value`).
using ForwardFn = void (*)(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx);
/// dx_i += (d y / d x_i)^T dy.  Must accumulate, never overwrite.
using BackwardFn = void (*)(const Tensor* const* xs, unsigned n, const Node& node, const Tensor& dy, unsigned i,
                            Tensor& dx, ExecContext& ctx);
/// For leaves that own trainable memory (parameter, lookup): adds dy into it.
using AccumulateFn = void (*)(const Node& node, const Tensor& dy);
/// The same for a batched group of k such nodes (identical op and shape) whose
/// gradients lie side by side from `dy`: one call instead of k.  `ctx` is the
/// members' device's (a GPU uploads the indices through it).
using AccumulateGroupFn = void (*)(const Node* const* members, unsigned k, const float* dy, ExecContext& ctx);

/// Element-wise kernels over one node's floats [0, n), for fusion (exec/fusion.h):
/// y = f(x_0, ..., x_{nargs-1}) where every argument has the node's shape; the
/// op's parameters are read from `node`.
using SpanForwardFn = void (*)(const float* const* x, unsigned nargs, float* y, size_t n, const Node& node);
/// dx += (d y / d x_i) dy over [0, n), for the same arguments; with `assign`,
/// dx = (d y / d x_i) dy (dx need not be initialised).  dx is no argument's value.
using SpanBackwardFn = void (*)(const float* const* x, unsigned nargs, const float* y, const float* dy, unsigned i,
                                float* dx, size_t n, bool assign, const Node& node);

/// How a node of this op can run together with identical nodes of other instances
/// (exec/autobatch.cc reads this).  Batching stacks the members' arguments along
/// the batch dimension and runs the op's own kernel once on a "virtual" node whose
/// batch is the sum of the members'; an argument that is the same parameter for
/// every member is passed once and broadcast.  So an op can batch when its kernel
/// treats batch elements independently and broadcasts a batch of 1.
enum class BatchKind : uint8_t {
  Never,        ///< always runs alone (e.g. reductions over the batch)
  Elementwise,  ///< stackable; the members' parameters must be equal
  Custom,       ///< stackable with per-member parameters merged by `batch_combine`
};

/// Whether two nodes of an op with equal arguments, parameters and shape always
/// have equal values (no randomness, no user memory read at forward time), so a
/// graph may keep only the first (exec/cse.h).
enum class Purity : uint8_t { Impure, Pure };

/// The devices an op has kernels for.  The CUDA column of a row is filled by
/// backends/cuda; in a CUDA build the table checks that it matches this.
enum class Devices : uint8_t { Cpu, CpuAndCuda };

/// A loss that can remake its argument's gradient from what forward kept (the
/// scores of pickneglogsoftmax): writes d loss / d x for batch elements
/// [b0, b1) of x into `dx` (x's rows times b1 - b0 columns, contiguous, need not
/// be initialised), given the loss node's own gradient `dy`.  Plain backward
/// uses it to leave a large argument's gradient unstored (GradientMark::OnDemand).
using InputGradientFn = void (*)(const Tensor& x, const Node& node, const float* dy, unsigned b0, unsigned b1,
                                 float* dx);

/// Custom batching: fills the virtual node's parameters from the members' (e.g.
/// concatenates their indices into graph memory).  Returns false when these
/// members cannot run together after all.
using BatchCombineFn = bool (*)(const Node* const* members, unsigned k, Node& batched, ExecContext& ctx);
/// Custom batching in a compiled program whose replays launch a recorded device
/// graph: writes the members' current indices over those batch_combine wrote
/// for the virtual node at the recording, in place (the graph's copies read them
/// from there at each launch), checking them as batch_combine does.
using BatchRefillFn = void (*)(const Node* const* members, unsigned k, Node& batched);
/// Custom batching: the part of a node's parameters that must be equal across a
/// batch (e.g. pick's dimension), as a hash; members with different keys never batch.
using BatchKeyFn = uint64_t (*)(const Node& node);

/// An op whose value starts as the product W x of two of its arguments, computed
/// by a column-exact kernel (backends/cpu/gemm.h detail::columns_product) where
/// `applies` says so.  A compiled program run without batching computes that
/// product for the nodes sharing W at once, before the first of them, and hands
/// each node's kernel its column (ExecContext::precomputed_product); their
/// backward calls for the operand then leave dx += W^T d (their term) in
/// ExecContext::input_grads, summed later as one product.  Both give the bits
/// of the nodes' own calls (exec/plain_tape.h).
struct ColumnProduct {
  bool (*applies)(const Tensor* const* xs, unsigned n, const Node& node) = nullptr;
  /// y (m x n) = W x (x k x n), column-exact, in the instruction set of the op's kernels.
  void (*product)(const float* w, size_t m, size_t k, const float* x, size_t n, float* y) = nullptr;
  uint8_t weight = 0, operand = 0;  // argument positions
};

struct OpInfo {
  const char* name = nullptr;
  ShapeFn shape = nullptr;
  ForwardFn forward[kNumDeviceTypes] = {};
  BackwardFn backward[kNumDeviceTypes] = {};
  AccumulateFn accumulate = nullptr;
  AccumulateGroupFn accumulate_group = nullptr;  ///< optional; else `accumulate` per member
  /// Forward points node.value.v at memory it does not allocate (a parameter, an
  /// input's own buffer, a reshape of its argument).
  bool sets_own_value = false;
  /// A leaf whose value depends on trainable memory (parameter, lookup).
  bool trainable_leaf = false;
  /// Takes no arguments (inputs, constants, random tensors, parameters, lookups).
  bool leaf = false;
  /// Gradient does not flow back through this op (nobackprop, random leaves).
  bool blocks_gradient = false;
  /// Its CPU backward honours ExecContext::assign_dx for every argument (writes
  /// all of dx when asked to, or leaves a weight-gradient term and dx alone), so
  /// its arguments' gradients need no zeroing first.
  bool assigns_gradient = false;
  /// Purity::Pure (see there).  `pure_node`, where set, decides per node
  /// (lookup(&index) reads the index at forward time, lookup(5) does not).
  bool pure = false;
  bool (*pure_node)(const Node& node) = nullptr;
  BatchKind batch = BatchKind::Never;
  /// CPU span kernels of an element-wise op (both set or both null): nodes whose
  /// arguments all have the node's shape may run inside a fused group.
  SpanForwardFn span_forward = nullptr;
  SpanBackwardFn span_backward = nullptr;
  BatchCombineFn batch_combine = nullptr;  ///< required for BatchKind::Custom
  BatchRefillFn batch_refill = nullptr;    ///< optional: without it, batched replays run kernel by kernel
  BatchKeyFn batch_key = nullptr;          ///< optional for BatchKind::Custom
  /// The family (the ops/ file, e.g. "unary") that declares the row.
  const char* family = nullptr;
  Devices devices = Devices::Cpu;
  /// A leaf whose value is a dense parameter's memory: that parameter (whose own
  /// gradient plain backward may write straight into while it is zero), or null.
  ParameterStorage* (*dense_parameter)(const Node& node) = nullptr;
  /// Optional, for ops of one argument whose gradient that argument alone
  /// receives: see InputGradientFn.
  InputGradientFn input_gradient = nullptr;
  /// Optional: see ColumnProduct.
  ColumnProduct column_product;
  /// Optional: whether backward for argument k adds the node's gradient into
  /// x_k unchanged (dx += dy, x_k of the node's shape).  x_k's gradient is then
  /// the node's own memory, with no call, where nothing else writes it: in
  /// plain backward on the CPU where the node is x_k's only reader
  /// (Node::readers), and in a compiled program's CPU tape where the call is
  /// the only write to it (exec/plain_tape.h plan_passed_gradients).
  bool (*passes_gradient)(const Tensor* const* xs, unsigned n, const Node& node, unsigned k) = nullptr;
};

/// The row of `op`.  The table is filled on first use.
const OpInfo& op_info(OpKind op);
/// All rows, indexed by OpKind (for hot loops: fetch once, index many times).
const OpInfo* op_rows();
inline const char* op_name(OpKind op) { return op_info(op).name; }
/// Ops whose row lacks a name, a shape function or CPU kernels (must be empty).
const char* const* incomplete_ops(unsigned* count);

/// Mutable access for the family files while the table is filled.
class OpTable {
 public:
  OpInfo& row(OpKind op) { return rows_[static_cast<unsigned>(op)]; }
  const OpInfo& row(OpKind op) const { return rows_[static_cast<unsigned>(op)]; }
  /// Declares op's row: what every row has (its family, name, shape rule, CPU
  /// kernels, batching rule, purity and devices).  Every family file declares its rows
  /// through this and sets the rarer fields (leaf flags, accumulate,
  /// batch_combine, pure_node) on the row it returns; the CUDA column is filled
  /// by backends/cuda.  Declaring a row twice is an internal error.
  OpInfo& define(OpKind op, const char* family, const char* name, ShapeFn shape, ForwardFn forward, BackwardFn backward,
                 BatchKind batch, Purity purity, Devices devices = Devices::Cpu);

 private:
  OpInfo rows_[kNumOps];
};

}  // namespace dynet_lite
