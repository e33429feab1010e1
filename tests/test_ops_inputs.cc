#define BOOST_TEST_MODULE ops_inputs
#include "test_utils.h"

#include <algorithm>
#include <set>

using namespace dynet_lite;

namespace {

// A 5-row table of {3} rows: row r holds {10r, 10r + 1, 10r + 2}.
LookupParameter make_table(ParameterCollection& m, const std::string& name = "E") {
  std::vector<float> v;
  for (unsigned r = 0; r < 5; ++r)
    for (unsigned k = 0; k < 3; ++k) v.push_back(10.f * r + k);
  return m.add_lookup_parameters(5, {3}, ParameterInitFromVector(v), name);
}

std::vector<float> row_of(unsigned r) { return {10.f * r, 10.f * r + 1, 10.f * r + 2}; }

std::set<unsigned> touched(const LookupParameter& lp) {
  const auto& s = lp.get_storage().non_zero_grads;
  return std::set<unsigned>(s.begin(), s.end());
}

// sum(w * e) with fixed weights, so each element's gradient is its weight.
Expression weighted_sum(ComputationGraph& cg, const Expression& e, float base = 1.f) {
  std::vector<float> w(e.dim().size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = base + static_cast<float>(i);
  return sum_batches(sum_elems(cmult(e, input(cg, e.dim(), w))));
}

}  // namespace

// ---------------------------------------------------------------- input

BOOST_AUTO_TEST_CASE(input_scalar) {
  ComputationGraph cg;
  Expression x = input(cg, 2.5f);
  BOOST_CHECK_EQUAL(x.dim(), Dim({1}));
  BOOST_CHECK_EQUAL(as_scalar(cg.forward(x)), 2.5f);
}

BOOST_AUTO_TEST_CASE(input_pointer_scalar_is_read_at_each_forward) {
  float v = 1.5f;
  ComputationGraph cg;
  Expression x = input(cg, &v);
  Expression y = x * 2.f;
  BOOST_CHECK_EQUAL(as_scalar(cg.forward(y)), 3.f);
  v = -4.f;
  BOOST_CHECK_EQUAL(as_scalar(cg.forward(y)), -8.f);
  // incremental_forward keeps computed values
  v = 100.f;
  BOOST_CHECK_EQUAL(as_scalar(cg.incremental_forward(y)), -8.f);
  BOOST_CHECK_EQUAL(as_scalar(cg.forward(y)), 200.f);
  test::check_throws_with<std::invalid_argument>([&] { input(cg, static_cast<const float*>(nullptr)); },
                                                 {"input", "null"});
}

BOOST_AUTO_TEST_CASE(input_vector_matrix_and_batch) {
  ComputationGraph cg;
  Expression v = input(cg, {3}, {1.f, 2.f, 3.f});
  test::check_close(as_vector(cg.forward(v)), {1.f, 2.f, 3.f}, 0.0);
  // column-major: {2,3} holds columns (1,2), (3,4), (5,6)
  Expression m = input(cg, {2, 3}, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  BOOST_CHECK_EQUAL(m.dim().rows(), 2u);
  BOOST_CHECK_EQUAL(m.dim().cols(), 3u);
  // the first row is (1, 3, 5): summing a row through transpose-free arithmetic
  Expression s = sum_elems(cmult(m, input(cg, {2, 3}, {1.f, 0.f, 1.f, 0.f, 1.f, 0.f})));
  BOOST_CHECK_EQUAL(as_scalar(cg.forward(s)), 9.f);
  Expression b = input(cg, Dim({2}, 3), {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  BOOST_CHECK_EQUAL(b.dim(), Dim({2}, 3));
  Expression bs = sum_elems(b);  // one sum per batch element
  test::check_close(as_vector(cg.forward(bs)), {3.f, 7.f, 11.f}, 0.0);
}

BOOST_AUTO_TEST_CASE(input_copies_the_data) {
  std::vector<float> data = {1.f, 2.f};
  ComputationGraph cg;
  Expression x = input(cg, {2}, data);
  data[0] = 50.f;  // the by-value overload keeps its own copy
  test::check_close(as_vector(cg.forward(x)), {1.f, 2.f}, 0.0);
}

BOOST_AUTO_TEST_CASE(input_pointer_vector_is_read_at_each_forward) {
  std::vector<float> data = {1.f, 2.f, 3.f, 4.f};
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}, 2), &data);
  Expression y = sum_elems(x);
  test::check_close(as_vector(cg.forward(y)), {3.f, 7.f}, 0.0);
  data = {10.f, 20.f, 30.f, 40.f};  // reassigned, possibly reallocated
  test::check_close(as_vector(cg.forward(y)), {30.f, 70.f}, 0.0);
  // changing the size is an error naming both sizes
  data.push_back(5.f);
  test::check_throws_with<dim_error>([&] { cg.forward(y); }, {"input", "5 values", "{2X2}", "4 values"});
}

BOOST_AUTO_TEST_CASE(input_size_mismatch_names_both_sizes) {
  ComputationGraph cg;
  test::check_throws_with<dim_error>([&] { input(cg, {3}, std::vector<float>{1.f, 2.f}); },
                                     {"input", "2 values", "{3}", "3 values"});
  test::check_throws_with<dim_error>([&] { input(cg, Dim({2, 2}, 2), std::vector<float>(7, 0.f)); },
                                     {"input", "7 values", "{2,2X2}", "8 values"});
  std::vector<float> five(5, 0.f);
  test::check_throws_with<dim_error>([&] { input(cg, {4}, &five); }, {"input", "5 values", "{4}", "4 values"});
  test::check_throws_with<std::invalid_argument>([&] { input(cg, {4}, static_cast<const std::vector<float>*>(nullptr)); },
                                                 {"input", "null"});
  BOOST_CHECK_EQUAL(cg.size(), 0u);
}

BOOST_AUTO_TEST_CASE(sparse_input) {
  ComputationGraph cg;
  Expression x = input(cg, {5}, std::vector<unsigned>{1, 3}, std::vector<float>{2.f, 4.f}, -1.f);
  test::check_close(as_vector(cg.forward(x)), {-1.f, 2.f, -1.f, 4.f, -1.f}, 0.0);
  // default fill of 0, a batched shape, positions over the whole tensor
  Expression y = input(cg, Dim({2}, 2), std::vector<unsigned>{0, 3}, std::vector<float>{7.f, 8.f});
  test::check_close(as_vector(cg.forward(y)), {7.f, 0.f, 0.f, 8.f}, 0.0);
  test::check_throws_with<dim_error>(
      [&] { input(cg, {5}, std::vector<unsigned>{1, 2, 3}, std::vector<float>{1.f, 2.f}); },
      {"input (sparse)", "3 positions", "2 values"});
  test::check_throws_with<index_error>(
      [&] { input(cg, {5}, std::vector<unsigned>{1, 5}, std::vector<float>{1.f, 2.f}); },
      {"input (sparse)", "position 5", "{5}"});
}

BOOST_AUTO_TEST_CASE(input_gradient_is_available_with_full_backward) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}, 2), {1.f, 2.f, 3.f, 4.f});
  Expression loss = weighted_sum(cg, square(x));
  cg.forward(loss);
  cg.backward(loss, true);
  // d/dx sum w x^2 = 2 w x with w = 1, 2, 3, 4
  test::check_close(as_vector(cg.get_gradient(x)), {2.f, 8.f, 18.f, 32.f});
}

