#define BOOST_TEST_MODULE ops_matrix
#include "dynet_lite/backends/cpu/gemm.h"
#include "dynet_lite/backends/cpu/transposed_weights.h"
#include "dynet_lite/backends/cpu/weight_grads.h"
#include "dynet_lite/core/arena.h"
#include "dynet_lite/core/exec_context.h"
#include "test_utils.h"

using namespace dynet_lite;
using test::TestInput;

namespace {

using Xs = std::vector<Expression>;

// W = [[1,2,3],[4,5,6]] stored column-major.
const std::vector<float> kW = {1, 4, 2, 5, 3, 6};
// W1 = [[0,1,0],[1,0,0]].
const std::vector<float> kW1 = {0, 1, 1, 0, 0, 0};

std::vector<float> concat(std::vector<float> a, const std::vector<float>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

// ---------------------------------------------------------------- matmul values

BOOST_AUTO_TEST_CASE(matmul_matrix_vector) {
  // [[1,2,3],[4,5,6]] * [1,-1,2] = [1-2+6, 4-5+12]
  ComputationGraph cg;
  Expression w = input(cg, Dim({2, 3}), kW);
  Expression x = input(cg, Dim({3}), {1, -1, 2});
  Expression y = w * x;
  BOOST_CHECK_EQUAL(y.dim(), Dim({2}));
  test::check_close(as_vector(cg.forward(y)), {5, 11});
}

BOOST_AUTO_TEST_CASE(matmul_column_matrix_keeps_two_dims) {
  ComputationGraph cg;
  Expression w = input(cg, Dim({2, 3}), kW);
  Expression x = input(cg, Dim({3, 1}), {1, -1, 2});
  BOOST_CHECK_EQUAL((w * x).dim(), Dim({2, 1}));
  test::check_close(as_vector(cg.forward(w * x)), {5, 11});
}

BOOST_AUTO_TEST_CASE(matmul_matrix_matrix) {
  // [[1,2],[3,4]] * [[1,0,2],[0,1,-1]] = [[1,2,0],[3,4,2]]
  ComputationGraph cg;
  Expression a = input(cg, Dim({2, 2}), {1, 3, 2, 4});
  Expression b = input(cg, Dim({2, 3}), {1, 0, 0, 1, 2, -1});
  Expression y = a * b;
  BOOST_CHECK_EQUAL(y.dim(), Dim({2, 3}));
  test::check_close(as_vector(cg.forward(y)), {1, 3, 2, 4, 0, 2});
}

BOOST_AUTO_TEST_CASE(matmul_shared_matrix_batched_vector) {
  // x0 = [1,-1,2] -> [5,11];  x1 = [1,1,1] -> [6,15]
  ComputationGraph cg;
  Expression w = input(cg, Dim({2, 3}), kW);
  Expression x = input(cg, Dim({3}, 2), {1, -1, 2, 1, 1, 1});
  Expression y = w * x;
  BOOST_CHECK_EQUAL(y.dim(), Dim({2}, 2));
  test::check_close(as_vector(cg.forward(y)), {5, 11, 6, 15});
}

BOOST_AUTO_TEST_CASE(matmul_shared_matrix_batched_matrix) {
  // A = [[1,2],[3,4]];  A * I = A,  A * [[0,1],[1,0]] = [[2,1],[4,3]]
  ComputationGraph cg;
  Expression a = input(cg, Dim({2, 2}), {1, 3, 2, 4});
  Expression b = input(cg, Dim({2, 2}, 2), {1, 0, 0, 1, 0, 1, 1, 0});
  Expression y = a * b;
  BOOST_CHECK_EQUAL(y.dim(), Dim({2, 2}, 2));
  test::check_close(as_vector(cg.forward(y)), {1, 3, 2, 4, 2, 4, 1, 3});
}

BOOST_AUTO_TEST_CASE(matmul_both_batched) {
  // W0 x0 = [5,11];  W1 = [[0,1,0],[1,0,0]], x1 = [3,4,5] -> [4,3]
  ComputationGraph cg;
  Expression w = input(cg, Dim({2, 3}, 2), concat(kW, kW1));
  Expression x = input(cg, Dim({3}, 2), {1, -1, 2, 3, 4, 5});
  Expression y = w * x;
  BOOST_CHECK_EQUAL(y.dim(), Dim({2}, 2));
  test::check_close(as_vector(cg.forward(y)), {5, 11, 4, 3});
}

BOOST_AUTO_TEST_CASE(matmul_batched_matrix_shared_vector) {
  // W0 x = [5,11];  W1 x = [-1,1] with x = [1,-1,2]
  ComputationGraph cg;
  Expression w = input(cg, Dim({2, 3}, 2), concat(kW, kW1));
  Expression x = input(cg, Dim({3}), {1, -1, 2});
  Expression y = w * x;
  BOOST_CHECK_EQUAL(y.dim(), Dim({2}, 2));
  test::check_close(as_vector(cg.forward(y)), {5, 11, -1, 1});
}

BOOST_AUTO_TEST_CASE(matmul_length_one) {
  // [2] * [3] (1x1 times 1) and a row times a column: [1,2,3] . [4,5,6] = 32
  ComputationGraph cg;
  Expression a = input(cg, Dim({1, 1}), {2});
  Expression b = input(cg, Dim({1}), {3});
  test::check_close(as_vector(cg.forward(a * b)), {6});
  Expression r = input(cg, Dim({1, 3}), {1, 2, 3});
  Expression c = input(cg, Dim({3}), {4, 5, 6});
  BOOST_CHECK_EQUAL((r * c).dim(), Dim({1}));
  test::check_close(as_vector(cg.forward(r * c)), {32});
  // a column times a row: the outer product
  Expression c2 = input(cg, Dim({2, 1}), {1, 2});
  Expression r2 = input(cg, Dim({1, 2}), {3, 4});
  test::check_close(as_vector(cg.forward(c2 * r2)), {3, 6, 4, 8});
}

BOOST_AUTO_TEST_CASE(matmul_backward_values) {
  // loss = sum(W x):  dW[i][j] = x[j],  dx[j] = sum_i W[i][j]
  ParameterCollection m;
  Parameter pw = m.add_parameters({2, 3});
  pw.set_value(kW);
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {1, -1, 2});
  Expression loss = sum_elems(parameter(cg, pw) * x);
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(pw.get_storage().g), {1, 1, -1, -1, 2, 2});
  test::check_close(as_vector(x.gradient()), {5, 7, 9});
}

