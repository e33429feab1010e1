#define BOOST_TEST_MODULE treelstm
#include "test_utils.h"

#include "dynet_lite/except.h"
#include "dynet_lite/treelstm.h"

using namespace dynet_lite;

namespace {

// The test tree: leaves 0, 1, 2; node 3 = (0, 1); node 4 = (3, 2).
const std::vector<std::vector<int>> kChildren = {{}, {}, {}, {0, 1}, {3, 2}};

Expression build_tree(TreeLSTMBuilder& t, ComputationGraph& cg, const std::vector<Expression>& xs, bool all = true) {
  t.new_graph(cg);
  t.start_new_sequence();
  std::vector<Expression> outs;
  for (int k = 0; k < 5; ++k) outs.push_back(t.add_input(k, kChildren[k], xs[k]));
  return all ? concatenate(outs) : outs.back();
}

std::vector<test::TestInput> tree_inputs(unsigned dim, unsigned bd = 1) {
  std::vector<test::TestInput> in;
  for (int k = 0; k < 5; ++k) in.push_back({Dim({dim}, bd), test::test_values(dim * bd, 0.15f * k - 0.2f)});
  return in;
}

using Vec = std::vector<double>;
Vec matvec(const Parameter& p, const Vec& x) {
  const Dim d = p.dim();
  std::vector<float> w = as_vector(p.get_storage().values);
  Vec y(d.rows(), 0.0);
  for (unsigned r = 0; r < d.rows(); ++r)
    for (unsigned c = 0; c < d.cols(); ++c) y[r] += w[c * d.rows() + r] * x[c];
  return y;
}
double sigm(double v) { return 1.0 / (1.0 + std::exp(-v)); }

}  // namespace

BOOST_AUTO_TEST_CASE(nary_values_follow_tai_et_al) {
  ParameterCollection m;
  const unsigned h = 2;
  NaryTreeLSTMBuilder t(2, 1, 3, h, m);
  auto& p = t.params[0];  // W, b, U0, U1
  std::vector<float> bias(5 * h);
  for (size_t k = 0; k < bias.size(); ++k) bias[k] = 0.1f * static_cast<float>(k) - 0.4f;
  p[1].set_value(bias);
  auto in = tree_inputs(3);
  std::vector<float> got = test::eval(in, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    return build_tree(t, cg, xs);
  });
  // reference: rows i, o, u, f_0, f_1; forget gates get +1
  std::vector<Vec> hs(5), cs(5);
  Vec want;
  for (int k = 0; k < 5; ++k) {
    Vec x(in[k].values.begin(), in[k].values.end());
    Vec pre = matvec(p[0], x);
    for (size_t r = 0; r < pre.size(); ++r) pre[r] += bias[r];
    for (size_t l = 0; l < kChildren[k].size(); ++l) {
      Vec u = matvec(p[2 + l], hs[kChildren[k][l]]);
      for (size_t r = 0; r < pre.size(); ++r) pre[r] += u[r];
    }
    hs[k].resize(h);
    cs[k].resize(h);
    for (unsigned j = 0; j < h; ++j) {
      double c = sigm(pre[j]) * std::tanh(pre[2 * h + j]);
      for (size_t l = 0; l < kChildren[k].size(); ++l) c += sigm(pre[(3 + l) * h + j] + 1.0) * cs[kChildren[k][l]][j];
      cs[k][j] = c;
      hs[k][j] = sigm(pre[h + j]) * std::tanh(c);
    }
    want.insert(want.end(), hs[k].begin(), hs[k].end());
  }
  test::check_close(got, std::vector<float>(want.begin(), want.end()), 1e-5);
}

