#define BOOST_TEST_MODULE ops_trig
#include <limits>

#include "dynet_lite/ops/op_table.h"
#include "test_utils.h"

using namespace dynet_lite;
using test::grad_of;
using test::UnaryFn;
using test::values_of;

namespace {

struct Case {
  const char* name;
  UnaryFn f;
  float offset;  // shifts test_values (roughly [-0.85, 0.95]) into the domain
};

// Every function with a domain that holds offset + test_values.
std::vector<Case> smooth_cases() {
  return {
      {"sin", [](const Expression& x) { return sin(x); }, 0.f},
      {"cos", [](const Expression& x) { return cos(x); }, 0.f},
      {"tan", [](const Expression& x) { return tan(x); }, 0.f},
      {"asin", [](const Expression& x) { return asin(x * 0.9f); }, 0.f},
      {"acos", [](const Expression& x) { return acos(x * 0.9f); }, 0.f},
      {"atan", [](const Expression& x) { return atan(x * 3.f); }, 0.f},
      {"sinh", [](const Expression& x) { return sinh(x * 2.f); }, 0.f},
      {"cosh", [](const Expression& x) { return cosh(x * 2.f); }, 0.f},
      {"asinh", [](const Expression& x) { return asinh(x * 3.f); }, 0.f},
      {"acosh", [](const Expression& x) { return acosh(x + 1.f); }, 1.2f},
      {"atanh", [](const Expression& x) { return atanh(x * 0.9f); }, 0.f},
      {"lgamma", [](const Expression& x) { return lgamma(x); }, 2.f},
      {"lgamma (0, 1)", [](const Expression& x) { return lgamma(x * 0.4f + 0.5f); }, 0.f},
      {"lgamma (-1, 0)", [](const Expression& x) { return lgamma(x * 0.4f - 0.5f); }, 0.f},
  };
}

}  // namespace

// ---------------------------------------------------------------- values

BOOST_AUTO_TEST_CASE(trig_values) {
  Dim d({3});
  // sin, cos, tan at 0, 0.5, -1
  test::check_close(values_of(d, {0.f, 0.5f, -1.f}, [](const Expression& x) { return sin(x); }),
                    {0.f, 0.47942554f, -0.84147098f});
  test::check_close(values_of(d, {0.f, 0.5f, -1.f}, [](const Expression& x) { return cos(x); }),
                    {1.f, 0.87758256f, 0.54030231f});
  test::check_close(values_of(d, {0.f, 0.5f, -1.f}, [](const Expression& x) { return tan(x); }),
                    {0.f, 0.54630249f, -1.55740772f});
  // inverses: asin(0.5) = pi/6, acos(0.5) = pi/3, atan(1) = pi/4, and the end points
  test::check_close(values_of(d, {0.5f, -1.f, 1.f}, [](const Expression& x) { return asin(x); }),
                    {0.52359878f, -1.57079633f, 1.57079633f});
  test::check_close(values_of(d, {0.5f, -1.f, 1.f}, [](const Expression& x) { return acos(x); }),
                    {1.04719755f, 3.14159265f, 0.f});
  test::check_close(values_of(d, {1.f, -1.f, 0.f}, [](const Expression& x) { return atan(x); }),
                    {0.78539816f, -0.78539816f, 0.f});
}

BOOST_AUTO_TEST_CASE(hyperbolic_values) {
  Dim d({3});
  // sinh(1) = (e - 1/e) / 2, cosh(1) = (e + 1/e) / 2
  test::check_close(values_of(d, {1.f, 0.f, -2.f}, [](const Expression& x) { return sinh(x); }),
                    {1.17520119f, 0.f, -3.62686041f});
  test::check_close(values_of(d, {1.f, 0.f, -2.f}, [](const Expression& x) { return cosh(x); }),
                    {1.54308063f, 1.f, 3.76219569f});
  // asinh(1) = ln(1 + sqrt 2), acosh(2) = ln(2 + sqrt 3), atanh(0.5) = ln(3) / 2
  test::check_close(values_of(d, {1.f, 0.f, -1.f}, [](const Expression& x) { return asinh(x); }),
                    {0.88137359f, 0.f, -0.88137359f});
  test::check_close(values_of(d, {2.f, 1.f, 10.f}, [](const Expression& x) { return acosh(x); }),
                    {1.31695790f, 0.f, 2.99322285f});
  test::check_close(values_of(d, {0.5f, 0.f, -0.5f}, [](const Expression& x) { return atanh(x); }),
                    {0.54930614f, 0.f, -0.54930614f});
}