BOOST_AUTO_TEST_CASE(matmul_shared_weight_gradient_sums_batch) {
  // loss = sum over the batch of sum(W x_b):  dW[i][j] = sum_b x_b[j]
  ParameterCollection m;
  Parameter pw = m.add_parameters({2, 3});
  pw.set_value(kW);
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}, 2), {1, -1, 2, 3, 4, 5});
  Expression loss = sum_batches(sum_elems(parameter(cg, pw) * x));
  cg.forward(loss);
  cg.backward(loss);
  test::check_close(as_vector(pw.get_storage().g), {4, 4, 3, 3, 7, 7});
}

// ---------------------------------------------------------------- matmul gradients

BOOST_AUTO_TEST_CASE(matmul_gradients_parameter_and_input) {
  ParameterCollection m;
  Parameter pw = m.add_parameters({4, 3});
  pw.set_value(test::test_values(12, 0.1f));
  size_t n = test::check_gradients(m, {{Dim({3}), test::test_values(3, -0.2f)}},
                                   [&](ComputationGraph& cg, const Xs& xs) { return parameter(cg, pw) * xs[0]; });
  BOOST_CHECK_EQUAL(n, 15u);
}

BOOST_AUTO_TEST_CASE(matmul_gradients_shared_weight_batched_input) {
  ParameterCollection m;
  Parameter pw = m.add_parameters({4, 3});
  pw.set_value(test::test_values(12, 0.1f));
  size_t n = test::check_gradients(m, {{Dim({3}, 3), test::test_values(9, -0.2f)}},
                                   [&](ComputationGraph& cg, const Xs& xs) { return tanh(parameter(cg, pw) * xs[0]); });
  BOOST_CHECK_EQUAL(n, 21u);
}

BOOST_AUTO_TEST_CASE(matmul_gradients_both_batched) {
  ParameterCollection m;
  size_t n = test::check_gradients(m, {{Dim({2, 3}, 3), test::test_values(18)}, {Dim({3, 2}, 3), test::test_values(18, 0.3f)}},
                                   [&](ComputationGraph&, const Xs& xs) { return xs[0] * xs[1]; });
  BOOST_CHECK_EQUAL(n, 36u);
}

BOOST_AUTO_TEST_CASE(matmul_gradients_batched_weight_shared_input) {
  ParameterCollection m;
  size_t n = test::check_gradients(m, {{Dim({2, 3}, 3), test::test_values(18)}, {Dim({3, 2}), test::test_values(6, 0.3f)}},
                                   [&](ComputationGraph&, const Xs& xs) { return xs[0] * xs[1]; });
  BOOST_CHECK_EQUAL(n, 24u);
}

BOOST_AUTO_TEST_CASE(matmul_gradients_matrix_matrix_shared_weight) {
  ParameterCollection m;
  Parameter pw = m.add_parameters({3, 4});
  pw.set_value(test::test_values(12, 0.1f));
  size_t n = test::check_gradients(m, {{Dim({4, 2}, 2), test::test_values(16, -0.1f)}},
                                   [&](ComputationGraph& cg, const Xs& xs) { return parameter(cg, pw) * xs[0]; });
  BOOST_CHECK_EQUAL(n, 28u);
}

BOOST_AUTO_TEST_CASE(matmul_gradients_same_node_both_sides) {
  // y = A A: both arguments are one node, so both gradients add up in dA.
  ParameterCollection m;
  size_t n = test::check_gradients(m, {{Dim({3, 3}), test::test_values(9)}},
                                   [&](ComputationGraph&, const Xs& xs) { return xs[0] * xs[0]; });
  BOOST_CHECK_EQUAL(n, 9u);
}

BOOST_AUTO_TEST_CASE(matmul_gradients_chain) {
  // tanh(W2 tanh(W1 x)), the shape of a small network
  ParameterCollection m;
  Parameter w1 = m.add_parameters({4, 3}), w2 = m.add_parameters({2, 4});
  w1.set_value(test::test_values(12, 0.1f));
  w2.set_value(test::test_values(8, -0.1f));
  size_t n = test::check_gradients(m, {{Dim({3}, 2), test::test_values(6)}},
                                   [&](ComputationGraph& cg, const Xs& xs) {
                                     return tanh(parameter(cg, w2) * tanh(parameter(cg, w1) * xs[0]));
                                   });
  BOOST_CHECK_EQUAL(n, 26u);
}