// ---------------------------------------------------------------- constants

BOOST_AUTO_TEST_CASE(constant_zeros_ones) {
  ComputationGraph cg;
  Expression z = zeros(cg, {2, 2});
  Expression z2 = zeroes(cg, Dim({3}, 2));
  Expression o = ones(cg, Dim({2}, 3));
  Expression c = constant(cg, {4}, -2.5f);
  test::check_close(as_vector(cg.forward(z)), {0.f, 0.f, 0.f, 0.f}, 0.0);
  test::check_close(as_vector(cg.forward(z2)), std::vector<float>(6, 0.f), 0.0);
  BOOST_CHECK_EQUAL(z2.dim(), Dim({3}, 2));
  test::check_close(as_vector(cg.forward(o)), std::vector<float>(6, 1.f), 0.0);
  BOOST_CHECK_EQUAL(o.dim(), Dim({2}, 3));
  test::check_close(as_vector(cg.forward(c)), std::vector<float>(4, -2.5f), 0.0);
  // constants take no gradient and pass none on
  ParameterCollection m;
  Parameter w = m.add_parameters({4}, ParameterInitFromVector({1.f, 2.f, 3.f, 4.f}));
  Expression loss = sum_elems(cmult(c, parameter(cg, w)));
  cg.forward(loss);
  cg.backward(loss);
  test::check_close(as_vector(w.get_storage().g), std::vector<float>(4, -2.5f));
}

BOOST_AUTO_TEST_CASE(constant_with_no_elements_is_an_error) {
  ComputationGraph cg;
  test::check_throws_with<dim_error>([&] { zeros(cg, {3, 0}); }, {"constant", "{3,0}", "no elements"});
}

// ---------------------------------------------------------------- parameters

