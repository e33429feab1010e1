#pragma once
/// \file gru.h
/// Gated recurrent unit (Cho et al. 2014), DyNet's GRUBuilder.
#include <vector>

#include "dynet_lite/rnn.h"

namespace dynet_lite {

/// Per layer:
///   z = logistic(W_xz x + W_hz h_{t-1} + b_z)          (update gate)
///   r = logistic(W_xr x + W_hr h_{t-1} + b_r)          (reset gate)
///   g = tanh(W_xh x + W_hh (r * h_{t-1}) + b_h)
///   h_t = (1 - z) * h_{t-1} + z * g
/// Parameters per layer: {x2z, h2z, bz, x2r, h2r, br, x2h, h2h, bh}.  The initial
/// state holds one expression per layer.  set_dropout(d) drops the input of every
/// layer (a fresh mask every step).
class GRUBuilder : public detail::HiddenStateRNNBuilder {
 public:
  GRUBuilder() = default;
  GRUBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim, ParameterCollection& model);

  void copy(const RNNBuilder& params) override;

  using HiddenStateRNNBuilder::params;

 protected:
  void start_new_sequence_impl(const std::vector<Expression>& h_0) override;
  Expression layer_step(const std::vector<Expression>& v, const Expression& in, const Expression* h_prev) override;
  const char* builder_name() const override { return "GRUBuilder"; }
};

}  // namespace dynet_lite