// Products against a naive triple loop, at shapes that reach every remainder of
// the small-size kernels and the blocked (Eigen) path above their threshold.
BOOST_AUTO_TEST_CASE(matmul_against_naive_loops) {
  struct Shape {
    unsigned m, k, n, wb, xb;  // W m x k (batch wb), X k x n (batch xb)
  };
  for (Shape s : {Shape{1, 1, 1, 1, 1}, Shape{3, 5, 1, 1, 1}, Shape{4, 3, 2, 1, 3}, Shape{5, 7, 1, 1, 2},
                  Shape{8, 8, 1, 1, 1}, Shape{9, 4, 3, 2, 2}, Shape{13, 6, 1, 3, 1}, Shape{17, 11, 2, 1, 4},
                  Shape{40, 30, 1, 1, 5}, Shape{33, 20, 9, 2, 2}, Shape{64, 64, 1, 1, 1}, Shape{70, 50, 3, 1, 1}}) {
    BOOST_TEST_CONTEXT("W {" << s.m << "," << s.k << "X" << s.wb << "} X {" << s.k << "," << s.n << "X" << s.xb << "}") {
      const unsigned B = std::max(s.wb, s.xb);
      std::vector<float> wv = test::test_values(s.m * s.k * s.wb, 0.1f), xv = test::test_values(s.k * s.n * s.xb, -0.2f);
      std::vector<float> cv = test::test_values(s.m * s.n * B, 0.3f);  // the loss weights = dy
      ComputationGraph cg;
      Expression w = input(cg, Dim({s.m, s.k}, s.wb), wv);
      Expression x = input(cg, Dim({s.k, s.n}, s.xb), xv);
      Expression y = w * x;
      Expression loss = sum_batches(sum_elems(cmult(y, input(cg, Dim({s.m, s.n}, B), cv))));
      std::vector<float> got = as_vector(cg.forward(y));
      cg.backward(loss, true);
      std::vector<float> gw = as_vector(w.gradient()), gx = as_vector(x.gradient());
      std::vector<float> want(s.m * s.n * B, 0.f), want_gw(wv.size(), 0.f), want_gx(xv.size(), 0.f);
      for (unsigned b = 0; b < B; ++b) {
        const size_t wo = (s.wb == 1 ? 0 : b) * s.m * s.k, xo = (s.xb == 1 ? 0 : b) * s.k * s.n, yo = b * s.m * s.n;
        for (unsigned i = 0; i < s.m; ++i)
          for (unsigned j = 0; j < s.n; ++j)
            for (unsigned p = 0; p < s.k; ++p) {
              want[yo + i + j * s.m] += wv[wo + i + p * s.m] * xv[xo + p + j * s.k];
              want_gw[wo + i + p * s.m] += cv[yo + i + j * s.m] * xv[xo + p + j * s.k];
              want_gx[xo + p + j * s.k] += wv[wo + i + p * s.m] * cv[yo + i + j * s.m];
            }
      }
      test::check_close(got, want, 1e-5);
      test::check_close(gw, want_gw, 1e-5);
      test::check_close(gx, want_gx, 1e-5);
    }
  }
}

BOOST_AUTO_TEST_CASE(affine_against_naive_loops) {
  // b {m} (batch 1) + W {m,k} x {k,n}XB + W2 {m,k}XB x2 {k,n}: small and blocked sizes
  for (unsigned m : {3u, 8u, 37u})
    for (unsigned k : {5u, 8u, 29u}) {
      const unsigned n = 2, B = 3;
      BOOST_TEST_CONTEXT("m " << m << " k " << k) {
        std::vector<float> bv = test::test_values(m, 0.5f), wv = test::test_values(m * k, 0.1f),
                           xv = test::test_values(k * n * B, -0.2f), w2v = test::test_values(m * k * B, 0.2f),
                           x2v = test::test_values(k * n, 0.4f);
        ComputationGraph cg;
        Expression y = affine_transform({input(cg, Dim({m}), bv), input(cg, Dim({m, k}), wv),
                                         input(cg, Dim({k, n}, B), xv), input(cg, Dim({m, k}, B), w2v),
                                         input(cg, Dim({k, n}), x2v)});
        BOOST_CHECK_EQUAL(y.dim(), Dim({m, n}, B));
        std::vector<float> want(m * n * B);
        for (unsigned b = 0; b < B; ++b)
          for (unsigned i = 0; i < m; ++i)
            for (unsigned j = 0; j < n; ++j) {
              float acc = bv[i];
              for (unsigned p = 0; p < k; ++p)
                acc += wv[i + p * m] * xv[b * k * n + p + j * k] + w2v[b * m * k + i + p * m] * x2v[p + j * k];
              want[b * m * n + i + j * m] = acc;
            }
        test::check_close(as_vector(cg.forward(y)), want, 1e-5);
      }
    }
}

BOOST_AUTO_TEST_CASE(matmul_gradients_blocked_path) {
  // 17 x 16 x 16 multiply-adds: above the small-kernel threshold.  The loss is
  // linear in each element, so a large step is exact and keeps float rounding of
  // the big sums out of the differences.
  ParameterCollection m;
  Parameter pw = m.add_parameters({17, 16});
  pw.set_value(test::test_values(272, 0.1f));
  size_t n = test::check_gradients(m, {{Dim({16}, 16), test::test_values(256, -0.2f)}},
                                   [&](ComputationGraph& cg, const Xs& xs) { return parameter(cg, pw) * xs[0]; }, 0.05f);
  BOOST_CHECK_EQUAL(n, 528u);
  ParameterCollection m2;
  n = test::check_gradients(m2, {{Dim({17, 16}, 2), test::test_values(544)}, {Dim({16, 16}, 2), test::test_values(512, 0.3f)}},
                            [&](ComputationGraph&, const Xs& xs) { return xs[0] * xs[1]; }, 0.05f);
  BOOST_CHECK_EQUAL(n, 1056u);
}

// ---------------------------------------------------------------- matmul errors

BOOST_AUTO_TEST_CASE(matmul_inner_dims_mismatch) {
  ComputationGraph cg;
  Expression w = input(cg, Dim({32, 100}), std::vector<float>(3200, 0.f));
  Expression x = input(cg, Dim({50}), std::vector<float>(50, 0.f));
  test::check_throws_with<dim_error>([&] { (void)(w * x); },
                                     {"matmul", "W {32,100} cannot multiply x {50}", "inner dims 100 != 50"});
}

BOOST_AUTO_TEST_CASE(matmul_more_than_two_dims) {
  ComputationGraph cg;
  Expression w = input(cg, Dim({2, 3, 4}), std::vector<float>(24, 0.f));
  Expression x = input(cg, Dim({3}), {1, 2, 3});
  test::check_throws_with<dim_error>([&] { (void)(w * x); }, {"matmul", "{2,3,4}", "at most 2 dimensions"});
  test::check_throws_with<dim_error>([&] { (void)(x * w); }, {"matmul", "{2,3,4}"});
}