BOOST_AUTO_TEST_CASE(lgamma_values_and_digamma_gradient) {
  Dim d({5});
  // ln Gamma: Gamma(1) = Gamma(2) = 1, Gamma(5) = 24, Gamma(1/2) = sqrt(pi),
  // Gamma(-1/2) = -2 sqrt(pi) (the log of its absolute value)
  std::vector<float> x = {1.f, 2.f, 5.f, 0.5f, -0.5f};
  test::check_close(values_of(d, x, [](const Expression& e) { return lgamma(e); }),
                    {0.f, 0.f, 3.17805383f, 0.57236494f, 1.26551212f});
  // the gradient is digamma: psi(1) = -gamma, psi(2) = 1 - gamma, psi(5) = 25/12 - gamma,
  // psi(1/2) = -gamma - 2 ln 2, psi(-1/2) = psi(1/2) + 2
  test::check_close(grad_of(d, x, [](const Expression& e) { return lgamma(e); }),
                    {-0.57721566f, 0.42278434f, 1.50611767f, -1.96351003f, 0.03648997f}, 1e-5);
  // large arguments: psi(100) = 4.60016185
  test::check_close(grad_of(Dim({1}), {100.f}, [](const Expression& e) { return lgamma(e); }), {4.60016185f}, 1e-5);
}

// ---------------------------------------------------------------- derivatives at known points

BOOST_AUTO_TEST_CASE(known_derivatives) {
  Dim d({2});
  // sin' = cos, cos' = -sin at 0 and pi/2
  test::check_close(grad_of(d, {0.f, 1.5707963f}, [](const Expression& x) { return sin(x); }), {1.f, 0.f}, 1e-6);
  test::check_close(grad_of(d, {0.f, 1.5707963f}, [](const Expression& x) { return cos(x); }), {0.f, -1.f}, 1e-6);
  // tan' = 1 + tan^2: 1 at 0, 2 at pi/4
  test::check_close(grad_of(d, {0.f, 0.78539816f}, [](const Expression& x) { return tan(x); }), {1.f, 2.f}, 1e-5);
  // asin' = 1/sqrt(1 - x^2): 1 at 0, 2/sqrt(3) at 1/2; acos' is its negative
  test::check_close(grad_of(d, {0.f, 0.5f}, [](const Expression& x) { return asin(x); }), {1.f, 1.15470054f});
  test::check_close(grad_of(d, {0.f, 0.5f}, [](const Expression& x) { return acos(x); }), {-1.f, -1.15470054f});
  // atan' = 1/(1 + x^2)
  test::check_close(grad_of(d, {0.f, 2.f}, [](const Expression& x) { return atan(x); }), {1.f, 0.2f});
  // sinh' = cosh, cosh' = sinh
  test::check_close(grad_of(d, {0.f, 1.f}, [](const Expression& x) { return sinh(x); }), {1.f, 1.54308063f});
  test::check_close(grad_of(d, {0.f, 1.f}, [](const Expression& x) { return cosh(x); }), {0.f, 1.17520119f});
  // asinh' = 1/sqrt(x^2 + 1), acosh' = 1/sqrt(x^2 - 1), atanh' = 1/(1 - x^2)
  test::check_close(grad_of(d, {0.f, 1.f}, [](const Expression& x) { return asinh(x); }), {1.f, 0.70710678f});
  test::check_close(grad_of(d, {2.f, 3.f}, [](const Expression& x) { return acosh(x); }), {0.57735027f, 0.35355339f});
  test::check_close(grad_of(d, {0.f, 0.5f}, [](const Expression& x) { return atanh(x); }), {1.f, 1.33333333f});
}

