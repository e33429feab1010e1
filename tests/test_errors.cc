#define BOOST_TEST_MODULE errors
#include "test_utils.h"

#include <cmath>
#include <limits>
#include <memory>

#include "dynet_lite/init.h"
#include "dynet_lite/lstm.h"

using dl::ComputationGraph;
using dl::Dim;
using dl::Expression;

// Every user mistake in the core is an exception whose message names the
// operation and the offending shapes / index / flag.

BOOST_AUTO_TEST_SUITE(shapes)

BOOST_AUTO_TEST_CASE(binary_op_names_itself_and_both_shapes) {
  ComputationGraph cg;
  Expression a = dl::input(cg, Dim({2, 3}), test::test_values(6));
  Expression b = dl::input(cg, Dim({4, 3}), test::test_values(12));
  test::check_throws_with<dl::dim_error>([&] { a + b; }, {"add", "{2,3}", "{4,3}"});
  test::check_throws_with<dl::dim_error>([&] { dl::cmult(a, b); }, {"cmult", "{2,3}", "{4,3}"});
  // The graph is unchanged by a rejected node.
  BOOST_CHECK_EQUAL(cg.size(), 2u);
}

BOOST_AUTO_TEST_CASE(batch_sizes_must_agree_or_be_one) {
  ComputationGraph cg;
  Expression a = dl::input(cg, Dim({2}, 3), test::test_values(6));
  Expression b = dl::input(cg, Dim({2}, 4), test::test_values(8));
  test::check_throws_with<dl::dim_error>([&] { a - b; }, {"subtract", "{2X3}", "{2X4}"});
}

BOOST_AUTO_TEST_CASE(matrix_product_names_inner_dims) {
  ComputationGraph cg;
  Expression W = dl::input(cg, Dim({3, 4}), test::test_values(12));
  Expression x = dl::input(cg, Dim({5}), test::test_values(5));
  test::check_throws_with<dl::dim_error>([&] { W* x; }, {"{3,4}", "{5}", "4", "5"});
}

