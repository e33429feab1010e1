#define BOOST_TEST_MODULE ops_structured
#include <cmath>
#include <functional>
#include <string>
#include <utility>

#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/ops/op_table.h"
#include "test_utils.h"

using namespace dynet_lite;
using test::check_close;
using test::check_gradients;
using test::check_throws_with;
using test::eval;
using test::TestInput;

namespace {

using Xs = std::vector<Expression>;

const float kLn2 = 0.69314718f, kLn3 = 1.09861229f, kLn4 = 1.38629436f;

using test::Grads;
// Value of f(x[, y]) and the input gradients of sum(w .* f) (w: one weight per
// element, batch included; empty = all ones).
template <class F>
Grads run(const TestInput& x, const TestInput* y, F f, std::vector<float> w = {}) {
  return test::value_and_input_grads(x, y, f, [&](ComputationGraph& cg, const Expression& e) {
    if (w.empty()) w.assign(e.dim().size(), 1.f);
    return sum_elems(cmult(e, input(cg, e.dim(), w)));
  });
}

Parameter fixed_parameter(ParameterCollection& m, const Dim& d, float offset) {
  Parameter p = m.add_parameters(d);
  p.set_value(test::test_values(d.size(), offset));
  return p;
}

}  // namespace

// ================================================================ sparsemax
BOOST_AUTO_TEST_SUITE(sparsemax_op)

BOOST_AUTO_TEST_CASE(values) {
  // x = (0.5, 0.2, -1): sorted, k = 2 (1 + 2*0.2 = 1.4 > 0.7; 1 - 3 = -2 <= -0.3),
  // tau = (0.7 - 1) / 2 = -0.15 -> (0.65, 0.35, 0)
  check_close(eval({{Dim({3}), {0.5f, 0.2f, -1.f}}}, [](ComputationGraph&, const Xs& x) { return sparsemax(x[0]); }),
              {0.65f, 0.35f, 0.f});
  // x = (3, 1, 0): k = 1 (1 + 2 = 3 <= 4), tau = 2 -> (1, 0, 0)
  check_close(eval({{Dim({3}), {3.f, 1.f, 0.f}}}, [](ComputationGraph&, const Xs& x) { return sparsemax(x[0]); }),
              {1.f, 0.f, 0.f});
  // order does not matter: (-1, 0.5, 0.2) -> (0, 0.65, 0.35)
  check_close(eval({{Dim({3}), {-1.f, 0.5f, 0.2f}}}, [](ComputationGraph&, const Xs& x) { return sparsemax(x[0]); }),
              {0.f, 0.65f, 0.35f});
}

BOOST_AUTO_TEST_CASE(ties_length_one_and_batch) {
  // ties: (1, 1, 1) -> tau = 2/3, 1/3 each
  check_close(eval({{Dim({3}), {1.f, 1.f, 1.f}}}, [](ComputationGraph&, const Xs& x) { return sparsemax(x[0]); }),
              {1.f / 3, 1.f / 3, 1.f / 3});
  // length one: always 1
  check_close(eval({{Dim({1}), {-7.f}}}, [](ComputationGraph&, const Xs& x) { return sparsemax(x[0]); }), {1.f});
  // a batch: each element separately
  check_close(eval({{Dim({3}, 2), {0.5f, 0.2f, -1.f, 3.f, 1.f, 0.f}}},
                   [](ComputationGraph&, const Xs& x) { return sparsemax(x[0]); }),
              {0.65f, 0.35f, 0.f, 1.f, 0.f, 0.f});
  // {3,1} is a column vector too
  check_close(eval({{Dim({3, 1}), {0.5f, 0.2f, -1.f}}}, [](ComputationGraph&, const Xs& x) { return sparsemax(x[0]); }),
              {0.65f, 0.35f, 0.f});
}

BOOST_AUTO_TEST_CASE(gradient_by_hand_and_kink) {
  // x = (0.5, 0.2, -1), loss = y_0 = x_0 - (x_0 + x_1 - 1)/2: dx = (1/2, -1/2, 0)
  Grads g = run({Dim({3}), {0.5f, 0.2f, -1.f}}, nullptr, [](Expression a, Expression) { return sparsemax(a); },
                {1.f, 0.f, 0.f});
  check_close(g.dx, {0.5f, -0.5f, 0.f});
  // weights w: dx_i = w_i - mean_S(w) on the support S = {0, 1}, 0 elsewhere
  g = run({Dim({3}), {0.5f, 0.2f, -1.f}}, nullptr, [](Expression a, Expression) { return sparsemax(a); },
          {2.f, -1.f, 5.f});
  check_close(g.dx, {1.5f, -1.5f, 0.f});
  // kink: x = (1, 0), tau = 0, x_1 sits exactly at tau: support {0} alone, dx = 0
  g = run({Dim({2}), {1.f, 0.f}}, nullptr, [](Expression a, Expression) { return sparsemax(a); }, {1.f, 3.f});
  check_close(g.value, {1.f, 0.f});
  check_close(g.dx, {0.f, 0.f});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = fixed_parameter(m, Dim({5}), 0.1f);
  check_gradients(m, {{Dim({5}), test::test_values(5)}},
                  [](ComputationGraph&, const Xs& x) { return sparsemax(x[0]); });
  check_gradients(m, {{Dim({5}), test::test_values(5, 0.2f)}},
                  [&](ComputationGraph& cg, const Xs& x) { return sparsemax(x[0] + parameter(cg, p)); });
  // a batch of 3, and the parameter (batch of 1) added to each element
  check_gradients(m, {{Dim({5}, 3), test::test_values(15, -0.1f)}},
                  [&](ComputationGraph& cg, const Xs& x) { return sparsemax(x[0] + parameter(cg, p)); });
}

BOOST_AUTO_TEST_CASE(nan_propagates) {
  // a NaN makes its column NaN (and leaves the other batch element alone)
  auto v = eval({{Dim({3}, 2), {0.5f, std::nanf(""), -1.f, 3.f, 1.f, 0.f}}},
                [](ComputationGraph&, const Xs& x) { return sparsemax(x[0]); });
  for (int i = 0; i < 3; ++i) BOOST_CHECK(std::isnan(v[i]));
  check_close({v[3], v[4], v[5]}, {1.f, 0.f, 0.f});
}

