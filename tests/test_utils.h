#pragma once
// Shared helpers for the test suites: fixed-value parameters, and a
// central-difference gradient check over parameters and inputs.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynet_lite/core/random.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/dynet.h"
#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/model.h"
#include "dynet_lite/ops/op_table.h"

namespace dl = dynet_lite;

namespace test {

/// How many gradient checks and value comparisons this test binary ran; printed
/// at exit so that the suite's totals can be added up from ctest's output.
struct Counts {
  size_t gradient_checks = 0;
  size_t gradient_elements = 0;
  size_t value_checks = 0;
};
inline Counts& counts() {
  static Counts c;
  return c;
}
struct PrintCounts {
  ~PrintCounts() {
    const Counts& c = counts();
    if (c.gradient_checks || c.value_checks)
      std::printf("dynet_lite test counts: %zu gradient checks (%zu elements), %zu value checks\n", c.gradient_checks,
                  c.gradient_elements, c.value_checks);
  }
};
BOOST_TEST_GLOBAL_FIXTURE(PrintCounts);

/// Parameters are initialised from the global generator, which seeds itself
/// from the system unless told otherwise: a fixed seed makes every run of a
/// test binary draw the same values, so a gradient check that fails on some
/// draw fails every time, not once in a few hundred runs.
struct FixedSeed {
  FixedSeed() { dl::reseed_global_rng(20261127); }
};
BOOST_TEST_GLOBAL_FIXTURE(FixedSeed);

/// A count from the environment variable `name`, or `fallback` where it is
/// unset: for campaigns run by hand beyond the suite's own draws.  A value that
/// is not a whole number below 2^31 throws, naming the variable.
inline unsigned env_count(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  if (!v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || n < 0 || n >= (1L << 31))
    throw std::invalid_argument(std::string(name) + " must be a whole number below 2^31, not '" + v + "'");
  return static_cast<unsigned>(n);
}

/// Added to the seeds of the property-based tests' random graphs (test_autobatch,
/// test_fusion, test_compile): DYNET_LITE_TEST_SEED_OFFSET, 0 by default, draws
/// other graphs than the suite's.  A failure names the graph's seed, offset
/// included.
inline unsigned seed_offset() {
  static const unsigned offset = env_count("DYNET_LITE_TEST_SEED_OFFSET", 0);
  return offset;
}

/// The whole gradient of a lookup table (zero for rows without one), read
/// without making the table keep a whole one (LookupParameterStorage::dense_grads()).
inline std::vector<float> table_gradient(const dl::LookupParameterStorage& lp) {
  std::vector<float> g(lp.size());
  lp.copy_gradient_to_host(g.data());
  return g;
}

/// Row r of a lookup table's gradient, read as table_gradient() reads it.
inline std::vector<float> row_gradient(const dl::LookupParameterStorage& lp, unsigned r) {
  const std::vector<float> g = table_gradient(lp);
  const size_t row = lp.dim.size();
  return std::vector<float>(g.begin() + r * row, g.begin() + (r + 1) * row);
}

/// An input whose values the gradient check perturbs in place.
struct TestInput {
  dl::Dim dim;
  std::vector<float> values;
};

/// Builds the expression under test from the inputs (created by the checker as
/// pointer inputs in the same order).
using Builder = std::function<dl::Expression(dl::ComputationGraph&, const std::vector<dl::Expression>&)>;

/// Deterministic values in roughly [-1, 1] that avoid 0 and ties.
inline std::vector<float> test_values(size_t n, float offset = 0.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + 0.9f * std::sin(1.3f * static_cast<float>(i) + 0.7f) + 0.05f;
  return v;
}

/// Reduces any expression to a scalar with fixed, non-symmetric weights so that a
/// wrong gradient component cannot cancel out: sum_b sum_i w_i e_bi.
inline dl::Expression weighted_reduce(dl::ComputationGraph& cg, const dl::Expression& e) {
  dl::Dim d = e.dim();
  std::vector<float> w(d.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f + 0.37f * static_cast<float>((i * 7) % 11) / 11.f;
  dl::Expression we = dl::input(cg, d, w);
  return dl::sum_batches(dl::sum_elems(dl::cmult(e, we)));
}

inline double loss_value(dl::ParameterCollection&, std::vector<TestInput>& inputs, const Builder& build) {
  dl::ComputationGraph cg;
  std::vector<dl::Expression> xs;
  for (auto& in : inputs) xs.push_back(dl::input(cg, in.dim, &in.values));
  dl::Expression loss = weighted_reduce(cg, build(cg, xs));
  return dl::as_scalar(cg.forward(loss));
}

/// Checks d loss / d (every parameter element and every input element) against
/// central differences.  Returns the number of elements checked.
inline size_t check_gradients(dl::ParameterCollection& m, std::vector<TestInput> inputs, const Builder& build,
                              float eps = 1e-3f, double rtol = 2e-2, double atol = 2e-3) {
  m.reset_gradient();
  std::vector<std::vector<float>> input_grads;
  {
    dl::ComputationGraph cg;
    std::vector<dl::Expression> xs;
    for (auto& in : inputs) xs.push_back(dl::input(cg, in.dim, &in.values));
    dl::Expression loss = weighted_reduce(cg, build(cg, xs));
    cg.forward(loss);
    cg.backward(loss, true);
    for (auto& x : xs) input_grads.push_back(dl::as_vector(cg.get_gradient(x)));
  }
  size_t checked = 0;
  auto compare = [&](double analytic, double numeric, const std::string& what) {
    double err = std::fabs(analytic - numeric);
    double tol = atol + rtol * std::max(std::fabs(analytic), std::fabs(numeric));
    BOOST_CHECK_MESSAGE(err <= tol, what << ": analytic " << analytic << " vs numeric " << numeric);
    ++checked;
  };
  // Compares the analytic `grad` of element `x` with the central difference.
  auto check_element = [&](float& x, double grad, const std::string& what) {
    const float old = x;
    x = old + eps;
    double up = loss_value(m, inputs, build);
    x = old - eps;
    double down = loss_value(m, inputs, build);
    x = old;
    compare(grad, (up - down) / (2 * eps), what);
  };
  for (auto& p : m.parameters_list()) {
    std::vector<float> g = dl::as_vector(p->g);
    for (size_t i = 0; i < p->size(); ++i) check_element(p->values.v[i], g[i], p->name + "[" + std::to_string(i) + "]");
  }
  for (auto& lp : m.lookup_parameters_list()) {
    std::vector<float> g = table_gradient(*lp);
    for (size_t i = 0; i < lp->size(); ++i)
      check_element(lp->all_values.v[i], g[i], lp->name + "[" + std::to_string(i) + "]");
  }
  for (size_t k = 0; k < inputs.size(); ++k)
    for (size_t i = 0; i < inputs[k].values.size(); ++i)
      check_element(inputs[k].values[i], input_grads[k][i],
                    "input " + std::to_string(k) + "[" + std::to_string(i) + "]");
  m.reset_gradient();
  ++counts().gradient_checks;
  counts().gradient_elements += checked;
  return checked;
}

/// The value of a one-node function of the inputs and their gradients.
struct Grads {
  std::vector<float> value, dx, dy;
};
/// Value of e = f(ex, ey) over the inputs x and y (ey is ex when y is null) and
/// the input gradients of sum_batches(reduce(cg, e)).
template <class F, class Reduce>
Grads value_and_input_grads(const TestInput& x, const TestInput* y, F f, Reduce reduce) {
  dl::ComputationGraph cg;
  dl::Expression ex = dl::input(cg, x.dim, x.values);
  dl::Expression ey = y ? dl::input(cg, y->dim, y->values) : ex;
  dl::Expression e = f(ex, ey);
  dl::Expression loss = dl::sum_batches(reduce(cg, e));
  Grads g;
  g.value = dl::as_vector(cg.forward(e));
  cg.forward(loss);
  cg.backward(loss, true);
  g.dx = dl::as_vector(cg.get_gradient(ex));
  if (y) g.dy = dl::as_vector(cg.get_gradient(ey));
  return g;
}

/// Values of an expression built over fixed inputs.
inline std::vector<float> eval(const std::vector<TestInput>& inputs, const Builder& build) {
  dl::ComputationGraph cg;
  std::vector<dl::Expression> xs;
  for (auto& in : inputs) xs.push_back(dl::input(cg, in.dim, in.values));
  return dl::as_vector(cg.forward(build(cg, xs)));
}

/// A function of one expression, as the element-wise and reduction tests take it.
using UnaryFn = std::function<dl::Expression(const dl::Expression&)>;

/// Values of f(x) for an input x of dimension `d` holding `v`.
inline std::vector<float> values_of(const dl::Dim& d, const std::vector<float>& v, const UnaryFn& f) {
  return eval({{d, v}}, [&](dl::ComputationGraph&, const std::vector<dl::Expression>& xs) { return f(xs[0]); });
}

/// d/dx of sum_batches(sum_elems(f(x))) for an input x of dimension `d` holding `v`.
inline std::vector<float> grad_of(const dl::Dim& d, const std::vector<float>& v, const UnaryFn& f) {
  dl::ComputationGraph cg;
  dl::Expression x = dl::input(cg, d, v);
  dl::Expression loss = dl::sum_batches(dl::sum_elems(f(x)));
  cg.forward(loss);
  cg.backward(loss, true);
  return dl::as_vector(cg.get_gradient(x));
}

/// start, start + 1, ..., start + n - 1 (column-major: {2,3} is [[1,3,5],[2,4,6]]).
inline std::vector<float> iota(size_t n, float start = 1.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

inline void check_close(const std::vector<float>& got, const std::vector<float>& want, double tol = 1e-5) {
  ++counts().value_checks;
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    BOOST_CHECK_MESSAGE(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])),
                        "element " << i << ": got " << got[i] << ", want " << want[i]);
}

