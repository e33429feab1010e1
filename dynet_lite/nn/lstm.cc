// LSTM builders: what they share (history, state accessors, dropout masks, the
// step's bookkeeping), then the layers of each: vanilla (the fused gates / c / h
// ops; the gates one by one with layer normalisation), coupled with peepholes,
// and the compact parameterisation.
#include "dynet_lite/lstm.h"

#include "dynet_lite/backends/lstm_gates.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

// ---------------------------------------------------------------- shared history

namespace detail {

void LSTMHistory::start(const std::vector<Expression>& hinit) {
  h.clear();
  c.clear();
  h0.clear();
  c0.clear();
  if (hinit.empty()) return;
  c0.assign(hinit.begin(), hinit.begin() + layers);
  h0.assign(hinit.begin() + layers, hinit.end());
}

size_t LSTMHistory::push_step() {
  const size_t t = steps();
  h.resize((t + 1) * layers);
  c.resize((t + 1) * layers);
  return t;
}

void LSTMHistory::pop_step() {
  const size_t t = steps();
  if (t == 0) return;
  h.resize((t - 1) * layers);
  c.resize((t - 1) * layers);
}

Expression LSTMHistory::zero_state(ComputationGraph& cg) {
  if (zero_.pg != &cg || zero_.is_stale()) zero_ = zeros(cg, Dim({hidden}));
  return zero_;
}

const Expression* LSTMHistory::prev_h(int prev, unsigned layer) const {
  if (prev >= 0) return &h[static_cast<size_t>(prev) * layers + layer];
  return h0.empty() ? nullptr : &h0[layer];
}

const Expression* LSTMHistory::prev_c(int prev, unsigned layer) const {
  if (prev >= 0) return &c[static_cast<size_t>(prev) * layers + layer];
  return c0.empty() ? nullptr : &c0[layer];
}

Expression LSTMHistory::back(int cur, const char* builder) const {
  if (cur < 0) {
    DYNET_LITE_ARG_CHECK(!h0.empty(), builder << "::back: no step yet and no initial state");
    return h0.back();
  }
  return h[static_cast<size_t>(cur) * layers + layers - 1];
}

std::vector<Expression> LSTMHistory::get_h(int p, const char* builder) const {
  if (p < 0) return h0;
  DYNET_LITE_INDEX_CHECK(static_cast<size_t>(p) < steps(),
                         builder << "::get_h: state " << p << " does not exist (" << steps() << " steps)");
  return std::vector<Expression>(h.begin() + static_cast<long>(p) * layers,
                                 h.begin() + static_cast<long>(p + 1) * layers);
}

std::vector<Expression> LSTMHistory::get_s(int p, const char* builder) const {
  std::vector<Expression> r;
  if (p < 0) {
    r = c0;
    r.insert(r.end(), h0.begin(), h0.end());
    return r;
  }
  DYNET_LITE_INDEX_CHECK(static_cast<size_t>(p) < steps(),
                         builder << "::get_s: state " << p << " does not exist (" << steps() << " steps)");
  r.assign(c.begin() + static_cast<long>(p) * layers, c.begin() + static_cast<long>(p + 1) * layers);
  r.insert(r.end(), h.begin() + static_cast<long>(p) * layers, h.begin() + static_cast<long>(p + 1) * layers);
  return r;
}

namespace {
void check_state_dims(const std::vector<Expression>& es, unsigned hidden, const char* builder, const char* what) {
  for (size_t k = 0; k < es.size(); ++k) {
    const Dim d = es[k].dim();
    DYNET_LITE_DIM_CHECK(d.rows() == hidden && d.batch_size() == hidden,
                         builder << "::" << what << ": expression " << k << " has dimension " << d
                                 << ", expected {" << hidden << "}");
  }
}
}  // namespace

Expression LSTMHistory::set_h(int prev, const std::vector<Expression>& h_new, const char* builder) {
  DYNET_LITE_ARG_CHECK(h_new.size() == layers,
                       builder << "::set_h: expected " << layers << " expressions (one per layer), got "
                               << h_new.size());
  check_state_dims(h_new, hidden, builder, "set_h");
  const size_t t = push_step();
  for (unsigned i = 0; i < layers; ++i) {
    h[t * layers + i] = h_new[i];
    const Expression* pc = prev_c(prev, i);
    c[t * layers + i] = pc ? *pc : zeros(*h_new[i].pg, Dim({hidden}, h_new[i].dim().bd));
  }
  return h[t * layers + layers - 1];
}

Expression LSTMHistory::set_s(int prev, const std::vector<Expression>& s_new, const char* builder) {
  DYNET_LITE_ARG_CHECK(s_new.size() == layers || s_new.size() == 2 * layers,
                       builder << "::set_s: expected " << layers << " cells or " << 2 * layers
                               << " cells and outputs, got " << s_new.size() << " expressions");
  check_state_dims(s_new, hidden, builder, "set_s");
  const bool only_c = s_new.size() == layers;
  const size_t t = push_step();
  for (unsigned i = 0; i < layers; ++i) {
    c[t * layers + i] = s_new[i];
    if (only_c) {
      const Expression* ph = prev_h(prev, i);
      h[t * layers + i] = ph ? *ph : zeros(*s_new[i].pg, Dim({hidden}, s_new[i].dim().bd));
    } else {
      h[t * layers + i] = s_new[layers + i];
    }
  }
  return h[t * layers + layers - 1];
}

}  // namespace detail

