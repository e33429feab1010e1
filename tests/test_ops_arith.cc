#define BOOST_TEST_MODULE ops_arith
#include "test_utils.h"

using namespace dynet_lite;

namespace {

using Xs = std::vector<Expression>;
using BinaryFn = Expression (*)(const Expression&, const Expression&);

Expression op_add(const Expression& a, const Expression& b) { return a + b; }
Expression op_sub(const Expression& a, const Expression& b) { return a - b; }
Expression op_cmult(const Expression& a, const Expression& b) { return cmult(a, b); }
Expression op_cdiv(const Expression& a, const Expression& b) { return cdiv(a, b); }
Expression op_pow(const Expression& a, const Expression& b) { return pow(a, b); }
Expression op_min(const Expression& a, const Expression& b) { return min(a, b); }
Expression op_max(const Expression& a, const Expression& b) { return max(a, b); }

struct NamedOp {
  const char* name;
  BinaryFn f;
  float a_offset;  // keeps pow's base and cdiv's divisor away from 0
  float b_offset;
};
const NamedOp kBinaryOps[] = {{"add", op_add, 0.f, 0.f},        {"subtract", op_sub, 0.f, 0.f},
                              {"cmult", op_cmult, 0.f, 0.f},    {"cdiv", op_cdiv, 0.f, 2.f},
                              {"pow", op_pow, 2.f, 0.f},        {"min", op_min, 0.f, 0.1f},
                              {"max", op_max, 0.f, 0.1f}};

std::vector<float> iota(size_t n, float start = 0.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

/// A gradient check of every binary op on a of shape `a` and b of shape `b` (the
/// values offset by the op's offsets), checking `n` elements.
struct ShapePair {
  Dim a, b;
  size_t n;
};
void check_binary_gradients(std::initializer_list<ShapePair> pairs) {
  ParameterCollection m;
  for (const NamedOp& op : kBinaryOps) {
    BOOST_TEST_CONTEXT(op.name) {
      for (const ShapePair& s : pairs) {
        size_t n = test::check_gradients(m,
                                         {{s.a, test::test_values(s.a.size(), op.a_offset)},
                                          {s.b, test::test_values(s.b.size(), op.b_offset + 0.3f)}},
                                         [&](ComputationGraph&, const Xs& xs) { return op.f(xs[0], xs[1]); });
        BOOST_CHECK_EQUAL(n, s.n);
      }
    }
  }
}

}  // namespace

// ---------------------------------------------------------------- values, same shape

BOOST_AUTO_TEST_CASE(binary_operator_values) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {1, 2, 3});
  Expression y = input(cg, Dim({3}), {4, 5, -6});
  test::check_close(as_vector(cg.forward(x + y)), {5, 7, -3});
  test::check_close(as_vector(cg.forward(x - y)), {-3, -3, 9});
  test::check_close(as_vector(cg.forward(cmult(x, y))), {4, 10, -18});
  test::check_close(as_vector(cg.forward(cdiv(x, y))), {0.25f, 0.4f, -0.5f});
  test::check_close(as_vector(cg.forward(-x)), {-1, -2, -3});
  BOOST_CHECK_EQUAL((x + y).dim(), Dim({3}));
}

BOOST_AUTO_TEST_CASE(scalar_operator_values) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {1, 2, 3});
  test::check_close(as_vector(cg.forward(x + 2.f)), {3, 4, 5});
  test::check_close(as_vector(cg.forward(2.f + x)), {3, 4, 5});
  test::check_close(as_vector(cg.forward(x - 2.f)), {-1, 0, 1});
  test::check_close(as_vector(cg.forward(2.f - x)), {1, 0, -1});
  test::check_close(as_vector(cg.forward(x * 3.f)), {3, 6, 9});
  test::check_close(as_vector(cg.forward(3.f * x)), {3, 6, 9});
  test::check_close(as_vector(cg.forward(x / 2.f)), {0.5f, 1, 1.5f});
  test::check_close(as_vector(cg.forward(6.f / x)), {6, 3, 2});
}