/// Checks that a loss and its gradients agree without and with automatic
/// batching: `run(strategy, &grads)` builds and runs a graph with that autobatch
/// strategy (0: off, 1: on), stores the gradients and returns the loss.
inline void check_autobatch_agrees(const std::function<float(int, std::vector<float>*)>& run) {
  std::vector<float> g0, g1;
  float v0 = run(0, &g0), v1 = run(1, &g1);
  BOOST_CHECK_CLOSE(v0, v1, 1e-3);
  check_close(g1, g0, 1e-4);
}

/// What a graph gives for comparing batching strategies: the values of its
/// outputs, the gradients of its inputs and of each parameter (after backward from
/// the sum of the outputs), and the kernel calls that ran more than one node.
struct StrategyResult {
  std::vector<float> values, grads;
  std::vector<std::vector<float>> param_grads;
  uint64_t batched_groups = 0;
};

/// Adds the sum of `outs` to `cg`, runs forward to each output and to the sum,
/// backward from the sum, and collects the result for the inputs `xs` and the
/// parameters `params`.
inline StrategyResult run_outputs(dl::ComputationGraph& cg, const std::vector<dl::Expression>& outs,
                                  const std::vector<dl::Expression>& xs, const std::vector<dl::Parameter>& params) {
  dl::Expression total = dl::sum(outs);
  StrategyResult r;
  for (auto& o : outs) r.values.push_back(dl::as_scalar(cg.forward(o)));
  cg.forward(total);
  cg.backward(total, true);
  for (auto& x : xs)
    for (float g : dl::as_vector(cg.get_gradient(x))) r.grads.push_back(g);
  for (auto p : params) r.param_grads.push_back(dl::as_vector(p.get_storage().g));
  r.batched_groups = cg.autobatch_stats().batched_groups;
  return r;
}