namespace {

Expression param_expr(ComputationGraph& cg, Parameter& p, bool update) {
  return update ? parameter(cg, p) : const_parameter(cg, p);
}

/// An inverted-dropout mask: entries 1/(1-rate) with probability 1-rate, else 0.
Expression dropout_mask(ComputationGraph& cg, unsigned dim, unsigned batch, float rate) {
  const float keep = 1.f - rate;
  return random_bernoulli(cg, Dim({dim}, batch), keep, keep > 0.f ? 1.f / keep : 0.f);
}

void copy_values(std::vector<std::vector<Parameter>>& dst, const std::vector<std::vector<Parameter>>& src,
                 const char* builder) {
  DYNET_LITE_ARG_CHECK(dst.size() == src.size(), builder << "::copy: " << src.size() << " layers, expected "
                                                         << dst.size());
  for (size_t i = 0; i < dst.size(); ++i) {
    DYNET_LITE_ARG_CHECK(dst[i].size() == src[i].size(), builder << "::copy: layer " << i << " differs");
    for (size_t j = 0; j < dst[i].size(); ++j) {
      DYNET_LITE_DIM_CHECK(dst[i][j].dim() == src[i][j].dim(), builder << "::copy: parameter " << j
                                                                       << " of layer " << i << " is "
                                                                       << src[i][j].dim() << ", expected "
                                                                       << dst[i][j].dim());
      dst[i][j].set_value(as_vector(src[i][j].get_storage().values));
    }
  }
}

}  // namespace

// ---------------------------------------------------------------- what the builders share

