// RNNBuilder bookkeeping (the history of steps) and the Elman network.
#include "dynet_lite/rnn.h"

#include "dynet_lite/core/graph_registry.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

RNNBuilder::~RNNBuilder() = default;

void RNNBuilder::new_graph(ComputationGraph& cg, bool update) {
  graph_ = &cg;
  graph_id_ = cg.get_id();
  graph_slot_ = cg.registry_slot();
  sequence_started_ = false;
  new_graph_impl(cg, update);
}

void RNNBuilder::check_graph(const char* what) const {
  DYNET_LITE_ARG_CHECK(graph_ != nullptr, builder_name() << "::" << what << ": call new_graph() first");
  // Asked of the registry: graph_ may point to a destroyed graph.
  DYNET_LITE_ARG_CHECK(graph_is_live(graph_slot_, graph_id_),
                       builder_name() << "::" << what
                                      << ": the graph was destroyed or cleared since new_graph(); call new_graph() again");
}

void RNNBuilder::check_ready(const char* what) const {
  check_graph(what);
  DYNET_LITE_ARG_CHECK(sequence_started_, builder_name() << "::" << what << ": call start_new_sequence() first");
}

void RNNBuilder::check_input_dim(const Expression& x, unsigned dim, const char* what) const {
  const Dim d = x.dim();
  DYNET_LITE_DIM_CHECK(d.rows() == dim && d.batch_size() == dim,
                       builder_name() << "::" << what << ": expected an input of dimension {" << dim
                                      << "} (any batch size), got " << d);
}

void RNNBuilder::check_step_from(const RNNPointer& prev, const char* what) const {
  check_ready(what);
  DYNET_LITE_INDEX_CHECK(
      prev.t >= -1 && prev.t < static_cast<int>(head.size()),
      builder_name() << "::" << what << ": state " << prev.t << " does not exist (" << head.size() << " steps so far)");
}

Expression RNNBuilder::record_step(const RNNPointer& prev, Expression r, const Expression& x) {
  head.push_back(prev);
  inputs_.push_back(x);
  cur = static_cast<int>(head.size()) - 1;
  return r;
}

void RNNBuilder::start_new_sequence(const std::vector<Expression>& h_0) {
  check_graph("start_new_sequence");
  DYNET_LITE_ARG_CHECK(h_0.empty() || h_0.size() == num_h0_components(),
                       builder_name() << "::start_new_sequence: h_0 has " << h_0.size()
                                      << " expressions, expected " << num_h0_components() << " (or none)");
  cur = RNNPointer(-1);
  head.clear();
  inputs_.clear();
  has_h0_ = !h_0.empty();
  sequence_started_ = true;
  start_new_sequence_impl(h_0);
}

Expression RNNBuilder::set_h(const RNNPointer& prev, const std::vector<Expression>& h_new) {
  check_step_from(prev, "set_h");
  return record_step(prev, set_h_impl(prev, h_new));
}

Expression RNNBuilder::set_s(const RNNPointer& prev, const std::vector<Expression>& s_new) {
  check_step_from(prev, "set_s");
  return record_step(prev, set_s_impl(prev, s_new));
}

Expression RNNBuilder::add_input(const Expression& x) { return add_input(cur, x); }

Expression RNNBuilder::add_input(const RNNPointer& prev, const Expression& x) {
  check_step_from(prev, "add_input");
  // The implementation records the new step only after its checks pass.
  return record_step(prev, add_input_impl(prev, x), x);
}

void RNNBuilder::rewind_one_step() {
  DYNET_LITE_INDEX_CHECK(cur.t >= 0, builder_name() << "::rewind_one_step: already at the initial state");
  cur = head[cur.t];
}

RNNPointer RNNBuilder::get_head(const RNNPointer& p) {
  DYNET_LITE_INDEX_CHECK(p.t >= 0 && p.t < static_cast<int>(head.size()),
                         builder_name() << "::get_head: state " << p.t << " does not exist (" << head.size()
                                        << " steps so far)");
  return head[p.t];
}