BOOST_AUTO_TEST_CASE(input_size_mismatch) {
  ComputationGraph cg;
  test::check_throws_with<dl::dim_error>([&] { dl::input(cg, Dim({2, 2}), {1.f, 2.f, 3.f}); },
                                         {"input", "3", "{2,2}"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(indices)

BOOST_AUTO_TEST_CASE(lookup_index_out_of_range) {
  dl::ParameterCollection m;
  dl::LookupParameter E = m.add_lookup_parameters(10, {3}, "emb");
  ComputationGraph cg;
  test::check_throws_with<dl::index_error>([&] { dl::as_vector(dl::lookup(cg, E, 10).value()); },
                                           {"lookup", "10", "emb", "10 rows"});
  ComputationGraph cg2;
  test::check_throws_with<dl::index_error>(
      [&] { dl::as_vector(dl::lookup(cg2, E, std::vector<unsigned>{1, 2, 42}).value()); }, {"lookup", "42"});
}

BOOST_AUTO_TEST_CASE(node_index_out_of_range) {
  ComputationGraph cg;
  dl::input(cg, 1.f);
  test::check_throws_with<dl::index_error>([&] { cg.forward(dl::VariableIndex(7)); }, {"forward", "7", "1 nodes"});
  test::check_throws_with<dl::index_error>([&] { cg.get_dimension(3); }, {"get_dimension", "3"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(graph_use)

BOOST_AUTO_TEST_CASE(backward_from_a_non_scalar) {
  dl::ParameterCollection m;
  dl::Parameter p = m.add_parameters({3});
  ComputationGraph cg;
  Expression y = dl::tanh(dl::parameter(cg, p));
  test::check_throws_with<dl::dim_error>([&] { cg.backward(y); }, {"backward", "scalar", "{3}", "tanh"});
  // A batch of scalars is fine (one loss per batch element).
  Expression batched = dl::sum_elems(dl::cmult(y, dl::input(cg, Dim({3}, 2), test::test_values(6))));
  BOOST_CHECK_NO_THROW(cg.backward(batched));
}

BOOST_AUTO_TEST_CASE(expression_from_a_cleared_graph) {
  ComputationGraph cg;
  Expression x = dl::input(cg, Dim({2}), {1.f, 2.f});
  cg.clear();
  BOOST_CHECK(x.is_stale());
  dl::input(cg, Dim({2}), {3.f, 4.f});  // node 0 exists again, but it is not x
  test::check_throws_with<std::invalid_argument>([&] { dl::tanh(x); }, {"tanh", "stale"});
  test::check_throws_with<std::runtime_error>([&] { x.value(); }, {"stale"});
  test::check_throws_with<std::runtime_error>([&] { x.dim(); }, {"stale"});
  test::check_throws_with<std::invalid_argument>([&] { cg.backward(x); }, {"backward", "stale"});
}

// Once its graph is destroyed an expression is stale, and every use is an
// error: decided by the registry of live graphs, without reading the freed graph
// (under AddressSanitizer a read would be reported).
BOOST_AUTO_TEST_CASE(expression_from_a_destroyed_graph) {
  Expression x, y;
  {
    auto cg = std::make_unique<ComputationGraph>();
    x = dl::input(*cg, Dim({2}), {1.f, 2.f});
    y = dl::tanh(x);
    BOOST_CHECK(!y.is_stale());
    BOOST_CHECK_CLOSE(dl::as_vector(y.value())[1], std::tanh(2.f), 1e-4);
  }
  BOOST_CHECK(x.is_stale());
  BOOST_CHECK(y.is_stale());
  BOOST_CHECK(!y.graph_is_live());
  test::check_throws_with<std::invalid_argument>([&] { dl::as_scalar(dl::sum_elems(y).value()); },
                                                 {"sum_elems", "stale", "destroyed"});
  test::check_throws_with<std::runtime_error>([&] { y.value(); }, {"stale expression", "destroyed"});
  test::check_throws_with<std::runtime_error>([&] { y.gradient(); }, {"stale expression", "destroyed"});
  test::check_throws_with<std::runtime_error>([&] { y.dim(); }, {"stale expression", "destroyed"});
  test::check_throws_with<std::invalid_argument>([&] { dl::tanh(y); }, {"tanh", "stale", "destroyed"});
  test::check_throws_with<std::invalid_argument>([&] { dl::pickneglogsoftmax(y, std::vector<unsigned>{0, 1}); },
                                                 {"pickneglogsoftmax", "destroyed"});
  test::check_throws_with<std::invalid_argument>([&] { dl::reshape(y, Dim({2})); }, {"reshape", "destroyed"});
  // A new graph, perhaps at the same address, does not take the old expressions.
  ComputationGraph cg2;
  dl::input(cg2, Dim({2}), {3.f, 4.f});
  BOOST_CHECK(y.is_stale());
  test::check_throws_with<std::invalid_argument>([&] { cg2.get_value(y); }, {"get_value", "destroyed"});
  test::check_throws_with<std::invalid_argument>([&] { cg2.forward(y); }, {"forward", "destroyed"});
  test::check_throws_with<std::invalid_argument>([&] { cg2.backward(y); }, {"backward", "destroyed"});
}

BOOST_AUTO_TEST_CASE(builder_of_a_destroyed_graph) {
  dl::ParameterCollection pc;
  dl::VanillaLSTMBuilder lstm(1, 2, 3, pc);
  {
    ComputationGraph cg;
    lstm.new_graph(cg);
    lstm.start_new_sequence();
    lstm.add_input(dl::input(cg, Dim({2}), {1.f, 2.f}));
  }
  ComputationGraph other;
  Expression x = dl::input(other, Dim({2}), {1.f, 2.f});
  test::check_throws_with<std::invalid_argument>([&] { lstm.add_input(x); }, {"add_input", "destroyed"});
  test::check_throws_with<std::invalid_argument>([&] { lstm.start_new_sequence(); }, {"destroyed", "new_graph"});
  lstm.new_graph(other);
  lstm.start_new_sequence();
  BOOST_CHECK_NO_THROW(lstm.add_input(x));
}

// Many graphs made and destroyed: the registry reuses their slots, and an
// expression never takes a later graph in its slot for its own.
BOOST_AUTO_TEST_CASE(registry_slots_are_reused_safely) {
  std::vector<Expression> old;
  for (int k = 0; k < 50; ++k) {
    ComputationGraph cg;
    old.push_back(dl::input(cg, 1.f));
    for (const Expression& e : old) BOOST_CHECK_EQUAL(e.is_stale(), &e == &old.back() ? false : true);
  }
  for (const Expression& e : old) BOOST_CHECK(e.is_stale());
}

BOOST_AUTO_TEST_CASE(expression_from_another_graph) {
  ComputationGraph g1, g2;
  Expression a = dl::input(g1, Dim({2}), {1.f, 2.f});
  Expression b = dl::input(g2, Dim({2}), {3.f, 4.f});
  test::check_throws_with<std::invalid_argument>([&] { a + b; }, {"add", "argument 1", "another ComputationGraph"});
  test::check_throws_with<std::invalid_argument>([&] { g1.backward(b); }, {"backward", "another graph"});
  test::check_throws_with<std::invalid_argument>([&] { g1.get_value(b); }, {"get_value"});
}

BOOST_AUTO_TEST_CASE(empty_expression) {
  ComputationGraph cg;
  Expression e;
  Expression x = dl::input(cg, 1.f);
  test::check_throws_with<std::invalid_argument>([&] { dl::tanh(e); }, {"tanh", "empty Expression"});
  test::check_throws_with<std::invalid_argument>([&] { x + e; }, {"add", "argument 1", "empty Expression"});
  test::check_throws_with<std::invalid_argument>([&] { e.value(); }, {"empty expression"});
}

BOOST_AUTO_TEST_CASE(get_gradient_before_backward) {
  dl::ParameterCollection m;
  dl::Parameter p = m.add_parameters({2});
  ComputationGraph cg;
  Expression loss = dl::sum_elems(dl::parameter(cg, p));
  cg.forward(loss);
  test::check_throws_with<std::runtime_error>([&] { cg.get_gradient(loss); }, {"get_gradient", "backward"});
  cg.backward(loss);
  BOOST_CHECK_NO_THROW(cg.get_gradient(loss));
  // A new forward() invalidates the gradients again.
  cg.forward(loss);
  test::check_throws_with<std::runtime_error>([&] { loss.gradient(); }, {"get_gradient", "backward"});
}

BOOST_AUTO_TEST_CASE(revert_without_checkpoint) {
  ComputationGraph cg;
  dl::input(cg, 1.f);
  test::check_throws_with<std::runtime_error>([&] { cg.revert(); }, {"revert", "checkpoint"});
  cg.checkpoint();
  cg.revert();
  test::check_throws_with<std::runtime_error>([&] { cg.revert(); }, {"revert", "checkpoint"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(validity)

BOOST_AUTO_TEST_CASE(nan_in_forward) {
  ComputationGraph cg;
  cg.set_check_validity(true);
  Expression x = dl::input(cg, Dim({2}), {1.f, -1.f});
  Expression y = dl::log(x);  // log(-1) = NaN
  test::check_throws_with<dl::numeric_error>([&] { cg.forward(y); }, {"set_check_validity", "log", "{2}", "NaN"});
}

BOOST_AUTO_TEST_CASE(inf_in_forward) {
  ComputationGraph cg;
  cg.set_check_validity(true);
  Expression x = dl::input(cg, Dim({2}), {1.f, 0.f});
  Expression y = dl::log(x) + 1.f;  // log(0) = -inf
  test::check_throws_with<dl::numeric_error>([&] { cg.forward(y); }, {"log", "inf"});
}

BOOST_AUTO_TEST_CASE(without_checking_nan_passes_through) {
  ComputationGraph cg;
  Expression y = dl::log(dl::input(cg, -1.f));
  BOOST_CHECK(std::isnan(dl::as_scalar(cg.forward(y))));
}

BOOST_AUTO_TEST_CASE(inf_in_backward) {
  dl::ParameterCollection m;
  dl::Parameter p = m.add_parameters({2});
  p.set_value({0.f, 4.f});  // d sqrt(x)/dx at 0 is infinite
  ComputationGraph cg;
  cg.set_check_validity(true);
  Expression loss = dl::sum_elems(dl::sqrt(dl::parameter(cg, p)));
  BOOST_CHECK_CLOSE(dl::as_scalar(cg.forward(loss)), 2.f, 1e-4);  // forward is finite
  test::check_throws_with<dl::numeric_error>([&] { cg.backward(loss); }, {"set_check_validity", "gradient", "inf"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(immediate_compute)

BOOST_AUTO_TEST_CASE(error_raised_when_the_node_is_added) {
  ComputationGraph cg;
  cg.set_immediate_compute(true);
  cg.set_check_validity(true);
  Expression x = dl::input(cg, Dim({2}), {1.f, -1.f});
  Expression y = x * 2.f;
  // Computed already: the value exists before any forward() call.
  test::check_close(dl::as_vector(cg.get_value(y)), {2.f, -2.f});
  bool thrown_by_log = false;
  try {
    Expression z = dl::log(y);  // the faulty line itself throws
    (void)z;
  } catch (const dl::numeric_error& e) {
    thrown_by_log = true;
    BOOST_CHECK_MESSAGE(std::string(e.what()).find("log") != std::string::npos, e.what());
  }
  BOOST_CHECK(thrown_by_log);
}

BOOST_AUTO_TEST_CASE(lookup_index_checked_when_added) {
  dl::ParameterCollection m;
  dl::LookupParameter E = m.add_lookup_parameters(4, {2}, "table");
  ComputationGraph cg;
  cg.set_immediate_compute(true);
  unsigned idx = 9;
  test::check_throws_with<dl::index_error>([&] { dl::lookup(cg, E, &idx); }, {"lookup", "9", "table"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(flags)

BOOST_AUTO_TEST_CASE(unknown_dynet_flag) {
  char prog[] = "prog", bad[] = "--dynet-colour", val[] = "blue";
  char* args[] = {prog, bad, val, nullptr};
  int argc = 3;
  char** argv = args;
  test::check_throws_with<std::invalid_argument>([&] { dl::extract_dynet_params(argc, argv); },
                                                 {"unknown flag", "--dynet-colour"});
}

BOOST_AUTO_TEST_CASE(flag_without_value_or_with_a_bad_value) {
  char prog[] = "prog", seed[] = "--dynet-seed";
  char* args[] = {prog, seed, nullptr};
  int argc = 2;
  char** argv = args;
  test::check_throws_with<std::invalid_argument>([&] { dl::extract_dynet_params(argc, argv); },
                                                 {"--dynet-seed", "needs a value"});
  char mem[] = "--dynet-mem", autob[] = "--dynet-autobatch", three[] = "3", junk[] = "x12";
  char* args2[] = {prog, autob, three, nullptr};
  argc = 3;
  argv = args2;
  test::check_throws_with<std::invalid_argument>([&] { dl::extract_dynet_params(argc, argv); },
                                                 {"--dynet-autobatch", "3"});
  char* args3[] = {prog, seed, junk, mem, three, nullptr};
  argc = 5;
  argv = args3;
  test::check_throws_with<std::invalid_argument>([&] { dl::extract_dynet_params(argc, argv); },
                                                 {"--dynet-seed", "x12"});
}

BOOST_AUTO_TEST_CASE(gpu_requested_without_a_gpu_backend) {
  if (dl::has_cuda_backend()) {
    BOOST_TEST_MESSAGE("this build has a GPU backend: skipped");
    return;
  }
  char prog[] = "prog", gpus[] = "--dynet-gpus", one[] = "1";
  char* args[] = {prog, gpus, one, nullptr};
  int argc = 3;
  char** argv = args;
  test::check_throws_with<dl::unsupported_error>([&] { dl::initialize(argc, argv); }, {"no GPU backend"});
  char devices[] = "--dynet-devices", gpu0[] = "CPU,GPU:0";
  char* args2[] = {prog, devices, gpu0, nullptr};
  argc = 3;
  argv = args2;
  test::check_throws_with<dl::unsupported_error>([&] { dl::initialize(argc, argv); }, {"no GPU backend"});
}

BOOST_AUTO_TEST_CASE(unknown_device_name) {
  test::check_throws_with<std::exception>([] { dl::get_device_manager_device("TPU:3"); }, {"TPU:3"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(expression_reverted_away_is_stale_even_after_its_slot_is_reused) {
  dynet_lite::ComputationGraph cg;
  dynet_lite::Expression a = dynet_lite::input(cg, 1.f);
  cg.checkpoint();
  dynet_lite::Expression b = dynet_lite::input(cg, 2.f);
  cg.revert();
  dynet_lite::Expression c = dynet_lite::input(cg, 3.f);  // takes b's slot
  BOOST_CHECK(!a.is_stale());
  BOOST_CHECK(b.is_stale());
  BOOST_CHECK(!c.is_stale());
  BOOST_CHECK_THROW(dynet_lite::tanh(b), std::invalid_argument);
  BOOST_CHECK_EQUAL(dynet_lite::as_scalar(cg.forward(a + c)), 4.f);
}

// Indices read through a user's pointer at forward time are the ones backward
// uses, batched or not, even when the user's variables have changed (here to
// values far out of range) in between.
BOOST_AUTO_TEST_CASE(pointer_indices_are_kept_from_forward_to_backward) {
  dl::ParameterCollection pc;
  dl::LookupParameter E = pc.add_lookup_parameters(4, {3});
  dl::Parameter W = pc.add_parameters({5, 3});
  auto gradients = [&](int strategy, bool change) {
    pc.reset_gradient();
    unsigned word = 1, other = 3, tag = 2, row = 0;
    std::vector<unsigned> tags{4, 1};
    ComputationGraph cg;
    cg.set_autobatch(strategy);
    Expression w = dl::parameter(cg, W);
    Expression s = w * dl::lookup(cg, E, &word), t = w * dl::lookup(cg, E, &other);
    Expression both = dl::concatenate_to_batch({s, t});
    Expression loss = dl::pickneglogsoftmax(s, &tag) + dl::pick(s, &row) + dl::hinge(t, &tag) +
                      dl::sum_batches(dl::pickneglogsoftmax(both, &tags)) + dl::sum_elems(dl::select_rows(s, &tags));
    cg.forward(loss);
    if (change) {
      word = other = tag = row = 1000000;
      tags = {999999};  // even the vector's size
    }
    cg.backward(loss);
    std::vector<float> g = test::table_gradient(E.get_storage()), gw = dl::as_vector(W.get_storage().g);
    g.insert(g.end(), gw.begin(), gw.end());
    return g;
  };
  for (int strategy : {0, 1}) {
    const std::vector<float> unchanged = gradients(strategy, false), changed = gradients(strategy, true);
    BOOST_CHECK(unchanged == changed);
    // Rows 0 and 2 were never looked up.
    for (unsigned k : {0u, 1u, 2u, 6u, 7u, 8u}) BOOST_CHECK_EQUAL(changed[k], 0.f);
  }
}

// forward and incremental_forward refuse, as backward and get_value do, an
// expression of another graph, a stale one and a default-constructed one.
BOOST_AUTO_TEST_CASE(forward_refuses_foreign_stale_and_empty_expressions) {
  ComputationGraph a, b;
  Expression x = dl::input(a, 2.f) * 3.f;
  Expression y = dl::input(b, 1.f);
  for (auto f : {+[](ComputationGraph& g, const Expression& e) { g.forward(e); },
                 +[](ComputationGraph& g, const Expression& e) { g.incremental_forward(e); }}) {
    test::check_throws_with<std::invalid_argument>([&] { f(b, x); }, {"another graph"});
    test::check_throws_with<std::invalid_argument>([&] { f(b, Expression()); }, {"default-constructed"});
  }
  BOOST_CHECK_EQUAL(dl::as_scalar(a.forward(x)), 6.f);
  a.clear();
  test::check_throws_with<std::invalid_argument>([&] { a.forward(x); }, {"stale"});
  (void)y;
}