BOOST_AUTO_TEST_CASE(parameter_value_and_gradient) {
  ParameterCollection m;
  Parameter w = m.add_parameters({2, 2}, ParameterInitFromVector({1.f, 2.f, 3.f, 4.f}));
  ComputationGraph cg;
  Expression p = parameter(cg, w);
  BOOST_CHECK_EQUAL(p.dim(), Dim({2, 2}));
  test::check_close(as_vector(cg.forward(p)), {1.f, 2.f, 3.f, 4.f}, 0.0);
  Expression loss = weighted_sum(cg, p, 0.5f);
  cg.forward(loss);
  cg.backward(loss);
  test::check_close(as_vector(w.get_storage().g), {0.5f, 1.5f, 2.5f, 3.5f});
  // a second backward accumulates
  cg.backward(loss);
  test::check_close(as_vector(w.get_storage().g), {1.f, 3.f, 5.f, 7.f});
  // a changed value is seen by the next forward
  w.set_value({4.f, 3.f, 2.f, 1.f});
  test::check_close(as_vector(cg.forward(p)), {4.f, 3.f, 2.f, 1.f}, 0.0);
}

BOOST_AUTO_TEST_CASE(const_parameter_gets_no_gradient) {
  ParameterCollection m;
  Parameter w = m.add_parameters({3}, ParameterInitFromVector({1.f, 2.f, 3.f}));
  Parameter v = m.add_parameters({3}, ParameterInitFromVector({-1.f, 0.5f, 2.f}));
  ComputationGraph cg;
  Expression cw = const_parameter(cg, w);
  Expression pv = parameter(cg, v);
  Expression loss = sum_elems(cmult(cw, pv));
  test::check_close(as_vector(cg.forward(cw)), {1.f, 2.f, 3.f}, 0.0);
  cg.forward(loss);
  cg.backward(loss);
  test::check_close(as_vector(w.get_storage().g), {0.f, 0.f, 0.f}, 0.0);
  BOOST_CHECK(!w.get_storage().nonzero_grad);
  test::check_close(as_vector(v.get_storage().g), {1.f, 2.f, 3.f});
  // a const parameter alone: the loss depends on no parameter, nothing changes
  ComputationGraph cg2;
  Expression l2 = sum_elems(square(const_parameter(cg2, w)));
  cg2.forward(l2);
  cg2.backward(l2);
  test::check_close(as_vector(w.get_storage().g), {0.f, 0.f, 0.f}, 0.0);
}

BOOST_AUTO_TEST_CASE(frozen_parameter_gets_no_gradient) {
  ParameterCollection m;
  Parameter w = m.add_parameters({2}, ParameterInitFromVector({1.f, 2.f}));
  w.set_updated(false);
  ComputationGraph cg;
  Expression loss = sum_elems(square(parameter(cg, w)));
  cg.forward(loss);
  cg.backward(loss);
  test::check_close(as_vector(w.get_storage().g), {0.f, 0.f}, 0.0);
}

BOOST_AUTO_TEST_CASE(lookup_table_as_a_parameter) {
  ParameterCollection m;
  LookupParameter lp = make_table(m);
  ComputationGraph cg;
  Expression all = parameter(cg, lp);
  BOOST_CHECK_EQUAL(all.dim(), Dim({3, 5}));
  std::vector<float> v = as_vector(cg.forward(all));
  BOOST_CHECK_EQUAL(v[3 * 4 + 2], 42.f);
  Expression loss = weighted_sum(cg, all);
  cg.forward(loss);
  cg.backward(loss);
  std::vector<float> g = test::table_gradient(lp.get_storage());
  for (size_t i = 0; i < g.size(); ++i) BOOST_CHECK_EQUAL(g[i], 1.f + i);
  // const: nothing
  m.reset_gradient();
  ComputationGraph cg2;
  Expression l2 = weighted_sum(cg2, const_parameter(cg2, lp)) + sum_elems(parameter(cg2, m.add_parameters({1})));
  cg2.forward(l2);
  cg2.backward(l2);
  for (float e : test::table_gradient(lp.get_storage())) BOOST_CHECK_EQUAL(e, 0.f);
}

BOOST_AUTO_TEST_CASE(parameter_gradient_check) {
  ParameterCollection m;
  Parameter w = m.add_parameters({2, 3}, ParameterInitFromVector(test::test_values(6)));
  LookupParameter lp = m.add_lookup_parameters(4, {2, 3}, ParameterInitFromVector(test::test_values(24, 0.2f)));
  size_t n = test::check_gradients(m, {{Dim({2, 3}, 2), test::test_values(12, -0.1f)}},
                                   [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
                                     Expression e = lookup(cg, lp, std::vector<unsigned>{3, 1});
                                     return tanh(cmult(xs[0], parameter(cg, w)) + e);
                                   });
  BOOST_CHECK_EQUAL(n, 6u + 24u + 12u);
}

