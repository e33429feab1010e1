#define BOOST_TEST_MODULE ops_treelstm
// The fused N-ary Tree-LSTM ops (treelstm_gates(_affine) / treelstm_c / treelstm_h):
// values against basic ops, gradient checks (batched and broadcast arguments),
// shape errors, and NaryTreeLSTMBuilder on them against the same step built by
// hand from basic ops, with and without automatic batching.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "dynet_lite/core/node.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/ops/op_table.h"
#include "dynet_lite/treelstm.h"
#include "test_utils.h"

using namespace dynet_lite;
using test::check_close;
using test::check_gradients;
using test::check_throws_with;

namespace {

using Xs = std::vector<Expression>;

size_t grad_check(ParameterCollection& m, std::vector<test::TestInput> inputs, const test::Builder& b) {
  size_t n = check_gradients(m, std::move(inputs), b);
  BOOST_CHECK_GT(n, 0u);
  return n;
}

// The step from basic ops, as NaryTreeLSTMBuilder built it before the fused ops:
// gates in blocks i, o, u, f_1..f_N of `hid` rows.
Expression composed_gates(const Expression& pre, unsigned N, unsigned hid) {
  Xs parts = {logistic(pick_range(pre, 0, 2 * hid)), tanh(pick_range(pre, 2 * hid, 3 * hid))};
  if (N > 0) parts.push_back(logistic(pick_range(pre, 3 * hid, (3 + N) * hid)));
  return concatenate(parts);
}
Expression composed_c(const Expression& g, const Xs& cs, unsigned hid) {
  Xs terms = {cmult(pick_range(g, 0, hid), pick_range(g, 2 * hid, 3 * hid))};
  for (unsigned k = 0; k < cs.size(); ++k) terms.push_back(cmult(pick_range(g, (3 + k) * hid, (4 + k) * hid), cs[k]));
  return terms.size() == 1 ? terms[0] : sum(terms);
}
Expression composed_h(const Expression& c, const Expression& g, unsigned hid) {
  return cmult(pick_range(g, hid, 2 * hid), tanh(c));
}

// Gate values as treelstm_gates gives them: (0, 1), and (-1, 1) for u.
std::vector<float> gate_values(unsigned N, unsigned hid, unsigned bd) {
  std::vector<float> v = test::test_values((3 + N) * hid * bd, 0.1f);
  for (unsigned b = 0; b < bd; ++b)
    for (unsigned r = 0; r < (3 + N) * hid; ++r) {
      float& x = v[b * (3 + N) * hid + r];
      x = (r >= 2 * hid && r < 3 * hid) ? 0.9f * std::tanh(x) : 0.5f + 0.45f * std::tanh(x);
    }
  return v;
}

}  // namespace

// ================================================================ values
BOOST_AUTO_TEST_SUITE(values)

BOOST_AUTO_TEST_CASE(by_hand) {
  // N = 1, h = 1: pre = (0, 1, 0.5, -1)
  //   gates = (sigmoid 0, sigmoid 1, tanh 0.5, sigmoid -1) = (0.5, 0.731058579, 0.462117157, 0.268941421)
  //   c with c_1 = 2: 0.5 * 0.462117157 + 0.268941421 * 2 = 0.768941421
  //   h = 0.731058579 * tanh(0.768941421) = 0.731058579 * 0.646313484 = 0.472493017
  ComputationGraph cg;
  Expression pre = input(cg, Dim({4}), {0.f, 1.f, 0.5f, -1.f});
  Expression g = treelstm_gates(pre, 1);
  BOOST_CHECK(g.dim() == Dim({4}));
  check_close(as_vector(cg.forward(g)), {0.5f, 0.731058579f, 0.462117157f, 0.268941421f}, 1e-6);
  Expression c1 = input(cg, Dim({1}), {2.f});
  Expression c = treelstm_c(g, {c1}, 1);
  check_close(as_vector(cg.forward(c)), {0.768941421f}, 1e-6);
  check_close(as_vector(cg.forward(treelstm_h(c, g))), {0.472493017f}, 1e-6);
  // a leaf: no children, c = i * u
  check_close(as_vector(cg.forward(treelstm_c(g, {}, 1))), {0.231058579f}, 1e-6);
}

