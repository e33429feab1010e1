#define BOOST_TEST_MODULE ops_stats
#include <limits>

#include "test_utils.h"

using namespace dynet_lite;
using test::grad_of;
using test::iota;
using test::UnaryFn;
using test::values_of;

namespace {

Dim dim_of(const Dim& d, const UnaryFn& f) {
  ComputationGraph cg;
  Expression x = input(cg, d, std::vector<float>(d.size(), 1.f));
  return f(x).dim();
}

// Gradient checks of f on inputs and parameters: an input alone, a batched input
// times an unbatched parameter, and an unbatched input against a batch of 2.
// Returns the number of checked elements.
size_t check_all_gradients(const Dim& single, const UnaryFn& f, float offset = 0.f) {
  ParameterCollection m;
  Parameter w = m.add_parameters(single);
  std::vector<float> wv(single.size());
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.8f + 0.05f * static_cast<float>(i % 7);
  w.set_value(wv);
  size_t n = single.size();
  size_t checked = 0;
  auto plain = [&](ComputationGraph&, const std::vector<Expression>& xs) { return f(xs[0]); };
  checked += test::check_gradients(m, {{single, test::test_values(n, offset)}}, plain);
  auto scaled = [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    return f(cmult(xs[0], parameter(cg, w)));
  };
  Dim batched = single;
  batched.bd = 3;
  checked += test::check_gradients(m, {{batched, test::test_values(3 * n, offset)}}, scaled);
  auto bcast = [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    return f(cmult(cmult(xs[0], parameter(cg, w)), xs[1]));
  };
  Dim two = single;
  two.bd = 2;
  std::vector<float> ones(2 * n);
  for (size_t i = 0; i < ones.size(); ++i) ones[i] = 1.f + 0.1f * static_cast<float>(i % 3);
  checked += test::check_gradients(m, {{single, test::test_values(n, offset)}, {two, ones}}, bcast);
  BOOST_CHECK_EQUAL(checked, (n + n) + (n + 3 * n) + (n + n + 2 * n));
  return checked;
}

}  // namespace

// ================================================================ moments

BOOST_AUTO_TEST_CASE(moment_elems_values) {
  Dim d({2, 3});
  auto m = [](unsigned r) { return [r](const Expression& x) { return moment_elems(x, r); }; };
  // 1..6: mean 3.5, mean of squares 91/6, mean of cubes 441/6
  test::check_close(values_of(d, iota(6), m(1)), {3.5f});
  test::check_close(values_of(d, iota(6), m(2)), {91.f / 6.f});
  test::check_close(values_of(d, iota(6), m(3)), {73.5f});
  BOOST_CHECK_EQUAL(dim_of(d, m(2)), Dim({1}));
  // per batch element: [1,2] -> 2.5, [3,4] -> 12.5
  test::check_close(values_of(Dim({2}, 2), iota(4), m(2)), {2.5f, 12.5f});
  BOOST_CHECK_EQUAL(dim_of(Dim({2}, 2), m(2)), Dim({1}, 2));
  // a single element: x^r
  test::check_close(values_of(Dim({1}), {-2.f}, m(3)), {-8.f});
  // d/dx mean(x^2) = 2x/n
  test::check_close(grad_of(Dim({3}), {1.f, 2.f, 3.f}, m(2)), {2.f / 3.f, 4.f / 3.f, 2.f});
  // d/dx mean(x^4) = 4x^3/n
  test::check_close(grad_of(Dim({2}), {1.f, -2.f}, m(4)), {2.f, -16.f});
}

BOOST_AUTO_TEST_CASE(moment_dim_values) {
  Dim d({2, 3});
  // rows of [[1,3,5],[2,4,6]]: mean of squares 35/3 and 56/3
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return moment_dim(x, {1}, 2); }),
                    {35.f / 3.f, 56.f / 3.f});
  BOOST_CHECK_EQUAL(dim_of(d, [](const Expression& x) { return moment_dim(x, {1}, 2); }), Dim({2}));
  // column means
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return moment_dim(x, {0}, 1); }),
                    {1.5f, 3.5f, 5.5f});
  // n overrides the divisor: row sums 9 and 12 divided by 2
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return moment_dim(x, {1}, 1, false, 2); }),
                    {4.5f, 6.f});
  // everything: same as moment_elems
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return moment_dim(x, {0, 1}, 3); }), {73.5f});
  // rows and the batch of {2,3}X2: column c averages 4 numbers
  Dim b({2, 3}, 2);
  test::check_close(values_of(b, iota(12), [](const Expression& x) { return moment_dim(x, {0}, 1, true); }),
                    {4.5f, 6.5f, 8.5f});
  BOOST_CHECK_EQUAL(dim_of(b, [](const Expression& x) { return moment_dim(x, {0}, 1, true); }), Dim({3}));
  // without the batch flag each batch element separately
  test::check_close(values_of(b, iota(12), [](const Expression& x) { return moment_dim(x, {0}, 1); }),
                    {1.5f, 3.5f, 5.5f, 7.5f, 9.5f, 11.5f});
  BOOST_CHECK_EQUAL(dim_of(b, [](const Expression& x) { return moment_dim(x, {0}, 1); }), Dim({3}, 2));
  // only the batch: moment_batches
  test::check_close(values_of(Dim({2}, 2), iota(4), [](const Expression& x) { return moment_dim(x, {}, 2, true); }),
                    {5.f, 10.f});
  // dimension nd is an implicit length-1 dimension
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return moment_dim(x, {2}, 2); }),
                    {1.f, 4.f, 9.f, 16.f, 25.f, 36.f});
  // gradient: r x^(r-1) / n over 3 columns -> 2x/3
  test::check_close(grad_of(d, iota(6), [](const Expression& x) { return moment_dim(x, {1}, 2); }),
                    {2.f / 3.f, 4.f / 3.f, 2.f, 8.f / 3.f, 10.f / 3.f, 4.f});
  // with n = 2: 1/2 each
  test::check_close(grad_of(d, iota(6), [](const Expression& x) { return moment_dim(x, {1}, 1, false, 2); }),
                    std::vector<float>(6, 0.5f));
}

