#pragma once
/// \file lstm.h
/// LSTM builders (DyNet's): VanillaLSTMBuilder (the standard LSTM, also called
/// LSTMBuilder), CoupledLSTMBuilder (coupled input/forget gates with peepholes)
/// and CompactVanillaLSTMBuilder (vanilla maths on DyNet's fused gate kernels,
/// whose forget gate has a bias of 1).
///
/// The state of every layer is a memory cell c and an output h.  The initial
/// state h_0 given to start_new_sequence holds 2 * layers expressions: the cells
/// of layers 0..L-1, then the outputs of layers 0..L-1 (DyNet's layout); empty
/// means zeros.  final_s() / get_s() use the same layout.
#include <vector>

#include "dynet_lite/rnn.h"

namespace dynet_lite {

namespace detail {
/// The per-step states of an LSTM-like builder, stored flat (step-major) so a
/// step costs no allocation once the vectors have grown.
struct LSTMHistory {
  unsigned layers = 0, hidden = 0;
  std::vector<Expression> h, c;    ///< [t * layers + layer]
  std::vector<Expression> h0, c0;  ///< empty: zero initial state

  size_t steps() const { return layers ? h.size() / layers : 0; }
  /// Clears the history and takes the initial state (cells, then outputs).
  void start(const std::vector<Expression>& hinit);
  /// Appends room for one step and returns its index.
  size_t push_step();
  /// Drops the latest step (when building it failed).
  void pop_step();
  /// State of `layer` before a step from `prev`; nullptr means zero.
  const Expression* prev_h(int prev, unsigned layer) const;
  const Expression* prev_c(int prev, unsigned layer) const;
  Expression back(int cur, const char* builder) const;
  std::vector<Expression> get_h(int p, const char* builder) const;
  std::vector<Expression> get_s(int p, const char* builder) const;
  /// A new step with the outputs h_new and the cells of `prev` (zeros when none).
  Expression set_h(int prev, const std::vector<Expression>& h_new, const char* builder);
  /// A new step with the cells (and outputs when 2 * layers are given) s_new.
  Expression set_s(int prev, const std::vector<Expression>& s_new, const char* builder);
  /// The zero state {hidden} of graph `cg`: one node shared by every sequence and
  /// layer of the graph, so that the first steps of a batch of sequences pass it
  /// once (broadcast) instead of stacking a column of zeros per sequence, and the
  /// fused gates skip W_h h for it (ops/lstm.cc).
  Expression zero_state(ComputationGraph& cg);

 private:
  Expression zero_;
};

/// What the three LSTM builders share: their parameters per layer, the history
/// of cells and outputs (with DyNet's state accessors over it), variational
/// dropout masks fixed per sequence, and the step's bookkeeping.  A builder adds
/// the per-layer maths (step_layers) and, where its bias is not a plain
/// parameter, its own new_graph_impl.
class LSTMBuilderBase : public RNNBuilder {
 public:
  /// Dropout rate d on the inputs and on the recurrent states (and on the
  /// previous cells, for a builder that drops them).
  void set_dropout(float d) override;
  /// Dropout rate d on the inputs and d_h on the recurrent states.
  void set_dropout(float d, float d_h);
  void disable_dropout() override;
  /// Draws new masks for batches of `batch_size` (done automatically at the first
  /// step of each sequence).
  void set_dropout_masks(unsigned batch_size = 1);

  Expression back() const override { return hist.back(cur, builder_name()); }
  std::vector<Expression> final_h() const override { return hist.get_h(cur, builder_name()); }
  std::vector<Expression> get_h(RNNPointer p) const override { return hist.get_h(p, builder_name()); }
  std::vector<Expression> final_s() const override { return hist.get_s(cur, builder_name()); }
  std::vector<Expression> get_s(RNNPointer p) const override { return hist.get_s(p, builder_name()); }
  unsigned num_h0_components() const override { return 2 * layers; }
  ParameterCollection& get_parameter_collection() override { return local_model; }

  /// Parameters per layer, in the order each builder documents.
  std::vector<std::vector<Parameter>> params;

 protected:
  LSTMBuilderBase() = default;
  /// Checks the sizes (naming `builder` in the error) and makes the builder's
  /// subcollection `collection` of `model`.  `drops_cells`: set_dropout(d) also
  /// drops the previous cells.
  LSTMBuilderBase(const char* builder, unsigned layers, unsigned input_dim, unsigned hidden_dim,
                  ParameterCollection& model, const char* collection, bool drops_cells);

  /// Which masks apply to the step being built.
  struct StepDropout {
    bool x = false, h = false, c = false;
  };
  /// The layers of one step from state `prev`: writes cell and output of every
  /// layer at hist index `t` and returns the top layer's output.
  virtual Expression step_layers(int prev, const Expression& x, size_t t, StepDropout drop) = 0;

  /// Adds every parameter to `cg` (as constants when `update` is false).
  void new_graph_impl(ComputationGraph& cg, bool update) override;
  void start_new_sequence_impl(const std::vector<Expression>& h_0) override;
  Expression add_input_impl(int prev, const Expression& x) override;
  Expression set_h_impl(int prev, const std::vector<Expression>& h_new) override;
  Expression set_s_impl(int prev, const std::vector<Expression>& s_new) override;
  /// Checks a dropout rate (naming `what` in the error).
  void check_rate(float d, const char* what) const;
  /// For copy(): copies the values of `other`'s params, `other` being the other
  /// builder cast to this builder's class (nullptr, an error, when it is not one).
  void copy_params(const LSTMBuilderBase* other);