RNNPointer RNNBuilder::step_head(const RNNPointer& p) const {
  DYNET_LITE_INDEX_CHECK(p.t >= 0 && p.t < static_cast<int>(head.size()),
                         builder_name() << "::step_head: state " << p.t << " does not exist (" << head.size()
                                        << " steps so far)");
  return head[p.t];
}

Expression RNNBuilder::step_input(const RNNPointer& p) const {
  DYNET_LITE_INDEX_CHECK(p.t >= 0 && p.t < static_cast<int>(inputs_.size()),
                         builder_name() << "::step_input: state " << p.t << " does not exist (" << inputs_.size()
                                        << " steps so far)");
  return inputs_[p.t];
}

void RNNBuilder::set_dropout(float d) {
  DYNET_LITE_ARG_CHECK(d >= 0.f && d <= 1.f,
                       builder_name() << "::set_dropout: rate " << d << " is not a probability in [0, 1]");
  dropout_rate = d;
}

void RNNBuilder::disable_dropout() { dropout_rate = 0.f; }

// ---------------------------------------------------------------- what SimpleRNNBuilder and GRUBuilder share

namespace detail {

HiddenStateRNNBuilder::HiddenStateRNNBuilder(const char* builder, unsigned layers, unsigned input_dim,
                                             unsigned hidden_dim, ParameterCollection& model, const char* collection)
    : layers(layers), input_dim(input_dim), hidden_dim(hidden_dim) {
  DYNET_LITE_ARG_CHECK(layers > 0 && input_dim > 0 && hidden_dim > 0,
                       builder << ": layers, input_dim and hidden_dim must be positive, got " << layers << ", "
                               << input_dim << ", " << hidden_dim);
  local_model = model.add_subcollection(collection);
}

void HiddenStateRNNBuilder::new_graph_impl(ComputationGraph& cg, bool update) {
  param_vars.resize(layers);
  for (unsigned i = 0; i < layers; ++i) {
    param_vars[i].clear();
    for (auto& p : params[i]) param_vars[i].push_back(update ? parameter(cg, p) : const_parameter(cg, p));
  }
}

Expression HiddenStateRNNBuilder::add_input_impl(int prev, const Expression& x) {
  check_input_dim(x, input_dim, "add_input");
  const size_t t = h.size() / layers;
  h.resize((t + 1) * layers);
  Expression in = x;
  try {
    for (unsigned i = 0; i < layers; ++i) {
      if (dropout_rate > 0.f) in = dropout(in, dropout_rate);
      const Expression* h_prev = nullptr;
      if (prev >= 0)
        h_prev = &h[static_cast<size_t>(prev) * layers + i];
      else if (!h0.empty())
        h_prev = &h0[i];
      in = h[t * layers + i] = layer_step(param_vars[i], in, h_prev);
    }
  } catch (...) {
    h.resize(t * layers);  // leave the history as it was
    throw;
  }
  return in;
}

Expression HiddenStateRNNBuilder::set_h_impl(int, const std::vector<Expression>& h_new) {
  DYNET_LITE_ARG_CHECK(h_new.size() == layers, builder_name() << "::set_h: expected " << layers
                                                              << " expressions (one per layer), got " << h_new.size());
  for (auto& e : h_new) check_input_dim(e, hidden_dim, "set_h");
  h.insert(h.end(), h_new.begin(), h_new.end());
  return h.back();
}

Expression HiddenStateRNNBuilder::set_s_impl(int prev, const std::vector<Expression>& s_new) {
  return set_h_impl(prev, s_new);
}

Expression HiddenStateRNNBuilder::back() const {
  if (cur.t < 0) {
    DYNET_LITE_ARG_CHECK(!h0.empty(), builder_name() << "::back: no step yet and no initial state");
    return h0.back();
  }
  return h[static_cast<size_t>(cur.t) * layers + layers - 1];
}

std::vector<Expression> HiddenStateRNNBuilder::get_h(RNNPointer p) const {
  if (p.t < 0) return h0;
  DYNET_LITE_INDEX_CHECK(static_cast<size_t>(p.t) < h.size() / layers,
                         builder_name() << "::get_h: state " << p.t << " does not exist");
  return std::vector<Expression>(h.begin() + static_cast<long>(p.t) * layers,
                                 h.begin() + static_cast<long>(p.t + 1) * layers);
}

void HiddenStateRNNBuilder::copy_params(const HiddenStateRNNBuilder* o, bool same_options) {
  DYNET_LITE_ARG_CHECK(o != nullptr, builder_name() << "::copy: the other builder is not a " << builder_name());
  DYNET_LITE_ARG_CHECK(o->layers == layers && o->input_dim == input_dim && o->hidden_dim == hidden_dim && same_options,
                       builder_name() << "::copy: sizes differ (layers " << o->layers << " vs " << layers << ", input "
                                      << o->input_dim << " vs " << input_dim << ", hidden " << o->hidden_dim << " vs "
                                      << hidden_dim << ")");
  for (size_t i = 0; i < params.size(); ++i)
    for (size_t j = 0; j < params[i].size(); ++j)
      params[i][j].set_value(as_vector(o->params[i][j].get_storage().values));
}

}  // namespace detail

