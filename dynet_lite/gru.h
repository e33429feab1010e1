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
class GRUBuilder : public RNNBuilder {
 public:
  GRUBuilder() = default;
  GRUBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim, ParameterCollection& model);

  Expression back() const override;
  std::vector<Expression> final_h() const override { return get_h(cur); }
  std::vector<Expression> get_h(RNNPointer p) const override;
  std::vector<Expression> final_s() const override { return final_h(); }
  std::vector<Expression> get_s(RNNPointer p) const override { return get_h(p); }
  unsigned num_h0_components() const override { return layers; }
  void copy(const RNNBuilder& params) override;
  ParameterCollection& get_parameter_collection() override { return local_model; }

  std::vector<std::vector<Parameter>> params;

 protected:
  void new_graph_impl(ComputationGraph& cg, bool update) override;
  void start_new_sequence_impl(const std::vector<Expression>& h_0) override;
  Expression add_input_impl(int prev, const Expression& x) override;
  Expression set_h_impl(int prev, const std::vector<Expression>& h_new) override;
  Expression set_s_impl(int prev, const std::vector<Expression>& s_new) override;
  const char* builder_name() const override { return "GRUBuilder"; }

 private:
  ParameterCollection local_model;
  std::vector<std::vector<Expression>> param_vars;
  std::vector<Expression> h;   ///< h[t * layers + layer]
  std::vector<Expression> h0;
  unsigned layers = 0, input_dim = 0, hidden_dim = 0;
};

}  // namespace dynet_lite