BOOST_AUTO_TEST_CASE(dim_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 2}), test::test_values(6));
  check_throws_with<dim_error>([&] { sparsemax(x); }, {"sparsemax", "column vector", "{3,2}"});
  BOOST_CHECK_EQUAL(cg.size(), 1u);
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ sparsemax_loss
BOOST_AUTO_TEST_SUITE(sparsemax_loss_op)

BOOST_AUTO_TEST_CASE(values_and_gradients_by_hand) {
  // x = (0.5, 0.2, -1): tau = -0.15, support {0, 1}, sparsemax = (0.65, 0.35, 0)
  // 1/2 sum_S (x^2 - tau^2) = 1/2 (0.2275 + 0.0175) = 0.1225
  TestInput x{Dim({3}), {0.5f, 0.2f, -1.f}};
  // target {0}: 0.1225 - 0.5 + 1/2 = 0.1225;  dx = sparsemax - q = (-0.35, 0.35, 0)
  Grads g = run(x, nullptr, [](Expression a, Expression) { return sparsemax_loss(a, std::vector<unsigned>{0}); });
  check_close(g.value, {0.1225f});
  check_close(g.dx, {-0.35f, 0.35f, 0.f});
  // target {0, 1}: q = (1/2, 1/2, 0): 0.1225 - 0.35 + 1/4 = 0.0225;  dx = (0.15, -0.15, 0)
  g = run(x, nullptr, [](Expression a, Expression) { return sparsemax_loss(a, std::vector<unsigned>{1, 0}); });
  check_close(g.value, {0.0225f});
  check_close(g.dx, {0.15f, -0.15f, 0.f});
  // target {2}: 0.1225 + 1 + 1/2 = 1.6225;  dx = (0.65, 0.35, -1)
  g = run(x, nullptr, [](Expression a, Expression) { return sparsemax_loss(a, std::vector<unsigned>{2}); });
  check_close(g.value, {1.6225f});
  check_close(g.dx, {0.65f, 0.35f, -1.f});
  // a confident correct answer costs nothing: x = (3, 1, 0), target {0}: 1/2 (9 - 4) - 3 + 1/2 = 0
  g = run({Dim({3}), {3.f, 1.f, 0.f}}, nullptr,
          [](Expression a, Expression) { return sparsemax_loss(a, std::vector<unsigned>{0}); });
  check_close(g.value, {0.f});
  check_close(g.dx, {0.f, 0.f, 0.f});
}

BOOST_AUTO_TEST_CASE(batch_length_one_and_pointer) {
  // the same support {0} for both batch elements
  check_close(eval({{Dim({3}, 2), {0.5f, 0.2f, -1.f, 3.f, 1.f, 0.f}}},
                   [](ComputationGraph&, const Xs& x) { return sparsemax_loss(x[0], std::vector<unsigned>{0}); }),
              {0.1225f, 0.f});
  // length one: tau = x - 1, loss 1/2 (x^2 - (x-1)^2) - x + 1/2 = 0
  check_close(eval({{Dim({1}), {4.f}}},
                   [](ComputationGraph&, const Xs& x) { return sparsemax_loss(x[0], std::vector<unsigned>{0}); }),
              {0.f});
  // the pointer variant reads the support at forward time
  ComputationGraph cg;
  Expression e = input(cg, Dim({3}), {0.5f, 0.2f, -1.f});
  std::vector<unsigned> support{0};
  Expression l = sparsemax_loss(e, &support);
  check_close(as_vector(cg.forward(l)), {0.1225f});
  support = {2};
  check_close(as_vector(cg.forward(l)), {1.6225f});
  support = {0, 1};
  check_close(as_vector(cg.forward(l)), {0.0225f});
  // a bad support behind the pointer is reported at forward time
  support = {3};
  check_throws_with<index_error>([&] { cg.forward(l); }, {"sparsemax_loss", "index 3", "{3}"});
  support = {1, 1};
  check_throws_with<std::invalid_argument>([&] { cg.forward(l); }, {"sparsemax_loss", "index 1", "twice"});
  support.clear();
  check_throws_with<std::invalid_argument>([&] { cg.forward(l); }, {"sparsemax_loss", "empty", "{3}"});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = fixed_parameter(m, Dim({5}), 0.1f);
  check_gradients(m, {{Dim({5}), test::test_values(5)}}, [](ComputationGraph&, const Xs& x) {
    return sparsemax_loss(x[0], std::vector<unsigned>{1, 3});
  });
  check_gradients(m, {{Dim({5}, 3), test::test_values(15, -0.1f)}}, [&](ComputationGraph& cg, const Xs& x) {
    return sparsemax_loss(x[0] + parameter(cg, p), std::vector<unsigned>{4});
  });
  std::vector<unsigned> support{0, 2};
  check_gradients(m, {{Dim({5}), test::test_values(5, 0.3f)}}, [&](ComputationGraph& cg, const Xs& x) {
    return sparsemax_loss(cmult(x[0], parameter(cg, p)), &support);
  });
}