BOOST_AUTO_TEST_CASE(domain_edges) {
  // At the edges of their domains the inverse functions have infinite slope and
  // outside them NaN values, as the C library functions.
  std::vector<float> g = grad_of(Dim({2}), {1.f, -1.f}, [](const Expression& x) { return asin(x); });
  BOOST_CHECK(std::isinf(g[0]) && g[0] > 0);
  BOOST_CHECK(std::isinf(g[1]) && g[1] > 0);
  g = grad_of(Dim({1}), {1.f}, [](const Expression& x) { return acosh(x); });
  BOOST_CHECK(std::isinf(g[0]));
  std::vector<float> v = values_of(Dim({3}), {2.f, 0.5f, 1.f}, [](const Expression& x) { return asin(x); });
  BOOST_CHECK(std::isnan(v[0]));
  v = values_of(Dim({1}), {0.5f}, [](const Expression& x) { return acosh(x); });
  BOOST_CHECK(std::isnan(v[0]));
  v = values_of(Dim({2}), {1.f, -1.f}, [](const Expression& x) { return atanh(x); });
  BOOST_CHECK(std::isinf(v[0]) && v[0] > 0);
  BOOST_CHECK(std::isinf(v[1]) && v[1] < 0);
  // lgamma has poles at 0 and the negative integers
  v = values_of(Dim({2}), {0.f, -2.f}, [](const Expression& x) { return lgamma(x); });
  BOOST_CHECK(std::isinf(v[0]) && std::isinf(v[1]));
}

// ---------------------------------------------------------------- gradient checks

BOOST_AUTO_TEST_CASE(gradients_inputs_and_parameters) {
  ParameterCollection m;
  Parameter w = m.add_parameters({2, 3});
  w.set_value({0.9f, 1.f, 0.8f, 0.95f, 0.85f, 1.f});
  for (const Case& c : smooth_cases()) {
    BOOST_TEST_CONTEXT(c.name) {
      // input only, a single element and a matrix
      auto plain = [&](ComputationGraph&, const std::vector<Expression>& xs) { return c.f(xs[0]); };
      BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({1}), test::test_values(1, c.offset)}}, plain), 6u + 1u);
      BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({2, 3}), test::test_values(6, c.offset)}}, plain), 6u + 6u);
      // through a parameter, batched input (batch 3) times an unbatched parameter
      auto scaled = [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
        return c.f(cmult(xs[0], parameter(cg, w)));
      };
      BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({2, 3}, 3), test::test_values(18, c.offset)}}, scaled),
                        6u + 18u);
      // a batch of 1 against a batch of 2 (the op sees batch 2)
      auto bcast = [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
        return c.f(cmult(cmult(xs[0], parameter(cg, w)), xs[1]));
      };
      BOOST_CHECK_EQUAL(
          test::check_gradients(
              m, {{Dim({2, 3}), test::test_values(6, c.offset)}, {Dim({2, 3}, 2), std::vector<float>(12, 1.f)}}, bcast,
              1e-3f, 3e-2, 3e-3),
          6u + 6u + 12u);
    }
  }
}

// ---------------------------------------------------------------- rounding

BOOST_AUTO_TEST_CASE(rounding_values) {
  std::vector<float> x = {2.5f, -2.5f, 1.4f, -1.6f, 0.f, -0.5f, 3.f, 0.5f};
  Dim d({4, 2});
  // round: halfway away from zero
  test::check_close(values_of(d, x, [](const Expression& e) { return round(e); }),
                    {3.f, -3.f, 1.f, -2.f, 0.f, -1.f, 3.f, 1.f}, 0);
  test::check_close(values_of(d, x, [](const Expression& e) { return ceil(e); }),
                    {3.f, -2.f, 2.f, -1.f, 0.f, 0.f, 3.f, 1.f}, 0);
  test::check_close(values_of(d, x, [](const Expression& e) { return floor(e); }),
                    {2.f, -3.f, 1.f, -2.f, 0.f, -1.f, 3.f, 0.f}, 0);
  // batched input, DyNet's own example: {3}X2 of 1.1 2.6 3.3 4.0 5.1 6.6
  test::check_close(values_of(Dim({3}, 2), {1.1f, 2.6f, 3.3f, 4.f, 5.1f, 6.6f},
                              [](const Expression& e) { return round(e, zero_gradient); }),
                    {1.f, 3.f, 3.f, 4.f, 5.f, 7.f}, 0);
}

// GradientMode has a fixed underlying type, so any int converts to it; one that
// is not a mode is an error naming it.
BOOST_AUTO_TEST_CASE(rounding_refuses_unknown_gradient_modes) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}), {0.5f, 1.5f});
  test::check_throws_with<std::invalid_argument>([&] { round(x, static_cast<GradientMode>(7)); },
                                                 {"round", "gradient mode 7", "{2}"});
  test::check_throws_with<std::invalid_argument>([&] { floor(x, static_cast<GradientMode>(-1)); },
                                                 {"floor", "gradient mode -1"});
}

