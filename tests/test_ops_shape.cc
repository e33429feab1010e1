#define BOOST_TEST_MODULE ops_shape
#include "dynet_lite/ops/op_table.h"
#include "test_utils.h"

using namespace dynet_lite;
using test::iota;

namespace {

using Fn = std::function<Expression(const std::vector<Expression>&)>;

// The value and the shape of f over fixed inputs.
std::vector<float> value_of(const std::vector<test::TestInput>& in, const Fn& f, Dim* d = nullptr) {
  return test::eval(in, [&](ComputationGraph&, const std::vector<Expression>& xs) {
    Expression y = f(xs);
    if (d) *d = y.dim();
    return y;
  });
}
void check_value(const std::vector<test::TestInput>& in, const Fn& f, const std::vector<float>& want,
                 const Dim& want_dim) {
  Dim d;
  test::check_close(value_of(in, f, &d), want);
  BOOST_CHECK_EQUAL(d, want_dim);
}

// Gradients of sum_batches(sum_elems(w .* f(xs))) with respect to each input,
// with plain weights w = 1, 2, 3, ... so the expected numbers are easy to write.
std::vector<std::vector<float>> grads_of(const std::vector<test::TestInput>& in, const Fn& f) {
  ComputationGraph cg;
  std::vector<Expression> xs;
  for (auto& i : in) xs.push_back(input(cg, i.dim, i.values));
  Expression y = f(xs);
  Expression loss = sum_batches(sum_elems(cmult(y, input(cg, y.dim(), iota(y.dim().size())))));
  cg.forward(loss);
  cg.backward(loss, true);
  std::vector<std::vector<float>> g;
  for (auto& x : xs) g.push_back(as_vector(cg.get_gradient(x)));
  return g;
}

// A parameter with fixed values, multiplied into the first input (so that
// gradients also flow into a parameter).
struct Scaled {
  ParameterCollection m;
  Parameter w;
  explicit Scaled(const Dim& d) {
    w = m.add_parameters(d);
    w.set_value(test::test_values(d.size(), 0.3f));
  }
  // Checks f(cmult(x0, w), x1, ...); returns the number of checked elements.
  size_t check(const std::vector<test::TestInput>& in, const Fn& f) {
    return test::check_gradients(m, in, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
      std::vector<Expression> ys = xs;
      ys[0] = cmult(xs[0], parameter(cg, w));
      return f(ys);
    });
  }
};

size_t total(const std::vector<test::TestInput>& in) {
  size_t n = 0;
  for (auto& i : in) n += i.values.size();
  return n;
}

}  // namespace

// ---------------------------------------------------------------- reshape

BOOST_AUTO_TEST_CASE(reshape_values) {
  check_value(
      {{Dim({2, 3}), iota(6)}},
      [](auto& x) {
        return reshape(x[0], Dim({3, 2}));
      },
      iota(6), Dim({3, 2}));
  check_value(
      {{Dim({2, 3}), iota(6)}}, [](auto& x) { return reshape(x[0], Dim({6})); }, iota(6), Dim({6}));
  // a target with a batch of 1 and the per-element size keeps the batch
  check_value(
      {{Dim({2, 3}, 2), iota(12)}}, [](auto& x) { return reshape(x[0], Dim({6})); }, iota(12), Dim({6}, 2));
  // equal total sizes: elements move out of / into the batch, as in DyNet
  check_value(
      {{Dim({2}, 3), iota(6)}},
      [](auto& x) {
        return reshape(x[0], Dim({1, 2}));
      },
      iota(6), Dim({1, 2}, 3));
  check_value(
      {{Dim({2}, 3), iota(6)}}, [](auto& x) { return reshape(x[0], Dim({6}, 1)); }, iota(6), Dim({6}));
  check_value(
      {{Dim({2}, 3), iota(6)}},
      [](auto& x) {
        return reshape(x[0], Dim({3, 2}));
      },
      iota(6), Dim({3, 2}));
  check_value(
      {{Dim({6}), iota(6)}}, [](auto& x) { return reshape(x[0], Dim({2}, 3)); }, iota(6), Dim({2}, 3));
  check_value(
      {{Dim({1}), {4.f}}},
      [](auto& x) {
        return reshape(x[0], Dim({1, 1}));
      },
      {4.f}, Dim({1, 1}));
}

BOOST_AUTO_TEST_CASE(reshape_shares_its_arguments_memory) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3}), iota(6)) * 2.f;
  Expression y = reshape(x, Dim({3, 2}));
  const Tensor& v = cg.forward(y);
  BOOST_CHECK(v.v == cg.get_value(x).v);
  test::check_close(as_vector(v), {2.f, 4.f, 6.f, 8.f, 10.f, 12.f});
  // and again after the graph recomputes
  const Tensor& v2 = cg.forward(y);
  BOOST_CHECK(v2.v == cg.get_value(x).v);
  test::check_close(as_vector(v2), {2.f, 4.f, 6.f, 8.f, 10.f, 12.f});
}

