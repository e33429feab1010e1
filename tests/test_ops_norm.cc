#define BOOST_TEST_MODULE ops_norm
#include "test_utils.h"

#include <cmath>

using namespace dynet_lite;

BOOST_AUTO_TEST_CASE(layer_norm_values_by_hand) {
  // x = {1, 2, 3, 6}: mean 3, deviations {-2, -1, 0, 3}, population variance
  // (4 + 1 + 0 + 9) / 4 = 3.5
  const float s = std::sqrt(3.5f);
  std::vector<float> y = test::eval({{Dim({4}), {1.f, 2.f, 3.f, 6.f}},
                                     {Dim({4}), {1.f, 2.f, 0.5f, -1.f}},
                                     {Dim({4}), {0.1f, 0.2f, 0.3f, 0.4f}}},
                                    [](ComputationGraph&, const std::vector<Expression>& xs) {
                                      return layer_norm(xs[0], xs[1], xs[2]);
                                    });
  test::check_close(y, {1.f * -2.f / s + 0.1f, 2.f * -1.f / s + 0.2f, 0.5f * 0.f + 0.3f, -1.f * 3.f / s + 0.4f});
  // -0.96904497, -0.86904497, 0.3, -1.20356745
  test::check_close(y, {-0.96904497f, -0.86904497f, 0.3f, -1.20356745f});
}

BOOST_AUTO_TEST_CASE(layer_norm_batched_x_with_shared_gain_and_bias) {
  // batch 0: {1, 2, 3}, mean 2, variance 2/3, xhat = {-1, 0, 1} * sqrt(3/2)
  // batch 1: {0, 0, 4}, mean 4/3, variance 32/9, xhat = {-1, -1, 2} / sqrt(2)
  const float r0 = std::sqrt(1.5f), r1 = 1.f / std::sqrt(2.f);
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}, 2), {1.f, 2.f, 3.f, 0.f, 0.f, 4.f});
  Expression g = input(cg, {3}, {2.f, -1.f, 0.5f});
  Expression b = input(cg, {3}, {0.f, 1.f, -1.f});
  Expression y = layer_norm(x, g, b);
  BOOST_CHECK_EQUAL(y.dim(), Dim({3}, 2));
  test::check_close(as_vector(cg.forward(y)),
                    {2.f * -r0, 1.f, 0.5f * r0 - 1.f, 2.f * -r1, -1.f * -r1 + 1.f, 0.5f * 2.f * r1 - 1.f});
}

BOOST_AUTO_TEST_CASE(layer_norm_of_a_matrix_normalises_all_elements) {
  // as DyNet's layer_norm (mean_elems): a {2,2} x is normalised over its 4 values
  const float s = std::sqrt(3.5f);
  std::vector<float> y = test::eval({{Dim({2, 2}), {1.f, 2.f, 3.f, 6.f}},
                                     {Dim({2, 2}), {1.f, 1.f, 1.f, 1.f}},
                                     {Dim({2, 2}), {0.f, 0.f, 0.f, 0.f}}},
                                    [](ComputationGraph&, const std::vector<Expression>& xs) {
                                      return layer_norm(xs[0], xs[1], xs[2]);
                                    });
  test::check_close(y, {-2.f / s, -1.f / s, 0.f, 3.f / s});
}

BOOST_AUTO_TEST_CASE(layer_norm_constant_and_length_one_inputs_give_the_bias) {
  // zero variance: xhat = 0 / sqrt(eps) = 0, so y = b with no NaN
  ComputationGraph cg;
  cg.set_check_validity(true);
  Expression x = input(cg, Dim({3}), {2.f, 2.f, 2.f});
  Expression y = layer_norm(x, input(cg, {3}, {5.f, 6.f, 7.f}), input(cg, {3}, {0.5f, -0.5f, 1.f}));
  test::check_close(as_vector(cg.forward(y)), {0.5f, -0.5f, 1.f});
  Expression x1 = input(cg, Dim({1}), {3.f});
  Expression y1 = layer_norm(x1, input(cg, {1}, {4.f}), input(cg, {1}, {-2.f}));
  test::check_close(as_vector(cg.forward(y1)), {-2.f});
  // the gradient of a single element through its own mean is 0; b gets dy
  Expression gb = input(cg, {1}, {-2.f});
  Expression y2 = layer_norm(x1, input(cg, {1}, {4.f}), gb);
  cg.backward(sum_elems(y2), true);
  test::check_close(as_vector(cg.get_gradient(x1)), {0.f});
  test::check_close(as_vector(cg.get_gradient(gb)), {1.f});
}

BOOST_AUTO_TEST_CASE(layer_norm_gradient_x_input_g_b_parameters) {
  ParameterCollection m;
  Parameter g = m.add_parameters({5}, ParameterInitFromVector({1.2f, -0.7f, 0.4f, 2.f, 0.9f}));
  Parameter b = m.add_parameters({5}, ParameterInitFromVector({0.1f, -0.2f, 0.3f, 0.f, 0.5f}));
  size_t n = test::check_gradients(m, {{Dim({5}), test::test_values(5)}},
                                   [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
                                     return layer_norm(xs[0], parameter(cg, g), parameter(cg, b));
                                   });
  BOOST_CHECK_EQUAL(n, 15u);
}