namespace detail {

LSTMBuilderBase::LSTMBuilderBase(const char* builder, unsigned layers, unsigned input_dim, unsigned hidden_dim,
                                 ParameterCollection& model, const char* collection, bool drops_cells)
    : layers(layers), input_dim(input_dim), hid(hidden_dim), drops_cells(drops_cells) {
  DYNET_LITE_ARG_CHECK(layers > 0 && input_dim > 0 && hidden_dim > 0,
                       builder << ": layers, input_dim and hidden_dim must be positive, got " << layers << ", "
                               << input_dim << ", " << hidden_dim);
  local_model = model.add_subcollection(collection);
  hist.layers = layers;
  hist.hidden = hidden_dim;
}

void LSTMBuilderBase::new_graph_impl(ComputationGraph& cg, bool update) {
  param_vars.resize(layers);
  for (unsigned i = 0; i < layers; ++i) {
    param_vars[i].clear();
    for (auto& p : params[i]) param_vars[i].push_back(param_expr(cg, p, update));
  }
}

void LSTMBuilderBase::start_new_sequence_impl(const std::vector<Expression>& h_0) {
  check_state_dims(h_0, hid, builder_name(), "start_new_sequence (h_0)");
  hist.start(h_0);
  dropout_masks_valid = false;
}

void LSTMBuilderBase::check_rate(float d, const char* what) const {
  DYNET_LITE_ARG_CHECK(d >= 0.f && d <= 1.f,
                       builder_name() << "::" << what << ": rate " << d << " is not a probability in [0, 1]");
}

void LSTMBuilderBase::set_dropout(float d) {
  check_rate(d, "set_dropout");
  dropout_rate = dropout_rate_h = d;
  if (drops_cells) dropout_rate_c = d;
}

void LSTMBuilderBase::set_dropout(float d, float d_h) {
  check_rate(d, "set_dropout");
  check_rate(d_h, "set_dropout");
  dropout_rate = d;
  dropout_rate_h = d_h;
}

void LSTMBuilderBase::disable_dropout() { dropout_rate = dropout_rate_h = dropout_rate_c = 0.f; }

void LSTMBuilderBase::set_dropout_masks(unsigned batch_size) {
  check_graph("set_dropout_masks");
  mask_x.clear();
  mask_h.clear();
  mask_c.clear();
  for (unsigned i = 0; i < layers; ++i) {
    if (dropout_rate > 0.f) mask_x.push_back(dropout_mask(*graph_, i == 0 ? input_dim : hid, batch_size, dropout_rate));
    if (dropout_rate_h > 0.f) mask_h.push_back(dropout_mask(*graph_, hid, batch_size, dropout_rate_h));
    if (dropout_rate_c > 0.f) mask_c.push_back(dropout_mask(*graph_, hid, batch_size, dropout_rate_c));
  }
  dropout_masks_valid = true;
}

Expression LSTMBuilderBase::add_input_impl(int prev, const Expression& x) {
  check_input_dim(x, input_dim, "add_input");
  if ((dropout_rate > 0.f || dropout_rate_h > 0.f || dropout_rate_c > 0.f) && !dropout_masks_valid)
    set_dropout_masks(x.dim().bd);
  StepDropout drop;
  drop.x = dropout_rate > 0.f && mask_x.size() == layers;
  drop.h = dropout_rate_h > 0.f && mask_h.size() == layers;
  drop.c = dropout_rate_c > 0.f && mask_c.size() == layers;
  const size_t t = hist.push_step();
  try {
    return step_layers(prev, x, t, drop);
  } catch (...) {
    hist.pop_step();
    throw;
  }
}

Expression LSTMBuilderBase::set_h_impl(int prev, const std::vector<Expression>& h_new) {
  return hist.set_h(prev, h_new, builder_name());
}

Expression LSTMBuilderBase::set_s_impl(int prev, const std::vector<Expression>& s_new) {
  return hist.set_s(prev, s_new, builder_name());
}

void LSTMBuilderBase::copy_params(const LSTMBuilderBase* other) {
  DYNET_LITE_ARG_CHECK(other != nullptr, builder_name() << "::copy: the other builder is not a " << builder_name());
  copy_values(params, other->params, builder_name());
}

}  // namespace detail

// ---------------------------------------------------------------- VanillaLSTMBuilder

enum { V_X2I, V_H2I, V_BI };
enum { LN_GH, LN_BH, LN_GX, LN_BX, LN_GC, LN_BC };