BOOST_AUTO_TEST_CASE(matmul_batch_mismatch) {
  ComputationGraph cg;
  Expression w = input(cg, Dim({2, 3}, 2), std::vector<float>(12, 0.f));
  Expression x = input(cg, Dim({3}, 3), std::vector<float>(9, 0.f));
  test::check_throws_with<dim_error>([&] { (void)(w * x); }, {"matmul", "{2,3X2}", "{3X3}", "batch sizes 2 and 3"});
}

// ---------------------------------------------------------------- affine_transform

BOOST_AUTO_TEST_CASE(affine_single_term) {
  // [1,2] + [5,11]
  ComputationGraph cg;
  Expression b = input(cg, Dim({2}), {1, 2});
  Expression w = input(cg, Dim({2, 3}), kW);
  Expression x = input(cg, Dim({3}), {1, -1, 2});
  Expression y = affine_transform({b, w, x});
  BOOST_CHECK_EQUAL(y.dim(), Dim({2}));
  test::check_close(as_vector(cg.forward(y)), {6, 13});
}

BOOST_AUTO_TEST_CASE(affine_two_terms_and_vector_overload) {
  // [6,13] + 2I [1,1] = [8,15]
  ComputationGraph cg;
  Expression b = input(cg, Dim({2}), {1, 2});
  Expression w = input(cg, Dim({2, 3}), kW);
  Expression x = input(cg, Dim({3}), {1, -1, 2});
  Expression w2 = input(cg, Dim({2, 2}), {2, 0, 0, 2});
  Expression x2 = input(cg, Dim({2}), {1, 1});
  test::check_close(as_vector(cg.forward(affine_transform({b, w, x, w2, x2}))), {8, 15});
  test::check_close(as_vector(cg.forward(affine_transform(std::vector<Expression>{b, w, x, w2, x2}))), {8, 15});
}

BOOST_AUTO_TEST_CASE(affine_bias_only) {
  ComputationGraph cg;
  Expression b = input(cg, Dim({2}), {1, 2});
  test::check_close(as_vector(cg.forward(affine_transform({b}))), {1, 2});
}

BOOST_AUTO_TEST_CASE(affine_column_bias_on_matrix) {
  // W [[1,1],[-1,1],[2,1]] = [[5,6],[11,15]];  + [1,2] in every column
  ComputationGraph cg;
  Expression b = input(cg, Dim({2}), {1, 2});
  Expression w = input(cg, Dim({2, 3}), kW);
  Expression x = input(cg, Dim({3, 2}), {1, -1, 2, 1, 1, 1});
  Expression y = affine_transform({b, w, x});
  BOOST_CHECK_EQUAL(y.dim(), Dim({2, 2}));
  test::check_close(as_vector(cg.forward(y)), {6, 13, 7, 17});
}

BOOST_AUTO_TEST_CASE(affine_full_matrix_bias) {
  ComputationGraph cg;
  Expression b = input(cg, Dim({2, 2}), {1, 2, 3, 4});
  Expression w = input(cg, Dim({2, 3}), kW);
  Expression x = input(cg, Dim({3, 2}), {1, -1, 2, 1, 1, 1});
  test::check_close(as_vector(cg.forward(affine_transform({b, w, x}))), {6, 13, 9, 19});
}

BOOST_AUTO_TEST_CASE(affine_batched_bias_and_input) {
  // x0 -> [5,11] + [1,2];  x1 -> [6,15] + [10,20]
  ComputationGraph cg;
  Expression b = input(cg, Dim({2}, 2), {1, 2, 10, 20});
  Expression w = input(cg, Dim({2, 3}), kW);
  Expression x = input(cg, Dim({3}, 2), {1, -1, 2, 1, 1, 1});
  Expression y = affine_transform({b, w, x});
  BOOST_CHECK_EQUAL(y.dim(), Dim({2}, 2));
  test::check_close(as_vector(cg.forward(y)), {6, 13, 16, 35});
}

BOOST_AUTO_TEST_CASE(affine_unbatched_bias_batched_input) {
  ComputationGraph cg;
  Expression b = input(cg, Dim({2}), {1, 2});
  Expression w = input(cg, Dim({2, 3}), kW);
  Expression x = input(cg, Dim({3}, 2), {1, -1, 2, 1, 1, 1});
  test::check_close(as_vector(cg.forward(affine_transform({b, w, x}))), {6, 13, 7, 17});
}

BOOST_AUTO_TEST_CASE(affine_batched_bias_only) {
  // W and x unbatched, the bias batched: W x = [5,11] added to each bias
  ComputationGraph cg;
  Expression b = input(cg, Dim({2}, 2), {1, 2, 10, 20});
  Expression w = input(cg, Dim({2, 3}), kW);
  Expression x = input(cg, Dim({3}), {1, -1, 2});
  Expression y = affine_transform({b, w, x});
  BOOST_CHECK_EQUAL(y.dim(), Dim({2}, 2));
  test::check_close(as_vector(cg.forward(y)), {6, 13, 15, 31});
}

BOOST_AUTO_TEST_CASE(affine_batched_weight) {
  // W0 x0 = [5,11], W1 x1 = [4,3]; bias [1,2] for both
  ComputationGraph cg;
  Expression b = input(cg, Dim({2}), {1, 2});
  Expression w = input(cg, Dim({2, 3}, 2), concat(kW, kW1));
  Expression x = input(cg, Dim({3}, 2), {1, -1, 2, 3, 4, 5});
  test::check_close(as_vector(cg.forward(affine_transform({b, w, x}))), {6, 13, 5, 5});
}

BOOST_AUTO_TEST_CASE(affine_matches_matmul_plus_bias) {
  ParameterCollection m;
  Parameter pw = m.add_parameters({5, 4}), pb = m.add_parameters({5});
  pw.set_value(test::test_values(20, 0.1f));
  pb.set_value(test::test_values(5, -0.3f));
  ComputationGraph cg;
  Expression x = input(cg, Dim({4}, 3), test::test_values(12));
  Expression W = parameter(cg, pw), b = parameter(cg, pb);
  test::check_close(as_vector(cg.forward(affine_transform({b, W, x}))), as_vector(cg.forward(W * x + b)), 1e-6);
}

