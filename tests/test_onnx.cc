#define BOOST_TEST_MODULE onnx
// ONNX export (dynet_lite/onnx.h): what cannot be exported is a clear error (an
// op without an ONNX form, an expression of another graph, a node that reads a
// position it was not declared with, freed parameters), files are written
// atomically, and the written model is what ONNX's protobuf says it is.  The
// numbers are compared with ONNX Runtime by tests/onnx_check.py (ctest
// onnx_runtime_matches).
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "dynet_lite/lstm.h"
#include "dynet_lite/onnx.h"
#include "dynet_lite/rnn.h"
#include "dynet_lite/treelstm.h"
#include "test_utils.h"

using namespace dynet_lite;

namespace {

bool exists(const std::string& path) { return std::ifstream(path).good(); }

onnx::ModelProto parse(const std::string& bytes) {
  onnx::ModelProto m;
  BOOST_REQUIRE(m.ParseFromString(bytes));
  return m;
}

int count_nodes(const onnx::ModelProto& m, const std::string& op) {
  int n = 0;
  for (const auto& node : m.graph().node()) n += node.op_type() == op;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(model_has_named_initializers_inputs_and_outputs) {
  ParameterCollection pc;
  Parameter W = pc.add_parameters({3, 4}, 0.f, "weights");
  ComputationGraph cg;
  Expression x = input(cg, Dim({4}, 2), std::vector<float>(8, 1.f));
  Expression y = tanh(parameter(cg, W) * x);
  OnnxExporter ex(cg);
  ex.add_input(x, "x");
  ex.add_output(y, "y");
  const onnx::ModelProto m = parse(ex.serialize());
  BOOST_CHECK_EQUAL(m.opset_import(0).version(), 17);
  const onnx::GraphProto& g = m.graph();
  BOOST_REQUIRE_EQUAL(g.input_size(), 1);
  BOOST_CHECK_EQUAL(g.input(0).name(), "x");
  const auto& shape = g.input(0).type().tensor_type().shape();
  BOOST_REQUIRE_EQUAL(shape.dim_size(), 2);
  BOOST_CHECK_EQUAL(shape.dim(0).dim_param(), "batch");  // dynamic batch
  BOOST_CHECK_EQUAL(shape.dim(1).dim_value(), 4);
  BOOST_CHECK_EQUAL(g.output(0).name(), "y");
  bool found = false;
  for (const auto& init : g.initializer())
    if (init.name() == W.get_fullname()) {  // "/weights"
      found = true;
      BOOST_CHECK_EQUAL(init.dims_size(), 3);  // [1, 4, 3]: W {3, 4} read row-major
      BOOST_CHECK_EQUAL(init.dims(1), 4);
      BOOST_CHECK_EQUAL(init.dims(2), 3);
    }
  BOOST_CHECK(found);
}

BOOST_AUTO_TEST_CASE(op_without_onnx_form_names_op_and_node) {
  ComputationGraph cg;
  Expression x = input(cg, {3}, std::vector<float>{1, 2, 3});
  Expression y = lgamma(x);
  OnnxExporter ex(cg);
  ex.add_input(x, "x");
  ex.add_output(y, "y");
  test::check_throws_with<onnx_error>([&] { ex.serialize(); }, {"lgamma", "node 1", "no ONNX form"});
}

BOOST_AUTO_TEST_CASE(dropout_is_refused) {
  ComputationGraph cg;
  Expression x = input(cg, {3}, std::vector<float>{1, 2, 3});
  OnnxExporter ex(cg);
  ex.add_output(dropout(x, 0.5f), "y");
  test::check_throws_with<onnx_error>([&] { ex.serialize(); }, {"dropout", "no ONNX form"});
}

BOOST_AUTO_TEST_CASE(expression_of_another_graph) {
  ComputationGraph cg, other;
  Expression x = input(other, 1.f);
  OnnxExporter ex(cg);
  test::check_throws_with<onnx_error>([&] { ex.add_output(x, "y"); }, {"add_output", "another graph"});
  test::check_throws_with<onnx_error>([&] { ex.add_input(x, "x"); }, {"add_input", "another graph"});
}

BOOST_AUTO_TEST_CASE(declared_input_must_be_a_leaf_and_names_unique) {
  ComputationGraph cg;
  Expression x = input(cg, {3}, std::vector<float>{1, 2, 3});
  OnnxExporter ex(cg);
  test::check_throws_with<onnx_error>([&] { ex.add_input(tanh(x), "t"); }, {"tanh", "not an input() or lookup() leaf"});
  ex.add_input(x, "x");
  test::check_throws_with<onnx_error>([&] { ex.add_output(x, "x"); }, {"'x' is taken"});
  test::check_throws_with<onnx_error>([&] { ex.serialize(); }, {"no outputs"});
}

BOOST_AUTO_TEST_CASE(unwritable_path_leaves_no_file) {
  ComputationGraph cg;
  Expression x = input(cg, {3}, std::vector<float>{1, 2, 3});
  OnnxExporter ex(cg);
  ex.add_input(x, "x");
  ex.add_output(tanh(x), "y");
  const std::string bad = "/nonexistent-dir/model.onnx";
  test::check_throws_with<std::runtime_error>([&] { ex.save(bad); }, {"/nonexistent-dir/model.onnx"});
  BOOST_CHECK(!exists(bad));
  BOOST_CHECK(!exists(bad + ".tmp"));
  // A good path: written whole, and an old file is replaced, never left half-written.
  const std::string good = "test_onnx_model.onnx";
  { std::ofstream(good) << "old"; }
  ex.save(good);
  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BOOST_CHECK_EQUAL(bytes, ex.serialize());
  BOOST_CHECK(!exists(good + ".tmp"));
  std::remove(good.c_str());
}

BOOST_AUTO_TEST_CASE(freed_parameters_are_an_error) {
  auto pc = std::make_unique<ParameterCollection>();
  Parameter W = pc->add_parameters({2, 3});
  ComputationGraph cg;
  Expression x = input(cg, {3}, std::vector<float>{1, 2, 3});
  Expression y = parameter(cg, W) * x;
  OnnxExporter ex(cg);
  ex.add_input(x, "x");
  ex.add_output(y, "y");
  W = Parameter();
  pc.reset();
  test::check_throws_with<std::runtime_error>([&] { ex.serialize(); }, {"destroyed with its model"});
}

BOOST_AUTO_TEST_CASE(cleared_graph_is_an_error) {
  ComputationGraph cg;
  Expression x = input(cg, {3}, std::vector<float>{1, 2, 3});
  OnnxExporter ex(cg);
  ex.add_output(tanh(x), "y");
  cg.clear();
  test::check_throws_with<onnx_error>([&] { ex.serialize(); }, {"cleared"});
}

// A sequence network for the checks below: one LSTM over lookups, a layer per position.
struct SeqNet {
  ParameterCollection pc;
  LookupParameter E = pc.add_lookup_parameters(5, {3});
  VanillaLSTMBuilder lstm{1, 3, 4, pc};
  std::vector<Expression> xs, hs;
  void build(ComputationGraph& cg, unsigned n) {
    lstm.new_graph(cg);
    lstm.start_new_sequence();
    xs.clear();
    hs.clear();
    for (unsigned i = 0; i < n; ++i) xs.push_back(lookup(cg, E, i % 5));
    for (auto& x : xs) hs.push_back(lstm.add_input(x));
  }
};

BOOST_AUTO_TEST_CASE(position_read_without_declaration) {
  SeqNet net;
  ComputationGraph cg;
  net.build(cg, 3);
  OnnxExporter ex(cg);
  ex.add_sequence_input(net.xs, "words");
  ex.add_recurrence(net.lstm);
  ex.add_output(net.hs[1], "h1");  // a middle position as a plain output
  test::check_throws_with<onnx_error>([&] { ex.serialize(); }, {"reads a position", "add_sequence_output"});
}

// SimpleRNNBuilder's lags feed a second input to each step, which the Scan
// body does not carry: an error naming the step and the node, not a model.
BOOST_AUTO_TEST_CASE(auxiliary_step_input_is_refused) {
  ParameterCollection pc;
  LookupParameter E = pc.add_lookup_parameters(5, {3}), A = pc.add_lookup_parameters(5, {4});
  SimpleRNNBuilder rnn(1, 3, 4, pc, true);
  ComputationGraph cg;
  rnn.new_graph(cg);
  rnn.start_new_sequence();
  std::vector<Expression> xs, aux, hs;
  for (unsigned i = 0; i < 3; ++i) {
    xs.push_back(lookup(cg, E, i));
    aux.push_back(lookup(cg, A, i));
    hs.push_back(rnn.add_auxiliary_input(xs.back(), aux.back()));
  }
  OnnxExporter ex(cg);
  ex.add_sequence_input(xs, "words");
  ex.add_sequence_input(aux, "aux");
  ex.add_recurrence(rnn);
  ex.add_sequence_output(hs, "h");
  test::check_throws_with<onnx_error>([&] { ex.serialize(); }, {"recurrence0", "step 1", "lookup"});
}

BOOST_AUTO_TEST_CASE(sequence_output_that_mixes_positions) {
  SeqNet net;
  ComputationGraph cg;
  net.build(cg, 3);
  OnnxExporter ex(cg);
  ex.add_sequence_input(net.xs, "words");
  ex.add_recurrence(net.lstm);
  // Position t reads the input of position 0 as well: not one computation per position.
  std::vector<Expression> ys;
  for (auto& h : net.hs) ys.push_back(concatenate({h, net.xs[0]}));
  ex.add_sequence_output(ys, "y");
  test::check_throws_with<onnx_error>([&] { ex.serialize(); }, {"reads positions"});
}

BOOST_AUTO_TEST_CASE(recurrence_needs_two_steps_and_zero_state) {
  SeqNet net;
  ComputationGraph cg;
  net.build(cg, 1);
  OnnxExporter ex(cg);
  test::check_throws_with<onnx_error>([&] { ex.add_recurrence(net.lstm); }, {"at least 2"});
  net.lstm.start_new_sequence({zeros(cg, {4}), zeros(cg, {4})});
  net.lstm.add_input(net.xs[0]);
  net.lstm.add_input(net.xs[0]);
  test::check_throws_with<onnx_error>([&] { ex.add_recurrence(net.lstm); }, {"h_0"});
}

BOOST_AUTO_TEST_CASE(final_state_exports_as_a_plain_output) {
  SeqNet net;
  ComputationGraph cg;
  net.build(cg, 4);
  OnnxExporter ex(cg);
  ex.add_sequence_input(net.xs, "words");
  ex.add_recurrence(net.lstm);
  ex.add_output(net.lstm.back(), "last");
  const onnx::ModelProto m = parse(ex.serialize());
  BOOST_CHECK_EQUAL(count_nodes(m, "LSTM"), 1);
  BOOST_CHECK_EQUAL(count_nodes(m, "Scan"), 0);
  BOOST_CHECK_EQUAL(m.graph().input(0).type().tensor_type().elem_type(), onnx::TensorProto::INT64);
  BOOST_CHECK_EQUAL(m.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "seq");
  ex.set_native_lstm(false);
  const onnx::ModelProto scan = parse(ex.serialize());
  BOOST_CHECK_EQUAL(count_nodes(scan, "LSTM"), 0);
  BOOST_CHECK_EQUAL(count_nodes(scan, "Scan"), 1);
}

// A stack of fused vanilla LSTM layers becomes one ONNX LSTM node per layer;
// what the LSTM node cannot compute (layer norm, another builder) stays a Scan.
BOOST_AUTO_TEST_CASE(vanilla_lstm_layers_export_as_lstm_nodes) {
  ParameterCollection pc;
  LookupParameter E = pc.add_lookup_parameters(5, {3});
  VanillaLSTMBuilder stacked(2, 3, 4, pc), layer_norm(1, 3, 4, pc, true);
  CompactVanillaLSTMBuilder compact(3, 3, 4, pc);
  auto export_one = [&](RNNBuilder& b) {
    ComputationGraph cg;
    b.new_graph(cg);
    b.start_new_sequence();
    std::vector<Expression> xs, hs;
    for (unsigned i = 0; i < 3; ++i) xs.push_back(lookup(cg, E, i));
    for (size_t i = xs.size(); i-- > 0;) hs.push_back(b.add_input(xs[i]));
    OnnxExporter ex(cg);
    ex.add_sequence_input(xs, "words");
    ex.add_recurrence(b);
    ex.add_output(b.back(), "last");
    return parse(ex.serialize());
  };
  const onnx::ModelProto two = export_one(stacked);
  BOOST_CHECK_EQUAL(count_nodes(two, "LSTM"), 2);
  for (const auto& n : two.graph().node())
    if (n.op_type() == "LSTM") {
      BOOST_CHECK_EQUAL(n.attribute_size(), 2);  // hidden_size and direction
      for (const auto& a : n.attribute())
        if (a.name() == "direction") BOOST_CHECK_EQUAL(a.s(), "reverse");
    }
  BOOST_CHECK_EQUAL(count_nodes(export_one(compact), "LSTM"), 3);
  const onnx::ModelProto ln = export_one(layer_norm);
  BOOST_CHECK_EQUAL(count_nodes(ln, "LSTM"), 0);
  BOOST_CHECK_EQUAL(count_nodes(ln, "Scan"), 1);
}

// A Tree-LSTM over lookups; `children[k]` of node k, word k for leaves.
struct TreeNet {
  ParameterCollection pc;
  LookupParameter E = pc.add_lookup_parameters(5, {3});
  NaryTreeLSTMBuilder tree{2, 1, 3, 4, pc};
  Expression build(ComputationGraph& cg, const std::vector<std::vector<int>>& children, const std::vector<int>& order) {
    tree.new_graph(cg);
    tree.start_new_sequence();
    tree.set_num_elements(static_cast<int>(children.size()));
    for (int k : order)
      tree.add_input(k, children[k], children[k].empty() ? lookup(cg, E, static_cast<unsigned>(k % 5)) : Expression());
    return tree.back();
  }
};

BOOST_AUTO_TEST_CASE(tree_with_a_unary_node_is_refused) {
  TreeNet net;
  ComputationGraph cg;
  Expression root = net.build(cg, {{}, {}, {0, 1}, {2}}, {0, 1, 2, 3});
  OnnxExporter ex(cg);
  ex.add_tree(net.tree, "tree");
  ex.add_output(root, "h");
  test::check_throws_with<onnx_error>([&] { ex.serialize(); }, {"node 3 has 1 children", "N = 2"});
}

BOOST_AUTO_TEST_CASE(tree_not_in_post_order_is_refused) {
  TreeNet net;
  ComputationGraph cg;
  net.build(cg, {{}, {}, {0, 1}}, {1, 0, 2});
  OnnxExporter ex(cg);
  test::check_throws_with<onnx_error>([&] { ex.add_tree(net.tree, "tree"); }, {"post-order"});
}

BOOST_AUTO_TEST_CASE(tree_exports_a_loop) {
  TreeNet net;
  ComputationGraph cg;
  Expression root = net.build(cg, {{}, {}, {0, 1}, {}, {2, 3}}, {0, 1, 2, 3, 4});
  OnnxExporter ex(cg);
  ex.add_tree(net.tree, "tree");
  ex.add_output(root, "h");
  const onnx::ModelProto m = parse(ex.serialize());
  bool loop = false;
  for (const auto& n : m.graph().node()) loop = loop || n.op_type() == "Loop";
  BOOST_CHECK(loop);
  BOOST_REQUIRE_EQUAL(m.graph().input_size(), 2);
  BOOST_CHECK_EQUAL(m.graph().input(0).name(), "tree_words");
  BOOST_CHECK_EQUAL(m.graph().input(1).name(), "tree_children");
}
