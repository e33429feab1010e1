#define BOOST_TEST_MODULE ops_softmax
#include "test_utils.h"

#include <limits>

#include "alloc_counter.h"

#include "dynet_lite/core/arena.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
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

const float kInf = std::numeric_limits<float>::infinity();
using Xs = std::vector<Expression>;

// Hand-computed constants: softmax({1,2,3}) and log sum exp({1,2,3}).
// e^1 = 2.718281828, e^2 = 7.389056099, e^3 = 20.085536923, sum = 30.192874850
const float kS1 = 0.09003057f, kS2 = 0.24472847f, kS3 = 0.66524096f;
const float kLse123 = 3.40760596f;  // log(30.192874850)
const float kLn2 = 0.69314718f, kLn3 = 1.09861229f;

// y[k] as a scalar, through ops of other families that are already tested.
Expression component(ComputationGraph& cg, Expression y, unsigned k) {
  std::vector<float> onehot(y.dim().size(), 0.f);
  onehot[k] = 1.f;
  return sum_elems(cmult(y, input(cg, y.dim(), onehot)));
}

// Input gradients of sum_b w_b * e_b after a full backward.
std::vector<float> input_gradient(ComputationGraph& cg, Expression loss, Expression x) {
  cg.forward(loss);
  cg.backward(loss, true);
  return as_vector(cg.get_gradient(x));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(softmax_op)

BOOST_AUTO_TEST_CASE(vector_values) {
  auto v = eval({{Dim({3}), {1.f, 2.f, 3.f}}}, [](ComputationGraph&, const Xs& x) { return softmax(x[0]); });
  check_close(v, {kS1, kS2, kS3});
  // Shifting by a constant changes nothing, however large (max is subtracted).
  v = eval({{Dim({3}), {1001.f, 1002.f, 1003.f}}}, [](ComputationGraph&, const Xs& x) { return softmax(x[0]); });
  check_close(v, {kS1, kS2, kS3});
  v = eval({{Dim({2}), {-1000.f, 1000.f}}}, [](ComputationGraph&, const Xs& x) { return softmax(x[0]); });
  check_close(v, {0.f, 1.f});
}

BOOST_AUTO_TEST_CASE(ties_and_length_one) {
  auto v = eval({{Dim({3}), {2.f, 2.f, 2.f}}}, [](ComputationGraph&, const Xs& x) { return softmax(x[0]); });
  check_close(v, {1.f / 3, 1.f / 3, 1.f / 3});
  v = eval({{Dim({1}), {-7.f}}}, [](ComputationGraph&, const Xs& x) { return softmax(x[0]); });
  check_close(v, {1.f});
}

BOOST_AUTO_TEST_CASE(matrix_columns_and_rows) {
  // x = [0    0]     d = 0: columns (0, ln3) -> (1/4, 3/4), (0, 0) -> (1/2, 1/2)
  //     [ln3  0]     d = 1: rows (0, 0) -> (1/2, 1/2), (ln3, 0) -> (3/4, 1/4)
  TestInput x{Dim({2, 2}), {0.f, kLn3, 0.f, 0.f}};
  check_close(eval({x}, [](ComputationGraph&, const Xs& x) { return softmax(x[0], 0); }), {0.25f, 0.75f, 0.5f, 0.5f});
  check_close(eval({x}, [](ComputationGraph&, const Xs& x) { return softmax(x[0], 1); }), {0.5f, 0.75f, 0.5f, 0.25f});
}

BOOST_AUTO_TEST_CASE(batched_values) {
  // batch element 0: {1,2,3}; batch element 1: {0,0,0}
  auto v = eval({{Dim({3}, 2), {1.f, 2.f, 3.f, 0.f, 0.f, 0.f}}},
                [](ComputationGraph&, const Xs& x) { return softmax(x[0]); });
  check_close(v, {kS1, kS2, kS3, 1.f / 3, 1.f / 3, 1.f / 3});
  // d = 1 on {2,2}X2: each batch element's rows separately
  v = eval({{Dim({2, 2}, 2), {0.f, kLn3, 0.f, 0.f, 0.f, 0.f, kLn3, 0.f}}},
           [](ComputationGraph&, const Xs& x) { return softmax(x[0], 1); });
  check_close(v, {0.5f, 0.75f, 0.5f, 0.25f, 0.25f, 0.5f, 0.75f, 0.5f});
}

BOOST_AUTO_TEST_CASE(gradient_by_hand) {
  // y = softmax(x), x = (0, ln3): y = (1/4, 3/4).  loss = y_1.
  // dy_1/dx = y_1 (e_1 - y) = 3/4 * (-1/4, 1/4) = (-3/16, 3/16)
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}), {0.f, kLn3});
  Expression loss = component(cg, softmax(x), 1);
  check_close(input_gradient(cg, loss, x), {-3.f / 16, 3.f / 16});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = m.add_parameters({4});
  auto pv = test::test_values(4, 0.2f);
  p.set_value(pv);
  check_gradients(m, {{Dim({4}), test::test_values(4)}},
                  [&](ComputationGraph& cg, const Xs& x) { return softmax(cmult(x[0], parameter(cg, p))); });
  check_gradients(m, {{Dim({3, 2}, 3), test::test_values(18)}},
                  [](ComputationGraph&, const Xs& x) { return softmax(x[0], 0); });
  check_gradients(m, {{Dim({3, 2}, 3), test::test_values(18, 0.3f)}},
                  [](ComputationGraph&, const Xs& x) { return softmax(x[0], 1); });
  // a parameter (batch of 1) scaling a batch of 3 before the softmax
  check_gradients(m, {{Dim({4}, 3), test::test_values(12, -0.1f)}},
                  [&](ComputationGraph& cg, const Xs& x) { return softmax(cmult(x[0], parameter(cg, p))); });
}

