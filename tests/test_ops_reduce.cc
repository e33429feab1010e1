#define BOOST_TEST_MODULE ops_reduce
#include "test_utils.h"

using namespace dynet_lite;
using test::grad_of;
using test::iota;

namespace {

Dim dim_of(const std::vector<test::TestInput>& in, const test::Builder& b) {
  ComputationGraph cg;
  std::vector<Expression> xs;
  for (auto& i : in) xs.push_back(input(cg, i.dim, i.values));
  return b(cg, xs).dim();
}

/// Gradient check of f(x * W): W a new parameter of `m` of shape `wd` (values from
/// test_values), x an input of shape `xd`; returns the number of elements checked.
size_t weighted_gradients(ParameterCollection& m, const Dim& wd, const Dim& xd, const test::UnaryFn& f) {
  Parameter w = m.add_parameters(wd);
  w.set_value(test::test_values(wd.size(), 0.2f));
  return test::check_gradients(
      m, {{xd, test::test_values(xd.size())}},
      [&](ComputationGraph& cg, const std::vector<Expression>& xs) { return f(cmult(xs[0], parameter(cg, w))); });
}

}  // namespace

// ---------------------------------------------------------------- sum_elems / sum_batches

BOOST_AUTO_TEST_CASE(sum_elems_values) {
  auto b = [](ComputationGraph&, const std::vector<Expression>& xs) { return sum_elems(xs[0]); };
  // batch 0: 1..6 = 21; batch 1: 7..12 = 57
  test::check_close(test::eval({{Dim({2, 3}, 2), iota(12)}}, b), {21.f, 57.f});
  BOOST_CHECK_EQUAL(dim_of({{Dim({2, 3}, 2), iota(12)}}, b), Dim({1}, 2));
  test::check_close(test::eval({{Dim({1}), {-4.5f}}}, b), {-4.5f});
}

BOOST_AUTO_TEST_CASE(sum_elems_gradient) {
  ParameterCollection m;
  Parameter w = m.add_parameters({2, 3});
  w.set_value(test::test_values(6, 0.2f));
  auto b = [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    return sum_elems(cmult(xs[0], parameter(cg, w)));
  };
  BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({2, 3}, 3), test::test_values(18)}}, b), 6u + 18u);
  BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({2, 3}), test::test_values(6)}}, b), 12u);
}

BOOST_AUTO_TEST_CASE(sum_batches_values) {
  auto b = [](ComputationGraph&, const std::vector<Expression>& xs) { return sum_batches(xs[0]); };
  // {2}X3: [1,2],[3,4],[5,6] -> [9, 12]
  test::check_close(test::eval({{Dim({2}, 3), iota(6)}}, b), {9.f, 12.f});
  BOOST_CHECK_EQUAL(dim_of({{Dim({2}, 3), iota(6)}}, b), Dim({2}));
  // a batch of one is unchanged
  test::check_close(test::eval({{Dim({3}), {1.f, -2.f, 3.f}}}, b), {1.f, -2.f, 3.f});
}

BOOST_AUTO_TEST_CASE(sum_batches_gradient) {
  ParameterCollection m;
  BOOST_CHECK_EQUAL(weighted_gradients(m, Dim({3}), Dim({3}, 4), [](const Expression& x) { return sum_batches(x); }),
                    3u + 12u);
}

// ---------------------------------------------------------------- mean_elems / mean_batches

BOOST_AUTO_TEST_CASE(mean_elems_values_and_gradient) {
  auto b = [](ComputationGraph&, const std::vector<Expression>& xs) { return mean_elems(xs[0]); };
  // {2,2}X2: (1+2+3+4)/4 = 2.5, (5+6+7+8)/4 = 6.5
  test::check_close(test::eval({{Dim({2, 2}, 2), iota(8)}}, b), {2.5f, 6.5f});
  BOOST_CHECK_EQUAL(dim_of({{Dim({2, 2}, 2), iota(8)}}, b), Dim({1}, 2));
  // d/dx of the mean of 4 elements is 1/4 each
  test::check_close(grad_of(Dim({4}), iota(4), [](const Expression& x) { return mean_elems(x); }),
                    {0.25f, 0.25f, 0.25f, 0.25f});
  ParameterCollection m;
  BOOST_CHECK_EQUAL(
      weighted_gradients(m, Dim({2, 2}), Dim({2, 2}, 3), [](const Expression& x) { return mean_elems(x); }), 4u + 12u);
  BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({1}, 2), test::test_values(2)}}, b), 4u + 2u);
}