/// Checks that `run(strategy)` gives the same values and gradients with the
/// batching strategies 1 and 2 as with none (0), and that both batch some groups;
/// returns the result without batching.
inline StrategyResult check_strategies_agree(const std::function<StrategyResult(int)>& run) {
  StrategyResult plain = run(0);
  for (int strategy : {1, 2}) {
    StrategyResult b = run(strategy);
    check_close(b.values, plain.values, 1e-5);
    check_close(b.grads, plain.grads, 1e-5);
    BOOST_REQUIRE_EQUAL(b.param_grads.size(), plain.param_grads.size());
    for (size_t k = 0; k < plain.param_grads.size(); ++k) check_close(b.param_grads[k], plain.param_grads[k], 1e-5);
    BOOST_CHECK_GT(b.batched_groups, 0u);
  }
  return plain;
}

/// Adds the sum of `losses` to `cg`, runs forward to it, reads its value and then
/// the values of `outs` (appended in order), and runs backward from it.
inline std::vector<float> loss_and_values(dl::ComputationGraph& cg, const std::vector<dl::Expression>& losses,
                                          const std::vector<dl::Expression>& outs) {
  dl::Expression loss = dl::sum(losses);
  std::vector<float> r{dl::as_scalar(cg.forward(loss))};
  for (const dl::Expression& e : outs) {
    std::vector<float> v = dl::as_vector(e.value());
    r.insert(r.end(), v.begin(), v.end());
  }
  cg.backward(loss, true);
  return r;
}

