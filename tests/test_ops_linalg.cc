#define BOOST_TEST_MODULE ops_linalg
#include "test_utils.h"

using namespace dynet_lite;
using test::iota;
using test::TestInput;

namespace {

using Xs = std::vector<Expression>;

std::vector<float> concat(std::vector<float> a, const std::vector<float>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// n x n matrices, `count` of them, with `diag` added on the diagonal: well
// conditioned for the gradient checks.
std::vector<float> shifted_matrices(unsigned n, unsigned count, float diag, float offset = 0.f) {
  std::vector<float> v = test::test_values(size_t(n) * n * count, offset);
  for (float& x : v) x *= 0.4f;
  for (unsigned b = 0; b < count; ++b)
    for (unsigned i = 0; i < n; ++i) v[b * n * n + i * n + i] += diag;
  return v;
}

// x {2,3,2} = 1..12, x[i,j,k] = 1 + i + 2j + 6k
const std::vector<float> kX = iota(12);

/// Gradient check of f(P + 0.2 x): P a new 2x2 parameter of `m` (batch 1) set to
/// `p_values`, x a batch of `bd` 2x2 inputs; returns the number of elements checked.
template <class F>
size_t check_parameter_plus_batch(ParameterCollection& m, const std::vector<float>& p_values, unsigned bd, F f) {
  Parameter p = m.add_parameters({2, 2});
  p.set_value(p_values);
  return test::check_gradients(m, {{Dim({2, 2}, bd), test::test_values(4 * bd)}},
                               [&](ComputationGraph& cg, const Xs& xs) { return f(parameter(cg, p) + 0.2f * xs[0]); });
}

}  // namespace

// ================================================================ contract3d_1d

BOOST_AUTO_TEST_CASE(contract3d_1d_values) {
  // y = [1, 2]: out[i,j] = x[i,j,0] + 2 x[i,j,1] = (1+i+2j) + 2 (7+i+2j) = 15 + 3i + 6j
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3, 2}), kX);
  Expression y = input(cg, Dim({2}), {1, 2});
  Expression out = contract3d_1d(x, y);
  BOOST_CHECK_EQUAL(out.dim(), Dim({2, 3}));
  test::check_close(as_vector(cg.forward(out)), {15, 18, 21, 24, 27, 30});
  Expression b = input(cg, Dim({2, 3}), {1, -1, 1, -1, 1, -1});
  test::check_close(as_vector(cg.forward(contract3d_1d(x, y, b))), {16, 17, 22, 23, 28, 29});
  // C = 1: a plain copy scaled by y
  Expression x1 = input(cg, Dim({2, 2, 1}), {1, 2, 3, 4});
  Expression y1 = input(cg, Dim({1}), {-2});
  test::check_close(as_vector(cg.forward(contract3d_1d(x1, y1))), {-2, -4, -6, -8});
}

BOOST_AUTO_TEST_CASE(contract3d_1d_batches) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3, 2}), kX);
  Expression y = input(cg, Dim({2}, 2), {1, 2, 1, 0});  // second: out = x[:,:,0]
  Expression out = contract3d_1d(x, y);
  BOOST_CHECK_EQUAL(out.dim(), Dim({2, 3}, 2));
  test::check_close(as_vector(cg.forward(out)), {15, 18, 21, 24, 27, 30, 1, 2, 3, 4, 5, 6});
  Expression b = input(cg, Dim({2, 3}, 2), concat(std::vector<float>(6, 0.f), std::vector<float>(6, 1.f)));
  test::check_close(as_vector(cg.forward(contract3d_1d(x, y, b))), {15, 18, 21, 24, 27, 30, 2, 3, 4, 5, 6, 7});
}

BOOST_AUTO_TEST_CASE(contract3d_1d_backward_values) {
  // loss = sum(out):  dx[i,j,k] = y[k],  dy[k] = sum_{ij} x[i,j,k] = 21 (k=0), 57 (k=1),  db = 1
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3, 2}), kX);
  Expression y = input(cg, Dim({2}), {1, 2});
  Expression b = input(cg, Dim({2, 3}), std::vector<float>(6, 0.f));
  Expression loss = sum_elems(contract3d_1d(x, y, b));
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(x.gradient()), {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2});
  test::check_close(as_vector(y.gradient()), {21, 57});
  test::check_close(as_vector(b.gradient()), std::vector<float>(6, 1.f));
}