// ---------------------------------------------------------------- SimpleRNNBuilder

enum { X2H, H2H, HB, L2H };

SimpleRNNBuilder::SimpleRNNBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim, ParameterCollection& model,
                                   bool support_lags)
    : HiddenStateRNNBuilder("SimpleRNNBuilder", layers, input_dim, hidden_dim, model, "simple-rnn-builder"),
      lagging(support_lags) {
  unsigned in = input_dim;
  for (unsigned i = 0; i < layers; ++i) {
    std::vector<Parameter> p;
    p.push_back(local_model.add_parameters({hidden_dim, in}, "x2h"));
    p.push_back(local_model.add_parameters({hidden_dim, hidden_dim}, "h2h"));
    p.push_back(local_model.add_parameters({hidden_dim}, ParameterInitConst(0.f), "hb"));
    if (lagging) p.push_back(local_model.add_parameters({hidden_dim, hidden_dim}, "l2h"));
    params.push_back(std::move(p));
    in = hidden_dim;
  }
}

void SimpleRNNBuilder::start_new_sequence_impl(const std::vector<Expression>& h_0) {
  h.clear();
  h0 = h_0;
  for (unsigned i = 0; i < h0.size(); ++i) check_input_dim(h0[i], hidden_dim, "start_new_sequence (h_0)");
}

Expression SimpleRNNBuilder::add_auxiliary_input(const Expression& x, const Expression& aux) {
  DYNET_LITE_ARG_CHECK(lagging, "SimpleRNNBuilder::add_auxiliary_input: the builder was made without support_lags");
  check_input_dim(aux, hidden_dim, "add_auxiliary_input (aux)");
  // Goes through add_input's bookkeeping with the auxiliary term attached.
  pending_aux_ = &aux;
  Expression r;
  try {
    r = add_input(x);
  } catch (...) {
    pending_aux_ = nullptr;
    throw;
  }
  pending_aux_ = nullptr;
  return r;
}

Expression SimpleRNNBuilder::layer_step(const std::vector<Expression>& v, const Expression& in,
                                        const Expression* h_prev) {
  const Expression* aux = pending_aux_;
  Expression y;
  if (h_prev && aux)
    y = affine_transform({v[HB], v[X2H], in, v[H2H], *h_prev, v[L2H], *aux});
  else if (h_prev)
    y = affine_transform({v[HB], v[X2H], in, v[H2H], *h_prev});
  else if (aux)
    y = affine_transform({v[HB], v[X2H], in, v[L2H], *aux});
  else
    y = affine_transform({v[HB], v[X2H], in});
  return tanh(y);
}

void SimpleRNNBuilder::copy(const RNNBuilder& other) {
  const auto* o = dynamic_cast<const SimpleRNNBuilder*>(&other);
  copy_params(o, o != nullptr && o->lagging == lagging);
}

}  // namespace dynet_lite
