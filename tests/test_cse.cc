#define BOOST_TEST_MODULE cse
// Common subexpression elimination (exec/cse.h): equal pure expressions are one
// node; everything else (inputs, random ops, indices read through a pointer,
// different parameters or trainability) stays apart; values and parameter
// gradients are those of the graph without merging.
#include <random>

#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/treelstm.h"
#include "test_utils.h"

using namespace dynet_lite;

namespace {

struct CseModel {
  ParameterCollection pc;
  LookupParameter emb = pc.add_lookup_parameters(10, {4});
  Parameter w = pc.add_parameters({4, 4});
  Parameter b = pc.add_parameters({4});
};

}  // namespace

BOOST_AUTO_TEST_CASE(on_while_autobatching_unless_set) {
  ComputationGraph cg;
  cg.set_autobatch(0);
  BOOST_CHECK(!cg.cse());
  cg.set_autobatch(1);
  BOOST_CHECK(cg.cse());
  cg.set_cse(0);
  BOOST_CHECK(!cg.cse());
  cg.set_autobatch(0);
  cg.set_cse(1);
  BOOST_CHECK(cg.cse());
}

BOOST_AUTO_TEST_CASE(equal_expressions_are_one_node) {
  CseModel m;
  ComputationGraph cg;
  cg.set_cse(1);
  Expression W = parameter(cg, m.w), b = parameter(cg, m.b);
  Expression x1 = lookup(cg, m.emb, 3), x2 = lookup(cg, m.emb, 3);
  BOOST_CHECK_NE(x1.i, x2.i);                               // leaves stay apart...
  Expression h1 = tanh(W * x1 + b), h2 = tanh(W * x2 + b);  // ...what is built on them merges, chains too
  BOOST_CHECK_EQUAL(h1.i, h2.i);
  const VariableIndex size = cg.size();
  Expression W2 = parameter(cg, m.w);  // another node, the same argument
  BOOST_CHECK_EQUAL((W2 * x1).i, (W * x2).i);
  Expression z1 = zeros(cg, Dim({4})), z2 = zeros(cg, Dim({4}));
  BOOST_CHECK_EQUAL((x1 + z1).i, (x2 + z2).i);
  BOOST_CHECK_EQUAL(cg.size(), size + 4);  // W2, z1, z2, x1 + z1
  BOOST_CHECK_EQUAL(cg.autobatch_stats().cse_merged, 6u);
  // Equal up to something that matters: not merged.
  BOOST_CHECK_NE(tanh(lookup(cg, m.emb, 4)).i, tanh(x1).i);                     // another row
  BOOST_CHECK_NE(tanh(const_lookup(cg, m.emb, 3)).i, tanh(x1).i);               // no gradient
  BOOST_CHECK_NE(pick_range(h1, 0, 2).i, pick_range(h1, 1, 3).i);               // other parameters
  BOOST_CHECK_NE(tanh(zeros(cg, Dim({4}))).i, tanh(zeros(cg, Dim({2, 2}))).i);  // another shape
  BOOST_CHECK_NE(tanh(zeros(cg, Dim({4}))).i, tanh(ones(cg, Dim({4}))).i);
  BOOST_CHECK_NE((x1 - h1).i, (h1 - x1).i);  // argument order
  BOOST_CHECK_NE(tanh(x1).i, logistic(x1).i);
}

BOOST_AUTO_TEST_CASE(inputs_random_ops_and_pointers_are_never_merged) {
  CseModel m;
  ComputationGraph cg;
  cg.set_cse(1);
  std::vector<float> v = {1, 2, 3, 4};
  BOOST_CHECK_NE(tanh(input(cg, Dim({4}), v)).i, tanh(input(cg, Dim({4}), v)).i);
  BOOST_CHECK_NE(tanh(input(cg, Dim({4}), &v)).i, tanh(input(cg, Dim({4}), &v)).i);
  Expression x = lookup(cg, m.emb, 1);
  BOOST_CHECK_NE(dropout(x, 0.5f).i, dropout(x, 0.5f).i);
  BOOST_CHECK_NE(tanh(random_normal(cg, Dim({4}))).i, tanh(random_normal(cg, Dim({4}))).i);
  // An index read at forward time may change between the two reads.
  unsigned row = 2;
  Expression a = lookup(cg, m.emb, &row);
  cg.incremental_forward(a);
  row = 5;
  Expression c = lookup(cg, m.emb, &row);
  BOOST_CHECK_NE(tanh(a).i, tanh(c).i);
  test::check_close(as_vector(cg.incremental_forward(c)), as_vector(m.emb.get_storage().values[5]));
  BOOST_CHECK_NE(pickneglogsoftmax(x, &row).i, pickneglogsoftmax(x, &row).i);
  BOOST_CHECK_EQUAL(cg.autobatch_stats().cse_merged, 0u);
}