BOOST_AUTO_TEST_CASE(reshape_gradient) {
  Scaled s(Dim({2, 3}));
  std::vector<test::TestInput> in = {{Dim({2, 3}, 2), test::test_values(12)}};
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return tanh(reshape(x[0], Dim({3, 2}))); }), 6u + 12u);
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return reshape(x[0], Dim({6})); }), 6u + 12u);
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return reshape(x[0], Dim({12})); }), 6u + 12u);
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return reshape(x[0], Dim({3}, 4)); }), 6u + 12u);
  test::check_close(grads_of({{Dim({2}, 2), iota(4)}}, [](auto& x) { return reshape(x[0], Dim({4})); })[0],
                    {1.f, 2.f, 3.f, 4.f});
}

BOOST_AUTO_TEST_CASE(reshape_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3}), iota(6));
  test::check_throws_with<dim_error>([&] { reshape(x, Dim({4})); }, {"reshape", "{2,3}", "{4}", "6 values"});
  Expression xb = input(cg, Dim({2, 3}, 2), iota(12));
  test::check_throws_with<dim_error>([&] { reshape(xb, Dim({5}, 2)); }, {"reshape", "{2,3X2}", "{5X2}"});
  test::check_throws_with<dim_error>([&] { reshape(xb, Dim({3})); }, {"reshape", "{2,3X2}", "{3}"});
  test::check_throws_with<std::invalid_argument>([&] { reshape(Expression(), Dim({3})); }, {"reshape"});
  BOOST_CHECK_EQUAL(cg.size(), 2u);
}

// ---------------------------------------------------------------- pick

BOOST_AUTO_TEST_CASE(pick_values) {
  check_value(
      {{Dim({3}), iota(3)}}, [](auto& x) { return pick(x[0], 1u); }, {2.f}, Dim({1}));
  // [[1,3,5],[2,4,6]]: row 1, column 2
  check_value(
      {{Dim({2, 3}), iota(6)}}, [](auto& x) { return pick(x[0], 1u, 0); }, {2.f, 4.f, 6.f}, Dim({3}));
  check_value(
      {{Dim({2, 3}), iota(6)}}, [](auto& x) { return pick(x[0], 2u, 1); }, {5.f, 6.f}, Dim({2}));
  // {2,3,2}: (i,j,k) = 1 + i + 2j + 6k; j = 1
  check_value(
      {{Dim({2, 3, 2}), iota(12)}}, [](auto& x) { return pick(x[0], 1u, 1); }, {3.f, 4.f, 9.f, 10.f}, Dim({2, 2}));
  check_value(
      {{Dim({2, 3, 2}), iota(12)}}, [](auto& x) { return pick(x[0], 0u, 2); }, iota(6), Dim({2, 3}));
  // one index for every batch element
  check_value(
      {{Dim({3}, 2), iota(6)}}, [](auto& x) { return pick(x[0], 2u); }, {3.f, 6.f}, Dim({1}, 2));
  // one index per batch element
  check_value(
      {{Dim({3}, 2), iota(6)}},
      [](auto& x) {
        return pick(x[0], std::vector<unsigned>{0, 2});
      },
      {1.f, 6.f}, Dim({1}, 2));
  check_value(
      {{Dim({2, 2}, 2), iota(8)}},
      [](auto& x) {
        return pick(x[0], std::vector<unsigned>{1, 0}, 1);
      },
      {3.f, 4.f, 5.f, 6.f}, Dim({2}, 2));
  // a batch of 1 broadcast to as many elements as indices
  check_value(
      {{Dim({3}), iota(3)}},
      [](auto& x) {
        return pick(x[0], std::vector<unsigned>{2, 0, 1});
      },
      {3.f, 1.f, 2.f}, Dim({1}, 3));
  // a length-1 dimension
  check_value(
      {{Dim({1, 3}), iota(3)}}, [](auto& x) { return pick(x[0], 0u, 0); }, iota(3), Dim({3}));
}

BOOST_AUTO_TEST_CASE(pick_pointer_variants_read_at_forward_time) {
  unsigned idx = 0;
  std::vector<unsigned> idxs = {0, 1};
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}, 2), iota(6));
  Expression a = pick(x, &idx);
  Expression b = pick(x, &idxs);
  BOOST_CHECK_EQUAL(b.dim(), Dim({1}, 2));
  test::check_close(as_vector(cg.forward(a)), {1.f, 4.f});
  test::check_close(as_vector(cg.forward(b)), {1.f, 5.f});
  idx = 2;
  idxs = {2, 0};
  test::check_close(as_vector(cg.forward(a)), {3.f, 6.f});
  test::check_close(as_vector(cg.forward(b)), {3.f, 4.f});
  cg.backward(sum_batches(b), true);
  test::check_close(as_vector(cg.get_gradient(x)), {0.f, 0.f, 1.f, 1.f, 0.f, 0.f});
}

