// The Trainer base: gradient clipping, the loop over parameters and lookup rows,
// weight decay, gradient clearing, learning-rate bookkeeping, trainer state.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/backends/cpu/isa.h"
#include "dynet_lite/core/float_mode.h"
#include "dynet_lite/except.h"
#include "dynet_lite/training.h"

namespace dynet_lite {

namespace {


// Float (vectorised) within a parameter; the caller sums parameters in double.
double squared_norm(const float* g, size_t n) { return cpu::active_vector_kernels().squared_norm(g, n); }

}  // namespace

Trainer::Trainer(ParameterCollection& m, real lr)
    : learning_rate(lr), learning_rate0(lr), collection_(m) {
  DYNET_LITE_ARG_CHECK(std::isfinite(lr), "Trainer: learning rate must be finite, got " << lr);
  model = &collection_;
}

Trainer::~Trainer() = default;

std::vector<ShadowParameters>& Trainer::param_state(unsigned k) {
  DYNET_LITE_ASSERT(false, name() << " has no state buffer " << k);
  static std::vector<ShadowParameters> none;
  return none;
}
std::vector<ShadowLookupParameters>& Trainer::lookup_state(unsigned k) {
  DYNET_LITE_ASSERT(false, name() << " has no state buffer " << k);
  static std::vector<ShadowLookupParameters> none;
  return none;
}
const char* Trainer::state_name(unsigned) const { return ""; }

// State buffers for the parameters and tables added since the last call.
void Trainer::allocate_state() {
  const unsigned np = static_cast<unsigned>(model->parameters_list().size());
  const unsigned nlp = static_cast<unsigned>(model->lookup_parameters_list().size());
  for (unsigned k = 0; k < num_state_buffers(); ++k) {
    if (aux_allocated < np) allocate_shadow_parameters(*model, aux_allocated, param_state(k));
    if (aux_allocated_lookup < nlp) allocate_shadow_lookup_parameters(*model, aux_allocated_lookup, lookup_state(k));
  }
  aux_allocated = np;
  aux_allocated_lookup = nlp;
}

float Trainer::squared_gradient_norm() const {
  double total = 0;
  // Parameters on other devices: one pass and one read-back per device.
  std::vector<Device*> devices;
  std::vector<const float*> xs;
  std::vector<size_t> ns;
  for (const auto& p : model->parameters_list()) {
    if (!p->updated) continue;
    if (p->device->type == DeviceType::CPU)
      total += squared_norm(p->g.v, p->size());
    else if (std::find(devices.begin(), devices.end(), p->device) == devices.end())
      devices.push_back(p->device);
  }
  for (Device* d : devices) {
    xs.clear();
    ns.clear();
    for (const auto& p : model->parameters_list())
      if (p->updated && p->device == d) {
        xs.push_back(p->g.v);
        ns.push_back(p->size());
      }
    total += d->squared_norms(xs.data(), ns.data(), static_cast<unsigned>(xs.size()));
  }
  for (const auto& lp : model->lookup_parameters_list()) {
    if (!lp->updated) continue;
    if (lp->device->type != DeviceType::CPU) {
      total += lp->gradient_squared_l2_norm();
    } else if (lp->sparse_gradient()) {  // row by row, as below: the same sum
      for (size_t k = 0; k < lp->non_zero_grads.size(); ++k) total += squared_norm(lp->row_gradient(k), lp->dim.size());
    } else if (lp->all_updated) {
      total += squared_norm(lp->all_grads.v, lp->size());
    } else {
      size_t row = lp->dim.size();
      for (unsigned r : lp->non_zero_grads) total += squared_norm(lp->all_grads.v + r * row, row);
    }
  }
  return static_cast<float>(total);
}

float Trainer::clip_gradients() {
  if (!clipping_enabled) return 1.f;
  DYNET_LITE_ARG_CHECK(clip_threshold > 0, name() << ": clip_threshold must be positive, got " << clip_threshold);
  float norm = std::sqrt(squared_gradient_norm());
  DYNET_LITE_CHECK(std::isfinite(norm), numeric_error,
                   name() << ": the L2 norm of the gradients is " << norm
                          << " (a NaN or infinite gradient reached the parameters)");
  if (norm > clip_threshold) {
    ++clips;
    ++clips_since_status;
    return clip_threshold / norm;
  }
  return 1.f;
}

namespace {
// x *= a over n floats: Eigen on the CPU, the storage's own (host round trip) elsewhere.
template <class Storage>
void decay_values(Storage& s, float* v, size_t n, float a) {
  if (s.device->type == DeviceType::CPU)
    cpu::ArrMap(v, static_cast<Eigen::Index>(n)) *= a;
  else
    s.scale_parameters(a);
}
}  // namespace

void Trainer::update() {
  FlushDenormals flush_denormals;  // see core/float_mode.h
  if (ma_params_swapped) swap_params_to_weights();  // the step applies to the weights, not their average
  allocate_state();
  const float gscale = clip_gradients();
  begin_update();
  update_parameters(gscale);
  update_lookup_parameters(gscale);
  if (ma_mode != MovingAverage::None && static_cast<unsigned>(updates) % ma_update_freq == 0) update_moving_average();
  ++updates;
  ++updates_since_status;
}

void Trainer::update_parameters(float gscale) {
  const auto& params = model->parameters_list();
  const float lambda = model->get_weight_decay_lambda();
  const unsigned nstate = num_state_buffers();
  const bool rule_clears = rule_clears_gradients();
  for (size_t i = 0; i < params.size(); ++i) {
    ParameterStorage& p = *params[i];
    if (p.updated) {
      UpdateSpan span;
      span.device = p.device;
      span.values = p.values.v;
      span.grads = p.g.v;
      for (unsigned k = 0; k < nstate; ++k) span.state[k] = param_state(k)[i].h.v;
      span.size = p.size();
      span.param_name = p.name.c_str();
      update_rule(gscale, span);
      if (lambda > 0) decay_values(p, p.values.v, p.size(), 1.f - lambda);
      if (rule_clears) {
        p.nonzero_grad = false;
        continue;
      }
    }
    p.clear_gradient();
  }
}

void Trainer::update_lookup_parameters(float gscale) {
  const auto& lookups = model->lookup_parameters_list();
  const float lambda = model->get_weight_decay_lambda();
  const unsigned nstate = num_state_buffers();
  const bool rule_clears = rule_clears_gradients();
  for (size_t i = 0; i < lookups.size(); ++i) {
    LookupParameterStorage& lp = *lookups[i];
    if (lp.updated) {
      const size_t row = lp.dim.size();
      UpdateSpan span;
      span.device = lp.device;
      span.param_name = lp.name.c_str();
      // Rows [first_row, first_row + nrows) of the table.
      auto rows_span = [&](size_t first_row, size_t nrows) -> const UpdateSpan& {
        size_t off = first_row * row;
        span.values = lp.all_values.v + off;
        span.grads = lp.sparse_gradient() ? nullptr : lp.all_grads.v + off;
        for (unsigned k = 0; k < nstate; ++k) span.state[k] = lookup_state(k)[i].all_h.v + off;
        span.size = nrows * row;
        return span;
      };
      const bool sparse = sparse_updates_enabled && !lp.all_updated;
      if (sparse && lp.sparse_gradient()) {  // the rows used, their gradients side by side
        for (size_t k = 0; k < lp.non_zero_grads.size(); ++k) {
          rows_span(lp.non_zero_grads.data()[k], 1);
          span.grads = lp.row_gradient(k);
          update_rule(gscale, span);
        }
      } else if (sparse) {  // the rows used, in one call
        update_rule_rows(gscale, rows_span(0, 0), lp.non_zero_grads.data(),
                         static_cast<unsigned>(lp.non_zero_grads.size()), row);
      } else {
        lp.dense_grads();  // every row, the untouched ones with a zero gradient
        if (rowwise()) {
          for (unsigned r = 0; r < lp.num_rows(); ++r) update_rule(gscale, rows_span(r, 1));
        } else {
          update_rule(gscale, rows_span(0, lp.num_rows()));
        }
      }
      // Decay touches every row, used or not, like DyNet's global weight scale.
      if (lambda > 0) decay_values(lp, lp.all_values.v, lp.size(), 1.f - lambda);
      if (rule_clears) {  // every row with a gradient is zero again: only the bookkeeping is left
        lp.non_zero_grads.clear();
        lp.all_updated = false;
        lp.nonzero_grad = false;
        continue;
      }
    }
    lp.clear_gradient();
  }
}

void Trainer::update_rule_rows(real gscale, const UpdateSpan& table, const unsigned* rows, unsigned n, size_t row) {
  UpdateSpan span = table;
  span.size = row;
  for (unsigned k = 0; k < n; ++k) {
    const size_t off = size_t(rows[k]) * row;
    span.values = table.values + off;
    span.grads = table.grads + off;
    for (unsigned b = 0; b < 3; ++b) span.state[b] = table.state[b] ? table.state[b] + off : nullptr;
    update_rule(gscale, span);
  }
}

void Trainer::update_epoch(real r) {
  epoch += r;
  if (learning_rate_decay > 0) learning_rate = learning_rate0 / (1 + epoch * learning_rate_decay);
}

void Trainer::restart() {
  for (unsigned k = 0; k < num_state_buffers(); ++k) {
    for (auto& s : param_state(k)) TensorTools::zero(s.h);
    for (auto& s : lookup_state(k)) TensorTools::zero(s.all_h);
  }
}

void Trainer::restart(real lr) {
  DYNET_LITE_ARG_CHECK(std::isfinite(lr), name() << "::restart: learning rate must be finite, got " << lr);
  learning_rate = lr;
  learning_rate0 = lr;
  restart();
}

void Trainer::status() {
  std::cerr << "[lr=" << learning_rate << " clips=" << clips_since_status << " updates=" << updates_since_status
            << "] ";
  clips_since_status = 0;
  updates_since_status = 0;
}

}  // namespace dynet_lite