BOOST_AUTO_TEST_CASE(scalar_operator_backward_values) {
  // loss = sum(c / x):  dx = -c / x^2;  loss = sum(c - x): dx = -1;  loss = sum(3x): dx = 3
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {1, 2, 4});
  Expression loss = sum_elems(8.f / x) + sum_elems(5.f - x) + sum_elems(x * 3.f) + sum_elems(x / 4.f) +
                    sum_elems(x + 7.f) + sum_elems(x - 7.f);
  cg.forward(loss);
  cg.backward(loss, true);
  // -8/x^2 - 1 + 3 + 0.25 + 1 + 1
  test::check_close(as_vector(x.gradient()), {-8 + 4.25f, -2 + 4.25f, -0.5f + 4.25f});
}

BOOST_AUTO_TEST_CASE(division_by_scalar_zero) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3}), iota(6));
  test::check_throws_with<std::invalid_argument>([&] { x / 0.f; }, {"operator/", "{2,3}", "scalar 0"});
}

BOOST_AUTO_TEST_CASE(pow_values) {
  // 2^3, 3^2, 4^0.5
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {2, 3, 4});
  Expression y = input(cg, Dim({3}), {3, 2, 0.5f});
  Expression p = pow(x, y);
  test::check_close(as_vector(cg.forward(p)), {8, 9, 2});
  // d/dx = y x^(y-1) = {12, 6, 0.25};  d/dy = ln(x) x^y = {8 ln 2, 9 ln 3, 2 ln 4}
  Expression loss = sum_elems(p);
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(x.gradient()), {12, 6, 0.25f});
  test::check_close(as_vector(y.gradient()), {8 * std::log(2.f), 9 * std::log(3.f), 2 * std::log(4.f)});
}

BOOST_AUTO_TEST_CASE(min_max_values_and_ties) {
  // x = [1,5,3], y = [2,5,1]: element 1 is a tie
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {1, 5, 3});
  Expression y = input(cg, Dim({3}), {2, 5, 1});
  Expression mx = max(x, y), mn = min(x, y);
  test::check_close(as_vector(cg.forward(mx)), {2, 5, 3});
  test::check_close(as_vector(cg.forward(mn)), {1, 5, 1});
  // On a tie the first argument takes the whole gradient (none is lost or doubled).
  Expression loss = sum_elems(mx) + 10.f * sum_elems(mn);
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(x.gradient()), {10, 11, 1});
  test::check_close(as_vector(y.gradient()), {1, 0, 10});
}

BOOST_AUTO_TEST_CASE(max_of_a_list) {
  ComputationGraph cg;
  Expression a = input(cg, Dim({3}), {1, 9, 2});
  Expression b = input(cg, Dim({3}), {4, 0, 2});
  Expression c = input(cg, Dim({3}), {3, 8, 7});
  test::check_close(as_vector(cg.forward(max({a, b, c}))), {4, 9, 7});
  test::check_close(as_vector(cg.forward(max(std::vector<Expression>{c}))), {3, 8, 7});
  test::check_throws_with<std::invalid_argument>([&] { max(std::vector<Expression>{}); }, {"max", "empty"});
}

// ---------------------------------------------------------------- broadcasting

BOOST_AUTO_TEST_CASE(broadcast_column_against_matrix) {
  // a {3,1} = [1,2,3];  b {3,4}: b(i,j) = i + 3j
  ComputationGraph cg;
  Expression a = input(cg, Dim({3, 1}), {1, 2, 3});
  Expression b = input(cg, Dim({3, 4}), iota(12));
  BOOST_CHECK_EQUAL((a + b).dim(), Dim({3, 4}));
  BOOST_CHECK_EQUAL((b + a).dim(), Dim({3, 4}));
  // a + b = 2i + 1 + 3j
  test::check_close(as_vector(cg.forward(a + b)), {1, 3, 5, 4, 6, 8, 7, 9, 11, 10, 12, 14});
  test::check_close(as_vector(cg.forward(b + a)), {1, 3, 5, 4, 6, 8, 7, 9, 11, 10, 12, 14});
  // b - a = 3j - 1
  test::check_close(as_vector(cg.forward(b - a)), {-1, -1, -1, 2, 2, 2, 5, 5, 5, 8, 8, 8});
  // a * b = (i + 1)(i + 3j)
  test::check_close(as_vector(cg.forward(cmult(a, b))), {0, 2, 6, 3, 8, 15, 6, 14, 24, 9, 20, 33});
  // a vector {3} broadcasts the same way
  Expression v = input(cg, Dim({3}), {1, 2, 3});
  test::check_close(as_vector(cg.forward(b - v)), {-1, -1, -1, 2, 2, 2, 5, 5, 5, 8, 8, 8});
}

