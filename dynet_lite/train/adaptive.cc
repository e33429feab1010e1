// Trainers with per-element adaptive rates: Adagrad, Adadelta, RMSProp, Adam, AMSGrad.
#include <cmath>

#include "dynet_lite/except.h"
#include "dynet_lite/train/rules.h"
#include "dynet_lite/training.h"

namespace dynet_lite {

namespace {
void check_decay_rate(const char* who, const char* what, float r) {
  DYNET_LITE_ARG_CHECK(r >= 0 && r < 1, who << ": " << what << " must be in [0, 1), got " << r);
}
void check_eps(const char* who, float eps) {
  DYNET_LITE_ARG_CHECK(eps >= 0 && std::isfinite(eps), who << ": eps must be finite and >= 0, got " << eps);
}

// The arguments of Adam and AMSGrad.
void check_adam_args(const char* who, float b1, float b2, float eps) {
  check_decay_rate(who, "beta_1", b1);
  check_decay_rate(who, "beta_2", b2);
  check_eps(who, eps);
}

// lr * sqrt(1 - b2^t) / (1 - b1^t): Adam's bias-corrected rate for step t.
float adam_rate(float lr, float b1, float b2, double t) {
  return static_cast<float>(lr * std::sqrt(1 - std::pow(static_cast<double>(b2), t)) /
                            (1 - std::pow(static_cast<double>(b1), t)));
}
}  // namespace

// ------------------------------------------------------------ Adagrad

AdagradTrainer::AdagradTrainer(ParameterCollection& m, real lr, real eps) : Trainer(m, lr), epsilon(eps) {
  check_eps("AdagradTrainer", eps);
}

// s += (gscale g)^2;  x -= lr * gscale g / sqrt(s + eps)
void AdagradTrainer::update_rule(real gscale, const UpdateSpan& span) {
  cpu_or_device_rule(span, DeviceRule::Adagrad, {learning_rate, gscale, 0.f, 0.f, epsilon});
}

// ------------------------------------------------------------ Adadelta

AdadeltaTrainer::AdadeltaTrainer(ParameterCollection& m, real eps, real r) : Trainer(m, 1.0f), epsilon(eps), rho(r) {
  check_eps("AdadeltaTrainer", eps);
  check_decay_rate("AdadeltaTrainer", "rho", r);
}

// hg = rho hg + (1-rho) g^2;  d = -g sqrt(hd+eps)/sqrt(hg+eps);  hd = rho hd + (1-rho) d^2;  x += lr d
void AdadeltaTrainer::update_rule(real gscale, const UpdateSpan& span) {
  cpu_or_device_rule(span, DeviceRule::Adadelta, {learning_rate, gscale, rho, 0.f, epsilon});
}

// ------------------------------------------------------------ RMSProp

RMSPropTrainer::RMSPropTrainer(ParameterCollection& m, real lr, real eps, real r)
    : Trainer(m, lr), epsilon(eps), rho(r) {
  check_eps("RMSPropTrainer", eps);
  check_decay_rate("RMSPropTrainer", "rho", r);
}

// s = rho s + (1-rho) (gscale g)^2;  x -= lr * gscale g / sqrt(s + eps)
void RMSPropTrainer::update_rule(real gscale, const UpdateSpan& span) {
  cpu_or_device_rule(span, DeviceRule::RMSProp, {learning_rate, gscale, rho, 0.f, epsilon});
}

// ------------------------------------------------------------ Adam

AdamTrainer::AdamTrainer(ParameterCollection& m, float lr, float b1, float b2, float eps)
    : Trainer(m, lr), beta_1(b1), beta_2(b2), epsilon(eps) {
  check_adam_args("AdamTrainer", b1, b2, eps);
}

void AdamTrainer::begin_update() { step_rate_ = adam_rate(learning_rate, beta_1, beta_2, updates + 1.0); }

// m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  x -= rate_t * m / (sqrt(v) + eps)
void AdamTrainer::update_rule(real gscale, const UpdateSpan& span) {
  cpu_or_device_rule(span, DeviceRule::Adam, {step_rate_, gscale, beta_1, beta_2, epsilon});
}

// ------------------------------------------------------------ AMSGrad

AmsgradTrainer::AmsgradTrainer(ParameterCollection& m, float lr, float b1, float b2, float eps)
    : Trainer(m, lr), beta_1(b1), beta_2(b2), epsilon(eps) {
  check_adam_args("AmsgradTrainer", b1, b2, eps);
}

void AmsgradTrainer::begin_update() { step_rate_ = adam_rate(learning_rate, beta_1, beta_2, updates + 1.0); }

// as Adam, with vhat = max(vhat, v) in place of v
void AmsgradTrainer::update_rule(real gscale, const UpdateSpan& span) {
  cpu_or_device_rule(span, DeviceRule::Amsgrad, {step_rate_, gscale, beta_1, beta_2, epsilon});
}

// ------------------------------------------------------------ saved scalars

void AdagradTrainer::fields(std::vector<TrainerField>& out) {
  Trainer::fields(out);
  out.push_back({"epsilon", &epsilon});
}
void AdadeltaTrainer::fields(std::vector<TrainerField>& out) {
  Trainer::fields(out);
  out.push_back({"epsilon", &epsilon});
  out.push_back({"rho", &rho});
}
void RMSPropTrainer::fields(std::vector<TrainerField>& out) {
  Trainer::fields(out);
  out.push_back({"epsilon", &epsilon});
  out.push_back({"rho", &rho});
}
void AdamTrainer::fields(std::vector<TrainerField>& out) {
  Trainer::fields(out);
  out.push_back({"beta_1", &beta_1});
  out.push_back({"beta_2", &beta_2});
  out.push_back({"epsilon", &epsilon});
}
void AmsgradTrainer::fields(std::vector<TrainerField>& out) {
  Trainer::fields(out);
  out.push_back({"beta_1", &beta_1});
  out.push_back({"beta_2", &beta_2});
  out.push_back({"epsilon", &epsilon});
}

}  // namespace dynet_lite
