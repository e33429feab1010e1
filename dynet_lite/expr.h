#pragma once
/// \file expr.h
/// Expressions: the functions that add nodes to a ComputationGraph.  Names,
/// signatures and batch semantics follow DyNet's expr.h.  Every function checks
/// its arguments' shapes when called and throws a dim_error naming itself and
/// the offending dimensions.
///
/// Batch semantics: a tensor of shape {d...}XB holds B instances.  Arguments of
/// element-wise and binary ops must have equal batch sizes or one of them 1
/// (broadcast).  Dimensions broadcast where one side is 1, as in DyNet's cwise ops.
#include <initializer_list>
#include <vector>

#include "dynet_lite/dynet.h"
#include "dynet_lite/model.h"

namespace dynet_lite {

/// A handle to a node of a graph.  Cheap to copy; stale once the graph is
/// cleared or destroyed.  A stale expression is an error wherever it is used
/// (std::invalid_argument), decided without reading the graph, which may be gone.
struct Expression {
  ComputationGraph* pg = nullptr;
  VariableIndex i = 0;
  unsigned graph_id = 0;
  unsigned stamp = 0;       ///< tells this node from a later one in the same slot after revert()
  unsigned graph_slot = 0;  ///< the graph's place in the registry of live graphs

  Expression() = default;
  Expression(ComputationGraph* pg, VariableIndex i)
      : pg(pg), i(i), graph_id(pg->get_id()), stamp(pg->node_stamp(i)), graph_slot(pg->registry_slot()) {}
  /// For the node just added by add_node (its stamp is the graph's current one).
  static Expression just_added(ComputationGraph* pg, VariableIndex i) {
    Expression e;
    e.pg = pg;
    e.i = i;
    e.graph_id = pg->get_id();
    e.stamp = pg->current_stamp();
    e.graph_slot = pg->registry_slot();
    return e;
  }