BOOST_AUTO_TEST_CASE(moment_batches_values) {
  auto m = [](unsigned r) { return [r](const Expression& x) { return moment_batches(x, r); }; };
  // [1,2], [3,4]: squares averaged across the batch: [5, 10]
  test::check_close(values_of(Dim({2}, 2), iota(4), m(2)), {5.f, 10.f});
  BOOST_CHECK_EQUAL(dim_of(Dim({2}, 2), m(2)), Dim({2}));
  test::check_close(values_of(Dim({2}, 2), iota(4), m(1)), {2.f, 3.f});
  // a batch of one: x^r
  test::check_close(values_of(Dim({3}), {1.f, -2.f, 3.f}, m(3)), {1.f, -8.f, 27.f});
  // d/dx = r x^(r-1) / B
  test::check_close(grad_of(Dim({2}, 2), iota(4), m(2)), {1.f, 2.f, 3.f, 4.f});
}

BOOST_AUTO_TEST_CASE(moment_gradients) {
  Dim d({2, 3});
  for (unsigned r : {1u, 2u, 3u, 5u}) {
    BOOST_TEST_CONTEXT("r = " << r) {
      check_all_gradients(d, [r](const Expression& x) { return moment_elems(x, r); });
      check_all_gradients(d, [r](const Expression& x) { return moment_dim(x, {1}, r); });
      check_all_gradients(d, [r](const Expression& x) { return moment_dim(x, {0, 1}, r, false, 4); });
      check_all_gradients(d, [r](const Expression& x) { return moment_dim(x, {0}, r, true); });
      check_all_gradients(d, [r](const Expression& x) { return moment_dim(x, {}, r, true, 3); });
      check_all_gradients(d, [r](const Expression& x) { return moment_batches(x, r); });
    }
  }
  check_all_gradients(Dim({2, 3, 2}), [](const Expression& x) { return moment_dim(x, {0, 2}, 2); });
}

// ================================================================ standard deviations

BOOST_AUTO_TEST_CASE(std_values) {
  // [1,2,3,4]: mean 2.5, variance 5/4
  test::check_close(values_of(Dim({4}), iota(4), [](const Expression& x) { return std_elems(x); }), {1.11803399f});
  test::check_close(values_of(Dim({2}, 2), {1.f, 3.f, 2.f, 2.f}, [](const Expression& x) { return std_elems(x); }),
                    {1.f, 0.f});
  BOOST_CHECK_EQUAL(dim_of(Dim({2, 3}, 2), [](const Expression& x) { return std_elems(x); }), Dim({1}, 2));
  // rows [1,3,5] and [2,4,6]: variance 8/3
  Dim d({2, 3});
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return std_dim(x, {1}); }),
                    {1.63299316f, 1.63299316f});
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return std_dim(x, {0}); }), {0.5f, 0.5f, 0.5f});
  BOOST_CHECK_EQUAL(dim_of(d, [](const Expression& x) { return std_dim(x, {0}); }), Dim({3}));
  // n = 2 for [1,3,5]: m = 9/2, sum of squares 3.5^2 + 1.5^2 + 0.5^2 = 14.75, y = sqrt(14.75 / 2)
  test::check_close(
      values_of(Dim({1, 3}), {1.f, 3.f, 5.f}, [](const Expression& x) { return std_dim(x, {1}, false, 2); }),
      {2.71569512f});
  // rows and the batch: {2}X2 [1,3],[5,7]: all four numbers, std sqrt(5)
  test::check_close(
      values_of(Dim({2}, 2), {1.f, 3.f, 5.f, 7.f}, [](const Expression& x) { return std_dim(x, {0}, true); }),
      {2.23606798f});
  // across the batch: [1,2],[3,6] -> [1, 2]
  test::check_close(values_of(Dim({2}, 2), {1.f, 2.f, 3.f, 6.f}, [](const Expression& x) { return std_batches(x); }),
                    {1.f, 2.f});
  BOOST_CHECK_EQUAL(dim_of(Dim({2, 3}, 4), [](const Expression& x) { return std_batches(x); }), Dim({2, 3}));
  test::check_close(
      values_of(Dim({2}, 2), {1.f, 2.f, 3.f, 6.f}, [](const Expression& x) { return std_dim(x, {}, true); }),
      {1.f, 2.f});
}