  ParameterCollection local_model;
  std::vector<std::vector<Expression>> param_vars;  ///< per graph
  std::vector<Expression> mask_x, mask_h, mask_c;   ///< per layer, when the rate is > 0
  LSTMHistory hist;
  unsigned layers = 0, input_dim = 0, hid = 0;
  float dropout_rate_h = 0.f, dropout_rate_c = 0.f;
  bool drops_cells = false;
  bool dropout_masks_valid = false;
};
}  // namespace detail

/// The standard LSTM (Hochreiter & Schmidhuber 1997 with a forget gate, no
/// peepholes), per layer:
///   [i; f; o; g] = [W_x W_h] [x; h_{t-1}] + b    (one affine_transform)
///   i, f, o = logistic(.) (forget_bias added to f's pre-activation), g = tanh(.)
///   c_t = f * c_{t-1} + i * g,   h_t = o * tanh(c_t)
/// Parameters per layer: W_x {4h, in}, W_h {4h, h}, b {4h} (zeros), gate rows in
/// the order i, f, o, g.  With ln_lstm, the W_x x and W_h h terms and the cell go
/// through layer normalisation (Ba et al. 2016).
///
/// Dropout is variational (Gal & Ghahramani 2016): one mask for the inputs and one
/// for the recurrent outputs of every layer, drawn at the first step of a sequence
/// (or by set_dropout_masks) and kept for the whole sequence.
class VanillaLSTMBuilder : public detail::LSTMBuilderBase {
 public:
  VanillaLSTMBuilder() = default;
  VanillaLSTMBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim, ParameterCollection& model,
                     bool ln_lstm = false, float forget_bias = 1.f);

  void copy(const RNNBuilder& other) override;

  // params per layer: {W_x, W_h, b}; with ln_lstm also ln_params per layer:
  // {g_h, b_h, g_x, b_x, g_c, b_c}.
  std::vector<std::vector<Parameter>> ln_params;

 protected:
  void new_graph_impl(ComputationGraph& cg, bool update) override;
  Expression step_layers(int prev, const Expression& x, size_t t, StepDropout drop) override;
  const char* builder_name() const override { return "VanillaLSTMBuilder"; }

 private:
  std::vector<std::vector<Expression>> ln_param_vars;
  bool ln_lstm = false;
  float forget_bias = 1.f;
};

/// DyNet 2's default LSTM.
using LSTMBuilder = VanillaLSTMBuilder;

/// LSTM with coupled input and forget gates and peephole connections (DyNet's
/// CoupledLSTMBuilder, after Greff et al. 2015), per layer:
///   i = logistic(W_xi x + W_hi h_{t-1} + W_ci c_{t-1} + b_i),   f = 1 - i
///   g = tanh(W_xc x + W_hc h_{t-1} + b_c)
///   c_t = f * c_{t-1} + i * g
///   o = logistic(W_xo x + W_ho h_{t-1} + W_co c_t + b_o),       h_t = o * tanh(c_t)
/// Dropout: variational masks on the input (d), the previous output (d_h) and the
/// previous cell (d_c), fixed per sequence.
class CoupledLSTMBuilder : public detail::LSTMBuilderBase {
 public:
  CoupledLSTMBuilder() = default;
  CoupledLSTMBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim, ParameterCollection& model);

  /// Dropout rate d on the input, the previous output and the previous cell.
  void set_dropout(float d) override { LSTMBuilderBase::set_dropout(d); }
  /// Dropout rates on the input (d), the previous output (d_h) and the previous cell (d_c).
  void set_dropout(float d, float d_h, float d_c);
  void copy(const RNNBuilder& other) override;

  // params per layer: {x2i, h2i, c2i, bi, x2o, h2o, c2o, bo, x2c, h2c, bc}.

 protected:
  Expression step_layers(int prev, const Expression& x, size_t t, StepDropout drop) override;
  const char* builder_name() const override { return "CoupledLSTMBuilder"; }
};

/// The vanilla LSTM with DyNet's compact parameterisation (W_x {4h, in}, W_h {4h, h},
/// b {4h}, gates i, f, o, g; the fused op's forget bias of 1), variational dropout and optional
/// Gaussian weight noise.  Built from the fused vanilla_lstm_gates / _c / _h ops.
class CompactVanillaLSTMBuilder : public detail::LSTMBuilderBase {
 public:
  CompactVanillaLSTMBuilder() = default;
  CompactVanillaLSTMBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim, ParameterCollection& model);

  /// Standard deviation of Gaussian noise added to W_x, W_h and b at every step
  /// (0 turns it off).
  void set_weightnoise(float std);
  void copy(const RNNBuilder& other) override;

  // params per layer: {W_x, W_h, b}.

 protected:
  Expression step_layers(int prev, const Expression& x, size_t t, StepDropout drop) override;
  const char* builder_name() const override { return "CompactVanillaLSTMBuilder"; }

 private:
  float weightnoise_std = 0.f;
};

}  // namespace dynet_lite
