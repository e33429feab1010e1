#pragma once
/// \file training.h
/// Trainers: they read the gradients accumulated in a ParameterCollection by
/// ComputationGraph::backward, change the parameters, and clear the gradients.
///
/// Every trainer follows DyNet 2.1's C++ API:
/// \code
///   SimpleSGDTrainer trainer(model, 0.1);
///   cg.forward(loss); cg.backward(loss); trainer.update();
/// \endcode
///
/// One call to update():
///  1. computes the L2 norm of the gradients of all parameters that are updated
///     (`updated == true`); when clipping is on and the norm exceeds
///     `clip_threshold`, every gradient is scaled by clip_threshold / norm
///     (counted in `clips`); a NaN or infinite norm throws numeric_error;
///  2. applies the trainer's rule to every updated parameter, and to the lookup
///     tables: only the rows in `non_zero_grads` when sparse updates are on and
///     the table was not used as a whole (`all_updated`), else every row;
///  3. applies weight decay: when the collection's lambda
///     (ParameterCollection::get_weight_decay_lambda, `--dynet-weight-decay`) is
///     positive, the weights of every updated parameter and table are multiplied
///     by (1 - lambda) after the step;
///  4. clears the gradients of every parameter (frozen ones included, so their
///     gradients do not pile up across updates).
///
/// Frozen parameters (`set_updated(false)`) are neither stepped nor decayed.
/// The per-element state of a trainer (moments) is allocated the first time a
/// parameter is updated, on the parameter's device, and kept until restart().
#include <iosfwd>
#include <memory>
#include <vector>

#include "dynet_lite/model.h"
#include "dynet_lite/shadow-params.h"

namespace dynet_lite {

/// The contiguous elements one call of a trainer's rule changes: a whole
/// parameter, a whole lookup table, or one row of a table.
struct UpdateSpan {
  Device* device = nullptr;
  float* values = nullptr;
  float* grads = nullptr;
  float* state[3] = {nullptr, nullptr, nullptr};  ///< the trainer's moment buffers
  size_t size = 0;
  const char* param_name = "";  ///< for error messages
};

/// Which moving average of the parameters a trainer keeps (DyNet's names).
enum struct MovingAverage : int { None, Cumulative, Exponential };
std::ostream& operator<<(std::ostream& os, const MovingAverage& o);
std::istream& operator>>(std::istream& is, MovingAverage& o);

/// The base of all trainers (DyNet's `Trainer`).
///
/// Learning rate: `learning_rate` is the rate the next update uses; assign it
/// freely.  For DyNet 2.0 programs, update_epoch() also implements the
/// epoch decay `learning_rate = learning_rate0 / (1 + epoch * learning_rate_decay)`;
/// with the default decay of 0 it only counts epochs and leaves `learning_rate`
/// alone.  `eta`, `eta0` and `eta_decay` are DyNet 2.0's names for the same fields.
///
/// State: each trainer keeps its per-element state in ShadowParameters under
/// DyNet's member names (MomentumSGD's `vp` / `vlp`, Adam's `m`, `v`, `lm`,
/// `lv`, ...), allocated, zero, for every parameter of the collection at the
/// first update() or populate().
///
/// Moving averages: after exponential_moving_average(beta) or
/// cumulative_moving_average(), every `update_freq`-th update also updates a
/// moving average of every parameter (`ma_p`, `ma_lp`):
///   exponential: ma = beta * ma + (1 - beta) * x   (ma starts at 0);
///   cumulative:  ma = (n * ma + x) / (n + 1), n = the averages taken so far.
/// swap_params_to_moving_average() puts the averages into the parameters (to
/// evaluate with them), swap_params_to_weights() puts the weights back.
class Trainer {
 public:
  Trainer(ParameterCollection& m, real learning_rate);
  virtual ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  /// One step on every parameter of the collection (and its subcollections).
  /// When the parameters hold their moving average, the weights are put back
  /// first (and std::runtime_error is thrown if they were not saved).
  virtual void update();
  /// epoch += r; with learning_rate_decay > 0, learning_rate = learning_rate0 / (1 + epoch * decay).
  void update_epoch(real r = 1);
  /// Forgets the trainer's state (moments, step counters of the rule).
  virtual void restart();
  /// Sets the learning rate (and learning_rate0), then restart().
  void restart(real lr);
  /// Prints "[lr=... clips=... updates=...] " to std::cerr and resets the
  /// since-status counters.
  virtual void status();
  /// The factor the gradients will be scaled by in this update (1 when no clip
  /// happens); counts the clip.  Throws numeric_error on a NaN/infinite norm.
  float clip_gradients();