BOOST_AUTO_TEST_CASE(contract3d_1d_gradients) {
  ParameterCollection m;
  Parameter px = m.add_parameters({2, 3, 4});
  Parameter pb = m.add_parameters({2, 3});
  px.set_value(test::test_values(24, 0.1f));
  pb.set_value(test::test_values(6, -0.2f));
  size_t n = test::check_gradients(m, {{Dim({4}, 3), test::test_values(12)}}, [&](ComputationGraph& cg, const Xs& xs) {
    return contract3d_1d(parameter(cg, px), xs[0], parameter(cg, pb));
  });
  BOOST_CHECK_EQUAL(n, 24u + 6u + 12u);
  ParameterCollection m2;
  // batched x, batch-1 y, batched b
  n = test::check_gradients(m2,
                            {{Dim({3, 2, 2}, 2), test::test_values(24)},
                             {Dim({2}), {0.5f, -0.7f}},
                             {Dim({3, 2}, 2), test::test_values(12, 0.3f)}},
                            [&](ComputationGraph&, const Xs& xs) { return contract3d_1d(xs[0], xs[1], xs[2]); });
  BOOST_CHECK_EQUAL(n, 24u + 2u + 12u);
}

BOOST_AUTO_TEST_CASE(contract3d_1d_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3, 4}), std::vector<float>(24, 1.f));
  Expression y3 = input(cg, Dim({3}), {1, 2, 3});
  test::check_throws_with<dim_error>([&] { contract3d_1d(x, y3); }, {"contract3d_1d", "{2,3,4}", "{3}", "C = 4"});
  Expression y4 = input(cg, Dim({4}), {1, 2, 3, 4});
  Expression b = input(cg, Dim({3, 2}), std::vector<float>(6, 1.f));
  test::check_throws_with<dim_error>([&] { contract3d_1d(x, y4, b); }, {"contract3d_1d", "bias", "{3,2}", "{2,3}"});
  Expression x4 = input(cg, Dim({2, 3, 4, 2}), std::vector<float>(48, 1.f));
  test::check_throws_with<dim_error>([&] { contract3d_1d(x4, y4); }, {"contract3d_1d", "{2,3,4,2}"});
  Expression xb = input(cg, Dim({2, 3, 4}, 2), std::vector<float>(48, 1.f));
  Expression yb = input(cg, Dim({4}, 3), std::vector<float>(12, 1.f));
  test::check_throws_with<dim_error>([&] { contract3d_1d(xb, yb); }, {"contract3d_1d", "{2,3,4X2}", "{4X3}"});
}

// ================================================================ contract3d_1d_1d

BOOST_AUTO_TEST_CASE(contract3d_1d_1d_values) {
  // y = [1, 2] contracts k: T[i,j] = 15 + 3i + 6j;  z = [1, 1, 2] contracts j:
  // out[i] = T[i,0] + T[i,1] + 2 T[i,2] = (15+3i) + (21+3i) + 2 (27+3i) = 90 + 12i
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3, 2}), kX);
  Expression y = input(cg, Dim({2}), {1, 2});
  Expression z = input(cg, Dim({3}), {1, 1, 2});
  Expression out = contract3d_1d_1d(x, y, z);
  BOOST_CHECK_EQUAL(out.dim(), Dim({2}));
  test::check_close(as_vector(cg.forward(out)), {90, 102});
  Expression b = input(cg, Dim({2}), {1, -1});
  test::check_close(as_vector(cg.forward(contract3d_1d_1d(x, y, z, b))), {91, 101});
  // batched z: the second picks column j = 1 of T: 21 + 3i
  Expression zb = input(cg, Dim({3}, 2), {1, 1, 2, 0, 1, 0});
  Expression ob = contract3d_1d_1d(x, y, zb);
  BOOST_CHECK_EQUAL(ob.dim(), Dim({2}, 2));
  test::check_close(as_vector(cg.forward(ob)), {90, 102, 21, 24});
}