BOOST_AUTO_TEST_CASE(errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {0.5f, 0.2f, -1.f});
  check_throws_with<index_error>(
      [&] {
        sparsemax_loss(x, std::vector<unsigned>{0, 3});
      },
      {"sparsemax_loss", "index 3", "{3}", "3 rows"});
  check_throws_with<std::invalid_argument>(
      [&] {
        sparsemax_loss(x, std::vector<unsigned>{2, 0, 2});
      },
      {"sparsemax_loss", "index 2", "twice", "{3}"});
  check_throws_with<std::invalid_argument>([&] { sparsemax_loss(x, std::vector<unsigned>{}); },
                                           {"sparsemax_loss", "empty", "{3}"});
  check_throws_with<std::invalid_argument>(
      [&] { sparsemax_loss(x, static_cast<const std::vector<unsigned>*>(nullptr)); }, {"sparsemax_loss", "null"});
  // a long support is checked for repeats when the graph is computed
  ComputationGraph cg2;
  Expression big = input(cg2, Dim({100}), test::test_values(100));
  std::vector<unsigned> many;
  for (unsigned i = 0; i < 70; ++i) many.push_back(i);
  many.push_back(42);
  Expression l = sparsemax_loss(big, many);
  check_throws_with<std::invalid_argument>([&] { cg2.forward(l); }, {"sparsemax_loss", "index 42", "twice", "{100}"});
  many.pop_back();  // (a new graph: forward on cg2 would compute l again)
  ComputationGraph cg3;
  Expression big3 = input(cg3, Dim({100}), test::test_values(100));
  const float by_value = as_scalar(cg3.forward(sparsemax_loss(big3, many)));
  check_close({as_scalar(cg3.forward(sparsemax_loss(big3, &many)))}, {by_value});
  Expression mtx = input(cg, Dim({3, 2}), test::test_values(6));
  check_throws_with<dim_error>([&] { sparsemax_loss(mtx, std::vector<unsigned>{0}); },
                               {"sparsemax_loss", "column vector", "{3,2}"});
  BOOST_CHECK_EQUAL(cg.size(), 2u);
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ constrained_softmax
BOOST_AUTO_TEST_SUITE(constrained_softmax_op)

BOOST_AUTO_TEST_CASE(values) {
  auto cs = [](ComputationGraph&, const Xs& x) { return constrained_softmax(x[0], x[1]); };
  // loose bounds: plain softmax of (1, 2, 3)
  check_close(eval({{Dim({3}), {1.f, 2.f, 3.f}}, {Dim({3}), {1.f, 1.f, 1.f}}}, cs),
              {0.09003057f, 0.24472847f, 0.66524096f});
  // x = 0: softmax 1/3 each; u_0 = 0.2 binds, the other two share 0.8
  check_close(eval({{Dim({3}), {0.f, 0.f, 0.f}}, {Dim({3}), {0.2f, 1.f, 1.f}}}, cs), {0.2f, 0.4f, 0.4f});
  // x = (0, ln3, 0): softmax (1/5, 3/5, 1/5); u_1 = 0.5 binds -> (0.25, 0.5, 0.25)
  check_close(eval({{Dim({3}), {0.f, kLn3, 0.f}}, {Dim({3}), {1.f, 0.5f, 1.f}}}, cs), {0.25f, 0.5f, 0.25f});
  // a cascade: x = (ln4, ln2, 0), softmax (4/7, 2/7, 1/7), u = (0.3, 0.3, 1).  Only u_0
  // binds at first; then (2/3, 1/3) of the remaining 0.7 gives 0.467 > 0.3, so u_1
  // binds too, and the last element gets 0.4.
  check_close(eval({{Dim({3}), {kLn4, kLn2, 0.f}}, {Dim({3}), {0.3f, 0.3f, 1.f}}}, cs), {0.3f, 0.3f, 0.4f});
}

BOOST_AUTO_TEST_CASE(edges_and_batch) {
  auto cs = [](ComputationGraph&, const Xs& x) { return constrained_softmax(x[0], x[1]); };
  // length one, bound 1: the only distribution
  check_close(eval({{Dim({1}), {-3.f}}, {Dim({1}), {1.f}}}, cs), {1.f});
  // bounds summing to exactly 1 force p = u
  check_close(eval({{Dim({3}), {5.f, 0.f, 0.f}}, {Dim({3}), {0.25f, 0.25f, 0.5f}}}, cs), {0.25f, 0.25f, 0.5f});
  // a zero bound: that element gets nothing
  check_close(eval({{Dim({3}), {5.f, 0.f, 0.f}}, {Dim({3}), {0.f, 1.f, 1.f}}}, cs), {0.f, 0.5f, 0.5f});
  // batch of 2 against one bound vector (broadcast).  Element 1, x = (0, ln3, 0):
  // softmax (0.2, 0.6, 0.2); u_1 = 0.5 binds; the other two would get 0.25 each, over
  // u_0 = 0.2, so u_0 binds too and the last gets 1 - 0.7 = 0.3
  check_close(eval({{Dim({3}, 2), {0.f, 0.f, 0.f, 0.f, kLn3, 0.f}}, {Dim({3}), {0.2f, 0.5f, 1.f}}}, cs),
              {0.2f, 0.4f, 0.4f, 0.2f, 0.5f, 0.3f});
  // a batch of bounds against one x
  check_close(eval({{Dim({3}), {0.f, 0.f, 0.f}}, {Dim({3}, 2), {0.2f, 1.f, 1.f, 1.f, 1.f, 1.f}}}, cs),
              {0.2f, 0.4f, 0.4f, 1.f / 3, 1.f / 3, 1.f / 3});
}

BOOST_AUTO_TEST_CASE(gradient_by_hand) {
  // x = (0, ln3, 0), u = (1, 0.5, 1): u_1 binds, free {0, 2} share s = 0.5, y = (1/4, 1/2, 1/4).
  // loss = y_0 = s e^x0 / (e^x0 + e^x2): dx = (s/4, 0, -s/4) = (1/8, 0, -1/8);
  // du_1 = -1/2 (y_0 = (1 - u_1)/2), du_0 = du_2 = 0
  TestInput x{Dim({3}), {0.f, kLn3, 0.f}}, u{Dim({3}), {1.f, 0.5f, 1.f}};
  Grads g = run(x, &u, [](Expression a, Expression b) { return constrained_softmax(a, b); }, {1.f, 0.f, 0.f});
  check_close(g.dx, {0.125f, 0.f, -0.125f});
  check_close(g.dy, {0.f, -0.5f, 0.f});
  // loss = y_1 = u_1: dx = 0, du = e_1
  g = run(x, &u, [](Expression a, Expression b) { return constrained_softmax(a, b); }, {0.f, 1.f, 0.f});
  check_close(g.dx, {0.f, 0.f, 0.f});
  check_close(g.dy, {0.f, 1.f, 0.f});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = fixed_parameter(m, Dim({4}), 0.f);
  auto cs = [](ComputationGraph&, const Xs& x) { return constrained_softmax(x[0], x[1]); };
  // nothing binds
  check_gradients(m, {{Dim({4}), test::test_values(4)}, {Dim({4}), {0.9f, 0.9f, 0.9f, 0.9f}}}, cs);
  // one bound binds (u_0), then two (u_0, u_1)
  check_gradients(m, {{Dim({4}), test::test_values(4)}, {Dim({4}), {0.15f, 0.6f, 0.5f, 0.4f}}}, cs);
  check_gradients(m, {{Dim({4}), test::test_values(4)}, {Dim({4}), {0.3f, 0.3f, 0.3f, 0.3f}}}, cs);
  // a batch of 2 against one bound vector: element 0 binds u_0 and u_1, element 1 binds u_2
  check_gradients(m, {{Dim({3}, 2), test::test_values(6, 0.1f)}, {Dim({3}), {0.3f, 0.45f, 0.5f}}}, cs);
  // through a parameter
  check_gradients(m, {{Dim({4}), {0.15f, 0.6f, 0.5f, 0.4f}}},
                  [&](ComputationGraph& cg, const Xs& x) { return constrained_softmax(parameter(cg, p), x[0]); });
}