  /// Writes the trainer's hyperparameters, counters, state buffers and moving
  /// averages as text (values to the last bit).  The parameters themselves are
  /// not written: save them with TextFileSaver.
  virtual void save(std::ostream& os);
  /// Reads what save() wrote into this trainer, whose collection must have the
  /// parameters of the saved one (the same sizes, in the same order; it may have
  /// more, whose state stays zero).  The stream is read and checked whole before
  /// anything changes; a malformed stream, another trainer's state or a size
  /// that differs throws std::runtime_error naming the line or the parameter.
  virtual void populate(std::istream& is);
  /// populate(is), then learning_rate = lr.
  void populate(std::istream& is, real lr);

  /// The moving average kept (None until one of the two calls below).
  MovingAverage moving_average();
  /// Keeps an exponential moving average, updated every `update_freq` updates.
  /// Must be called before the first update; beta in [0, 1), update_freq > 0.
  void exponential_moving_average(float beta, unsigned update_freq = 1u);
  /// Keeps a cumulative moving average, updated every `update_freq` updates.
  void cumulative_moving_average(unsigned update_freq = 1u);
  /// Puts the moving averages into the parameters, keeping a copy of the
  /// weights when `save_weights` (without it the trainer cannot update again).
  /// `bias_correction` divides an exponential average by 1 - beta^n.  Nothing
  /// happens if they are there already; throws std::runtime_error when no
  /// average is kept or none has been taken yet.
  void swap_params_to_moving_average(bool save_weights = true, bool bias_correction = false);
  /// Puts the saved weights back into the parameters (nothing happens if they
  /// are there); throws std::runtime_error when they were not saved.
  void swap_params_to_weights();

  real learning_rate;
  real learning_rate0;            ///< the base rate of update_epoch()'s decay
  real learning_rate_decay = 0;   ///< see update_epoch()
  real epoch = 0;
  real& eta = learning_rate;      ///< DyNet 2.0 name
  real& eta0 = learning_rate0;    ///< DyNet 2.0 name
  real& eta_decay = learning_rate_decay;  ///< DyNet 2.0 name

  bool clipping_enabled = true;
  real clip_threshold = 5;
  real clips = 0;
  real updates = 0;
  real clips_since_status = 0;
  real updates_since_status = 0;
  bool sparse_updates_enabled = true;
  unsigned aux_allocated = 0;         ///< parameters whose state buffers exist
  unsigned aux_allocated_lookup = 0;  ///< lookup tables whose state buffers exist
  ParameterCollection* model;  ///< points to the trainer's own handle on the collection

 protected:
  real ema_beta = 0;                          ///< exponential moving average only
  MovingAverage ma_mode = MovingAverage::None;
  bool ma_params_swapped = false;             ///< the parameters hold the moving average
  bool ma_params_saved = false;               ///< the weights were saved by the swap
  unsigned ma_update_freq = 1;
  unsigned ma_updates = 0;                    ///< averages taken so far
  unsigned ma_aux_allocated = 0;
  unsigned ma_aux_allocated_lookup = 0;
  std::vector<ShadowParameters> ma_p;         ///< the moving averages
  std::vector<ShadowLookupParameters> ma_lp;
  std::vector<ShadowParameters> ma_saved_p;   ///< the weights while swapped
  std::vector<ShadowLookupParameters> ma_saved_lp;