BOOST_AUTO_TEST_CASE(std_gradients_by_hand_and_at_zero_variance) {
  // d std / dx_i = (x_i - m) / (n std)
  test::check_close(grad_of(Dim({4}), iota(4), [](const Expression& x) { return std_elems(x); }),
                    {-0.33541020f, -0.11180340f, 0.11180340f, 0.33541020f});
  // all elements equal: std 0, gradient taken as 0 (no NaN)
  std::vector<float> g =
      grad_of(Dim({3}, 2), {2.f, 2.f, 2.f, 1.f, 2.f, 3.f}, [](const Expression& x) { return std_elems(x); });
  // [1,2,3]: mean 2, std sqrt(2/3): (x - 2) / (3 sqrt(2/3))
  test::check_close(g, {0.f, 0.f, 0.f, -0.40824829f, 0.f, 0.40824829f});
  g = grad_of(Dim({1}, 3), {4.f, 4.f, 4.f}, [](const Expression& x) { return std_batches(x); });
  test::check_close(g, {0.f, 0.f, 0.f}, 0);
  // a single element: std 0, gradient 0
  test::check_close(values_of(Dim({1}), {5.f}, [](const Expression& x) { return std_elems(x); }), {0.f}, 0);
}

BOOST_AUTO_TEST_CASE(std_gradients) {
  Dim d({2, 3});
  check_all_gradients(d, [](const Expression& x) { return std_elems(x); });
  check_all_gradients(d, [](const Expression& x) { return std_dim(x, {1}); });
  check_all_gradients(d, [](const Expression& x) { return std_dim(x, {0, 1}); });
  check_all_gradients(d, [](const Expression& x) { return std_dim(x, {0}, true); });
  check_all_gradients(d, [](const Expression& x) { return std_dim(x, {}, true); });
  check_all_gradients(d, [](const Expression& x) { return std_batches(x); });
  // n overridden: the exact derivative of the forward formula
  check_all_gradients(d, [](const Expression& x) { return std_dim(x, {1}, false, 2); });
  check_all_gradients(d, [](const Expression& x) { return std_dim(x, {0}, true, 7); });
  check_all_gradients(Dim({2, 2, 3}), [](const Expression& x) { return std_dim(x, {0, 2}); });
}

BOOST_AUTO_TEST_CASE(moment_and_std_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3}), iota(6));
  test::check_throws_with<std::invalid_argument>([&] { moment_elems(x, 0); }, {"moment_elems", "order", ">= 1"});
  test::check_throws_with<std::invalid_argument>([&] { moment_dim(x, {0}, 0); }, {"moment_dim", "order"});
  test::check_throws_with<std::invalid_argument>([&] { moment_batches(x, 0); }, {"moment_batches", "order"});
  test::check_throws_with<dim_error>([&] { moment_dim(x, {3}, 2); }, {"moment_dim", "dimension 3", "{2,3}"});
  test::check_throws_with<dim_error>([&] { std_dim(x, {4}); }, {"std_dim", "dimension 4", "{2,3}"});
  test::check_throws_with<dim_error>([&] { std_dim(x, {}); }, {"std_dim", "nothing to reduce", "{2,3}"});
  test::check_throws_with<dim_error>([&] { moment_dim(x, {}, 1); }, {"moment_dim", "nothing to reduce"});
  test::check_throws_with<dim_error>([&] { std_dim(x, {1, 1}); }, {"std_dim", "listed twice"});
  test::check_throws_with<dim_error>([&] { moment_dim(x, {9}, 1); }, {"moment_dim", "dimension 9"});
  Expression empty;
  test::check_throws_with<std::invalid_argument>([&] { std_elems(empty); }, {"std_elems", "empty"});
  test::check_throws_with<std::invalid_argument>([&] { std_batches(empty); }, {"std_batches", "empty"});
}

// ================================================================ cumsum