BOOST_AUTO_TEST_CASE(affine_backward_values) {
  // loss = sum(b + W x) over a batch of 2 with b and W shared:
  // db = [2,2],  dW[i][j] = x0[j] + x1[j],  dx_b[j] = sum_i W[i][j]
  ParameterCollection m;
  Parameter pw = m.add_parameters({2, 3}), pb = m.add_parameters({2});
  pw.set_value(kW);
  pb.set_value({1, 2});
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}, 2), {1, -1, 2, 3, 4, 5});
  Expression loss = sum_batches(sum_elems(affine_transform({parameter(cg, pb), parameter(cg, pw), x})));
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(pb.get_storage().g), {2, 2});
  test::check_close(as_vector(pw.get_storage().g), {4, 4, 3, 3, 7, 7});
  test::check_close(as_vector(x.gradient()), {5, 7, 9, 5, 7, 9});
}

BOOST_AUTO_TEST_CASE(affine_gradients_parameters) {
  ParameterCollection m;
  Parameter pw = m.add_parameters({3, 4}), pb = m.add_parameters({3});
  pw.set_value(test::test_values(12, 0.1f));
  pb.set_value(test::test_values(3, -0.3f));
  size_t n = test::check_gradients(m, {{Dim({4}), test::test_values(4)}}, [&](ComputationGraph& cg, const Xs& xs) {
    return tanh(affine_transform({parameter(cg, pb), parameter(cg, pw), xs[0]}));
  });
  BOOST_CHECK_EQUAL(n, 19u);
}

BOOST_AUTO_TEST_CASE(affine_gradients_shared_weight_batched_input_unbatched_bias) {
  ParameterCollection m;
  Parameter pw = m.add_parameters({3, 4}), pb = m.add_parameters({3});
  pw.set_value(test::test_values(12, 0.1f));
  pb.set_value(test::test_values(3, -0.3f));
  size_t n = test::check_gradients(m, {{Dim({4}, 3), test::test_values(12)}}, [&](ComputationGraph& cg, const Xs& xs) {
    return tanh(affine_transform({parameter(cg, pb), parameter(cg, pw), xs[0]}));
  });
  BOOST_CHECK_EQUAL(n, 27u);
}

BOOST_AUTO_TEST_CASE(affine_gradients_batched_bias) {
  // bias batched, W shared, x batched; and bias batched with x unbatched
  ParameterCollection m;
  Parameter pw = m.add_parameters({3, 4});
  pw.set_value(test::test_values(12, 0.1f));
  size_t n = test::check_gradients(m, {{Dim({3}, 2), test::test_values(6, 0.2f)}, {Dim({4}, 2), test::test_values(8)}},
                                   [&](ComputationGraph& cg, const Xs& xs) {
                                     return affine_transform({xs[0], parameter(cg, pw), xs[1]});
                                   });
  BOOST_CHECK_EQUAL(n, 26u);
  n = test::check_gradients(m, {{Dim({3}, 2), test::test_values(6, 0.2f)}, {Dim({4}), test::test_values(4)}},
                            [&](ComputationGraph& cg, const Xs& xs) {
                              return affine_transform({xs[0], parameter(cg, pw), xs[1]});
                            });
  BOOST_CHECK_EQUAL(n, 22u);
}

BOOST_AUTO_TEST_CASE(affine_gradients_all_batched_two_terms) {
  // b {3}X2, W1 {3,2}X2, x1 {2}X2, W2 {3,4} shared, x2 {4} shared
  ParameterCollection m;
  size_t n = test::check_gradients(m,
                                   {{Dim({3}, 2), test::test_values(6, 0.2f)},
                                    {Dim({3, 2}, 2), test::test_values(12, -0.1f)},
                                    {Dim({2}, 2), test::test_values(4, 0.3f)},
                                    {Dim({3, 4}), test::test_values(12, 0.1f)},
                                    {Dim({4}), test::test_values(4)}},
                                   [&](ComputationGraph&, const Xs& xs) {
                                     return affine_transform({xs[0], xs[1], xs[2], xs[3], xs[4]});
                                   });
  BOOST_CHECK_EQUAL(n, 38u);
}

BOOST_AUTO_TEST_CASE(affine_gradients_column_bias_on_matrices) {
  // bias {3} added to every column of W X, X {4,2}X2; then a batched column bias
  ParameterCollection m;
  Parameter pw = m.add_parameters({3, 4}), pb = m.add_parameters({3});
  pw.set_value(test::test_values(12, 0.1f));
  pb.set_value(test::test_values(3, -0.3f));
  size_t n = test::check_gradients(m, {{Dim({4, 2}, 2), test::test_values(16)}}, [&](ComputationGraph& cg, const Xs& xs) {
    return affine_transform({parameter(cg, pb), parameter(cg, pw), xs[0]});
  });
  BOOST_CHECK_EQUAL(n, 31u);
  n = test::check_gradients(m, {{Dim({3}, 2), test::test_values(6, 0.2f)}, {Dim({4, 2}, 2), test::test_values(16)}},
                            [&](ComputationGraph& cg, const Xs& xs) {
                              return affine_transform({xs[0], parameter(cg, pw), xs[1]});
                            });
  BOOST_CHECK_EQUAL(n, 37u);
  // a full {3,2} bias with a batch of 1 against a batch of 2
  n = test::check_gradients(m, {{Dim({3, 2}), test::test_values(6, 0.2f)}, {Dim({4, 2}, 2), test::test_values(16)}},
                            [&](ComputationGraph& cg, const Xs& xs) {
                              return affine_transform({xs[0], parameter(cg, pw), xs[1]});
                            });
  BOOST_CHECK_EQUAL(n, 37u);
}

