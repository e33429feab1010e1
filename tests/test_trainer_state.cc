#define BOOST_TEST_MODULE trainer_state
// Trainer state under DyNet's names, save / populate, moving averages,
// shadow parameters and the parameter-storage API of a collection.
#include <sstream>
#include <string>

#include "dynet_lite/io.h"
#include "dynet_lite/shadow-params.h"
#include "dynet_lite/training.h"
#include "test_utils.h"

using dl::MovingAverage;
using dl::ParameterCollection;

namespace {

// DyNet's trainer test problem: x = {0.5, 0.1, 0.4}, loss = x . (1, 1, 1), so
// every gradient is 1; plus a lookup table whose row `r` is summed into the loss.
struct Problem {
  ParameterCollection m;
  dl::Parameter x;
  dl::LookupParameter E;
  Problem() {
    x = m.add_parameters({3}, "x");
    x.set_value({0.5f, 0.1f, 0.4f});
    E = m.add_lookup_parameters(4, {2}, "E");
    for (unsigned r = 0; r < 4; ++r) E.initialize(r, {0.1f * (r + 1), -0.2f * r});
  }
  float step(dl::Trainer& t, unsigned r = 1) {
    dl::ComputationGraph cg;
    dl::Expression loss = dl::dot_product(dl::parameter(cg, x), dl::input(cg, {3}, {1.f, 1.f, 1.f})) +
                          dl::sum_elems(dl::square(dl::lookup(cg, E, r)));
    float v = dl::as_scalar(cg.forward(loss));
    cg.backward(loss);
    t.update();
    return v;
  }
  std::vector<float> values() const {
    std::vector<float> v = dl::as_vector(x.get_storage().values);
    std::vector<float> e = dl::as_vector(E.get_storage().all_values);
    v.insert(v.end(), e.begin(), e.end());
    return v;
  }
};

void enable(dl::Trainer& t, MovingAverage ma) {
  if (ma == MovingAverage::Exponential) t.exponential_moving_average(0.9f);
  if (ma == MovingAverage::Cumulative) t.cumulative_moving_average();
}

// DyNet's trainer I/O check: one update, save, a second update; a new model
// and trainer populated from the saved state give the same second update, to
// the bit, and the same moving averages.
template <class T>
void check_round_trip(MovingAverage ma) {
  Problem a;
  T ta(a.m);
  enable(ta, ma);
  a.step(ta, 1);
  std::ostringstream model_file, trainer_file;
  std::vector<float> after_first = a.values();
  ta.save(trainer_file);
  a.step(ta, 2);
  a.step(ta, 1);

  Problem b;
  T tb(b.m);
  b.x.set_value({after_first[0], after_first[1], after_first[2]});
  for (unsigned r = 0; r < 4; ++r) b.E.initialize(r, {after_first[3 + 2 * r], after_first[4 + 2 * r]});
  std::istringstream in(trainer_file.str());
  tb.populate(in);
  b.step(tb, 2);
  b.step(tb, 1);
  BOOST_CHECK(a.values() == b.values());
  BOOST_CHECK_EQUAL(ta.updates, tb.updates);
  if (ma != MovingAverage::None) {
    ta.swap_params_to_moving_average(true, true);
    tb.swap_params_to_moving_average(true, true);
    BOOST_CHECK(a.values() == b.values());
    ta.swap_params_to_weights();
    tb.swap_params_to_weights();
    BOOST_CHECK(a.values() == b.values());
  }
}

template <class T>
void check_round_trips() {
  for (MovingAverage ma : {MovingAverage::None, MovingAverage::Cumulative, MovingAverage::Exponential})
    check_round_trip<T>(ma);
}

// Exposes protected state members as DyNet's own tests do (`using T::name`).
struct Adam : dl::AdamTrainer {
  using dl::AdamTrainer::AdamTrainer;
  using dl::AdamTrainer::lm;
  using dl::AdamTrainer::lv;
  using dl::AdamTrainer::m;
  using dl::AdamTrainer::ma_p;
  using dl::AdamTrainer::v;
};
struct Amsgrad : dl::AmsgradTrainer {
  using dl::AmsgradTrainer::AmsgradTrainer;
  using dl::AmsgradTrainer::lvhat;
  using dl::AmsgradTrainer::vhat;
};
struct Adagrad : dl::AdagradTrainer {
  using dl::AdagradTrainer::AdagradTrainer;
  using dl::AdagradTrainer::vlp;
  using dl::AdagradTrainer::vp;
};
struct Adadelta : dl::AdadeltaTrainer {
  using dl::AdadeltaTrainer::AdadeltaTrainer;
  using dl::AdadeltaTrainer::hd;
  using dl::AdadeltaTrainer::hg;
  using dl::AdadeltaTrainer::hld;
  using dl::AdadeltaTrainer::hlg;
};
struct RMSProp : dl::RMSPropTrainer {
  using dl::RMSPropTrainer::RMSPropTrainer;
  using dl::RMSPropTrainer::hlmsg;
  using dl::RMSPropTrainer::hmsg;
};
struct EG : dl::EGTrainer {
  using dl::EGTrainer::EGTrainer;
  using dl::EGTrainer::hlp;
  using dl::EGTrainer::hp;
};
struct Sgd : dl::SimpleSGDTrainer {
  using dl::SimpleSGDTrainer::SimpleSGDTrainer;
  using dl::SimpleSGDTrainer::ma_lp;
  using dl::SimpleSGDTrainer::ma_p;
  using dl::SimpleSGDTrainer::ma_updates;
};

std::vector<float> h(const std::vector<dl::ShadowParameters>& s, size_t i) { return dl::as_vector(s.at(i).h); }
std::vector<float> row(const std::vector<dl::ShadowLookupParameters>& s, size_t i, unsigned r) {
  return dl::as_vector(s.at(i).h.at(r));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(save_populate)

BOOST_AUTO_TEST_CASE(simple_sgd) { check_round_trips<dl::SimpleSGDTrainer>(); }
BOOST_AUTO_TEST_CASE(cyclical_sgd) { check_round_trips<dl::CyclicalSGDTrainer>(); }
BOOST_AUTO_TEST_CASE(momentum_sgd) { check_round_trips<dl::MomentumSGDTrainer>(); }
BOOST_AUTO_TEST_CASE(adagrad) { check_round_trips<dl::AdagradTrainer>(); }
BOOST_AUTO_TEST_CASE(adadelta) { check_round_trips<dl::AdadeltaTrainer>(); }
BOOST_AUTO_TEST_CASE(rmsprop) { check_round_trips<dl::RMSPropTrainer>(); }
BOOST_AUTO_TEST_CASE(adam) { check_round_trips<dl::AdamTrainer>(); }
BOOST_AUTO_TEST_CASE(amsgrad) { check_round_trips<dl::AmsgradTrainer>(); }

// EG keeps parameters on the simplex: a problem of positive values.
BOOST_AUTO_TEST_CASE(eg) {
  auto run = [](dl::EGTrainer& t, dl::Parameter& p, int steps) {
    for (int i = 0; i < steps; ++i) {
      dl::ComputationGraph cg;
      dl::Expression loss = dl::dot_product(dl::parameter(cg, p), dl::input(cg, {3}, {1.f, 2.f, 3.f}));
      cg.forward(loss);
      cg.backward(loss);
      t.update();
    }
  };
  ParameterCollection ma, mb;
  dl::Parameter pa = ma.add_parameters({3}), pb = mb.add_parameters({3});
  pa.set_value({0.2f, 0.3f, 0.5f});
  EG ta(ma, 0.1f);
  ta.enableCyclicalLR(0.01f, 0.1f, 3, 0.9f);
  run(ta, pa, 2);
  std::stringstream f;
  ta.save(f);
  pb.set_value(dl::as_vector(*pa.values()));
  run(ta, pa, 2);
  EG tb(mb);
  tb.populate(f);
  BOOST_REQUIRE_EQUAL(tb.hp.size(), 1u);
  BOOST_CHECK(h(tb.hp, 0) != h(ta.hp, 0));  // ta has moved on
  BOOST_CHECK(tb.isCyclical);
  BOOST_CHECK_EQUAL(tb.it, 2u);
  run(tb, pb, 2);
  BOOST_CHECK(dl::as_vector(*pa.values()) == dl::as_vector(*pb.values()));
  BOOST_CHECK(h(ta.hp, 0) == h(tb.hp, 0));
}

BOOST_AUTO_TEST_CASE(hyperparameters_and_learning_rate) {
  Problem a;
  dl::AdamTrainer ta(a.m, 0.01f, 0.8f, 0.99f, 1e-6f);
  ta.clip_threshold = 2.5f;
  a.step(ta);
  std::stringstream f;
  ta.save(f);
  Problem b;
  dl::AdamTrainer tb(b.m);
  tb.populate(f, 0.5f);
  BOOST_CHECK_EQUAL(tb.beta_1, 0.8f);
  BOOST_CHECK_EQUAL(tb.beta_2, 0.99f);
  BOOST_CHECK_EQUAL(tb.epsilon, 1e-6f);
  BOOST_CHECK_EQUAL(tb.clip_threshold, 2.5f);
  BOOST_CHECK_EQUAL(tb.updates, 1.f);
  BOOST_CHECK_EQUAL(tb.learning_rate, 0.5f);  // populate(is, lr)
}

BOOST_AUTO_TEST_CASE(bad_streams_change_nothing) {
  Problem a;
  dl::MomentumSGDTrainer ta(a.m);
  a.step(ta);
  std::stringstream f;
  ta.save(f);
  const std::string saved = f.str();

  Problem b;
  dl::MomentumSGDTrainer tb(b.m, 0.3f);
  auto populate = [&](const std::string& text) {
    std::istringstream in(text);
    tb.populate(in);
  };
  test::check_throws_with<std::runtime_error>([&] { populate(saved.substr(0, saved.size() / 2)); },
                                              {"MomentumSGDTrainer::populate"});
  dl::AdamTrainer adam(b.m);
  std::istringstream in(saved);
  test::check_throws_with<std::runtime_error>([&] { adam.populate(in); }, {"state of a MomentumSGDTrainer"});
  // A collection whose parameter has another size.
  ParameterCollection other;
  other.add_parameters({4}, "x");
  other.add_lookup_parameters(4, {2}, "E");
  dl::MomentumSGDTrainer tc(other);
  std::istringstream in2(saved);
  test::check_throws_with<std::runtime_error>([&] { tc.populate(in2); }, {"'vp'", "/x", "3 values"});
  BOOST_CHECK_EQUAL(tb.learning_rate, 0.3f);
  BOOST_CHECK_EQUAL(tb.updates, 0.f);
  // A good stream still works after the failures.
  populate(saved);
  BOOST_CHECK(h(tb.vp, 0) == h(ta.vp, 0));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(state_members)

// After one update with gradient 1 (lookup row 1: 2 * E[1] = {0.4, -0.4}):
// momentum velocity v = -lr g; Adam m = (1 - b1) g, v = (1 - b2) g^2.
BOOST_AUTO_TEST_CASE(values_after_one_update) {
  Problem a;
  dl::MomentumSGDTrainer mom(a.m, 0.01f, 0.9f);
  a.step(mom);
  test::check_close(h(mom.vp, 0), {-0.01f, -0.01f, -0.01f});
  test::check_close(row(mom.vlp, 0, 1), {-0.004f, 0.004f});
  test::check_close(row(mom.vlp, 0, 0), {0.f, 0.f});

  Problem b;
  Adam adam(b.m);
  b.step(adam);
  test::check_close(h(adam.m, 0), {0.1f, 0.1f, 0.1f});
  test::check_close(h(adam.v, 0), {0.001f, 0.001f, 0.001f});
  test::check_close(row(adam.lm, 0, 1), {0.04f, -0.04f});
  test::check_close(row(adam.lv, 0, 1), {0.00016f, 0.00016f});
  BOOST_CHECK(adam.ma_p.empty());

  Problem c;
  Adagrad adagrad(c.m);
  c.step(adagrad);
  test::check_close(h(adagrad.vp, 0), {1.f, 1.f, 1.f});
  test::check_close(row(adagrad.vlp, 0, 1), {0.16f, 0.16f});
}

BOOST_AUTO_TEST_CASE(every_trainer_names_its_buffers) {
  Problem p;
  Amsgrad ams(p.m);
  Adadelta delta(p.m);
  RMSProp rms(p.m);
  EG eg(p.m);
  p.step(ams);
  p.step(delta);
  p.step(rms);
  BOOST_CHECK_EQUAL(ams.vhat.size(), 1u);
  BOOST_CHECK_EQUAL(ams.lvhat.size(), 1u);
  test::check_close(h(ams.vhat, 0), {0.001f, 0.001f, 0.001f});
  test::check_close(h(delta.hg, 0), {0.05f, 0.05f, 0.05f});  // (1 - rho) g^2
  BOOST_CHECK_EQUAL(delta.hd.size(), 1u);
  BOOST_CHECK_EQUAL(delta.hld.size(), 1u);
  BOOST_CHECK_EQUAL(delta.hlg.size(), 1u);
  test::check_close(h(rms.hmsg, 0), {0.05f, 0.05f, 0.05f});
  BOOST_CHECK_EQUAL(rms.hlmsg.size(), 1u);
  BOOST_CHECK(eg.hp.empty() && eg.hlp.empty());  // allocated at the first update
  // restart() zeroes the state.
  ams.restart();
  test::check_close(h(ams.vhat, 0), {0.f, 0.f, 0.f});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(moving_averages)

// SGD at rate 0.1 on gradient 1: x1 = {0.4, 0.0, 0.3}, x2 = {0.3, -0.1, 0.2}.
BOOST_AUTO_TEST_CASE(exponential_with_bias_correction) {
  ParameterCollection m;
  dl::Parameter x = m.add_parameters({3});
  x.set_value({0.5f, 0.1f, 0.4f});
  Sgd t(m, 0.1f);
  BOOST_CHECK(t.moving_average() == MovingAverage::None);
  t.exponential_moving_average(0.5f);
  BOOST_CHECK(t.moving_average() == MovingAverage::Exponential);
  for (int i = 0; i < 2; ++i) {
    x.get_storage().accumulate_grad(std::vector<float>{1, 1, 1}.data());
    t.update();
  }
  // ma = 0.5 (0.5 x1) + 0.5 x2
  test::check_close(h(t.ma_p, 0), {0.25f, -0.05f, 0.175f});
  t.swap_params_to_moving_average();
  test::check_close(dl::as_vector(*x.values()), {0.25f, -0.05f, 0.175f});
  t.swap_params_to_weights();
  test::check_close(dl::as_vector(*x.values()), {0.3f, -0.1f, 0.2f});
  t.swap_params_to_moving_average(true, true);  // / (1 - 0.5^2)
  test::check_close(dl::as_vector(*x.values()), {1.f / 3, -0.2f / 3, 0.7f / 3});
  // The next update steps the weights, not the average.
  x.get_storage().accumulate_grad(std::vector<float>{1, 1, 1}.data());
  t.update();
  test::check_close(dl::as_vector(*x.values()), {0.2f, -0.2f, 0.1f});
}

BOOST_AUTO_TEST_CASE(cumulative_every_second_update) {
  ParameterCollection m;
  dl::Parameter x = m.add_parameters({1});
  dl::LookupParameter E = m.add_lookup_parameters(2, {1});
  E.initialize(0, {1.f});
  E.initialize(1, {2.f});
  x.set_value({0.f});
  Sgd t(m, 1.f);
  t.cumulative_moving_average(2);
  for (int i = 0; i < 5; ++i) {  // x = 1, 2, 3, 4, 5; averages after updates 1, 3, 5
    x.get_storage().accumulate_grad(std::vector<float>{-1}.data());
    t.update();
  }
  BOOST_CHECK_EQUAL(t.ma_updates, 3u);
  test::check_close(h(t.ma_p, 0), {3.f});  // (1 + 3 + 5) / 3
  test::check_close(row(t.ma_lp, 0, 1), {2.f});
}

BOOST_AUTO_TEST_CASE(errors) {
  ParameterCollection m;
  dl::Parameter x = m.add_parameters({2});
  dl::SimpleSGDTrainer t(m);
  test::check_throws_with<std::runtime_error>([&] { t.swap_params_to_moving_average(); }, {"no moving average"});
  test::check_throws_with<std::invalid_argument>([&] { t.exponential_moving_average(1.5f); }, {"beta"});
  test::check_throws_with<std::invalid_argument>([&] { t.cumulative_moving_average(0); }, {"update_freq"});
  t.cumulative_moving_average();
  test::check_throws_with<std::runtime_error>([&] { t.swap_params_to_moving_average(); }, {"no average"});
  t.update();
  test::check_throws_with<std::runtime_error>([&] { t.exponential_moving_average(0.9f); }, {"before the first update"});
  t.swap_params_to_moving_average(false);
  test::check_throws_with<std::runtime_error>([&] { t.update(); }, {"not saved"});
  test::check_throws_with<std::runtime_error>([&] { t.swap_params_to_weights(); }, {"not saved"});
}

// While swapped, save() keeps the averages and the saved weights, so a
// populated trainer can put the weights back.
BOOST_AUTO_TEST_CASE(save_while_swapped) {
  Problem a;
  dl::SimpleSGDTrainer ta(a.m);
  ta.cumulative_moving_average();
  a.step(ta);
  std::vector<float> weights = a.values();
  a.step(ta);
  weights = a.values();
  ta.swap_params_to_moving_average();
  std::stringstream f;
  ta.save(f);
  Problem b;
  dl::SimpleSGDTrainer tb(b.m);
  tb.populate(f);
  tb.swap_params_to_weights();
  BOOST_CHECK(b.values() == weights);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(storages)

BOOST_AUTO_TEST_CASE(collection_storages) {
  ParameterCollection m;
  ParameterCollection sub = m.add_subcollection("affine");
  dl::Parameter a = m.add_parameters({2}, "a");
  dl::Parameter w = sub.add_parameters({3, 2});
  dl::LookupParameter e = m.add_lookup_parameters(5, {2}, "e");
  BOOST_CHECK_EQUAL(m.size(), 2u);
  BOOST_CHECK_EQUAL(sub.size(), 1u);
  auto ps = m.get_parameter_storages();
  BOOST_REQUIRE_EQUAL(ps.size(), 2u);
  BOOST_CHECK(ps[0].get() == &a.get_storage() && ps[1].get() == &w.get_storage());
  BOOST_CHECK_EQUAL(m.get_lookup_parameter_storages().size(), 1u);
  BOOST_CHECK(m.get_parameter_storage("/affine/_0").get() == &w.get_storage());
  BOOST_CHECK(m.get_lookup_parameter_storage("/e").get() == &e.get_storage());
  test::check_throws_with<std::runtime_error>([&] { m.get_parameter_storage("/b"); }, {"'/b'", "'/'"});
}

BOOST_AUTO_TEST_CASE(lookup_nonzero_grad) {
  Problem p;
  auto& E = p.E.get_storage();
  BOOST_CHECK(!E.nonzero_grad && !E.has_grad());
  dl::ComputationGraph cg;
  dl::Expression loss = dl::sum_elems(dl::lookup(cg, p.E, 2u));
  cg.forward(loss);
  cg.backward(loss);
  BOOST_CHECK(E.nonzero_grad);
  dl::SimpleSGDTrainer t(p.m);
  t.update();
  BOOST_CHECK(!E.nonzero_grad);
}

BOOST_AUTO_TEST_CASE(shadow_parameters) {
  ParameterCollection m;
  m.add_parameters({2, 3});
  m.add_lookup_parameters(4, {5});
  std::vector<dl::ShadowParameters> sp;
  std::vector<dl::ShadowLookupParameters> slp;
  dl::allocate_shadow_parameters(m, 0, sp);
  dl::allocate_shadow_lookup_parameters(m, 0, slp);
  BOOST_REQUIRE_EQUAL(sp.size(), 1u);
  BOOST_CHECK_EQUAL(sp[0].h.d, dl::Dim({2, 3}));
  BOOST_CHECK(dl::as_vector(sp[0].h) == std::vector<float>(6, 0.f));
  BOOST_REQUIRE_EQUAL(slp.size(), 1u);
  BOOST_CHECK_EQUAL(slp[0].h.size(), 4u);
  BOOST_CHECK_EQUAL(slp[0].all_h.d, dl::Dim({5, 4}));
  BOOST_CHECK(slp[0].h[3].v == slp[0].all_h.v + 15);
  m.add_parameters({7});
  dl::allocate_shadow_parameters(m, 1, sp);
  BOOST_CHECK_EQUAL(sp.size(), 2u);
  BOOST_CHECK_THROW(dl::allocate_shadow_parameters(m, 0, sp), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
