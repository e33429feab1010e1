// Gated recurrent unit builder.
#include "dynet_lite/gru.h"

#include "dynet_lite/except.h"

namespace dynet_lite {

enum { X2Z, H2Z, BZ, X2R, H2R, BR, X2H, H2H, BH };

GRUBuilder::GRUBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim, ParameterCollection& model)
    : HiddenStateRNNBuilder("GRUBuilder", layers, input_dim, hidden_dim, model, "gru-builder") {
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

void GRUBuilder::start_new_sequence_impl(const std::vector<Expression>& h_0) {
  for (auto& e : h_0) check_input_dim(e, hidden_dim, "start_new_sequence (h_0)");
  h.clear();
  h0 = h_0;
}

Expression GRUBuilder::layer_step(const std::vector<Expression>& v, const Expression& in, const Expression* hp) {
  if (!hp) {
    // h_{t-1} = 0: the reset gate has nothing to act on.
    const Expression z = logistic(affine_transform({v[BZ], v[X2Z], in}));
    const Expression g = tanh(affine_transform({v[BH], v[X2H], in}));
    return cmult(z, g);
  }
  const Expression z = logistic(affine_transform({v[BZ], v[X2Z], in, v[H2Z], *hp}));
  const Expression r = logistic(affine_transform({v[BR], v[X2R], in, v[H2R], *hp}));
  const Expression g = tanh(affine_transform({v[BH], v[X2H], in, v[H2H], cmult(r, *hp)}));
  return cmult(1.f - z, *hp) + cmult(z, g);
}

void GRUBuilder::copy(const RNNBuilder& other) {
  const auto* o = dynamic_cast<const GRUBuilder*>(&other);
  copy_params(o, true);
}

}  // namespace dynet_lite