BOOST_AUTO_TEST_CASE(pick_gradient) {
  Scaled s(Dim({3, 2}));
  std::vector<test::TestInput> batched = {{Dim({3, 2}, 2), test::test_values(12)}};
  std::vector<test::TestInput> single = {{Dim({3, 2}), test::test_values(6)}};
  for (unsigned d : {0u, 1u}) {
    BOOST_TEST_CONTEXT("dimension " << d) {
      BOOST_CHECK_EQUAL(s.check(batched, [d](auto& x) { return pick(x[0], 1u, d); }), 6u + 12u);
      BOOST_CHECK_EQUAL(s.check(batched,
                                [d](auto& x) {
                                  return pick(x[0], std::vector<unsigned>{1, 0}, d);
                                }),
                        6u + 12u);
      // batch of 1 picked for 3 batch elements, one index twice
      BOOST_CHECK_EQUAL(s.check(single,
                                [d](auto& x) {
                                  return pick(x[0], std::vector<unsigned>{1, 0, 1}, d);
                                }),
                        6u + 6u);
      BOOST_CHECK_EQUAL(s.check(single, [d](auto& x) { return pick(x[0], 0u, d); }), 6u + 6u);
    }
  }
  unsigned idx = 2;
  std::vector<unsigned> idxs = {1, 2};
  BOOST_CHECK_EQUAL(s.check(batched, [&](auto& x) { return pick(x[0], &idx, 0); }), 6u + 12u);
  BOOST_CHECK_EQUAL(s.check(batched, [&](auto& x) { return pick(x[0], &idxs, 0); }), 6u + 12u);
  // by hand: the broadcast batch sums into the single element
  test::check_close(grads_of({{Dim({3}), iota(3)}},
                             [](auto& x) {
                               return pick(x[0], std::vector<unsigned>{2, 0, 2});
                             })[0],
                    {2.f, 0.f, 1.f + 3.f});
}

BOOST_AUTO_TEST_CASE(pick_errors) {
  ComputationGraph cg;
  Expression v = input(cg, Dim({3}), iota(3));
  Expression xb = input(cg, Dim({3}, 2), iota(6));
  test::check_throws_with<index_error>([&] { pick(v, 3u); }, {"pick", "index 3", "dimension 0", "size 3"});
  test::check_throws_with<index_error>([&] { pick(xb, std::vector<unsigned>{0, 7}); }, {"pick", "index 7", "size 3"});
  test::check_throws_with<dim_error>([&] { pick(v, 0u, 1); }, {"pick", "dimension 1", "{3}"});
  test::check_throws_with<dim_error>(
      [&] {
        pick(xb, std::vector<unsigned>{0, 1, 2});
      },
      {"pick", "3 indices", "{3X2}", "batch size 2"});
  test::check_throws_with<dim_error>([&] { pick(v, std::vector<unsigned>{}); }, {"pick", "empty"});
  test::check_throws_with<std::invalid_argument>([&] { pick(v, static_cast<const unsigned*>(nullptr)); },
                                                 {"pick", "null"});
  test::check_throws_with<std::invalid_argument>([&] { pick(v, static_cast<const std::vector<unsigned>*>(nullptr)); },
                                                 {"pick", "null"});
  test::check_throws_with<std::invalid_argument>([&] { pick(Expression(), 0u); }, {"pick"});
  test::check_throws_with<std::invalid_argument>([&] { pick(Expression(), std::vector<unsigned>{0}); }, {"pick"});
  BOOST_CHECK_EQUAL(cg.size(), 2u);

  // pointer variants are checked when the graph runs
  unsigned idx = 5;
  Expression a = pick(v, &idx);
  test::check_throws_with<index_error>([&] { cg.forward(a); }, {"pick", "index 5", "size 3"});
  idx = 1;  // node a runs again before b below
  std::vector<unsigned> idxs = {0, 1};
  Expression b = pick(xb, &idxs);
  idxs = {0, 3};
  test::check_throws_with<index_error>([&] { cg.forward(b); }, {"pick", "index 3", "size 3"});
  idxs = {0, 1, 2};
  test::check_throws_with<dim_error>([&] { cg.forward(b); }, {"pick", "now holds 3", "built for 2"});
  idxs = {2, 1};
  test::check_close(as_vector(cg.forward(b)), {3.f, 5.f});
}

// ---------------------------------------------------------------- pick_range

