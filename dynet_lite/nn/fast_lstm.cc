// FastLSTMBuilder: coupled input and forget gates, no peepholes.
#include "dynet_lite/fast-lstm.h"

#include "dynet_lite/param-init.h"

namespace dynet_lite {

namespace {
enum { X2I, H2I, C2I, BI, X2O, H2O, C2O, BO, X2C, H2C, BC };
}  // namespace

FastLSTMBuilder::FastLSTMBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim, ParameterCollection& model)
    : LSTMBuilderBase("FastLSTMBuilder", layers, input_dim, hidden_dim, model, "fast-lstm-builder", false) {
  unsigned in = input_dim;
  const unsigned h = hidden_dim;
  // Unnamed, as DyNet's, so that saved models use the same keys.
  for (unsigned i = 0; i < layers; ++i) {
    std::vector<Parameter> ps;
    for (unsigned gate = 0; gate < 3; ++gate) {  // i, o, then the candidate c
      ps.push_back(local_model.add_parameters({h, in}));
      ps.push_back(local_model.add_parameters({h, h}));
      if (gate < 2) ps.push_back(local_model.add_parameters({h, 1}));
      ps.push_back(local_model.add_parameters({h}, ParameterInitConst(0.f)));
    }
    params.push_back(ps);
    in = hidden_dim;
  }
}

Expression FastLSTMBuilder::step_layers(int prev, const Expression& x, size_t t, StepDropout drop) {
  Expression in = x;
  for (unsigned i = 0; i < layers; ++i) {
    const std::vector<Expression>& v = param_vars[i];
    const Expression* hp = hist.prev_h(prev, i);
    const Expression* cp = hist.prev_c(prev, i);
    if (drop.x) in = cmult(in, mask_x[i]);
    Expression h_tm1;
    if (hp) h_tm1 = drop.h ? cmult(*hp, mask_h[i]) : *hp;
    // W b + W_x x (+ W_h h_{t-1} when there is a previous output)
    auto gate = [&](unsigned b, unsigned wx, unsigned wh) {
      return hp ? affine_transform({v[b], v[wx], in, v[wh], h_tm1}) : affine_transform({v[b], v[wx], in});
    };
    Expression gi = logistic(gate(BI, X2I, H2I));
    Expression gg = tanh(gate(BC, X2C, H2C));
    Expression ct = cp ? cmult(1.f - gi, *cp) + cmult(gi, gg) : cmult(gi, gg);
    hist.c[t * layers + i] = ct;
    in = hist.h[t * layers + i] = cmult(logistic(gate(BO, X2O, H2O)), tanh(ct));
  }
  return in;
}

void FastLSTMBuilder::copy(const RNNBuilder& other) { copy_params(dynamic_cast<const FastLSTMBuilder*>(&other)); }

}  // namespace dynet_lite