BOOST_AUTO_TEST_CASE(affine_gradients_same_weight_twice) {
  // b + W x1 + W x2: W's gradient gets both terms
  ParameterCollection m;
  Parameter pw = m.add_parameters({2, 3}), pb = m.add_parameters({2});
  pw.set_value(test::test_values(6, 0.1f));
  pb.set_value({0.1f, -0.2f});
  size_t n = test::check_gradients(m, {{Dim({3}), test::test_values(3)}, {Dim({3}), test::test_values(3, 0.4f)}},
                                   [&](ComputationGraph& cg, const Xs& xs) {
                                     Expression W = parameter(cg, pw);
                                     return affine_transform({parameter(cg, pb), W, xs[0], W, xs[1]});
                                   });
  BOOST_CHECK_EQUAL(n, 14u);
}

BOOST_AUTO_TEST_CASE(affine_errors) {
  ComputationGraph cg;
  Expression b = input(cg, Dim({32}), std::vector<float>(32, 0.f));
  Expression w = input(cg, Dim({32, 100}), std::vector<float>(3200, 0.f));
  Expression x = input(cg, Dim({50}), std::vector<float>(50, 0.f));
  Expression x100 = input(cg, Dim({100}), std::vector<float>(100, 0.f));
  test::check_throws_with<dim_error>([&] { affine_transform({b, w, x}); },
                                     {"affine_transform: W {32,100} cannot multiply x {50}: inner dims 100 != 50"});
  test::check_throws_with<dim_error>([&] { affine_transform({b, w}); }, {"affine_transform", "odd number", "got 2"});
  test::check_throws_with<std::invalid_argument>([&] { affine_transform(std::vector<Expression>{}); },
                                                 {"affine_transform", "empty"});
  Expression b31 = input(cg, Dim({31}), std::vector<float>(31, 0.f));
  test::check_throws_with<dim_error>([&] { affine_transform({b31, w, x100}); },
                                     {"affine_transform", "bias {31}", "{32}"});
  // a second term of another shape
  Expression w2 = input(cg, Dim({16, 50}), std::vector<float>(800, 0.f));
  test::check_throws_with<dim_error>([&] { affine_transform({b, w, x100, w2, x}); },
                                     {"affine_transform", "W2 {16,50}", "x2 {50}", "gives {16}", "{32}"});
  // a {32,3} bias cannot go with a {32} product
  Expression b323 = input(cg, Dim({32, 3}), std::vector<float>(96, 0.f));
  test::check_throws_with<dim_error>([&] { affine_transform({b323, w, x100}); }, {"affine_transform", "bias {32,3}"});
  // batch sizes
  Expression bb = input(cg, Dim({32}, 3), std::vector<float>(96, 0.f));
  Expression xb = input(cg, Dim({100}, 2), std::vector<float>(200, 0.f));
  test::check_throws_with<dim_error>([&] { affine_transform({bb, w, xb}); },
                                     {"affine_transform", "bias {32X3}", "batch size 3", "has 2"});
}

// ---------------------------------------------------------------- transpose

BOOST_AUTO_TEST_CASE(transpose_matrix) {
  // [[1,2,3],[4,5,6]]^T = [[1,4],[2,5],[3,6]]
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3}), kW);
  Expression y = transpose(x);
  BOOST_CHECK_EQUAL(y.dim(), Dim({3, 2}));
  test::check_close(as_vector(cg.forward(y)), {1, 2, 3, 4, 5, 6});
}

BOOST_AUTO_TEST_CASE(transpose_vector_and_batch) {
  ComputationGraph cg;
  Expression v = input(cg, Dim({3}), {1, 2, 3});
  BOOST_CHECK_EQUAL(transpose(v).dim(), Dim({1, 3}));
  test::check_close(as_vector(cg.forward(transpose(v))), {1, 2, 3});
  // batch untouched: each element transposed by itself
  Expression x = input(cg, Dim({2, 2}, 2), {1, 2, 3, 4, 5, 6, 7, 8});
  Expression y = transpose(x);
  BOOST_CHECK_EQUAL(y.dim(), Dim({2, 2}, 2));
  test::check_close(as_vector(cg.forward(y)), {1, 3, 2, 4, 5, 7, 6, 8});
  // the identity permutation
  test::check_close(as_vector(cg.forward(transpose(x, {0, 1}))), {1, 2, 3, 4, 5, 6, 7, 8});
}

BOOST_AUTO_TEST_CASE(transpose_3d) {
  // x {2,3,4}: x(i,j,k) = i + 2j + 6k (its linear index)
  std::vector<float> xv(24);
  for (unsigned i = 0; i < 24; ++i) xv[i] = static_cast<float>(i);
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3, 4}), xv);
  // dims {2,0,1}: y(a,b,c) = x(b,c,a), y {4,2,3}
  Expression y = transpose(x, {2, 0, 1});
  BOOST_CHECK_EQUAL(y.dim(), Dim({4, 2, 3}));
  std::vector<float> got = as_vector(cg.forward(y));
  BOOST_REQUIRE_EQUAL(got.size(), 24u);
  // y's first column: x(0,0,k) = 6k;  y(0,1,0) = x(1,0,0) = 1;  y(0,0,1) = x(0,1,0) = 2
  test::check_close({got[0], got[1], got[2], got[3]}, {0, 6, 12, 18});
  BOOST_CHECK_EQUAL(got[4], 1.f);
  BOOST_CHECK_EQUAL(got[8], 2.f);
  BOOST_CHECK_EQUAL(got[23], 23.f);  // y(3,1,2) = x(1,2,3)
  for (unsigned a = 0; a < 4; ++a)
    for (unsigned b = 0; b < 2; ++b)
      for (unsigned c = 0; c < 3; ++c) BOOST_CHECK_EQUAL(got[a + 4 * b + 8 * c], static_cast<float>(b + 2 * c + 6 * a));
  // dims {1,0,2}: y(a,b,c) = x(b,a,c), y {3,2,4} — a transpose of each slice
  Expression z = transpose(x, {1, 0, 2});
  BOOST_CHECK_EQUAL(z.dim(), Dim({3, 2, 4}));
  got = as_vector(cg.forward(z));
  test::check_close({got[0], got[1], got[2], got[3], got[4], got[5], got[6]}, {0, 2, 4, 1, 3, 5, 6});
  for (unsigned a = 0; a < 3; ++a)
    for (unsigned b = 0; b < 2; ++b)
      for (unsigned c = 0; c < 4; ++c) BOOST_CHECK_EQUAL(got[a + 3 * b + 6 * c], static_cast<float>(b + 2 * a + 6 * c));
  // dims {0,2,1}: y(a,b,c) = x(a,c,b), y {2,4,3}
  got = as_vector(cg.forward(transpose(x, {0, 2, 1})));
  for (unsigned a = 0; a < 2; ++a)
    for (unsigned b = 0; b < 4; ++b)
      for (unsigned c = 0; c < 3; ++c) BOOST_CHECK_EQUAL(got[a + 2 * b + 8 * c], static_cast<float>(a + 2 * c + 6 * b));
}