BOOST_AUTO_TEST_CASE(contract3d_1d_1d_backward_values) {
  // loss = sum(out):  dx[i,j,k] = z[j] y[k];  dy[k] = sum_{ij} x[i,j,k] z[j];  dz[j] = sum_{ik} x[i,j,k] y[k]
  // dy[0] = (1+2) + (3+4) + 2 (5+6) = 32,  dy[1] = (7+8) + (9+10) + 2 (11+12) = 80
  // dz[j] = T[0,j] + T[1,j] = 33, 45, 57
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3, 2}), kX);
  Expression y = input(cg, Dim({2}), {1, 2});
  Expression z = input(cg, Dim({3}), {1, 1, 2});
  Expression b = input(cg, Dim({2}), {5, 5});
  Expression loss = sum_elems(contract3d_1d_1d(x, y, z, b));
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(x.gradient()), {1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 4, 4});
  test::check_close(as_vector(y.gradient()), {32, 80});
  test::check_close(as_vector(z.gradient()), {33, 45, 57});
  test::check_close(as_vector(b.gradient()), {1, 1});
}

BOOST_AUTO_TEST_CASE(contract3d_1d_1d_gradients) {
  ParameterCollection m;
  Parameter px = m.add_parameters({3, 2, 4});
  Parameter pb = m.add_parameters({3});
  px.set_value(test::test_values(24, 0.1f));
  pb.set_value({0.1f, -0.2f, 0.3f});
  size_t n = test::check_gradients(m, {{Dim({4}, 2), test::test_values(8)}, {Dim({2}, 2), test::test_values(4, 0.2f)}},
                                   [&](ComputationGraph& cg, const Xs& xs) {
                                     return contract3d_1d_1d(parameter(cg, px), xs[0], xs[1], parameter(cg, pb));
                                   });
  BOOST_CHECK_EQUAL(n, 24u + 3u + 8u + 4u);
  ParameterCollection m2;
  n = test::check_gradients(
      m2, {{Dim({2, 3, 2}, 2), test::test_values(24)}, {Dim({2}), {0.5f, -0.7f}}, {Dim({3}), {0.2f, 0.9f, -0.4f}}},
      [&](ComputationGraph&, const Xs& xs) { return contract3d_1d_1d(xs[0], xs[1], xs[2]); });
  BOOST_CHECK_EQUAL(n, 24u + 2u + 3u);
}

BOOST_AUTO_TEST_CASE(contract3d_1d_1d_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3, 4}), std::vector<float>(24, 1.f));
  Expression y = input(cg, Dim({4}), {1, 2, 3, 4});
  Expression z2 = input(cg, Dim({2}), {1, 2});
  test::check_throws_with<dim_error>([&] { contract3d_1d_1d(x, y, z2); },
                                     {"contract3d_1d_1d", "{2,3,4}", "z {2}", "B = 3"});
  Expression z = input(cg, Dim({3}), {1, 2, 3});
  test::check_throws_with<dim_error>([&] { contract3d_1d_1d(x, z, z); }, {"contract3d_1d_1d", "y {3}", "C = 4"});
  Expression b = input(cg, Dim({3}), {1, 2, 3});
  test::check_throws_with<dim_error>([&] { contract3d_1d_1d(x, y, z, b); }, {"contract3d_1d_1d", "bias", "{3}", "{2}"});
}

// ================================================================ inverse

BOOST_AUTO_TEST_CASE(inverse_values) {
  ComputationGraph cg;
  // [[4,7],[2,6]]^-1 = 1/10 [[6,-7],[-2,4]]
  Expression a = input(cg, Dim({2, 2}), {4, 2, 7, 6});
  test::check_close(as_vector(cg.forward(inverse(a))), {0.6f, -0.2f, -0.7f, 0.4f});
  // a zero on the diagonal needs a row exchange: [[2,0,0],[0,0,1],[0,3,0]]^-1 = [[.5,0,0],[0,0,1/3],[0,1,0]]
  Expression p = input(cg, Dim({3, 3}), {2, 0, 0, 0, 0, 3, 0, 1, 0});
  test::check_close(as_vector(cg.forward(inverse(p))), {0.5f, 0, 0, 0, 0, 1, 0, 1.f / 3, 0});
  // 1x1
  Expression s = input(cg, Dim({1, 1}), {4});
  test::check_close(as_vector(cg.forward(inverse(s))), {0.25f});
  // a batch: the second element is 2 I
  Expression b = input(cg, Dim({2, 2}, 2), {4, 2, 7, 6, 2, 0, 0, 2});
  Expression ib = inverse(b);
  BOOST_CHECK_EQUAL(ib.dim(), Dim({2, 2}, 2));
  test::check_close(as_vector(cg.forward(ib)), {0.6f, -0.2f, -0.7f, 0.4f, 0.5f, 0, 0, 0.5f});
  // x * inverse(x) = I
  test::check_close(as_vector(cg.forward(a * inverse(a))), {1, 0, 0, 1}, 1e-5);
}