// The same loss with and without merging: equal values and parameter gradients.
BOOST_AUTO_TEST_CASE(values_and_parameter_gradients_do_not_change) {
  CseModel m;
  std::mt19937 gen(3);
  std::vector<std::vector<unsigned>> sentences(6);
  for (auto& s : sentences) {
    s.resize(2 + gen() % 4);
    for (auto& w : s) w = gen() % 3;  // three words: many repeats, many equal prefixes
  }
  auto run = [&](int cse, std::vector<float>* grads) {
    ComputationGraph cg;
    cg.set_cse(cse);
    m.pc.reset_gradient();
    Expression W = parameter(cg, m.w), b = parameter(cg, m.b);
    std::vector<Expression> losses;
    for (const auto& s : sentences) {
      Expression h = zeros(cg, Dim({4}));
      for (unsigned w : s) h = tanh(W * h + lookup(cg, m.emb, w) + b);
      losses.push_back(sum_elems(square(h - 0.5f)));
    }
    Expression loss = sum(losses);
    const float value = as_scalar(cg.forward(loss));
    cg.backward(loss);
    grads->clear();
    for (auto& p : m.pc.parameters_list()) grads->insert(grads->end(), p->g.v, p->g.v + p->g.d.size());
    std::vector<float> e = test::table_gradient(m.emb.get_storage());
    grads->insert(grads->end(), e.begin(), e.end());
    return std::make_pair(value, cg.autobatch_stats().cse_merged);
  };
  std::vector<float> plain_grads, merged_grads;
  auto plain = run(0, &plain_grads);
  auto merged = run(1, &merged_grads);
  BOOST_CHECK_EQUAL(plain.second, 0u);
  BOOST_CHECK_GT(merged.second, 10u);
  BOOST_CHECK_CLOSE(plain.first, merged.first, 1e-4);
  test::check_close(merged_grads, plain_grads, 1e-5);
}

BOOST_AUTO_TEST_CASE(a_merged_node_refuses_to_report_its_gradient) {
  CseModel m;
  ComputationGraph cg;
  cg.set_cse(1);
  Expression x = lookup(cg, m.emb, 1), y = lookup(cg, m.emb, 1), z = lookup(cg, m.emb, 2);
  Expression loss = sum_elems(tanh(x) + tanh(y) + z);  // tanh(y) is tanh(x)
  cg.forward(loss);
  cg.backward(loss);
  test::check_throws_with<std::runtime_error>([&] { cg.get_gradient(y); },
                                              {"get_gradient: node", "(lookup) stands for several equal expressions"});
  test::check_throws_with<std::runtime_error>([&] { cg.get_gradient(x); }, {"--dynet-cse 0"});
  test::check_throws_with<std::runtime_error>([&] { cg.get_gradient(tanh(x)); }, {"(tanh) stands for"});
  // z was built once: its gradient is its own.
  test::check_close(as_vector(cg.get_gradient(z)), {1, 1, 1, 1});
}

// Nodes reverted away are never returned, and merging goes on after a revert.
BOOST_AUTO_TEST_CASE(revert_forgets_the_nodes_it_drops) {
  CseModel m;
  ComputationGraph cg;
  cg.set_cse(1);
  Expression x = lookup(cg, m.emb, 1);
  cg.checkpoint();
  Expression t = tanh(x);
  BOOST_CHECK_EQUAL(tanh(x).i, t.i);
  cg.revert();
  Expression s = logistic(x);  // takes the slot tanh(x) had
  Expression t2 = tanh(x);
  BOOST_CHECK_NE(t2.i, s.i);
  BOOST_CHECK_EQUAL(tanh(x).i, t2.i);
  test::check_close(as_vector(cg.forward(t2)), as_vector(cg.forward(tanh(lookup(cg, m.emb, 1)))));
  test::check_close(as_vector(cg.forward(s)), as_vector(cg.forward(logistic(lookup(cg, m.emb, 1)))));
}