BOOST_AUTO_TEST_CASE(broadcast_row_and_scalar_like) {
  // r {1,4} = [10,20,30,40] against b {3,4}: r + b = i + 3j + 10(j+1)
  ComputationGraph cg;
  Expression r = input(cg, Dim({1, 4}), {10, 20, 30, 40});
  Expression b = input(cg, Dim({3, 4}), iota(12));
  test::check_close(as_vector(cg.forward(r + b)), {10, 11, 12, 23, 24, 25, 36, 37, 38, 49, 50, 51});
  // a column {3,1} times a row {1,4}: the outer product, {3,4}
  Expression c = input(cg, Dim({3, 1}), {1, 2, 3});
  Expression rc = cmult(c, r);
  BOOST_CHECK_EQUAL(rc.dim(), Dim({3, 4}));
  test::check_close(as_vector(cg.forward(rc)), {10, 20, 30, 20, 40, 60, 30, 60, 90, 40, 80, 120});
  // a single element {1} against everything
  Expression s = input(cg, Dim({1}), {2});
  test::check_close(as_vector(cg.forward(cdiv(b, s))), {0, 0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f, 4, 4.5f, 5, 5.5f});
}

BOOST_AUTO_TEST_CASE(broadcast_batch_of_one) {
  // a {2} (batch 1) = [1,2];  b {2}X3
  ComputationGraph cg;
  Expression a = input(cg, Dim({2}), {1, 2});
  Expression b = input(cg, Dim({2}, 3), {10, 20, 30, 40, 50, 60});
  BOOST_CHECK_EQUAL((a + b).dim(), Dim({2}, 3));
  test::check_close(as_vector(cg.forward(a + b)), {11, 22, 31, 42, 51, 62});
  test::check_close(as_vector(cg.forward(a - b)), {-9, -18, -29, -38, -49, -58});
  test::check_close(as_vector(cg.forward(cdiv(b, a))), {10, 10, 30, 20, 50, 30});
  test::check_close(as_vector(cg.forward(max(a * 25.f, b))), {25, 50, 30, 50, 50, 60});
  // backward: the batch-1 argument sums the gradient over the batch
  Expression loss = sum_batches(sum_elems(cmult(a, b)));
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(a.gradient()), {90, 120});
  test::check_close(as_vector(b.gradient()), {1, 2, 1, 2, 1, 2});
}

BOOST_AUTO_TEST_CASE(broadcast_dims_and_batch_together) {
  // c {3,1}X1 + r {1,2}X2 -> {3,2}X2
  ComputationGraph cg;
  Expression c = input(cg, Dim({3, 1}), {1, 2, 3});
  Expression r = input(cg, Dim({1, 2}, 2), {10, 20, 30, 40});
  Expression y = c + r;
  BOOST_CHECK_EQUAL(y.dim(), Dim({3, 2}, 2));
  test::check_close(as_vector(cg.forward(y)), {11, 12, 13, 21, 22, 23, 31, 32, 33, 41, 42, 43});
}

BOOST_AUTO_TEST_CASE(broadcast_errors) {
  ComputationGraph cg;
  Expression a = input(cg, Dim({3}), {1, 2, 3});
  Expression b = input(cg, Dim({4}), {1, 2, 3, 4});
  test::check_throws_with<dim_error>([&] { a + b; }, {"add", "{3}", "{4}", "dimension 0 is 3 vs 4"});
  test::check_throws_with<dim_error>([&] { a - b; }, {"subtract", "{3}", "{4}"});
  Expression m23 = input(cg, Dim({2, 3}), iota(6));
  Expression m32 = input(cg, Dim({3, 2}), iota(6));
  test::check_throws_with<dim_error>([&] { cmult(m23, m32); }, {"cmult", "{2,3}", "{3,2}", "do not broadcast"});
  test::check_throws_with<dim_error>([&] { cdiv(m23, m32); }, {"cdiv", "{2,3}", "{3,2}"});
  test::check_throws_with<dim_error>([&] { pow(m23, m32); }, {"pow", "{2,3}", "{3,2}"});
  test::check_throws_with<dim_error>([&] { min(m23, m32); }, {"min", "{2,3}", "{3,2}"});
  test::check_throws_with<dim_error>([&] { max(m23, m32); }, {"max", "{2,3}", "{3,2}"});
  Expression b2 = input(cg, Dim({3}, 2), iota(6));
  Expression b3 = input(cg, Dim({3}, 3), iota(9));
  test::check_throws_with<dim_error>([&] { b2 + b3; }, {"add", "{3X2}", "{3X3}", "batch sizes 2 and 3"});
}