BOOST_AUTO_TEST_CASE(inverse_backward_values) {
  // y = 1/x for 1x1:  dy/dx = -1/x^2 = -0.25 at x = 2
  // loss = sum(inverse(X)) for X = [[4,7],[2,6]]:  dX = -Y^T 1 1^T Y^T, Y^T 1 = column sums of Y as
  // a column: Y = [[.6,-.7],[-.2,.4]], Y^T 1 = (0.4, -0.3), 1^T Y^T = row sums of Y as a row = (-0.1, 0.2)
  // dX = -(0.4, -0.3)^T (-0.1, 0.2) = [[0.04, -0.08], [-0.03, 0.06]]
  ComputationGraph cg;
  Expression s = input(cg, Dim({1, 1}), {2});
  Expression a = input(cg, Dim({2, 2}), {4, 2, 7, 6});
  Expression loss = sum_elems(inverse(s)) + sum_elems(inverse(a));
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(s.gradient()), {-0.25f});
  test::check_close(as_vector(a.gradient()), {0.04f, -0.03f, -0.08f, 0.06f}, 1e-4);
}

BOOST_AUTO_TEST_CASE(inverse_gradients) {
  ParameterCollection m;
  size_t n = test::check_gradients(m, {{Dim({3, 3}, 2), shifted_matrices(3, 2, 2.f)}},
                                   [&](ComputationGraph&, const Xs& xs) { return inverse(xs[0]); });
  BOOST_CHECK_EQUAL(n, 18u);
  n = check_parameter_plus_batch(m, {1.5f, 0.3f, -0.4f, -1.2f}, 3, [](const Expression& e) { return inverse(e); });
  BOOST_CHECK_EQUAL(n, 4u + 12u);
}

BOOST_AUTO_TEST_CASE(inverse_errors) {
  ComputationGraph cg;
  Expression r = input(cg, Dim({2, 3}), std::vector<float>(6, 1.f));
  test::check_throws_with<dim_error>([&] { inverse(r); }, {"inverse", "{2,3}", "square"});
  Expression t = input(cg, Dim({2, 2, 2}), std::vector<float>(8, 1.f));
  test::check_throws_with<dim_error>([&] { inverse(t); }, {"inverse", "{2,2,2}", "square"});
  Expression sing = input(cg, Dim({2, 2}), {1, 2, 2, 4});
  Expression is = inverse(sing);
  test::check_throws_with<std::runtime_error>([&] { cg.forward(is); }, {"inverse", "{2,2}", "singular"});
  ComputationGraph cg2;
  Expression zb = input(cg2, Dim({2, 2}, 2), {1, 0, 0, 1, 0, 0, 0, 0});
  Expression iz = inverse(zb);
  test::check_throws_with<std::runtime_error>([&] { cg2.forward(iz); },
                                              {"inverse", "{2,2X2}", "singular", "batch element 1"});
}

// ================================================================ logdet

BOOST_AUTO_TEST_CASE(logdet_values) {
  ComputationGraph cg;
  Expression a = input(cg, Dim({2, 2}), {4, 2, 7, 6});  // det 10
  Expression y = logdet(a);
  BOOST_CHECK_EQUAL(y.dim(), Dim({1}));
  test::check_close(as_vector(cg.forward(y)), {std::log(10.f)});
  // negative determinants: log |det|.  [[0,1],[1,0]] has det -1, [[2,1],[1,-3]] det -7
  Expression perm = input(cg, Dim({2, 2}), {0, 1, 1, 0});
  test::check_close(as_vector(cg.forward(logdet(perm))), {0});
  Expression neg = input(cg, Dim({2, 2}), {2, 1, 1, -3});
  test::check_close(as_vector(cg.forward(logdet(neg))), {std::log(7.f)});
  // 1x1 and a batch: diag(2, 3, 4) has det 24
  Expression s = input(cg, Dim({1, 1}), {0.5f});
  test::check_close(as_vector(cg.forward(logdet(s))), {std::log(0.5f)});
  Expression b = input(cg, Dim({3, 3}, 2), {2, 0, 0, 0, 3, 0, 0, 0, 4, 1, 0, 0, 0, 1, 0, 0, 0, 1});
  Expression yb = logdet(b);
  BOOST_CHECK_EQUAL(yb.dim(), Dim({1}, 2));
  test::check_close(as_vector(cg.forward(yb)), {std::log(24.f), 0});
}