BOOST_AUTO_TEST_CASE(transpose_unit_dims_keep_layout) {
  // {1,3,4} with dims {1,2,0} -> {3,4,1}: the same memory order
  ComputationGraph cg;
  Expression x = input(cg, Dim({1, 3, 4}), test::test_values(12));
  Expression y = transpose(x, {1, 2, 0});
  BOOST_CHECK_EQUAL(y.dim(), Dim({3, 4, 1}));
  test::check_close(as_vector(cg.forward(y)), test::test_values(12));
}

BOOST_AUTO_TEST_CASE(transpose_gradients) {
  ParameterCollection m;
  Parameter pw = m.add_parameters({2, 3});
  pw.set_value(test::test_values(6, 0.1f));
  size_t n = test::check_gradients(m, {{Dim({3, 4}, 2), test::test_values(24)}}, [&](ComputationGraph& cg, const Xs& xs) {
    return transpose(parameter(cg, pw) * xs[0]);
  });
  BOOST_CHECK_EQUAL(n, 30u);
  for (std::vector<unsigned> dims : {std::vector<unsigned>{2, 0, 1}, {1, 0, 2}, {0, 2, 1}, {2, 1, 0}, {1, 2, 0}}) {
    n = test::check_gradients(m, {{Dim({2, 3, 4}, 2), test::test_values(48)}},
                              [&](ComputationGraph&, const Xs& xs) { return transpose(xs[0], dims); });
    BOOST_CHECK_EQUAL(n, 6u + 48u);
  }
  n = test::check_gradients(m, {{Dim({5}), test::test_values(5)}},
                            [&](ComputationGraph&, const Xs& xs) { return transpose(xs[0]) * xs[0]; });
  BOOST_CHECK_EQUAL(n, 11u);
}

BOOST_AUTO_TEST_CASE(transpose_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3, 4}), std::vector<float>(24, 0.f));
  test::check_throws_with<dim_error>([&] { transpose(x); },
                                     {"transpose", "x {2,3,4}", "3 dimensions", "dims {1,0}", "only 2"});
  test::check_throws_with<dim_error>([&] { transpose(x, {0, 0, 1}); },
                                     {"transpose", "dims {0,0,1}", "not a permutation", "{2,3,4}"});
  test::check_throws_with<dim_error>([&] { transpose(x, {0, 3, 1}); }, {"transpose", "dims {0,3,1}", "not a permutation"});
  test::check_throws_with<dim_error>([&] { transpose(x, {}); }, {"transpose", "got 0"});
  test::check_throws_with<dim_error>([&] { transpose(x, {0, 1, 2, 3, 4, 5, 6, 7}); }, {"transpose", "got 8"});
}

// A weight used many times: each use's dW term is left for later and all are
// summed as one product when backward reaches the parameter (backends/cpu/weight_grads.h).
// The gradient must match the numerical one, for a chain (one column a use), a
// batched use, a use wider than the deferral limit and an affine transform with
// two weights, and with automatic batching on as well.
BOOST_AUTO_TEST_CASE(weight_used_many_times_gets_every_term) {
  for (int strategy : {0, 1}) {
    ParameterCollection m;
    Parameter pw = m.add_parameters({3, 3}), pu = m.add_parameters({3, 3}), pb = m.add_parameters({3});
    pw.set_value(test::test_values(9, 0.1f));
    pu.set_value(test::test_values(9, -0.3f));
    pb.set_value(test::test_values(3, 0.2f));
    size_t n = test::check_gradients(
        m, {{Dim({3}), test::test_values(3, -0.2f)}, {Dim({3}, 40), test::test_values(120, 0.05f)}},
        [&](ComputationGraph& cg, const Xs& xs) {
          cg.set_autobatch(strategy);
          Expression W = parameter(cg, pw), U = parameter(cg, pu), b = parameter(cg, pb);
          Expression h = xs[0];
          for (int t = 0; t < 4; ++t) h = tanh(affine_transform({b, W, h, U, xs[0]}));
          Expression wide = sum_batches(tanh(W * xs[1]));  // 40 columns: added at once
          return sum_elems(h) + sum_elems(wide) + sum_elems(tanh(W * h));
        });
    BOOST_CHECK_GT(n, 0u);
  }
}

// A weight with a tall gradient and many thin terms (a language model's output
// layer): the flush stacks them a chunk at a time, so its scratch stays near
// kFlushFloats however many terms there are, and the sum is every term's.
BOOST_AUTO_TEST_CASE(weight_grad_flush_of_many_terms_works_in_chunks) {
  const size_t m = 20000, k = 16, n = 7, terms = 40;
  std::vector<float> a(m * n * terms), b(k * n * terms), dw(m * k, 0.5f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37f * float(i));
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.11f * float(i));
  WeightGradSink sink;
  for (size_t t = 0; t < terms; ++t) sink.add(dw.data(), a.data() + t * m * n, b.data() + t * k * n, m, k, n);
  Arena scratch(cpu_device(), 64 * 1024);
  sink.flush(dw.data(), scratch);
  BOOST_CHECK(sink.empty());
  BOOST_CHECK_LE(scratch.peak_bytes(), (WeightGradSink::kFlushFloats + (m + k) * n) * sizeof(float) + 4096);
  size_t bad = 0;
  for (size_t r = 0; r < m; r += 97)
    for (size_t c = 0; c < k; ++c) {
      double want = 0.5;
      for (size_t j = 0; j < n * terms; ++j) want += double(a[j * m + r]) * double(b[j * k + c]);
      bad += std::fabs(dw[c * m + r] - want) > 1e-4 * (1 + std::fabs(want));
    }
  BOOST_CHECK_EQUAL(bad, 0u);
}