  /// A scalar written by save() and read by populate(), by name; exactly one
  /// of the pointers is set.
  struct TrainerField {
    const char* name;
    real* r = nullptr;
    unsigned* u = nullptr;
    bool* b = nullptr;
  };
  /// The trainer's scalars; a trainer adds its own after the base's.
  virtual void fields(std::vector<TrainerField>& out);
  /// The trainer's name, for error messages ("AdamTrainer").
  virtual const char* name() const = 0;
  /// How many float buffers of the parameter's size the rule keeps (0..3).
  virtual unsigned num_state_buffers() const = 0;
  /// State buffer k < num_state_buffers() of the parameters and of the lookup
  /// tables (the trainer's members), and its name in saved files.
  virtual std::vector<ShadowParameters>& param_state(unsigned k);
  virtual std::vector<ShadowLookupParameters>& lookup_state(unsigned k);
  virtual const char* state_name(unsigned k) const;
  /// Called once per update(), before any rule runs.
  virtual void begin_update() {}
  /// Whether update_rule() also zeroes span.grads (fused into its loop, saving
  /// a pass over memory); the base class then skips clearing dense parameters.
  virtual bool rule_clears_gradients() const { return false; }
  /// Whether a whole lookup table is updated row by row (each row its own span)
  /// rather than as one span.
  virtual bool rowwise() const { return false; }
  /// The rule on one span: reads span.grads scaled by gscale, changes
  /// span.values and span.state.  The one place that dispatches on the device.
  virtual void update_rule(real gscale, const UpdateSpan& span) = 0;
  /// The rule on rows rows[0, n) of a lookup table, `row` floats each (`table`
  /// points at row 0; its size is ignored): update_rule on each row, unless a
  /// trainer has one kernel for the whole list on the table's device.
  virtual void update_rule_rows(real gscale, const UpdateSpan& table, const unsigned* rows, unsigned n, size_t row);

 private:
  struct SavedState;
  void allocate_state();
  void allocate_moving_average(std::vector<ShadowParameters>& p, std::vector<ShadowLookupParameters>& lp);
  void update_moving_average();
  float squared_gradient_norm() const;
  void update_parameters(float gscale);
  void update_lookup_parameters(float gscale);
  void apply_saved_state(const SavedState& saved);
  ParameterCollection collection_;
};

/// x -= lr * g
class SimpleSGDTrainer : public Trainer {
 public:
  explicit SimpleSGDTrainer(ParameterCollection& m, real learning_rate = 0.1f);

 protected:
  const char* name() const override { return "SimpleSGDTrainer"; }
  unsigned num_state_buffers() const override { return 0; }
  bool rule_clears_gradients() const override { return true; }
  void update_rule(real gscale, const UpdateSpan& span) override;
  void update_rule_rows(real gscale, const UpdateSpan& table, const unsigned* rows, unsigned n, size_t row) override;
};

/// SGD whose rate follows a triangular cycle between learning_rate_min and
/// learning_rate_max, `step_size` updates up and `step_size` down, the
/// amplitude shrinking by `gamma` per update (Smith, "Cyclical Learning Rates").
/// Update k uses min + (max - min) * max(0, 1 - x) * gamma^k with
/// x = |k / step_size - 2 * floor(1 + k / (2 * step_size)) + 1|.
/// `edecay` is DyNet 2.0's epoch decay: the cyclical rate is divided by
/// (1 + epoch * edecay), epoch being advanced by update_epoch().
class CyclicalSGDTrainer : public Trainer {
 public:
  explicit CyclicalSGDTrainer(ParameterCollection& m, float learning_rate_min = 0.01f,
                              float learning_rate_max = 0.1f, float step_size = 2000, float gamma = 1.0f,
                              float edecay = 0.0f);
  using Trainer::restart;
  void restart() override;

  float e_min, e_max, step_size, gamma;
  unsigned it = 0;  ///< updates done in the current schedule

 protected:
  const char* name() const override { return "CyclicalSGDTrainer"; }
  unsigned num_state_buffers() const override { return 0; }
  void fields(std::vector<TrainerField>& out) override;
  bool rule_clears_gradients() const override { return true; }
  void begin_update() override;
  void update_rule(real gscale, const UpdateSpan& span) override;
};

/// v = mom * v - lr * g;  x += v
class MomentumSGDTrainer : public Trainer {
 public:
  explicit MomentumSGDTrainer(ParameterCollection& m, real learning_rate = 0.01f, real mom = 0.9f);
  real momentum;
  std::vector<ShadowParameters> vp;         ///< the velocities (public, as in DyNet)
  std::vector<ShadowLookupParameters> vlp;