BOOST_AUTO_TEST_CASE(nary_gradients) {
  for (unsigned layers : {1u, 2u}) {
    ParameterCollection m;
    NaryTreeLSTMBuilder t(2, layers, 3, 2, m);
    BOOST_CHECK(test::check_gradients(m, tree_inputs(3), [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
      return build_tree(t, cg, xs);
    }) > 0);
  }
  // batched inputs, and an initial state used by the leaves
  ParameterCollection m;
  NaryTreeLSTMBuilder t(2, 1, 3, 2, m);
  auto in = tree_inputs(3, 2);
  in.push_back({Dim({2}), test::test_values(2, 0.3f)});
  in.push_back({Dim({2}), test::test_values(2, -0.3f)});
  test::check_gradients(m, in, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    t.new_graph(cg);
    t.start_new_sequence({xs[5], xs[6]});
    std::vector<Expression> outs;
    for (int k = 0; k < 5; ++k) outs.push_back(t.add_input(k, kChildren[k], xs[k]));
    return concatenate(outs);
  });
}

BOOST_AUTO_TEST_CASE(unidirectional_and_bidirectional_gradients) {
  {
    ParameterCollection m;
    UnidirectionalTreeLSTMBuilder t(1, 3, 3, m);
    BOOST_CHECK(test::check_gradients(m, tree_inputs(3), [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
      return build_tree(t, cg, xs);
    }) > 0);
  }
  {
    ParameterCollection m;
    BidirectionalTreeLSTMBuilder t(2, 4, 4, m);
    BOOST_CHECK(test::check_gradients(m, tree_inputs(4), [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
      return build_tree(t, cg, xs);
    }) > 0);
  }
}

BOOST_AUTO_TEST_CASE(unidirectional_reads_x_then_children) {
  ParameterCollection m, m2;
  UnidirectionalTreeLSTMBuilder t(1, 3, 3, m);
  VanillaLSTMBuilder lstm(1, 3, 3, m2);
  auto ps = t.get_parameter_collection().get_parameters();
  BOOST_REQUIRE_EQUAL(ps.size(), 3u);
  for (unsigned j = 0; j < 3; ++j) lstm.params[0][j].set_value(as_vector(ps[j].get_storage().values));
  auto in = tree_inputs(3);
  ComputationGraph cg;
  std::vector<Expression> xs;
  for (auto& i : in) xs.push_back(input(cg, i.dim, i.values));
  std::vector<Expression> outs;
  t.new_graph(cg);
  t.start_new_sequence();
  for (int k = 0; k < 5; ++k) outs.push_back(t.add_input(k, kChildren[k], xs[k]));
  lstm.new_graph(cg);
  for (int k = 0; k < 5; ++k) {
    lstm.start_new_sequence();
    Expression e = lstm.add_input(xs[k]);
    for (int c : kChildren[k]) e = lstm.add_input(outs[c]);
    test::check_close(as_vector(cg.forward(outs[k])), as_vector(cg.forward(e)), 1e-6);
  }
  BOOST_CHECK_EQUAL(t.back().i, outs[4].i);
  BOOST_CHECK_EQUAL(t.get_h(RNNPointer(3))[0].i, outs[3].i);
}

BOOST_AUTO_TEST_CASE(bidirectional_halves) {
  ParameterCollection m;
  BidirectionalTreeLSTMBuilder t(1, 4, 4, m);
  auto in = tree_inputs(4);
  std::vector<float> v = test::eval(in, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    return build_tree(t, cg, xs, false);
  });
  BOOST_CHECK_EQUAL(v.size(), 4u);
  BOOST_CHECK_EQUAL(t.get_parameter_collection().get_parameters().size(), 6u);  // two LSTMs
}