BOOST_AUTO_TEST_CASE(cumsum_values_and_gradient) {
  Dim d({2, 3});
  // down the rows: [[1,3,5],[3,7,11]]
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return cumsum(x, 0); }),
                    {1.f, 3.f, 3.f, 7.f, 5.f, 11.f});
  // along the columns: rows 1,4,9 and 2,6,12
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return cumsum(x, 1); }),
                    {1.f, 2.f, 4.f, 6.f, 9.f, 12.f});
  // dimension nd: length 1, nothing to add
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return cumsum(x, 2); }), iota(6));
  BOOST_CHECK_EQUAL(dim_of(Dim({2, 3}, 2), [](const Expression& x) { return cumsum(x, 1); }), Dim({2, 3}, 2));
  // batch elements stay apart: {3}X2
  test::check_close(values_of(Dim({3}, 2), iota(6), [](const Expression& x) { return cumsum(x, 0); }),
                    {1.f, 3.f, 6.f, 4.f, 9.f, 15.f});
  // length 1
  test::check_close(values_of(Dim({1}), {-2.f}, [](const Expression& x) { return cumsum(x, 0); }), {-2.f});
  // the gradient of sum(cumsum(x)) is the number of outputs each x_i reaches: 3, 2, 1
  test::check_close(grad_of(Dim({3}), iota(3), [](const Expression& x) { return cumsum(x, 0); }), {3.f, 2.f, 1.f});
  test::check_close(grad_of(Dim({2, 2, 2}), iota(8), [](const Expression& x) { return cumsum(x, 2); }),
                    {2.f, 2.f, 2.f, 2.f, 1.f, 1.f, 1.f, 1.f});
  for (unsigned k : {0u, 1u, 2u}) BOOST_TEST_CONTEXT("d = " << k) {
      check_all_gradients(Dim({2, 3, 2}), [k](const Expression& x) { return cumsum(x, k); });
    }
}

// ================================================================ logsumexp_dim

BOOST_AUTO_TEST_CASE(logsumexp_dim_values_and_gradient) {
  const float ln2 = 0.69314718f, ln3 = 1.09861229f;
  // {2,2} [[0, ln2],[ln3, ln2]]
  std::vector<float> x = {0.f, ln3, ln2, ln2};
  Dim d({2, 2});
  // columns: ln(1 + 3) and ln(2 + 2)
  test::check_close(values_of(d, x, [](const Expression& e) { return logsumexp_dim(e, 0); }),
                    {1.38629436f, 1.38629436f});
  BOOST_CHECK_EQUAL(dim_of(d, [](const Expression& e) { return logsumexp_dim(e, 0); }), Dim({2}));
  // rows: ln(1 + 2) and ln(3 + 2)
  test::check_close(values_of(d, x, [](const Expression& e) { return logsumexp_dim(e, 1); }), {ln3, 1.60943791f});
  // the gradient is the softmax along d: column 0 [1/4, 3/4], column 1 [1/2, 1/2]
  test::check_close(grad_of(d, x, [](const Expression& e) { return logsumexp_dim(e, 0); }), {0.25f, 0.75f, 0.5f, 0.5f});
  // a vector of 3: ln(1 + 2 + 5)
  test::check_close(
      values_of(Dim({3}), {0.f, ln2, 1.60943791f}, [](const Expression& e) { return logsumexp_dim(e, 0); }),
      {2.07944154f});
  BOOST_CHECK_EQUAL(dim_of(Dim({3}, 2), [](const Expression& e) { return logsumexp_dim(e, 0); }), Dim({1}, 2));
  // large values stay finite: 1000 + ln 2
  test::check_close(values_of(Dim({2}), {1000.f, 1000.f}, [](const Expression& e) { return logsumexp_dim(e, 0); }),
                    {1000.69314718f});
  test::check_close(grad_of(Dim({2}), {1000.f, 1000.f}, [](const Expression& e) { return logsumexp_dim(e, 0); }),
                    {0.5f, 0.5f});
  // all -inf: -inf, no gradient (no NaN)
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> v = values_of(Dim({2}), {ninf, ninf}, [](const Expression& e) { return logsumexp_dim(e, 0); });
  BOOST_CHECK(std::isinf(v[0]) && v[0] < 0);
  test::check_close(grad_of(Dim({2}), {ninf, ninf}, [](const Expression& e) { return logsumexp_dim(e, 0); }),
                    {0.f, 0.f}, 0);
  // one -inf: it gets no weight
  test::check_close(grad_of(Dim({2}), {ninf, 1.f}, [](const Expression& e) { return logsumexp_dim(e, 0); }),
                    {0.f, 1.f});
  // length 1: y = x, gradient 1
  test::check_close(values_of(Dim({1, 3}), {1.f, 2.f, 3.f}, [](const Expression& e) { return logsumexp_dim(e, 0); }),
                    {1.f, 2.f, 3.f});
  for (unsigned k : {0u, 1u, 2u}) BOOST_TEST_CONTEXT("d = " << k) {
      check_all_gradients(Dim({2, 3, 2}), [k](const Expression& e) { return logsumexp_dim(e, k); });
    }
}

// ================================================================ fold_rows, kmh_ngram

