#define BOOST_TEST_MODULE trainers
#include "test_utils.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>
#include <string>

#include "dynet_lite/backends/update_rules.h"
#include "dynet_lite/init.h"
#include "dynet_lite/training.h"
#include "test_utils.h"

#include "alloc_counter.h"

using dl::ParameterCollection;

namespace {

// Sets a parameter's gradient directly, as backward() would have left it.
void set_grad(dl::Parameter& p, const std::vector<float>& g) {
  auto& s = p.get_storage();
  BOOST_REQUIRE_EQUAL(g.size(), s.size());
  s.accumulate_grad(g.data());
}

std::vector<float> values(dl::Parameter& p) { return dl::as_vector(*p.values()); }

/// A parameter of `n` elements named `name`, set to zero.
dl::Parameter zero_parameter(ParameterCollection& m, unsigned n, const std::string& name) {
  dl::Parameter p = m.add_parameters({n}, name);
  p.set_value(std::vector<float>(n, 0.f));
  return p;
}
std::vector<float> row(dl::LookupParameter& lp, unsigned r) { return dl::as_vector((*lp.values())[r]); }
std::vector<float> grads(dl::Parameter& p) { return dl::as_vector(*p.gradients()); }

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// ---------------------------------------------------------------- a small regression problem
// pred_i = sum(w .* tanh(E[i] + b)) + c, loss = sum_i (pred_i - y_i)^2 over 6 words.
struct Regression {
  ParameterCollection m;
  dl::LookupParameter E;
  dl::Parameter w, b, c;
  std::vector<unsigned> ids{0, 1, 2, 3, 4, 5};
  std::vector<float> ys{0.5f, -0.3f, 0.8f, -0.7f, 0.1f, 0.4f};

  Regression() {
    E = m.add_lookup_parameters(6, {3}, "E");
    w = m.add_parameters({3}, "w");
    b = m.add_parameters({3}, "b");
    c = m.add_parameters({1}, "c");
    for (unsigned i = 0; i < 6; ++i) E.initialize(i, test::test_values(3, 0.1f * i));
    w.set_value({0.3f, -0.2f, 0.1f});
    b.set_value({0.05f, -0.05f, 0.02f});
    c.set_value({0.f});
  }

  // Builds the loss; runs backward too when asked.  Returns the loss.
  float loss(bool learn) {
    dl::ComputationGraph cg;
    dl::Expression x = dl::lookup(cg, E, ids);
    dl::Expression h = dl::tanh(x + dl::parameter(cg, b));
    dl::Expression pred = dl::sum_elems(dl::cmult(dl::parameter(cg, w), h)) + dl::parameter(cg, c);
    dl::Expression y = dl::input(cg, dl::Dim({1}, 6), ys);
    dl::Expression l = dl::sum_batches(dl::square(pred - y));
    float v = dl::as_scalar(cg.forward(l));
    if (learn) cg.backward(l);
    return v;
  }
};

// Trains `steps` updates; returns {initial loss, final loss}.
std::pair<float, float> train(Regression& r, dl::Trainer& t, int steps) {
  float first = r.loss(false);
  for (int i = 0; i < steps; ++i) {
    r.loss(true);
    t.update();
  }
  return {first, r.loss(false)};
}

void check_learns(const std::function<std::unique_ptr<dl::Trainer>(ParameterCollection&)>& make, int steps,
                  const char* what) {
  Regression r;
  auto t = make(r.m);
  auto [before, after] = train(r, *t, steps);
  BOOST_TEST_MESSAGE(what << ": loss " << before << " -> " << after);
  BOOST_CHECK_MESSAGE(after < 0.05f * before, what << ": loss " << before << " -> " << after);
  // The lookup rows all took part and must have moved.
  BOOST_CHECK_MESSAGE(!bit_equal(row(r.E, 0), test::test_values(3, 0.f)), what << ": row 0 did not move");
}

// Each trainer is stepped twice on a constant gradient g; the expected values
// follow the documented formulas, written out here element by element.
struct TwoSteps {
  ParameterCollection m;
  dl::Parameter p;
  std::vector<float> x0{0.5f, -1.0f, 2.0f};
  std::vector<float> g{0.4f, -0.3f, 1.2f};  // norm < 5: no clipping
  TwoSteps() {
    p = m.add_parameters({3}, "p");
    p.set_value(x0);
  }
  std::vector<float> run(dl::Trainer& t, int steps = 2) {
    for (int i = 0; i < steps; ++i) {
      set_grad(p, g);
      t.update();
    }
    return values(p);
  }
};

}  // namespace

// ================================================================ every trainer learns

BOOST_AUTO_TEST_SUITE(learning)

BOOST_AUTO_TEST_CASE(simple_sgd) {
  check_learns([](ParameterCollection& m) { return std::make_unique<dl::SimpleSGDTrainer>(m, 0.05f); }, 200,
               "SimpleSGD");
}
BOOST_AUTO_TEST_CASE(cyclical_sgd) {
  check_learns(
      [](ParameterCollection& m) { return std::make_unique<dl::CyclicalSGDTrainer>(m, 0.01f, 0.08f, 20.f); }, 200,
      "CyclicalSGD");
}
BOOST_AUTO_TEST_CASE(momentum_sgd) {
  check_learns([](ParameterCollection& m) { return std::make_unique<dl::MomentumSGDTrainer>(m, 0.01f, 0.9f); }, 200,
               "MomentumSGD");
}
BOOST_AUTO_TEST_CASE(adagrad) {
  check_learns([](ParameterCollection& m) { return std::make_unique<dl::AdagradTrainer>(m, 0.1f); }, 200, "Adagrad");
}
BOOST_AUTO_TEST_CASE(adadelta) {
  check_learns([](ParameterCollection& m) { return std::make_unique<dl::AdadeltaTrainer>(m, 1e-4f, 0.9f); }, 300,
               "Adadelta");
}
BOOST_AUTO_TEST_CASE(rmsprop) {
  check_learns([](ParameterCollection& m) { return std::make_unique<dl::RMSPropTrainer>(m, 0.01f); }, 200,
               "RMSProp");
}
BOOST_AUTO_TEST_CASE(adam) {
  check_learns([](ParameterCollection& m) { return std::make_unique<dl::AdamTrainer>(m, 0.02f); }, 200, "Adam");
}
BOOST_AUTO_TEST_CASE(amsgrad) {
  check_learns([](ParameterCollection& m) { return std::make_unique<dl::AmsgradTrainer>(m, 0.02f); }, 200,
               "Amsgrad");
}

