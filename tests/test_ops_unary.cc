#define BOOST_TEST_MODULE ops_unary
#include "test_utils.h"

#include <cmath>
#include <limits>

using namespace dynet_lite;
using test::UnaryFn;

namespace {

struct UnaryCase {
  const char* name;
  UnaryFn f;
  std::vector<float> want;  // at kPoints (or kPositive for log / sqrt)
  bool positive_only = false;
};

const std::vector<float> kPoints = {-1.5f, -0.5f, 0.f, 0.5f, 2.f};
const std::vector<float> kPositive = {0.25f, 1.f, 4.f, 10.f};

// Expected values worked out with a calculator from each definition.
std::vector<UnaryCase> cases() {
  return {
      {"tanh", [](const Expression& x) { return tanh(x); }, {-0.9051483f, -0.4621172f, 0.f, 0.4621172f, 0.9640276f}},
      {"logistic", [](const Expression& x) { return logistic(x); },
       {0.1824255f, 0.3775407f, 0.5f, 0.6224593f, 0.8807971f}},
      {"rectify", [](const Expression& x) { return rectify(x); }, {0.f, 0.f, 0.f, 0.5f, 2.f}},
      {"elu", [](const Expression& x) { return elu(x); }, {-0.7768698f, -0.3934693f, 0.f, 0.5f, 2.f}},
      {"elu(alpha=2)", [](const Expression& x) { return elu(x, 2.f); }, {-1.55374f, -0.7869387f, 0.f, 0.5f, 2.f}},
      {"selu", [](const Expression& x) { return selu(x); }, {-1.365814f, -0.6917582f, 0.f, 0.5253505f, 2.101402f}},
      {"silu", [](const Expression& x) { return silu(x); }, {-0.2736383f, -0.1887703f, 0.f, 0.3112297f, 1.761594f}},
      {"silu(beta=2)", [](const Expression& x) { return silu(x, 2.f); },
       {-0.07113881f, -0.1344707f, 0.f, 0.3655293f, 1.964028f}},
      {"softsign", [](const Expression& x) { return softsign(x); }, {-0.6f, -0.3333333f, 0.f, 0.3333333f, 0.6666667f}},
      {"exp", [](const Expression& x) { return exp(x); }, {0.2231302f, 0.6065307f, 1.f, 1.648721f, 7.389056f}},
      {"log", [](const Expression& x) { return log(x); }, {-1.386294f, 0.f, 1.386294f, 2.302585f}, true},
      {"sqrt", [](const Expression& x) { return sqrt(x); }, {0.5f, 1.f, 2.f, 3.162278f}, true},
      {"square", [](const Expression& x) { return square(x); }, {2.25f, 0.25f, 0.f, 0.25f, 4.f}},
      {"cube", [](const Expression& x) { return cube(x); }, {-3.375f, -0.125f, 0.f, 0.125f, 8.f}},
      {"abs", [](const Expression& x) { return abs(x); }, {1.5f, 0.5f, 0.f, 0.5f, 2.f}},
      {"erf", [](const Expression& x) { return erf(x); }, {-0.9661051f, -0.5204999f, 0.f, 0.5204999f, 0.9953223f}},
      {"log_sigmoid", [](const Expression& x) { return log_sigmoid(x); },
       {-1.701413f, -0.974077f, -0.6931472f, -0.474077f, -0.126928f}},
      {"negation", [](const Expression& x) { return -x; }, {1.5f, 0.5f, 0.f, -0.5f, -2.f}},
  };
}

// Gradient of sum(f(x)) at x, computed by backward.
std::vector<float> grad_at(const UnaryFn& f, const std::vector<float>& x) {
  ComputationGraph cg;
  Expression in = input(cg, {static_cast<unsigned>(x.size())}, x);
  Expression loss = sum_elems(f(in));
  cg.forward(loss);
  cg.backward(loss, true);
  return as_vector(cg.get_gradient(in));
}

}  // namespace

BOOST_AUTO_TEST_CASE(values_by_hand) {
  for (const UnaryCase& c : cases()) {
    BOOST_TEST_MESSAGE(c.name);
    const std::vector<float>& x = c.positive_only ? kPositive : kPoints;
    std::vector<float> got = test::eval({{Dim({static_cast<unsigned>(x.size())}), x}},
                                        [&](ComputationGraph&, const std::vector<Expression>& xs) { return c.f(xs[0]); });
    BOOST_CHECK_MESSAGE(got.size() == c.want.size(), c.name);
    for (size_t i = 0; i < got.size() && i < c.want.size(); ++i)
      BOOST_CHECK_MESSAGE(std::fabs(got[i] - c.want[i]) <= 2e-6f * (1.f + std::fabs(c.want[i])),
                          c.name << "(" << x[i] << "): got " << got[i] << ", want " << c.want[i]);
  }
}