BOOST_AUTO_TEST_CASE(pick_range_values) {
  check_value(
      {{Dim({5}), iota(5)}}, [](auto& x) { return pick_range(x[0], 1, 4); }, {2.f, 3.f, 4.f}, Dim({3}));
  check_value(
      {{Dim({5}), iota(5)}}, [](auto& x) { return pickrange(x[0], 1, 4); }, {2.f, 3.f, 4.f}, Dim({3}));
  check_value(
      {{Dim({5}), iota(5)}}, [](auto& x) { return pick_range(x[0], 0, 5); }, iota(5), Dim({5}));
  // [[1,3,5],[2,4,6]]: columns 1..2, row 1
  check_value(
      {{Dim({2, 3}), iota(6)}}, [](auto& x) { return pick_range(x[0], 1, 3, 1); }, {3.f, 4.f, 5.f, 6.f}, Dim({2, 2}));
  check_value(
      {{Dim({2, 3}), iota(6)}}, [](auto& x) { return pick_range(x[0], 1, 2, 0); }, {2.f, 4.f, 6.f}, Dim({1, 3}));
  check_value(
      {{Dim({3}, 2), iota(6)}}, [](auto& x) { return pick_range(x[0], 0, 2); }, {1.f, 2.f, 4.f, 5.f}, Dim({2}, 2));
  check_value(
      {{Dim({1, 2}), iota(2)}}, [](auto& x) { return pick_range(x[0], 0, 1, 0); }, iota(2), Dim({1, 2}));
}

BOOST_AUTO_TEST_CASE(pick_range_gradient) {
  Scaled s(Dim({3, 4}));
  std::vector<test::TestInput> in = {{Dim({3, 4}, 2), test::test_values(24)}};
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return pick_range(x[0], 1, 3, 0); }), 12u + 24u);
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return pick_range(x[0], 1, 3, 1); }), 12u + 24u);
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return pick_range(x[0], 0, 1, 1); }), 12u + 24u);
  test::check_close(grads_of({{Dim({4}), iota(4)}}, [](auto& x) { return pick_range(x[0], 1, 3); })[0],
                    {0.f, 1.f, 2.f, 0.f});
}

BOOST_AUTO_TEST_CASE(pick_range_errors) {
  ComputationGraph cg;
  Expression v = input(cg, Dim({5}), iota(5));
  Expression m = input(cg, Dim({2, 3}), iota(6));
  test::check_throws_with<index_error>([&] { pick_range(v, 2, 6); }, {"pick_range", "[2, 6)", "size 5", "{5}"});
  test::check_throws_with<index_error>([&] { pick_range(m, 0, 4, 1); },
                                       {"pick_range", "[0, 4)", "dimension 1", "size 3"});
  test::check_throws_with<std::invalid_argument>([&] { pick_range(v, 3, 3); }, {"pick_range", "empty", "[3, 3)"});
  test::check_throws_with<std::invalid_argument>([&] { pickrange(v, 4, 1); }, {"pick_range", "[4, 1)"});
  test::check_throws_with<dim_error>([&] { pick_range(m, 0, 1, 2); }, {"pick_range", "dimension 2", "{2,3}"});
  BOOST_CHECK_EQUAL(cg.size(), 2u);
}

// ---------------------------------------------------------------- pick_batch_elems

BOOST_AUTO_TEST_CASE(pick_batch_elems_values) {
  std::vector<test::TestInput> in = {{Dim({2}, 3), iota(6)}};
  check_value(
      in, [](auto& x) { return pick_batch_elem(x[0], 1); }, {3.f, 4.f}, Dim({2}));
  check_value(
      in,
      [](auto& x) {
        return pick_batch_elems(x[0], {2, 0, 2});
      },
      {5.f, 6.f, 1.f, 2.f, 5.f, 6.f}, Dim({2}, 3));
  check_value(
      in, [](auto& x) { return pick_batch_elems(x[0], {1}); }, {3.f, 4.f}, Dim({2}));
  check_value(
      {{Dim({1}), {7.f}}}, [](auto& x) { return pick_batch_elem(x[0], 0); }, {7.f}, Dim({1}));
  std::vector<unsigned> idx = {2, 1};
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}, 3), iota(6));
  Expression y = pick_batch_elems(x, &idx);
  test::check_close(as_vector(cg.forward(y)), {5.f, 6.f, 3.f, 4.f});
  idx = {0, 0};
  test::check_close(as_vector(cg.forward(y)), {1.f, 2.f, 1.f, 2.f});
}

BOOST_AUTO_TEST_CASE(pick_batch_elems_gradient) {
  Scaled s(Dim({2, 2}));
  std::vector<test::TestInput> in = {{Dim({2, 2}, 3), test::test_values(12)}};
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return pick_batch_elem(x[0], 2); }), 4u + 12u);
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return pick_batch_elems(x[0], {1, 1, 0, 2}); }), 4u + 12u);
  std::vector<unsigned> idx = {2, 0};
  BOOST_CHECK_EQUAL(s.check(in, [&](auto& x) { return pick_batch_elems(x[0], &idx); }), 4u + 12u);
  // by hand: weights 1..6 on the three picked elements {1, 0, 1}
  test::check_close(grads_of({{Dim({2}, 3), iota(6)}},
                             [](auto& x) {
                               return pick_batch_elems(x[0], {1, 0, 1});
                             })[0],
                    {3.f, 4.f, 1.f + 5.f, 2.f + 6.f, 0.f, 0.f});
}

