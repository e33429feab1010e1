#pragma once
// The CPU kernels of affine_transform (ops/matrix.cc), also run by fused ops built
// on an affine transform (treelstm_gates_affine in ops/treelstm.cc): its shape
// rule, its products without the bias, and its backward for any gradient.
#include "dynet_lite/core/node.h"

namespace dynet_lite {

class ExecContext;

namespace affine {

/// Shape of b + W1 x1 + W2 x2 + ... for xs = {b, W1, x1, W2, x2, ...}; throws a
/// dim_error naming node's op.
Dim shape(const Tensor* const* xs, unsigned n, const Node& node);
/// y (+)= W1 x1 + W2 x2 + ... (not b); the first product is assigned unless
/// `accumulate`.  With no product (n == 1), y is left as it is.
void products(const Tensor* const* xs, unsigned n, const Tensor& y, bool accumulate);
/// b broadcast into y (y = b), as affine_transform's forward starts.
void set_bias(const Tensor& b, const Tensor& y);
/// affine_transform's backward for argument i, given the gradient dy of its result.
void backward(const Tensor* const* xs, unsigned n, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
              ExecContext& ctx);

}  // namespace affine
}  // namespace dynet_lite