BOOST_AUTO_TEST_CASE(fold_rows_values_and_gradient) {
  Dim d({4, 2});
  // columns [1,2,3,4] and [5,6,7,8], pairs of rows summed
  test::check_close(values_of(d, iota(8), [](const Expression& x) { return fold_rows(x); }), {3.f, 7.f, 11.f, 15.f});
  BOOST_CHECK_EQUAL(dim_of(d, [](const Expression& x) { return fold_rows(x); }), Dim({2, 2}));
  test::check_close(values_of(d, iota(8), [](const Expression& x) { return fold_rows(x, 4); }), {10.f, 26.f});
  BOOST_CHECK_EQUAL(dim_of(d, [](const Expression& x) { return fold_rows(x, 4); }), Dim({1, 2}));
  test::check_close(values_of(d, iota(8), [](const Expression& x) { return fold_rows(x, 1); }), iota(8));
  // a vector and a batch
  test::check_close(values_of(Dim({4}, 2), iota(8), [](const Expression& x) { return fold_rows(x, 2); }),
                    {3.f, 7.f, 11.f, 15.f});
  BOOST_CHECK_EQUAL(dim_of(Dim({4}, 2), [](const Expression& x) { return fold_rows(x, 2); }), Dim({2}, 2));
  // each input row reaches one output: gradient 1
  test::check_close(grad_of(d, iota(8), [](const Expression& x) { return fold_rows(x); }), std::vector<float>(8, 1.f));
  check_all_gradients(Dim({6, 2}), [](const Expression& x) { return fold_rows(x, 3); });
  check_all_gradients(Dim({4, 3}), [](const Expression& x) { return fold_rows(x); });

  ComputationGraph cg;
  Expression x = input(cg, Dim({4, 2}), iota(8));
  test::check_throws_with<dim_error>([&] { fold_rows(x, 3); }, {"fold_rows", "4 rows", "{4,2}", "3"});
  test::check_throws_with<dim_error>([&] { fold_rows(x, 0); }, {"fold_rows", "{4,2}"});
  Expression cube = input(cg, Dim({2, 2, 2}), iota(8));
  test::check_throws_with<dim_error>([&] { fold_rows(cube); }, {"fold_rows", "{2,2,2}"});
}

BOOST_AUTO_TEST_CASE(kmh_ngram_values_and_gradient) {
  Dim d({2, 4});
  // columns [1,2] [3,4] [5,6] [7,8]; sums of 2 neighbours: [4,6] [8,10] [12,14]
  test::check_close(values_of(d, iota(8), [](const Expression& x) { return kmh_ngram(x, 2); }),
                    {4.f, 6.f, 8.f, 10.f, 12.f, 14.f});
  BOOST_CHECK_EQUAL(dim_of(d, [](const Expression& x) { return kmh_ngram(x, 2); }), Dim({2, 3}));
  test::check_close(values_of(d, iota(8), [](const Expression& x) { return kmh_ngram(x, 3); }),
                    {9.f, 12.f, 15.f, 18.f});
  test::check_close(values_of(d, iota(8), [](const Expression& x) { return kmh_ngram(x, 4); }), {16.f, 20.f});
  test::check_close(values_of(d, iota(8), [](const Expression& x) { return kmh_ngram(x, 1); }), iota(8));
  // batch elements apart: {2,2}X2, n = 2
  test::check_close(values_of(Dim({2, 2}, 2), iota(8), [](const Expression& x) { return kmh_ngram(x, 2); }),
                    {4.f, 6.f, 12.f, 14.f});
  BOOST_CHECK_EQUAL(dim_of(Dim({2, 2}, 2), [](const Expression& x) { return kmh_ngram(x, 2); }), Dim({2, 1}, 2));
  // column c reaches min(c, n-1, ...) outputs: with 4 columns and n = 2: 1, 2, 2, 1
  test::check_close(grad_of(d, iota(8), [](const Expression& x) { return kmh_ngram(x, 2); }),
                    {1.f, 1.f, 2.f, 2.f, 2.f, 2.f, 1.f, 1.f});
  check_all_gradients(Dim({2, 5}), [](const Expression& x) { return kmh_ngram(x, 3); });

  ComputationGraph cg;
  Expression x = input(cg, d, iota(8));
  test::check_throws_with<dim_error>([&] { kmh_ngram(x, 5); }, {"kmh_ngram", "n = 5", "4 columns", "{2,4}"});
  test::check_throws_with<dim_error>([&] { kmh_ngram(x, 0); }, {"kmh_ngram", "n = 0"});
  Expression cube = input(cg, Dim({2, 2, 2}), iota(8));
  test::check_throws_with<dim_error>([&] { kmh_ngram(cube, 1); }, {"kmh_ngram", "{2,2,2}"});
}

// ================================================================ kmax_pooling