BOOST_AUTO_TEST_CASE(mean_batches_values_and_gradient) {
  auto b = [](ComputationGraph&, const std::vector<Expression>& xs) { return mean_batches(xs[0]); };
  // {2}X4: [(1+3+5+7)/4, (2+4+6+8)/4] = [4, 5]
  test::check_close(test::eval({{Dim({2}, 4), iota(8)}}, b), {4.f, 5.f});
  BOOST_CHECK_EQUAL(dim_of({{Dim({2}, 4), iota(8)}}, b), Dim({2}));
  test::check_close(test::eval({{Dim({2}), {3.f, -1.f}}}, b), {3.f, -1.f});
  test::check_close(grad_of(Dim({1}, 4), iota(4), [](const Expression& x) { return mean_batches(x); }),
                    {0.25f, 0.25f, 0.25f, 0.25f});
  ParameterCollection m;
  BOOST_CHECK_EQUAL(weighted_gradients(m, Dim({3}), Dim({3}, 4), [](const Expression& x) { return mean_batches(x); }),
                    3u + 12u);
}

// ---------------------------------------------------------------- sum_dim / mean_dim

BOOST_AUTO_TEST_CASE(sum_dim_values) {
  std::vector<test::TestInput> mat = {{Dim({2, 3}), iota(6)}};
  auto over = [](std::vector<unsigned> dims, bool b = false) {
    return [dims, b](ComputationGraph&, const std::vector<Expression>& xs) { return sum_dim(xs[0], dims, b); };
  };
  // [[1,3,5],[2,4,6]]: column sums, row sums, everything
  test::check_close(test::eval(mat, over({0})), {3.f, 7.f, 11.f});
  BOOST_CHECK_EQUAL(dim_of(mat, over({0})), Dim({3}));
  test::check_close(test::eval(mat, over({1})), {9.f, 12.f});
  BOOST_CHECK_EQUAL(dim_of(mat, over({1})), Dim({2}));
  test::check_close(test::eval(mat, over({0, 1})), {21.f});
  test::check_close(test::eval(mat, over({1, 0})), {21.f});
  BOOST_CHECK_EQUAL(dim_of(mat, over({0, 1})), Dim({1}));
  // dimension nd is an implicit length-1 dimension: nothing changes
  test::check_close(test::eval(mat, over({2})), iota(6));
  BOOST_CHECK_EQUAL(dim_of(mat, over({2})), Dim({2, 3}));

  // {2,3,2}: element (i,j,k) = 1 + i + 2j + 6k
  std::vector<test::TestInput> cube = {{Dim({2, 3, 2}), iota(12)}};
  test::check_close(test::eval(cube, over({1})), {9.f, 12.f, 27.f, 30.f});
  BOOST_CHECK_EQUAL(dim_of(cube, over({1})), Dim({2, 2}));
  test::check_close(test::eval(cube, over({0, 2})), {18.f, 26.f, 34.f});
  BOOST_CHECK_EQUAL(dim_of(cube, over({0, 2})), Dim({3}));
  test::check_close(test::eval(cube, over({2})), {8.f, 10.f, 12.f, 14.f, 16.f, 18.f});

  // with the batch: {2,3}X2 rows summed in each element, then across elements:
  // batch 0 rows [9, 12], batch 1 rows [27, 30] -> [36, 42]
  std::vector<test::TestInput> batched = {{Dim({2, 3}, 2), iota(12)}};
  test::check_close(test::eval(batched, over({1})), {9.f, 12.f, 27.f, 30.f});
  BOOST_CHECK_EQUAL(dim_of(batched, over({1})), Dim({2}, 2));
  test::check_close(test::eval(batched, over({1}, true)), {36.f, 42.f});
  BOOST_CHECK_EQUAL(dim_of(batched, over({1}, true)), Dim({2}));
  // only the batch: same as sum_batches
  test::check_close(test::eval(batched, over({}, true)), {8.f, 10.f, 12.f, 14.f, 16.f, 18.f});
  BOOST_CHECK_EQUAL(dim_of(batched, over({}, true)), Dim({2, 3}));
  test::check_close(test::eval(batched, over({0, 1}, true)), {78.f});
  // length-1 dimensions
  std::vector<test::TestInput> thin = {{Dim({1, 3}), {1.f, 2.f, 4.f}}};
  test::check_close(test::eval(thin, over({0})), {1.f, 2.f, 4.f});
  BOOST_CHECK_EQUAL(dim_of(thin, over({0})), Dim({3}));
  test::check_close(test::eval(thin, over({1})), {7.f});
  BOOST_CHECK_EQUAL(dim_of(thin, over({1})), Dim({1}));
}

