#pragma once
// The checks and the result shape shared by the ops that reduce the dimensions
// listed in a mask (bit k: dimension k) and, optionally, the batch:
// sum_dim / mean_dim (reduce.cc) and moment_dim / std_dim (stats.cc).
#include <cstdint>
#include <vector>

#include "dynet_lite/core/op_kind.h"
#include "dynet_lite/tensor.h"

namespace dynet_lite {

/// The mask of `dims` for the expression `name`; a dim_error for a dimension
/// out of range or listed twice.
uint32_t reduced_dims_mask(const char* name, const std::vector<unsigned>& dims);

/// The shape `op` gives `x` when it reduces the dimensions in `mask` and, when
/// `batch`, the batch; a dim_error when nothing is reduced or a dimension is out
/// of range for x.
Dim reduced_dims_shape(OpKind op, const Dim& x, uint32_t mask, bool batch);

}  // namespace dynet_lite