BOOST_AUTO_TEST_CASE(kmax_pooling_values) {
  // rows [3,1,4,1] and [5,9,2,6] of a {2,4} matrix
  std::vector<float> x = {3.f, 5.f, 1.f, 9.f, 4.f, 2.f, 1.f, 6.f};
  Dim d({2, 4});
  // the 2 largest of each row in their order: [3,4] and [9,6]
  test::check_close(values_of(d, x, [](const Expression& e) { return kmax_pooling(e, 2); }), {3.f, 9.f, 4.f, 6.f});
  BOOST_CHECK_EQUAL(dim_of(d, [](const Expression& e) { return kmax_pooling(e, 2); }), Dim({2, 2}));
  test::check_close(values_of(d, x, [](const Expression& e) { return kmax_pooling(e, 1); }), {4.f, 9.f});
  test::check_close(values_of(d, x, [](const Expression& e) { return kmax_pooling(e, 3); }),
                    {3.f, 5.f, 1.f, 9.f, 4.f, 6.f});  // [3,1,4] (the first 1) and [5,9,6]
  test::check_close(values_of(d, x, [](const Expression& e) { return kmax_pooling(e, 4); }), x);
  // along the rows: columns [3,5] [1,9] [4,2] [1,6], k = 1: the column maxima
  test::check_close(values_of(d, x, [](const Expression& e) { return kmax_pooling(e, 1, 0); }), {5.f, 9.f, 4.f, 6.f});
  BOOST_CHECK_EQUAL(dim_of(d, [](const Expression& e) { return kmax_pooling(e, 1, 0); }), Dim({1, 4}));
  // ties: [2,2,3] with k = 2 keeps the 3 and the first 2
  test::check_close(values_of(Dim({1, 3}), {2.f, 2.f, 3.f}, [](const Expression& e) { return kmax_pooling(e, 2); }),
                    {2.f, 3.f});
  test::check_close(grad_of(Dim({1, 3}), {2.f, 2.f, 3.f}, [](const Expression& e) { return kmax_pooling(e, 2); }),
                    {1.f, 0.f, 1.f}, 0);
  // all equal: the first k
  test::check_close(grad_of(Dim({1, 4}), {1.f, 1.f, 1.f, 1.f}, [](const Expression& e) { return kmax_pooling(e, 2); }),
                    {1.f, 1.f, 0.f, 0.f}, 0);
  // batches apart: {1,3}X2
  test::check_close(
      values_of(Dim({1, 3}, 2), {1.f, 3.f, 2.f, 6.f, 5.f, 4.f}, [](const Expression& e) { return kmax_pooling(e, 2); }),
      {3.f, 2.f, 6.f, 5.f});
  BOOST_CHECK_EQUAL(dim_of(Dim({1, 3}, 2), [](const Expression& e) { return kmax_pooling(e, 2); }), Dim({1, 2}, 2));
  // a NaN is never chosen
  const float nan = std::numeric_limits<float>::quiet_NaN();
  test::check_close(values_of(Dim({1, 3}), {nan, 1.f, 2.f}, [](const Expression& e) { return kmax_pooling(e, 2); }),
                    {1.f, 2.f});
  // the gradient goes to the chosen positions only
  std::vector<float> g = grad_of(d, x, [](const Expression& e) { return kmax_pooling(e, 2) * 2.f; });
  test::check_close(g, {2.f, 0.f, 0.f, 2.f, 2.f, 0.f, 0.f, 2.f}, 0);
}

BOOST_AUTO_TEST_CASE(kmax_pooling_gradients_and_errors) {
  check_all_gradients(Dim({2, 5}), [](const Expression& e) { return kmax_pooling(e, 2); });
  check_all_gradients(Dim({4, 3}), [](const Expression& e) { return kmax_pooling(e, 3, 0); });
  check_all_gradients(Dim({2, 3, 4}), [](const Expression& e) { return kmax_pooling(e, 2, 2); });

  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 4}), iota(8));
  test::check_throws_with<dim_error>([&] { kmax_pooling(x, 5); }, {"kmax_pooling", "k = 5", "{2,4}"});
  test::check_throws_with<dim_error>([&] { kmax_pooling(x, 0); }, {"kmax_pooling", "k = 0"});
  test::check_throws_with<dim_error>([&] { kmax_pooling(x, 1, 2); }, {"kmax_pooling", "dimension 2", "{2,4}"});
}

// ================================================================ strided_select