BOOST_AUTO_TEST_CASE(pick_batch_elems_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}, 3), iota(6));
  test::check_throws_with<index_error>([&] { pick_batch_elem(x, 3); },
                                       {"pick_batch_elems", "index 3", "batch of size 3", "{2X3}"});
  test::check_throws_with<index_error>([&] { pick_batch_elems(x, {0, 4}); }, {"pick_batch_elems", "index 4", "size 3"});
  test::check_throws_with<dim_error>([&] { pick_batch_elems(x, std::vector<unsigned>{}); },
                                     {"pick_batch_elems", "empty"});
  test::check_throws_with<std::invalid_argument>(
      [&] { pick_batch_elems(x, static_cast<const std::vector<unsigned>*>(nullptr)); }, {"pick_batch_elems", "null"});
  BOOST_CHECK_EQUAL(cg.size(), 1u);
  std::vector<unsigned> idx = {1, 3};
  Expression y = pick_batch_elems(x, &idx);
  test::check_throws_with<index_error>([&] { cg.forward(y); }, {"pick_batch_elems", "index 3", "size 3"});
}

// ---------------------------------------------------------------- select_rows / select_cols

BOOST_AUTO_TEST_CASE(select_rows_values) {
  // [[1,4],[2,5],[3,6]]
  std::vector<test::TestInput> in = {{Dim({3, 2}), iota(6)}};
  check_value(
      in,
      [](auto& x) {
        return select_rows(x[0], {2, 0});
      },
      {3.f, 1.f, 6.f, 4.f}, Dim({2, 2}));
  check_value(
      in,
      [](auto& x) {
        return select_rows(x[0], {1, 1, 1});
      },
      {2.f, 2.f, 2.f, 5.f, 5.f, 5.f}, Dim({3, 2}));
  check_value(
      {{Dim({3}, 2), iota(6)}}, [](auto& x) { return select_rows(x[0], {1}); }, {2.f, 5.f}, Dim({1}, 2));
  std::vector<unsigned> rows = {0};
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 2}), iota(6));
  Expression y = select_rows(x, &rows);
  test::check_close(as_vector(cg.forward(y)), {1.f, 4.f});
  rows = {2};
  test::check_close(as_vector(cg.forward(y)), {3.f, 6.f});
}

BOOST_AUTO_TEST_CASE(select_cols_values) {
  // [[1,3,5],[2,4,6]]
  std::vector<test::TestInput> in = {{Dim({2, 3}), iota(6)}};
  check_value(
      in,
      [](auto& x) {
        return select_cols(x[0], {2, 0});
      },
      {5.f, 6.f, 1.f, 2.f}, Dim({2, 2}));
  check_value(
      in,
      [](auto& x) {
        return select_cols(x[0], {1, 1});
      },
      {3.f, 4.f, 3.f, 4.f}, Dim({2, 2}));
  check_value(
      {{Dim({2, 2}, 2), iota(8)}}, [](auto& x) { return select_cols(x[0], {1}); }, {3.f, 4.f, 7.f, 8.f},
      Dim({2, 1}, 2));
  check_value(
      {{Dim({3}), iota(3)}},
      [](auto& x) {
        return select_cols(x[0], {0, 0});
      },
      {1.f, 2.f, 3.f, 1.f, 2.f, 3.f}, Dim({3, 2}));
  std::vector<unsigned> cols = {1};
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3}), iota(6));
  Expression y = select_cols(x, &cols);
  test::check_close(as_vector(cg.forward(y)), {3.f, 4.f});
  cols = {2, 1};
  BOOST_CHECK_THROW(cg.forward(y), dim_error);  // the list changed size
  cols = {2};
  test::check_close(as_vector(cg.forward(y)), {5.f, 6.f});
}

BOOST_AUTO_TEST_CASE(select_rows_cols_gradient) {
  Scaled s(Dim({3, 4}));
  std::vector<test::TestInput> in = {{Dim({3, 4}, 2), test::test_values(24)}};
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return select_rows(x[0], {2, 0, 2}); }), 12u + 24u);
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return select_cols(x[0], {3, 1, 3}); }), 12u + 24u);
  std::vector<unsigned> idx = {1, 0};
  BOOST_CHECK_EQUAL(s.check(in, [&](auto& x) { return select_rows(x[0], &idx); }), 12u + 24u);
  BOOST_CHECK_EQUAL(s.check(in, [&](auto& x) { return select_cols(x[0], &idx); }), 12u + 24u);
  // by hand: rows {1, 1} of a {2,2} with weights [[1,3],[2,4]] -> row 1 gets 1+2 and 3+4
  test::check_close(grads_of({{Dim({2, 2}), iota(4)}},
                             [](auto& x) {
                               return select_rows(x[0], {1, 1});
                             })[0],
                    {0.f, 3.f, 0.f, 7.f});
  test::check_close(grads_of({{Dim({2, 2}), iota(4)}},
                             [](auto& x) {
                               return select_cols(x[0], {0, 0});
                             })[0],
                    {1.f + 3.f, 2.f + 4.f, 0.f, 0.f});
}