BOOST_AUTO_TEST_CASE(against_basic_ops) {
  // N = 3, h = 4, batches of 3 with a broadcast child cell; 0..3 children given.
  const unsigned N = 3, hid = 4, B = 3;
  ComputationGraph cg;
  Expression pre = input(cg, Dim({(3 + N) * hid}, B), test::test_values((3 + N) * hid * B, 0.2f));
  Xs cs = {input(cg, Dim({hid}, B), test::test_values(hid * B, -0.3f)),
           input(cg, Dim({hid}), test::test_values(hid, 0.4f)),
           input(cg, Dim({hid}, B), test::test_values(hid * B, 0.7f))};
  Expression g = treelstm_gates(pre, N), gw = composed_gates(pre, N, hid);
  check_close(as_vector(cg.forward(g)), as_vector(cg.forward(gw)), 1e-6);
  for (unsigned k = 0; k <= N; ++k) {
    BOOST_TEST_CONTEXT(k << " children") {
      Xs ck(cs.begin(), cs.begin() + (k < cs.size() ? k : cs.size()));
      Expression c = treelstm_c(g, ck, N), cw = composed_c(gw, ck, hid);
      BOOST_CHECK(c.dim() == Dim({hid}, B));
      check_close(as_vector(cg.forward(c)), as_vector(cg.forward(cw)), 1e-6);
      check_close(as_vector(cg.forward(treelstm_h(c, g))), as_vector(cg.forward(composed_h(cw, gw, hid))), 1e-6);
    }
  }
  // N = 0 (a gates vector of i, o, u only)
  Expression pre0 = input(cg, Dim({3 * hid}, 2), test::test_values(3 * hid * 2));
  Expression g0 = treelstm_gates(pre0, 0);
  check_close(as_vector(cg.forward(treelstm_h(treelstm_c(g0, {}, 0), g0))),
              as_vector(cg.forward(
                  composed_h(composed_c(composed_gates(pre0, 0, hid), {}, hid), composed_gates(pre0, 0, hid), hid))),
              1e-6);
}