BOOST_AUTO_TEST_CASE(dim_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 2}), test::test_values(6));
  check_throws_with<dim_error>([&] { softmax(x, 2); }, {"softmax", "dimension 2", "{3,2}"});
  Expression t = input(cg, Dim({2, 2, 2}), test::test_values(8));
  check_throws_with<dim_error>([&] { softmax(t, 3); }, {"softmax", "dimension 3", "{2,2,2}"});
  check_throws_with<dim_error>([&] { log_softmax(t); }, {"log_softmax", "{2,2,2}"});
  // the failed calls left no node behind
  BOOST_CHECK_EQUAL(cg.size(), 2u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(log_softmax_op)

BOOST_AUTO_TEST_CASE(values) {
  auto v = eval({{Dim({3}), {1.f, 2.f, 3.f}}}, [](ComputationGraph&, const Xs& x) { return log_softmax(x[0]); });
  check_close(v, {1.f - kLse123, 2.f - kLse123, 3.f - kLse123});
  // exp(-2000) underflows; the log stays exact: log(1 + e^-2000) = 0
  v = eval({{Dim({2}), {-1000.f, 1000.f}}}, [](ComputationGraph&, const Xs& x) { return log_softmax(x[0]); });
  check_close(v, {-2000.f, 0.f});
  v = eval({{Dim({1}), {5.f}}}, [](ComputationGraph&, const Xs& x) { return log_softmax(x[0]); });
  check_close(v, {0.f});
  // {2,2}: columns (0, ln3) and (0, 0)
  v = eval({{Dim({2, 2}), {0.f, kLn3, 0.f, 0.f}}}, [](ComputationGraph&, const Xs& x) { return log_softmax(x[0]); });
  check_close(v, {-2 * kLn2, kLn3 - 2 * kLn2, -kLn2, -kLn2});
  // a batch: {1,2,3} and {3,3,3}
  v = eval({{Dim({3}, 2), {1.f, 2.f, 3.f, 3.f, 3.f, 3.f}}},
           [](ComputationGraph&, const Xs& x) { return log_softmax(x[0]); });
  check_close(v, {1.f - kLse123, 2.f - kLse123, 3.f - kLse123, -kLn3, -kLn3, -kLn3});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = m.add_parameters({5});
  p.set_value(test::test_values(5, 0.4f));
  check_gradients(m, {{Dim({5}), test::test_values(5)}},
                  [&](ComputationGraph& cg, const Xs& x) { return log_softmax(x[0] + parameter(cg, p)); });
  check_gradients(m, {{Dim({5}, 3), test::test_values(15)}},
                  [&](ComputationGraph& cg, const Xs& x) { return log_softmax(x[0] + parameter(cg, p)); });
  check_gradients(m, {{Dim({3, 4}, 2), test::test_values(24)}},
                  [](ComputationGraph&, const Xs& x) { return log_softmax(x[0]); });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(restricted_log_softmax)

BOOST_AUTO_TEST_CASE(values) {
  // x = {1,2,3,4}, rows {0,2}: log z = log(e + e^3) = 3 + log(1 + e^-2) = 3.126928011
  auto v = eval({{Dim({4}), {1.f, 2.f, 3.f, 4.f}}},
                [](ComputationGraph&, const Xs& x) { return log_softmax(x[0], {0, 2}); });
  BOOST_REQUIRE_EQUAL(v.size(), 4u);
  BOOST_CHECK_CLOSE(v[0], -2.126928011f, 1e-4);
  BOOST_CHECK_CLOSE(v[2], -0.126928011f, 1e-3);
  BOOST_CHECK(v[1] == -kInf && v[3] == -kInf);
  // one row: log(1) = 0 there
  v = eval({{Dim({3}), {5.f, -2.f, 7.f}}}, [](ComputationGraph&, const Xs& x) { return log_softmax(x[0], {1}); });
  BOOST_CHECK(v[0] == -kInf && v[1] == 0.f && v[2] == -kInf);
  // every row, in any order: the full log_softmax
  v = eval({{Dim({3}), {1.f, 2.f, 3.f}}}, [](ComputationGraph&, const Xs& x) { return log_softmax(x[0], {2, 0, 1}); });
  check_close(v, {1.f - kLse123, 2.f - kLse123, 3.f - kLse123});
  // a batch: the same rows in every element; {1,2,3,4} and {0,0,0,0}
  v = eval({{Dim({4}, 2), {1.f, 2.f, 3.f, 4.f, 0.f, 0.f, 0.f, 0.f}}},
           [](ComputationGraph&, const Xs& x) { return log_softmax(x[0], {0, 2}); });
  BOOST_CHECK_CLOSE(v[4], -kLn2, 1e-4);
  BOOST_CHECK_CLOSE(v[6], -kLn2, 1e-4);
  BOOST_CHECK(v[5] == -kInf && v[7] == -kInf);
}

BOOST_AUTO_TEST_CASE(gradient_by_hand) {
  // x = {0, 9, ln3, 9}, rows {0, 2}: y0 = log(1/4), y2 = log(3/4).  loss = y0.
  // dy0/dx0 = 1 - 1/4, dy0/dx2 = -3/4, rows outside the restriction: 0
  ComputationGraph cg;
  Expression x = input(cg, Dim({4}), {0.f, 9.f, kLn3, 9.f});
  // (max with -50 keeps the -inf rows out of the one-hot product: -inf * 0 is NaN)
  Expression loss = component(cg, max(log_softmax(x, {0, 2}), constant(cg, Dim({4}), -50.f)), 0);
  check_close(input_gradient(cg, loss, x), {0.75f, 0.f, -0.75f, 0.f});
}

BOOST_AUTO_TEST_CASE(gradients) {
  // max(y, -50) turns the -inf rows into constants that pass no gradient.
  ParameterCollection m;
  auto clip = [](ComputationGraph& cg, Expression y) { return max(y, constant(cg, y.dim(), -50.f)); };
  check_gradients(m, {{Dim({5}), test::test_values(5)}},
                  [&](ComputationGraph& cg, const Xs& x) { return clip(cg, log_softmax(x[0], {4, 1, 2})); });
  check_gradients(m, {{Dim({5}, 3), test::test_values(15)}},
                  [&](ComputationGraph& cg, const Xs& x) { return clip(cg, log_softmax(x[0], {0, 3})); });
  check_gradients(m, {{Dim({4}), test::test_values(4)}},
                  [&](ComputationGraph& cg, const Xs& x) { return clip(cg, log_softmax(x[0], {2})); });
}

BOOST_AUTO_TEST_CASE(errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({4}), test::test_values(4));
  check_throws_with<index_error>([&] { log_softmax(x, {1, 4}); }, {"log_softmax", "index 4", "{4}", "4 rows"});
  check_throws_with<std::invalid_argument>([&] { log_softmax(x, {1, 2, 1}); }, {"log_softmax", "row 1", "twice"});
  check_throws_with<std::invalid_argument>([&] { log_softmax(x, std::vector<unsigned>{}); },
                                           {"log_softmax", "empty", "{4}"});
  Expression mtx = input(cg, Dim({2, 3}), test::test_values(6));
  check_throws_with<dim_error>([&] { log_softmax(mtx, {0}); }, {"log_softmax", "column vector", "{2,3}"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(logsumexp_op)

BOOST_AUTO_TEST_CASE(values) {
  // a = {0, 1}, b = {ln3, 1}: log(1 + 3) = 2 ln2, log(2e) = 1 + ln2
  auto v = eval({{Dim({2}), {0.f, 1.f}}, {Dim({2}), {kLn3, 1.f}}},
                [](ComputationGraph&, const Xs& x) { return logsumexp({x[0], x[1]}); });
  check_close(v, {2 * kLn2, 1.f + kLn2});
  // large and very negative values
  v = eval({{Dim({2}), {1000.f, -1000.f}}, {Dim({2}), {1000.f, -kInf}}},
           [](ComputationGraph&, const Xs& x) { return logsumexp({x[0], x[1]}); });
  check_close(v, {1000.f + kLn2, -1000.f});
  v = eval({{Dim({1}), {-kInf}}, {Dim({1}), {-kInf}}},
           [](ComputationGraph&, const Xs& x) { return logsumexp(std::vector<Expression>{x[0], x[1]}); });
  BOOST_CHECK(v[0] == -kInf);
  // one argument: itself
  v = eval({{Dim({3}), {1.f, -2.f, 3.f}}}, [](ComputationGraph&, const Xs& x) { return logsumexp({x[0]}); });
  check_close(v, {1.f, -2.f, 3.f});
  // batch of 2 with a batch of 1: {0 | ln3} with {0}: ln2, ln4
  v = eval({{Dim({1}, 2), {0.f, kLn3}}, {Dim({1}), {0.f}}},
           [](ComputationGraph&, const Xs& x) { return logsumexp({x[0], x[1]}); });
  check_close(v, {kLn2, 2 * kLn2});
}

BOOST_AUTO_TEST_CASE(gradient_by_hand) {
  // y = log(e^0 + e^ln3) = ln4;  dy/da = 1/4, dy/db = 3/4
  ComputationGraph cg;
  Expression a = input(cg, Dim({1}), {0.f});
  Expression b = input(cg, Dim({1}), {kLn3});
  Expression y = logsumexp({a, b});
  cg.forward(y);
  cg.backward(y, true);
  check_close(as_vector(cg.get_gradient(a)), {0.25f});
  check_close(as_vector(cg.get_gradient(b)), {0.75f});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = m.add_parameters({3});
  p.set_value(test::test_values(3, 0.1f));
  check_gradients(m, {{Dim({3}, 2), test::test_values(6)}, {Dim({3}, 2), test::test_values(6, 0.5f)}},
                  [&](ComputationGraph& cg, const Xs& x) { return logsumexp({x[0], x[1], parameter(cg, p)}); });
  // batch of 1 against a batch of 3, in either position
  check_gradients(m, {{Dim({2, 2}), test::test_values(4)}, {Dim({2, 2}, 3), test::test_values(12, -0.2f)}},
                  [](ComputationGraph&, const Xs& x) { return logsumexp({x[0], x[1]}); });
  check_gradients(m, {{Dim({2, 2}, 3), test::test_values(12, -0.2f)}, {Dim({2, 2}), test::test_values(4)}},
                  [](ComputationGraph&, const Xs& x) { return logsumexp({x[0], x[1]}); });
}

BOOST_AUTO_TEST_CASE(dim_errors) {
  ComputationGraph cg;
  Expression a = input(cg, Dim({3}), test::test_values(3));
  Expression b = input(cg, Dim({4}), test::test_values(4));
  Expression c = input(cg, Dim({3}, 2), test::test_values(6));
  Expression d = input(cg, Dim({3}, 3), test::test_values(9));
  check_throws_with<dim_error>([&] { logsumexp({a, b}); }, {"logsumexp", "{3}", "{4}"});
  check_throws_with<dim_error>([&] { logsumexp({a, c, d}); }, {"logsumexp", "{3X3}", "batch size 3", "2"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(pickneglogsoftmax_op)

BOOST_AUTO_TEST_CASE(values) {
  TestInput x{Dim({3}), {1.f, 2.f, 3.f}};
  check_close(eval({x}, [](ComputationGraph&, const Xs& x) { return pickneglogsoftmax(x[0], 0u); }),
              {kLse123 - 1.f});
  check_close(eval({x}, [](ComputationGraph&, const Xs& x) { return pickneglogsoftmax(x[0], 2u); }),
              {kLse123 - 3.f});
  // large values: -log softmax({1000, 0})[1] = 1000
  check_close(eval({{Dim({2}), {1000.f, 0.f}}},
                   [](ComputationGraph&, const Xs& x) { return pickneglogsoftmax(x[0], 1u); }),
              {1000.f});
  // the running maximum grows through the vector and is rescaled: {-3, 0, 5, 5}, v = 3
  // log z = 5 + log(e^-8 + e^-5 + 2) = 5 + 0.696678 ; y = 0.69667765
  check_close(eval({{Dim({4}), {-3.f, 0.f, 5.f, 5.f}}},
                   [](ComputationGraph&, const Xs& x) { return pickneglogsoftmax(x[0], 3u); }),
              {0.69667765f});
  // ties and length one
  check_close(eval({{Dim({2}), {4.f, 4.f}}}, [](ComputationGraph&, const Xs& x) { return pickneglogsoftmax(x[0], 0u); }),
              {kLn2});
  check_close(eval({{Dim({1}), {4.f}}}, [](ComputationGraph&, const Xs& x) { return pickneglogsoftmax(x[0], 0u); }),
              {0.f});
}

BOOST_AUTO_TEST_CASE(batched_values) {
  // {1,2,3} and {0,0,0}
  TestInput x{Dim({3}, 2), {1.f, 2.f, 3.f, 0.f, 0.f, 0.f}};
  auto v = eval({x}, [](ComputationGraph&, const Xs& x) { return pickneglogsoftmax(x[0], std::vector<unsigned>{0, 1}); });
  check_close(v, {kLse123 - 1.f, kLn3});
  // one index for every batch element
  v = eval({x}, [](ComputationGraph&, const Xs& x) { return pickneglogsoftmax(x[0], 2u); });
  check_close(v, {kLse123 - 3.f, kLn3});
  // pointer variants read the indices at forward time
  ComputationGraph cg;
  Expression e = input(cg, x.dim, x.values);
  std::vector<unsigned> idx{0, 0};
  unsigned one = 0;
  Expression y = pickneglogsoftmax(e, &idx);
  Expression z = pickneglogsoftmax(e, &one);
  idx = {2, 1};
  one = 1;
  check_close(as_vector(cg.forward(y)), {kLse123 - 3.f, kLn3});
  check_close(as_vector(cg.forward(z)), {kLse123 - 2.f, kLn3});
  BOOST_CHECK_EQUAL(y.dim(), Dim({1}, 2));
}

BOOST_AUTO_TEST_CASE(gradient_by_hand) {
  // d/dx (-log softmax(x)[0]) = softmax(x) - e_0
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {1.f, 2.f, 3.f});
  check_close(input_gradient(cg, pickneglogsoftmax(x, 0u), x), {kS1 - 1.f, kS2, kS3}, 1e-4);
  // length one: constant 0, gradient 0
  ComputationGraph cg1;
  Expression x1 = input(cg1, Dim({1}), {4.f});
  check_close(input_gradient(cg1, pickneglogsoftmax(x1, 0u), x1), {0.f});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = m.add_parameters({5});
  p.set_value(test::test_values(5, 0.3f));
  check_gradients(m, {{Dim({5}), test::test_values(5)}},
                  [&](ComputationGraph& cg, const Xs& x) { return pickneglogsoftmax(x[0] + parameter(cg, p), 3u); });
  // batch of 3, one index each; the parameter (batch of 1) broadcast against it
  check_gradients(m, {{Dim({5}, 3), test::test_values(15)}}, [&](ComputationGraph& cg, const Xs& x) {
    return pickneglogsoftmax(cmult(x[0], parameter(cg, p)), std::vector<unsigned>{0, 4, 2});
  });
  // one index for the whole batch, and the pointer variants
  std::vector<unsigned> idx{1, 1, 3};
  unsigned one = 4;
  check_gradients(m, {{Dim({5}, 3), test::test_values(15, 0.2f)}},
                  [&](ComputationGraph&, const Xs& x) { return pickneglogsoftmax(x[0], 2u); });
  check_gradients(m, {{Dim({5}, 3), test::test_values(15, 0.2f)}},
                  [&](ComputationGraph&, const Xs& x) { return pickneglogsoftmax(x[0], &idx); });
  check_gradients(m, {{Dim({5}, 3), test::test_values(15, 0.2f)}},
                  [&](ComputationGraph&, const Xs& x) { return pickneglogsoftmax(x[0], &one); });
}

BOOST_AUTO_TEST_CASE(index_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({5}), test::test_values(5));
  Expression xb = input(cg, Dim({5}, 2), test::test_values(10));
  check_throws_with<index_error>([&] { pickneglogsoftmax(x, 5u); }, {"pickneglogsoftmax", "index 5", "size 5"});
  check_throws_with<index_error>([&] { pickneglogsoftmax(xb, std::vector<unsigned>{1, 9}); },
                                 {"pickneglogsoftmax", "index 9", "batch element 1", "{5X2}", "size 5"});
  BOOST_CHECK_EQUAL(cg.size(), 2u);
  // pointers are checked when the graph runs
  unsigned bad = 7;
  Expression y = pickneglogsoftmax(x, &bad);
  check_throws_with<index_error>([&] { cg.forward(y); }, {"pickneglogsoftmax", "index 7", "size 5"});
  bad = 1;  // forward runs y again on the way to z
  std::vector<unsigned> idx{0, 2};
  Expression z = pickneglogsoftmax(xb, &idx);
  idx = {0, 5};
  check_throws_with<index_error>([&] { cg.forward(z); }, {"pickneglogsoftmax", "index 5", "size 5"});
  idx = {0, 1, 2};
  check_throws_with<dim_error>([&] { cg.forward(z); }, {"pickneglogsoftmax", "3 indices", "built for 2"});
}

BOOST_AUTO_TEST_CASE(dim_errors) {
  ComputationGraph cg;
  Expression mtx = input(cg, Dim({3, 2}), test::test_values(6));
  Expression xb = input(cg, Dim({3}, 2), test::test_values(6));
  check_throws_with<dim_error>([&] { pickneglogsoftmax(mtx, 0u); }, {"pickneglogsoftmax", "column vector", "{3,2}"});
  check_throws_with<dim_error>([&] { pickneglogsoftmax(xb, std::vector<unsigned>{0, 1, 2}); },
                               {"pickneglogsoftmax", "3 indices", "{3X2}"});
  check_throws_with<std::invalid_argument>([&] { pickneglogsoftmax(xb, std::vector<unsigned>{}); },
                                           {"pickneglogsoftmax", "empty"});
}

BOOST_AUTO_TEST_CASE(no_heap_allocation_in_kernels) {
  // Run the kernels straight from the op table on a node of a built graph.
  ComputationGraph cg;
  Expression x = input(cg, Dim({50}, 8), test::test_values(400));
  Expression y = pickneglogsoftmax(x, std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 49});
  Expression loss = sum_batches(y);
  cg.forward(loss);
  cg.backward(loss, true);
  const OpInfo& info = op_info(OpKind::PickNegLogSoftmax);
  Node& n = cg.node(y.i);
  const Tensor* xs[1] = {&cg.node(x.i).value};
  std::vector<float> dxv(400, 0.f), dyv(8, 1.f), out(8);
  Tensor dx(Dim({50}, 8), dxv.data(), cpu_device(), DeviceMempool::NONE);
  Tensor dy(Dim({1}, 8), dyv.data(), cpu_device(), DeviceMempool::NONE);
  Arena graph_memory(cpu_device(), 1 << 16), scratch(cpu_device(), 1 << 16);
  std::mt19937 rng(1);
  ExecContext ctx(&graph_memory, &scratch, &rng, cpu_device());
  n.value.v = out.data();
  const long counted = test::allocations_during([&] {
    info.forward[0](xs, 1, n, ctx);
    info.backward[0](xs, 1, n, dy, 0, dx, ctx);
  });
  if (counted >= 0)
    BOOST_CHECK_EQUAL(counted, 0);
  else
    BOOST_TEST_MESSAGE("allocation count skipped: operator new is replaced by a tool");
  // the gradients still sum to 0 per batch element (softmax - one-hot)
  for (unsigned b = 0; b < 8; ++b) {
    float s = 0.f;
    for (unsigned i = 0; i < 50; ++i) s += dxv[b * 50 + i];
    BOOST_CHECK_SMALL(s, 1e-5f);
  }
}

BOOST_AUTO_TEST_CASE(op_table_rows) {
  BOOST_CHECK(op_info(OpKind::PickNegLogSoftmax).batch == BatchKind::Custom);
  BOOST_CHECK(op_info(OpKind::PickNegLogSoftmax).batch_combine != nullptr);
  BOOST_CHECK(op_info(OpKind::LogSumExp).batch == BatchKind::Elementwise);
  BOOST_CHECK(op_info(OpKind::Softmax).batch == BatchKind::Elementwise);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(pickneglogsoftmax_autobatch)

// Instances of a tagger's loss, run plain and with both batching strategies:
// values and gradients must agree, and the pickneglogsoftmax nodes must batch.
BOOST_AUTO_TEST_CASE(batched_equals_plain) {
  ParameterCollection m;
  Parameter w = m.add_parameters({6});
  w.set_value(test::test_values(6, 0.3f));
  unsigned pidx = 5;
  std::vector<unsigned> pvec{2, 0};
  auto run = [&](int strategy) {
    m.reset_gradient();
    ComputationGraph cg;
    cg.set_autobatch(strategy);
    std::vector<Expression> xs, losses;
    Expression we = parameter(cg, w);
    for (unsigned i = 0; i < 5; ++i) {
      unsigned bd = i < 3 ? 1 : 2;
      xs.push_back(input(cg, Dim({6}, bd), test::test_values(6 * bd, 0.1f * i)));
      Expression h = tanh(cmult(xs.back(), we));
      Expression l;
      switch (i) {
        case 0: l = pickneglogsoftmax(h, 1u); break;
        case 1: l = pickneglogsoftmax(h, &pidx); break;
        case 2: l = pickneglogsoftmax(h, std::vector<unsigned>{4}); break;
        case 3: l = pickneglogsoftmax(h, std::vector<unsigned>{3, 1}); break;
        default: l = pickneglogsoftmax(h, &pvec); break;
      }
      losses.push_back(sum_batches(l));
    }
    return test::run_outputs(cg, losses, xs, {w});
  };
  const test::StrategyResult plain = test::check_strategies_agree(run);
  // hand check of instance 0's loss: -log softmax(tanh(x * w))[1]
  std::vector<float> x0 = test::test_values(6, 0.f), w0 = test::test_values(6, 0.3f);
  double z = 0;
  for (int i = 0; i < 6; ++i) z += std::exp(std::tanh(x0[i] * w0[i]));
  BOOST_CHECK_CLOSE(plain.values[0], std::log(z) - std::tanh(x0[1] * w0[1]), 1e-3);
}

BOOST_AUTO_TEST_SUITE_END()

// softmax(x, d) over any dimension d < nd
BOOST_AUTO_TEST_SUITE(softmax_any_dim)

BOOST_AUTO_TEST_CASE(three_dims_by_hand) {
  // x {2,2,2}X2, element (r, c, s) at r + 2c + 4s.  Batch element 0 is 0 except
  // x(1,0,1) = ln3 (index 5); batch element 1 is 0 except x(0,1,0) = ln3 (index 2).
  // A pair (0, ln3) normalises to (1/4, 3/4), a pair (0, 0) to (1/2, 1/2).
  std::vector<float> v(16, 0.f);
  v[5] = kLn3;
  v[8 + 2] = kLn3;
  TestInput x{Dim({2, 2, 2}, 2), v};
  // d = 0: pairs (0,1) (2,3) (4,5) (6,7) of each batch element
  check_close(eval({x}, [](ComputationGraph&, const Xs& x) { return softmax(x[0], 0); }),
              {.5f, .5f, .5f, .5f, .25f, .75f, .5f, .5f, .5f, .5f, .75f, .25f, .5f, .5f, .5f, .5f});
  // d = 1: pairs (0,2) (1,3) (4,6) (5,7)
  check_close(eval({x}, [](ComputationGraph&, const Xs& x) { return softmax(x[0], 1); }),
              {.5f, .5f, .5f, .5f, .5f, .75f, .5f, .25f, .25f, .5f, .75f, .5f, .5f, .5f, .5f, .5f});
  // d = 2: pairs (0,4) (1,5) (2,6) (3,7)
  check_close(eval({x}, [](ComputationGraph&, const Xs& x) { return softmax(x[0], 2); }),
              {.5f, .25f, .5f, .5f, .5f, .75f, .5f, .5f, .5f, .5f, .75f, .5f, .5f, .5f, .25f, .5f});
}

BOOST_AUTO_TEST_CASE(longer_lines_and_size_one) {
  // x {1,1,3}: d = 2 is the only non-trivial line: softmax(1, 2, 3)
  check_close(eval({{Dim({1, 1, 3}), {1.f, 2.f, 3.f}}}, [](ComputationGraph&, const Xs& x) { return softmax(x[0], 2); }),
              {kS1, kS2, kS3});
  // a dimension of size 1: every line has one element -> all ones
  check_close(eval({{Dim({1, 1, 3}), {1.f, 2.f, 3.f}}}, [](ComputationGraph&, const Xs& x) { return softmax(x[0], 1); }),
              {1.f, 1.f, 1.f});
  // 4 dimensions {2,1,1,3}, d = 3: lines (0,2,4) and (1,3,5)
  check_close(eval({{Dim({2, 1, 1, 3}), {1.f, 0.f, 2.f, 0.f, 3.f, 0.f}}},
                   [](ComputationGraph&, const Xs& x) { return softmax(x[0], 3); }),
              {kS1, 1.f / 3, kS2, 1.f / 3, kS3, 1.f / 3});
}

BOOST_AUTO_TEST_CASE(gradient_by_hand) {
  // x {1,2} (a row), d = 1: y = softmax(0, ln3) = (1/4, 3/4); loss = y_1:
  // dx = y_1 (e_1 - y) = (-3/16, 3/16)
  ComputationGraph cg;
  Expression x = input(cg, Dim({1, 2}), {0.f, kLn3});
  Expression loss = component(cg, softmax(x, 1), 1);
  check_close(input_gradient(cg, loss, x), {-3.f / 16, 3.f / 16});
  // the same along d = 2 of {1,1,2}
  ComputationGraph cg2;
  Expression x2 = input(cg2, Dim({1, 1, 2}), {0.f, kLn3});
  Expression loss2 = component(cg2, softmax(x2, 2), 1);
  check_close(input_gradient(cg2, loss2, x2), {-3.f / 16, 3.f / 16});
}

BOOST_AUTO_TEST_CASE(gradients) {
  ParameterCollection m;
  Parameter p = m.add_parameters({2, 3, 2});
  p.set_value(test::test_values(12, 0.1f));
  for (unsigned d = 0; d < 3; ++d) {
    check_gradients(m, {{Dim({2, 3, 2}, 2), test::test_values(24, 0.05f * d)}},
                    [d](ComputationGraph&, const Xs& x) { return softmax(x[0], d); });
    // a parameter (batch of 1) against a batch of 2
    check_gradients(m, {{Dim({2, 3, 2}, 2), test::test_values(24, -0.1f)}},
                    [&, d](ComputationGraph& cg, const Xs& x) { return softmax(cmult(x[0], parameter(cg, p)), d); });
  }
  check_gradients(m, {{Dim({2, 1, 2, 3}), test::test_values(12)}},
                  [](ComputationGraph&, const Xs& x) { return softmax(x[0], 3); });
}

BOOST_AUTO_TEST_CASE(dim_errors) {
  ComputationGraph cg;
  Expression v = input(cg, Dim({3}), {1.f, 2.f, 3.f});
  check_throws_with<dim_error>([&] { softmax(v, 1); }, {"softmax", "dimension 1", "{3}", "1 dimension"});
  Expression t = input(cg, Dim({2, 2, 2}, 2), test::test_values(16));
  check_throws_with<dim_error>([&] { softmax(t, 3); }, {"softmax", "dimension 3", "{2,2,2X2}", "3 dimensions"});
  BOOST_CHECK_EQUAL(cg.size(), 2u);
}

BOOST_AUTO_TEST_SUITE_END()