BOOST_AUTO_TEST_CASE(errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {0.f, 0.f, 0.f});
  Expression u4 = input(cg, Dim({4}), {1.f, 1.f, 1.f, 1.f});
  check_throws_with<dim_error>([&] { constrained_softmax(x, u4); }, {"constrained_softmax", "{4}", "{3}"});
  Expression m = input(cg, Dim({3, 2}), test::test_values(6));
  check_throws_with<dim_error>([&] { constrained_softmax(m, m); }, {"constrained_softmax", "column vector", "{3,2}"});
  Expression xb = input(cg, Dim({3}, 2), test::test_values(6));
  Expression ub = input(cg, Dim({3}, 3), test::test_values(9));
  check_throws_with<dim_error>([&] { constrained_softmax(xb, ub); }, {"constrained_softmax", "{3X2}", "{3X3}"});
  // infeasible bounds are reported at forward time
  Expression small = input(cg, Dim({3}), {0.2f, 0.3f, 0.4f});
  Expression y = constrained_softmax(x, small);
  check_throws_with<std::invalid_argument>([&] { cg.forward(y); }, {"constrained_softmax", "sum to 0.9", "< 1"});
  ComputationGraph cg2;
  Expression x2 = input(cg2, Dim({3}), {0.f, 0.f, 0.f});
  Expression negative = input(cg2, Dim({3}), {1.f, -0.5f, 1.f});
  Expression z = constrained_softmax(x2, negative);
  check_throws_with<std::invalid_argument>([&] { cg2.forward(z); }, {"constrained_softmax", "u[1]", "negative"});
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ poisson_loss
BOOST_AUTO_TEST_SUITE(poisson_loss_op)

BOOST_AUTO_TEST_CASE(values_and_gradient_by_hand) {
  // x = ln2 (lambda = 2), y = 3: 2 - 3 ln2 + ln 6 = 2 - 2.0794415 + 1.7917595 = 1.7123180
  // dx = exp(x) - y = -1
  Grads g = run({Dim({1}), {kLn2}}, nullptr, [](Expression a, Expression) { return poisson_loss(a, 3u); });
  check_close(g.value, {1.7123180f});
  check_close(g.dx, {-1.f});
  // x = 0 (lambda = 1), y = 0: 1;  dx = 1
  g = run({Dim({1}), {0.f}}, nullptr, [](Expression a, Expression) { return poisson_loss(a, 0u); });
  check_close(g.value, {1.f});
  check_close(g.dx, {1.f});
  // at the optimum x = ln y the gradient vanishes: x = ln3, y = 3:
  // 3 - 3.2958369 + 1.7917595 = 1.4959226
  g = run({Dim({1}), {kLn3}}, nullptr, [](Expression a, Expression) { return poisson_loss(a, 3u); });
  check_close(g.value, {1.4959226f});
  check_close(g.dx, {0.f});
}

BOOST_AUTO_TEST_CASE(batch_and_pointer) {
  // x = (0, ln2), y = 3: (1 + ln6, 1.7123180);  dx = (1 - 3, 2 - 3) times the weights (1, 2)
  Grads g = run({Dim({1}, 2), {0.f, kLn2}}, nullptr, [](Expression a, Expression) { return poisson_loss(a, 3u); },
                {1.f, 2.f});
  check_close(g.value, {2.7917595f, 1.7123180f});
  check_close(g.dx, {-2.f, -2.f});
  ComputationGraph cg;
  Expression x = input(cg, Dim({1}), {kLn2});
  unsigned y = 3;
  Expression l = poisson_loss(x, &y);
  check_close(as_vector(cg.forward(l)), {1.7123180f});
  y = 0;  // 2 - 0 + 0
  check_close(as_vector(cg.forward(l)), {2.f});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = fixed_parameter(m, Dim({1}), 0.3f);
  check_gradients(m, {{Dim({1}), {0.4f}}}, [](ComputationGraph&, const Xs& x) { return poisson_loss(x[0], 2u); });
  check_gradients(m, {{Dim({1}, 3), {0.4f, -0.7f, 1.1f}}},
                  [&](ComputationGraph& cg, const Xs& x) { return poisson_loss(x[0] + parameter(cg, p), 4u); });
  unsigned y = 1;
  check_gradients(m, {{Dim({1}), {-0.2f}}},
                  [&](ComputationGraph& cg, const Xs& x) { return poisson_loss(cmult(x[0], parameter(cg, p)), &y); });
}

BOOST_AUTO_TEST_CASE(errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}), {0.f, 1.f});
  check_throws_with<dim_error>([&] { poisson_loss(x, 1u); }, {"poisson_loss", "scalar", "{2}"});
  Expression s = input(cg, 1.f);
  check_throws_with<std::invalid_argument>([&] { poisson_loss(s, static_cast<const unsigned*>(nullptr)); },
                                           {"poisson_loss", "null"});
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ pairwise_rank_loss
BOOST_AUTO_TEST_SUITE(pairwise_rank_loss_op)