// Past the table's first size (1,024 slots), and across clear(): the table grows
// and is forgotten in O(1), never returning a node of an earlier graph.
BOOST_AUTO_TEST_CASE(the_table_grows_and_clears) {
  CseModel m;
  ComputationGraph cg;
  cg.set_cse(1);
  for (int round = 0; round < 3; ++round) {
    cg.clear();
    Expression x = lookup(cg, m.emb, static_cast<unsigned>(round));
    std::vector<Expression> first;
    for (int k = 0; k < 3000; ++k) first.push_back(x * (1.f + 0.001f * k));
    const VariableIndex size = cg.size();
    for (int k = 0; k < 3000; ++k) BOOST_REQUIRE_EQUAL((x * (1.f + 0.001f * k)).i, first[k].i);
    BOOST_CHECK_EQUAL(cg.size(), size);
    std::vector<float> want = as_vector(m.emb.get_storage().values[round]);
    for (float& w : want) w *= 3.999f;
    test::check_close(as_vector(cg.forward(first[2999])), want, 1e-5);
  }
}

// A Tree-LSTM over trees that share subtrees: the shared ones are built once,
// and the loss and gradients are those of building every tree in full.
BOOST_AUTO_TEST_CASE(treelstm_shared_subtrees) {
  ParameterCollection pc;
  LookupParameter emb = pc.add_lookup_parameters(5, {3});
  NaryTreeLSTMBuilder builder(2, 1, 3, 4, pc);
  // Three trees over leaves (node, children): ((0 1) 2), ((0 1) (0 1)), (2 (0 1)).
  struct Tree {
    std::vector<int> word;
    std::vector<std::vector<int>> children;
  };
  std::vector<Tree> trees = {{{0, 1, -1, 2, -1}, {{}, {}, {0, 1}, {}, {2, 3}}},
                             {{0, 1, -1, 0, 1, -1, -1}, {{}, {}, {0, 1}, {}, {}, {3, 4}, {2, 5}}},
                             {{2, 0, 1, -1, -1}, {{}, {}, {}, {1, 2}, {0, 3}}}};
  auto run = [&](int cse, std::vector<float>* grads) {
    ComputationGraph cg;
    cg.set_autobatch(1);
    cg.set_cse(cse);
    pc.reset_gradient();
    builder.new_graph(cg);
    std::vector<Expression> roots;
    for (const Tree& t : trees) {
      builder.start_new_sequence();
      builder.set_num_elements(static_cast<int>(t.word.size()));
      Expression h;
      for (size_t k = 0; k < t.word.size(); ++k)
        h = builder.add_input(static_cast<int>(k), t.children[k],
                              t.word[k] < 0 ? Expression() : lookup(cg, emb, static_cast<unsigned>(t.word[k])));
      roots.push_back(sum_elems(h));
    }
    Expression loss = sum(roots);
    const float v = as_scalar(cg.forward(loss));
    cg.backward(loss);
    grads->clear();
    for (auto& p : pc.parameters_list()) grads->insert(grads->end(), p->g.v, p->g.v + p->g.d.size());
    std::vector<float> e = test::table_gradient(emb.get_storage());
    grads->insert(grads->end(), e.begin(), e.end());
    return std::make_pair(v, cg.size());
  };
  std::vector<float> g0, g1;
  auto full = run(0, &g0);
  auto merged = run(1, &g1);
  BOOST_CHECK_CLOSE(full.first, merged.first, 1e-4);
  test::check_close(g1, g0, 1e-5);
  // 10 leaves over 3 words and 7 inner nodes of which 4 differ: 7 leaves of 3
  // graph nodes each (gates, cell, output; the lookups stay) and 3 inner nodes
  // of 3 are copies.  (The lookups' parameters hold no padding that could tell
  // copies apart.)
  BOOST_CHECK_EQUAL(merged.second, full.second - (7 * 3 + 3 * 3));
}

BOOST_AUTO_TEST_CASE(the_flag) {
  const char* args[] = {"prog", "--dynet-cse", "0", nullptr};
  int argc = 3;
  char** argv = const_cast<char**>(args);
  DynetParams p = extract_dynet_params(argc, argv);
  BOOST_CHECK_EQUAL(p.cse, 0);
  BOOST_CHECK_EQUAL(argc, 1);
  const char* bad[] = {"prog", "--dynet-cse=2", nullptr};
  argc = 2;
  argv = const_cast<char**>(bad);
  test::check_throws_with<std::invalid_argument>([&] { extract_dynet_params(argc, argv); },
                                                 {"--dynet-cse expects an integer from 0 to 1, got '2'"});
}
