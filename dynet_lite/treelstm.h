#pragma once
/// \file treelstm.h
/// Tree-structured LSTMs (DyNet's treelstm.h).  Nodes are added bottom-up:
/// add_input(id, children, x) computes node `id` from its input x and the states
/// of its already-added children.  Ids are any non-negative integers below
/// set_num_elements(n) (the table grows when a larger id arrives).
#include <vector>

#include "dynet_lite/lstm.h"

namespace dynet_lite {

/// Base class of the tree builders.  The sequence operations of RNNBuilder
/// (add_input(x), set_h, set_s, final_s, get_s, copy) have no meaning for trees
/// and throw std::runtime_error.
class TreeLSTMBuilder : public RNNBuilder {
 public:
  /// Computes node `id` from x and the nodes `children`; returns its output.
  virtual Expression add_input(int id, std::vector<int> children, const Expression& x) = 0;
  /// Makes room for ids 0..num-1 (forgetting the nodes added so far).
  virtual void set_num_elements(int num) = 0;

  /// Output (top layer) of the latest node added.
  Expression back() const override;
  /// Outputs of every layer of the latest node added.
  std::vector<Expression> final_h() const override;
  /// Outputs of every layer of node p.
  std::vector<Expression> get_h(RNNPointer p) const override;
  std::vector<Expression> final_s() const override;
  std::vector<Expression> get_s(RNNPointer p) const override;
  void copy(const RNNBuilder& params) override;

  /// The nodes added since set_num_elements, in the order they came (ids), with
  /// the input and children each was given: what the ONNX exporter traces.
  const std::vector<int>& added_order() const { return added_order_; }
  /// The input x node `id` was given (empty: none) and its children.
  Expression node_input(int id) const;
  const std::vector<int>& node_children(int id) const;
  /// Number of layers (expressions per node in get_h).
  unsigned num_layers() const { return tree_layers; }

 protected:
  Expression add_input_impl(int prev, const Expression& x) override;
  Expression set_h_impl(int prev, const std::vector<Expression>& h_new) override;
  Expression set_s_impl(int prev, const std::vector<Expression>& s_new) override;
  const char* builder_name() const override { return "TreeLSTMBuilder"; }

  /// Checks the id and the children (added before, distinct from id); grows the table.
  void check_node(int id, const std::vector<int>& children, const char* what);
  void reset_nodes(int num);
  /// Remembers what node `id` was given (for node_input / node_children).
  void record_node(int id, const std::vector<int>& children, const Expression& x);

  unsigned tree_layers = 0;      ///< expressions stored per node in node_h
  std::vector<Expression> node_h;  ///< [id * tree_layers + layer]
  std::vector<char> node_added;
  int last_id = -1;
  std::vector<int> added_order_;
  std::vector<Expression> node_x_;
  std::vector<std::vector<int>> node_children_;
};

/// N-ary Tree-LSTM (Tai, Socher & Manning 2015, section 3.2): the children are
/// ordered and child position l has its own weights.  Per layer, with children
/// (h_l, c_l), l < number of children <= N:
///   i = logistic(W_i x + sum_l U_il h_l + b_i)
///   o = logistic(W_o x + sum_l U_ol h_l + b_o)
///   u = tanh(W_u x + sum_l U_ul h_l + b_u)
///   f_k = logistic(W_f x + sum_l U_fkl h_l + b_fk + 1)     (one per child k)
///   c = i * u + sum_k f_k * c_k,    h = o * tanh(c)
/// All gates come from one affine_transform: per layer W {(3+N)h, in}, U_l
/// {(3+N)h, h} for each child position l and b {(3+N)h}, rows ordered
/// i, o, u, f_0 .. f_{N-1}.  A leaf with an initial state (start_new_sequence
/// with 2 * layers expressions: cells, then outputs) treats it as its one child.
/// An empty Expression() as x means the node has no input (the inner nodes of a
/// constituency tree): the W x term of the first layer is left out, which equals
/// a zero input without its matrix product.
class NaryTreeLSTMBuilder : public TreeLSTMBuilder {
 public:
  NaryTreeLSTMBuilder() = default;
  NaryTreeLSTMBuilder(unsigned N, unsigned layers, unsigned input_dim, unsigned hidden_dim,
                      ParameterCollection& model);