BOOST_AUTO_TEST_CASE(select_rows_cols_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 2}), iota(6));
  // Out of range: std::invalid_argument, as DyNet, thrown where the node is built.
  test::check_throws_with<std::invalid_argument>(
      [&] {
        select_rows(x, {0, 3});
      },
      {"select_rows", "index 3", "dimension 0", "size 3", "{3,2}"});
  test::check_throws_with<std::invalid_argument>([&] { select_cols(x, {2}); },
                                       {"select_cols", "index 2", "dimension 1", "size 2", "{3,2}"});
  test::check_throws_with<dim_error>([&] { select_rows(x, std::vector<unsigned>{}); }, {"select_rows", "empty"});
  test::check_throws_with<dim_error>([&] { select_cols(x, std::vector<unsigned>{}); }, {"select_cols", "empty"});
  Expression t = input(cg, Dim({2, 2, 2}), iota(8));
  test::check_throws_with<dim_error>([&] { select_cols(t, std::vector<unsigned>{0}); }, {"select_cols", "{2,2,2}"});
  test::check_throws_with<std::invalid_argument>(
      [&] { select_rows(x, static_cast<const std::vector<unsigned>*>(nullptr)); }, {"select_rows", "null"});
  test::check_throws_with<std::invalid_argument>(
      [&] { select_cols(x, static_cast<const std::vector<unsigned>*>(nullptr)); }, {"select_cols", "null"});
  BOOST_CHECK_EQUAL(cg.size(), 2u);
  std::vector<unsigned> rows = {4}, cols = {0, 5};
  Expression r = select_rows(x, &rows);
  Expression c = select_cols(x, &cols);
  test::check_throws_with<std::invalid_argument>([&] { cg.forward(r); }, {"select_rows", "index 4", "size 3"});
  rows = {0};  // node r runs again before c below
  test::check_throws_with<std::invalid_argument>([&] { cg.forward(c); }, {"select_cols", "index 5", "size 2"});
}

// ---------------------------------------------------------------- concatenate

BOOST_AUTO_TEST_CASE(concatenate_values) {
  check_value(
      {{Dim({2}), iota(2)}, {Dim({3}), iota(3, 3.f)}},
      [](auto& x) {
        return concatenate({x[0], x[1]});
      },
      iota(5), Dim({5}));
  check_value(
      {{Dim({2}), iota(2)}, {Dim({2}), iota(2, 3.f)}},
      [](auto& x) {
        return concatenate_cols({x[0], x[1]});
      },
      iota(4), Dim({2, 2}));
  check_value(
      {{Dim({2}), iota(2)}, {Dim({2}), iota(2, 3.f)}, {Dim({2}), iota(2, 5.f)}},
      [](auto& x) {
        return concatenate_cols(std::vector<Expression>{x[0], x[1], x[2]});
      },
      iota(6), Dim({2, 3}));
  // rows of matrices: [[1,3],[2,4]] over [[9,10]] -> [[1,3],[2,4],[9,10]]
  check_value(
      {{Dim({2, 2}), iota(4)}, {Dim({1, 2}), {9.f, 10.f}}},
      [](auto& x) {
        return concatenate({x[0], x[1]}, 0);
      },
      {1.f, 2.f, 9.f, 3.f, 4.f, 10.f}, Dim({3, 2}));
  check_value(
      {{Dim({2, 1}), iota(2)}, {Dim({2, 2}), iota(4, 3.f)}},
      [](auto& x) {
        return concatenate({x[0], x[1]}, 1);
      },
      iota(6), Dim({2, 3}));
  // along a third dimension
  check_value(
      {{Dim({2}), iota(2)}, {Dim({2}), iota(2, 3.f)}},
      [](auto& x) {
        return concatenate({x[0], x[1]}, 2);
      },
      iota(4), Dim({2, 1, 2}));
  // a batch of 1 is repeated for every batch element
  check_value(
      {{Dim({2}, 2), iota(4)}, {Dim({1}), {9.f}}},
      [](auto& x) {
        return concatenate({x[0], x[1]});
      },
      {1.f, 2.f, 9.f, 3.f, 4.f, 9.f}, Dim({3}, 2));
  check_value(
      {{Dim({1}), {9.f}}, {Dim({2}, 2), iota(4)}},
      [](auto& x) {
        return concatenate_cols({x[0], x[0]});
      },
      {9.f, 9.f}, Dim({1, 2}));
  check_value(
      {{Dim({2}, 2), iota(4)}, {Dim({2}, 2), iota(4, 5.f)}},
      [](auto& x) {
        return concatenate({x[0], x[1]});
      },
      {1.f, 2.f, 5.f, 6.f, 3.f, 4.f, 7.f, 8.f}, Dim({4}, 2));
  // one argument
  check_value(
      {{Dim({3}), iota(3)}}, [](auto& x) { return concatenate({x[0]}); }, iota(3), Dim({3}));
}

