#pragma once
/// \file fast-lstm.h
/// DyNet's FastLSTMBuilder: an LSTM with coupled input and forget gates.
#include "dynet_lite/lstm.h"

namespace dynet_lite {

/// DyNet's FastLSTMBuilder, per layer:
///   i = logistic(W_xi x + W_hi h_{t-1} + b_i),   f = 1 - i
///   g = tanh(W_xc x + W_hc h_{t-1} + b_c),       c_t = f * c_{t-1} + i * g
///   o = logistic(W_xo x + W_ho h_{t-1} + b_o),   h_t = o * tanh(c_t)
/// Its parameters, per layer, in DyNet's order and shapes (so a seed gives
/// DyNet's initial values): {x2i {h,in}, h2i {h,h}, c2i {h,1}, bi {h}, x2o,
/// h2o, c2o {h,1}, bo, x2c, h2c, bc}, biases zero, in the subcollection
/// "fast-lstm-builder".  The diagonal cell connections c2i and c2o are created
/// but, as in DyNet 2.1, take no part in the step (they get no gradient).
/// Dropout: variational masks on the input (d) and the previous output (d_h),
/// fixed per sequence.
class FastLSTMBuilder : public detail::LSTMBuilderBase {
 public:
  FastLSTMBuilder() = default;
  FastLSTMBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim, ParameterCollection& model);
  void copy(const RNNBuilder& other) override;

 protected:
  Expression step_layers(int prev, const Expression& x, size_t t, StepDropout drop) override;
  const char* builder_name() const override { return "FastLSTMBuilder"; }
};

}  // namespace dynet_lite