// The same with weights that are computed nodes, not parameters: a row range of a
// parameter, and two tanh(.) nodes that batching runs as one group.  Their terms
// left for later must be summed before their own backward reads their gradient.
BOOST_AUTO_TEST_CASE(computed_weight_used_many_times_gets_every_term) {
  for (int strategy : {0, 1, 2}) {
    ParameterCollection m;
    Parameter pw = m.add_parameters({5, 3}), pu = m.add_parameters({3, 3}), pv = m.add_parameters({3, 3});
    pw.set_value(test::test_values(15, 0.1f));
    pu.set_value(test::test_values(9, -0.3f));
    pv.set_value(test::test_values(9, 0.25f));
    size_t n = test::check_gradients(
        m, {{Dim({3}), test::test_values(3, -0.2f)}, {Dim({3}, 40), test::test_values(120, 0.05f)}},
        [&](ComputationGraph& cg, const Xs& xs) {
          cg.set_autobatch(strategy);
          Expression W = pick_range(parameter(cg, pw), 1, 4);  // rows 1..3 of a 5 x 3 parameter
          Expression U = tanh(parameter(cg, pu)), V = tanh(parameter(cg, pv));
          Expression h = xs[0], g = xs[0];
          for (int t = 0; t < 4; ++t) {
            h = tanh(W * h + U * g);
            g = tanh(V * g);
          }
          Expression wide = sum_batches(tanh(W * xs[1]));  // 40 columns: added at once
          // W's gradient is read once more by a use that is not a product.
          return sum_elems(h) + sum_elems(g) + sum_elems(wide) + sum_elems(square(W));
        });
    BOOST_CHECK_GT(n, 0u);
  }
}

// Backward keeps a transposed copy of a matrix it multiplies by its transpose
// more than once in a pass (backends/cpu/transposed_weights.h): none at the first use,
// the same copy after, none for the same memory read as another shape, and
// nothing left after a reset.
BOOST_AUTO_TEST_CASE(transposed_weights_are_made_at_the_second_use) {
  Arena memory(cpu_device(), 1 << 16);
  TransposedWeights cache;
  cache.reset(&memory);
  const std::vector<float> w = test::test_values(40 * 32, 0.3f);  // 40 x 32
  BOOST_CHECK(cache.get(w.data(), 40, 32) == nullptr);
  const float* wt = cache.get(w.data(), 40, 32);
  BOOST_REQUIRE(wt != nullptr);
  for (size_t i = 0; i < 40; ++i)
    for (size_t j = 0; j < 32; ++j) BOOST_REQUIRE_EQUAL(wt[i * 32 + j], w[j * 40 + i]);
  BOOST_CHECK(cache.get(w.data(), 40, 32) == wt);
  BOOST_CHECK(cache.get(w.data(), 32, 40) == nullptr);
  cache.reset(&memory);
  BOOST_CHECK(cache.get(w.data(), 40, 32) == nullptr);
  // A product that repays the copy by itself gets it at the first use.
  cache.reset(&memory);
  const float* at_once = cache.get(w.data(), 40, 32, true);
  BOOST_REQUIRE(at_once != nullptr);
  BOOST_CHECK_EQUAL(at_once[1 * 32 + 2], w[2 * 40 + 1]);
  BOOST_CHECK(cache.get(w.data(), 40, 32) == at_once);

  // dx += W^T dy through the context equals the direct product, with and
  // without a copy, at a shape where the copy is used (32 output rows, 8 columns).
  Arena scratch(cpu_device(), 1 << 16), values(cpu_device(), 1 << 16);
  std::mt19937 rng(1);
  ExecContext ctx(&values, &scratch, &rng, cpu_device());
  cache.reset(&memory);
  ctx.set_transposes(&cache);
  const std::vector<float> dy = test::test_values(40 * 8, -0.2f);
  std::vector<float> direct(32 * 8, 0.5f);
  cpu::gemm_tn(w.data(), dy.data(), direct.data(), 40, 32, 8);
  for (int use = 0; use < 3; ++use) {
    std::vector<float> dx(32 * 8, 0.5f);
    gemm_tn(ctx, w.data(), dy.data(), dx.data(), 40, 32, 8);
    for (size_t i = 0; i < dx.size(); ++i) BOOST_CHECK_CLOSE(dx[i], direct[i], 1e-3);
  }
}

// A weight with a transposed copy (32 output rows, 4 columns a use): the
// gradients of its input through several uses, batched and not, match the
// numerical ones.
BOOST_AUTO_TEST_CASE(gradient_through_a_transposed_weight) {
  for (int strategy : {0, 1}) {
    ParameterCollection m;
    Parameter pw = m.add_parameters({32, 32}), pb = m.add_parameters({32});
    pw.set_value(test::test_values(32 * 32, 0.02f));
    pb.set_value(test::test_values(32, 0.1f));
    size_t n = test::check_gradients(
        m, {{Dim({32}, 4), test::test_values(32 * 4, -0.2f)}, {Dim({32}, 4), test::test_values(32 * 4, 0.3f)}},
        [&](ComputationGraph& cg, const Xs& xs) {
          cg.set_autobatch(strategy);
          Expression W = parameter(cg, pw), b = parameter(cg, pb);
          Expression h = xs[0], g = xs[1];
          for (int t = 0; t < 3; ++t) {
            h = tanh(affine_transform({b, W, h}));
            g = tanh(W * g);
          }
          return sum_batches(sum_elems(h) + sum_elems(square(g)));
        },
        5e-3f);  // a loss of a few hundred terms: a wider step keeps float rounding out of the quotient
    BOOST_CHECK_GT(n, 0u);
  }
}
