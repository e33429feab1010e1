#pragma once
/// \file rnn.h
/// Recurrent builders: the abstract RNNBuilder interface (DyNet's) and the
/// Elman network SimpleRNNBuilder.
///
/// A builder owns its parameters (in a subcollection of the model it was given).
/// Per graph: new_graph(cg) adds the parameters to the graph; per sequence:
/// start_new_sequence(h_0); per step: add_input(x) returns the top layer's output.
/// Each step remembers its predecessor, so add_input(prev, x) branches from any
/// earlier state (beam search, trees) and rewind_one_step() goes back.
#include <vector>

#include "dynet_lite/dynet.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/model.h"

namespace dynet_lite {

/// A position in a builder's history: -1 is the initial state, t >= 0 the state
/// after the t-th add_input / set_h / set_s of the current sequence.
struct RNNPointer {
  RNNPointer() : t() {}
  RNNPointer(int i) : t(i) {}  // NOLINT: implicit, as in DyNet
  operator int() const { return t; }
  int t;
};

/// The interface of every recurrent builder.
class RNNBuilder {
 public:
  RNNBuilder() = default;
  virtual ~RNNBuilder();

  /// The current position (the state after the latest step).
  RNNPointer state() const { return cur; }

  /// Adds the parameters to `cg` (as constants when `update` is false).  Must be
  /// called once for every new graph before start_new_sequence.
  void new_graph(ComputationGraph& cg, bool update = true);
  /// Starts a sequence from the initial state `h_0` (zeros when empty); see
  /// num_h0_components() for its layout.
  void start_new_sequence(const std::vector<Expression>& h_0 = {});
  /// Replaces the hidden state: a new step whose predecessor is `prev`.
  Expression set_h(const RNNPointer& prev, const std::vector<Expression>& h_new = {});
  /// Replaces the whole state (memory cells then hidden states for LSTMs).
  Expression set_s(const RNNPointer& prev, const std::vector<Expression>& s_new = {});
  /// One step from the current state; returns the output of the top layer.
  Expression add_input(const Expression& x);
  /// One step from the state `prev`.
  Expression add_input(const RNNPointer& prev, const Expression& x);
  /// Makes the predecessor of the current state current.
  void rewind_one_step();
  /// The predecessor of `p`.
  RNNPointer get_head(const RNNPointer& p);
  /// Number of steps of the current sequence (add_input, set_h and set_s calls).
  unsigned num_steps() const { return static_cast<unsigned>(head.size()); }
  /// The predecessor of step `p` (const; throws an index_error for a step that
  /// does not exist).
  RNNPointer step_head(const RNNPointer& p) const;
  /// The input `x` of step `p`: empty for a set_h / set_s step (read by the
  /// ONNX exporter, which turns the steps into one recurrence).
  Expression step_input(const RNNPointer& p) const;
  /// Whether the current sequence started from a given h_0 (not zeros).
  bool has_initial_state() const { return has_h0_; }

  /// Dropout rate (what it applies to depends on the builder).
  virtual void set_dropout(float d);
  virtual void disable_dropout();

  /// Output of the top layer at the current position.
  virtual Expression back() const = 0;
  /// Hidden state of every layer at the current position.
  virtual std::vector<Expression> final_h() const = 0;
  /// Hidden state of every layer at position `p`.
  virtual std::vector<Expression> get_h(RNNPointer p) const = 0;
  /// Whole state (e.g. cells then hidden states) at the current position.
  virtual std::vector<Expression> final_s() const = 0;
  virtual std::vector<Expression> get_s(RNNPointer p) const = 0;
  /// Number of expressions start_new_sequence expects in h_0.
  virtual unsigned num_h0_components() const = 0;
  /// Copies the parameter values of another builder of the same kind and sizes.
  virtual void copy(const RNNBuilder& params) = 0;
  virtual ParameterCollection& get_parameter_collection() = 0;

 protected:
  virtual void new_graph_impl(ComputationGraph& cg, bool update) = 0;
  virtual void start_new_sequence_impl(const std::vector<Expression>& h_0) = 0;
  virtual Expression add_input_impl(int prev, const Expression& x) = 0;
  virtual Expression set_h_impl(int prev, const std::vector<Expression>& h_new) = 0;
  virtual Expression set_s_impl(int prev, const std::vector<Expression>& s_new) = 0;
  /// The builder's name in error messages.
  virtual const char* builder_name() const { return "RNNBuilder"; }
  /// Throws unless new_graph was called and its graph is still alive, uncleared.
  void check_graph(const char* what) const;
  /// check_graph, and start_new_sequence was called since.
  void check_ready(const char* what) const;
  /// Throws a dim_error unless x is a column vector of `dim` rows (any batch size).
  void check_input_dim(const Expression& x, unsigned dim, const char* what) const;