// EG keeps a distribution: fit mixture weights p so that sum(p .* x_k) = y_k.
BOOST_AUTO_TEST_CASE(exponentiated_gradient) {
  ParameterCollection m;
  dl::Parameter p = m.add_parameters({4}, "p");
  p.set_value({0.25f, 0.25f, 0.25f, 0.25f});
  const std::vector<float> truth{0.6f, 0.1f, 0.2f, 0.1f};
  std::vector<float> xs = test::test_values(4 * 5);  // 5 examples, column-major {4}X5
  std::vector<float> ys(5);
  for (unsigned k = 0; k < 5; ++k)
    for (unsigned i = 0; i < 4; ++i) ys[k] += truth[i] * xs[k * 4 + i];
  auto loss = [&](bool learn) {
    dl::ComputationGraph cg;
    dl::Expression x = dl::input(cg, dl::Dim({4}, 5), xs);
    dl::Expression y = dl::input(cg, dl::Dim({1}, 5), ys);
    dl::Expression l = dl::sum_batches(dl::square(dl::sum_elems(dl::cmult(dl::parameter(cg, p), x)) - y));
    float v = dl::as_scalar(cg.forward(l));
    if (learn) cg.backward(l);
    return v;
  };
  dl::EGTrainer t(m, 0.5f, 0.5f);
  float before = loss(false);
  for (int i = 0; i < 300; ++i) {
    loss(true);
    t.update();
    std::vector<float> v = values(p);
    float s = 0;
    for (float e : v) {
      BOOST_REQUIRE(e > 0);
      s += e;
    }
    BOOST_REQUIRE_CLOSE(s, 1.f, 1e-3);
  }
  float after = loss(false);
  BOOST_CHECK_MESSAGE(after < 0.1f * before, "EG: loss " << before << " -> " << after);
  BOOST_CHECK_SMALL(values(p)[0] - 0.6f, 0.1f);  // heads for the true weight
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ one or two steps by hand

BOOST_AUTO_TEST_SUITE(rules)

BOOST_AUTO_TEST_CASE(simple_sgd_rule) {
  TwoSteps s;
  dl::SimpleSGDTrainer t(s.m, 0.1f);
  std::vector<float> want(3);
  for (int i = 0; i < 3; ++i) want[i] = s.x0[i] - 2 * 0.1f * s.g[i];
  test::check_close(s.run(t), want, 1e-6);
  BOOST_CHECK_EQUAL(t.updates, 2);
}

BOOST_AUTO_TEST_CASE(default_hyperparameters) {
  ParameterCollection m;
  BOOST_CHECK_CLOSE(dl::SimpleSGDTrainer(m).learning_rate, 0.1f, 1e-4);
  BOOST_CHECK_CLOSE(dl::MomentumSGDTrainer(m).learning_rate, 0.01f, 1e-4);
  BOOST_CHECK_CLOSE(dl::MomentumSGDTrainer(m).momentum, 0.9f, 1e-4);
  BOOST_CHECK_CLOSE(dl::AdagradTrainer(m).epsilon, 1e-20f, 1e-4);
  BOOST_CHECK_CLOSE(dl::AdadeltaTrainer(m).rho, 0.95f, 1e-4);
  BOOST_CHECK_CLOSE(dl::AdadeltaTrainer(m).learning_rate, 1.f, 1e-4);
  BOOST_CHECK_CLOSE(dl::RMSPropTrainer(m).rho, 0.95f, 1e-4);
  dl::AdamTrainer adam(m);
  BOOST_CHECK_CLOSE(adam.learning_rate, 0.001f, 1e-4);
  BOOST_CHECK_CLOSE(adam.beta_2, 0.999f, 1e-4);
  BOOST_CHECK_CLOSE(adam.epsilon, 1e-8f, 1e-4);
  dl::CyclicalSGDTrainer cyc(m);
  BOOST_CHECK_CLOSE(cyc.learning_rate, 0.01f, 1e-4);
  BOOST_CHECK_CLOSE(cyc.e_max, 0.1f, 1e-4);
  BOOST_CHECK_CLOSE(cyc.step_size, 2000.f, 1e-4);
  dl::Trainer& base = adam;
  BOOST_CHECK(base.clipping_enabled);
  BOOST_CHECK_CLOSE(base.clip_threshold, 5.f, 1e-4);
  BOOST_CHECK(base.sparse_updates_enabled);
  BOOST_CHECK_EQUAL(base.clips, 0);
  BOOST_CHECK_EQUAL(base.updates, 0);
}

BOOST_AUTO_TEST_CASE(momentum_rule) {
  TwoSteps s;
  dl::MomentumSGDTrainer t(s.m, 0.1f, 0.5f);
  std::vector<float> want(3);
  for (int i = 0; i < 3; ++i) {
    float v1 = -0.1f * s.g[i];
    float v2 = 0.5f * v1 - 0.1f * s.g[i];
    want[i] = s.x0[i] + v1 + v2;
  }
  test::check_close(s.run(t), want, 1e-6);
}

BOOST_AUTO_TEST_CASE(adagrad_rule) {
  TwoSteps s;
  dl::AdagradTrainer t(s.m, 0.1f, 1e-8f);
  std::vector<float> want(3);
  for (int i = 0; i < 3; ++i) {
    double g = s.g[i], x = s.x0[i];
    x -= 0.1 * g / std::sqrt(g * g + 1e-8);
    x -= 0.1 * g / std::sqrt(2 * g * g + 1e-8);
    want[i] = static_cast<float>(x);
  }
  test::check_close(s.run(t), want, 1e-6);
}

BOOST_AUTO_TEST_CASE(adadelta_rule) {
  TwoSteps s;
  dl::AdadeltaTrainer t(s.m, 1e-6f, 0.9f);
  std::vector<float> want(3);
  for (int i = 0; i < 3; ++i) {
    double g = s.g[i], x = s.x0[i], hg = 0, hd = 0, eps = 1e-6, rho = 0.9;
    for (int k = 0; k < 2; ++k) {
      hg = rho * hg + (1 - rho) * g * g;
      double d = -g * std::sqrt(hd + eps) / std::sqrt(hg + eps);
      hd = rho * hd + (1 - rho) * d * d;
      x += d;
    }
    want[i] = static_cast<float>(x);
  }
  test::check_close(s.run(t), want, 1e-5);
}

BOOST_AUTO_TEST_CASE(rmsprop_rule) {
  TwoSteps s;
  dl::RMSPropTrainer t(s.m, 0.1f, 1e-8f, 0.9f);
  std::vector<float> want(3);
  for (int i = 0; i < 3; ++i) {
    double g = s.g[i], x = s.x0[i], r = 0;
    for (int k = 0; k < 2; ++k) {
      r = 0.9 * r + 0.1 * g * g;
      x -= 0.1 * g / std::sqrt(r + 1e-8);
    }
    want[i] = static_cast<float>(x);
  }
  test::check_close(s.run(t), want, 1e-5);
}

BOOST_AUTO_TEST_CASE(adam_rule) {
  TwoSteps s;
  dl::AdamTrainer t(s.m, 0.1f, 0.9f, 0.99f, 1e-8f);
  std::vector<float> want(3);
  for (int i = 0; i < 3; ++i) {
    double g = s.g[i], x = s.x0[i], m = 0, v = 0;
    for (int k = 1; k <= 2; ++k) {
      m = 0.9 * m + 0.1 * g;
      v = 0.99 * v + 0.01 * g * g;
      double rate = 0.1 * std::sqrt(1 - std::pow(0.99, k)) / (1 - std::pow(0.9, k));
      x -= rate * m / (std::sqrt(v) + 1e-8);
    }
    want[i] = static_cast<float>(x);
  }
  test::check_close(s.run(t), want, 1e-5);
}

BOOST_AUTO_TEST_CASE(amsgrad_rule) {
  // A gradient that shrinks in the second step makes v fall below its maximum.
  ParameterCollection m;
  dl::Parameter p = m.add_parameters({2}, "p");
  p.set_value({1.f, -1.f});
  dl::AmsgradTrainer t(m, 0.1f, 0.5f, 0.5f, 1e-8f);
  std::vector<std::vector<float>> gs{{2.f, -1.f}, {0.1f, 0.2f}};
  for (auto& g : gs) {
    set_grad(p, g);
    t.update();
  }
  std::vector<float> want(2);
  for (int i = 0; i < 2; ++i) {
    double x = i == 0 ? 1 : -1, mm = 0, v = 0, vhat = 0;
    for (int k = 1; k <= 2; ++k) {
      double g = gs[k - 1][i];
      mm = 0.5 * mm + 0.5 * g;
      v = 0.5 * v + 0.5 * g * g;
      vhat = std::max(vhat, v);
      double rate = 0.1 * std::sqrt(1 - std::pow(0.5, k)) / (1 - std::pow(0.5, k));
      x -= rate * mm / (std::sqrt(vhat) + 1e-8);
    }
    want[i] = static_cast<float>(x);
  }
  test::check_close(values(p), want, 1e-5);
}

BOOST_AUTO_TEST_CASE(eg_rule) {
  ParameterCollection m;
  dl::Parameter p = m.add_parameters({3}, "p");
  p.set_value({0.2f, 0.3f, 0.5f});
  dl::EGTrainer t(m, 0.5f, 0.5f);
  std::vector<float> g{1.f, -1.f, 0.5f};
  set_grad(p, g);
  t.update();
  set_grad(p, g);
  t.update();
  std::vector<double> x{0.2, 0.3, 0.5}, v(3, 0.0);
  for (int k = 0; k < 2; ++k) {
    double z = 0;
    for (int i = 0; i < 3; ++i) {
      v[i] = 0.5 * v[i] - 0.5 * g[i];
      x[i] *= std::exp(v[i]);
      z += x[i];
    }
    for (double& e : x) e /= z;
  }
  test::check_close(values(p), {float(x[0]), float(x[1]), float(x[2])}, 1e-5);
}

BOOST_AUTO_TEST_CASE(eg_rejects_non_positive_values) {
  ParameterCollection m;
  dl::Parameter p = m.add_parameters({3}, "mix");
  p.set_value({0.5f, 0.f, 0.5f});
  dl::EGTrainer t(m);
  set_grad(p, {1.f, 1.f, 1.f});
  test::check_throws_with<std::invalid_argument>([&] { t.update(); }, {"EGTrainer", "/mix", "<= 0"});
}

// On a device other than the CPU (here host memory that calls itself a GPU)
// the rule runs on host copies: the same values and momentum as on the CPU,
// and the CPU's error for a value <= 0, the device's memory left unchanged.
BOOST_AUTO_TEST_CASE(eg_rule_on_another_device) {
  static auto* gpu = new test::HostMemoryDevice(dl::DeviceType::GPU, 0, "GPU:0");
  auto run = [](dl::Device* dev, std::vector<float> init) {
    ParameterCollection m;
    dl::Parameter p = m.add_parameters({4}, dl::ParameterInitFromVector(init), "p", dev);
    dl::EGTrainer t(m, 0.5f, 0.5f);
    for (int k = 0; k < 3; ++k) {
      set_grad(p, {1.f, -1.f, 0.5f, 0.25f * k});
      t.update();
    }
    return values(p);
  };
  BOOST_CHECK(bit_equal(run(gpu, {0.1f, 0.2f, 0.3f, 0.4f}), run(dl::cpu_device(), {0.1f, 0.2f, 0.3f, 0.4f})));
  test::check_throws_with<std::invalid_argument>([&] { run(gpu, {0.5f, 0.f, 0.25f, 0.25f}); },
                                                 {"EGTrainer", "/p", "<= 0"});
}

BOOST_AUTO_TEST_CASE(eg_rows_of_a_lookup_are_distributions) {
  ParameterCollection m;
  dl::LookupParameter lp = m.add_lookup_parameters(3, {2}, "dist");
  for (unsigned r = 0; r < 3; ++r) lp.initialize(r, {0.5f, 0.5f});
  dl::EGTrainer t(m, 1.f, 0.f);
  // The whole table used densely: every row is renormalised on its own.
  {
    dl::ComputationGraph cg;
    dl::Expression l = dl::sum_elems(dl::cmult(dl::parameter(cg, lp), dl::input(cg, {2, 3}, {1, 0, 0, 1, 2, 0})));
    cg.forward(l);
    cg.backward(l);
  }
  t.update();
  for (unsigned r = 0; r < 3; ++r) {
    std::vector<float> v = row(lp, r);
    BOOST_CHECK_CLOSE(v[0] + v[1], 1.f, 1e-4);
  }
  BOOST_CHECK_LT(row(lp, 0)[0], 0.5f);  // gradient 1 on the first entry of row 0
  BOOST_CHECK_GT(row(lp, 1)[0], 0.5f);
}

BOOST_AUTO_TEST_CASE(invalid_hyperparameters) {
  ParameterCollection m;
  test::check_throws_with<std::invalid_argument>([&] { dl::AdamTrainer(m, 0.1f, 1.5f); },
                                                 {"AdamTrainer", "beta_1", "1.5"});
  test::check_throws_with<std::invalid_argument>([&] { dl::RMSPropTrainer(m, 0.1f, 1e-8f, -0.1f); },
                                                 {"RMSPropTrainer", "rho"});
  test::check_throws_with<std::invalid_argument>([&] { dl::CyclicalSGDTrainer(m, 0.1f, 0.01f); },
                                                 {"CyclicalSGDTrainer", "exceeds"});
  test::check_throws_with<std::invalid_argument>([&] { dl::CyclicalSGDTrainer(m, 0.01f, 0.1f, 0.f); },
                                                 {"CyclicalSGDTrainer", "step_size"});
  test::check_throws_with<std::invalid_argument>([&] { dl::MomentumSGDTrainer(m, 0.1f, 1.f); },
                                                 {"MomentumSGDTrainer", "momentum"});
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ clipping

BOOST_AUTO_TEST_SUITE(clipping)

BOOST_AUTO_TEST_CASE(clips_by_global_norm) {
  ParameterCollection m;
  dl::Parameter a = zero_parameter(m, 1, "a"), b = zero_parameter(m, 2, "b");
  dl::SimpleSGDTrainer t(m, 1.f);
  // Global norm sqrt(30^2 + 40^2 + 0) = 50 > 5: every gradient scaled by 0.1.
  set_grad(a, {30.f});
  set_grad(b, {40.f, 0.f});
  BOOST_CHECK_CLOSE(t.clip_gradients(), 0.1f, 1e-4);
  BOOST_CHECK_EQUAL(t.clips, 1);  // clip_gradients() counts the clip
  t.clips = t.clips_since_status = 0;
  t.update();
  test::check_close(values(a), {-3.f}, 1e-6);
  test::check_close(values(b), {-4.f, 0.f}, 1e-6);
  BOOST_CHECK_EQUAL(t.clips, 1);
  BOOST_CHECK_EQUAL(t.clips_since_status, 1);
}

BOOST_AUTO_TEST_CASE(no_clip_below_threshold) {
  ParameterCollection m;
  dl::Parameter a = zero_parameter(m, 2, "a");
  dl::SimpleSGDTrainer t(m, 1.f);
  set_grad(a, {3.f, 4.f});  // norm exactly 5: not above the threshold
  t.update();
  test::check_close(values(a), {-3.f, -4.f}, 1e-6);
  BOOST_CHECK_EQUAL(t.clips, 0);
}

BOOST_AUTO_TEST_CASE(threshold_and_disable) {
  ParameterCollection m;
  dl::Parameter a = zero_parameter(m, 2, "a");
  dl::SimpleSGDTrainer t(m, 1.f);
  t.clip_threshold = 1.f;
  set_grad(a, {3.f, 4.f});
  t.update();
  test::check_close(values(a), {-0.6f, -0.8f}, 1e-6);
  t.clipping_enabled = false;
  set_grad(a, {30.f, 40.f});
  t.update();
  test::check_close(values(a), {-30.6f, -40.8f}, 1e-6);
  BOOST_CHECK_EQUAL(t.clips, 1);
}

BOOST_AUTO_TEST_CASE(norm_includes_used_lookup_rows) {
  ParameterCollection m;
  dl::LookupParameter lp = m.add_lookup_parameters(4, {2}, "E");
  for (unsigned r = 0; r < 4; ++r) lp.initialize(r, {0.f, 0.f});
  dl::SimpleSGDTrainer t(m, 1.f);
  std::vector<float> g1{6.f, 0.f}, g3{0.f, 8.f};
  lp.get_storage().accumulate_grad(1, g1.data());
  lp.get_storage().accumulate_grad(3, g3.data());
  t.update();  // norm 10 -> scale 0.5
  test::check_close(row(lp, 1), {-3.f, 0.f}, 1e-6);
  test::check_close(row(lp, 3), {0.f, -4.f}, 1e-6);
  BOOST_CHECK_EQUAL(t.clips, 1);
}

BOOST_AUTO_TEST_CASE(nan_gradient_throws) {
  ParameterCollection m;
  dl::Parameter a = m.add_parameters({2}, "a");
  dl::SimpleSGDTrainer t(m);
  set_grad(a, {std::nanf(""), 1.f});
  test::check_throws_with<dl::numeric_error>([&] { t.update(); }, {"SimpleSGDTrainer", "nan"});
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ weight decay

BOOST_AUTO_TEST_SUITE(weight_decay)

BOOST_AUTO_TEST_CASE(decay_shrinks_weights) {
  ParameterCollection m;
  m.set_weight_decay_lambda(0.1f);
  dl::Parameter a = m.add_parameters({2}, "a");
  dl::LookupParameter lp = m.add_lookup_parameters(3, {1}, "E");
  a.set_value({1.f, -2.f});
  for (unsigned r = 0; r < 3; ++r) lp.initialize(r, {float(r + 1)});
  dl::SimpleSGDTrainer t(m, 0.5f);
  set_grad(a, {0.4f, 0.f});
  t.update();
  // (x - lr g) (1 - lambda)
  test::check_close(values(a), {(1.f - 0.2f) * 0.9f, -2.f * 0.9f}, 1e-6);
  // Every row decays, used or not (DyNet's global weight scale).
  for (unsigned r = 0; r < 3; ++r) test::check_close(row(lp, r), {float(r + 1) * 0.9f}, 1e-6);
  t.update();
  test::check_close(values(a), {0.8f * 0.81f, -2.f * 0.81f}, 1e-6);
}

BOOST_AUTO_TEST_CASE(no_decay_by_default_and_frozen_not_decayed) {
  ParameterCollection m;
  dl::Parameter a = m.add_parameters({2}, "a");
  dl::Parameter f = m.add_parameters({2}, "frozen");
  a.set_value({1.f, -2.f});
  f.set_value({1.f, -2.f});
  dl::SimpleSGDTrainer t(m);
  t.update();
  BOOST_CHECK(bit_equal(values(a), {1.f, -2.f}));
  m.set_weight_decay_lambda(0.5f);
  f.set_updated(false);
  t.update();
  test::check_close(values(a), {0.5f, -1.f}, 1e-6);
  BOOST_CHECK(bit_equal(values(f), {1.f, -2.f}));
}

BOOST_AUTO_TEST_CASE(decay_from_command_line) {
  const char* args[] = {"prog", "--dynet-weight-decay", "0.25", "--dynet-seed", "7"};
  int argc = 5;
  char** argv = const_cast<char**>(args);
  dl::initialize(argc, argv);
  {
    ParameterCollection m;
    BOOST_CHECK_CLOSE(m.get_weight_decay_lambda(), 0.25f, 1e-4);
    dl::Parameter a = m.add_parameters({1}, "a");
    a.set_value({2.f});
    dl::SimpleSGDTrainer t(m);
    t.update();
    test::check_close(values(a), {1.5f}, 1e-6);
  }
  dl::DynetParams reset;
  reset.random_seed = 7;
  dl::initialize(reset);
  ParameterCollection m2;
  BOOST_CHECK_EQUAL(m2.get_weight_decay_lambda(), 0.f);
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ sparse lookup updates

BOOST_AUTO_TEST_SUITE(sparse)

struct Table {
  ParameterCollection m;
  dl::LookupParameter E;
  std::vector<std::vector<float>> init;
  Table() {
    E = m.add_lookup_parameters(5, {3}, "E");
    for (unsigned r = 0; r < 5; ++r) {
      init.push_back(test::test_values(3, 0.3f * r));
      E.initialize(r, init.back());
    }
  }
  // Loss over the given rows (looked up as a batch).
  void backprop_rows(std::vector<unsigned> rows) {
    dl::ComputationGraph cg;
    dl::Expression l = dl::sum_batches(dl::sum_elems(dl::square(dl::lookup(cg, E, rows))));
    cg.forward(l);
    cg.backward(l);
  }
};

BOOST_AUTO_TEST_CASE(only_used_rows_change) {
  for (int kind = 0; kind < 3; ++kind) {
    Table tb;
    std::unique_ptr<dl::Trainer> t;
    if (kind == 0) t = std::make_unique<dl::SimpleSGDTrainer>(tb.m, 0.1f);
    if (kind == 1) t = std::make_unique<dl::AdamTrainer>(tb.m, 0.1f);
    if (kind == 2) t = std::make_unique<dl::MomentumSGDTrainer>(tb.m, 0.1f);
    tb.backprop_rows({1, 3, 1});
    BOOST_CHECK_EQUAL(tb.E.get_storage().non_zero_grads.size(), 2u);
    t->update();
    for (unsigned r : {0u, 2u, 4u}) BOOST_CHECK_MESSAGE(bit_equal(row(tb.E, r), tb.init[r]), "kind " << kind << " row " << r);
    for (unsigned r : {1u, 3u}) BOOST_CHECK_MESSAGE(!bit_equal(row(tb.E, r), tb.init[r]), "kind " << kind << " row " << r);
    // Gradients consumed.
    BOOST_CHECK(tb.E.get_storage().non_zero_grads.empty());
    for (float g : test::table_gradient(tb.E.get_storage())) BOOST_CHECK_EQUAL(g, 0.f);
  }
}

BOOST_AUTO_TEST_CASE(sparse_row_uses_its_gradient) {
  Table tb;
  dl::SimpleSGDTrainer t(tb.m, 0.1f);
  t.clipping_enabled = false;
  tb.backprop_rows({2, 2});  // d/dx sum(x^2) twice = 4x
  t.update();
  std::vector<float> want(3);
  for (int i = 0; i < 3; ++i) want[i] = tb.init[2][i] - 0.1f * 4 * tb.init[2][i];
  test::check_close(row(tb.E, 2), want, 1e-6);
}

BOOST_AUTO_TEST_CASE(momentum_continues_only_when_dense) {
  // Step 1 uses row 1; step 2 uses row 3 only.  With sparse updates row 1 keeps
  // its value in step 2; with sparse updates off its momentum moves it again.
  for (bool sparse : {true, false}) {
    Table tb;
    dl::MomentumSGDTrainer t(tb.m, 0.1f, 0.5f);
    t.sparse_updates_enabled = sparse;
    tb.backprop_rows({1});
    t.update();
    std::vector<float> after1 = row(tb.E, 1);
    tb.backprop_rows({3});
    t.update();
    BOOST_CHECK_EQUAL(bit_equal(row(tb.E, 1), after1), sparse);
    BOOST_CHECK(bit_equal(row(tb.E, 0), tb.init[0]));  // never used, zero momentum
  }
}

BOOST_AUTO_TEST_CASE(gradient_kept_for_touched_rows_only) {
  // A table of 100,000 rows whose graph touches 3 holds 3 rows of gradient
  // (room for 64), not the table's; its whole gradient reads as zero elsewhere.
  ParameterCollection m;
  dl::LookupParameter E = m.add_lookup_parameters(100000, {8}, "E");
  {
    dl::ComputationGraph cg;
    dl::Expression l = dl::sum_batches(dl::sum_elems(dl::lookup(cg, E, std::vector<unsigned>{7, 99999, 7, 12})));
    cg.forward(l);
    cg.backward(l);
  }
  const dl::LookupParameterStorage& s = E.get_storage();
  BOOST_CHECK(s.sparse_gradient());
  BOOST_CHECK_EQUAL(s.non_zero_grads.size(), 3u);
  BOOST_CHECK_EQUAL(s.row_grads_capacity, 64u);
  BOOST_CHECK_EQUAL(s.grads.size(), 0u);  // no per-row views of a whole gradient
  const std::vector<float> g = test::table_gradient(s);
  size_t nonzero = 0;
  for (float x : g) nonzero += x != 0.f;
  BOOST_CHECK_EQUAL(nonzero, 3u * 8u);
  BOOST_CHECK(bit_equal(test::row_gradient(s, 7), std::vector<float>(8, 2.f)));
  BOOST_CHECK(bit_equal(test::row_gradient(s, 12), std::vector<float>(8, 1.f)));
  BOOST_CHECK_CLOSE(s.gradient_squared_l2_norm(), 8.f * (4 + 1 + 1), 1e-4);
}

BOOST_AUTO_TEST_CASE(sparse_and_whole_gradients_train_alike) {
  // Two equal tables trained in lockstep, one whose gradient was made whole
  // (dense_grads(), as a gradient check or gradients() does) and one that keeps
  // the touched rows' only: every trainer leaves them bit-equal, with more
  // distinct rows in a step than the sparse store first has room for, clipping
  // on, and sparse updates on and off.
  for (int kind = 0; kind < 4; ++kind)
    for (bool sparse_updates : {true, false}) {
      Table a, b;
      b.E.get_storage().dense_grads();
      BOOST_CHECK(a.E.get_storage().sparse_gradient());
      BOOST_CHECK(!b.E.get_storage().sparse_gradient());
      auto make = [&](ParameterCollection& m) -> std::unique_ptr<dl::Trainer> {
        if (kind == 0) return std::make_unique<dl::SimpleSGDTrainer>(m, 0.1f);
        if (kind == 1) return std::make_unique<dl::AdamTrainer>(m, 0.05f);
        if (kind == 2) return std::make_unique<dl::MomentumSGDTrainer>(m, 0.1f);
        return std::make_unique<dl::AdagradTrainer>(m, 0.1f);
      };
      std::unique_ptr<dl::Trainer> ta = make(a.m), tb = make(b.m);
      for (dl::Trainer* t : {ta.get(), tb.get()}) {
        t->sparse_updates_enabled = sparse_updates;
        t->clip_threshold = 0.5f;
      }
      std::mt19937 gen(3);
      for (int step = 0; step < 6; ++step) {
        std::vector<unsigned> rows(3 + gen() % 5);
        for (auto& r : rows) r = gen() % 5;
        a.backprop_rows(rows);
        b.backprop_rows(rows);
        ta->update();
        tb->update();
      }
      for (unsigned r = 0; r < 5; ++r)
        BOOST_CHECK_MESSAGE(bit_equal(row(a.E, r), row(b.E, r)), "kind " << kind << " sparse updates "
                                                                         << sparse_updates << " row " << r);
      BOOST_CHECK_EQUAL(a.E.get_storage().sparse_gradient(), sparse_updates);
    }
  // More distinct rows than the sparse store first holds.
  ParameterCollection m;
  dl::LookupParameter E = m.add_lookup_parameters(300, {2}, "E");
  std::vector<unsigned> rows;
  for (unsigned r = 0; r < 300; r += 2) rows.push_back(r);
  for (int pass = 0; pass < 2; ++pass) {
    dl::ComputationGraph cg;
    dl::Expression l = dl::sum_batches(dl::sum_elems(dl::lookup(cg, E, rows)));
    cg.forward(l);
    cg.backward(l);
  }
  const std::vector<float> g = test::table_gradient(E.get_storage());
  for (unsigned r = 0; r < 300; ++r)
    BOOST_CHECK_EQUAL(g[2 * r], r % 2 == 0 ? 2.f : 0.f);
  BOOST_CHECK_EQUAL(E.get_storage().row_grads_capacity, 256u);
}

BOOST_AUTO_TEST_CASE(whole_table_use_is_dense) {
  Table tb;
  dl::MomentumSGDTrainer t(tb.m, 0.1f, 0.5f);
  tb.backprop_rows({1});
  t.update();
  std::vector<float> after1 = row(tb.E, 1);
  {
    dl::ComputationGraph cg;
    dl::Expression l = dl::sum_elems(dl::parameter(cg, tb.E)) * 0.f;  // zero gradient, but all_updated
    cg.forward(l);
    cg.backward(l);
  }
  BOOST_CHECK(tb.E.get_storage().all_updated);
  t.update();
  BOOST_CHECK(!bit_equal(row(tb.E, 1), after1));  // momentum applied to every row
  BOOST_CHECK(!tb.E.get_storage().all_updated);
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ frozen parameters, state, rates

BOOST_AUTO_TEST_SUITE(state)

BOOST_AUTO_TEST_CASE(frozen_parameters_unchanged) {
  Regression r;
  r.w.set_updated(false);
  r.E.set_updated(false);
  std::vector<float> w0 = values(r.w), b0 = values(r.b);
  std::vector<float> e0 = dl::as_vector(r.E.get_storage().all_values);
  dl::AdamTrainer t(r.m, 0.05f);
  for (int i = 0; i < 5; ++i) {
    r.loss(true);
    t.update();
  }
  BOOST_CHECK(bit_equal(values(r.w), w0));
  BOOST_CHECK(bit_equal(dl::as_vector(r.E.get_storage().all_values), e0));
  BOOST_CHECK(!bit_equal(values(r.b), b0));
  // Their gradients are cleared too, not piled up.
  for (float g : grads(r.w)) BOOST_CHECK_EQUAL(g, 0.f);
  BOOST_CHECK(r.E.get_storage().non_zero_grads.empty());
}

BOOST_AUTO_TEST_CASE(frozen_gradient_not_in_clip_norm) {
  ParameterCollection m;
  dl::Parameter a = m.add_parameters({1}, "a"), f = m.add_parameters({1}, "f");
  a.set_value({0.f});
  f.set_updated(false);
  dl::SimpleSGDTrainer t(m, 1.f);
  set_grad(a, {3.f});
  set_grad(f, {100.f});
  t.update();
  test::check_close(values(a), {-3.f}, 1e-6);
  BOOST_CHECK_EQUAL(t.clips, 0);
}

BOOST_AUTO_TEST_CASE(restart_resets_state) {
  // Momentum and Adagrad: after restart() the same gradient gives the same step
  // as the very first one; without it the step differs.
  for (int kind = 0; kind < 2; ++kind) {
    TwoSteps s;
    std::unique_ptr<dl::Trainer> t;
    if (kind == 0) t = std::make_unique<dl::MomentumSGDTrainer>(s.m, 0.1f, 0.5f);
    if (kind == 1) t = std::make_unique<dl::AdagradTrainer>(s.m, 0.1f);
    std::vector<float> x1 = s.run(*t, 1);
    std::vector<float> step1(3), step2(3), step3(3);
    for (int i = 0; i < 3; ++i) step1[i] = x1[i] - s.x0[i];
    std::vector<float> x2 = s.run(*t, 1);
    for (int i = 0; i < 3; ++i) step2[i] = x2[i] - x1[i];
    BOOST_CHECK_GT(std::fabs(step2[0] - step1[0]), 1e-4);
    t->restart();
    std::vector<float> x3 = s.run(*t, 1);
    for (int i = 0; i < 3; ++i) step3[i] = x3[i] - x2[i];
    test::check_close(step3, step1, 1e-4);
  }
}

BOOST_AUTO_TEST_CASE(restart_with_rate) {
  TwoSteps s;
  dl::MomentumSGDTrainer t(s.m, 0.1f, 0.5f);
  s.run(t, 1);
  t.restart(0.2f);
  BOOST_CHECK_CLOSE(t.learning_rate, 0.2f, 1e-4);
  BOOST_CHECK_CLOSE(t.learning_rate0, 0.2f, 1e-4);
  std::vector<float> before = values(s.p);
  std::vector<float> after = s.run(t, 1);
  for (int i = 0; i < 3; ++i) BOOST_CHECK_CLOSE(after[i] - before[i], -0.2f * s.g[i], 1e-3);
}

BOOST_AUTO_TEST_CASE(state_for_parameters_added_later) {
  ParameterCollection m;
  dl::Parameter a = zero_parameter(m, 2, "a");
  dl::AdamTrainer t(m, 0.1f);
  set_grad(a, {1.f, 1.f});
  t.update();
  dl::Parameter b = m.add_parameters({3}, "b");
  dl::LookupParameter e = m.add_lookup_parameters(2, {2}, "e");
  b.set_value({0.f, 0.f, 0.f});
  e.initialize(1, {0.f, 0.f});
  set_grad(b, {1.f, -1.f, 0.f});
  std::vector<float> g{1.f, 1.f};
  e.get_storage().accumulate_grad(1, g.data());
  t.update();
  BOOST_CHECK_LT(values(b)[0], 0.f);
  BOOST_CHECK_GT(values(b)[1], 0.f);
  BOOST_CHECK_EQUAL(values(b)[2], 0.f);
  BOOST_CHECK_LT(row(e, 1)[0], 0.f);
}

BOOST_AUTO_TEST_CASE(trainer_on_subcollection_leaves_the_rest) {
  ParameterCollection m;
  dl::Parameter outer = m.add_parameters({2}, "outer");
  ParameterCollection sub = m.add_subcollection("enc");
  dl::Parameter inner = sub.add_parameters({2}, "inner");
  outer.set_value({1.f, 1.f});
  inner.set_value({1.f, 1.f});
  dl::SimpleSGDTrainer t(sub, 0.5f);
  set_grad(outer, {1.f, 1.f});
  set_grad(inner, {1.f, 1.f});
  t.update();
  BOOST_CHECK(bit_equal(values(outer), {1.f, 1.f}));
  test::check_close(values(inner), {0.5f, 0.5f}, 1e-6);
  // The trainer keeps its own handle: it works after the caller's handle is gone.
  std::unique_ptr<dl::Trainer> t2;
  {
    ParameterCollection tmp = m.add_subcollection("tmp");
    tmp.add_parameters({1}, "x");
    t2 = std::make_unique<dl::SimpleSGDTrainer>(tmp);
  }
  t2->update();
  BOOST_CHECK_EQUAL(t2->updates, 1);
}

BOOST_AUTO_TEST_CASE(update_epoch_decays_rate) {
  ParameterCollection m;
  dl::SimpleSGDTrainer t(m, 0.1f);
  t.update_epoch();  // no decay set: the rate is left alone
  BOOST_CHECK_CLOSE(t.learning_rate, 0.1f, 1e-4);
  t.learning_rate = 0.3f;  // assigned by the user and kept
  t.update_epoch();
  BOOST_CHECK_CLOSE(t.learning_rate, 0.3f, 1e-4);
  BOOST_CHECK_EQUAL(t.epoch, 2);

  dl::SimpleSGDTrainer d(m, 0.1f);
  d.eta_decay = 0.5f;  // DyNet 2.0 spelling of learning_rate_decay
  BOOST_CHECK_EQUAL(d.learning_rate_decay, 0.5f);
  d.update_epoch();
  BOOST_CHECK_CLOSE(d.learning_rate, 0.1f / 1.5f, 1e-4);
  d.update_epoch(2.f);
  BOOST_CHECK_CLOSE(d.learning_rate, 0.1f / 2.5f, 1e-4);
  BOOST_CHECK_CLOSE(d.eta, d.learning_rate, 1e-6);
  BOOST_CHECK_CLOSE(d.eta0, 0.1f, 1e-4);
}

BOOST_AUTO_TEST_CASE(cyclical_schedule) {
  ParameterCollection m;
  dl::Parameter a = zero_parameter(m, 1, "a");
  dl::CyclicalSGDTrainer t(m, 0.01f, 0.1f, 2.f);
  // Triangle with step_size 2: 0.01, 0.055, 0.1, 0.055, 0.01, 0.055, ...
  const float want[] = {0.01f, 0.055f, 0.1f, 0.055f, 0.01f, 0.055f, 0.1f};
  float x = 0;
  for (float w : want) {
    set_grad(a, {1.f});
    t.update();
    BOOST_CHECK_CLOSE(t.learning_rate, w, 1e-3);
    x -= w;
    BOOST_CHECK_CLOSE(values(a)[0], x, 1e-3);  // the step used that rate
  }
  t.restart();
  BOOST_CHECK_EQUAL(t.it, 0u);
  BOOST_CHECK_CLOSE(t.learning_rate, 0.01f, 1e-4);

  // gamma shrinks the amplitude: update 2 is the peak, scaled by gamma^2.
  dl::CyclicalSGDTrainer g(m, 0.01f, 0.1f, 2.f, 0.5f);
  for (int i = 0; i < 3; ++i) {
    set_grad(a, {1.f});
    g.update();
  }
  BOOST_CHECK_CLOSE(g.learning_rate, 0.01f + 0.09f * 0.25f, 1e-3);
}

BOOST_AUTO_TEST_CASE(eg_cyclical_rate) {
  ParameterCollection m;
  dl::Parameter p = m.add_parameters({2}, "p");
  p.set_value({0.5f, 0.5f});
  dl::EGTrainer t(m);
  t.enableCyclicalLR(0.01f, 0.1f, 2.f, 1.f);
  for (float w : {0.01f, 0.055f, 0.1f}) {
    set_grad(p, {1.f, 0.f});
    t.update();
    BOOST_CHECK_CLOSE(t.learning_rate, w, 1e-3);
  }
}

BOOST_AUTO_TEST_CASE(status_prints_and_resets) {
  ParameterCollection m;
  dl::Parameter a = m.add_parameters({2}, "a");
  dl::SimpleSGDTrainer t(m, 0.25f);
  set_grad(a, {30.f, 40.f});
  t.update();
  t.update();
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  t.status();
  std::cerr.rdbuf(old);
  BOOST_CHECK_EQUAL(captured.str(), "[lr=0.25 clips=1 updates=2] ");
  BOOST_CHECK_EQUAL(t.updates_since_status, 0);
  BOOST_CHECK_EQUAL(t.clips_since_status, 0);
  BOOST_CHECK_EQUAL(t.updates, 2);
  BOOST_CHECK_EQUAL(t.clips, 1);
}

BOOST_AUTO_TEST_CASE(steady_state_update_does_not_allocate) {
  ParameterCollection m;
  dl::Parameter a = m.add_parameters({64, 32}, "a");
  dl::Parameter b = m.add_parameters({32}, "b");
  dl::LookupParameter e = m.add_lookup_parameters(100, {16}, "e");
  std::vector<std::unique_ptr<dl::Trainer>> trainers;
  trainers.push_back(std::make_unique<dl::SimpleSGDTrainer>(m, 0.01f));
  trainers.push_back(std::make_unique<dl::MomentumSGDTrainer>(m, 0.01f));
  trainers.push_back(std::make_unique<dl::AdamTrainer>(m, 0.01f));
  trainers.push_back(std::make_unique<dl::AmsgradTrainer>(m, 0.01f));
  trainers.push_back(std::make_unique<dl::AdadeltaTrainer>(m));
  std::vector<float> ga(64 * 32, 0.01f), gb(32, -0.02f);
  BOOST_REQUIRE(test::allocations_counted());
  for (auto& t : trainers) {
    t->update();  // first update sizes the state
    set_grad(a, ga);
    set_grad(b, gb);
    BOOST_CHECK_EQUAL(test::allocations_during([&] { t->update(); }), 0);
  }
}

BOOST_AUTO_TEST_CASE(clears_dense_gradients) {
  ParameterCollection m;
  dl::Parameter a = m.add_parameters({2}, "a");
  dl::SimpleSGDTrainer t(m);
  set_grad(a, {1.f, 2.f});
  t.update();
  BOOST_CHECK(bit_equal(grads(a), {0.f, 0.f}));
  BOOST_CHECK(!a.get_storage().nonzero_grad);
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------ the GPU rules, on the CPU
// The per-element rules the GPU kernel runs (backends/update_rules.h), checked here
// against the CPU rules of the same trainers, so that a machine without a GPU
// tests their formulas too: the same values and states after three steps.
namespace {

template <class T>
struct Exposed : T {
  using T::T;
  using T::begin_update;
  using T::update_rule;
};
template <class T>
struct ExposedAdam : T {  // Adam and AMSGrad: their step rate too
  using T::T;
  using T::begin_update;
  using T::step_rate_;
  using T::update_rule;
};

template <class T, class Args>
void check_device_rule(const std::string& name, T& trainer, dl::DeviceRule rule, Args args) {
  const size_t n = 37;
  std::vector<float> xc = test::test_values(n), xd = xc;
  std::vector<std::vector<float>> sc(3, std::vector<float>(n, 0.f)), sd = sc;
  for (unsigned step = 0; step < 3; ++step) {
    const std::vector<float> g = test::test_values(n, 0.3f * static_cast<float>(step + 1));
    const float gscale = 0.7f;
    trainer.begin_update();
    dl::UpdateSpan span;
    span.device = dl::cpu_device();
    span.values = xc.data();
    span.grads = const_cast<float*>(g.data());
    for (unsigned k = 0; k < 3; ++k) span.state[k] = sc[k].data();
    span.size = n;
    trainer.update_rule(gscale, span);
    dl::DeviceRuleArgs a = args(trainer);
    a.gscale = gscale;
    for (size_t i = 0; i < n; ++i) dl::apply_update_rule(rule, a, i, xd.data(), g.data(), sd[0].data(), sd[1].data(), sd[2].data());
  }
  for (size_t i = 0; i < n; ++i) {
    BOOST_CHECK_MESSAGE(std::fabs(xc[i] - xd[i]) <= 1e-6f + 1e-5f * std::fabs(xc[i]),
                        name << " value " << i << ": CPU " << xc[i] << " vs device rule " << xd[i]);
    for (unsigned k = 0; k < 3; ++k)
      BOOST_CHECK_MESSAGE(std::fabs(sc[k][i] - sd[k][i]) <= 1e-6f + 1e-5f * std::fabs(sc[k][i]),
                          name << " state " << k << "[" << i << "]: CPU " << sc[k][i] << " vs device rule " << sd[k][i]);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(device_rules_match_cpu_rules) {
  dl::ParameterCollection m;
  Exposed<dl::MomentumSGDTrainer> momentum(m, 0.1f, 0.8f);
  check_device_rule("MomentumSGD", momentum, dl::DeviceRule::Momentum, [](auto& t) {
    dl::DeviceRuleArgs a;
    a.rate = t.learning_rate;
    a.a = t.momentum;
    return a;
  });
  Exposed<dl::AdagradTrainer> adagrad(m, 0.1f, 1e-6f);
  check_device_rule("Adagrad", adagrad, dl::DeviceRule::Adagrad, [](auto& t) {
    dl::DeviceRuleArgs a;
    a.rate = t.learning_rate;
    a.eps = t.epsilon;
    return a;
  });
  auto rate_rho_eps = [](auto& t) {  // Adadelta, RMSProp
    dl::DeviceRuleArgs a;
    a.rate = t.learning_rate;
    a.a = t.rho;
    a.eps = t.epsilon;
    return a;
  };
  Exposed<dl::AdadeltaTrainer> adadelta(m, 1e-6f, 0.9f);
  check_device_rule("Adadelta", adadelta, dl::DeviceRule::Adadelta, rate_rho_eps);
  Exposed<dl::RMSPropTrainer> rmsprop(m, 0.05f, 1e-6f, 0.9f);
  check_device_rule("RMSProp", rmsprop, dl::DeviceRule::RMSProp, rate_rho_eps);
  auto adam_args = [](auto& t) {  // Adam, AMSGrad
    dl::DeviceRuleArgs a;
    a.rate = t.step_rate_;
    a.a = t.beta_1;
    a.b = t.beta_2;
    a.eps = t.epsilon;
    return a;
  };
  ExposedAdam<dl::AdamTrainer> adam(m, 0.01f);
  check_device_rule("Adam", adam, dl::DeviceRule::Adam, adam_args);
  ExposedAdam<dl::AmsgradTrainer> amsgrad(m, 0.01f);
  check_device_rule("Amsgrad", amsgrad, dl::DeviceRule::Amsgrad, adam_args);
}