/// Checks the op table rows of element-wise batching ops: each kind batches
/// element-wise, has a shape function and CPU kernels, and has its name.
inline void check_elementwise_rows(std::initializer_list<std::pair<dl::OpKind, const char*>> rows) {
  for (const auto& [kind, name] : rows) {
    const dl::OpInfo& info = dl::op_info(kind);
    BOOST_CHECK(info.batch == dl::BatchKind::Elementwise);
    BOOST_CHECK(info.shape && info.forward[0] && info.backward[0]);
    BOOST_CHECK_EQUAL(std::string(dl::op_name(kind)), name);
  }
}

/// Checks that `f` throws E and that the message contains every `parts` string.
template <class E, class F>
void check_throws_with(F f, std::initializer_list<const char*> parts) {
  try {
    f();
    BOOST_ERROR("no exception thrown");
  } catch (const E& e) {
    std::string msg = e.what();
    for (const char* p : parts) BOOST_CHECK_MESSAGE(msg.find(p) != std::string::npos, "message '" << msg << "' lacks '" << p << "'");
  }
}

/// A device backed by host memory that reports the type, id and name it is given:
/// a second "CPU" whose values must really be copied, or a "GPU" on which graphs
/// can be built (no kernel runs) to see which path a builder takes there.
/// Allocations are counted.  Create it with new and never destroy it: the
/// per-thread pool of graph memory may keep arenas of it until the process ends.
class HostMemoryDevice final : public dl::Device {
 public:
  HostMemoryDevice(dl::DeviceType type, int id, const char* name) : dl::Device(type, id, name) {}
  void* allocate(size_t bytes) override {
    ++allocations;
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void release(void* p) override { std::free(p); }
  void copy_to_host(float* host, const float* dev, size_t n) const override {
    std::memcpy(host, dev, n * sizeof(float));
  }
  void copy_from_host(float* dev, const float* host, size_t n) const override {
    std::memcpy(dev, host, n * sizeof(float));
  }
  void copy(float* dst, const float* src, size_t n) const override { std::memmove(dst, src, n * sizeof(float)); }
  void fill(float* dst, float value, size_t n) const override { std::fill(dst, dst + n, value); }
  int allocations = 0;
};

}  // namespace test