BOOST_AUTO_TEST_CASE(mean_dim_values) {
  auto over = [](std::vector<unsigned> dims, bool b = false) {
    return [dims, b](ComputationGraph&, const std::vector<Expression>& xs) { return mean_dim(xs[0], dims, b); };
  };
  std::vector<test::TestInput> mat = {{Dim({2, 3}), iota(6)}};
  test::check_close(test::eval(mat, over({0})), {1.5f, 3.5f, 5.5f});
  test::check_close(test::eval(mat, over({1})), {3.f, 4.f});
  test::check_close(test::eval(mat, over({0, 1})), {3.5f});
  std::vector<test::TestInput> batched = {{Dim({2, 3}, 2), iota(12)}};
  test::check_close(test::eval(batched, over({1}, true)), {6.f, 7.f});
  BOOST_CHECK_EQUAL(dim_of(batched, over({1}, true)), Dim({2}));
  test::check_close(test::eval(batched, over({}, true)), {4.f, 5.f, 6.f, 7.f, 8.f, 9.f});
  // d mean / dx over 3 columns is 1/3 for each element
  test::check_close(grad_of(Dim({2, 3}), iota(6), [](const Expression& x) { return mean_dim(x, {1}); }),
                    std::vector<float>(6, 1.f / 3.f));
  // over rows and the batch of 2: 1/4
  test::check_close(grad_of(Dim({2, 3}, 2), iota(12), [](const Expression& x) { return mean_dim(x, {0}, true); }),
                    std::vector<float>(12, 0.25f));
}

BOOST_AUTO_TEST_CASE(sum_dim_and_mean_dim_gradients) {
  ParameterCollection m;
  Parameter w = m.add_parameters({2, 3, 2});
  w.set_value(test::test_values(12, 0.2f));
  struct Case {
    std::vector<unsigned> dims;
    bool b;
  };
  for (Case c : {Case{{0}, false}, Case{{1}, false}, Case{{2}, false}, Case{{0, 2}, false}, Case{{2, 0}, false},
                 Case{{0, 1, 2}, false}, Case{{1}, true}, Case{{}, true}, Case{{3}, false}}) {
    for (bool mean : {false, true}) {
      BOOST_TEST_CONTEXT("dims " << c.dims.size() << (c.b ? " + batch" : "") << (mean ? " mean" : " sum")) {
        auto b = [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
          Expression y = cmult(xs[0], parameter(cg, w));
          return mean ? mean_dim(y, c.dims, c.b) : sum_dim(y, c.dims, c.b);
        };
        BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({2, 3, 2}, 3), test::test_values(36)}}, b), 12u + 36u);
        BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({2, 3, 2}), test::test_values(12)}}, b), 24u);
      }
    }
  }
  // a batch of 1 broadcast against the parameter's batch of 1, reduced with a batched input
  Parameter v = m.add_parameters({3});
  v.set_value(test::test_values(3, 0.2f));
  auto bb = [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    return sum_dim(cmult(xs[0], parameter(cg, v)), {0}, true);
  };
  BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({3}, 4), test::test_values(12)}}, bb), 12u + 3u + 12u);
}