// ---------------------------------------------------------------- gradient checks

BOOST_AUTO_TEST_CASE(binary_gradients_same_shape) { check_binary_gradients({{Dim({2, 3}), Dim({2, 3}), 12}}); }

BOOST_AUTO_TEST_CASE(binary_gradients_column_against_matrix) {
  check_binary_gradients({{Dim({3, 1}), Dim({3, 4}), 15}, {Dim({3, 4}), Dim({1, 4}), 16}});
}

BOOST_AUTO_TEST_CASE(binary_gradients_batch_broadcast) {
  check_binary_gradients({
      // batch 1 against batch 3, on either side
      {Dim({2, 2}), Dim({2, 2}, 3), 16},
      {Dim({2, 2}, 3), Dim({2, 2}), 16},
      // both batched
      {Dim({3}, 2), Dim({3}, 2), 12},
      // dims and batch broadcast at once; a single element {1} against a batch
      {Dim({3, 1}), Dim({1, 2}, 2), 7},
      {Dim({1}), Dim({3, 2}, 2), 13},
  });
}

BOOST_AUTO_TEST_CASE(binary_gradients_with_parameters) {
  ParameterCollection m;
  Parameter p = m.add_parameters({3, 1});
  p.set_value({0.4f, -0.7f, 1.1f});
  size_t n = test::check_gradients(m, {{Dim({3, 2}, 2), test::test_values(12)}}, [&](ComputationGraph& cg, const Xs& xs) {
    Expression w = parameter(cg, p);
    return tanh(cmult(w, xs[0]) + w - cdiv(xs[0], cmult(w, w) + 1.f));
  });
  BOOST_CHECK_EQUAL(n, 15u);
}

BOOST_AUTO_TEST_CASE(scalar_op_gradients) {
  ParameterCollection m;
  size_t n = test::check_gradients(m, {{Dim({2, 3}, 2), test::test_values(12, 2.f)}}, [&](ComputationGraph&, const Xs& xs) {
    const Expression& x = xs[0];
    return cmult(x + 1.5f, 0.5f - x) + cmult(2.f + x, x - 0.25f) + cmult(x * 3.f, x) + cmult(-x, 0.7f * x) +
           cmult(x / 4.f, 3.f / x) + 2.f / x;
  });
  BOOST_CHECK_EQUAL(n, 12u);
}

BOOST_AUTO_TEST_CASE(same_node_on_both_sides) {
  // x * x, x / x, x - x: both gradients reach one node
  ParameterCollection m;
  size_t n = test::check_gradients(m, {{Dim({4}), test::test_values(4, 2.f)}}, [&](ComputationGraph&, const Xs& xs) {
    return cmult(xs[0], xs[0]) + cdiv(xs[0], xs[0]) + (xs[0] - xs[0]) + pow(xs[0], xs[0]);
  });
  BOOST_CHECK_EQUAL(n, 4u);
}