VanillaLSTMBuilder::VanillaLSTMBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim,
                                       ParameterCollection& model, bool ln_lstm, float forget_bias)
    : LSTMBuilderBase("VanillaLSTMBuilder", layers, input_dim, hidden_dim, model, "vanilla-lstm-builder", false),
      ln_lstm(ln_lstm),
      forget_bias(forget_bias) {
  unsigned in = input_dim;
  for (unsigned i = 0; i < layers; ++i) {
    params.push_back({local_model.add_parameters({hidden_dim * 4, in}, "x2i"),
                      local_model.add_parameters({hidden_dim * 4, hidden_dim}, "h2i"),
                      local_model.add_parameters({hidden_dim * 4}, ParameterInitConst(0.f), "bi")});
    if (ln_lstm) {
      ln_params.push_back({local_model.add_parameters({hidden_dim * 4}, ParameterInitConst(1.f), "gh"),
                           local_model.add_parameters({hidden_dim * 4}, ParameterInitConst(0.f), "bh"),
                           local_model.add_parameters({hidden_dim * 4}, ParameterInitConst(1.f), "gx"),
                           local_model.add_parameters({hidden_dim * 4}, ParameterInitConst(0.f), "bx"),
                           local_model.add_parameters({hidden_dim}, ParameterInitConst(1.f), "gc"),
                           local_model.add_parameters({hidden_dim}, ParameterInitConst(0.f), "bc")});
    }
    in = hidden_dim;
  }
}

void VanillaLSTMBuilder::new_graph_impl(ComputationGraph& cg, bool update) {
  param_vars.resize(layers);
  ln_param_vars.resize(ln_lstm ? layers : 0);
  // The forget bias is folded into the bias once per graph: b + [0; fb; 0; 0].
  // The fused gates op adds DyNet's 1 itself, so without layer normalisation
  // only the rest of forget_bias is folded.
  const float extra = ln_lstm ? forget_bias : forget_bias - lstm_gates::kForgetGateBias;
  Expression fb;
  if (extra != 0.f) {
    std::vector<float> v(4 * hid, 0.f);
    for (unsigned k = hid; k < 2 * hid; ++k) v[k] = extra;
    fb = input(cg, Dim({4 * hid}), v);
  }
  for (unsigned i = 0; i < layers; ++i) {
    auto& p = params[i];
    Expression b = param_expr(cg, p[V_BI], update);
    if (extra != 0.f) b = b + fb;
    param_vars[i] = {param_expr(cg, p[V_X2I], update), param_expr(cg, p[V_H2I], update), b};
    if (ln_lstm) {
      ln_param_vars[i].clear();
      for (auto& q : ln_params[i]) ln_param_vars[i].push_back(param_expr(cg, q, update));
    }
  }
}

Expression VanillaLSTMBuilder::step_layers(int prev, const Expression& x, size_t t, StepDropout drop) {
  Expression in = x;
  for (unsigned i = 0; i < layers; ++i) {
    const std::vector<Expression>& v = param_vars[i];
    const Expression* hp = hist.prev_h(prev, i);
    const Expression* cp = hist.prev_c(prev, i);
    if (drop.x) in = cmult(in, mask_x[i]);
    Expression h_tm1;
    if (hp) h_tm1 = drop.h ? cmult(*hp, mask_h[i]) : *hp;
    if (!ln_lstm) {
      // The same function through the fused ops: three nodes a step instead of
      // fourteen, and the element-wise work done in one pass each.  No previous
      // state reads as the graph's shared zero state.
      if (!hp) h_tm1 = hist.zero_state(*graph_);
      Expression gates = vanilla_lstm_gates(in, h_tm1, v[V_X2I], v[V_H2I], v[V_BI]);
      graph_->node(gates.i).internal = true;  // no caller sees it: its gradient's memory may be reused
      Expression ct = hist.c[t * layers + i] = vanilla_lstm_c(cp ? *cp : hist.zero_state(*graph_), gates);
      in = hist.h[t * layers + i] = vanilla_lstm_h(ct, gates);
      continue;
    }
    // Layer normalisation of each product, then the gates one by one.
    const std::vector<Expression>& ln = ln_param_vars[i];
    Expression tx = layer_norm(v[V_X2I] * in, ln[LN_GX], ln[LN_BX]);
    Expression pre = hp ? v[V_BI] + tx + layer_norm(v[V_H2I] * h_tm1, ln[LN_GH], ln[LN_BH]) : v[V_BI] + tx;
    Expression gi = logistic(pick_range(pre, 0, hid));
    Expression go = logistic(pick_range(pre, 2 * hid, 3 * hid));
    Expression gg = tanh(pick_range(pre, 3 * hid, 4 * hid));
    Expression ct;
    if (cp) {
      Expression gf = logistic(pick_range(pre, hid, 2 * hid));
      ct = cmult(gf, *cp) + cmult(gi, gg);
    } else {
      ct = cmult(gi, gg);
    }
    hist.c[t * layers + i] = ct;
    in = hist.h[t * layers + i] = cmult(go, tanh(layer_norm(ct, ln[LN_GC], ln[LN_BC])));
  }
  return in;
}