// ---------------------------------------------------------------- lookup

BOOST_AUTO_TEST_CASE(lookup_single_row) {
  ParameterCollection m;
  LookupParameter lp = make_table(m);
  ComputationGraph cg;
  Expression e = lookup(cg, lp, 3u);
  BOOST_CHECK_EQUAL(e.dim(), Dim({3}));
  test::check_close(as_vector(cg.forward(e)), row_of(3), 0.0);
  Expression loss = weighted_sum(cg, e);
  cg.forward(loss);
  cg.backward(loss);
  BOOST_CHECK(touched(lp) == std::set<unsigned>({3}));
  for (unsigned r = 0; r < 5; ++r)
    test::check_close(test::row_gradient(lp.get_storage(), r),
                      r == 3 ? std::vector<float>{1.f, 2.f, 3.f} : std::vector<float>{0.f, 0.f, 0.f}, 0.0);
  m.reset_gradient();
  BOOST_CHECK(touched(lp).empty());
  for (float g : test::table_gradient(lp.get_storage())) BOOST_CHECK_EQUAL(g, 0.f);
}

BOOST_AUTO_TEST_CASE(lookup_batch_with_a_repeated_row) {
  ParameterCollection m;
  LookupParameter lp = make_table(m);
  ComputationGraph cg;
  Expression e = lookup(cg, lp, std::vector<unsigned>{4, 0, 4});
  BOOST_CHECK_EQUAL(e.dim(), Dim({3}, 3));
  std::vector<float> want = row_of(4);
  for (float x : row_of(0)) want.push_back(x);
  for (float x : row_of(4)) want.push_back(x);
  test::check_close(as_vector(cg.forward(e)), want, 0.0);
  Expression loss = weighted_sum(cg, e);  // weights 1..9
  cg.forward(loss);
  cg.backward(loss);
  BOOST_CHECK(touched(lp) == std::set<unsigned>({0, 4}));
  test::check_close(test::row_gradient(lp.get_storage(), 0), {4.f, 5.f, 6.f}, 0.0);
  test::check_close(test::row_gradient(lp.get_storage(), 4), {1.f + 7.f, 2.f + 8.f, 3.f + 9.f}, 0.0);
  for (unsigned r : {1u, 2u, 3u}) test::check_close(test::row_gradient(lp.get_storage(), r), {0.f, 0.f, 0.f}, 0.0);
  // a one-element list is a batch of 1
  Expression one = lookup(cg, lp, std::vector<unsigned>{2});
  BOOST_CHECK_EQUAL(one.dim(), Dim({3}));
  test::check_close(as_vector(cg.forward(one)), row_of(2), 0.0);
}

BOOST_AUTO_TEST_CASE(lookup_sees_updated_values) {
  ParameterCollection m;
  LookupParameter lp = make_table(m);
  ComputationGraph cg;
  Expression e = lookup(cg, lp, 1u);
  Expression eb = lookup(cg, lp, std::vector<unsigned>{1, 2});
  cg.forward(eb);
  lp.initialize(1, {-1.f, -2.f, -3.f});
  test::check_close(as_vector(cg.forward(e)), {-1.f, -2.f, -3.f}, 0.0);
  test::check_close(as_vector(cg.forward(eb)), {-1.f, -2.f, -3.f, 20.f, 21.f, 22.f}, 0.0);
}

BOOST_AUTO_TEST_CASE(lookup_pointer_index_is_read_at_forward) {
  ParameterCollection m;
  LookupParameter lp = make_table(m);
  unsigned idx = 1;
  ComputationGraph cg;
  Expression e = lookup(cg, lp, &idx);
  Expression loss = weighted_sum(cg, e);
  test::check_close(as_vector(cg.forward(e)), row_of(1), 0.0);
  idx = 4;
  test::check_close(as_vector(cg.forward(e)), row_of(4), 0.0);
  cg.forward(loss);
  cg.backward(loss);
  BOOST_CHECK(touched(lp) == std::set<unsigned>({4}));
  test::check_close(test::row_gradient(lp.get_storage(), 4), {1.f, 2.f, 3.f}, 0.0);
  // out of range only shows at forward time
  idx = 7;
  test::check_throws_with<index_error>([&] { cg.forward(e); }, {"lookup", "index 7", "E'", "5 rows"});
  test::check_throws_with<std::invalid_argument>([&] { lookup(cg, lp, static_cast<const unsigned*>(nullptr)); },
                                                 {"lookup", "null"});
}