  RNNPointer cur = -1;
  float dropout_rate = 0.f;
  ComputationGraph* graph_ = nullptr;  ///< the graph of the latest new_graph
  unsigned graph_id_ = 0;
  unsigned graph_slot_ = 0;  ///< the graph's registry slot: its liveness is known without reading it

 private:
  /// Throws unless a step from `prev` can be added now (naming `what` in the error).
  void check_step_from(const RNNPointer& prev, const char* what) const;
  /// Records a new step from `prev`, which becomes current; returns `r`, its output.
  Expression record_step(const RNNPointer& prev, Expression r, const Expression& x = Expression());

  std::vector<RNNPointer> head;  ///< predecessor of each step
  std::vector<Expression> inputs_;  ///< input of each step (empty: set_h / set_s)
  bool has_h0_ = false;
  bool sequence_started_ = false;
};

namespace detail {
/// What SimpleRNNBuilder and GRUBuilder share: a stack of layers whose state is
/// one hidden vector per layer (the whole state, so get_s is get_h), its history
/// with DyNet's state accessors over it, and the step's bookkeeping (dropout on
/// the input of every layer, a fresh mask every step).  A builder adds the maths
/// of one layer (layer_step) and checks its initial state.
class HiddenStateRNNBuilder : public RNNBuilder {
 public:
  Expression back() const override;
  std::vector<Expression> final_h() const override { return get_h(cur); }
  std::vector<Expression> get_h(RNNPointer p) const override;
  std::vector<Expression> final_s() const override { return final_h(); }
  std::vector<Expression> get_s(RNNPointer p) const override { return get_h(p); }
  unsigned num_h0_components() const override { return layers; }
  ParameterCollection& get_parameter_collection() override { return local_model; }

 protected:
  HiddenStateRNNBuilder() = default;
  /// Checks the sizes (naming `builder` in the error) and makes the builder's
  /// subcollection `collection` of `model`.
  HiddenStateRNNBuilder(const char* builder, unsigned layers, unsigned input_dim, unsigned hidden_dim,
                        ParameterCollection& model, const char* collection);

  /// One layer of a step: its output from its input `in` and its previous state
  /// `h_prev` (nullptr: zero), `v` being the layer's parameters in the graph.
  virtual Expression layer_step(const std::vector<Expression>& v, const Expression& in, const Expression* h_prev) = 0;

  /// Adds every parameter to `cg` (as constants when `update` is false).
  void new_graph_impl(ComputationGraph& cg, bool update) override;
  Expression add_input_impl(int prev, const Expression& x) override;
  Expression set_h_impl(int prev, const std::vector<Expression>& h_new) override;
  Expression set_s_impl(int prev, const std::vector<Expression>& s_new) override;
  /// For copy(): copies the values of `other`'s params, `other` being the other
  /// builder cast to this builder's class (nullptr, an error, when it is not
  /// one); its sizes must be the same and `same_options` true.
  void copy_params(const HiddenStateRNNBuilder* other, bool same_options);

  ParameterCollection local_model;
  std::vector<std::vector<Parameter>> params;       ///< per layer, in the order each builder documents
  std::vector<std::vector<Expression>> param_vars;  ///< per graph
  std::vector<Expression> h;                        ///< h[t * layers + layer]
  std::vector<Expression> h0;                       ///< empty: zero initial state
  unsigned layers = 0, input_dim = 0, hidden_dim = 0;
};
}  // namespace detail

/// Elman RNN: h_t = tanh(W_x x_t + W_h h_{t-1} + b) per layer; the output of a
/// layer is the input of the next.  With support_lags, add_auxiliary_input adds
/// a further term W_l aux.  set_dropout(d) drops the input of every layer
/// (inverted dropout, a fresh mask every step); the returned output is not dropped.
/// Parameters per layer: {x2h, h2h, hb} (and l2h with lags).
class SimpleRNNBuilder : public detail::HiddenStateRNNBuilder {
 public:
  SimpleRNNBuilder() = default;
  SimpleRNNBuilder(unsigned layers, unsigned input_dim, unsigned hidden_dim, ParameterCollection& model,
                   bool support_lags = false);

  /// A step with an extra input `aux` (of hidden_dim) fed to every layer through
  /// its own weights; needs support_lags.
  Expression add_auxiliary_input(const Expression& x, const Expression& aux);

  void copy(const RNNBuilder& params) override;

 protected:
  void start_new_sequence_impl(const std::vector<Expression>& h_0) override;
  Expression layer_step(const std::vector<Expression>& v, const Expression& in, const Expression* h_prev) override;
  const char* builder_name() const override { return "SimpleRNNBuilder"; }

 private:
  bool lagging = false;
  const Expression* pending_aux_ = nullptr;  ///< set during add_auxiliary_input
};

}  // namespace dynet_lite
