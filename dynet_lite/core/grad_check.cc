// Central-difference check of a model's gradients (DyNet's check_grad).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

#include "dynet_lite/dynet.h"
#include "dynet_lite/except.h"
#include "dynet_lite/grad-check.h"

namespace dynet_lite {

namespace {

// DyNet's step: large enough that float losses of a few hundred still resolve
// the difference (DyNet's own conv2d checks need it).
constexpr float kStep = 5e-3f;
constexpr double kTolerance = 1e-2;

struct Checker {
  ComputationGraph& cg;
  Expression& expr;
  int verbosity;
  std::ostream& out;
  bool all_ok = true;

  double loss() {
    cg.invalidate();
    return static_cast<double>(as_scalar(cg.forward(expr)));
  }

  // Checks `size` values at `values` against the analytic gradient `grads`
  // (host memory).  `name` labels the output.
  void check(const std::string& name, float* values, const float* grads, size_t size) {
    size_t bad = 0;
    double worst = 0.0;
    for (size_t i = 0; i < size; ++i) {
      float old = values[i];
      values[i] = old + kStep;
      double up = loss();
      values[i] = old - kStep;
      double down = loss();
      values[i] = old;
      double numeric = (up - down) / (2.0 * kStep);
      double analytic = grads[i];
      double err = std::fabs(analytic - numeric);
      double scale = std::max(1.0, std::max(std::fabs(analytic), std::fabs(numeric)));
      double rel = err / scale;
      bool ok = rel <= kTolerance;  // false for NaN as well
      if (!(rel <= worst)) worst = rel;
      if (!ok) ++bad;
      if (verbosity >= 2 || (verbosity >= 1 && !ok))
        out << (ok ? "    " : "*** ") << name << "[" << i << "]: analytic " << analytic << ", numeric " << numeric
            << "\n";
    }
    if (bad) all_ok = false;
    if (verbosity >= 1)
      out << name << ": " << size << " elements, " << (bad ? std::to_string(bad) + " disagree" : "all agree")
          << ", largest error " << worst << "\n";
  }
};

}  // namespace

bool check_grad(ParameterCollection& m, Expression& expr, int verbosity) {
  return check_grad(m, expr, verbosity, std::cerr);
}

bool check_grad(ParameterCollection& m, Expression& expr, int verbosity, std::ostream& out) {
  DYNET_LITE_ARG_CHECK(expr.pg != nullptr, "check_grad: empty expression (never assigned)");
  DYNET_LITE_ARG_CHECK(!expr.is_stale(), "check_grad: the expression is stale (its graph was cleared)");
  Dim d = expr.dim();
  DYNET_LITE_DIM_CHECK(d.size() == 1, "check_grad: the expression must be a scalar, got " << d);
  ComputationGraph& cg = *expr.pg;
  for (auto& p : m.parameters_list())
    DYNET_LITE_CHECK(p->values.device == nullptr || p->values.device->type == DeviceType::CPU, unsupported_error,
                     "check_grad: parameter " << p->name << " lives on " << p->values.device->name
                                              << "; only CPU parameters can be checked");
  for (auto& p : m.lookup_parameters_list())
    DYNET_LITE_CHECK(p->all_values.device == nullptr || p->all_values.device->type == DeviceType::CPU,
                     unsupported_error,
                     "check_grad: lookup parameter " << p->name << " lives on " << p->all_values.device->name
                                                     << "; only CPU parameters can be checked");
  m.reset_gradient();
  cg.forward(expr);
  cg.backward(expr);

  Checker c{cg, expr, verbosity, out};
  for (auto& p : m.parameters_list()) {
    if (!p->updated) {
      if (verbosity >= 1) out << p->name << ": frozen (set_updated(false)), skipped\n";
      continue;
    }
    c.check(p->name, p->values.v, p->g.v, p->size());
  }
  for (auto& p : m.lookup_parameters_list()) {
    if (!p->updated) {
      if (verbosity >= 1) out << p->name << ": frozen (set_updated(false)), skipped\n";
      continue;
    }
    c.check(p->name, p->all_values.v, p->dense_grads().v, p->size());
  }
  // Leave the graph holding the values of the unperturbed parameters.
  cg.forward(expr);
  if (verbosity >= 1) out << (c.all_ok ? "GRADIENT CHECK PASSED" : "*** GRADIENT CHECK FAILED") << "\n";
  return c.all_ok;
}

}  // namespace dynet_lite
