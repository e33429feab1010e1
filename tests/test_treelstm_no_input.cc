#define BOOST_TEST_MODULE treelstm_no_input
// NaryTreeLSTMBuilder::add_input with an empty Expression: a node without input
// (the inner nodes of a constituency tree, as in the treelstm example).
#include "test_utils.h"

#include "dynet_lite/treelstm.h"

using namespace dynet_lite;

namespace {
// leaves 0, 1, 2 (with words); inner nodes 3 = (0, 1) and 4 = (3, 2) without input.
const std::vector<std::vector<int>> kChildren = {{}, {}, {}, {0, 1}, {3, 2}};

std::vector<test::TestInput> leaf_inputs(unsigned dim, unsigned bd = 1) {
  std::vector<test::TestInput> in;
  for (int k = 0; k < 3; ++k) in.push_back({Dim({dim}, bd), test::test_values(dim * bd, 0.2f * k - 0.3f)});
  return in;
}

// Inner nodes get `inner` (an empty Expression, or zeros).
Expression build(NaryTreeLSTMBuilder& t, ComputationGraph& cg, const std::vector<Expression>& leaves, bool zeros_in) {
  t.new_graph(cg);
  t.start_new_sequence();
  std::vector<Expression> outs;
  for (int k = 0; k < 5; ++k) {
    Expression x = k < 3 ? leaves[k] : zeros_in ? zeros(cg, leaves[0].dim()) : Expression();
    outs.push_back(t.add_input(k, kChildren[k], x));
  }
  return concatenate(outs);
}
}  // namespace

BOOST_AUTO_TEST_CASE(no_input_equals_zero_input) {
  for (unsigned layers : {1u, 2u}) {
    ParameterCollection m;
    NaryTreeLSTMBuilder t(2, layers, 3, 4, m);
    auto in = leaf_inputs(3, 2);
    std::vector<float> with_zeros = test::eval(in, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
      return build(t, cg, xs, true);
    });
    std::vector<float> without = test::eval(in, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
      return build(t, cg, xs, false);
    });
    BOOST_CHECK_EQUAL(with_zeros.size(), 5u * 4u * 2u);
    test::check_close(without, with_zeros, 1e-6);
  }
}

BOOST_AUTO_TEST_CASE(no_input_gradients) {
  ParameterCollection m;
  NaryTreeLSTMBuilder t(2, 1, 3, 2, m);
  BOOST_CHECK(test::check_gradients(m, leaf_inputs(3), [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    return build(t, cg, xs, false);
  }) > 0);
}

BOOST_AUTO_TEST_CASE(a_node_without_input_or_children_is_its_bias) {
  ParameterCollection m;
  NaryTreeLSTMBuilder t(2, 1, 3, 2, m);
  std::vector<float> bias = {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.f, 0.f, 0.f, 0.f};
  t.params[0][1].set_value(bias);
  ComputationGraph cg;
  t.new_graph(cg);
  t.start_new_sequence();
  std::vector<float> h = as_vector(cg.forward(t.add_input(0, {}, Expression())));
  auto sigm = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  // rows i, o, u: c = i * u, h = o * tanh(c)
  std::vector<float> want(2);
  for (int j = 0; j < 2; ++j)
    want[j] = static_cast<float>(sigm(bias[2 + j]) * std::tanh(sigm(bias[j]) * std::tanh(bias[4 + j])));
  test::check_close(h, want, 1e-6);
}