// A sum's backward passes its gradient unchanged to an argument that it alone
// reads: that argument's gradient is the sum's own memory (no copy).  Where
// another node reads it too, or the sum reads it twice, it keeps its own.
// Gradients match finite differences either way, chains of sums included.
BOOST_AUTO_TEST_CASE(additions_pass_their_gradient_to_sole_readers) {
  ParameterCollection m;
  Parameter W = m.add_parameters({3, 2}), b = m.add_parameters({3});
  W.set_value(test::test_values(6, 0.3f));
  b.set_value({0.2f, -0.4f, 0.1f});
  size_t n = test::check_gradients(m, {{Dim({2}), test::test_values(2, 0.5f)}}, [&](ComputationGraph& cg, const Xs& xs) {
    Expression w = parameter(cg, W), c = parameter(cg, b);
    Expression wx = w * xs[0], shared = w * (xs[0] * 2.f);
    Expression h = tanh(wx);
    Expression twice = h + h + (tanh(shared) + tanh(wx));  // h read twice by one sum; two sole readers
    return tanh(sum({wx + c, shared - c, 1.f + shared * 0.5f, twice}));
  });
  BOOST_CHECK_EQUAL(n, 11u);  // x, W, b

  ComputationGraph cg;
  Expression x = input(cg, Dim({2}), {0.5f, -1.5f});
  Expression w = parameter(cg, W), c = parameter(cg, b);
  Expression wx = w * x;            // read by the sum alone
  Expression sum1 = wx + c;         // read by sum2 alone
  Expression t = tanh(w * x * 0.5f);  // read twice by sum2
  Expression also = w * x * 2.f;    // read by sum2 and by the loss
  Expression sum2 = sum({sum1, t, t, also});
  Expression loss = sum_elems(square(sum2)) + sum_elems(also);
  cg.forward(loss);
  cg.backward(loss, true);  // every node's gradient kept
  BOOST_CHECK(wx.gradient().v == sum2.gradient().v);  // a chain of sums ends on the last one's memory
  BOOST_CHECK(sum1.gradient().v == sum2.gradient().v);
  BOOST_CHECK(t.gradient().v != sum2.gradient().v);
  BOOST_CHECK(also.gradient().v != sum2.gradient().v);
  const std::vector<float> d = as_vector(sum2.gradient());
  test::check_close(as_vector(wx.gradient()), d);
  test::check_close(as_vector(t.gradient()), {2 * d[0], 2 * d[1], 2 * d[2]});
  test::check_close(as_vector(also.gradient()), {d[0] + 1, d[1] + 1, d[2] + 1});
}

// ---------------------------------------------------------------- sum, average

BOOST_AUTO_TEST_CASE(sum_and_average_values) {
  ComputationGraph cg;
  Expression a = input(cg, Dim({3}), {1, 2, 3});
  Expression b = input(cg, Dim({3}), {10, 20, 30});
  Expression c = input(cg, Dim({3}), {-2, 4, 0});
  test::check_close(as_vector(cg.forward(sum({a, b, c}))), {9, 26, 33});
  test::check_close(as_vector(cg.forward(sum(std::vector<Expression>{a, b}))), {11, 22, 33});
  test::check_close(as_vector(cg.forward(sum({a}))), {1, 2, 3});
  test::check_close(as_vector(cg.forward(average({a, b, c}))), {3, 26.f / 3, 11});
  test::check_close(as_vector(cg.forward(average(std::vector<Expression>{a, b}))), {5.5f, 11, 16.5f});
  // a trailing 1 does not matter: {3} and {3,1} sum
  Expression d = input(cg, Dim({3, 1}), {1, 1, 1});
  test::check_close(as_vector(cg.forward(sum({a, d}))), {2, 3, 4});
}

BOOST_AUTO_TEST_CASE(sum_batch_broadcast) {
  // a {2} batch 1 plus b {2}X2: a added to each element
  ComputationGraph cg;
  Expression a = input(cg, Dim({2}), {1, 2});
  Expression b = input(cg, Dim({2}, 2), {10, 20, 30, 40});
  Expression s = sum({a, b, a});
  BOOST_CHECK_EQUAL(s.dim(), Dim({2}, 2));
  test::check_close(as_vector(cg.forward(s)), {12, 24, 32, 44});
  test::check_close(as_vector(cg.forward(sum({b, a}))), {11, 22, 31, 42});
  Expression loss = sum_batches(sum_elems(cmult(s, input(cg, Dim({2}, 2), {1, 2, 3, 4}))));
  cg.forward(loss);
  cg.backward(loss, true);
  // a appears twice and is broadcast over both elements: 2 * (w_0 + w_1)
  test::check_close(as_vector(a.gradient()), {8, 12});
  test::check_close(as_vector(b.gradient()), {1, 2, 3, 4});
}