BOOST_AUTO_TEST_CASE(strided_select_values) {
  // {3,4}: element (r, c) = 1 + r + 3c
  Dim d({3, 4});
  auto sel = [](std::vector<int> s, std::vector<int> f = {}, std::vector<int> t = {}) {
    return [s, f, t](const Expression& x) { return strided_select(x, s, f, t); };
  };
  // rows 0, 2 and columns 0, 2
  test::check_close(values_of(d, iota(12), sel({2, 2})), {1.f, 3.f, 7.f, 9.f});
  BOOST_CHECK_EQUAL(dim_of(d, sel({2, 2})), Dim({2, 2}));
  // rows 1..2, columns 0 and 3
  test::check_close(values_of(d, iota(12), sel({1, 3}, {1})), {2.f, 3.f, 11.f, 12.f});
  // rows [0, 2), columns [1, 3)
  test::check_close(values_of(d, iota(12), sel({1, 1}, {0, 1}, {2, 3})), {4.f, 5.f, 7.f, 8.f});
  BOOST_CHECK_EQUAL(dim_of(d, sel({1, 1}, {0, 1}, {2, 3})), Dim({2, 2}));
  // nothing listed: the whole tensor
  test::check_close(values_of(d, iota(12), sel({})), iota(12));
  // a stride larger than the dimension: the first element only
  test::check_close(values_of(d, iota(12), sel({5, 9})), {1.f});
  BOOST_CHECK_EQUAL(dim_of(d, sel({5, 9})), Dim({1, 1}));
  // the batch is axis nd: {2}X4, every second batch element
  test::check_close(values_of(Dim({2}, 4), iota(8), sel({1, 2})), {1.f, 2.f, 5.f, 6.f});
  BOOST_CHECK_EQUAL(dim_of(Dim({2}, 4), sel({1, 2})), Dim({2}, 2));
  // row 1 of batch elements 1..3
  test::check_close(values_of(Dim({2}, 4), iota(8), sel({1, 1}, {1, 1})), {4.f, 6.f, 8.f});
  BOOST_CHECK_EQUAL(dim_of(Dim({2}, 4), sel({1, 1}, {1, 1})), Dim({1}, 3));
  // without batch entries the batch is kept whole
  test::check_close(values_of(Dim({2}, 2), iota(4), sel({2})), {1.f, 3.f});
  BOOST_CHECK_EQUAL(dim_of(Dim({2}, 2), sel({2})), Dim({1}, 2));
  // gradient: 1 at the selected elements, 0 elsewhere
  test::check_close(grad_of(d, iota(12), sel({2, 2})), {1.f, 0.f, 1.f, 0.f, 0.f, 0.f, 1.f, 0.f, 1.f, 0.f, 0.f, 0.f}, 0);
}

BOOST_AUTO_TEST_CASE(strided_select_gradients_and_errors) {
  check_all_gradients(Dim({3, 4}), [](const Expression& x) { return strided_select(x, {2, 3}, {0, 1}); });
  check_all_gradients(Dim({3, 4}), [](const Expression& x) { return strided_select(x, {1, 2}, {1, 0}, {3, 3}); });
  // selecting batch elements (the unbatched case keeps its batch of 1 or 2)
  ParameterCollection m;
  auto b = [](ComputationGraph&, const std::vector<Expression>& xs) { return strided_select(xs[0], {1, 2}, {0, 1}); };
  BOOST_CHECK_EQUAL(test::check_gradients(m, {{Dim({2}, 5), test::test_values(10)}}, b), 10u);

  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 4}), iota(12));
  test::check_throws_with<dim_error>([&] { strided_select(x, {0}); }, {"strided_select", "stride 0", "{3,4}"});
  test::check_throws_with<dim_error>([&] { strided_select(x, {1, -1}); }, {"strided_select", "stride -1"});
  test::check_throws_with<index_error>([&] { strided_select(x, {}, {3}); },
                                       {"strided_select", "start 3", "dimension 0", "{3,4}"});
  test::check_throws_with<index_error>([&] { strided_select(x, {}, {0, -1}); }, {"strided_select", "start -1"});
  test::check_throws_with<index_error>(
      [&] {
        strided_select(x, {}, {}, {1, 5});
      },
      {"strided_select", "end 5", "dimension 1", "{3,4}"});
  test::check_throws_with<index_error>([&] { strided_select(x, {}, {2}, {2}); }, {"strided_select", "end 2"});
  test::check_throws_with<index_error>(
      [&] {
        strided_select(x, {}, {0, 0, 1});
      },
      {"strided_select", "the batch", "start 1"});
  test::check_throws_with<dim_error>(
      [&] {
        strided_select(x, {1, 1, 1, 1});
      },
      {"strided_select", "4 strides", "{3,4}"});
  test::check_throws_with<dim_error>([&] { strided_select(x, std::vector<int>(9, 1)); },
                                     {"strided_select", "9 strides"});
}

// ================================================================ helpers