BOOST_AUTO_TEST_CASE(values_and_gradients_by_hand) {
  auto prl = [](Expression a, Expression b) { return pairwise_rank_loss(a, b); };
  // x = 0.3, y = 0.5, m = 1: 1.2;  dx = -1, dy = 1
  TestInput x{Dim({1}), {0.3f}}, y{Dim({1}), {0.5f}};
  Grads g = run(x, &y, prl);
  check_close(g.value, {1.2f});
  check_close(g.dx, {-1.f});
  check_close(g.dy, {1.f});
  // x = 2: no violation, no gradient
  TestInput x2{Dim({1}), {2.f}};
  g = run(x2, &y, prl);
  check_close(g.value, {0.f});
  check_close(g.dx, {0.f});
  check_close(g.dy, {0.f});
  // a row vector, m = 0.5: (0, 1, 2) vs (0.5, 0.5, 0.5) -> (1, 0, 0), the middle one at the kink
  TestInput xr{Dim({1, 3}), {0.f, 1.f, 2.f}}, yr{Dim({1, 3}), {0.5f, 0.5f, 0.5f}};
  g = run(xr, &yr, [](Expression a, Expression b) { return pairwise_rank_loss(a, b, 0.5f); }, {1.f, 2.f, 3.f});
  check_close(g.value, {1.f, 0.f, 0.f});
  check_close(g.dx, {-1.f, 0.f, 0.f});
  check_close(g.dy, {1.f, 0.f, 0.f});
}

BOOST_AUTO_TEST_CASE(batch_broadcast) {
  // x = (0, 0.4, 3) X3 against one y = 0.5, m = 1: (1.5, 1.1, 0); dy collects the batch
  TestInput x{Dim({1}, 3), {0.f, 0.4f, 3.f}}, y{Dim({1}), {0.5f}};
  Grads g = run(x, &y, [](Expression a, Expression b) { return pairwise_rank_loss(a, b); }, {1.f, 2.f, 4.f});
  check_close(g.value, {1.5f, 1.1f, 0.f});
  check_close(g.dx, {-1.f, -2.f, 0.f});
  check_close(g.dy, {3.f});
  // the other way round: one x against a batch of y
  g = run(y, &x, [](Expression a, Expression b) { return pairwise_rank_loss(a, b); });
  // 1 - 0.5 + (0, 0.4, 3) = (0.5, 0.9, 3.5)
  check_close(g.value, {0.5f, 0.9f, 3.5f});
  check_close(g.dx, {-3.f});
  check_close(g.dy, {1.f, 1.f, 1.f});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = fixed_parameter(m, Dim({1, 4}), 0.1f);
  auto prl = [](ComputationGraph&, const Xs& x) { return pairwise_rank_loss(x[0], x[1], 0.8f); };
  check_gradients(m, {{Dim({1, 4}), test::test_values(4)}, {Dim({1, 4}), test::test_values(4, 0.3f)}}, prl);
  check_gradients(m, {{Dim({1, 4}, 2), test::test_values(8)}, {Dim({1, 4}), test::test_values(4, 0.2f)}}, prl);
  check_gradients(m, {{Dim({1}, 3), {0.1f, 0.9f, -0.4f}}, {Dim({1}, 3), {0.5f, -0.3f, 0.2f}}}, prl);
  check_gradients(m, {{Dim({1, 4}, 2), test::test_values(8, -0.2f)}},
                  [&](ComputationGraph& cg, const Xs& x) { return pairwise_rank_loss(parameter(cg, p), x[0]); });
}

