#pragma once
/// \file grad-check.h
/// Numerical check of the gradients a graph computes for a model's parameters.
#include <iosfwd>

#include "dynet_lite/expr.h"
#include "dynet_lite/model.h"

namespace dynet_lite {

/// Compares d expr / d theta from backward() with central differences
/// (E(theta + h) - E(theta - h)) / 2h, h = 5e-3 (DyNet's step), for every element of every
/// parameter and every lookup parameter of `m` (every row, used or not).  The
/// values are perturbed in place and the graph of `expr` recomputed with
/// expr.pg->forward(expr); each value is restored afterwards.  `expr` must have a
/// single element (a scalar loss).
///
/// Tolerance: an element agrees when |analytic - numeric| <= 0.01 * max(1,
/// |analytic|, |numeric|), i.e. within 1e-2 absolute for small gradients and 1%
/// relative for large ones (DyNet's rule).  Parameters frozen with
/// set_updated(false) receive no gradient and are skipped.
///
/// The model's gradients are reset first and hold the analytic gradient of `expr`
/// afterwards.  verbosity 0 prints nothing, 1 prints one line per parameter
/// (elements checked, largest error, pass or fail) and each disagreeing element,
/// 2 prints every element; the output goes to std::cerr.
/// Returns true when every element agrees.
bool check_grad(ParameterCollection& m, Expression& expr, int verbosity);
/// The same, printing to `out`.
bool check_grad(ParameterCollection& m, Expression& expr, int verbosity, std::ostream& out);

}  // namespace dynet_lite