 protected:
  const char* name() const override { return "MomentumSGDTrainer"; }
  unsigned num_state_buffers() const override { return 1; }
  std::vector<ShadowParameters>& param_state(unsigned) override { return vp; }
  std::vector<ShadowLookupParameters>& lookup_state(unsigned) override { return vlp; }
  const char* state_name(unsigned) const override { return "vp"; }
  void fields(std::vector<TrainerField>& out) override;
  void update_rule(real gscale, const UpdateSpan& span) override;
};

/// s += g^2;  x -= lr * g / sqrt(s + eps)
class AdagradTrainer : public Trainer {
 public:
  explicit AdagradTrainer(ParameterCollection& m, real learning_rate = 0.1f, real eps = 1e-20f);
  real epsilon;

 protected:
  const char* name() const override { return "AdagradTrainer"; }
  unsigned num_state_buffers() const override { return 1; }
  std::vector<ShadowParameters>& param_state(unsigned) override { return vp; }
  std::vector<ShadowLookupParameters>& lookup_state(unsigned) override { return vlp; }
  const char* state_name(unsigned) const override { return "vp"; }
  void fields(std::vector<TrainerField>& out) override;
  std::vector<ShadowParameters> vp;  ///< the sums of squared gradients
  std::vector<ShadowLookupParameters> vlp;
  void update_rule(real gscale, const UpdateSpan& span) override;
};

/// hg = rho hg + (1 - rho) g^2;  d = -g sqrt(hd + eps) / sqrt(hg + eps);
/// hd = rho hd + (1 - rho) d^2;  x += learning_rate * d.
/// The learning rate is 1 (Zeiler's rule has none); DyNet ignores it, here it
/// multiplies the step so that restart(lr) has an effect.
class AdadeltaTrainer : public Trainer {
 public:
  explicit AdadeltaTrainer(ParameterCollection& m, real eps = 1e-6f, real rho = 0.95f);
  real epsilon, rho;

 protected:
  const char* name() const override { return "AdadeltaTrainer"; }
  unsigned num_state_buffers() const override { return 2; }
  std::vector<ShadowParameters>& param_state(unsigned k) override { return k == 0 ? hg : hd; }
  std::vector<ShadowLookupParameters>& lookup_state(unsigned k) override { return k == 0 ? hlg : hld; }
  const char* state_name(unsigned k) const override { return k == 0 ? "hg" : "hd"; }
  void fields(std::vector<TrainerField>& out) override;
  std::vector<ShadowParameters> hg;  ///< history of squared gradients
  std::vector<ShadowLookupParameters> hlg;
  std::vector<ShadowParameters> hd;  ///< history of squared deltas
  std::vector<ShadowLookupParameters> hld;
  void update_rule(real gscale, const UpdateSpan& span) override;
};

/// s = rho s + (1 - rho) g^2;  x -= lr * g / sqrt(s + eps)
class RMSPropTrainer : public Trainer {
 public:
  explicit RMSPropTrainer(ParameterCollection& m, real learning_rate = 0.1f, real eps = 1e-20f,
                          real rho = 0.95f);
  real epsilon, rho;

 protected:
  const char* name() const override { return "RMSPropTrainer"; }
  unsigned num_state_buffers() const override { return 1; }
  std::vector<ShadowParameters>& param_state(unsigned) override { return hmsg; }
  std::vector<ShadowLookupParameters>& lookup_state(unsigned) override { return hlmsg; }
  const char* state_name(unsigned) const override { return "hmsg"; }
  void fields(std::vector<TrainerField>& out) override;
  std::vector<ShadowParameters> hmsg;  ///< mean squared gradients
  std::vector<ShadowLookupParameters> hlmsg;
  void update_rule(real gscale, const UpdateSpan& span) override;
};

/// m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
/// x -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps), t = updates + 1
/// (the trainer's update count, as in DyNet, also for sparse lookup rows).
class AdamTrainer : public Trainer {
 public:
  explicit AdamTrainer(ParameterCollection& m, float learning_rate = 0.001f, float beta_1 = 0.9f,
                       float beta_2 = 0.999f, float eps = 1e-8f);
  float beta_1, beta_2, epsilon;