void VanillaLSTMBuilder::copy(const RNNBuilder& other) {
  const auto* o = dynamic_cast<const VanillaLSTMBuilder*>(&other);
  copy_params(o);
  copy_values(ln_params, o->ln_params, "VanillaLSTMBuilder");
}

// ---------------------------------------------------------------- CoupledLSTMBuilder

enum { X2I, H2I, C2I, BI, X2O, H2O, C2O, BO, X2C, H2C, BC };

CoupledLSTMBuilder::CoupledLSTMBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim,
                                       ParameterCollection& model)
    : LSTMBuilderBase("CoupledLSTMBuilder", layers, input_dim, hidden_dim, model, "coupled-lstm-builder", true) {
  unsigned in = input_dim;
  const unsigned h = hidden_dim;
  for (unsigned i = 0; i < layers; ++i) {
    params.push_back({local_model.add_parameters({h, in}, "x2i"), local_model.add_parameters({h, h}, "h2i"),
                      local_model.add_parameters({h, h}, "c2i"),
                      local_model.add_parameters({h}, ParameterInitConst(0.f), "bi"),
                      local_model.add_parameters({h, in}, "x2o"), local_model.add_parameters({h, h}, "h2o"),
                      local_model.add_parameters({h, h}, "c2o"),
                      local_model.add_parameters({h}, ParameterInitConst(0.f), "bo"),
                      local_model.add_parameters({h, in}, "x2c"), local_model.add_parameters({h, h}, "h2c"),
                      local_model.add_parameters({h}, ParameterInitConst(0.f), "bc")});
    in = hidden_dim;
  }
}

void CoupledLSTMBuilder::set_dropout(float d, float d_h, float d_c) {
  check_rate(d, "set_dropout");
  check_rate(d_h, "set_dropout");
  check_rate(d_c, "set_dropout");
  dropout_rate = d;
  dropout_rate_h = d_h;
  dropout_rate_c = d_c;
}

Expression CoupledLSTMBuilder::step_layers(int prev, const Expression& x, size_t t, StepDropout drop) {
  Expression in = x;
  for (unsigned i = 0; i < layers; ++i) {
    const std::vector<Expression>& v = param_vars[i];
    const Expression* hp = hist.prev_h(prev, i);
    const Expression* cp = hist.prev_c(prev, i);
    if (drop.x) in = cmult(in, mask_x[i]);
    Expression h_tm1, c_tm1;
    if (hp) h_tm1 = drop.h ? cmult(*hp, mask_h[i]) : *hp;
    if (cp) c_tm1 = drop.c ? cmult(*cp, mask_c[i]) : *cp;
    // input gate (the forget gate is 1 - i)
    Expression ai;
    if (hp && cp)
      ai = affine_transform({v[BI], v[X2I], in, v[H2I], h_tm1, v[C2I], c_tm1});
    else if (hp)
      ai = affine_transform({v[BI], v[X2I], in, v[H2I], h_tm1});
    else if (cp)
      ai = affine_transform({v[BI], v[X2I], in, v[C2I], c_tm1});
    else
      ai = affine_transform({v[BI], v[X2I], in});
    Expression gi = logistic(ai);
    // candidate
    Expression ag = hp ? affine_transform({v[BC], v[X2C], in, v[H2C], h_tm1}) : affine_transform({v[BC], v[X2C], in});
    Expression gg = tanh(ag);
    Expression ct = cp ? cmult(1.f - gi, c_tm1) + cmult(gi, gg) : cmult(gi, gg);
    hist.c[t * layers + i] = ct;
    // output gate, peeping at the new cell
    Expression ao = hp ? affine_transform({v[BO], v[X2O], in, v[H2O], h_tm1, v[C2O], ct})
                       : affine_transform({v[BO], v[X2O], in, v[C2O], ct});
    in = hist.h[t * layers + i] = cmult(logistic(ao), tanh(ct));
  }
  return in;
}