BOOST_AUTO_TEST_CASE(gates_affine_against_unfused) {
  // treelstm_gates_affine(args) = treelstm_gates(affine_transform(args)): a bias of
  // one column (added by the activations), a batched bias (broadcast first), only
  // a bias, shared and batched weights and operands, N = 0..2.
  const unsigned hid = 3;
  for (unsigned N : {0u, 1u, 2u}) {
    BOOST_TEST_CONTEXT("N " << N) {
      const unsigned rows = (3 + N) * hid, B = 3;
      ComputationGraph cg;
      Expression b1 = input(cg, Dim({rows}), test::test_values(rows, 0.1f));
      Expression bB = input(cg, Dim({rows}, B), test::test_values(rows * B, -0.2f));
      Expression W = input(cg, Dim({rows, 4}), test::test_values(rows * 4, 0.3f));
      Expression WB = input(cg, Dim({rows, 4}, B), test::test_values(rows * 4 * B, -0.1f));
      Expression U = input(cg, Dim({rows, hid}), test::test_values(rows * hid, 0.05f));
      Expression x = input(cg, Dim({4}, B), test::test_values(4 * B, 0.7f));
      Expression x1 = input(cg, Dim({4}), test::test_values(4, -0.4f));
      Expression h = input(cg, Dim({hid}, B), test::test_values(hid * B, 0.2f));
      for (const Xs& args :
           {Xs{b1, W, x, U, h}, Xs{bB, W, x, U, h}, Xs{b1, W, x1}, Xs{b1, WB, x1, U, h}, Xs{bB}, Xs{b1, U, h}}) {
        Expression fused = treelstm_gates_affine(args, N);
        Expression unfused = treelstm_gates(affine_transform(args), N);
        BOOST_CHECK(fused.dim() == unfused.dim());
        check_close(as_vector(cg.forward(fused)), as_vector(cg.forward(unfused)), 1e-6);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(saturation) {
  // Very large pre-activations give exact 0 / 1 / -1 and finite gradients.
  ComputationGraph cg;
  Expression pre = input(cg, Dim({5}), {200.f, -200.f, 40.f, -200.f, 200.f});
  Expression g = treelstm_gates(pre, 2);
  check_close(as_vector(cg.forward(g)), {1.f, 0.f, 1.f, 0.f, 1.f}, 0.0);
  Expression c1 = input(cg, Dim({1}), {3.f}), c2 = input(cg, Dim({1}), {-5.f});
  Expression h = treelstm_h(treelstm_c(g, {c1, c2}, 2), g);  // c = 1 + 0 * 3 + 1 * -5 = -4, o = 0
  check_close(as_vector(cg.forward(h)), {0.f}, 0.0);
  Expression loss = sum_elems(h);
  cg.backward(loss, true);
  for (Expression e : {pre, c1, c2})
    for (float v : as_vector(cg.get_gradient(e))) BOOST_CHECK(std::isfinite(v));
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ gradient checks
BOOST_AUTO_TEST_SUITE(gradients)

BOOST_AUTO_TEST_CASE(gates) {
  ParameterCollection none;
  for (unsigned N : {0u, 1u, 2u, 3u}) {
    BOOST_TEST_CONTEXT("N " << N) {
      grad_check(none, {{Dim({(3 + N) * 2}, 2), test::test_values((3 + N) * 4, 0.1f)}},
                 [N](ComputationGraph&, const Xs& xs) { return treelstm_gates(xs[0], N); });
    }
  }
  grad_check(none, {{Dim({5 * 3}), test::test_values(15, -0.2f)}},
             [](ComputationGraph&, const Xs& xs) { return treelstm_gates(xs[0], 2); });
}

BOOST_AUTO_TEST_CASE(gates_affine) {
  // Every argument: parameters shared by a batch of 2, operands batched or not, a
  // batched bias; N = 0, 1, 2.
  for (unsigned N : {0u, 1u, 2u}) {
    BOOST_TEST_CONTEXT("N " << N) {
      const unsigned hid = 2, rows = (3 + N) * hid;
      ParameterCollection m;
      Parameter W = m.add_parameters({rows, 3}), U = m.add_parameters({rows, hid}), b = m.add_parameters({rows});
      grad_check(
          m, {{Dim({3}, 2), test::test_values(6, 0.2f)}, {Dim({hid}), test::test_values(hid, -0.5f)}},
          [&](ComputationGraph& cg, const Xs& xs) {
            return treelstm_gates_affine({parameter(cg, b), parameter(cg, W), xs[0], parameter(cg, U), xs[1]}, N);
          });
    }
  }
  ParameterCollection none;
  grad_check(none,
             {{Dim({5 * 2}, 2), test::test_values(20, 0.1f)},
              {Dim({10, 2}), test::test_values(20, -0.2f)},
              {Dim({2}, 2), test::test_values(4, 0.3f)}},
             [](ComputationGraph&, const Xs& xs) {
               return treelstm_gates_affine({xs[0], xs[1], xs[2]}, 2);
             });
  grad_check(none, {{Dim({5 * 2}, 2), test::test_values(20, 0.1f)}},
             [](ComputationGraph&, const Xs& xs) { return treelstm_gates_affine({xs[0]}, 2); });
}

BOOST_AUTO_TEST_CASE(cell_batched) {
  ParameterCollection none;
  const unsigned N = 2, hid = 2;
  // 0, 1 and 2 children, everything with a batch of 2
  for (unsigned k = 0; k <= N; ++k) {
    BOOST_TEST_CONTEXT(k << " children") {
      std::vector<test::TestInput> in = {{Dim({(3 + N) * hid}, 2), gate_values(N, hid, 2)}};
      for (unsigned j = 0; j < k; ++j) in.push_back({Dim({hid}, 2), test::test_values(2 * hid, 0.3f * j - 0.2f)});
      grad_check(none, in, [k](ComputationGraph&, const Xs& xs) {
        return treelstm_c(xs[0], Xs(xs.begin() + 1, xs.begin() + 1 + k), N);
      });
    }
  }
}

BOOST_AUTO_TEST_CASE(cell_broadcast) {
  ParameterCollection none;
  const unsigned N = 2, hid = 2;
  // c_1 with a batch of 1 shared by a batch of 3 (an initial state), c_2 batched
  grad_check(none,
             {{Dim({(3 + N) * hid}, 3), gate_values(N, hid, 3)},
              {Dim({hid}), {0.5f, -1.2f}},
              {Dim({hid}, 3), test::test_values(3 * hid, 0.2f)}},
             [](ComputationGraph&, const Xs& xs) {
               return treelstm_c(xs[0], {xs[1], xs[2]}, N);
             });
  // gates with a batch of 1 shared by batched cells
  grad_check(none,
             {{Dim({(3 + N) * hid}), gate_values(N, hid, 1)},
              {Dim({hid}, 2), test::test_values(2 * hid, -0.1f)},
              {Dim({hid}, 2), test::test_values(2 * hid, 0.4f)}},
             [](ComputationGraph&, const Xs& xs) {
               return treelstm_c(xs[0], {xs[1], xs[2]}, N);
             });
  // one child of three positions, hidden size 1, everything but the gates broadcast
  grad_check(none, {{Dim({6}, 4), gate_values(3, 1, 4)}, {Dim({1}), {0.7f}}},
             [](ComputationGraph&, const Xs& xs) { return treelstm_c(xs[0], {xs[1]}, 3); });
}

BOOST_AUTO_TEST_CASE(output) {
  ParameterCollection none;
  const unsigned N = 2, hid = 2;
  grad_check(none, {{Dim({hid}, 2), {0.5f, -1.2f, 2.f, 0.f}}, {Dim({(3 + N) * hid}, 2), gate_values(N, hid, 2)}},
             [](ComputationGraph&, const Xs& xs) { return treelstm_h(xs[0], xs[1]); });
  grad_check(none, {{Dim({hid}), {0.5f, -1.2f}}, {Dim({(3 + N) * hid}, 2), gate_values(N, hid, 2)}},
             [](ComputationGraph&, const Xs& xs) { return treelstm_h(xs[0], xs[1]); });
  grad_check(none, {{Dim({hid}, 3), test::test_values(3 * hid)}, {Dim({(3 + N) * hid}), gate_values(N, hid, 1)}},
             [](ComputationGraph&, const Xs& xs) { return treelstm_h(xs[0], xs[1]); });
  // N = 0
  grad_check(none, {{Dim({3}, 2), test::test_values(6)}, {Dim({9}, 2), gate_values(0, 3, 2)}},
             [](ComputationGraph&, const Xs& xs) { return treelstm_h(xs[0], xs[1]); });
}

BOOST_AUTO_TEST_CASE(whole_step_through_all_three) {
  // pre -> gates -> c (two children, one broadcast) -> h, the gradient reaching
  // pre and both cells through two uses of the gates.
  ParameterCollection none;
  const unsigned N = 2, hid = 3;
  grad_check(none,
             {{Dim({(3 + N) * hid}, 2), test::test_values((3 + N) * hid * 2, 0.1f)},
              {Dim({hid}, 2), test::test_values(2 * hid, -0.3f)},
              {Dim({hid}), test::test_values(hid, 0.5f)}},
             [](ComputationGraph&, const Xs& xs) {
               Expression g = treelstm_gates(xs[0], N);
               Expression c = treelstm_c(g, {xs[1], xs[2]}, N);
               return concatenate({treelstm_h(c, g), c});
             });
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ errors
BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(dim_errors_name_op_and_dims) {
  ComputationGraph cg;
  Expression pre7 = input(cg, Dim({7}), test::test_values(7));
  check_throws_with<dim_error>([&] { treelstm_gates(pre7, 2); },
                               {"treelstm_gates", "pre {7}", "multiple of 5", "N = 2"});
  Expression prem = input(cg, Dim({5, 2}), test::test_values(10));
  check_throws_with<dim_error>([&] { treelstm_gates(prem, 2); }, {"treelstm_gates", "pre {5,2}", "column vector"});
  Expression b7 = input(cg, Dim({7}), test::test_values(7)), w73 = input(cg, Dim({7, 3}), test::test_values(21));
  Expression x3 = input(cg, Dim({3}), test::test_values(3)), x4 = input(cg, Dim({4}), test::test_values(4));
  check_throws_with<dim_error>(
      [&] {
        treelstm_gates_affine({b7, w73, x3}, 2);
      },
      {"treelstm_gates_affine", "{7}", "multiple of 5", "N = 2"});
  check_throws_with<dim_error>(
      [&] {
        treelstm_gates_affine({b7, w73, x4}, 2);
      },
      {"treelstm_gates_affine", "W {7,3}", "x {4}"});
  check_throws_with<dim_error>(
      [&] {
        treelstm_gates_affine({b7, w73}, 2);
      },
      {"treelstm_gates_affine", "odd number of arguments", "got 2"});
  Expression x32 = input(cg, Dim({3, 2}), test::test_values(6));
  check_throws_with<dim_error>(
      [&] {
        treelstm_gates_affine({input(cg, Dim({7, 2}), test::test_values(14)), w73, x32}, 1);
      },
      {"treelstm_gates_affine", "{7,2}", "column vector"});
  Expression g = input(cg, Dim({10}), gate_values(2, 2, 1));
  Expression c2 = input(cg, Dim({2}), {1.f, 2.f}), c3 = input(cg, Dim({3}), test::test_values(3));
  check_throws_with<dim_error>(
      [&] {
        treelstm_c(g, {c2, c2, c2}, 2);
      },
      {"treelstm_c", "at most N = 2", "got 4 arguments"});
  check_throws_with<dim_error>([&] { treelstm_c(g, {c2, c3}, 2); }, {"treelstm_c", "c_2 {3}", "{2}", "gates {10}"});
  check_throws_with<dim_error>([&] { treelstm_c(g, {c2}, 3); }, {"treelstm_c", "gates {10}", "multiple of 6", "N = 3"});
  check_throws_with<dim_error>([&] { treelstm_c(prem, {}, 2); }, {"treelstm_c", "gates {5,2}"});
  Expression gb2 = input(cg, Dim({10}, 2), gate_values(2, 2, 2));
  Expression c2b3 = input(cg, Dim({2}, 3), test::test_values(6));
  check_throws_with<dim_error>([&] { treelstm_c(gb2, {c2, c2b3}, 2); }, {"treelstm_c", "gates {10X2}", "batch"});
  Expression c2b2 = input(cg, Dim({2}, 2), test::test_values(4));
  check_throws_with<dim_error>([&] { treelstm_c(g, {c2b2, c2b3}, 2); }, {"treelstm_c", "c_1 {2X2}", "1 or 3"});
  // h: gates must hold (3 + N) blocks of c's size
  Expression g5 = input(cg, Dim({5}), test::test_values(5));
  check_throws_with<dim_error>([&] { treelstm_h(c2, g5); }, {"treelstm_h", "gates {5}", "c {2}"});
  Expression g4 = input(cg, Dim({4}), test::test_values(4));
  check_throws_with<dim_error>([&] { treelstm_h(c2, g4); }, {"treelstm_h", "gates {4}", "(3 + N) * 2"});
  check_throws_with<dim_error>([&] { treelstm_h(prem, g); }, {"treelstm_h", "c {5,2}", "column vector"});
  Expression g10b3 = input(cg, Dim({10}, 3), gate_values(2, 2, 3));
  check_throws_with<dim_error>([&] { treelstm_h(c2b2, g10b3); }, {"treelstm_h", "c {2X2}", "gates {10X3}"});
  check_throws_with<std::invalid_argument>([&] { treelstm_h(c2, Expression()); }, {"treelstm_h", "empty"});
}

BOOST_AUTO_TEST_CASE(op_table_rows) {
  test::check_elementwise_rows({{OpKind::TreeLSTMGates, "treelstm_gates"},
                                {OpKind::TreeLSTMGatesAffine, "treelstm_gates_affine"},
                                {OpKind::TreeLSTMC, "treelstm_c"},
                                {OpKind::TreeLSTMH, "treelstm_h"}});
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ NaryTreeLSTMBuilder
BOOST_AUTO_TEST_SUITE(builder)

// A tree with every kind of node: leaves 0, 1, 2, 3 with input; 4 = (0, 1) and
// 6 = (4, 5) without input; 5 = (2) and 7 = (6, 3) with input (7 is the root).
const std::vector<std::vector<int>> kChildren = {{}, {}, {}, {}, {0, 1}, {2}, {4, 5}, {6, 3}};
const std::vector<bool> kHasInput = {true, true, true, true, false, true, false, true};

struct Model {
  static constexpr unsigned N = 2, kLayers = 2, kIn = 3, kHid = 3;
  ParameterCollection m;
  NaryTreeLSTMBuilder t{N, kLayers, kIn, kHid, m};
  Model() {
    // Non-zero biases (the builder starts them at 0) and modest weights.
    for (auto& layer : t.params)
      for (size_t j = 0; j < layer.size(); ++j) {
        std::vector<float> v = test::test_values(layer[j].get_storage().size(), 0.05f * j - 0.1f);
        for (float& x : v) x *= 0.6f;
        layer[j].set_value(v);
      }
  }
};

struct Run {
  std::vector<float> values;  // loss, then every node's top output and cell
  std::vector<float> grads;   // parameters, then inputs
  unsigned fused_nodes = 0, logistic_nodes = 0, affine_nodes = 0;
  AutobatchStats stats;
};

// `trees` copies of the tree (different inputs) in one graph; with `by_hand` the
// step is built from basic ops here (the old path), else by the builder.  With
// `init`, the leaves read an initial state (h_0, c_0 per layer) of a batch of 1.
Run run_trees(Model& md, unsigned trees, unsigned batch, bool by_hand, int autobatch, bool init) {
  const unsigned N = Model::N, L = Model::kLayers, in_dim = Model::kIn, hid = Model::kHid;
  NaryTreeLSTMBuilder& t = md.t;
  ComputationGraph cg;
  cg.set_autobatch(autobatch);
  t.new_graph(cg);
  // The hand-built step reads the same parameters, with the forget gates' +1.
  std::vector<float> fb((3 + N) * hid, 0.f);
  for (size_t k = 3 * hid; k < fb.size(); ++k) fb[k] = 1.f;
  std::vector<Xs> pv(L);
  for (unsigned i = 0; i < L; ++i) {
    for (auto& p : t.params[i]) pv[i].push_back(parameter(cg, p));
    pv[i][1] = pv[i][1] + input(cg, Dim({(3 + N) * hid}), fb);
  }
  Xs init_state;
  for (unsigned k = 0; k < 2 * L; ++k)
    init_state.push_back(input(cg, Dim({hid}), test::test_values(hid, 0.2f * k - 0.3f)));
  Xs inputs, losses, outs;
  for (unsigned tr = 0; tr < trees; ++tr) {
    const size_t n = kChildren.size();
    std::vector<Xs> hs(n, Xs(L)), cs(n, Xs(L));
    if (!by_hand) {
      if (init)
        t.start_new_sequence(init_state);
      else
        t.start_new_sequence();
    }
    for (size_t k = 0; k < n; ++k) {
      Expression x;
      if (kHasInput[k]) {
        x = input(cg, Dim({in_dim}, batch), test::test_values(in_dim * batch, 0.1f * k - 0.4f + 0.23f * tr));
        inputs.push_back(x);
      }
      if (!by_hand) {
        t.add_input(static_cast<int>(k), kChildren[k], x);
        Xs h = t.get_h(RNNPointer(static_cast<int>(k))), s = t.get_s(RNNPointer(static_cast<int>(k)));
        outs.push_back(h.back());
        outs.push_back(s[L - 1]);
        continue;
      }
      const bool use_init = kChildren[k].empty() && init;
      Expression in = x;
      for (unsigned i = 0; i < L; ++i) {
        Xs args = {pv[i][1]};
        if (i > 0 || kHasInput[k]) args.insert(args.end(), {pv[i][0], in});
        Xs ccs;
        if (use_init) {
          args.insert(args.end(), {pv[i][2], init_state[L + i]});
          ccs.push_back(init_state[i]);
        }
        for (size_t l = 0; l < kChildren[k].size(); ++l) {
          args.insert(args.end(), {pv[i][2 + l], hs[kChildren[k][l]][i]});
          ccs.push_back(cs[kChildren[k][l]][i]);
        }
        Expression pre = affine_transform(args);
        Expression gi = logistic(pick_range(pre, 0, hid));
        Expression go = logistic(pick_range(pre, hid, 2 * hid));
        Expression gu = tanh(pick_range(pre, 2 * hid, 3 * hid));
        Xs terms = {cmult(gi, gu)};
        for (unsigned l = 0; l < ccs.size(); ++l)
          terms.push_back(cmult(logistic(pick_range(pre, (3 + l) * hid, (4 + l) * hid)), ccs[l]));
        cs[k][i] = terms.size() == 1 ? terms[0] : sum(terms);
        in = hs[k][i] = cmult(go, tanh(cs[k][i]));
      }
      outs.push_back(hs[k][L - 1]);
      outs.push_back(cs[k][L - 1]);
    }
    losses.push_back(test::weighted_reduce(cg, outs[outs.size() - 2]));
  }
  Run r;
  r.values = test::loss_and_values(cg, losses, outs);
  for (auto& p : md.m.parameters_list()) {
    std::vector<float> g = as_vector(p->g);
    r.grads.insert(r.grads.end(), g.begin(), g.end());
  }
  md.m.reset_gradient();
  for (Expression e : inputs) {
    std::vector<float> g = as_vector(cg.get_gradient(e));
    r.grads.insert(r.grads.end(), g.begin(), g.end());
  }
  for (Expression e : init_state) {
    if (!init) break;  // (not part of the loss otherwise)
    std::vector<float> g = as_vector(cg.get_gradient(e));
    r.grads.insert(r.grads.end(), g.begin(), g.end());
  }
  for (VariableIndex i = 0; i < cg.size(); ++i) {
    OpKind k = cg.node(i).op;
    r.fused_nodes += k == OpKind::TreeLSTMGatesAffine || k == OpKind::TreeLSTMC || k == OpKind::TreeLSTMH;
    r.affine_nodes += k == OpKind::AffineTransform;
    r.logistic_nodes += k == OpKind::Logistic;
  }
  r.stats = cg.autobatch_stats();
  return r;
}

BOOST_AUTO_TEST_CASE(fused_equals_hand_built) {
  Model md;
  for (bool init : {false, true}) {
    for (unsigned batch : {1u, 2u}) {
      BOOST_TEST_CONTEXT("batch " << batch << (init ? " initial state" : "")) {
        Run fused = run_trees(md, 1, batch, false, 0, init);
        Run hand = run_trees(md, 1, batch, true, 0, init);
        BOOST_CHECK_EQUAL(fused.fused_nodes, 3u * kChildren.size() * Model::kLayers);
        BOOST_CHECK_EQUAL(fused.logistic_nodes, 0u);
        BOOST_CHECK_EQUAL(fused.affine_nodes, 0u);
        BOOST_CHECK_GT(hand.logistic_nodes, 0u);
        check_close(fused.values, hand.values, 1e-5);
        check_close(fused.grads, hand.grads, 1e-5);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(fused_gradients) {
  // Central differences through the builder on the fused ops, initial state included.
  Model md;
  std::vector<test::TestInput> in;
  for (size_t k = 0; k < kChildren.size(); ++k)
    if (kHasInput[k]) in.push_back({Dim({Model::kIn}, 2), test::test_values(2 * Model::kIn, 0.1f * k - 0.3f)});
  const size_t num_x = in.size();
  for (unsigned k = 0; k < 2 * Model::kLayers; ++k)
    in.push_back({Dim({Model::kHid}), test::test_values(Model::kHid, 0.2f * k)});
  grad_check(md.m, in, [&](ComputationGraph& cg, const Xs& xs) {
    md.t.new_graph(cg);
    md.t.start_new_sequence(Xs(xs.begin() + num_x, xs.end()));
    Xs outs;
    size_t next = 0;
    for (size_t k = 0; k < kChildren.size(); ++k)
      outs.push_back(md.t.add_input(static_cast<int>(k), kChildren[k], kHasInput[k] ? xs[next++] : Expression()));
    return concatenate(outs);
  });
}

BOOST_AUTO_TEST_CASE(autobatch_equals_plain) {
  // Three trees in one graph: every strategy gives the plain values and gradients,
  // and the fused nodes of different tree nodes run together.
  Model md;
  for (bool init : {false, true}) {
    Run plain = run_trees(md, 3, 1, false, 0, init);
    Run hand = run_trees(md, 3, 1, true, 0, init);
    check_close(plain.values, hand.values, 1e-5);
    check_close(plain.grads, hand.grads, 1e-5);
    for (int strategy : {1, 2}) {
      BOOST_TEST_CONTEXT("strategy " << strategy << (init ? " initial state" : "")) {
        Run batched = run_trees(md, 3, 1, false, strategy, init);
        check_close(batched.values, plain.values, 1e-5);
        check_close(batched.grads, plain.grads, 1e-5);
        BOOST_CHECK_GT(batched.stats.batched_groups, 0u);
        BOOST_CHECK_LT(batched.stats.kernels, batched.stats.nodes);
      }
    }
  }
}


BOOST_AUTO_TEST_CASE(other_devices_keep_the_basic_ops) {
  // The fused ops have CPU kernels only: with the parameters (and so the whole
  // step) on another device, the builder builds the basic ops it always did.
  // Host memory under a device that says it is a GPU (never destroyed).
  static auto* gpu = new test::HostMemoryDevice(DeviceType::GPU, 7, "FAKEGPU:7");
  Device* saved = default_device();
  set_default_device(gpu);
  try {
    ParameterCollection m;
    NaryTreeLSTMBuilder t(2, 1, 3, 2, m);
    BOOST_CHECK(t.params[0][0].get_storage().device == gpu);
    ComputationGraph cg;
    t.new_graph(cg);
    t.start_new_sequence();
    Expression x = input(cg, Dim({3}), test::test_values(3));
    t.add_input(0, {}, x);
    t.add_input(1, {}, x);
    t.add_input(2, {0, 1}, Expression());
    unsigned fused = 0, logistic_nodes = 0;
    for (VariableIndex i = 0; i < cg.size(); ++i) {
      const Node& n = cg.node(i);
      BOOST_CHECK(n.value.device == gpu);
      fused += n.op == OpKind::TreeLSTMGates || n.op == OpKind::TreeLSTMGatesAffine || n.op == OpKind::TreeLSTMC ||
               n.op == OpKind::TreeLSTMH;
      logistic_nodes += n.op == OpKind::Logistic;
    }
    BOOST_CHECK_EQUAL(fused, 0u);
    BOOST_CHECK_EQUAL(logistic_nodes, 2u + 2u + 4u);  // i, o per leaf; i, o, f_1, f_2 at the root
  } catch (...) {
    set_default_device(saved);
    throw;
  }
  set_default_device(saved);
}

BOOST_AUTO_TEST_SUITE_END()
