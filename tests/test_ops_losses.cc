#define BOOST_TEST_MODULE ops_losses
#include "test_utils.h"

#include <cfloat>
#include <cmath>

#include "dynet_lite/ops/op_table.h"

using namespace dynet_lite;
using test::check_close;
using test::check_gradients;
using test::check_throws_with;
using test::eval;
using test::TestInput;

namespace {

using Xs = std::vector<Expression>;

using test::Grads;
// Value and input gradients of a one-node loss (summed over the batch) of x (and y).
template <class F>
Grads run(const TestInput& x, const TestInput* y, F f) {
  return test::value_and_input_grads(x, y, f, [](ComputationGraph&, const Expression& e) { return e; });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hinge_op)

BOOST_AUTO_TEST_CASE(values_and_gradient_by_hand) {
  // x = {0.5, 2, 1.8, -1}, index 1, m = 1: terms 1 - 2 + x_i = {-0.5, -, 0.8, -2} -> 0.8
  TestInput x{Dim({4}), {0.5f, 2.f, 1.8f, -1.f}};
  Grads g = run(x, nullptr, [](Expression a, Expression) { return hinge(a, 1u); });
  check_close(g.value, {0.8f});
  check_close(g.dx, {0.f, -1.f, 1.f, 0.f});
  // m = 0.5: only 0.3 remains
  check_close(eval({x}, [](ComputationGraph&, const Xs& x) { return hinge(x[0], 1u, 0.5f); }), {0.3f});
  // m = 4: every other row counts: (4 - 2) * 3 + 0.5 + 1.8 - 1 = 7.3; dx = {1, -3, 1, 1}
  g = run(x, nullptr, [](Expression a, Expression) { return hinge(a, 1u, 4.f); });
  check_close(g.value, {7.3f});
  check_close(g.dx, {1.f, -3.f, 1.f, 1.f});
}

BOOST_AUTO_TEST_CASE(at_the_margin) {
  // x = {1, 2, 1}, index 1, m = 1: both terms are exactly 0; no gradient at the kink
  Grads g = run({Dim({3}), {1.f, 2.f, 1.f}}, nullptr, [](Expression a, Expression) { return hinge(a, 1u); });
  check_close(g.value, {0.f});
  check_close(g.dx, {0.f, 0.f, 0.f});
  // length one: no other row, loss 0
  g = run({Dim({1}), {3.f}}, nullptr, [](Expression a, Expression) { return hinge(a, 0u); });
  check_close(g.value, {0.f});
  check_close(g.dx, {0.f});
}

BOOST_AUTO_TEST_CASE(batched_values) {
  // b0 = {1, 0.5, 0} index 0: terms 0.5, 0 -> 0.5;  b1 = {0, 0, 3} index 2: -2, -2 -> 0
  TestInput x{Dim({3}, 2), {1.f, 0.5f, 0.f, 0.f, 0.f, 3.f}};
  check_close(eval({x}, [](ComputationGraph&, const Xs& x) { return hinge(x[0], std::vector<unsigned>{0, 2}); }),
              {0.5f, 0.f});
  // index 0 for both: b1 terms 1 + 0, 1 + 3 -> 5
  check_close(eval({x}, [](ComputationGraph&, const Xs& x) { return hinge(x[0], 0u); }), {0.5f, 5.f});
  // pointer variants read at forward time
  ComputationGraph cg;
  Expression e = input(cg, x.dim, x.values);
  std::vector<unsigned> idx{1, 1};
  unsigned one = 1;
  Expression h = hinge(e, &idx);
  Expression h1 = hinge(e, &one, 2.f);
  idx = {0, 2};
  one = 0;
  check_close(as_vector(cg.forward(h)), {0.5f, 0.f});
  // m = 2: b0 terms 1.5, 1 -> 2.5; b1 terms 2, 5 -> 7
  check_close(as_vector(cg.forward(h1)), {2.5f, 7.f});
  BOOST_CHECK_EQUAL(h.dim(), Dim({1}, 2));
}

BOOST_AUTO_TEST_CASE(gradients) {
  // terms stay at least 0.2 away from the kink
  ParameterCollection m;
  Parameter p = m.add_parameters({5});
  p.set_value({0.f, 0.f, 0.f, 0.f, 0.f});
  std::vector<float> x0{0.5f, 2.f, 1.8f, -1.f, 1.2f};
  check_gradients(m, {{Dim({5}), x0}},
                  [&](ComputationGraph& cg, const Xs& x) { return hinge(x[0] + parameter(cg, p), 1u); });
  std::vector<float> xb = x0;
  for (float v : {1.f, 0.1f, 0.3f, 1.5f, -0.4f}) xb.push_back(v);
  check_gradients(m, {{Dim({5}, 2), xb}}, [&](ComputationGraph& cg, const Xs& x) {
    return hinge(x[0] + parameter(cg, p), std::vector<unsigned>{1, 3});
  });
  std::vector<unsigned> idx{1, 3};
  check_gradients(m, {{Dim({5}, 2), xb}}, [&](ComputationGraph&, const Xs& x) { return hinge(x[0], &idx, 1.f); });
}

BOOST_AUTO_TEST_CASE(errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({4}), test::test_values(4));
  Expression xb = input(cg, Dim({4}, 2), test::test_values(8));
  Expression mtx = input(cg, Dim({2, 2}), test::test_values(4));
  check_throws_with<index_error>([&] { hinge(x, 4u); }, {"hinge", "index 4", "size 4"});
  check_throws_with<index_error>([&] { hinge(xb, std::vector<unsigned>{3, 6}); },
                                 {"hinge", "index 6", "batch element 1", "{4X2}"});
  check_throws_with<dim_error>([&] { hinge(xb, std::vector<unsigned>{0, 1, 2}); }, {"hinge", "3 indices", "{4X2}"});
  check_throws_with<dim_error>([&] { hinge(mtx, 0u); }, {"hinge", "column vector", "{2,2}"});
  BOOST_CHECK_EQUAL(cg.size(), 3u);
  unsigned bad = 9;
  Expression h = hinge(x, &bad);
  check_throws_with<index_error>([&] { cg.forward(h); }, {"hinge", "index 9", "size 4"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(distances)

BOOST_AUTO_TEST_CASE(values) {
  // x = {1, 2, 3}, y = {0, 4, 3}: x - y = {1, -2, 0}
  TestInput x{Dim({3}), {1.f, 2.f, 3.f}}, y{Dim({3}), {0.f, 4.f, 3.f}};
  check_close(eval({x, y}, [](ComputationGraph&, const Xs& v) { return squared_distance(v[0], v[1]); }), {5.f});
  check_close(eval({x, y}, [](ComputationGraph&, const Xs& v) { return l1_distance(v[0], v[1]); }), {3.f});
  // huber, c = 1.5: 1^2 + 1.5 (2*2 - 1.5) + 0 = 1 + 3.75 = 4.75
  check_close(eval({x, y}, [](ComputationGraph&, const Xs& v) { return huber_distance(v[0], v[1], 1.5f); }), {4.75f});
  // default c = 1.345: 1 + 1.345 * 2.655 = 4.570975
  check_close(eval({x, y}, [](ComputationGraph&, const Xs& v) { return huber_distance(v[0], v[1]); }), {4.570975f});
  // 1*0 + 2*4 + 3*3 = 17
  check_close(eval({x, y}, [](ComputationGraph&, const Xs& v) { return dot_product(v[0], v[1]); }), {17.f});
}

BOOST_AUTO_TEST_CASE(batched_values) {
  // x = {1,2 | 3,4} against y = {0,1} (a batch of 1): differences {1,1 | 3,3}
  TestInput x{Dim({2}, 2), {1.f, 2.f, 3.f, 4.f}}, y{Dim({2}), {0.f, 1.f}};
  check_close(eval({x, y}, [](ComputationGraph&, const Xs& v) { return squared_distance(v[0], v[1]); }), {2.f, 18.f});
  check_close(eval({y, x}, [](ComputationGraph&, const Xs& v) { return l1_distance(v[0], v[1]); }), {2.f, 6.f});
  check_close(eval({x, y}, [](ComputationGraph&, const Xs& v) { return huber_distance(v[0], v[1], 2.f); }),
              {2.f, 16.f});  // 1 + 1 | 2 (6 - 2) * 2
  check_close(eval({x, y}, [](ComputationGraph&, const Xs& v) { return dot_product(v[0], v[1]); }), {2.f, 4.f});
  // equal batches
  TestInput y2{Dim({2}, 2), {1.f, 2.f, 0.f, 0.f}};
  check_close(eval({x, y2}, [](ComputationGraph&, const Xs& v) { return squared_distance(v[0], v[1]); }), {0.f, 25.f});
  ComputationGraph cg;
  Expression ex = input(cg, x.dim, x.values), ey = input(cg, y.dim, y.values);
  BOOST_CHECK_EQUAL(dot_product(ex, ey).dim(), Dim({1}, 2));
  BOOST_CHECK_EQUAL(squared_norm(ex).dim(), Dim({1}, 2));
  BOOST_CHECK_EQUAL(l2_norm(ey).dim(), Dim({1}));
}

BOOST_AUTO_TEST_CASE(gradients_by_hand) {
  TestInput x{Dim({3}), {1.f, 2.f, 3.f}}, y{Dim({3}), {0.f, 4.f, 3.f}};
  // squared: 2 (x - y) = {2, -4, 0}
  Grads g = run(x, &y, [](Expression a, Expression b) { return squared_distance(a, b); });
  check_close(g.dx, {2.f, -4.f, 0.f});
  check_close(g.dy, {-2.f, 4.f, 0.f});
  // l1: sgn(x - y), 0 at the kink x = y
  g = run(x, &y, [](Expression a, Expression b) { return l1_distance(a, b); });
  check_close(g.value, {3.f});
  check_close(g.dx, {1.f, -1.f, 0.f});
  check_close(g.dy, {-1.f, 1.f, 0.f});
  // dot: dx = y, dy = x
  g = run(x, &y, [](Expression a, Expression b) { return dot_product(a, b); });
  check_close(g.dx, {0.f, 4.f, 3.f});
  check_close(g.dy, {1.f, 2.f, 3.f});
}

BOOST_AUTO_TEST_CASE(huber_at_the_threshold) {
  // t = x - y = {1.5, -1.5, 0.5, 3}, c = 1.5: {2.25, 2.25, 0.25, 1.5 * 4.5 = 6.75};
  // gradient 2t inside, 2c sgn(t) outside, equal (3, -3) at |t| = c from both sides
  TestInput x{Dim({4}), {1.5f, -1.5f, 0.5f, 3.f}}, y{Dim({4}), {0.f, 0.f, 0.f, 0.f}};
  Grads g = run(x, &y, [](Expression a, Expression b) { return huber_distance(a, b, 1.5f); });
  check_close(g.value, {11.5f});
  check_close(g.dx, {3.f, -3.f, 1.f, 3.f});
  check_close(g.dy, {-3.f, 3.f, -1.f, -3.f});
  // one-sided differences at the threshold agree with 2c
  float h = 1e-3f;
  auto at = [](float t) {
    return eval({{Dim({1}), {t}}, {Dim({1}), {0.f}}},
                [](ComputationGraph&, const Xs& v) { return huber_distance(v[0], v[1], 1.5f); })[0];
  };
  BOOST_CHECK_CLOSE((at(1.5f) - at(1.5f - h)) / h, 3.f, 0.2);
  BOOST_CHECK_CLOSE((at(1.5f + h) - at(1.5f)) / h, 3.f, 0.2);
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = m.add_parameters({3});
  p.set_value({0.2f, -0.1f, 0.3f});
  // differences t: b0 {-0.9, 2.5, -0.8}, b1 {-0.3, -1.7, 0.6}: both huber regimes (c = 1), no t near 0 or c
  std::vector<float> xv{0.1f, 2.f, -1.f, 0.7f, -2.2f, 0.4f}, yv{1.f, -0.5f, -0.2f};
  std::vector<float> yb{1.f, -0.5f, -0.2f, 1.f, -0.5f, -0.2f};
  auto all = [&](auto f) {
    // equal batches, a batch of 1 on either side, and through a parameter
    check_gradients(m, {{Dim({3}, 2), xv}, {Dim({3}, 2), yb}}, [&](ComputationGraph&, const Xs& v) { return f(v[0], v[1]); });
    check_gradients(m, {{Dim({3}, 2), xv}, {Dim({3}), yv}}, [&](ComputationGraph&, const Xs& v) { return f(v[0], v[1]); });
    check_gradients(m, {{Dim({3}), yv}, {Dim({3}, 2), xv}}, [&](ComputationGraph&, const Xs& v) { return f(v[0], v[1]); });
    check_gradients(m, {{Dim({3}, 2), xv}}, [&](ComputationGraph& cg, const Xs& v) {
      return f(v[0], parameter(cg, p) + input(cg, Dim({3}), yv));
    });
  };
  all([](Expression a, Expression b) { return squared_distance(a, b); });
  all([](Expression a, Expression b) { return l1_distance(a, b); });
  all([](Expression a, Expression b) { return huber_distance(a, b, 1.f); });
  all([](Expression a, Expression b) { return dot_product(a, b); });
  // matrices
  check_gradients(m, {{Dim({2, 3}, 2), test::test_values(12)}, {Dim({2, 3}), test::test_values(6, 2.f)}},
                  [](ComputationGraph&, const Xs& v) { return squared_distance(v[0], v[1]); });
}

BOOST_AUTO_TEST_CASE(dim_errors) {
  ComputationGraph cg;
  Expression a = input(cg, Dim({3}), test::test_values(3));
  Expression b = input(cg, Dim({4}), test::test_values(4));
  Expression c = input(cg, Dim({3}, 2), test::test_values(6));
  Expression d = input(cg, Dim({3}, 3), test::test_values(9));
  check_throws_with<dim_error>([&] { squared_distance(a, b); }, {"squared_distance", "{3}", "{4}"});
  check_throws_with<dim_error>([&] { l1_distance(b, a); }, {"l1_distance", "{4}", "{3}"});
  check_throws_with<dim_error>([&] { huber_distance(a, b); }, {"huber_distance", "{3}", "{4}"});
  check_throws_with<dim_error>([&] { dot_product(a, b); }, {"dot_product", "{3}", "{4}"});
  check_throws_with<dim_error>([&] { binary_log_loss(a, b); }, {"binary_log_loss", "{3}", "{4}"});
  check_throws_with<dim_error>([&] { squared_distance(c, d); }, {"squared_distance", "{3X2}", "{3X3}"});
  check_throws_with<dim_error>([&] { dot_product(d, c); }, {"dot_product", "{3X3}", "{3X2}"});
  check_throws_with<std::invalid_argument>([&] { huber_distance(a, a, 0.f); }, {"huber_distance", "c must be > 0"});
  BOOST_CHECK_EQUAL(cg.size(), 4u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(binary_log_loss_op)

BOOST_AUTO_TEST_CASE(values) {
  // x = {0.5, 0.9, 0.2}, y = {1, 0, 0.5}:
  // -log 0.5 = 0.693147, -log 0.1 = 2.302585, -(0.5 log 0.2 + 0.5 log 0.8) = 0.916291
  TestInput x{Dim({3}), {0.5f, 0.9f, 0.2f}}, y{Dim({3}), {1.f, 0.f, 0.5f}};
  check_close(eval({x, y}, [](ComputationGraph&, const Xs& v) { return binary_log_loss(v[0], v[1]); }), {3.912023f});
  // a batch of 2 against a batch of 1
  TestInput xb{Dim({1}, 2), {0.5f, 0.9f}}, y1{Dim({1}), {1.f}};
  check_close(eval({xb, y1}, [](ComputationGraph&, const Xs& v) { return binary_log_loss(v[0], v[1]); }),
              {0.693147f, 0.105361f});
}

BOOST_AUTO_TEST_CASE(clamped_at_0_and_1) {
  // x = 0 with y = 1 and x = 1 with y = 0: log(0) reads as log(FLT_MIN) = -87.336544
  TestInput x{Dim({2}), {0.f, 1.f}}, y{Dim({2}), {1.f, 0.f}};
  Grads g = run(x, &y, [](Expression a, Expression b) { return binary_log_loss(a, b); });
  check_close(g.value, {2 * 87.336544f});
  BOOST_CHECK(std::isfinite(g.dx[0]) && g.dx[0] < -1e30f);  // -1 / FLT_MIN
  BOOST_CHECK(std::isfinite(g.dx[1]) && g.dx[1] > 1e6f);    // 1 / (1 - 0.9999999)
  // x = y at the ends: loss 0 and no gradient on x
  g = run({Dim({2}), {0.f, 1.f}}, &x, [](Expression a, Expression b) { return binary_log_loss(a, b); });
  check_close(g.value, {0.f});
  check_close(g.dx, {0.f, 0.f});
}

BOOST_AUTO_TEST_CASE(dynet_clamp_for_soft_targets) {
  // DyNet: an x of 0 or 1 against a target strictly between costs -log(FLT_MIN)
  // whole, not t * 87.34 + ...: (x = 0, t = 0.5) and (x = 1, t = 0.3) give 87.34 each.
  TestInput x{Dim({2}), {0.f, 1.f}}, y{Dim({2}), {0.5f, 0.3f}};
  check_close(eval({x, y}, [](ComputationGraph&, const Xs& v) { return binary_log_loss(v[0], v[1]); }),
              {2 * 87.336544f}, 1e-4);
}

BOOST_AUTO_TEST_CASE(gradients_by_hand) {
  // dx = -y / x + (1 - y) / (1 - x);  dy = log(1 - x) - log x
  TestInput x{Dim({3}), {0.5f, 0.9f, 0.2f}}, y{Dim({3}), {1.f, 0.f, 0.5f}};
  Grads g = run(x, &y, [](Expression a, Expression b) { return binary_log_loss(a, b); });
  check_close(g.dx, {-2.f, 10.f, -2.5f + 0.625f}, 1e-4);
  check_close(g.dy, {0.f, std::log(0.1f) - std::log(0.9f), std::log(0.8f) - std::log(0.2f)}, 1e-4);
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  std::vector<float> xv{0.2f, 0.7f, 0.5f, 0.9f, 0.3f, 0.6f}, yv{1.f, 0.f, 0.3f};
  check_gradients(m, {{Dim({3}, 2), xv}, {Dim({3}), yv}},
                  [](ComputationGraph&, const Xs& v) { return binary_log_loss(v[0], v[1]); });
  check_gradients(m, {{Dim({3}, 2), xv}, {Dim({3}, 2), {0.1f, 0.5f, 0.9f, 0.f, 1.f, 0.4f}}},
                  [](ComputationGraph&, const Xs& v) { return binary_log_loss(v[0], v[1]); });
  // through a logistic, as it is used
  Parameter p = m.add_parameters({3});
  p.set_value({0.3f, -0.7f, 1.1f});
  check_gradients(m, {{Dim({3}, 2), test::test_values(6)}}, [&](ComputationGraph& cg, const Xs& v) {
    return binary_log_loss(logistic(cmult(v[0], parameter(cg, p))), input(cg, Dim({3}), yv));
  });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(norms)

BOOST_AUTO_TEST_CASE(values_and_gradients_by_hand) {
  TestInput x{Dim({2}), {3.f, 4.f}};
  Grads g = run(x, nullptr, [](Expression a, Expression) { return squared_norm(a); });
  check_close(g.value, {25.f});
  check_close(g.dx, {6.f, 8.f});
  g = run(x, nullptr, [](Expression a, Expression) { return l2_norm(a); });
  check_close(g.value, {5.f});
  check_close(g.dx, {0.6f, 0.8f});
  // a batch; the zero vector has norm 0 and gets gradient 0 (no NaN)
  TestInput xb{Dim({2}, 3), {3.f, 4.f, 0.f, 0.f, -1.f, 0.f}};
  g = run(xb, nullptr, [](Expression a, Expression) { return l2_norm(a); });
  check_close(g.value, {5.f, 0.f, 1.f});
  check_close(g.dx, {0.6f, 0.8f, 0.f, 0.f, -1.f, 0.f});
  g = run(xb, nullptr, [](Expression a, Expression) { return squared_norm(a); });
  check_close(g.value, {25.f, 0.f, 1.f});
  check_close(g.dx, {6.f, 8.f, 0.f, 0.f, -2.f, 0.f});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = m.add_parameters({2, 3});
  p.set_value(test::test_values(6, 0.5f));
  check_gradients(m, {{Dim({2, 3}, 3), test::test_values(18)}},
                  [](ComputationGraph&, const Xs& v) { return squared_norm(v[0]); });
  check_gradients(m, {{Dim({2, 3}, 3), test::test_values(18)}},
                  [](ComputationGraph&, const Xs& v) { return l2_norm(v[0]); });
  check_gradients(m, {{Dim({2, 3}, 2), test::test_values(12, 0.1f)}},
                  [&](ComputationGraph& cg, const Xs& v) { return l2_norm(cmult(v[0], parameter(cg, p))); });
  check_gradients(m, {{Dim({1}), {-0.7f}}}, [](ComputationGraph&, const Xs& v) { return l2_norm(v[0]); });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(op_table_rows) {
  for (OpKind op : {OpKind::Hinge, OpKind::BinaryLogLoss, OpKind::SquaredDistance, OpKind::L1Distance,
                    OpKind::HuberDistance, OpKind::SquaredNorm, OpKind::L2Norm, OpKind::DotProduct})
    BOOST_CHECK_MESSAGE(op_info(op).batch == BatchKind::Never, op_name(op));
}