BOOST_AUTO_TEST_CASE(logdet_backward_values) {
  // d log|det X| / dX = X^{-T}: for [[4,7],[2,6]], X^{-1} = [[.6,-.7],[-.2,.4]], so
  // dX = [[.6,-.2],[-.7,.4]];  for the negative-determinant [[2,1],[1,-3]]: X^{-T} = 1/7 [[3,1],[1,-2]]
  ComputationGraph cg;
  Expression a = input(cg, Dim({2, 2}), {4, 2, 7, 6});
  Expression neg = input(cg, Dim({2, 2}), {2, 1, 1, -3});
  Expression loss = logdet(a) + logdet(neg);
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(a.gradient()), {0.6f, -0.7f, -0.2f, 0.4f}, 1e-5);
  test::check_close(as_vector(neg.gradient()), {3.f / 7, 1.f / 7, 1.f / 7, -2.f / 7}, 1e-5);
}

BOOST_AUTO_TEST_CASE(logdet_gradients) {
  ParameterCollection m;
  size_t n = test::check_gradients(m, {{Dim({3, 3}, 2), shifted_matrices(3, 2, 1.5f)}},
                                   [&](ComputationGraph&, const Xs& xs) { return logdet(xs[0]); });
  BOOST_CHECK_EQUAL(n, 18u);
  // a negative determinant (one negative diagonal entry)
  n = test::check_gradients(m, {{Dim({2, 2}), {-1.5f, 0.2f, 0.4f, 1.1f}}},
                            [&](ComputationGraph&, const Xs& xs) { return logdet(xs[0]); });
  BOOST_CHECK_EQUAL(n, 4u);
  n = check_parameter_plus_batch(m, {1.5f, 0.3f, -0.4f, 1.2f}, 2, [](const Expression& e) { return logdet(e); });
  BOOST_CHECK_EQUAL(n, 4u + 8u);
}

BOOST_AUTO_TEST_CASE(logdet_errors) {
  ComputationGraph cg;
  Expression r = input(cg, Dim({3, 2}), std::vector<float>(6, 1.f));
  test::check_throws_with<dim_error>([&] { logdet(r); }, {"logdet", "{3,2}", "square"});
  Expression sing = input(cg, Dim({3, 3}), {1, 2, 3, 2, 4, 6, 0, 1, 5});
  Expression y = logdet(sing);
  test::check_throws_with<std::runtime_error>([&] { cg.forward(y); }, {"logdet", "{3,3}", "singular"});
}

// ================================================================ trace_of_product

BOOST_AUTO_TEST_CASE(trace_of_product_values) {
  // tr([[1,2],[3,4]] [[5,6],[7,8]]^T) = 1*5 + 2*6 + 3*7 + 4*8 = 70
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 2}), {1, 3, 2, 4});
  Expression y = input(cg, Dim({2, 2}), {5, 7, 6, 8});
  Expression t = trace_of_product(x, y);
  BOOST_CHECK_EQUAL(t.dim(), Dim({1}));
  test::check_close(as_vector(cg.forward(t)), {70});
  // non-square and vectors
  Expression a = input(cg, Dim({2, 3}), {1, 2, 3, 4, 5, 6});
  Expression b = input(cg, Dim({2, 3}), {1, 0, 0, 1, 1, -1});
  test::check_close(as_vector(cg.forward(trace_of_product(a, b))), {1 + 4 + 5 - 6});
  Expression u = input(cg, Dim({1}), {3});
  test::check_close(as_vector(cg.forward(trace_of_product(u, u))), {9});
  // batch 1 against batch 2
  Expression yb = input(cg, Dim({2, 2}, 2), {5, 7, 6, 8, 1, 0, 0, 1});
  Expression tb = trace_of_product(x, yb);
  BOOST_CHECK_EQUAL(tb.dim(), Dim({1}, 2));
  test::check_close(as_vector(cg.forward(tb)), {70, 5});
}