BOOST_AUTO_TEST_CASE(sum_dim_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3}), iota(6));
  test::check_throws_with<dim_error>([&] { sum_dim(x, {3}); }, {"sum_dim", "dimension 3", "{2,3}"});
  test::check_throws_with<dim_error>([&] { mean_dim(x, {5}); }, {"mean_dim", "dimension 5", "{2,3}"});
  test::check_throws_with<dim_error>([&] { sum_dim(x, {9}); }, {"sum_dim", "dimension 9"});
  test::check_throws_with<dim_error>([&] { sum_dim(x, {1, 1}); }, {"sum_dim", "dimension 1", "twice"});
  test::check_throws_with<dim_error>([&] { sum_dim(x, {}); }, {"sum_dim", "nothing to reduce", "{2,3}"});
  test::check_throws_with<dim_error>([&] { mean_dim(x, {}, false); }, {"mean_dim", "nothing to reduce"});
  test::check_throws_with<std::invalid_argument>([&] { sum_dim(Expression(), {0}); }, {"sum_dim"});
  test::check_throws_with<std::invalid_argument>([&] { mean_elems(Expression()); }, {"mean_elems"});
  // the failed calls added nothing
  BOOST_CHECK_EQUAL(cg.size(), 1u);
}

// ---------------------------------------------------------------- max_dim / min_dim

BOOST_AUTO_TEST_CASE(max_min_dim_values) {
  // [[1,3,4],[5,2,6]]
  std::vector<test::TestInput> mat = {{Dim({2, 3}), {1.f, 5.f, 3.f, 2.f, 4.f, 6.f}}};
  auto mx = [](unsigned d) {
    return [d](ComputationGraph&, const std::vector<Expression>& xs) { return max_dim(xs[0], d); };
  };
  auto mn = [](unsigned d) {
    return [d](ComputationGraph&, const std::vector<Expression>& xs) { return min_dim(xs[0], d); };
  };
  test::check_close(test::eval(mat, mx(0)), {5.f, 3.f, 6.f});
  BOOST_CHECK_EQUAL(dim_of(mat, mx(0)), Dim({3}));
  test::check_close(test::eval(mat, mx(1)), {4.f, 6.f});
  BOOST_CHECK_EQUAL(dim_of(mat, mx(1)), Dim({2}));
  test::check_close(test::eval(mat, mn(0)), {1.f, 2.f, 4.f});
  test::check_close(test::eval(mat, mn(1)), {1.f, 2.f});
  // the default dimension is 0
  test::check_close(
      test::eval(mat, [](ComputationGraph&, const std::vector<Expression>& xs) { return max_dim(xs[0]); }),
      {5.f, 3.f, 6.f});
  // batched: each element alone; {2}X2 [[1,-2],[-3,-4]] -> max [1, -3], min [-2, -4]
  std::vector<test::TestInput> b2 = {{Dim({2}, 2), {1.f, -2.f, -3.f, -4.f}}};
  test::check_close(test::eval(b2, mx(0)), {1.f, -3.f});
  BOOST_CHECK_EQUAL(dim_of(b2, mx(0)), Dim({1}, 2));
  test::check_close(test::eval(b2, mn(0)), {-2.f, -4.f});
  // {2,2,2}: element (i,j,k) = 1 + i + 2j + 4k, max over the middle dimension
  std::vector<test::TestInput> cube = {{Dim({2, 2, 2}), {1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f}}};
  test::check_close(test::eval(cube, mx(1)), {3.f, 4.f, 7.f, 8.f});
  test::check_close(test::eval(cube, mn(2)), {1.f, 2.f, 3.f, 4.f});
  BOOST_CHECK_EQUAL(dim_of(cube, mn(2)), Dim({2, 2}));
  // a length-1 dimension: the value itself
  std::vector<test::TestInput> thin = {{Dim({1, 3}), {-1.f, 2.f, 0.5f}}};
  test::check_close(test::eval(thin, mx(0)), {-1.f, 2.f, 0.5f});
  test::check_close(test::eval(thin, mn(0)), {-1.f, 2.f, 0.5f});
}

