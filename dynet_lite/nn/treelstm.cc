// Tree-structured LSTMs: the N-ary Tree-LSTM and DyNet's LSTM-over-children wrappers.
#include "dynet_lite/treelstm.h"

#include <string>

#include "dynet_lite/core/node.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

// ---------------------------------------------------------------- TreeLSTMBuilder

Expression TreeLSTMBuilder::add_input_impl(int, const Expression&) {
  DYNET_LITE_CHECK(false, std::runtime_error,
                   builder_name() << ": add_input(x) / add_input(prev, x) are not defined for tree builders; "
                                     "use add_input(id, children, x)");
}
Expression TreeLSTMBuilder::set_h_impl(int, const std::vector<Expression>&) {
  DYNET_LITE_CHECK(false, std::runtime_error, builder_name() << ": set_h() is not defined for tree builders");
}
Expression TreeLSTMBuilder::set_s_impl(int, const std::vector<Expression>&) {
  DYNET_LITE_CHECK(false, std::runtime_error, builder_name() << ": set_s() is not defined for tree builders");
}
std::vector<Expression> TreeLSTMBuilder::final_s() const {
  DYNET_LITE_CHECK(false, std::runtime_error, builder_name() << ": final_s() is not defined for this builder");
}
std::vector<Expression> TreeLSTMBuilder::get_s(RNNPointer) const {
  DYNET_LITE_CHECK(false, std::runtime_error, builder_name() << ": get_s() is not defined for this builder");
}
void TreeLSTMBuilder::copy(const RNNBuilder&) {
  DYNET_LITE_CHECK(false, std::runtime_error, builder_name() << ": copy() is not defined for this builder");
}

Expression TreeLSTMBuilder::back() const {
  DYNET_LITE_ARG_CHECK(last_id >= 0, builder_name() << "::back: no node added yet");
  return node_h[static_cast<size_t>(last_id) * tree_layers + tree_layers - 1];
}

std::vector<Expression> TreeLSTMBuilder::final_h() const {
  DYNET_LITE_ARG_CHECK(last_id >= 0, builder_name() << "::final_h: no node added yet");
  return get_h(last_id);
}

std::vector<Expression> TreeLSTMBuilder::get_h(RNNPointer p) const {
  DYNET_LITE_INDEX_CHECK(p.t >= 0 && static_cast<size_t>(p.t) < node_added.size() && node_added[p.t],
                         builder_name() << "::get_h: node " << p.t << " has not been added");
  return std::vector<Expression>(node_h.begin() + static_cast<long>(p.t) * tree_layers,
                                 node_h.begin() + static_cast<long>(p.t + 1) * tree_layers);
}

void TreeLSTMBuilder::reset_nodes(int num) {
  DYNET_LITE_ARG_CHECK(num >= 0, builder_name() << "::set_num_elements: " << num << " < 0");
  node_h.assign(static_cast<size_t>(num) * tree_layers, Expression());
  node_added.assign(static_cast<size_t>(num), 0);
  last_id = -1;
  added_order_.clear();
  node_x_.clear();
  node_children_.clear();
}

void TreeLSTMBuilder::record_node(int id, const std::vector<int>& children, const Expression& x) {
  if (static_cast<size_t>(id) >= node_x_.size()) {
    node_x_.resize(static_cast<size_t>(id) + 1);
    node_children_.resize(static_cast<size_t>(id) + 1);
  }
  node_x_[id] = x;
  node_children_[id] = children;
  added_order_.push_back(id);
}

Expression TreeLSTMBuilder::node_input(int id) const {
  DYNET_LITE_INDEX_CHECK(id >= 0 && static_cast<size_t>(id) < node_x_.size(),
                         builder_name() << "::node_input: node " << id << " was not added");
  return node_x_[id];
}

const std::vector<int>& TreeLSTMBuilder::node_children(int id) const {
  DYNET_LITE_INDEX_CHECK(id >= 0 && static_cast<size_t>(id) < node_children_.size(),
                         builder_name() << "::node_children: node " << id << " was not added");
  return node_children_[id];
}

