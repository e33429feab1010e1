// Gated recurrent unit builder.
#include "dynet_lite/gru.h"

#include "dynet_lite/except.h"

namespace dynet_lite {

enum { X2Z, H2Z, BZ, X2R, H2R, BR, X2H, H2H, BH };

GRUBuilder::GRUBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim, ParameterCollection& model)
    : layers(layers), input_dim(input_dim), hidden_dim(hidden_dim) {
  DYNET_LITE_ARG_CHECK(layers > 0 && input_dim > 0 && hidden_dim > 0,
                       "GRUBuilder: layers, input_dim and hidden_dim must be positive, got "
                           << layers << ", " << input_dim << ", " << hidden_dim);
  local_model = model.add_subcollection("gru-builder");
  unsigned in = input_dim;
  const unsigned hd = hidden_dim;
  for (unsigned i = 0; i < layers; ++i) {
    params.push_back({local_model.add_parameters({hd, in}, "x2z"), local_model.add_parameters({hd, hd}, "h2z"),
                      local_model.add_parameters({hd}, ParameterInitConst(0.f), "bz"),
                      local_model.add_parameters({hd, in}, "x2r"), local_model.add_parameters({hd, hd}, "h2r"),
                      local_model.add_parameters({hd}, ParameterInitConst(0.f), "br"),
                      local_model.add_parameters({hd, in}, "x2h"), local_model.add_parameters({hd, hd}, "h2h"),
                      local_model.add_parameters({hd}, ParameterInitConst(0.f), "bh")});
    in = hidden_dim;
  }
}

void GRUBuilder::new_graph_impl(ComputationGraph& cg, bool update) {
  param_vars.resize(layers);
  for (unsigned i = 0; i < layers; ++i) {
    param_vars[i].clear();
    for (auto& p : params[i]) param_vars[i].push_back(update ? parameter(cg, p) : const_parameter(cg, p));
  }
}

void GRUBuilder::start_new_sequence_impl(const std::vector<Expression>& h_0) {
  for (auto& e : h_0) check_input_dim(e, hidden_dim, "start_new_sequence (h_0)");
  h.clear();
  h0 = h_0;
}

Expression GRUBuilder::add_input_impl(int prev, const Expression& x) {
  check_input_dim(x, input_dim, "add_input");
  const size_t t = h.size() / layers;
  h.resize((t + 1) * layers);
  Expression in = x;
  try {
    for (unsigned i = 0; i < layers; ++i) {
      const std::vector<Expression>& v = param_vars[i];
      if (dropout_rate > 0.f) in = dropout(in, dropout_rate);
      const Expression* hp = nullptr;
      if (prev >= 0)
        hp = &h[static_cast<size_t>(prev) * layers + i];
      else if (!h0.empty())
        hp = &h0[i];
      Expression z, r, g;
      if (hp) {
        z = logistic(affine_transform({v[BZ], v[X2Z], in, v[H2Z], *hp}));
        r = logistic(affine_transform({v[BR], v[X2R], in, v[H2R], *hp}));
        g = tanh(affine_transform({v[BH], v[X2H], in, v[H2H], cmult(r, *hp)}));
        in = cmult(1.f - z, *hp) + cmult(z, g);
      } else {
        // h_{t-1} = 0: the reset gate has nothing to act on.
        z = logistic(affine_transform({v[BZ], v[X2Z], in}));
        g = tanh(affine_transform({v[BH], v[X2H], in}));
        in = cmult(z, g);
      }
      h[t * layers + i] = in;
    }
  } catch (...) {
    h.resize(t * layers);
    throw;
  }
  return in;
}

Expression GRUBuilder::set_h_impl(int, const std::vector<Expression>& h_new) {
  DYNET_LITE_ARG_CHECK(h_new.size() == layers, "GRUBuilder::set_h: expected " << layers
                                                   << " expressions (one per layer), got " << h_new.size());
  for (auto& e : h_new) check_input_dim(e, hidden_dim, "set_h");
  h.insert(h.end(), h_new.begin(), h_new.end());
  return h.back();
}

Expression GRUBuilder::set_s_impl(int prev, const std::vector<Expression>& s_new) { return set_h_impl(prev, s_new); }

Expression GRUBuilder::back() const {
  if (cur.t < 0) {
    DYNET_LITE_ARG_CHECK(!h0.empty(), "GRUBuilder::back: no step yet and no initial state");
    return h0.back();
  }
  return h[static_cast<size_t>(cur.t) * layers + layers - 1];
}

std::vector<Expression> GRUBuilder::get_h(RNNPointer p) const {
  if (p.t < 0) return h0;
  DYNET_LITE_INDEX_CHECK(static_cast<size_t>(p.t) < h.size() / layers,
                         "GRUBuilder::get_h: state " << p.t << " does not exist");
  return std::vector<Expression>(h.begin() + static_cast<long>(p.t) * layers,
                                 h.begin() + static_cast<long>(p.t + 1) * layers);
}

void GRUBuilder::copy(const RNNBuilder& other) {
  const auto* o = dynamic_cast<const GRUBuilder*>(&other);
  DYNET_LITE_ARG_CHECK(o != nullptr, "GRUBuilder::copy: the other builder is not a GRUBuilder");
  DYNET_LITE_ARG_CHECK(o->layers == layers && o->input_dim == input_dim && o->hidden_dim == hidden_dim,
                       "GRUBuilder::copy: sizes differ (layers " << o->layers << " vs " << layers << ", input "
                                                                 << o->input_dim << " vs " << input_dim
                                                                 << ", hidden " << o->hidden_dim << " vs "
                                                                 << hidden_dim << ")");
  for (size_t i = 0; i < params.size(); ++i)
    for (size_t j = 0; j < params[i].size(); ++j)
      params[i][j].set_value(as_vector(o->params[i][j].get_storage().values));
}

}  // namespace dynet_lite