BOOST_AUTO_TEST_CASE(errors) {
  ComputationGraph cg;
  Expression col = input(cg, Dim({2}), {0.f, 1.f});
  check_throws_with<dim_error>([&] { pairwise_rank_loss(col, col); }, {"pairwise_rank_loss", "row vector", "{2}"});
  Expression a = input(cg, Dim({1, 3}), {0.f, 1.f, 2.f});
  Expression b = input(cg, Dim({1, 2}), {0.f, 1.f});
  check_throws_with<dim_error>([&] { pairwise_rank_loss(a, b); }, {"pairwise_rank_loss", "{1,3}", "{1,2}"});
  Expression c = input(cg, Dim({1}, 2), {0.f, 1.f});
  Expression d = input(cg, Dim({1}, 3), {0.f, 1.f, 2.f});
  check_throws_with<dim_error>([&] { pairwise_rank_loss(c, d); }, {"pairwise_rank_loss", "{1X2}", "{1X3}"});
  BOOST_CHECK_EQUAL(cg.size(), 5u);
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ hinge_dim
BOOST_AUTO_TEST_SUITE(hinge_dim_op)

// x = [1    0]
//     [2   -1]
//     [0.5  3]
const TestInput kX{Dim({3, 2}), {1.f, 2.f, 0.5f, 0.f, -1.f, 3.f}};

BOOST_AUTO_TEST_CASE(values_and_gradient_by_hand) {
  // d = 0, correct rows (0, 0), m = 1: column 0: 1 - 1 + 2 = 2, 1 - 1 + 0.5 = 0.5 -> 2.5;
  // column 1: 1 - 0 - 1 = 0 (at the margin), 1 - 0 + 3 = 4 -> 4
  Grads g = run(kX, nullptr,
                [](Expression a, Expression) {
                  return hinge_dim(a, std::vector<unsigned>{0, 0});
                },
                {1.f, 10.f});
  check_close(g.value, {2.5f, 4.f});
  // column 0: rows 1, 2 active (dx += 1), row 0 -= 2;  column 1 (weight 10): row 2 only
  check_close(g.dx, {-2.f, 1.f, 1.f, -10.f, 0.f, 10.f});
  // d = 1, correct columns (1, 0, 1), m = 1: row 0: 1 - 0 + 1 = 2; row 1: 1 - 2 - 1 < 0;
  // row 2: 1 - 3 + 0.5 < 0 -> (2, 0, 0)
  g = run(kX, nullptr, [](Expression a, Expression) { return hinge_dim(a, std::vector<unsigned>{1, 0, 1}, 1); });
  check_close(g.value, {2.f, 0.f, 0.f});
  check_close(g.dx, {1.f, 0.f, 0.f, -1.f, 0.f, 0.f});
  // m = 3: row 0: 3 + 1 = 4; row 1: 3 - 2 - 1 = 0 (margin); row 2: 3 - 3 + 0.5 = 0.5
  g = run(kX, nullptr, [](Expression a, Expression) { return hinge_dim(a, std::vector<unsigned>{1, 0, 1}, 1, 3.f); });
  check_close(g.value, {4.f, 0.f, 0.5f});
  check_close(g.dx, {1.f, 0.f, 1.f, -1.f, 0.f, -1.f});
}

BOOST_AUTO_TEST_CASE(batches_and_pointers) {
  // batch element 1 = -x
  TestInput xb{Dim({3, 2}, 2), {1.f, 2.f, 0.5f, 0.f, -1.f, 3.f, -1.f, -2.f, -0.5f, 0.f, 1.f, -3.f}};
  // shared indices (0, 0): element 1 column 0: 1 + 1 - 2 < 0, 1 + 1 - 0.5 = 1.5;
  // column 1: 1 - 0 + 1 = 2, 1 - 0 - 3 < 0 -> (1.5, 2)
  check_close(eval({xb},
                   [](ComputationGraph&, const Xs& x) {
                     return hinge_dim(x[0], std::vector<unsigned>{0, 0});
                   }),
              {2.5f, 4.f, 1.5f, 2.f});
  // one index list per element: element 1 with (1, 2): column 0 correct -2: 1 + 2 - 1 = 2,
  // 1 + 2 - 0.5 = 2.5 -> 4.5; column 1 correct -3: 1 + 3 + 0 = 4, 1 + 3 + 1 = 5 -> 9
  std::vector<std::vector<unsigned>> per{{0, 0}, {1, 2}};
  check_close(eval({xb}, [&](ComputationGraph&, const Xs& x) { return hinge_dim(x[0], per); }), {2.5f, 4.f, 4.5f, 9.f});
  // pointers are read at forward time
  ComputationGraph cg;
  Expression e = input(cg, xb.dim, xb.values);
  std::vector<unsigned> idx{0, 0};
  Expression h = hinge_dim(e, &idx);
  Expression hb = hinge_dim(e, &per);
  check_close(as_vector(cg.forward(h)), {2.5f, 4.f, 1.5f, 2.f});
  check_close(as_vector(cg.forward(hb)), {2.5f, 4.f, 4.5f, 9.f});
  per[1] = {0, 0};
  check_close(as_vector(cg.forward(hb)), {2.5f, 4.f, 1.5f, 2.f});
  // a vector {3} is a matrix with one column
  check_close(eval({{Dim({3}), {1.f, 2.f, 0.5f}}},
                   [](ComputationGraph&, const Xs& x) { return hinge_dim(x[0], std::vector<unsigned>{0}); }),
              {2.5f});
  // ... and along d = 1 each of its rows has a single candidate: loss 0
  check_close(eval({{Dim({3}), {1.f, 2.f, 0.5f}}},
                   [](ComputationGraph&, const Xs& x) {
                     return hinge_dim(x[0], std::vector<unsigned>{0, 0, 0}, 1);
                   }),
              {0.f, 0.f, 0.f});
  // errors behind pointers show at forward time
  idx = {0, 0, 0};
  check_throws_with<dim_error>([&] { cg.forward(h); }, {"hinge_dim", "3 indices", "{3,2X2}", "needs 2"});
  idx = {0, 5};
  check_throws_with<index_error>([&] { cg.forward(h); }, {"hinge_dim", "index 5", "{3,2X2}"});
  idx = {0, 0};  // forward(hb) computes h too
  per.pop_back();
  check_throws_with<dim_error>([&] { cg.forward(hb); }, {"hinge_dim", "1 index lists", "{3,2X2}"});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = fixed_parameter(m, Dim({4, 3}), 0.1f);
  check_gradients(m, {{Dim({4, 3}), test::test_values(12)}}, [](ComputationGraph&, const Xs& x) {
    return hinge_dim(x[0], std::vector<unsigned>{1, 3, 0}, 0, 0.8f);
  });
  check_gradients(m, {{Dim({4, 3}), test::test_values(12, 0.2f)}}, [](ComputationGraph&, const Xs& x) {
    return hinge_dim(x[0], std::vector<unsigned>{2, 0, 1, 1}, 1, 1.3f);
  });
  // a batch of 2 with the parameter (batch of 1) added; shared and per-element indices
  check_gradients(m, {{Dim({4, 3}, 2), test::test_values(24, -0.1f)}}, [&](ComputationGraph& cg, const Xs& x) {
    return hinge_dim(x[0] + parameter(cg, p), std::vector<unsigned>{0, 2, 3});
  });
  std::vector<std::vector<unsigned>> per{{1, 0, 2, 2}, {0, 1, 1, 2}};
  check_gradients(m, {{Dim({4, 3}, 2), test::test_values(24, 0.05f)}}, [&](ComputationGraph& cg, const Xs& x) {
    return hinge_dim(cmult(x[0], parameter(cg, p)), per, 1, 1.5f);
  });
}

BOOST_AUTO_TEST_CASE(errors) {
  ComputationGraph cg;
  Expression x = input(cg, kX.dim, kX.values);
  check_throws_with<dim_error>(
      [&] {
        hinge_dim(x, std::vector<unsigned>{0, 0, 0});
      },
      {"hinge_dim", "3 indices", "{3,2}", "needs 2"});
  check_throws_with<dim_error>(
      [&] {
        hinge_dim(x, std::vector<unsigned>{0, 0}, 1);
      },
      {"hinge_dim", "2 indices", "{3,2}", "needs 3"});
  check_throws_with<index_error>(
      [&] {
        hinge_dim(x, std::vector<unsigned>{0, 3});
      },
      {"hinge_dim", "index 3", "{3,2}", "size 3"});
  check_throws_with<index_error>(
      [&] {
        hinge_dim(x, std::vector<unsigned>{0, 2, 1}, 1);
      },
      {"hinge_dim", "index 2", "{3,2}", "size 2"});
  check_throws_with<dim_error>(
      [&] {
        hinge_dim(x, std::vector<unsigned>{0, 0}, 2);
      },
      {"hinge_dim", "dimension 2", "{3,2}"});
  check_throws_with<std::invalid_argument>(
      [&] {
        hinge_dim(x, std::vector<unsigned>{0, 0}, 0, -1.f);
      },
      {"hinge_dim", "negative margin", "{3,2}"});
  std::vector<std::vector<unsigned>> two{{0, 0}, {0, 0}};
  check_throws_with<dim_error>([&] { hinge_dim(x, two); }, {"hinge_dim", "2 index lists", "{3,2}", "batch size 1"});
  Expression t = input(cg, Dim({2, 2, 2}), test::test_values(8));
  check_throws_with<dim_error>([&] { hinge_dim(t, std::vector<unsigned>{0, 0}); }, {"hinge_dim", "matrix", "{2,2,2}"});
  BOOST_CHECK_EQUAL(cg.size(), 2u);
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ argmax
BOOST_AUTO_TEST_SUITE(argmax_op)

BOOST_AUTO_TEST_CASE(values_ties_and_batch) {
  auto am = [](ComputationGraph&, const Xs& x) { return argmax(x[0], zero_gradient); };
  check_close(eval({{Dim({3}), {1.f, 3.f, 2.f}}}, am), {0.f, 1.f, 0.f});
  check_close(eval({{Dim({4}), {-5.f, -1.f, -2.f, -1.5f}}}, am), {0.f, 1.f, 0.f, 0.f});
  // ties: the first largest
  check_close(eval({{Dim({3}), {2.f, 5.f, 5.f}}}, am), {0.f, 1.f, 0.f});
  check_close(eval({{Dim({1}), {-9.f}}}, am), {1.f});
  check_close(eval({{Dim({3}, 2), {1.f, 3.f, 2.f, 7.f, 0.f, 7.f}}}, am), {0.f, 1.f, 0.f, 1.f, 0.f, 0.f});
  // the gradient mode does not change the value
  check_close(eval({{Dim({3}), {1.f, 3.f, 2.f}}},
                   [](ComputationGraph&, const Xs& x) { return argmax(x[0], straight_through_gradient); }),
              {0.f, 1.f, 0.f});
}

BOOST_AUTO_TEST_CASE(zero_gradient_is_exactly_zero) {
  Grads g = run({Dim({3}, 2), {1.f, 3.f, 2.f, 7.f, 0.f, 7.f}}, nullptr,
                [](Expression a, Expression) { return argmax(a, zero_gradient); }, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  for (float v : g.dx) BOOST_CHECK_EQUAL(v, 0.f);
  BOOST_CHECK_EQUAL(g.dx.size(), 6u);
  // a parameter behind it gets exactly zero too
  ParameterCollection m;
  Parameter p = fixed_parameter(m, Dim({3}), 0.f);
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {1.f, 3.f, 2.f});
  Expression loss =
      sum_elems(cmult(argmax(cmult(x, parameter(cg, p)), zero_gradient), input(cg, Dim({3}), {1.f, 2.f, 3.f})));
  cg.forward(loss);
  cg.backward(loss);
  for (float v : as_vector(p.get_storage().g)) BOOST_CHECK_EQUAL(v, 0.f);
}

BOOST_AUTO_TEST_CASE(straight_through_is_identity) {
  Grads g = run({Dim({3}, 2), {1.f, 3.f, 2.f, 7.f, 0.f, 7.f}}, nullptr,
                [](Expression a, Expression) { return argmax(a, straight_through_gradient); },
                {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  check_close(g.dx, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  // through a parameter: d/dp sum(w .* argmax(x .* p)) = w .* x with the identity gradient
  ParameterCollection m;
  Parameter p = fixed_parameter(m, Dim({3}), 0.f);
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {1.f, 3.f, 2.f});
  Expression loss = sum_elems(
      cmult(argmax(cmult(x, parameter(cg, p)), straight_through_gradient), input(cg, Dim({3}), {1.f, 2.f, 3.f})));
  cg.forward(loss);
  cg.backward(loss);
  check_close(as_vector(p.get_storage().g), {1.f, 6.f, 6.f});
}

BOOST_AUTO_TEST_CASE(errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 2}), test::test_values(6));
  check_throws_with<dim_error>([&] { argmax(x, zero_gradient); }, {"argmax", "column vector", "{3,2}"});
  check_throws_with<std::invalid_argument>(
      [&] {
        argmax(input(cg, Dim({2}), {0.f, 1.f}), static_cast<GradientMode>(7));
      },
      {"argmax", "gradient mode 7", "{2}"});
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ one_hot
BOOST_AUTO_TEST_SUITE(one_hot_op)

BOOST_AUTO_TEST_CASE(values) {
  ComputationGraph cg;
  Expression a = one_hot(cg, 4, 2);
  BOOST_CHECK_EQUAL(a.dim(), Dim({4}));
  check_close(as_vector(cg.forward(a)), {0.f, 0.f, 1.f, 0.f});
  check_close(as_vector(cg.forward(one_hot(cg, 3, 0, 0.5f))), {0.5f, 0.f, 0.f});
  check_close(as_vector(cg.forward(one_hot(cg, 1, 0, -2.f))), {-2.f});
  Expression b = one_hot(cg, 3, std::vector<unsigned>{2, 0, 2}, 3.f);
  BOOST_CHECK_EQUAL(b.dim(), Dim({3}, 3));
  check_close(as_vector(cg.forward(b)), {0.f, 0.f, 3.f, 3.f, 0.f, 0.f, 0.f, 0.f, 3.f});
}

BOOST_AUTO_TEST_CASE(as_a_mask_in_gradients) {
  // dot with a one-hot picks an element: d/dx = the one-hot (per batch element)
  Grads g = run({Dim({3}, 2), {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}}, nullptr, [](Expression a, Expression) {
    return dot_product(a, one_hot(*a.pg, 3, std::vector<unsigned>{1, 2}, 2.f));
  });
  check_close(g.value, {4.f, 12.f});
  check_close(g.dx, {0.f, 2.f, 0.f, 0.f, 0.f, 2.f});
  ParameterCollection m;
  Parameter p = fixed_parameter(m, Dim({4}), 0.f);
  check_gradients(m, {{Dim({4}, 2), test::test_values(8)}}, [&](ComputationGraph& cg, const Xs& x) {
    return cmult(x[0] + parameter(cg, p), one_hot(cg, 4, std::vector<unsigned>{3, 1}, 0.7f));
  });
}

BOOST_AUTO_TEST_CASE(errors) {
  ComputationGraph cg;
  check_throws_with<index_error>([&] { one_hot(cg, 4, 4); }, {"one_hot", "index 4", "dimension 4"});
  check_throws_with<index_error>(
      [&] {
        one_hot(cg, 3, std::vector<unsigned>{0, 7});
      },
      {"one_hot", "index 7", "batch element 1", "dimension 3"});
  check_throws_with<std::invalid_argument>([&] { one_hot(cg, 3, std::vector<unsigned>{}); },
                                           {"one_hot", "empty", "dimension 3"});
  check_throws_with<dim_error>([&] { one_hot(cg, 0, 0); }, {"one_hot", "dimension 0"});
  BOOST_CHECK_EQUAL(cg.size(), 0u);
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ the op table
BOOST_AUTO_TEST_CASE(rows_are_filled) {
  for (OpKind op : {OpKind::Sparsemax, OpKind::SparsemaxLoss, OpKind::ConstrainedSoftmax, OpKind::PoissonLoss,
                    OpKind::PairwiseRankLoss, OpKind::HingeDim, OpKind::Argmax, OpKind::OneHot}) {
    const OpInfo& r = op_info(op);
    BOOST_REQUIRE(r.name != nullptr);
    BOOST_CHECK(r.shape != nullptr);
    BOOST_CHECK(r.forward[0] != nullptr);
    BOOST_CHECK_MESSAGE(r.leaf || r.backward[0] != nullptr, r.name << " lacks a CPU backward");
  }
}

// ================================================================ automatic batching
// sparsemax, constrained_softmax, pairwise_rank_loss and argmax batch element-wise:
// instances run plain and with both batching strategies must agree (values and
// gradients), and some groups must actually batch.
BOOST_AUTO_TEST_CASE(autobatch_equals_plain) {
  ParameterCollection m;
  Parameter w = fixed_parameter(m, Dim({5}), 0.3f);
  Parameter u = m.add_parameters({5});
  u.set_value({0.3f, 0.25f, 0.5f, 0.35f, 0.4f});
  auto run = [&](int strategy) {
    m.reset_gradient();
    ComputationGraph cg;
    cg.set_autobatch(strategy);
    std::vector<Expression> xs, outs;
    Expression we = parameter(cg, w), ue = parameter(cg, u);
    for (unsigned i = 0; i < 4; ++i) {
      unsigned bd = i < 2 ? 1 : 2;
      xs.push_back(input(cg, Dim({5}, bd), test::test_values(5 * bd, 0.15f * i)));
      Expression h = tanh(cmult(xs.back(), we)) * 2.f;
      outs.push_back(sum_batches(sum_elems(cmult(sparsemax(h), input(cg, Dim({5}), {1.f, 2.f, 3.f, 4.f, 5.f})))));
      outs.push_back(
          sum_batches(sum_elems(cmult(constrained_softmax(h, ue), input(cg, Dim({5}), {5.f, 1.f, 4.f, 2.f, 3.f})))));
      outs.push_back(sum_batches(pairwise_rank_loss(pick(h, 0u), pick(h, 1u), 0.5f)));
      outs.push_back(sum_batches(sum_elems(cmult(argmax(h, straight_through_gradient), h))));
    }
    return test::run_outputs(cg, outs, xs, {w, u});
  };
  const test::StrategyResult plain = test::check_strategies_agree(run);
  // some bound binds somewhere, so u's gradient is not trivially zero
  bool any = false;
  for (float g : plain.param_grads[1]) any = any || g != 0.f;
  BOOST_CHECK(any);
}

// Each element-wise batching op alone: four instances run as one kernel call.
BOOST_AUTO_TEST_CASE(autobatch_merges_each_op) {
  using Make = std::function<Expression(ComputationGraph&, Expression, Expression)>;
  std::vector<std::pair<const char*, Make>> ops = {
      {"sparsemax", [](ComputationGraph&, Expression x, Expression) { return sparsemax(x); }},
      {"constrained_softmax", [](ComputationGraph&, Expression x, Expression u) { return constrained_softmax(x, u); }},
      {"pairwise_rank_loss",
       [](ComputationGraph&, Expression x, Expression u) { return pairwise_rank_loss(x, u, 0.7f); }},
      {"argmax", [](ComputationGraph&, Expression x, Expression) { return argmax(x, straight_through_gradient); }},
  };
  for (auto& op : ops) {
    const bool rank = std::string(op.first) == "pairwise_rank_loss";
    const Dim d = rank ? Dim({1, 5}) : Dim({5});
    std::vector<float> plain_values;
    for (int strategy : {0, 1, 2}) {
      ComputationGraph cg;
      cg.set_autobatch(strategy);
      Expression u = input(cg, d, {0.3f, 0.25f, 0.5f, 0.35f, 0.4f});
      std::vector<Expression> outs;
      for (unsigned i = 0; i < 4; ++i) outs.push_back(op.second(cg, input(cg, d, test::test_values(5, 0.4f * i)), u));
      std::vector<float> values = as_vector(cg.forward(sum(outs)));
      if (strategy == 0) {
        plain_values = values;
        continue;
      }
      check_close(values, plain_values, 1e-6);
      // 5 inputs, 4 op nodes merged into one call, 1 sum
      BOOST_CHECK_MESSAGE(cg.autobatch_stats().batched_groups == 1u,
                          op.first << " did not batch (strategy " << strategy << ")");
      BOOST_CHECK_EQUAL(cg.autobatch_stats().kernels, 7u);
    }
  }
}