BOOST_AUTO_TEST_CASE(batched_equals_single) {
  ParameterCollection m;
  NaryTreeLSTMBuilder a(2, 2, 3, 3, m);
  UnidirectionalTreeLSTMBuilder b(2, 3, 3, m);
  BidirectionalTreeLSTMBuilder c(1, 4, 4, m);
  for (TreeLSTMBuilder* t : std::vector<TreeLSTMBuilder*>{&a, &b, &c}) {
    const unsigned dim = t == &c ? 4 : 3;
    const unsigned B = 2;
    auto in = tree_inputs(dim, B);
    std::vector<float> got = test::eval(in, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
      return build_tree(*t, cg, xs, false);
    });
    const size_t hid = got.size() / B;
    for (unsigned bb = 0; bb < B; ++bb) {
      std::vector<test::TestInput> one;
      for (auto& i : in)
        one.push_back({Dim({dim}), std::vector<float>(i.values.begin() + bb * dim, i.values.begin() + (bb + 1) * dim)});
      std::vector<float> want = test::eval(one, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
        return build_tree(*t, cg, xs, false);
      });
      // Batched products sum in another order: equal to float rounding (relative
      // 1e-5, or 1e-7 absolute for values near 0).
      for (size_t k = 0; k < hid; ++k)
        BOOST_CHECK_SMALL(got[bb * hid + k] - want[k], 1e-7f + 1e-5f * std::fabs(want[k]));
    }
  }
}

BOOST_AUTO_TEST_CASE(ids_and_num_elements) {
  ParameterCollection m;
  NaryTreeLSTMBuilder t(2, 1, 3, 2, m);
  ComputationGraph cg;
  t.new_graph(cg);
  t.start_new_sequence();
  t.set_num_elements(10);
  Expression x = input(cg, Dim({3}), test::test_values(3));
  t.add_input(7, {}, x);
  t.add_input(2, {}, x);
  Expression r = t.add_input(12, {7, 2}, x);  // grows past set_num_elements
  BOOST_CHECK_EQUAL(t.back().i, r.i);
  BOOST_CHECK_EQUAL(t.get_s(RNNPointer(12)).size(), 2u);
  test::check_throws_with<index_error>([&] { t.get_h(RNNPointer(3)); }, {"NaryTreeLSTMBuilder", "node 3"});
}

BOOST_AUTO_TEST_CASE(errors) {
  ParameterCollection m;
  NaryTreeLSTMBuilder t(2, 1, 3, 2, m);
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), test::test_values(3));
  Expression x4 = input(cg, Dim({4}), test::test_values(4));
  test::check_throws_with<std::invalid_argument>([&] { t.add_input(0, {}, x); }, {"NaryTreeLSTMBuilder", "new_graph"});
  t.new_graph(cg);
  t.start_new_sequence();
  test::check_throws_with<index_error>([&] { t.add_input(1, {0}, x); },
                                       {"NaryTreeLSTMBuilder::add_input", "child 0 of node 1"});
  test::check_throws_with<dim_error>([&] { t.add_input(0, {}, x4); }, {"NaryTreeLSTMBuilder::add_input", "{3}", "{4}"});
  t.add_input(0, {}, x);
  t.add_input(1, {}, x);
  t.add_input(2, {}, x);
  test::check_throws_with<std::invalid_argument>([&] { t.add_input(3, {0, 1, 2}, x); }, {"3 children", "N = 2"});
  test::check_throws_with<index_error>([&] { t.add_input(-1, {}, x); }, {"node id -1"});
  RNNBuilder& base = t;
  test::check_throws_with<std::runtime_error>([&] { base.add_input(x); }, {"NaryTreeLSTMBuilder", "add_input(id, children, x)"});
  test::check_throws_with<dim_error>([&] { UnidirectionalTreeLSTMBuilder u(1, 3, 2, m); },
                                     {"UnidirectionalTreeLSTMBuilder", "input_dim (3)", "hidden_dim (2)"});
  test::check_throws_with<dim_error>([&] { BidirectionalTreeLSTMBuilder b(1, 3, 3, m); },
                                     {"BidirectionalTreeLSTMBuilder", "hidden_dim (3)", "even"});
  UnidirectionalTreeLSTMBuilder u(1, 3, 3, m);
  u.new_graph(cg);
  u.start_new_sequence();
  test::check_throws_with<dim_error>([&] { u.add_input(0, {}, x4); }, {"UnidirectionalTreeLSTMBuilder::add_input", "{3}", "{4}"});
  test::check_throws_with<std::runtime_error>([&] { u.final_s(); }, {"final_s"});
}