  Expression add_input(int id, std::vector<int> children, const Expression& x) override;
  void set_num_elements(int num) override;
  std::vector<Expression> get_s(RNNPointer p) const override;
  std::vector<Expression> final_s() const override { return get_s(last_id); }
  unsigned num_h0_components() const override { return 2 * layers; }
  void copy(const RNNBuilder& params) override;
  ParameterCollection& get_parameter_collection() override { return local_model; }
  /// N, the most children a node has.
  unsigned arity() const { return N; }

  /// Per layer: {W, b, U_0, ..., U_{N-1}}.
  std::vector<std::vector<Parameter>> params;

 protected:
  void new_graph_impl(ComputationGraph& cg, bool update) override;
  void start_new_sequence_impl(const std::vector<Expression>& h_0) override;
  const char* builder_name() const override { return "NaryTreeLSTMBuilder"; }

 private:
  ParameterCollection local_model;
  std::vector<std::vector<Expression>> param_vars;
  /// Per layer, the i, o, u rows of W and b ({3 hid, in} and {3 hid}): a leaf
  /// (no children, no initial state) has no forget gate, so it multiplies by
  /// these alone.  Made at the graph's first leaf; empty until then.
  std::vector<Expression> leaf_W, leaf_b;
  std::vector<Expression> node_c;  ///< [id * layers + layer]
  std::vector<Expression> h0, c0;
  std::vector<Expression> args_, terms_;  ///< reused per node (no allocation once grown)
  unsigned N = 0, layers = 0, input_dim = 0, hid = 0;
};

/// DyNet's unidirectional tree builder: a node's output is the last output of an
/// LSTM (VanillaLSTMBuilder) that reads x, then the outputs of the children in
/// order.  The children's outputs are LSTM inputs, so input_dim must equal
/// hidden_dim.
class UnidirectionalTreeLSTMBuilder : public TreeLSTMBuilder {
 public:
  UnidirectionalTreeLSTMBuilder() = default;
  UnidirectionalTreeLSTMBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim,
                                ParameterCollection& model);

  Expression add_input(int id, std::vector<int> children, const Expression& x) override;
  void set_num_elements(int num) override { reset_nodes(num); }
  unsigned num_h0_components() const override { return node_builder.num_h0_components(); }
  void set_dropout(float d) override { node_builder.set_dropout(d); }
  void disable_dropout() override { node_builder.disable_dropout(); }
  ParameterCollection& get_parameter_collection() override { return local_model; }

 protected:
  void new_graph_impl(ComputationGraph& cg, bool update) override;
  void start_new_sequence_impl(const std::vector<Expression>& h_0) override;
  const char* builder_name() const override { return "UnidirectionalTreeLSTMBuilder"; }

 private:
  ParameterCollection local_model;
  VanillaLSTMBuilder node_builder;
  unsigned input_dim = 0, hidden_dim = 0;
};

/// DyNet's bidirectional tree builder: the concatenation of a forward LSTM over
/// (x, children in order) and a backward LSTM over (x, children in reverse
/// order), each with hidden_dim / 2 units; hidden_dim must be even and equal to
/// input_dim.
class BidirectionalTreeLSTMBuilder : public TreeLSTMBuilder {
 public:
  BidirectionalTreeLSTMBuilder() = default;
  BidirectionalTreeLSTMBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim,
                               ParameterCollection& model);

  Expression add_input(int id, std::vector<int> children, const Expression& x) override;
  void set_num_elements(int num) override { reset_nodes(num); }
  unsigned num_h0_components() const override { return fwd_node_builder.num_h0_components(); }
  void set_dropout(float d) override;
  void disable_dropout() override;
  ParameterCollection& get_parameter_collection() override { return local_model; }

 protected:
  void new_graph_impl(ComputationGraph& cg, bool update) override;
  void start_new_sequence_impl(const std::vector<Expression>& h_0) override;
  const char* builder_name() const override { return "BidirectionalTreeLSTMBuilder"; }

 private:
  ParameterCollection local_model;
  VanillaLSTMBuilder fwd_node_builder, rev_node_builder;
  unsigned input_dim = 0, hidden_dim = 0;
};

}  // namespace dynet_lite
