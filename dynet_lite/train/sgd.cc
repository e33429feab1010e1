// Plain, cyclical and momentum SGD.
#include <algorithm>
#include <cmath>

#include "dynet_lite/backends/cpu/isa.h"
#include "dynet_lite/backends/update_rules.h"
#include "dynet_lite/except.h"
#include "dynet_lite/train/rules.h"
#include "dynet_lite/train/schedule.h"
#include "dynet_lite/training.h"

namespace dynet_lite {

namespace {
// x -= rate * g; g = 0: the hot loop of SimpleSGD, in the instruction set in use.
void sgd_step_and_clear_cpu(const UpdateSpan& s, float rate) {
  cpu::active_vector_kernels().sgd_step_and_clear(s.values, s.grads, s.size, rate);
}
}  // namespace

// ------------------------------------------------------------ SimpleSGD

SimpleSGDTrainer::SimpleSGDTrainer(ParameterCollection& m, real lr) : Trainer(m, lr) {}

// x -= lr * gscale * g
void SimpleSGDTrainer::update_rule(real gscale, const UpdateSpan& span) {
  if (span.device->type != DeviceType::CPU) {  // the backend's kernel (backends/cuda/)
    device_sgd_step_and_clear(span.device, span.values, span.grads, span.size, learning_rate * gscale);
    return;
  }
  sgd_step_and_clear_cpu(span, learning_rate * gscale);
}

// The rows of a lookup table on a GPU: one kernel for all of them.
void SimpleSGDTrainer::update_rule_rows(real gscale, const UpdateSpan& table, const unsigned* rows, unsigned n,
                                        size_t row) {
  if (table.device->type == DeviceType::CPU) {
    Trainer::update_rule_rows(gscale, table, rows, n, row);
    return;
  }
  device_sgd_rows_step_and_clear(table.device, table.values, table.grads, rows, n, row, learning_rate * gscale);
}

// ------------------------------------------------------------ CyclicalSGD

CyclicalSGDTrainer::CyclicalSGDTrainer(ParameterCollection& m, float lr_min, float lr_max, float step, float g,
                                       float edecay)
    : Trainer(m, lr_min), e_min(lr_min), e_max(lr_max), step_size(step), gamma(g) {
  DYNET_LITE_ARG_CHECK(step > 0, "CyclicalSGDTrainer: step_size must be positive, got " << step);
  DYNET_LITE_ARG_CHECK(lr_min <= lr_max, "CyclicalSGDTrainer: learning_rate_min " << lr_min
                                             << " exceeds learning_rate_max " << lr_max);
  learning_rate_decay = edecay;
}

void CyclicalSGDTrainer::begin_update() {
  float r = train_detail::cyclical_rate(e_min, e_max, step_size, gamma, it);
  if (learning_rate_decay > 0) r /= (1 + epoch * learning_rate_decay);
  learning_rate = r;
  ++it;
}

void CyclicalSGDTrainer::restart() {
  Trainer::restart();
  it = 0;
  learning_rate = e_min;
}

// x -= lr(it) * gscale * g
void CyclicalSGDTrainer::update_rule(real gscale, const UpdateSpan& span) {
  if (span.device->type != DeviceType::CPU) {  // the backend's kernel, as SimpleSGD's
    device_sgd_step_and_clear(span.device, span.values, span.grads, span.size, learning_rate * gscale);
    return;
  }
  sgd_step_and_clear_cpu(span, learning_rate * gscale);
}

// ------------------------------------------------------------ MomentumSGD

MomentumSGDTrainer::MomentumSGDTrainer(ParameterCollection& m, real lr, real mom) : Trainer(m, lr), momentum(mom) {
  DYNET_LITE_ARG_CHECK(mom >= 0 && mom < 1, "MomentumSGDTrainer: momentum must be in [0, 1), got " << mom);
}

// v = mom * v - lr * gscale * g;  x += v
void MomentumSGDTrainer::update_rule(real gscale, const UpdateSpan& span) {
  cpu_or_device_rule(span, DeviceRule::Momentum, {learning_rate, gscale, momentum});
}

void CyclicalSGDTrainer::fields(std::vector<TrainerField>& out) {
  Trainer::fields(out);
  out.push_back({"e_min", &e_min});
  out.push_back({"e_max", &e_max});
  out.push_back({"step_size", &step_size});
  out.push_back({"gamma", &gamma});
  out.push_back({"it", nullptr, &it});
}

void MomentumSGDTrainer::fields(std::vector<TrainerField>& out) {
  Trainer::fields(out);
  out.push_back({"momentum", &momentum});
}

}  // namespace dynet_lite