BOOST_AUTO_TEST_CASE(max_min_dim_ties_send_the_gradient_to_the_first) {
  auto mx = [](const Expression& x) { return max_dim(x); };
  auto mn = [](const Expression& x) { return min_dim(x); };
  test::check_close(grad_of(Dim({3}), {2.f, 7.f, 7.f}, mx), {0.f, 1.f, 0.f});
  test::check_close(grad_of(Dim({4}), {5.f, 5.f, 5.f, 5.f}, mx), {1.f, 0.f, 0.f, 0.f});
  test::check_close(grad_of(Dim({3}), {3.f, 1.f, 1.f}, mn), {0.f, 1.f, 0.f});
  test::check_close(grad_of(Dim({3}), {0.f, 0.f, 0.f}, mn), {1.f, 0.f, 0.f});
  // along dimension 1 of [[1,1],[2,0]] -> rows: max picks (0,0) and (1,0)
  test::check_close(grad_of(Dim({2, 2}), {1.f, 2.f, 1.f, 0.f}, [](const Expression& x) { return max_dim(x, 1); }),
                    {1.f, 1.f, 0.f, 0.f});
  // batched, ties in element 1 only
  test::check_close(grad_of(Dim({2}, 2), {1.f, 3.f, 4.f, 4.f}, mx), {0.f, 1.f, 1.f, 0.f});
  test::check_close(grad_of(Dim({2}, 2), {1.f, 3.f, 4.f, 4.f}, mn), {1.f, 0.f, 1.f, 0.f});
}

BOOST_AUTO_TEST_CASE(max_min_dim_gradients) {
  ParameterCollection m;
  Parameter w = m.add_parameters({3, 2, 2});
  w.set_value(test::test_values(12, 0.2f));
  for (unsigned d = 0; d < 3; ++d) {
    for (bool is_max : {true, false}) {
      BOOST_TEST_CONTEXT((is_max ? "max_dim " : "min_dim ") << d) {
        auto b = [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
          Expression y = cmult(xs[0], parameter(cg, w));
          return is_max ? max_dim(y, d) : min_dim(y, d);
        };
        BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({3, 2, 2}, 2), test::test_values(24)}}, b), 12u + 24u);
        BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({3, 2, 2}), test::test_values(12)}}, b), 24u);
      }
    }
  }
  // length-1 dimension
  auto thin = [](ComputationGraph&, const std::vector<Expression>& xs) { return max_dim(xs[0], 0); };
  BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({1, 3}, 2), test::test_values(6)}}, thin), 12u + 6u);
}

BOOST_AUTO_TEST_CASE(max_min_dim_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3}, 2), iota(12));
  test::check_throws_with<dim_error>([&] { max_dim(x, 2); }, {"max_dim", "dimension 2", "{2,3X2}"});
  test::check_throws_with<dim_error>([&] { min_dim(x, 7); }, {"min_dim", "dimension 7", "{2,3X2}"});
  Expression v = input(cg, Dim({4}), iota(4));
  test::check_throws_with<dim_error>([&] { max_dim(v, 1); }, {"max_dim", "dimension 1", "{4}"});
  BOOST_CHECK_EQUAL(cg.size(), 2u);
}

// Values recomputed after the inputs change: the gradient follows the new extreme.
BOOST_AUTO_TEST_CASE(max_dim_forward_again_uses_new_values) {
  std::vector<float> data = {1.f, 3.f, 2.f};
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), &data);
  Expression y = max_dim(x);
  test::check_close(as_vector(cg.forward(y)), {3.f});
  data = {5.f, 3.f, 2.f};
  test::check_close(as_vector(cg.forward(y)), {5.f});
  cg.backward(y, true);
  test::check_close(as_vector(cg.get_gradient(x)), {1.f, 0.f, 0.f});
}