BOOST_AUTO_TEST_CASE(rounding_gradients) {
  std::vector<float> x = {2.5f, -2.5f, 1.4f, -1.6f, 0.f, 3.f};
  Dim d({3}, 2);
  std::vector<UnaryFn> zero = {[](const Expression& e) { return round(e); },
                               [](const Expression& e) { return ceil(e); },
                               [](const Expression& e) { return floor(e, zero_gradient); }};
  for (const auto& f : zero) {
    // exactly zero, also with a non-trivial upstream gradient
    std::vector<float> g = grad_of(d, x, [&](const Expression& e) { return f(e * 3.f) * 2.f; });
    for (float v : g) BOOST_CHECK_EQUAL(v, 0.f);
  }
  std::vector<UnaryFn> straight = {[](const Expression& e) { return round(e, straight_through_gradient); },
                                   [](const Expression& e) { return ceil(e, straight_through_gradient); },
                                   [](const Expression& e) { return floor(e, straight_through_gradient); }};
  for (const auto& f : straight) {
    // straight through: dx = dy = 2 * 3
    std::vector<float> g = grad_of(d, x, [&](const Expression& e) { return f(e * 3.f) * 2.f; });
    for (float v : g) BOOST_CHECK_EQUAL(v, 6.f);
  }
  // zero-gradient rounding through a parameter: the parameter's gradient is exactly 0
  ParameterCollection m;
  Parameter w = m.add_parameters({3});
  w.set_value({0.3f, 1.7f, -2.2f});
  ComputationGraph cg;
  Expression loss = sum_elems(round(parameter(cg, w)) + floor(parameter(cg, w)) + ceil(parameter(cg, w)));
  test::check_close(as_vector(cg.forward(loss)), {0.f + 0.f + 1.f + 2.f + 1.f + 2.f - 2.f - 3.f - 2.f}, 0);
  cg.backward(loss);
  for (float v : as_vector(w.get_storage().g)) BOOST_CHECK_EQUAL(v, 0.f);
}

// ---------------------------------------------------------------- errors

BOOST_AUTO_TEST_CASE(errors_name_the_op) {
  Expression empty;
  test::check_throws_with<std::invalid_argument>([&] { sin(empty); }, {"sin", "empty"});
  test::check_throws_with<std::invalid_argument>([&] { lgamma(empty); }, {"lgamma", "empty"});
  test::check_throws_with<std::invalid_argument>([&] { round(empty); }, {"round", "empty"});
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}), {0.1f, 0.2f});
  cg.clear();
  test::check_throws_with<std::invalid_argument>([&] { atanh(x); }, {"atanh"});
  test::check_throws_with<std::invalid_argument>([&] { floor(x, straight_through_gradient); }, {"floor"});
  // an argument from another graph
  ComputationGraph other;
  Expression y = input(other, Dim({2}), {0.1f, 0.2f});
  Expression z = input(cg, Dim({2}), {0.1f, 0.2f});
  test::check_throws_with<std::invalid_argument>([&] { cosh(y) + z; }, {"argument 1"});
}

BOOST_AUTO_TEST_CASE(table_rows_complete) {
  // every op of the family is named in the table with its DyNet name
  const char* names[] = {"sin",   "cos",   "tan",   "asin",   "acos",  "atan", "sinh", "cosh",
                         "asinh", "acosh", "atanh", "lgamma", "round", "ceil", "floor"};
  OpKind ops[] = {OpKind::Sin,   OpKind::Cos,    OpKind::Tan,   OpKind::Asin,  OpKind::Acos,
                  OpKind::Atan,  OpKind::Sinh,   OpKind::Cosh,  OpKind::Asinh, OpKind::Acosh,
                  OpKind::Atanh, OpKind::Lgamma, OpKind::Round, OpKind::Ceil,  OpKind::Floor};
  for (unsigned i = 0; i < 15; ++i) {
    BOOST_CHECK_EQUAL(std::string(op_name(ops[i])), names[i]);
    BOOST_CHECK(op_info(ops[i]).batch == BatchKind::Elementwise);
  }
}