BOOST_AUTO_TEST_CASE(values_keep_shape_and_batch) {
  // a batched {2,3}X2 input is mapped element by element
  std::vector<float> xv = test::test_values(12);
  for (const UnaryCase& c : cases()) {
    if (c.positive_only) continue;
    ComputationGraph cg;
    Expression x = input(cg, Dim({2, 3}, 2), xv);
    Expression y = c.f(x);
    BOOST_CHECK_EQUAL(y.dim(), Dim({2, 3}, 2));
    std::vector<float> got = as_vector(cg.forward(y));
    for (size_t i = 0; i < xv.size(); ++i) {
      std::vector<float> one = test::eval({{Dim({1}), {xv[i]}}},
                                          [&](ComputationGraph&, const std::vector<Expression>& xs) { return c.f(xs[0]); });
      BOOST_CHECK_MESSAGE(std::fabs(got[i] - one[0]) <= 1e-6f * (1.f + std::fabs(one[0])),
                          c.name << " element " << i << ": batched " << got[i] << " vs alone " << one[0]);
    }
  }
}

BOOST_AUTO_TEST_CASE(gradient_checks_batched_inputs_and_parameters) {
  for (const UnaryCase& c : cases()) {
    BOOST_TEST_MESSAGE(c.name);
    ParameterCollection m;
    // w is broadcast over the input's batch; for log / sqrt everything stays positive
    float off = c.positive_only ? 1.5f : 0.f;
    Parameter w = m.add_parameters({3, 2}, ParameterInitFromVector(test::test_values(6, off)));
    size_t n = test::check_gradients(m, {{Dim({3, 2}, 3), test::test_values(18, off)}},
                                     [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
                                       Expression a = c.positive_only ? cmult(xs[0], parameter(cg, w))
                                                                      : xs[0] + parameter(cg, w);
                                       return c.f(a);
                                     });
    BOOST_CHECK_EQUAL(n, 6u + 18u);
    // a batch of 1 input alone
    n = test::check_gradients(m, {{Dim({4}), test::test_values(4, off + 0.1f)}},
                              [&](ComputationGraph&, const std::vector<Expression>& xs) { return c.f(xs[0]); });
    BOOST_CHECK_EQUAL(n, 6u + 4u);
  }
}

BOOST_AUTO_TEST_CASE(gradients_by_hand) {
  const std::vector<float> x = {-1.f, 0.5f, 2.f};
  // d tanh = 1 - tanh^2
  std::vector<float> want(3);
  for (int i = 0; i < 3; ++i) want[i] = 1.f - std::tanh(x[i]) * std::tanh(x[i]);
  test::check_close(grad_at([](const Expression& e) { return tanh(e); }, x), want, 1e-5);
  // d logistic = s (1 - s): s(-1) = 0.2689414, s(0.5) = 0.6224593, s(2) = 0.8807971
  test::check_close(grad_at([](const Expression& e) { return logistic(e); }, x), {0.1966119f, 0.2350037f, 0.1049936f},
                    1e-5);
  // d elu (alpha 2) = 2 e^x for x <= 0, 1 above
  test::check_close(grad_at([](const Expression& e) { return elu(e, 2.f); }, x), {2.f * 0.3678794f, 1.f, 1.f}, 1e-5);
  // d selu = scale * alpha * e^x for x <= 0, scale above
  test::check_close(grad_at([](const Expression& e) { return selu(e); }, x),
                    {1.0507010f * 1.6732632f * 0.3678794f, 1.0507010f, 1.0507010f}, 1e-5);
  // d silu = s + x s (1 - s)
  test::check_close(grad_at([](const Expression& e) { return silu(e); }, x),
                    {0.2689414f - 0.1966119f, 0.6224593f + 0.5f * 0.2350037f, 0.8807971f + 2.f * 0.1049936f}, 1e-5);
  // d softsign = 1 / (1 + |x|)^2
  test::check_close(grad_at([](const Expression& e) { return softsign(e); }, x), {0.25f, 1.f / 2.25f, 1.f / 9.f}, 1e-6);
  test::check_close(grad_at([](const Expression& e) { return exp(e); }, x), {0.3678794f, 1.648721f, 7.389056f}, 1e-6);
  test::check_close(grad_at([](const Expression& e) { return log(e); }, {0.5f, 2.f, 4.f}), {2.f, 0.5f, 0.25f}, 1e-6);
  test::check_close(grad_at([](const Expression& e) { return sqrt(e); }, {0.25f, 1.f, 4.f}), {1.f, 0.5f, 0.25f}, 1e-6);
  test::check_close(grad_at([](const Expression& e) { return square(e); }, x), {-2.f, 1.f, 4.f}, 1e-6);
  test::check_close(grad_at([](const Expression& e) { return cube(e); }, x), {3.f, 0.75f, 12.f}, 1e-6);
  // d erf = 2/sqrt(pi) e^{-x^2}
  test::check_close(grad_at([](const Expression& e) { return erf(e); }, x),
                    {1.1283792f * 0.3678794f, 1.1283792f * 0.7788008f, 1.1283792f * 0.01831564f}, 1e-5);
  // d log_sigmoid = 1 - s
  test::check_close(grad_at([](const Expression& e) { return log_sigmoid(e); }, x),
                    {0.7310586f, 0.3775407f, 0.1192029f}, 1e-5);
  test::check_close(grad_at([](const Expression& e) { return -e; }, x), {-1.f, -1.f, -1.f}, 0.0);
}

