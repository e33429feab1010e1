// Exponentiated gradient with momentum.
#include <cmath>

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

// v = mom v - lr gscale g;  x_i = x_i e^{v_i} / sum_j x_j e^{v_j}   (x stays on the simplex)
void EGTrainer::update_rule(real gscale, const UpdateSpan& span) {
  require_cpu(span);
  auto x = cpu::ArrMap(span.values, static_cast<Eigen::Index>(span.size));
  auto g = Eigen::Map<const Eigen::ArrayXf>(span.grads, static_cast<Eigen::Index>(span.size));
  auto v = cpu::ArrMap(span.state[0], static_cast<Eigen::Index>(span.size));
  DYNET_LITE_ARG_CHECK((x > 0.f).all(), "EGTrainer: parameter '"
                                            << span.param_name << "' has a value <= 0 (min " << x.minCoeff()
                                            << "); exponentiated gradient needs positive values that sum to 1");
  v = momentum * v - (learning_rate * gscale) * g;
  // Normalise in log space, shifted by the maximum so that exp cannot overflow.
  x = x.log() + v;
  const float top = x.maxCoeff();
  x = (x - top).exp();
  const float sum = x.sum();
  x /= sum;
  meg_value_ = top;
  zeg_value_ = top + std::log(sum);
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