void CoupledLSTMBuilder::copy(const RNNBuilder& other) { copy_params(dynamic_cast<const CoupledLSTMBuilder*>(&other)); }

// ---------------------------------------------------------------- CompactVanillaLSTMBuilder

CompactVanillaLSTMBuilder::CompactVanillaLSTMBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim,
                                                     ParameterCollection& model)
    : LSTMBuilderBase("CompactVanillaLSTMBuilder", layers, input_dim, hidden_dim, model, "compact-vanilla-lstm-builder",
                      false) {
  unsigned in = input_dim;
  for (unsigned i = 0; i < layers; ++i) {
    params.push_back({local_model.add_parameters({hidden_dim * 4, in}, "Wx"),
                      local_model.add_parameters({hidden_dim * 4, hidden_dim}, "Wh"),
                      local_model.add_parameters({hidden_dim * 4}, ParameterInitConst(0.f), "b")});
    in = hidden_dim;
  }
}

void CompactVanillaLSTMBuilder::set_weightnoise(float std) {
  DYNET_LITE_ARG_CHECK(std >= 0.f, "CompactVanillaLSTMBuilder::set_weightnoise: standard deviation " << std
                                                                                                   << " < 0");
  weightnoise_std = std;
}

Expression CompactVanillaLSTMBuilder::step_layers(int prev, const Expression& x, size_t t, StepDropout drop) {
  Expression in = x;
  for (unsigned i = 0; i < layers; ++i) {
    const std::vector<Expression>& v = param_vars[i];
    // No previous state reads as the graph's shared zero state (a batch of 1,
    // broadcast by the fused ops).
    const Expression* hp = hist.prev_h(prev, i);
    const Expression* cp = hist.prev_c(prev, i);
    Expression h_tm1 = hp ? *hp : hist.zero_state(*graph_);
    Expression c_tm1 = cp ? *cp : hist.zero_state(*graph_);
    // The fused gates op applies the weight noise itself (fresh at every step).
    Expression gates;
    if (drop.x && drop.h)
      gates = vanilla_lstm_gates_dropout(in, h_tm1, v[0], v[1], v[2], mask_x[i], mask_h[i], weightnoise_std);
    else
      gates = vanilla_lstm_gates(drop.x ? cmult(in, mask_x[i]) : in, drop.h ? cmult(h_tm1, mask_h[i]) : h_tm1, v[0],
                                 v[1], v[2], weightnoise_std);
    graph_->node(gates.i).internal = true;  // no caller sees it: its gradient's memory may be reused
    Expression ct = hist.c[t * layers + i] = vanilla_lstm_c(c_tm1, gates);
    in = hist.h[t * layers + i] = vanilla_lstm_h(ct, gates);
  }
  return in;
}

void CompactVanillaLSTMBuilder::copy(const RNNBuilder& other) {
  copy_params(dynamic_cast<const CompactVanillaLSTMBuilder*>(&other));
}

}  // namespace dynet_lite