void TreeLSTMBuilder::check_node(int id, const std::vector<int>& children, const char* what) {
  check_ready(what);
  DYNET_LITE_INDEX_CHECK(id >= 0, builder_name() << "::" << what << ": node id " << id << " < 0");
  for (int ch : children) {
    DYNET_LITE_INDEX_CHECK(ch >= 0 && static_cast<size_t>(ch) < node_added.size() && node_added[ch] && ch != id,
                           builder_name() << "::" << what << ": child " << ch << " of node " << id
                                          << " has not been added before it");
  }
  if (static_cast<size_t>(id) >= node_added.size()) {
    node_added.resize(static_cast<size_t>(id) + 1, 0);
    node_h.resize(node_added.size() * tree_layers);
  }
}

// ---------------------------------------------------------------- NaryTreeLSTMBuilder

NaryTreeLSTMBuilder::NaryTreeLSTMBuilder(unsigned N, unsigned layers, unsigned input_dim, unsigned hidden_dim,
                                         ParameterCollection& model)
    : N(N), layers(layers), input_dim(input_dim), hid(hidden_dim) {
  DYNET_LITE_ARG_CHECK(N > 0 && layers > 0 && input_dim > 0 && hidden_dim > 0,
                       "NaryTreeLSTMBuilder: N, layers, input_dim and hidden_dim must be positive, got "
                           << N << ", " << layers << ", " << input_dim << ", " << hidden_dim);
  tree_layers = layers;
  local_model = model.add_subcollection("nary-tree-lstm-builder");
  const unsigned rows = (3 + N) * hidden_dim;
  unsigned in = input_dim;
  for (unsigned i = 0; i < layers; ++i) {
    std::vector<Parameter> p = {local_model.add_parameters({rows, in}, "W"),
                                local_model.add_parameters({rows}, ParameterInitConst(0.f), "b")};
    for (unsigned l = 0; l < N; ++l) p.push_back(local_model.add_parameters({rows, hidden_dim}, "U" + std::to_string(l)));
    params.push_back(std::move(p));
    in = hidden_dim;
  }
}

void NaryTreeLSTMBuilder::new_graph_impl(ComputationGraph& cg, bool update) {
  // The forget gates' +1 is folded into the bias once per graph.
  std::vector<float> fb((3 + N) * hid, 0.f);
  for (size_t k = 3 * hid; k < fb.size(); ++k) fb[k] = 1.f;
  Expression fbe = input(cg, Dim({(3 + N) * hid}), fb);
  param_vars.resize(layers);
  for (unsigned i = 0; i < layers; ++i) {
    param_vars[i].clear();
    for (auto& p : params[i]) param_vars[i].push_back(update ? parameter(cg, p) : const_parameter(cg, p));
    param_vars[i][1] = param_vars[i][1] + fbe;
  }
  leaf_W.assign(layers, Expression());
  leaf_b.assign(layers, Expression());
}

void NaryTreeLSTMBuilder::start_new_sequence_impl(const std::vector<Expression>& h_0) {
  for (auto& e : h_0) check_input_dim(e, hid, "start_new_sequence (h_0)");
  h0.clear();
  c0.clear();
  if (!h_0.empty()) {
    c0.assign(h_0.begin(), h_0.begin() + layers);
    h0.assign(h_0.begin() + layers, h_0.end());
  }
  reset_nodes(0);
  node_c.clear();
}

void NaryTreeLSTMBuilder::set_num_elements(int num) {
  reset_nodes(num);
  node_c.assign(static_cast<size_t>(num) * layers, Expression());
}

