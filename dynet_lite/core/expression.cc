#include "dynet_lite/core/op_info.h"
#include "dynet_lite/expr.h"

namespace dynet_lite {

const Tensor& Expression::value() const {
  DYNET_LITE_ARG_CHECK(pg != nullptr, "Expression::value: empty expression (never assigned)");
  return pg->get_value(*this);
}
const Tensor& Expression::gradient() const {
  DYNET_LITE_ARG_CHECK(pg != nullptr, "Expression::gradient: empty expression (never assigned)");
  return pg->get_gradient(*this);
}
Dim Expression::dim() const {
  DYNET_LITE_ARG_CHECK(pg != nullptr, "Expression::dim: empty expression (never assigned)");
  DYNET_LITE_ARG_CHECK(!is_stale(), "Expression::dim: the expression is stale (its graph was cleared)");
  return pg->get_dimension(i);
}

namespace detail {

Expression add(OpKind op, const Expression* args, unsigned num_args, const void* params, size_t params_size) {
  DYNET_LITE_ARG_CHECK(num_args > 0, op_name(op) << ": needs at least one argument, got an empty list");
  ComputationGraph* g = args[0].pg;
  DYNET_LITE_ARG_CHECK(g != nullptr, op_name(op) << ": argument 0 is an empty Expression (never assigned)");
  return Expression::just_added(g, g->add_node(op, args, num_args, params, params_size));
}

}  // namespace detail
}  // namespace dynet_lite