BOOST_AUTO_TEST_CASE(trace_of_product_gradients) {
  ParameterCollection m;
  Parameter p = m.add_parameters({3, 2});
  p.set_value(test::test_values(6, 0.2f));
  size_t n = test::check_gradients(
      m, {{Dim({3, 2}, 3), test::test_values(18)}},
      [&](ComputationGraph& cg, const Xs& xs) { return trace_of_product(parameter(cg, p), xs[0]); });
  BOOST_CHECK_EQUAL(n, 6u + 18u);
  // the same node on both sides: d sum(x^2) = 2x
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 2}), {1, -2, 3, 0.5f});
  Expression t = trace_of_product(x, x);
  cg.forward(t);
  cg.backward(t, true);
  test::check_close(as_vector(x.gradient()), {2, -4, 6, 1});
}

BOOST_AUTO_TEST_CASE(trace_of_product_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 2}), {1, 2, 3, 4});
  Expression y = input(cg, Dim({2, 3}), std::vector<float>(6, 1.f));
  test::check_throws_with<dim_error>([&] { trace_of_product(x, y); }, {"trace_of_product", "{2,2}", "{2,3}"});
  Expression xb = input(cg, Dim({2, 2}, 2), std::vector<float>(8, 1.f));
  Expression yb = input(cg, Dim({2, 2}, 3), std::vector<float>(12, 1.f));
  test::check_throws_with<dim_error>([&] { trace_of_product(xb, yb); }, {"trace_of_product", "{2,2X2}", "{2,2X3}"});
}

// ================================================================ weight_norm

BOOST_AUTO_TEST_CASE(weight_norm_values) {
  // w = [3, 4], |w| = 5, g = 2: y = 2 [0.6, 0.8]
  ComputationGraph cg;
  Expression w = input(cg, Dim({2}), {3, 4});
  Expression g = input(cg, Dim({1}), {2});
  Expression y = weight_norm(w, g);
  BOOST_CHECK_EQUAL(y.dim(), Dim({2}));
  test::check_close(as_vector(cg.forward(y)), {1.2f, 1.6f});
  // a matrix is normalised as a whole (Frobenius norm): [[1,2],[2,4]] has norm 5
  Expression wm = input(cg, Dim({2, 2}), {1, 2, 2, 4});
  Expression one = input(cg, Dim({1}), {1});
  test::check_close(as_vector(cg.forward(weight_norm(wm, one))), {0.2f, 0.4f, 0.4f, 0.8f});
  // each batch element on its own; batch-1 g against batched w, and batched g
  Expression wb = input(cg, Dim({2}, 2), {3, 4, 0, -5});
  test::check_close(as_vector(cg.forward(weight_norm(wb, g))), {1.2f, 1.6f, 0, -2});
  Expression gb = input(cg, Dim({1}, 2), {2, -1});
  test::check_close(as_vector(cg.forward(weight_norm(wb, gb))), {1.2f, 1.6f, 0, 1});
  test::check_close(as_vector(cg.forward(weight_norm(w, gb))), {1.2f, 1.6f, -0.6f, -0.8f});
  // length 1: sign(w) g
  Expression w1 = input(cg, Dim({1}), {-7});
  test::check_close(as_vector(cg.forward(weight_norm(w1, g))), {-2});
}

BOOST_AUTO_TEST_CASE(weight_norm_backward_values) {
  // loss = y[0] with w = [3,4], g = 2:  dg = w0 / |w| = 0.6;
  // dw = g/|w| (e0 - w0 w / |w|^2) = 0.4 ([1,0] - 0.12 [3,4]) = [0.256, -0.192]
  ComputationGraph cg;
  Expression w = input(cg, Dim({2}), {3, 4});
  Expression g = input(cg, Dim({1}), {2});
  Expression loss = pick(weight_norm(w, g), 0u);
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(g.gradient()), {0.6f});
  test::check_close(as_vector(w.gradient()), {0.256f, -0.192f}, 1e-5);
}