BOOST_AUTO_TEST_CASE(sum_and_average_gradients) {
  ParameterCollection m;
  Parameter p = m.add_parameters({3});
  p.set_value({0.3f, -0.2f, 0.5f});
  size_t n = test::check_gradients(
      m, {{Dim({3}, 2), test::test_values(6)}, {Dim({3}), test::test_values(3, 0.2f)}, {Dim({3}, 2), test::test_values(6, -0.1f)}},
      [&](ComputationGraph& cg, const Xs& xs) {
        Expression w = parameter(cg, p);
        return tanh(sum({xs[0], w, xs[1], cmult(xs[2], w)})) + average({xs[0], xs[1], w}) +
               average(std::vector<Expression>{xs[2], xs[2]});
      });
  BOOST_CHECK_EQUAL(n, 18u);
}

BOOST_AUTO_TEST_CASE(sum_and_average_errors) {
  ComputationGraph cg;
  Expression a = input(cg, Dim({3}), {1, 2, 3});
  Expression b = input(cg, Dim({4}), {1, 2, 3, 4});
  test::check_throws_with<dim_error>([&] { sum({a, b}); }, {"sum", "argument 1", "{4}", "{3}"});
  test::check_throws_with<dim_error>([&] { average({a, a, b}); }, {"sum", "argument 2", "{4}", "{3}"});
  Expression c = input(cg, Dim({3}, 2), iota(6));
  Expression d = input(cg, Dim({3}, 3), iota(9));
  test::check_throws_with<dim_error>([&] { sum({c, d}); }, {"sum", "argument 1", "batch size 3", "2"});
  test::check_throws_with<std::invalid_argument>([&] { sum(std::vector<Expression>{}); }, {"sum", "empty"});
  test::check_throws_with<std::invalid_argument>([&] { average(std::vector<Expression>{}); }, {"average", "empty"});
  test::check_throws_with<std::invalid_argument>([&] { average(std::initializer_list<Expression>{}); },
                                                 {"average", "empty"});
}

// ---------------------------------------------------------------- colwise_add

BOOST_AUTO_TEST_CASE(colwise_add_values_and_gradients) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 2}), {1, 2, 3, 4, 5, 6});
  Expression b = input(cg, Dim({3}), {10, 20, 30});
  Expression y = colwise_add(x, b);
  BOOST_CHECK_EQUAL(y.dim(), Dim({3, 2}));
  test::check_close(as_vector(cg.forward(y)), {11, 22, 33, 14, 25, 36});
  // the bias gradient sums over the columns
  Expression loss = sum_elems(cmult(y, input(cg, Dim({3, 2}), {1, 2, 3, 4, 5, 6})));
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(b.gradient()), {5, 7, 9});

  ParameterCollection m;
  Parameter pb = m.add_parameters({4});
  pb.set_value({0.1f, -0.3f, 0.2f, 0.5f});
  size_t n = test::check_gradients(m, {{Dim({4, 3}, 2), test::test_values(24)}}, [&](ComputationGraph& g, const Xs& xs) {
    return tanh(colwise_add(xs[0], parameter(g, pb)));
  });
  BOOST_CHECK_EQUAL(n, 28u);
  // a batched bias: one column per batch element
  n = test::check_gradients(m, {{Dim({4, 3}, 2), test::test_values(24)}, {Dim({4}, 2), test::test_values(8, 0.3f)}},
                            [&](ComputationGraph&, const Xs& xs) { return colwise_add(xs[0], xs[1]); });
  BOOST_CHECK_EQUAL(n, 4u + 24u + 8u);
}

BOOST_AUTO_TEST_CASE(colwise_add_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 2}), iota(6));
  Expression b2 = input(cg, Dim({2}), {1, 2});
  test::check_throws_with<dim_error>([&] { colwise_add(x, b2); }, {"colwise_add", "bias {2}", "x {3,2}"});
  Expression m = input(cg, Dim({3, 2}), iota(6));
  test::check_throws_with<dim_error>([&] { colwise_add(x, m); }, {"colwise_add", "column vector", "{3,2}"});
}