Expression NaryTreeLSTMBuilder::add_input(int id, std::vector<int> children, const Expression& x) {
  DYNET_LITE_ARG_CHECK(children.size() <= N, "NaryTreeLSTMBuilder::add_input: node " << id << " has "
                                                 << children.size() << " children, at most N = " << N);
  check_node(id, children, "add_input");
  const bool has_input = x.pg != nullptr;  // an empty Expression: a node without input
  if (has_input) check_input_dim(x, input_dim, "add_input");
  node_c.resize(node_added.size() * layers);
  const size_t base = static_cast<size_t>(id) * layers;
  const bool use_init = children.empty() && !h0.empty();
  const unsigned nchild = use_init ? 1u : static_cast<unsigned>(children.size());
  Expression in = x;
  for (unsigned i = 0; i < layers; ++i) {
    const std::vector<Expression>& v = param_vars[i];
    auto child_h = [&](unsigned l) -> const Expression& {
      return use_init ? h0[i] : node_h[static_cast<size_t>(children[l]) * layers + i];
    };
    auto child_c = [&](unsigned l) -> const Expression& {
      return use_init ? c0[i] : node_c[static_cast<size_t>(children[l]) * layers + i];
    };
    // A leaf has no forget gate to compute: its pre-activations are the 3 hid
    // rows i, o, u alone (40% fewer multiply-adds for N = 2), laid out as the
    // gates of a node of arity 0.
    const bool leaf = nchild == 0 && (i > 0 || has_input);
    const unsigned arity = leaf ? 0 : N;
    if (leaf && leaf_W[i].pg == nullptr) {
      leaf_W[i] = pick_range(v[0], 0, 3 * hid);
      leaf_b[i] = pick_range(v[1], 0, 3 * hid);  // the forget gates' +1 is not in these rows
    }
    args_.clear();
    args_.push_back(leaf ? leaf_b[i] : v[1]);
    if (i > 0 || has_input) {
      args_.push_back(leaf ? leaf_W[i] : v[0]);
      args_.push_back(in);
    }
    for (unsigned l = 0; l < nchild; ++l) {
      args_.push_back(v[2 + l]);
      args_.push_back(child_h(l));
    }
    const Node& first_arg = args_[0].pg->node(args_[0].i);
    if (first_arg.value.device->type == DeviceType::CPU) {
      // The same function through the fused ops: gates, c and h are three nodes
      // instead of about seventeen (affine_transform / pick_range / logistic /
      // tanh / cmult / sum per gate and child), which matters more than the
      // arithmetic for trees.  treelstm_gates_affine has CPU kernels only;
      // elsewhere the basic ops below run.
      Expression gates = treelstm_gates_affine(args_, arity);
      terms_.clear();
      for (unsigned k = 0; k < nchild; ++k) terms_.push_back(child_c(k));
      Expression ct = node_c[base + i] = treelstm_c(gates, terms_, arity);
      in = node_h[base + i] = treelstm_h(ct, gates);
      continue;
    }
    Expression pre = affine_transform(args_);
    Expression gi = logistic(pick_range(pre, 0, hid));
    Expression go = logistic(pick_range(pre, hid, 2 * hid));
    Expression gu = tanh(pick_range(pre, 2 * hid, 3 * hid));
    Expression ct = cmult(gi, gu);
    if (nchild > 0) {
      terms_.clear();
      terms_.push_back(ct);
      for (unsigned k = 0; k < nchild; ++k)
        terms_.push_back(cmult(logistic(pick_range(pre, (3 + k) * hid, (4 + k) * hid)), child_c(k)));
      ct = sum(terms_);
    }
    node_c[base + i] = ct;
    in = node_h[base + i] = cmult(go, tanh(ct));
  }
  node_added[id] = 1;
  last_id = id;
  record_node(id, children, x);
  return in;
}

std::vector<Expression> NaryTreeLSTMBuilder::get_s(RNNPointer p) const {
  std::vector<Expression> hs = get_h(p);
  std::vector<Expression> r(node_c.begin() + static_cast<long>(p.t) * layers,
                            node_c.begin() + static_cast<long>(p.t + 1) * layers);
  r.insert(r.end(), hs.begin(), hs.end());
  return r;
}

void NaryTreeLSTMBuilder::copy(const RNNBuilder& other) {
  const auto* o = dynamic_cast<const NaryTreeLSTMBuilder*>(&other);
  DYNET_LITE_ARG_CHECK(o != nullptr, "NaryTreeLSTMBuilder::copy: the other builder is not a NaryTreeLSTMBuilder");
  DYNET_LITE_ARG_CHECK(o->N == N && o->layers == layers && o->input_dim == input_dim && o->hid == hid,
                       "NaryTreeLSTMBuilder::copy: sizes differ (N " << o->N << " vs " << N << ", layers "
                                                                      << o->layers << " vs " << layers << ")");
  for (size_t i = 0; i < params.size(); ++i)
    for (size_t j = 0; j < params[i].size(); ++j)
      params[i][j].set_value(as_vector(o->params[i][j].get_storage().values));
}

// ---------------------------------------------------------------- Unidirectional