 protected:
  const char* name() const override { return "AdamTrainer"; }
  unsigned num_state_buffers() const override { return 2; }
  std::vector<ShadowParameters>& param_state(unsigned k) override { return k == 0 ? m : v; }
  std::vector<ShadowLookupParameters>& lookup_state(unsigned k) override { return k == 0 ? lm : lv; }
  const char* state_name(unsigned k) const override { return k == 0 ? "m" : "v"; }
  void fields(std::vector<TrainerField>& out) override;
  std::vector<ShadowParameters> m;  ///< first moments
  std::vector<ShadowLookupParameters> lm;
  std::vector<ShadowParameters> v;  ///< second moments
  std::vector<ShadowLookupParameters> lv;
  void begin_update() override;
  void update_rule(real gscale, const UpdateSpan& span) override;
  float step_rate_ = 0;  ///< lr with the bias corrections of this update
};

/// Adam with v_hat = max(v_hat, v) in the denominator (Reddi et al. 2018), with
/// Adam's bias-corrected rate as DyNet does.
class AmsgradTrainer : public Trainer {
 public:
  explicit AmsgradTrainer(ParameterCollection& m, float learning_rate = 0.001f, float beta_1 = 0.9f,
                          float beta_2 = 0.999f, float eps = 1e-8f);
  float beta_1, beta_2, epsilon;

 protected:
  const char* name() const override { return "AmsgradTrainer"; }
  unsigned num_state_buffers() const override { return 3; }
  std::vector<ShadowParameters>& param_state(unsigned k) override { return k == 0 ? m : k == 1 ? v : vhat; }
  std::vector<ShadowLookupParameters>& lookup_state(unsigned k) override { return k == 0 ? lm : k == 1 ? lv : lvhat; }
  const char* state_name(unsigned k) const override { return k == 0 ? "m" : k == 1 ? "v" : "vhat"; }
  void fields(std::vector<TrainerField>& out) override;
  std::vector<ShadowParameters> m;     ///< first moments
  std::vector<ShadowLookupParameters> lm;
  std::vector<ShadowParameters> v;     ///< second moments
  std::vector<ShadowLookupParameters> lv;
  std::vector<ShadowParameters> vhat;  ///< largest second moments
  std::vector<ShadowLookupParameters> lvhat;
  void begin_update() override;
  void update_rule(real gscale, const UpdateSpan& span) override;
  float step_rate_ = 0;
};

/// Exponentiated gradient with momentum (Kivinen & Warmuth 1997), as DyNet:
/// each parameter (each row of a lookup table) is a probability distribution,
/// so its values must be positive; the step is
///   v = mom * v - lr * g;   x_i = x_i exp(v_i) / sum_j x_j exp(v_j).
/// `e` is DyNet 2.0's epoch decay of the rate (see update_epoch()).
/// enableCyclicalLR() makes the rate follow CyclicalSGDTrainer's schedule.
/// A non-positive value throws std::invalid_argument naming the parameter.
class EGTrainer : public Trainer {
 public:
  explicit EGTrainer(ParameterCollection& m, real learning_rate = 0.1f, real mom = 0.9f, real e = 0.0f);
  void enableCyclicalLR(float learning_rate_min = 0.01f, float learning_rate_max = 0.1f, float step_size = 2000,
                        float gamma = 0.0f);
  using Trainer::restart;
  void restart() override;

  real momentum;
  bool isCyclical = false;
  float e_min = 0, e_max = 0, step_size = 0, gamma = 0;
  unsigned it = 0;

 protected:
  const char* name() const override { return "EGTrainer"; }
  unsigned num_state_buffers() const override { return 1; }
  std::vector<ShadowParameters>& param_state(unsigned) override { return hp; }
  std::vector<ShadowLookupParameters>& lookup_state(unsigned) override { return hlp; }
  const char* state_name(unsigned) const override { return "hp"; }
  void fields(std::vector<TrainerField>& out) override;
  float meg_value_ = 0.f, zeg_value_ = 0.f;  ///< the memory of meg and zeg
  std::vector<ShadowParameters> hp;  ///< the momentum of the exponent
  std::vector<ShadowLookupParameters> hlp;
  /// {1} tensors (DyNet's names) holding, for the last parameter (or lookup
  /// row) updated, the maximum of log x + v and the log of the normaliser
  /// sum_j x_j e^{v_j}; saved and populated with the rest of the state.
  Tensor meg, zeg;
  void begin_update() override;
  bool rowwise() const override { return true; }
  void update_rule(real gscale, const UpdateSpan& span) override;
};

}  // namespace dynet_lite
