// Exponentiated gradient with momentum.
#include <cmath>
#include <utility>
#include <vector>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/except.h"
#include "dynet_lite/train/schedule.h"
#include "dynet_lite/training.h"

namespace dynet_lite {

EGTrainer::EGTrainer(ParameterCollection& m, real lr, real mom, real e)
    : Trainer(m, lr),
      momentum(mom),
      meg(Dim({1}), &meg_value_, cpu_device(), DeviceMempool::PS),
      zeg(Dim({1}), &zeg_value_, cpu_device(), DeviceMempool::PS) {
  DYNET_LITE_ARG_CHECK(mom >= 0 && mom < 1, "EGTrainer: momentum must be in [0, 1), got " << mom);
  learning_rate_decay = e;
}

void EGTrainer::enableCyclicalLR(float lr_min, float lr_max, float step, float g) {
  DYNET_LITE_ARG_CHECK(step > 0, "EGTrainer::enableCyclicalLR: step_size must be positive, got " << step);
  DYNET_LITE_ARG_CHECK(lr_min <= lr_max, "EGTrainer::enableCyclicalLR: learning_rate_min "
                                             << lr_min << " exceeds learning_rate_max " << lr_max);
  isCyclical = true;
  e_min = lr_min;
  e_max = lr_max;
  step_size = step;
  gamma = g;
  it = 0;
  learning_rate = lr_min;
}

void EGTrainer::begin_update() {
  if (!isCyclical) return;
  float r = train_detail::cyclical_rate(e_min, e_max, step_size, gamma, it);
  if (learning_rate_decay > 0) r /= (1 + epoch * learning_rate_decay);
  learning_rate = r;
  ++it;
}

void EGTrainer::restart() {
  Trainer::restart();
  if (isCyclical) {
    it = 0;
    learning_rate = e_min;
  }
}

namespace {

/// The rule on host memory, n floats: v = mom v - rate g;
/// x_i = x_i e^{v_i} / sum_j x_j e^{v_j} (x stays on the simplex).  Returns the
/// log-space maximum and the log of the normaliser (DyNet's meg and zeg).
std::pair<float, float> eg_step(float* xs, const float* gs, float* vs, size_t n, float momentum, float rate,
                                const char* name) {
  auto x = cpu::ArrMap(xs, static_cast<Eigen::Index>(n));
  auto g = Eigen::Map<const Eigen::ArrayXf>(gs, static_cast<Eigen::Index>(n));
  auto v = cpu::ArrMap(vs, static_cast<Eigen::Index>(n));
  DYNET_LITE_ARG_CHECK((x > 0.f).all(), "EGTrainer: parameter '"
                                            << name << "' has a value <= 0 (min " << x.minCoeff()
                                            << "); exponentiated gradient needs positive values that sum to 1");
  v = momentum * v - rate * g;
  // Normalise in log space, shifted by the maximum so that exp cannot overflow.
  x = x.log() + v;
  const float top = x.maxCoeff();
  x = (x - top).exp();
  const float sum = x.sum();
  x /= sum;
  return {top, top + std::log(sum)};
}

}  // namespace

void EGTrainer::update_rule(real gscale, const UpdateSpan& span) {
  const size_t n = span.size;
  const float rate = learning_rate * gscale;
  std::pair<float, float> logs;
  if (span.device->type == DeviceType::CPU) {
    logs = eg_step(span.values, span.grads, span.state[0], n, momentum, rate, span.param_name);
  } else {
    // On another device (a GPU) the rule runs on host copies: it reduces the
    // whole parameter twice (its maximum, its sum), and the parameters it
    // serves are small (mixture weights, distributions).
    std::vector<float> x(n), g(n), v(n);
    span.device->copy_to_host(x.data(), span.values, n);
    span.device->copy_to_host(g.data(), span.grads, n);
    span.device->copy_to_host(v.data(), span.state[0], n);
    logs = eg_step(x.data(), g.data(), v.data(), n, momentum, rate, span.param_name);
    span.device->copy_from_host(span.values, x.data(), n);
    span.device->copy_from_host(span.state[0], v.data(), n);
  }
  meg_value_ = logs.first;
  zeg_value_ = logs.second;
}

void EGTrainer::fields(std::vector<TrainerField>& out) {
  Trainer::fields(out);
  out.push_back({"momentum", &momentum});
  out.push_back({"isCyclical", nullptr, nullptr, &isCyclical});
  out.push_back({"e_min", &e_min});
  out.push_back({"e_max", &e_max});
  out.push_back({"step_size", &step_size});
  out.push_back({"gamma", &gamma});
  out.push_back({"it", nullptr, &it});
  out.push_back({"meg", &meg_value_});
  out.push_back({"zeg", &zeg_value_});
}

}  // namespace dynet_lite