BOOST_AUTO_TEST_CASE(kinks) {
  const std::vector<float> x = {-1.f, 0.f, 1.f};
  // rectify: value 0 at 0 and gradient 0 at the kink (as DyNet)
  test::check_close(test::eval({{Dim({3}), x}}, [](ComputationGraph&, const std::vector<Expression>& xs) {
                      return rectify(xs[0]);
                    }),
                    {0.f, 0.f, 1.f}, 0.0);
  test::check_close(grad_at([](const Expression& e) { return rectify(e); }, x), {0.f, 0.f, 1.f}, 0.0);
  // abs: gradient sign(x), 0 at 0
  test::check_close(grad_at([](const Expression& e) { return abs(e); }, x), {-1.f, 0.f, 1.f}, 0.0);
  // elu with alpha 1 is smooth at 0: gradient 1 from both sides
  test::check_close(grad_at([](const Expression& e) { return elu(e); }, {-1e-4f, 0.f, 1e-4f}), {1.f, 1.f, 1.f}, 1e-3);
  // elu with alpha 2 takes the left derivative (alpha) at 0
  test::check_close(grad_at([](const Expression& e) { return elu(e, 2.f); }, {0.f}), {2.f}, 1e-6);
  // selu at 0: the left derivative scale * alpha
  test::check_close(grad_at([](const Expression& e) { return selu(e); }, {0.f}), {1.0507010f * 1.6732632f}, 1e-5);
  // softsign at 0: gradient 1
  test::check_close(grad_at([](const Expression& e) { return softsign(e); }, {0.f}), {1.f}, 0.0);
}

BOOST_AUTO_TEST_CASE(large_arguments_stay_finite) {
  const std::vector<float> x = {-100.f, -30.f, 30.f, 100.f};
  auto values = [&](const UnaryFn& f) {
    return test::eval({{Dim({4}), x}}, [&](ComputationGraph&, const std::vector<Expression>& xs) { return f(xs[0]); });
  };
  // log_sigmoid(x) = -log(1 + e^-x): ~x for very negative x, ~0 for very positive
  std::vector<float> ls = values([](const Expression& e) { return log_sigmoid(e); });
  test::check_close(ls, {-100.f, -30.f, -9.357623e-14f, 0.f}, 1e-6);
  test::check_close(grad_at([](const Expression& e) { return log_sigmoid(e); }, x), {1.f, 1.f, 9.357623e-14f, 0.f}, 1e-6);
  test::check_close(values([](const Expression& e) { return logistic(e); }), {0.f, 9.357623e-14f, 1.f, 1.f}, 1e-6);
  test::check_close(grad_at([](const Expression& e) { return logistic(e); }, x), {0.f, 0.f, 0.f, 0.f}, 1e-6);
  test::check_close(values([](const Expression& e) { return tanh(e); }), {-1.f, -1.f, 1.f, 1.f}, 1e-6);
  test::check_close(grad_at([](const Expression& e) { return tanh(e); }, x), {0.f, 0.f, 0.f, 0.f}, 1e-6);
  test::check_close(values([](const Expression& e) { return silu(e); }), {0.f, -2.807287e-12f, 30.f, 100.f}, 1e-6);
  test::check_close(grad_at([](const Expression& e) { return silu(e); }, x), {0.f, 0.f, 1.f, 1.f}, 1e-6);
  test::check_close(values([](const Expression& e) { return elu(e); }), {-1.f, -1.f, 30.f, 100.f}, 1e-6);
  test::check_close(grad_at([](const Expression& e) { return elu(e); }, x), {0.f, 0.f, 1.f, 1.f}, 1e-6);
  test::check_close(values([](const Expression& e) { return softsign(e); }),
                    {-100.f / 101.f, -30.f / 31.f, 30.f / 31.f, 100.f / 101.f}, 1e-6);
  test::check_close(values([](const Expression& e) { return erf(e); }), {-1.f, -1.f, 1.f, 1.f}, 1e-6);
  test::check_close(grad_at([](const Expression& e) { return erf(e); }, x), {0.f, 0.f, 0.f, 0.f}, 1e-6);
}

BOOST_AUTO_TEST_CASE(gradient_accumulates_over_two_uses) {
  // x feeds two tanh nodes: its gradient is the sum of both
  ComputationGraph cg;
  Expression x = input(cg, {2}, {0.5f, -1.f});
  Expression loss = sum_elems(tanh(x) + 3.f * tanh(x));
  cg.forward(loss);
  cg.backward(loss, true);
  float d0 = 1.f - std::tanh(0.5f) * std::tanh(0.5f), d1 = 1.f - std::tanh(-1.f) * std::tanh(-1.f);
  test::check_close(as_vector(cg.get_gradient(x)), {4.f * d0, 4.f * d1}, 1e-5);
}