BOOST_AUTO_TEST_CASE(lookup_pointer_indices_are_read_at_forward) {
  ParameterCollection m;
  LookupParameter lp = make_table(m);
  std::vector<unsigned> ids = {0, 1};
  ComputationGraph cg;
  Expression e = lookup(cg, lp, &ids);
  BOOST_CHECK_EQUAL(e.dim(), Dim({3}, 2));
  std::vector<float> want = row_of(0);
  for (float x : row_of(1)) want.push_back(x);
  test::check_close(as_vector(cg.forward(e)), want, 0.0);
  ids = {3, 2};
  want = row_of(3);
  for (float x : row_of(2)) want.push_back(x);
  test::check_close(as_vector(cg.forward(e)), want, 0.0);
  Expression loss = weighted_sum(cg, e);
  cg.forward(loss);
  cg.backward(loss);
  BOOST_CHECK(touched(lp) == std::set<unsigned>({2, 3}));
  test::check_close(test::row_gradient(lp.get_storage(), 3), {1.f, 2.f, 3.f}, 0.0);
  test::check_close(test::row_gradient(lp.get_storage(), 2), {4.f, 5.f, 6.f}, 0.0);
  ids = {3, 9};
  test::check_throws_with<index_error>([&] { cg.forward(e); }, {"lookup", "index 9", "5 rows"});
  ids = {1, 2, 3};
  test::check_throws_with<dim_error>([&] { cg.forward(e); }, {"lookup", "3 indices", "built for 2"});
}

BOOST_AUTO_TEST_CASE(const_lookup_gets_no_gradient) {
  ParameterCollection m;
  LookupParameter lp = make_table(m);
  Parameter w = m.add_parameters({3}, ParameterInitFromVector({1.f, 1.f, 1.f}));
  unsigned idx = 2;
  std::vector<unsigned> ids = {0, 3};
  ComputationGraph cg;
  Expression a = const_lookup(cg, lp, 1u);
  Expression b = const_lookup(cg, lp, &idx);
  Expression c = const_lookup(cg, lp, std::vector<unsigned>{4, 4});
  Expression d = const_lookup(cg, lp, &ids);
  test::check_close(as_vector(cg.forward(a)), row_of(1), 0.0);
  test::check_close(as_vector(cg.forward(b)), row_of(2), 0.0);
  BOOST_CHECK_EQUAL(c.dim(), Dim({3}, 2));
  BOOST_CHECK_EQUAL(d.dim(), Dim({3}, 2));
  Expression pw = parameter(cg, w);
  Expression loss = sum_elems(cmult(a + b, pw)) + sum_batches(sum_elems(cmult(c + d, pw)));
  cg.forward(loss);
  cg.backward(loss);
  BOOST_CHECK(touched(lp).empty());
  for (float g : test::table_gradient(lp.get_storage())) BOOST_CHECK_EQUAL(g, 0.f);
  // w's gradient is the sum of everything it multiplied
  std::vector<float> want(3);
  for (unsigned k = 0; k < 3; ++k) want[k] = row_of(1)[k] + row_of(2)[k] + 2 * row_of(4)[k] + row_of(0)[k] + row_of(3)[k];
  test::check_close(as_vector(w.get_storage().g), want);
}

BOOST_AUTO_TEST_CASE(frozen_lookup_gets_no_gradient) {
  ParameterCollection m;
  LookupParameter lp = make_table(m);
  lp.set_updated(false);
  Parameter w = m.add_parameters({3});
  ComputationGraph cg;
  Expression loss = sum_elems(cmult(lookup(cg, lp, 2u), parameter(cg, w)));
  cg.forward(loss);
  cg.backward(loss);
  BOOST_CHECK(touched(lp).empty());
}

BOOST_AUTO_TEST_CASE(lookup_errors) {
  ParameterCollection m;
  LookupParameter lp = make_table(m, "words");
  ComputationGraph cg;
  test::check_throws_with<index_error>([&] { lookup(cg, lp, 5u); }, {"lookup", "index 5", "words'", "5 rows"});
  test::check_throws_with<index_error>([&] { lookup(cg, lp, std::vector<unsigned>{0, 1, 12}); },
                                       {"lookup", "index 12", "5 rows"});
  test::check_throws_with<index_error>([&] { const_lookup(cg, lp, 6u); }, {"lookup", "index 6", "5 rows"});
  test::check_throws_with<dim_error>([&] { lookup(cg, lp, std::vector<unsigned>{}); }, {"lookup", "empty", "words'"});
  BOOST_CHECK_EQUAL(cg.size(), 0u);
}