UnidirectionalTreeLSTMBuilder::UnidirectionalTreeLSTMBuilder(unsigned layers, unsigned input_dim,
                                                             unsigned hidden_dim, ParameterCollection& model)
    : input_dim(input_dim), hidden_dim(hidden_dim) {
  DYNET_LITE_DIM_CHECK(input_dim == hidden_dim,
                       "UnidirectionalTreeLSTMBuilder: the LSTM reads both x and the children's outputs, so "
                       "input_dim ("
                           << input_dim << ") must equal hidden_dim (" << hidden_dim << ")");
  local_model = model.add_subcollection("unidirectional-tree-lstm-builder");
  node_builder = VanillaLSTMBuilder(layers, input_dim, hidden_dim, local_model);
  tree_layers = 1;
}

void UnidirectionalTreeLSTMBuilder::new_graph_impl(ComputationGraph& cg, bool update) {
  node_builder.new_graph(cg, update);
}

void UnidirectionalTreeLSTMBuilder::start_new_sequence_impl(const std::vector<Expression>& h_0) {
  node_builder.start_new_sequence(h_0);
  reset_nodes(0);
}

Expression UnidirectionalTreeLSTMBuilder::add_input(int id, std::vector<int> children, const Expression& x) {
  check_node(id, children, "add_input");
  check_input_dim(x, input_dim, "add_input");
  Expression e = node_builder.add_input(RNNPointer(-1), x);
  for (int ch : children) e = node_builder.add_input(node_builder.state(), node_h[static_cast<size_t>(ch)]);
  node_h[static_cast<size_t>(id)] = e;
  node_added[id] = 1;
  last_id = id;
  return e;
}

// ---------------------------------------------------------------- Bidirectional

BidirectionalTreeLSTMBuilder::BidirectionalTreeLSTMBuilder(unsigned layers, unsigned input_dim,
                                                           unsigned hidden_dim, ParameterCollection& model)
    : input_dim(input_dim), hidden_dim(hidden_dim) {
  DYNET_LITE_DIM_CHECK(hidden_dim % 2 == 0 && hidden_dim > 0,
                       "BidirectionalTreeLSTMBuilder: hidden_dim (" << hidden_dim
                                                                    << ") must be even (two halves of hidden_dim/2)");
  DYNET_LITE_DIM_CHECK(input_dim == hidden_dim,
                       "BidirectionalTreeLSTMBuilder: the LSTMs read both x and the children's outputs, so "
                       "input_dim ("
                           << input_dim << ") must equal hidden_dim (" << hidden_dim << ")");
  local_model = model.add_subcollection("bidirectional-tree-lstm-builder");
  fwd_node_builder = VanillaLSTMBuilder(layers, input_dim, hidden_dim / 2, local_model);
  rev_node_builder = VanillaLSTMBuilder(layers, input_dim, hidden_dim / 2, local_model);
  tree_layers = 1;
}

void BidirectionalTreeLSTMBuilder::set_dropout(float d) {
  fwd_node_builder.set_dropout(d);
  rev_node_builder.set_dropout(d);
}

void BidirectionalTreeLSTMBuilder::disable_dropout() {
  fwd_node_builder.disable_dropout();
  rev_node_builder.disable_dropout();
}

void BidirectionalTreeLSTMBuilder::new_graph_impl(ComputationGraph& cg, bool update) {
  fwd_node_builder.new_graph(cg, update);
  rev_node_builder.new_graph(cg, update);
}

void BidirectionalTreeLSTMBuilder::start_new_sequence_impl(const std::vector<Expression>& h_0) {
  fwd_node_builder.start_new_sequence(h_0);
  rev_node_builder.start_new_sequence(h_0);
  reset_nodes(0);
}

Expression BidirectionalTreeLSTMBuilder::add_input(int id, std::vector<int> children, const Expression& x) {
  check_node(id, children, "add_input");
  check_input_dim(x, input_dim, "add_input");
  Expression fwd = fwd_node_builder.add_input(RNNPointer(-1), x);
  for (int ch : children) fwd = fwd_node_builder.add_input(fwd_node_builder.state(), node_h[static_cast<size_t>(ch)]);
  Expression rev = rev_node_builder.add_input(RNNPointer(-1), x);
  for (size_t k = children.size(); k-- > 0;)
    rev = rev_node_builder.add_input(rev_node_builder.state(), node_h[static_cast<size_t>(children[k])]);
  Expression e = concatenate({fwd, rev});
  node_h[static_cast<size_t>(id)] = e;
  node_added[id] = 1;
  last_id = id;
  return e;
}

}  // namespace dynet_lite