  /// Computes (if needed) and returns the value.
  const Tensor& value() const;
  /// The gradient after pg->backward().
  const Tensor& gradient() const;
  /// The shape, known as soon as the expression exists.
  Dim dim() const;
  /// True when the graph was destroyed or cleared (or reverted past this node),
  /// or the expression is empty.
  bool is_stale() const;
  /// Whether the graph that made this expression is alive and not cleared since
  /// (asked of the registry of live graphs: pg is not read).
  bool graph_is_live() const;
};

namespace detail {
/// Adds a node of `op` with inline parameters (a small plain struct) to the graph
/// of the arguments.  The single entry point of every function below; it does no
/// heap allocation.
Expression add(OpKind op, const Expression* args, unsigned num_args, const void* params, size_t params_size);
inline Expression add(OpKind op, std::initializer_list<Expression> args) {
  return add(op, args.begin(), static_cast<unsigned>(args.size()), nullptr, 0);
}
inline Expression add(OpKind op, const std::vector<Expression>& args) {
  return add(op, args.data(), static_cast<unsigned>(args.size()), nullptr, 0);
}
template <class P>
Expression add(OpKind op, std::initializer_list<Expression> args, const P& p) {
  return add(op, args.begin(), static_cast<unsigned>(args.size()), &p, sizeof(P));
}
template <class P>
Expression add(OpKind op, const std::vector<Expression>& args, const P& p) {
  return add(op, args.data(), static_cast<unsigned>(args.size()), &p, sizeof(P));
}
/// The graph of `x`; throws (naming `op`) when x is empty or its graph was
/// destroyed or cleared.
ComputationGraph& live_graph(const Expression& x, const char* op);
/// Adds a leaf (no arguments) to `g`.
template <class P>
Expression add_leaf(ComputationGraph& g, OpKind op, const Dim& d, const P& p, bool trainable = false,
                    Device* device = nullptr) {
  return Expression::just_added(&g, g.add_node(op, nullptr, 0, &p, sizeof(P), trainable, device, &d));
}
/// Copies `n` values into graph memory (valid until the graph is cleared).
template <class T>
const T* copy_to_graph(ComputationGraph& g, const T* data, size_t n) {
  T* dst = static_cast<T*>(g.allocate_graph_bytes(n * sizeof(T)));
  for (size_t i = 0; i < n; ++i) dst[i] = data[i];
  return dst;
}
}  // namespace detail

// ---------------------------------------------------------------- inputs
Expression input(ComputationGraph& g, real s, Device* device = nullptr);
/// A scalar read from *ps each time the graph is computed.
Expression input(ComputationGraph& g, const real* ps, Device* device = nullptr);
Expression input(ComputationGraph& g, const Dim& d, const std::vector<float>& data, Device* device = nullptr);
/// Values read from *pdata each time the graph is computed.
Expression input(ComputationGraph& g, const Dim& d, const std::vector<float>* pdata, Device* device = nullptr);
/// A sparse input: `data[k]` at position `ids[k]`, `defdata` elsewhere.
Expression input(ComputationGraph& g, const Dim& d, const std::vector<unsigned int>& ids,
                 const std::vector<float>& data, float defdata = 0.f, Device* device = nullptr);
Expression parameter(ComputationGraph& g, Parameter p);
Expression parameter(ComputationGraph& g, LookupParameter lp);
Expression const_parameter(ComputationGraph& g, Parameter p);
Expression const_parameter(ComputationGraph& g, LookupParameter lp);
Expression lookup(ComputationGraph& g, LookupParameter p, unsigned index);
Expression lookup(ComputationGraph& g, LookupParameter p, const unsigned* pindex);
/// A batch: element b is row indices[b].
Expression lookup(ComputationGraph& g, LookupParameter p, const std::vector<unsigned>& indices);
Expression lookup(ComputationGraph& g, LookupParameter p, const std::vector<unsigned>* pindices);
Expression const_lookup(ComputationGraph& g, LookupParameter p, unsigned index);
Expression const_lookup(ComputationGraph& g, LookupParameter p, const unsigned* pindex);
Expression const_lookup(ComputationGraph& g, LookupParameter p, const std::vector<unsigned>& indices);
Expression const_lookup(ComputationGraph& g, LookupParameter p, const std::vector<unsigned>* pindices);
Expression zeros(ComputationGraph& g, const Dim& d);
Expression zeroes(ComputationGraph& g, const Dim& d);
Expression ones(ComputationGraph& g, const Dim& d);
Expression constant(ComputationGraph& g, const Dim& d, float val);
Expression random_normal(ComputationGraph& g, const Dim& d, float mean = 0.f, float stddev = 1.f);
Expression random_bernoulli(ComputationGraph& g, const Dim& d, real p, real scale = 1.0f);
Expression random_uniform(ComputationGraph& g, const Dim& d, real left, real right);
Expression random_gumbel(ComputationGraph& g, const Dim& d, real mu = 0.0f, real beta = 1.0f);

// ---------------------------------------------------------------- arithmetic
Expression operator-(const Expression& x);
Expression operator+(const Expression& x, const Expression& y);
Expression operator+(const Expression& x, real y);
Expression operator+(real x, const Expression& y);
Expression operator-(const Expression& x, const Expression& y);
Expression operator-(real x, const Expression& y);
Expression operator-(const Expression& x, real y);
/// Matrix product (with a batch: per element, or a shared matrix).
Expression operator*(const Expression& x, const Expression& y);
Expression operator*(const Expression& x, float y);
Expression operator*(float y, const Expression& x);
Expression operator/(const Expression& x, float y);
Expression operator/(float x, const Expression& y);
Expression cmult(const Expression& x, const Expression& y);
Expression cdiv(const Expression& x, const Expression& y);
/// x + bias, the column vector `bias` added to every column of x.
Expression colwise_add(const Expression& x, const Expression& bias);
/// xs[0] + xs[1]*xs[2] + xs[3]*xs[4] + ...
Expression affine_transform(const std::initializer_list<Expression>& xs);
Expression affine_transform(const std::vector<Expression>& xs);
Expression sum(const std::initializer_list<Expression>& xs);
Expression sum(const std::vector<Expression>& xs);
Expression average(const std::initializer_list<Expression>& xs);
Expression average(const std::vector<Expression>& xs);
Expression pow(const Expression& x, const Expression& y);
Expression min(const Expression& x, const Expression& y);
Expression max(const Expression& x, const Expression& y);
Expression max(const std::initializer_list<Expression>& xs);
Expression max(const std::vector<Expression>& xs);
Expression dot_product(const Expression& x, const Expression& y);

// ---------------------------------------------------------------- element-wise
Expression tanh(const Expression& x);
Expression logistic(const Expression& x);
Expression rectify(const Expression& x);
Expression elu(const Expression& x, float alpha = 1.f);
Expression selu(const Expression& x);
Expression silu(const Expression& x, float beta = 1.f);
Expression softsign(const Expression& x);
Expression exp(const Expression& x);
Expression log(const Expression& x);
Expression sqrt(const Expression& x);
Expression square(const Expression& x);
Expression cube(const Expression& x);
Expression abs(const Expression& x);
Expression erf(const Expression& x);
Expression log_sigmoid(const Expression& x);

// ---------------------------------------------------------------- shape
Expression transpose(const Expression& x, const std::vector<unsigned>& dims = {1, 0});
Expression reshape(const Expression& x, const Dim& d);

// ---------------------------------------------------------------- softmax
/// Softmax over dimension d (each column when d = 0).
Expression softmax(const Expression& x, unsigned d = 0);
Expression log_softmax(const Expression& x);
/// log_softmax over the listed rows only; other rows get -inf.
Expression log_softmax(const Expression& x, const std::vector<unsigned>& restriction);
/// log(sum_i exp(xs[i])), element-wise over the list.
Expression logsumexp(const std::initializer_list<Expression>& xs);
Expression logsumexp(const std::vector<Expression>& xs);
/// -log(softmax(x))[v]; x a column vector (or a batch of them).
Expression pickneglogsoftmax(const Expression& x, unsigned v);
Expression pickneglogsoftmax(const Expression& x, const unsigned* pv);
Expression pickneglogsoftmax(const Expression& x, const std::vector<unsigned>& v);
Expression pickneglogsoftmax(const Expression& x, const std::vector<unsigned>* pv);

// ---------------------------------------------------------------- losses
Expression hinge(const Expression& x, unsigned index, float m = 1.0f);
Expression hinge(const Expression& x, const unsigned* pindex, float m = 1.0f);
Expression hinge(const Expression& x, const std::vector<unsigned>& indices, float m = 1.0f);
Expression hinge(const Expression& x, const std::vector<unsigned>* pindices, float m = 1.0f);
Expression squared_distance(const Expression& x, const Expression& y);
Expression l1_distance(const Expression& x, const Expression& y);
Expression huber_distance(const Expression& x, const Expression& y, real c = 1.345f);
Expression binary_log_loss(const Expression& x, const Expression& y);
Expression squared_norm(const Expression& x);
Expression l2_norm(const Expression& x);

// ---------------------------------------------------------------- reductions
Expression sum_elems(const Expression& x);
Expression mean_elems(const Expression& x);
Expression sum_batches(const Expression& x);
Expression mean_batches(const Expression& x);
/// Sums over the listed dimensions (and over the batch when b).
Expression sum_dim(const Expression& x, const std::vector<unsigned>& dims, bool b = false);
Expression mean_dim(const Expression& x, const std::vector<unsigned>& dims, bool b = false);
Expression max_dim(const Expression& x, unsigned d = 0);
Expression min_dim(const Expression& x, unsigned d = 0);

// ---------------------------------------------------------------- selection
Expression pick(const Expression& x, unsigned v, unsigned d = 0);
Expression pick(const Expression& x, const std::vector<unsigned>& v, unsigned d = 0);
Expression pick(const Expression& x, const unsigned* v, unsigned d = 0);
Expression pick(const Expression& x, const std::vector<unsigned>* v, unsigned d = 0);
/// Elements [s, e) along dimension d.
Expression pick_range(const Expression& x, unsigned s, unsigned e, unsigned d = 0);
Expression pickrange(const Expression& x, unsigned s, unsigned e);
Expression pick_batch_elem(const Expression& x, unsigned v);
Expression pick_batch_elems(const Expression& x, const std::vector<unsigned>& v);
Expression pick_batch_elems(const Expression& x, const std::vector<unsigned>* pv);
Expression select_rows(const Expression& x, const std::vector<unsigned>& rows);
Expression select_rows(const Expression& x, const std::vector<unsigned>* prows);
Expression select_cols(const Expression& x, const std::vector<unsigned>& cols);
Expression select_cols(const Expression& x, const std::vector<unsigned>* pcols);
Expression concatenate(const std::initializer_list<Expression>& xs, unsigned d = 0);
Expression concatenate(const std::vector<Expression>& xs, unsigned d = 0);
Expression concatenate_cols(const std::initializer_list<Expression>& xs);
Expression concatenate_cols(const std::vector<Expression>& xs);
Expression concatenate_to_batch(const std::initializer_list<Expression>& xs);
Expression concatenate_to_batch(const std::vector<Expression>& xs);

// ---------------------------------------------------------------- gradient control
Expression nobackprop(const Expression& x);
Expression flip_gradient(const Expression& x);
Expression scale_gradient(const Expression& x, float lambd = 1.0f);

// ---------------------------------------------------------------- noise
Expression noise(const Expression& x, real stddev);
Expression dropout(const Expression& x, real p);
Expression dropout_dim(const Expression& x, unsigned d, real p);
Expression dropout_batch(const Expression& x, real p);
Expression block_dropout(const Expression& x, real p);

// ---------------------------------------------------------------- normalisation
/// g * (x - mean(x)) / std(x) + b over a column vector x.
Expression layer_norm(const Expression& x, const Expression& g, const Expression& b);

// ================================================================ the rest of DyNet's expr.h
// (one section per family file; each function is defined in the file named)

// ---------------------------------------------------------------- ops/trig.cc
/// How rounding functions (and argmax) pass gradients back: zero_gradient (the
/// true derivative, 0 almost everywhere) or straight_through_gradient (dx += dy).
/// A fixed underlying type: any int converts to it without undefined behaviour,
/// and a value other than these two is an error (std::invalid_argument).
enum GradientMode : int { zero_gradient, straight_through_gradient };
Expression sin(const Expression& x);
Expression cos(const Expression& x);
Expression tan(const Expression& x);
Expression asin(const Expression& x);
Expression acos(const Expression& x);
Expression atan(const Expression& x);
Expression sinh(const Expression& x);
Expression cosh(const Expression& x);
Expression asinh(const Expression& x);
Expression acosh(const Expression& x);
Expression atanh(const Expression& x);
/// log |Gamma(x)|;  derivative digamma(x).
Expression lgamma(const Expression& x);
/// Nearest integer, halfway cases away from zero (std::round).
Expression round(const Expression& x, GradientMode gradient_mode = zero_gradient);
Expression ceil(const Expression& x, GradientMode gradient_mode = zero_gradient);
Expression floor(const Expression& x, GradientMode gradient_mode = zero_gradient);

// ---------------------------------------------------------------- ops/stats.cc
/// (1/n) sum_i x_i^r over all elements of each batch element (r >= 1): {1} X B.
Expression moment_elems(const Expression& x, unsigned r);
/// sum of x^r over the listed dimensions (and the batch when b) divided by n, or by
/// the number of reduced elements when n == 0.
Expression moment_dim(const Expression& x, const std::vector<unsigned>& dims, unsigned r, bool b = false,
                      unsigned n = 0);
/// (1/B) sum_b x_b^r, element-wise across the batch.
Expression moment_batches(const Expression& x, unsigned r);
/// Standard deviation (population, divided by n) of the elements of each batch element.
Expression std_elems(const Expression& x);
/// sqrt(sum (x - m)^2 / n) with m = sum x / n over the listed dimensions (and the batch
/// when b); n == 0 means the number of reduced elements.
Expression std_dim(const Expression& x, const std::vector<unsigned>& dims, bool b = false, unsigned n = 0);
/// Standard deviation across the batch, element by element.
Expression std_batches(const Expression& x);
/// Inclusive cumulative sum along dimension d: y_i = sum_{j <= i} x_j.
Expression cumsum(const Expression& x, unsigned d);
/// log sum_i exp(x_i) along dimension d (which is removed).
Expression logsumexp_dim(const Expression& x, unsigned d);
/// Sums each group of nrows consecutive rows: {R, C} -> {R / nrows, C}.
Expression fold_rows(const Expression& x, unsigned nrows = 2);
/// The k largest values along dimension d, kept in their original order.
Expression kmax_pooling(const Expression& x, unsigned k, unsigned d = 1);
/// Sums of n consecutive columns: {R, C} -> {R, C - n + 1}.
Expression kmh_ngram(const Expression& x, unsigned n);
/// Every strides[k]-th element from from[k] (default 0) to to[k] (exclusive, default
/// the size) along each dimension k; index nd of the lists is the batch dimension.
Expression strided_select(const Expression& x, const std::vector<int>& strides, const std::vector<int>& from = {},
                          const std::vector<int>& to = {});
/// [deprecated in DyNet] mean over the columns: mean_dim(x, {1}).
Expression average_cols(const Expression& x);
/// [deprecated in DyNet] sum over the columns: sum_dim(x, {1}).
Expression sum_cols(const Expression& x);
/// [deprecated in DyNet] sum over the rows: sum_dim(x, {0}).
Expression sum_rows(const Expression& x);
/// Element-wise division, the same as cdiv(x, y).
Expression operator/(const Expression& x, const Expression& y);

// ---------------------------------------------------------------- ops/structured.cc
// GradientMode (zero_gradient / straight_through_gradient) is declared in the
// ops/trig.cc section above; argmax uses it too.
using ArgmaxGradient = GradientMode;  ///< DyNet 2.0's name
/// Sparsemax (Martins & Astudillo 2016): the Euclidean projection of the column
/// vector x onto the simplex, max(x - tau, 0); each batch element separately.
Expression sparsemax(const Expression& x);
/// The sparsemax loss of x against q, the uniform distribution over
/// `target_support` (distinct row indices; the same for every batch element):
/// 1/2 sum_{j : x_j > tau} (x_j^2 - tau^2) - q.x + 1/2 |q|^2.  One value per batch element.
Expression sparsemax_loss(const Expression& x, const std::vector<unsigned>& target_support);
/// As above, the support read from *ptarget_support each time the graph is computed.
Expression sparsemax_loss(const Expression& x, const std::vector<unsigned>* ptarget_support);
/// Constrained softmax (Martins & Kreutzer 2017): the distribution closest to
/// softmax(x) in KL divergence with p <= y element-wise (y >= 0, sum y >= 1).
Expression constrained_softmax(const Expression& x, const Expression& y);
/// -log Poisson(y; lambda = exp(x)) = exp(x) - y x + log(y!), x a scalar (or a batch of them).
Expression poisson_loss(const Expression& x, unsigned y);
Expression poisson_loss(const Expression& x, const unsigned* py);
/// max(0, m - x + y) element-wise; x and y scalars or row vectors {1,n}.
Expression pairwise_rank_loss(const Expression& x, const Expression& y, real m = 1.0);
/// Hinge loss of each column (d = 0) or row (d = 1) of the matrix x against its
/// correct index in `indices`: one loss per column (row), the same indices for
/// every batch element.
Expression hinge_dim(const Expression& x, const std::vector<unsigned>& indices, unsigned d = 0, float m = 1.0);
Expression hinge_dim(const Expression& x, const std::vector<unsigned>* pindex, unsigned d = 0, float m = 1.0);
/// As above with one index list per batch element.
Expression hinge_dim(const Expression& x, const std::vector<std::vector<unsigned>>& indices, unsigned d = 0,
                     float m = 1.0);
Expression hinge_dim(const Expression& x, const std::vector<std::vector<unsigned>>* pindices, unsigned d = 0,
                     float m = 1.0);
/// The one-hot vector of the (first) largest element of the column vector x.
Expression argmax(const Expression& x, GradientMode gradient_mode);
/// A vector {d} that is `scale` at idx and 0 elsewhere.
Expression one_hot(ComputationGraph& g, unsigned d, unsigned idx, float scale = 1.0f);
/// A batch of one-hot vectors {d}X|ids|, element b at ids[b].
Expression one_hot(ComputationGraph& g, unsigned d, const std::vector<unsigned>& ids, float scale = 1.0f);

// ---------------------------------------------------------------- ops/conv.cc
/// 2-D convolution (cross-correlation, as DyNet and TensorFlow): x {H, W, Ci} X N,
/// filters f {FH, FW, Ci, Co}, output {H', W', Co} X N.  Valid padding gives
/// H' = ceil((H - FH + 1) / stride[0]); same padding gives H' = ceil(H / stride[0]).
Expression conv2d(const Expression& x, const Expression& f, const std::vector<unsigned>& stride,
                  bool is_valid = true);
/// conv2d plus a bias b {Co} added to every output position.
Expression conv2d(const Expression& x, const Expression& f, const Expression& b, const std::vector<unsigned>& stride,
                  bool is_valid = true);
/// 2-D max pooling over windows ksize {KH, KW} of x {H, W, C} X N, per channel.
Expression maxpooling2d(const Expression& x, const std::vector<unsigned>& ksize, const std::vector<unsigned>& stride,
                        bool is_valid = true);
/// Narrow 1-D convolution: x {d, n}, f {d, w} or {d, w, k}: y {k, n - w + 1},
/// y[j, i] = sum_{r, c} x[r, i + c] f[r, c, j].
Expression filter1d_narrow(const Expression& x, const Expression& f);
/// Circular convolution of vectors u, v {n}: y[k] = sum_i u[i] v[(k - i) mod n].
Expression circ_conv(const Expression& u, const Expression& v);
/// Circular correlation of vectors u, v {n}: y[k] = sum_i u[i] v[(i + k) mod n].
Expression circ_corr(const Expression& u, const Expression& v);

// ---------------------------------------------------------------- ops/linalg.cc
/// out[i, j] = sum_k x[i, j, k] y[k] for x {A, B, C}, y {C}.
Expression contract3d_1d(const Expression& x, const Expression& y);
/// contract3d_1d(x, y) + b, b {A, B}.
Expression contract3d_1d(const Expression& x, const Expression& y, const Expression& b);
/// out[i] = sum_{j, k} x[i, j, k] y[k] z[j] for x {A, B, C}, y {C}, z {B} (DyNet's order:
/// y contracts the third dimension of x, z the second).
Expression contract3d_1d_1d(const Expression& x, const Expression& y, const Expression& z);
/// contract3d_1d_1d(x, y, z) + b, b {A}.
Expression contract3d_1d_1d(const Expression& x, const Expression& y, const Expression& z, const Expression& b);
/// Matrix inverse of a square matrix x.
Expression inverse(const Expression& x);
/// log |det x| of a square matrix x (DyNet: log of the determinant).
Expression logdet(const Expression& x);
/// tr(x y^T) = sum_ij x[i, j] y[i, j].
Expression trace_of_product(const Expression& x, const Expression& y);
/// Weight normalisation: w / ||w|| * g, g a scalar.
Expression weight_norm(const Expression& w, const Expression& g);

// ---------------------------------------------------------------- ops/lstm.cc
/// DyNet's fused LSTM step, gates ordered i, f, o, g: [sigmoid(i); sigmoid(f + 1);
/// sigmoid(o); tanh(g)] of Wx x_t + Wh h_tm1 + b, shape {4h}: as in DyNet, 1 is
/// added to the forget gate's pre-activation (VanillaLSTMBuilder's forget_bias).  x_t and h_tm1 may be
/// batched (equal batches, or one of them 1); Wx {4h, in}, Wh {4h, h}, b {4h} are
/// not.  weightnoise_std > 0 adds fresh Gaussian noise to Wx, Wh and b each time
/// the node is computed (for training).
Expression vanilla_lstm_gates(const Expression& x_t, const Expression& h_tm1, const Expression& Wx,
                              const Expression& Wh, const Expression& b, real weightnoise_std = 0.f);
/// The same with x_t the concatenation of several inputs.
Expression vanilla_lstm_gates_concat(const std::vector<Expression>& x_t, const Expression& h_tm1,
                                     const Expression& Wx, const Expression& Wh, const Expression& b,
                                     real weightnoise_std = 0.f);
/// The same with x_t and h_tm1 multiplied element-wise by dropout masks first.
Expression vanilla_lstm_gates_dropout(const Expression& x_t, const Expression& h_tm1, const Expression& Wx,
                                      const Expression& Wh, const Expression& b, const Expression& dropout_mask_x,
                                      const Expression& dropout_mask_h, real weightnoise_std = 0.f);
Expression vanilla_lstm_gates_dropout_concat(const std::vector<Expression>& x_t, const Expression& h_tm1,
                                             const Expression& Wx, const Expression& Wh, const Expression& b,
                                             const Expression& dropout_mask_x, const Expression& dropout_mask_h,
                                             real weightnoise_std = 0.f);
/// c_t = f * c_tm1 + i * g from the gates of vanilla_lstm_gates.
Expression vanilla_lstm_c(const Expression& c_tm1, const Expression& gates_t);
/// h_t = o * tanh(c_t) from the gates of vanilla_lstm_gates.
Expression vanilla_lstm_h(const Expression& c_t, const Expression& gates_t);

// ---------------------------------------------------------------- ops/treelstm.cc
// Internal / advanced: the fused step of NaryTreeLSTMBuilder (not in DyNet's
// expr.h).  treelstm_gates, treelstm_c and treelstm_h have CPU and CUDA kernels,
// treelstm_gates_affine CPU kernels only; the builder uses them on the CPU and
// basic ops on other devices.
/// Gates of an N-ary Tree-LSTM node from its pre-activations pre {(3 + N) h}, rows
/// ordered i, o, u, f_1..f_N: [sigmoid(i); sigmoid(o); tanh(u); sigmoid(f_1..f_N)],
/// same shape as pre (may be batched).
Expression treelstm_gates(const Expression& pre, unsigned N);
/// treelstm_gates(affine_transform(affine_args), N) as one node: affine_args =
/// {b, W_1, x_1, W_2, x_2, ...} as for affine_transform, the result a column of
/// (3 + N) h.  The pre-activations are not kept (less memory, one pass fewer).
Expression treelstm_gates_affine(const std::vector<Expression>& affine_args, unsigned N);
/// c = i * u + sum_k f_k * c_k from the gates of treelstm_gates(., N) and the cells
/// c_children {h} of up to N children (none: a leaf, c = i * u).  Every argument
/// has a batch of 1 (broadcast) or the full batch.
Expression treelstm_c(const Expression& gates, const std::vector<Expression>& c_children, unsigned N);
/// h = o * tanh(c) from the cell c {h} and the gates of treelstm_gates.
Expression treelstm_h(const Expression& c, const Expression& gates);

// ---------------------------------------------------------------- ops/device.cc
/// x's value copied to `device` (the node lives there); the gradient is copied back.
Expression to_device(const Expression& x, Device* device);

}  // namespace dynet_lite