BOOST_AUTO_TEST_CASE(weight_norm_gradients) {
  ParameterCollection m;
  Parameter pw = m.add_parameters({3, 2});
  Parameter pg = m.add_parameters({1});
  pw.set_value(test::test_values(6, 0.1f));
  pg.set_value({1.3f});
  size_t n = test::check_gradients(
      m, {}, [&](ComputationGraph& cg, const Xs&) { return weight_norm(parameter(cg, pw), parameter(cg, pg)); });
  BOOST_CHECK_EQUAL(n, 7u);
  // batched w against a batch-1 g parameter, and a batched g input
  n = test::check_gradients(m, {{Dim({4}, 3), test::test_values(12)}},
                            [&](ComputationGraph& cg, const Xs& xs) { return weight_norm(xs[0], parameter(cg, pg)); });
  BOOST_CHECK_EQUAL(n, 6u + 1u + 12u);
  ParameterCollection m2;
  n = test::check_gradients(m2, {{Dim({3}), {0.5f, -1.f, 2.f}}, {Dim({1}, 2), {0.7f, -1.4f}}},
                            [&](ComputationGraph&, const Xs& xs) { return weight_norm(xs[0], xs[1]); });
  BOOST_CHECK_EQUAL(n, 3u + 2u);
}

BOOST_AUTO_TEST_CASE(weight_norm_errors) {
  ComputationGraph cg;
  Expression w = input(cg, Dim({3}), {1, 2, 3});
  Expression g2 = input(cg, Dim({2}), {1, 2});
  test::check_throws_with<dim_error>([&] { weight_norm(w, g2); }, {"weight_norm", "g {2}", "scalar", "{3}"});
  Expression wb = input(cg, Dim({3}, 2), std::vector<float>(6, 1.f));
  Expression gb = input(cg, Dim({1}, 3), {1, 2, 3});
  test::check_throws_with<dim_error>([&] { weight_norm(wb, gb); }, {"weight_norm", "{3X2}", "{1X3}"});
  Expression zero = input(cg, Dim({3}), {0, 0, 0});
  Expression g = input(cg, Dim({1}), {1});
  Expression y = weight_norm(zero, g);
  test::check_throws_with<std::runtime_error>([&] { cg.forward(y); }, {"weight_norm", "{3}", "zeros"});
}

// ================================================================ autobatching

BOOST_AUTO_TEST_CASE(linalg_family_autobatched_matches_plain) {
  auto run = [](int strategy, std::vector<float>* grad) {
    ParameterCollection m;
    Parameter px = m.add_parameters({2, 3, 2});
    Parameter pa = m.add_parameters({2, 2});
    Parameter pg = m.add_parameters({1});
    px.set_value(test::test_values(12, 0.1f));
    pa.set_value({1.5f, 0.2f, -0.3f, 1.1f});
    pg.set_value({0.8f});
    ComputationGraph cg;
    cg.set_autobatch(strategy);
    std::vector<Expression> losses;
    for (unsigned k = 0; k < 3; ++k) {
      Expression y = input(cg, Dim({2}), test::test_values(2, 0.1f * k));
      Expression z = input(cg, Dim({3}), test::test_values(3, -0.1f * k));
      Expression c1 = contract3d_1d(parameter(cg, px), y);
      Expression c2 = contract3d_1d_1d(parameter(cg, px), y, z);
      Expression a = parameter(cg, pa) + 0.1f * input(cg, Dim({2, 2}), test::test_values(4, 0.2f * k));
      Expression l = logdet(a) + sum_elems(inverse(a)) +
                     trace_of_product(a, reshape(c1, Dim({2, 3})) * transpose(reshape(c1, Dim({2, 3}))));
      losses.push_back(l + sum_elems(weight_norm(c2, parameter(cg, pg))));
    }
    Expression loss = sum(losses);
    float value = as_scalar(cg.forward(loss));
    cg.backward(loss);
    *grad = concat(concat(as_vector(px.get_storage().g), as_vector(pa.get_storage().g)), as_vector(pg.get_storage().g));
    return value;
  };
  test::check_autobatch_agrees(run);
}