BOOST_AUTO_TEST_CASE(concatenate_gradient) {
  Scaled s(Dim({2, 3}));
  // every argument batched
  std::vector<test::TestInput> both = {{Dim({2, 3}, 2), test::test_values(12)},
                                       {Dim({2, 3}, 2), test::test_values(12, 0.1f)}};
  for (unsigned d : {0u, 1u, 2u}) {
    BOOST_TEST_CONTEXT("dimension " << d) {
      BOOST_CHECK_EQUAL(s.check(both, [d](auto& x) { return concatenate({x[0], x[1], x[0]}, d); }), 6u + total(both));
    }
  }
  // a batch of 1 against a batch of 3, on either side
  std::vector<test::TestInput> mixed = {{Dim({2, 3}), test::test_values(6)},
                                        {Dim({2, 1}, 3), test::test_values(6, 0.2f)}};
  BOOST_CHECK_EQUAL(s.check(mixed, [](auto& x) { return concatenate_cols({x[1], x[0]}); }), 6u + total(mixed));
  BOOST_CHECK_EQUAL(s.check(mixed, [](auto& x) { return concatenate_cols({x[0], x[1], x[0]}); }), 6u + total(mixed));
  std::vector<test::TestInput> rows = {{Dim({2, 3}, 3), test::test_values(18)},
                                       {Dim({1, 3}), test::test_values(3, 0.2f)}};
  BOOST_CHECK_EQUAL(s.check(rows, [](auto& x) { return concatenate({x[1], x[0]}, 0); }), 6u + total(rows));
  // by hand: a {1} against a batch of 2: y = [x0_b; x1], weights 1..4 -> dx1 = 2 + 4
  auto g = grads_of({{Dim({1}, 2), {1.f, 2.f}}, {Dim({1}), {5.f}}}, [](auto& x) { return concatenate({x[0], x[1]}); });
  test::check_close(g[0], {1.f, 3.f});
  test::check_close(g[1], {2.f + 4.f});
}

BOOST_AUTO_TEST_CASE(concatenate_errors) {
  ComputationGraph cg;
  Expression a = input(cg, Dim({2, 2}), iota(4));
  Expression b = input(cg, Dim({3, 3}), iota(9));
  Expression c = input(cg, Dim({2}, 2), iota(4));
  Expression d = input(cg, Dim({2}, 3), iota(6));
  test::check_throws_with<dim_error>(
      [&] {
        concatenate({a, b}, 0);
      },
      {"concatenate", "argument 1", "{3,3}", "{2,2}", "every dimension but 0"});
  test::check_throws_with<dim_error>([&] { concatenate_cols({a, b}); }, {"concatenate", "{3,3}", "{2,2}"});
  test::check_throws_with<dim_error>([&] { concatenate({c, d}); }, {"concatenate", "batch size 3", "2"});
  test::check_throws_with<dim_error>([&] { concatenate({c, c}, 7); }, {"concatenate", "dimension 7"});
  test::check_throws_with<std::invalid_argument>([&] { concatenate(std::vector<Expression>{}); }, {"concatenate"});
  test::check_throws_with<std::invalid_argument>(
      [&] {
        concatenate({a, Expression()});
      },
      {"concatenate", "argument 1"});
  BOOST_CHECK_EQUAL(cg.size(), 4u);
}

// ---------------------------------------------------------------- concatenate_to_batch

BOOST_AUTO_TEST_CASE(concatenate_to_batch_values_and_gradient) {
  check_value(
      {{Dim({2}), iota(2)}, {Dim({2}, 2), iota(4, 3.f)}},
      [](auto& x) {
        return concatenate_to_batch({x[0], x[1]});
      },
      iota(6), Dim({2}, 3));
  check_value(
      {{Dim({2}), iota(2)}},
      [](auto& x) {
        return concatenate_to_batch(std::vector<Expression>{x[0], x[0]});
      },
      {1.f, 2.f, 1.f, 2.f}, Dim({2}, 2));
  Scaled s(Dim({2, 2}));
  std::vector<test::TestInput> in = {{Dim({2, 2}), test::test_values(4)}, {Dim({2, 2}, 2), test::test_values(8, 0.1f)}};
  BOOST_CHECK_EQUAL(s.check(in, [](auto& x) { return concatenate_to_batch({x[1], x[0], x[1]}); }), 4u + total(in));
  auto g = grads_of({{Dim({1}), {1.f}}, {Dim({1}, 2), {2.f, 3.f}}}, [](auto& x) {
    return concatenate_to_batch({x[0], x[1], x[0]});
  });
  test::check_close(g[0], {1.f + 4.f});
  test::check_close(g[1], {2.f, 3.f});
}

