#define BOOST_TEST_MODULE grad_check
#include <iostream>
#include <sstream>

#include "dynet_lite/grad-check.h"
#include "test_utils.h"

using namespace dynet_lite;

namespace {

size_t count_of(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

// A small model: W {2,3}, b {2}, embeddings E: 4 rows of {3}.
struct SmallModel {
  ParameterCollection m;
  Parameter W, b;
  LookupParameter E;
  SmallModel() {
    W = m.add_parameters({2, 3}, 0.f, "W");
    b = m.add_parameters({2}, 0.f, "b");
    E = m.add_lookup_parameters(4, {3}, "E");
    W.set_value({0.3f, -0.2f, 0.5f, 0.1f, -0.4f, 0.25f});
    b.set_value({0.05f, -0.1f});
    for (unsigned r = 0; r < 4; ++r) E.initialize(r, test::test_values(3, 0.1f * static_cast<float>(r)));
  }
  // a scalar loss over rows 1 and 3 of E (rows 0 and 2 unused)
  Expression loss(ComputationGraph& cg, bool const_w = false) {
    Expression w = const_w ? const_parameter(cg, W) : parameter(cg, W);
    Expression h = tanh(w * lookup(cg, E, 1u) + parameter(cg, b));
    Expression g = logistic(w * lookup(cg, E, 3u));
    return squared_norm(h) + dot_product(h, g) + sum_elems(sin(lookup(cg, E, 3u)));
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(passes_on_a_correct_model_and_counts_elements) {
  SmallModel t;
  ComputationGraph cg;
  Expression loss = t.loss(cg);
  std::ostringstream out;
  BOOST_CHECK(check_grad(t.m, loss, 1, out));
  std::string s = out.str();
  // one line per parameter with the number of elements checked: W 6, b 2, E 4 x 3 = 12
  BOOST_CHECK_MESSAGE(s.find("W: 6 elements, all agree") != std::string::npos, s);
  BOOST_CHECK_MESSAGE(s.find("b: 2 elements, all agree") != std::string::npos, s);
  BOOST_CHECK_MESSAGE(s.find("E: 12 elements, all agree") != std::string::npos, s);
  BOOST_CHECK_MESSAGE(s.find("GRADIENT CHECK PASSED") != std::string::npos, s);
  BOOST_CHECK_EQUAL(count_of(s, "***"), 0u);
}

BOOST_AUTO_TEST_CASE(verbosity_levels) {
  SmallModel t;
  ComputationGraph cg;
  Expression loss = t.loss(cg);
  std::ostringstream quiet, every;
  BOOST_CHECK(check_grad(t.m, loss, 0, quiet));
  BOOST_CHECK_EQUAL(quiet.str(), "");
  BOOST_CHECK(check_grad(t.m, loss, 2, every));
  // verbosity 2: a line per element (6 + 2 + 12), plus the summaries
  BOOST_CHECK_EQUAL(count_of(every.str(), "analytic"), 20u);
  BOOST_CHECK_EQUAL(count_of(every.str(), "W["), 6u);
  BOOST_CHECK_EQUAL(count_of(every.str(), "E["), 12u);
  // the DyNet signature prints to std::cerr
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  bool ok = check_grad(t.m, loss, 1);
  std::cerr.rdbuf(old);
  BOOST_CHECK(ok);
  BOOST_CHECK_MESSAGE(captured.str().find("GRADIENT CHECK PASSED") != std::string::npos, captured.str());
}

BOOST_AUTO_TEST_CASE(analytic_gradients_match_a_plain_backward_and_values_are_restored) {
  SmallModel t;
  std::vector<float> w0 = as_vector(t.W.get_storage().values);
  std::vector<float> e0 = as_vector(t.E.get_storage().all_values);
  float loss0, after;
  std::vector<float> gw, ge;
  {
    ComputationGraph cg;
    Expression loss = t.loss(cg);
    loss0 = as_scalar(cg.forward(loss));
    cg.backward(loss);
    gw = as_vector(t.W.get_storage().g);
    ge = test::table_gradient(t.E.get_storage());
  }
  // gradients accumulated before the check are replaced, not added to
  ComputationGraph cg;
  Expression loss = t.loss(cg);
  BOOST_CHECK(check_grad(t.m, loss, 0));
  test::check_close(as_vector(t.W.get_storage().g), gw, 1e-6);
  test::check_close(test::table_gradient(t.E.get_storage()), ge, 1e-6);
  // rows 0 and 2 are unused: zero gradient, checked all the same
  for (unsigned i : {0u, 1u, 2u, 6u, 7u, 8u}) BOOST_CHECK_EQUAL(ge[i], 0.f);
  test::check_close(as_vector(t.W.get_storage().values), w0, 0);
  test::check_close(as_vector(t.E.get_storage().all_values), e0, 0);
  after = as_scalar(loss.value());
  BOOST_CHECK_EQUAL(after, loss0);
}

BOOST_AUTO_TEST_CASE(fails_when_the_graph_hides_a_dependence) {
  // const_parameter: the loss depends on W but no gradient flows into it, so the
  // analytic gradient (0) disagrees with the numeric one.
  SmallModel t;
  ComputationGraph cg;
  Expression loss =
      squared_norm(const_parameter(cg, t.W)) + squared_norm(parameter(cg, t.b)) + squared_norm(lookup(cg, t.E, 1u));
  std::ostringstream out;
  BOOST_CHECK(!check_grad(t.m, loss, 1, out));
  std::string s = out.str();
  BOOST_CHECK_MESSAGE(s.find("W: 6 elements, 6 disagree") != std::string::npos, s);
  BOOST_CHECK_MESSAGE(s.find("b: 2 elements, all agree") != std::string::npos, s);
  BOOST_CHECK_MESSAGE(s.find("E: 12 elements, all agree") != std::string::npos, s);
  BOOST_CHECK_EQUAL(count_of(s, "*** /W["), 6u);
  BOOST_CHECK_MESSAGE(s.find("*** GRADIENT CHECK FAILED") != std::string::npos, s);

  // nobackprop on the way to b
  ComputationGraph cg2;
  Expression x = lookup(cg2, t.E, 1u);
  Expression l2 = squared_norm(tanh(parameter(cg2, t.W) * x + nobackprop(parameter(cg2, t.b))));
  std::ostringstream out2;
  BOOST_CHECK(!check_grad(t.m, l2, 1, out2));
  BOOST_CHECK_MESSAGE(out2.str().find("b: 2 elements, 2 disagree") != std::string::npos, out2.str());
  BOOST_CHECK_MESSAGE(out2.str().find("W: 6 elements, all agree") != std::string::npos, out2.str());
}

BOOST_AUTO_TEST_CASE(frozen_parameters_are_skipped) {
  SmallModel t;
  t.W.set_updated(false);
  ComputationGraph cg;
  Expression loss = t.loss(cg);
  std::ostringstream out;
  BOOST_CHECK(check_grad(t.m, loss, 1, out));
  BOOST_CHECK_MESSAGE(out.str().find("W: frozen") != std::string::npos, out.str());
  BOOST_CHECK_EQUAL(count_of(out.str(), "W["), 0u);
}

BOOST_AUTO_TEST_CASE(checks_the_ops_of_this_family_end_to_end) {
  // a loss through several of the trig and stats ops, checked by check_grad itself
  ParameterCollection m;
  Parameter p = m.add_parameters({3, 4}, 0.f, "P");
  p.set_value(test::test_values(12, 0.2f));
  ComputationGraph cg;
  Expression x = parameter(cg, p);
  Expression loss = sum_elems(std_dim(x, {1}) + logsumexp_dim(cumsum(atan(x), 1), 1)) +
                    sum_elems(kmax_pooling(sinh(x), 2)) + moment_elems(x, 3);
  std::ostringstream out;
  BOOST_CHECK_MESSAGE(check_grad(m, loss, 1, out), out.str());
  BOOST_CHECK_MESSAGE(out.str().find("P: 12 elements, all agree") != std::string::npos, out.str());
}

BOOST_AUTO_TEST_CASE(errors) {
  SmallModel t;
  ComputationGraph cg;
  Expression v = tanh(parameter(cg, t.b));  // {2}: not a scalar
  test::check_throws_with<dim_error>([&] { check_grad(t.m, v, 0); }, {"check_grad", "scalar", "{2}"});
  Expression batched = sum_elems(input(cg, Dim({2}, 3), std::vector<float>(6, 1.f)));  // {1}X3
  test::check_throws_with<dim_error>([&] { check_grad(t.m, batched, 0); }, {"check_grad", "{1X3}"});
  Expression empty;
  test::check_throws_with<std::invalid_argument>([&] { check_grad(t.m, empty, 0); }, {"check_grad", "empty"});
  Expression l = t.loss(cg);
  cg.clear();
  test::check_throws_with<std::invalid_argument>([&] { check_grad(t.m, l, 0); }, {"check_grad", "stale"});
}

// DyNet's own conv2d gradient check (its test-nodes.cc conv2d_valid_gradient):
// a loss of several hundred, whose float differences need DyNet's step of 5e-3.
BOOST_AUTO_TEST_CASE(dynet_step_resolves_large_losses) {
  dl::ParameterCollection m;
  dl::Parameter kernel = m.add_parameters({2, 2, 2, 3});
  kernel.set_value({.011f, .022f, .033f, .012f, .022f, .032f, .013f, .023f, .033f, .111f, -.122f, -.033f, -.112f,
                    -.022f, -.132f, -.113f, -.123f, -.133f, .211f, .222f, .233f, .212f, .222f, .232f});
  std::vector<float> xs(50 * 50 * 2 * 2);
  for (unsigned i = 0; i < xs.size(); ++i) xs[i] = i * 0.011f + (i + 1) * 0.001f;
  dl::ComputationGraph cg;
  dl::Expression x = dl::input(cg, dl::Dim({50, 50, 2}, 2), xs);
  dl::Expression y = dl::conv2d(x, dl::parameter(cg, kernel), {3, 3}, true);
  dl::Expression z = dl::sum_batches(dl::sqrt(dl::sum_elems(dl::square(y))));
  BOOST_CHECK(dl::check_grad(m, z, 0));
}