BOOST_AUTO_TEST_CASE(column_and_row_helpers) {
  Dim d({2, 3});
  // [[1,3,5],[2,4,6]]
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return average_cols(x); }), {3.f, 4.f});
  BOOST_CHECK_EQUAL(dim_of(d, [](const Expression& x) { return average_cols(x); }), Dim({2}));
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return sum_cols(x); }), {9.f, 12.f});
  test::check_close(values_of(d, iota(6), [](const Expression& x) { return sum_rows(x); }), {3.f, 7.f, 11.f});
  BOOST_CHECK_EQUAL(dim_of(d, [](const Expression& x) { return sum_rows(x); }), Dim({3}));
  // a vector: sum_rows sums it, average_cols leaves it
  test::check_close(values_of(Dim({3}), {1.f, 2.f, 4.f}, [](const Expression& x) { return sum_rows(x); }), {7.f});
  test::check_close(values_of(Dim({3}), {1.f, 2.f, 4.f}, [](const Expression& x) { return average_cols(x); }),
                    {1.f, 2.f, 4.f});
  // batched
  test::check_close(values_of(Dim({2, 2}, 2), iota(8), [](const Expression& x) { return average_cols(x); }),
                    {2.f, 3.f, 6.f, 7.f});
  test::check_close(grad_of(d, iota(6), [](const Expression& x) { return average_cols(x); }),
                    std::vector<float>(6, 1.f / 3.f));
  check_all_gradients(d, [](const Expression& x) { return average_cols(x); });
  check_all_gradients(d, [](const Expression& x) { return sum_cols(x); });
  check_all_gradients(d, [](const Expression& x) { return sum_rows(x); });
}

BOOST_AUTO_TEST_CASE(expression_division) {
  auto div = [](ComputationGraph&, const std::vector<Expression>& xs) { return xs[0] / xs[1]; };
  test::check_close(test::eval({{Dim({2}), {6.f, 8.f}}, {Dim({2}), {2.f, -4.f}}}, div), {3.f, -2.f});
  // d(x/y)/dx = 1/y, d(x/y)/dy = -x/y^2
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}), {6.f, 8.f});
  Expression y = input(cg, Dim({2}), {2.f, -4.f});
  Expression loss = sum_elems(x / y);
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(cg.get_gradient(x)), {0.5f, -0.25f});
  test::check_close(as_vector(cg.get_gradient(y)), {-1.5f, -0.5f});
  ParameterCollection m;
  BOOST_CHECK_EQUAL(
      test::check_gradients(m, {{Dim({2, 2}, 2), test::test_values(8)}, {Dim({2, 2}), test::test_values(4, 2.f)}}, div),
      12u);
  ComputationGraph g2;
  Expression a = input(g2, Dim({2}), {1.f, 2.f});
  Expression b = input(g2, Dim({3}), {1.f, 2.f, 3.f});
  test::check_throws_with<dim_error>([&] { a / b; }, {"{2}", "{3}"});
}

// ================================================================ errors common to the family

BOOST_AUTO_TEST_CASE(axis_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3}), iota(6));
  test::check_throws_with<dim_error>([&] { cumsum(x, 3); }, {"cumsum", "dimension 3", "{2,3}"});
  test::check_throws_with<dim_error>([&] { logsumexp_dim(x, 2); }, {"logsumexp_dim", "dimension 2", "{2,3}"});
  Expression empty;
  test::check_throws_with<std::invalid_argument>([&] { cumsum(empty, 0); }, {"cumsum", "empty"});
  test::check_throws_with<std::invalid_argument>([&] { kmax_pooling(empty, 1); }, {"kmax_pooling", "empty"});
  test::check_throws_with<std::invalid_argument>([&] { strided_select(empty, {1}); }, {"strided_select", "empty"});
}

// ================================================================ batching

BOOST_AUTO_TEST_CASE(autobatched_results_match_plain_execution) {
  // Several instances of the element-wise-batching ops of the family, computed with
  // and without automatic batching: same values and parameter gradients.
  auto run = [](int strategy, std::vector<float>* grads) {
    ParameterCollection m;
    Parameter w = m.add_parameters({3, 4});
    w.set_value(test::test_values(12, 0.3f));
    ComputationGraph cg;
    cg.set_autobatch(strategy);
    std::vector<Expression> losses;
    for (unsigned i = 0; i < 3; ++i) {
      Expression x = cmult(parameter(cg, w), input(cg, Dim({3, 4}), test::test_values(12, 0.1f * i)));
      losses.push_back(sum_elems(kmax_pooling(x, 2)) + sum_elems(cumsum(x, 1)) + sum_elems(logsumexp_dim(x, 0)) +
                       std_elems(x) + moment_elems(x, 2) + sum_elems(fold_rows(strided_select(x, {1, 1}, {1}))) +
                       sum_elems(kmh_ngram(x, 2)));
    }
    Expression loss = sum(losses);
    float v = as_scalar(cg.forward(loss));
    cg.backward(loss);
    *grads = as_vector(w.get_storage().g);
    return v;
  };
  std::vector<float> g0, g1, g2;
  float v0 = run(0, &g0), v1 = run(1, &g1), v2 = run(2, &g2);
  BOOST_CHECK_CLOSE(v0, v1, 1e-4);
  BOOST_CHECK_CLOSE(v0, v2, 1e-4);
  test::check_close(g1, g0, 1e-5);
  test::check_close(g2, g0, 1e-5);
}