BOOST_AUTO_TEST_CASE(concatenate_to_batch_errors) {
  ComputationGraph cg;
  Expression a = input(cg, Dim({2}), iota(2));
  Expression b = input(cg, Dim({3}, 2), iota(6));
  test::check_throws_with<dim_error>(
      [&] {
        concatenate_to_batch({a, b});
      },
      {"concatenate_to_batch", "argument 1", "{3X2}", "{2}"});
  test::check_throws_with<std::invalid_argument>([&] { concatenate_to_batch(std::vector<Expression>{}); },
                                                 {"concatenate_to_batch"});
  BOOST_CHECK_EQUAL(cg.size(), 2u);
}

// ---------------------------------------------------------------- gradient controls

BOOST_AUTO_TEST_CASE(nobackprop_blocks_the_gradient) {
  ParameterCollection m;
  Parameter w = m.add_parameters({3});
  w.set_value({1.f, 2.f, 3.f});
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {4.f, 5.f, 6.f});
  Expression p = parameter(cg, w);
  Expression nb = nobackprop(p);
  test::check_close(as_vector(cg.forward(nb)), {1.f, 2.f, 3.f});
  // loss = sum(nobackprop(w) .* x + 2 w): only the second term reaches w
  Expression loss = sum_elems(cmult(nb, x) + p * 2.f);
  test::check_close(as_vector(cg.forward(loss)), {4.f + 10.f + 18.f + 12.f});
  cg.backward(loss);
  test::check_close(as_vector(*w.gradients()), {2.f, 2.f, 2.f});
  // with full = true the input still gets its gradient, the blocked path none
  m.reset_gradient();
  cg.backward(loss, true);
  test::check_close(as_vector(cg.get_gradient(x)), {1.f, 2.f, 3.f});
  test::check_close(as_vector(*w.gradients()), {2.f, 2.f, 2.f});
  // a loss that only goes through nobackprop leaves the parameter untouched
  m.reset_gradient();
  Expression only = sum_elems(cmult(nb, x));
  cg.backward(only);
  test::check_close(as_vector(*w.gradients()), {0.f, 0.f, 0.f});
}

BOOST_AUTO_TEST_CASE(flip_and_scale_gradient) {
  std::vector<test::TestInput> in = {{Dim({3}, 2), {1.f, -2.f, 3.f, 0.5f, 0.f, -1.f}}};
  check_value(
      in, [](auto& x) { return flip_gradient(x[0]); }, in[0].values, Dim({3}, 2));
  check_value(
      in, [](auto& x) { return scale_gradient(x[0], 0.5f); }, in[0].values, Dim({3}, 2));
  check_value(
      in, [](auto& x) { return nobackprop(x[0]); }, in[0].values, Dim({3}, 2));
  // weights 1..6 flipped / scaled
  test::check_close(grads_of(in, [](auto& x) { return flip_gradient(x[0]); })[0], {-1.f, -2.f, -3.f, -4.f, -5.f, -6.f});
  test::check_close(grads_of(in, [](auto& x) { return scale_gradient(x[0], 0.5f); })[0],
                    {0.5f, 1.f, 1.5f, 2.f, 2.5f, 3.f});
  test::check_close(grads_of(in, [](auto& x) { return scale_gradient(x[0]); })[0], iota(6));
  test::check_close(grads_of(in, [](auto& x) { return scale_gradient(x[0], 0.f); })[0], std::vector<float>(6, 0.f));
  test::check_close(grads_of(in, [](auto& x) { return x[0] + nobackprop(x[0]); })[0], iota(6));
  // through a parameter: d/dw of sum(flip(w .* x)) is -x
  ParameterCollection m;
  Parameter w = m.add_parameters({2});
  w.set_value({1.f, 1.f});
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}), {3.f, 4.f});
  Expression loss = sum_elems(flip_gradient(cmult(parameter(cg, w), x)));
  test::check_close(as_vector(cg.forward(loss)), {7.f});
  cg.backward(loss);
  test::check_close(as_vector(*w.gradients()), {-3.f, -4.f});
  m.reset_gradient();
  Expression loss2 = sum_elems(scale_gradient(cmult(parameter(cg, w), x), -2.f));
  cg.backward(loss2);
  test::check_close(as_vector(*w.gradients()), {-6.f, -8.f});
}

// ---------------------------------------------------------------- table rows

BOOST_AUTO_TEST_CASE(batch_kinds_and_flags) {
  BOOST_CHECK(op_info(OpKind::Reshape).sets_own_value);
  BOOST_CHECK(op_info(OpKind::NoBackprop).blocks_gradient);
  BOOST_CHECK(!op_info(OpKind::FlipGradient).blocks_gradient);
  BOOST_CHECK(op_info(OpKind::Concatenate).batch == BatchKind::Elementwise);
  BOOST_CHECK(op_info(OpKind::Pick).batch == BatchKind::Never);
  BOOST_CHECK(op_info(OpKind::ConcatenateToBatch).batch == BatchKind::Never);
  BOOST_CHECK(op_info(OpKind::PickBatchElems).batch == BatchKind::Never);
  BOOST_CHECK(op_info(OpKind::Reshape).batch == BatchKind::Never);
}