BOOST_AUTO_TEST_CASE(layer_norm_gradient_batched_x_shared_parameters) {
  ParameterCollection m;
  Parameter g = m.add_parameters({4}, ParameterInitFromVector({1.2f, -0.7f, 0.4f, 2.f}));
  Parameter b = m.add_parameters({4}, ParameterInitFromVector({0.1f, -0.2f, 0.3f, 0.f}));
  size_t n = test::check_gradients(m, {{Dim({4}, 3), test::test_values(12)}},
                                   [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
                                     // squared so that the loss is not linear in the output
                                     return square(layer_norm(xs[0], parameter(cg, g), parameter(cg, b)));
                                   });
  BOOST_CHECK_EQUAL(n, 8u + 12u);
}

BOOST_AUTO_TEST_CASE(layer_norm_gradient_all_inputs) {
  ParameterCollection m;
  // everything batched
  size_t n = test::check_gradients(
      m, {{Dim({4}, 2), test::test_values(8)}, {Dim({4}, 2), test::test_values(8, 0.5f)},
          {Dim({4}, 2), test::test_values(8, -0.2f)}},
      [](ComputationGraph&, const std::vector<Expression>& xs) { return layer_norm(xs[0], xs[1], xs[2]); });
  BOOST_CHECK_EQUAL(n, 24u);
  // x a batch of 1 broadcast against a batched gain and bias
  n = test::check_gradients(
      m, {{Dim({4}), test::test_values(4, 0.1f)}, {Dim({4}, 3), test::test_values(12, 0.5f)},
          {Dim({4}, 3), test::test_values(12, -0.2f)}},
      [](ComputationGraph&, const std::vector<Expression>& xs) { return square(layer_norm(xs[0], xs[1], xs[2])); });
  BOOST_CHECK_EQUAL(n, 28u);
}

BOOST_AUTO_TEST_CASE(layer_norm_gradient_x_parameter_matrix) {
  ParameterCollection m;
  Parameter x = m.add_parameters({2, 3}, ParameterInitFromVector(test::test_values(6, 0.2f)));
  size_t n = test::check_gradients(m, {{Dim({2, 3}), test::test_values(6, 1.f)}, {Dim({2, 3}), test::test_values(6)}},
                                   [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
                                     return tanh(layer_norm(parameter(cg, x), xs[0], xs[1]));
                                   });
  BOOST_CHECK_EQUAL(n, 18u);
}

BOOST_AUTO_TEST_CASE(layer_norm_backward_by_hand) {
  // x = {1, 2, 3, 6}, g = 1, b = 0, dy = {1, 0, 0, 0}:
  // dx = r (dy - mean(dy) - xhat mean(dy xhat)), r = 1/sqrt(3.5), xhat = {-2,-1,0,3} r
  // mean(dy) = 1/4, mean(dy xhat) = -2r/4
  const float r = 1.f / std::sqrt(3.5f);
  ComputationGraph cg;
  Expression x = input(cg, {4}, {1.f, 2.f, 3.f, 6.f});
  Expression g = input(cg, {4}, {1.f, 1.f, 1.f, 1.f});
  Expression b = input(cg, {4}, {0.f, 0.f, 0.f, 0.f});
  Expression y = layer_norm(x, g, b);
  Expression loss = sum_elems(cmult(y, input(cg, {4}, {1.f, 0.f, 0.f, 0.f})));
  cg.forward(loss);
  cg.backward(loss, true);
  std::vector<float> want(4);
  const float xhat[4] = {-2.f * r, -1.f * r, 0.f, 3.f * r};
  const float dy[4] = {1.f, 0.f, 0.f, 0.f};
  for (int i = 0; i < 4; ++i) want[i] = r * (dy[i] - 0.25f - xhat[i] * (-2.f * r / 4.f));
  test::check_close(as_vector(cg.get_gradient(x)), want, 1e-4);
  test::check_close(as_vector(cg.get_gradient(g)), {xhat[0], 0.f, 0.f, 0.f}, 1e-5);
  test::check_close(as_vector(cg.get_gradient(b)), {1.f, 0.f, 0.f, 0.f});
}

BOOST_AUTO_TEST_CASE(layer_norm_shape_errors) {
  ComputationGraph cg;
  Expression x = ones(cg, {4});
  Expression g3 = ones(cg, {3});
  Expression g4 = ones(cg, {4});
  test::check_throws_with<dim_error>([&] { layer_norm(x, g3, g4); }, {"layer_norm", "{3}", "{4}"});
  test::check_throws_with<dim_error>([&] { layer_norm(x, g4, g3); }, {"layer_norm", "{3}", "{4}"});
  Expression xm = ones(cg, {2, 2});
  test::check_throws_with<dim_error>([&] { layer_norm(xm, g4, g4); }, {"layer_norm", "{2,2}", "{4}"});
  Expression x2 = ones(cg, Dim({4}, 2));
  Expression g5 = ones(cg, Dim({4}, 3));
  test::check_throws_with<dim_error>([&] { layer_norm(x2, g5, g4); }, {"layer_norm", "{4X2}", "{4X3}", "equal or 1"});
}
