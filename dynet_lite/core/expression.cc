#include "dynet_lite/core/graph_registry.h"
#include "dynet_lite/core/op_info.h"
#include "dynet_lite/expr.h"

namespace dynet_lite {

bool Expression::graph_is_live() const { return pg != nullptr && dynet_lite::graph_is_live(graph_slot, graph_id); }

// The registry answers first, so that a destroyed graph is never read.
bool Expression::is_stale() const { return !graph_is_live() || !pg->is_live(i, graph_id, stamp); }

namespace {
// Throws unless e is usable: assigned, and its graph neither destroyed nor cleared.
void check_usable(const Expression& e, const char* what) {
  DYNET_LITE_ARG_CHECK(e.pg != nullptr, what << ": empty expression (never assigned)");
  // DyNet's type for a stale expression read (its own tests expect it).
  DYNET_LITE_CHECK(e.graph_is_live(), std::runtime_error,
                   what << ": stale expression: its graph was destroyed or cleared since it was made");
}
}  // namespace

const Tensor& Expression::value() const {
  check_usable(*this, "Expression::value");
  return pg->get_value(*this);
}
const Tensor& Expression::gradient() const {
  check_usable(*this, "Expression::gradient");
  return pg->get_gradient(*this);
}
Dim Expression::dim() const {
  check_usable(*this, "Expression::dim");
  DYNET_LITE_ARG_CHECK(!is_stale(), "Expression::dim: stale expression: its graph was reverted past it");
  return pg->get_dimension(i);
}

namespace detail {

ComputationGraph& live_graph(const Expression& x, const char* op) {
  DYNET_LITE_ARG_CHECK(x.pg != nullptr, op << ": argument 0 is an empty Expression (never assigned)");
  DYNET_LITE_ARG_CHECK(x.graph_is_live(),
                       op << ": argument 0 is stale: its graph was destroyed or cleared since it was made");
  return *x.pg;
}

Expression add(OpKind op, const Expression* args, unsigned num_args, const void* params, size_t params_size) {
  DYNET_LITE_ARG_CHECK(num_args > 0, op_name(op) << ": needs at least one argument, got an empty list");
  DYNET_LITE_ARG_CHECK(args[0].pg != nullptr, op_name(op) << ": argument 0 is an empty Expression (never assigned)");
  // add_node checks the other arguments against this graph (pointer and id), and
  // this one's node; here only that the graph is alive, before reading it.
  DYNET_LITE_ARG_CHECK(args[0].graph_is_live(),
                       op_name(op) << ": argument 0 is stale: its graph was destroyed or cleared since it was made");
  ComputationGraph* g = args[0].pg;
  return Expression::just_added(g, g->add_node(op, args, num_args, params, params_size));
}

}  // namespace detail
}  // namespace dynet_lite
