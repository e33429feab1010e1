#define BOOST_TEST_MODULE ops_random
#include <cmath>
#include <limits>

#include "dynet_lite/core/random.h"
#include "dynet_lite/ops/op_table.h"
#include "test_utils.h"

using namespace dynet_lite;

namespace {

double mean_of(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return s / static_cast<double>(v.size());
}
double stddev_of(const std::vector<float>& v) {
  double m = mean_of(v), s = 0;
  for (float x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}
double fraction_zero(const std::vector<float>& v) {
  size_t z = 0;
  for (float x : v) z += x == 0.f;
  return static_cast<double>(z) / static_cast<double>(v.size());
}
// Every element is either 0 or `scale` (up to float rounding).
void check_zero_or(const std::vector<float>& v, float scale) {
  size_t bad = 0;
  for (float x : v) bad += !(x == 0.f || std::fabs(x - scale) <= 1e-5f * scale);
  BOOST_CHECK_EQUAL(bad, 0u);
}

// Builders for the four dropout ops, so that structure tests can loop over them.
Expression apply_dropout(OpKind op, const Expression& x, float p, unsigned d = 0) {
  switch (op) {
    case OpKind::Dropout: return dropout(x, p);
    case OpKind::DropoutDim: return dropout_dim(x, d, p);
    case OpKind::DropoutBatch: return dropout_batch(x, p);
    default: return block_dropout(x, p);
  }
}

}  // namespace

// ---------------------------------------------------------------- dropout

BOOST_AUTO_TEST_CASE(dropout_drops_fraction_p_and_scales_the_rest) {
  const unsigned n = 200000;
  for (float p : {0.1f, 0.3f, 0.5f, 0.8f}) {
    ComputationGraph cg;
    Expression y = dropout(ones(cg, {n}), p);
    BOOST_CHECK_EQUAL(y.dim(), Dim({n}));
    std::vector<float> v = as_vector(cg.forward(y));
    // stddev of the fraction is sqrt(p(1-p)/n) < 0.0012; allow about 8 of them
    BOOST_CHECK_SMALL(fraction_zero(v) - p, 0.01);
    check_zero_or(v, 1.f / (1.f - p));
    // inverted dropout keeps the expectation
    BOOST_CHECK_SMALL(mean_of(v) - 1.0, 0.03);
  }
}

BOOST_AUTO_TEST_CASE(dropout_value_is_x_times_mask) {
  // x has no zeros, so y / x reveals the mask element by element
  ComputationGraph cg;
  std::vector<float> xv = test::test_values(1000, 2.f);  // values in [1.05, 2.95]
  Expression x = input(cg, {10, 100}, xv);
  Expression y = dropout(x, 0.4f);
  std::vector<float> v = as_vector(cg.forward(y));
  std::vector<float> ratio(v.size());
  for (size_t i = 0; i < v.size(); ++i) ratio[i] = v[i] / xv[i];
  check_zero_or(ratio, 1.f / 0.6f);
  BOOST_CHECK_GT(fraction_zero(v), 0.25);
  BOOST_CHECK_LT(fraction_zero(v), 0.55);
}

BOOST_AUTO_TEST_CASE(dropout_gradient_is_mask_times_dy) {
  const float p = 0.3f;
  const unsigned n = 500;
  ParameterCollection m;
  Parameter w = m.add_parameters({n}, ParameterInitFromVector(test::test_values(n, 2.f)));
  ComputationGraph cg;
  std::vector<float> xv = test::test_values(n, 3.f);
  std::vector<float> dyv = test::test_values(n, -0.4f);
  Expression x = input(cg, {n}, xv);
  Expression px = parameter(cg, w);
  Expression yx = dropout(x, p);
  Expression yw = dropout(px, p);
  Expression dy = input(cg, {n}, dyv);
  Expression loss = sum_elems(cmult(yx, dy)) + sum_elems(cmult(yw, dy));
  cg.forward(loss);
  std::vector<float> vx = as_vector(yx.value()), vw = as_vector(yw.value());
  cg.backward(loss, true);
  std::vector<float> gx = as_vector(cg.get_gradient(x));
  std::vector<float> gy = as_vector(cg.get_gradient(yx));
  std::vector<float> gw = as_vector(w.get_storage().g);
  const float scale = 1.f / (1.f - p);
  size_t kept_x = 0, kept_w = 0;
  for (unsigned i = 0; i < n; ++i) {
    BOOST_CHECK_CLOSE(gy[i], dyv[i], 1e-4);
    float mask_x = vx[i] != 0.f ? scale : 0.f;  // x and w are never 0
    float mask_w = vw[i] != 0.f ? scale : 0.f;
    kept_x += mask_x != 0.f;
    kept_w += mask_w != 0.f;
    BOOST_CHECK_SMALL(gx[i] - mask_x * dyv[i], 1e-5f);
    BOOST_CHECK_SMALL(gw[i] - mask_w * dyv[i], 1e-5f);
  }
  // both masks kept about 70%, and they are different draws
  BOOST_CHECK_GT(kept_x, 300u);
  BOOST_CHECK_LT(kept_x, 400u);
  BOOST_CHECK_GT(kept_w, 300u);
  BOOST_CHECK_LT(kept_w, 400u);
  size_t differ = 0;
  for (unsigned i = 0; i < n; ++i) differ += (vx[i] != 0.f) != (vw[i] != 0.f);
  BOOST_CHECK_GT(differ, 50u);
}

BOOST_AUTO_TEST_CASE(dropout_backward_uses_the_latest_forward_mask) {
  ComputationGraph cg;
  const unsigned n = 300;
  Expression x = input(cg, {n}, test::test_values(n, 3.f));
  Expression y = dropout(x, 0.5f);
  Expression loss = sum_elems(y);
  cg.forward(loss);
  std::vector<float> first = as_vector(y.value());
  cg.forward(loss);  // a fresh forward draws a fresh mask
  std::vector<float> second = as_vector(y.value());
  size_t differ = 0;
  for (unsigned i = 0; i < n; ++i) differ += (first[i] != 0.f) != (second[i] != 0.f);
  BOOST_CHECK_GT(differ, 50u);
  cg.backward(loss, true);
  std::vector<float> g = as_vector(cg.get_gradient(x));
  for (unsigned i = 0; i < n; ++i) BOOST_CHECK_EQUAL(g[i], second[i] != 0.f ? 2.f : 0.f);
}

BOOST_AUTO_TEST_CASE(dropout_family_gradient_checks_with_a_fixed_mask) {
  // Seeding the graph's own engine in the builder fixes the mask for every
  // graph the checker builds, so central differences see the same function.
  ParameterCollection m;
  Parameter w = m.add_parameters({3, 4}, ParameterInitFromVector(test::test_values(12, 0.3f)));
  for (OpKind op : {OpKind::Dropout, OpKind::DropoutDim, OpKind::DropoutBatch, OpKind::BlockDropout}) {
    for (unsigned d : {0u, 1u}) {
      if (d == 1 && op != OpKind::DropoutDim) continue;
      BOOST_TEST_MESSAGE("op " << op_name(op) << " d " << d);
      size_t checked = test::check_gradients(m, {{Dim({3, 4}, 3), test::test_values(36)}},
                                             [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
                                               cg.rng().seed(11);
                                               // parameter broadcast over the batch, then dropped per element
                                               Expression h = tanh(xs[0] + parameter(cg, w));
                                               return apply_dropout(op, h, 0.4f, d);
                                             });
      BOOST_CHECK_EQUAL(checked, 12u + 36u);
    }
  }
}

// ---------------------------------------------------------------- structure

BOOST_AUTO_TEST_CASE(dropout_dim_shares_the_mask_along_the_dimension) {
  const unsigned rows = 40, cols = 50, bd = 4;
  const float p = 0.5f, scale = 2.f;
  {
    // d = 1: mask {rows, 1}X4, each row of each batch element is kept or dropped whole
    ComputationGraph cg;
    Expression y = dropout_dim(ones(cg, Dim({rows, cols}, bd)), 1, p);
    std::vector<float> v = as_vector(cg.forward(y));
    check_zero_or(v, scale);
    size_t dropped = 0;
    for (unsigned b = 0; b < bd; ++b)
      for (unsigned r = 0; r < rows; ++r) {
        float first = v[b * rows * cols + r];
        dropped += first == 0.f;
        for (unsigned c = 1; c < cols; ++c) BOOST_REQUIRE_EQUAL(v[b * rows * cols + c * rows + r], first);
      }
    BOOST_CHECK_GT(dropped, 50u);  // of 160, binomial(160, 0.5)
    BOOST_CHECK_LT(dropped, 110u);
  }
  {
    // d = 0: each column of each batch element is kept or dropped whole
    ComputationGraph cg;
    Expression y = dropout_dim(ones(cg, Dim({rows, cols}, bd)), 0, p);
    std::vector<float> v = as_vector(cg.forward(y));
    size_t dropped = 0;
    for (unsigned b = 0; b < bd; ++b)
      for (unsigned c = 0; c < cols; ++c) {
        float first = v[b * rows * cols + c * rows];
        dropped += first == 0.f;
        for (unsigned r = 1; r < rows; ++r) BOOST_REQUIRE_EQUAL(v[b * rows * cols + c * rows + r], first);
      }
    BOOST_CHECK_GT(dropped, 65u);  // of 200
    BOOST_CHECK_LT(dropped, 135u);
  }
  {
    // a 3-d tensor, d = 1: element (i, j, k) shares its mask with (i, *, k)
    ComputationGraph cg;
    Expression y = dropout_dim(ones(cg, Dim({3, 5, 7}, 2)), 1, p);
    std::vector<float> v = as_vector(cg.forward(y));
    for (unsigned b = 0; b < 2; ++b)
      for (unsigned k = 0; k < 7; ++k)
        for (unsigned i = 0; i < 3; ++i)
          for (unsigned j = 1; j < 5; ++j)
            BOOST_REQUIRE_EQUAL(v[b * 105 + k * 15 + j * 3 + i], v[b * 105 + k * 15 + i]);
  }
  {
    // a vector with d = 0 is dropped whole (per batch element)
    ComputationGraph cg;
    Expression y = dropout_dim(ones(cg, Dim({6}, 300)), 0, p);
    std::vector<float> v = as_vector(cg.forward(y));
    size_t dropped = 0;
    for (unsigned b = 0; b < 300; ++b) {
      dropped += v[b * 6] == 0.f;
      for (unsigned i = 1; i < 6; ++i) BOOST_REQUIRE_EQUAL(v[b * 6 + i], v[b * 6]);
    }
    BOOST_CHECK_GT(dropped, 110u);
    BOOST_CHECK_LT(dropped, 190u);
  }
}

BOOST_AUTO_TEST_CASE(dropout_dim_rejects_a_dimension_past_the_tensor) {
  ComputationGraph cg;
  Expression x = ones(cg, {3, 4});
  test::check_throws_with<dim_error>([&] { dropout_dim(x, 2, 0.5f); }, {"dropout_dim", "dimension 2", "{3,4}"});
  Expression v = ones(cg, {5});
  test::check_throws_with<dim_error>([&] { dropout_dim(v, 1, 0.5f); }, {"dropout_dim", "dimension 1", "{5}"});
}

BOOST_AUTO_TEST_CASE(dropout_batch_shares_one_value_per_batch_element) {
  const unsigned bd = 2000, n = 12;
  const float p = 0.25f;
  ComputationGraph cg;
  Expression y = dropout_batch(ones(cg, Dim({3, 4}, bd)), p);
  BOOST_CHECK_EQUAL(y.dim(), Dim({3, 4}, bd));
  std::vector<float> v = as_vector(cg.forward(y));
  check_zero_or(v, 1.f / (1.f - p));
  size_t dropped = 0;
  for (unsigned b = 0; b < bd; ++b) {
    dropped += v[b * n] == 0.f;
    for (unsigned i = 1; i < n; ++i) BOOST_REQUIRE_EQUAL(v[b * n + i], v[b * n]);
  }
  // stddev of the fraction is about 0.0097
  BOOST_CHECK_SMALL(static_cast<double>(dropped) / bd - p, 0.05);
}

BOOST_AUTO_TEST_CASE(block_dropout_keeps_or_drops_the_whole_tensor) {
  const float p = 0.3f;
  ComputationGraph cg;
  std::vector<float> xv = test::test_values(15, 3.f);
  Expression x = input(cg, Dim({5}, 3), xv);
  Expression y = block_dropout(x, p);
  unsigned dropped = 0;
  const unsigned trials = 2000;
  for (unsigned t = 0; t < trials; ++t) {
    std::vector<float> v = as_vector(cg.forward(y));
    bool zero = v[0] == 0.f;
    dropped += zero;
    for (size_t i = 0; i < v.size(); ++i) {
      float want = zero ? 0.f : xv[i] / (1.f - p);
      if (std::fabs(v[i] - want) > 1e-5f) {
        BOOST_ERROR("trial " << t << " element " << i << ": got " << v[i] << ", want " << want);
        return;
      }
    }
  }
  // stddev of the fraction is about 0.01
  BOOST_CHECK_SMALL(static_cast<double>(dropped) / trials - p, 0.05);

  // p = 1 drops everything (as DyNet allows for block dropout)
  Expression z = block_dropout(x, 1.f);
  test::check_close(as_vector(cg.forward(z)), std::vector<float>(15, 0.f));
}

BOOST_AUTO_TEST_CASE(probability_zero_is_identity) {
  std::vector<float> xv = test::test_values(24);
  for (OpKind op : {OpKind::Dropout, OpKind::DropoutDim, OpKind::DropoutBatch, OpKind::BlockDropout}) {
    BOOST_TEST_MESSAGE(op_name(op));
    ComputationGraph cg;
    Expression x = input(cg, Dim({3, 4}, 2), xv);
    Expression y = apply_dropout(op, x, 0.f, 1);
    test::check_close(as_vector(cg.forward(y)), xv, 0.0);
    cg.backward(sum_batches(sum_elems(y)), true);
    test::check_close(as_vector(cg.get_gradient(x)), std::vector<float>(24, 1.f), 0.0);
  }
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 4}, 2), xv);
  test::check_close(as_vector(cg.forward(noise(x, 0.f))), xv, 0.0);
}

BOOST_AUTO_TEST_CASE(bad_probabilities_are_rejected) {
  ComputationGraph cg;
  Expression x = ones(cg, {4});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (float p : {-0.1f, 1.f, 1.5f, nan}) {
    test::check_throws_with<std::invalid_argument>([&] { dropout(x, p); }, {"dropout:", "[0, 1)"});
    test::check_throws_with<std::invalid_argument>([&] { dropout_dim(x, 0, p); }, {"dropout_dim:", "[0, 1)"});
    test::check_throws_with<std::invalid_argument>([&] { dropout_batch(x, p); }, {"dropout_batch:", "[0, 1)"});
  }
  test::check_throws_with<std::invalid_argument>([&] { dropout(x, 1.f); }, {"got 1"});
  for (float p : {-0.1f, 1.5f, nan})
    test::check_throws_with<std::invalid_argument>([&] { block_dropout(x, p); }, {"block_dropout:", "[0, 1]"});
  for (float s : {-1.f, nan, std::numeric_limits<float>::infinity()})
    test::check_throws_with<std::invalid_argument>([&] { noise(x, s); }, {"noise:", "stddev"});
  // nothing was added by the failed calls
  BOOST_CHECK_EQUAL(cg.size(), 1u);
}

// ---------------------------------------------------------------- noise

BOOST_AUTO_TEST_CASE(noise_adds_gaussian_with_the_given_stddev) {
  const unsigned n = 200000;
  ComputationGraph cg;
  Expression x = constant(cg, {n}, 2.f);
  Expression y = noise(x, 0.5f);
  std::vector<float> v = as_vector(cg.forward(y));
  // stddev of the mean estimate is 0.5 / sqrt(n) ~ 0.0011
  BOOST_CHECK_SMALL(mean_of(v) - 2.0, 0.01);
  BOOST_CHECK_SMALL(stddev_of(v) - 0.5, 0.01);
  // about 68.3% within one stddev
  size_t within = 0;
  for (float e : v) within += std::fabs(e - 2.f) < 0.5f;
  BOOST_CHECK_SMALL(static_cast<double>(within) / n - 0.6827, 0.01);
}

BOOST_AUTO_TEST_CASE(noise_gradient_passes_through) {
  ParameterCollection m;
  Parameter w = m.add_parameters({4}, ParameterInitFromVector({0.1f, -0.2f, 0.3f, 0.4f}));
  ComputationGraph cg;
  std::vector<float> xv = test::test_values(8);
  std::vector<float> dyv = {1.f, 2.f, 3.f, 4.f, -1.f, 0.5f, 2.f, 1.f};
  Expression x = input(cg, Dim({4}, 2), xv);
  Expression y = noise(x + parameter(cg, w), 0.3f);
  Expression loss = sum_batches(sum_elems(cmult(y, input(cg, Dim({4}, 2), dyv))));
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(cg.get_gradient(x)), dyv);
  // the parameter is broadcast over the batch, so it gets the sum over the batch
  test::check_close(as_vector(w.get_storage().g), {0.f, 2.5f, 5.f, 5.f});
}

BOOST_AUTO_TEST_CASE(noise_gradient_check_with_a_fixed_draw) {
  ParameterCollection m;
  Parameter w = m.add_parameters({3}, ParameterInitFromVector({0.5f, -0.25f, 0.75f}));
  size_t checked = test::check_gradients(m, {{Dim({3}, 2), test::test_values(6)}},
                                         [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
                                           cg.rng().seed(5);
                                           return square(noise(cmult(xs[0], parameter(cg, w)), 0.2f));
                                         });
  BOOST_CHECK_EQUAL(checked, 9u);
}

// ---------------------------------------------------------------- random leaves

BOOST_AUTO_TEST_CASE(random_normal_statistics) {
  const unsigned n = 200000;
  ComputationGraph cg;
  Expression y = random_normal(cg, {n}, -1.5f, 2.f);
  std::vector<float> v = as_vector(cg.forward(y));
  BOOST_CHECK_SMALL(mean_of(v) + 1.5, 0.03);  // stddev of the mean ~ 0.0045
  BOOST_CHECK_SMALL(stddev_of(v) - 2.0, 0.03);
  // default: standard normal, batched shapes allowed
  Expression z = random_normal(cg, Dim({100, 100}, 20));
  BOOST_CHECK_EQUAL(z.dim(), Dim({100, 100}, 20));
  std::vector<float> u = as_vector(cg.forward(z));
  BOOST_CHECK_SMALL(mean_of(u), 0.01);
  BOOST_CHECK_SMALL(stddev_of(u) - 1.0, 0.01);
}

BOOST_AUTO_TEST_CASE(random_uniform_statistics) {
  const unsigned n = 200000;
  ComputationGraph cg;
  Expression y = random_uniform(cg, {n}, -1.f, 3.f);
  std::vector<float> v = as_vector(cg.forward(y));
  float lo = v[0], hi = v[0];
  for (float e : v) lo = std::min(lo, e), hi = std::max(hi, e);
  BOOST_CHECK_GE(lo, -1.f);
  BOOST_CHECK_LE(hi, 3.f);
  BOOST_CHECK_LT(lo, -0.99f);
  BOOST_CHECK_GT(hi, 2.99f);
  BOOST_CHECK_SMALL(mean_of(v) - 1.0, 0.02);
  BOOST_CHECK_SMALL(stddev_of(v) - 4.0 / std::sqrt(12.0), 0.02);
  test::check_throws_with<std::invalid_argument>([&] { random_uniform(cg, {3}, 2.f, 1.f); }, {"random_uniform", "2", "1"});
}

BOOST_AUTO_TEST_CASE(random_bernoulli_statistics) {
  const unsigned n = 200000;
  ComputationGraph cg;
  Expression y = random_bernoulli(cg, {n}, 0.3f, 2.5f);
  std::vector<float> v = as_vector(cg.forward(y));
  check_zero_or(v, 2.5f);
  BOOST_CHECK_SMALL((1.0 - fraction_zero(v)) - 0.3, 0.01);
  Expression z = random_bernoulli(cg, {100}, 0.f);
  test::check_close(as_vector(cg.forward(z)), std::vector<float>(100, 0.f), 0.0);
  Expression o = random_bernoulli(cg, {100}, 1.f);
  test::check_close(as_vector(cg.forward(o)), std::vector<float>(100, 1.f), 0.0);
  test::check_throws_with<std::invalid_argument>([&] { random_bernoulli(cg, {3}, 1.5f); }, {"random_bernoulli", "1.5"});
}

BOOST_AUTO_TEST_CASE(random_gumbel_statistics) {
  const unsigned n = 200000;
  const double euler_gamma = 0.5772156649015329, pi = 3.14159265358979;
  ComputationGraph cg;
  Expression y = random_gumbel(cg, {n}, 1.f, 2.f);
  std::vector<float> v = as_vector(cg.forward(y));
  for (float e : v) BOOST_REQUIRE(std::isfinite(e));
  // mean mu + beta * gamma, stddev beta * pi / sqrt(6)
  BOOST_CHECK_SMALL(mean_of(v) - (1.0 + 2.0 * euler_gamma), 0.03);
  BOOST_CHECK_SMALL(stddev_of(v) - 2.0 * pi / std::sqrt(6.0), 0.04);
  // the median is mu - beta * ln(ln 2)
  size_t below = 0;
  double median = 1.0 - 2.0 * std::log(std::log(2.0));
  for (float e : v) below += e < median;
  BOOST_CHECK_SMALL(static_cast<double>(below) / n - 0.5, 0.01);
  test::check_throws_with<std::invalid_argument>([&] { random_gumbel(cg, {3}, 0.f, 0.f); }, {"random_gumbel", "beta"});
}

BOOST_AUTO_TEST_CASE(random_leaves_block_the_gradient) {
  ParameterCollection m;
  Parameter w = m.add_parameters({3}, ParameterInitFromVector({1.f, 2.f, 3.f}));
  ComputationGraph cg;
  Expression r = random_normal(cg, {3});
  Expression loss = sum_elems(cmult(r, parameter(cg, w)));
  cg.forward(loss);
  std::vector<float> rv = as_vector(r.value());
  cg.backward(loss);
  test::check_close(as_vector(w.get_storage().g), rv);
}

// ---------------------------------------------------------------- seeding

namespace {
// Everything random a graph can make, in one vector.
std::vector<float> draw_everything() {
  ComputationGraph cg;
  Expression x = input(cg, Dim({4, 5}, 2), test::test_values(40, 3.f));
  std::vector<Expression> parts = {random_normal(cg, {7}),
                                   random_uniform(cg, {7}, -1.f, 1.f),
                                   random_bernoulli(cg, {7}, 0.5f),
                                   random_gumbel(cg, {7}),
                                   dropout(x, 0.5f),
                                   dropout_dim(x, 1, 0.5f),
                                   dropout_batch(x, 0.5f),
                                   block_dropout(x, 0.5f),
                                   noise(x, 1.f)};
  std::vector<float> all;
  for (auto& e : parts) {
    std::vector<float> v = as_vector(cg.incremental_forward(e));
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}
}  // namespace

BOOST_AUTO_TEST_CASE(same_seed_gives_the_same_numbers) {
  reseed_global_rng(1234);
  std::vector<float> a = draw_everything();
  std::vector<float> a2 = draw_everything();  // the next graph gets a new seed
  reseed_global_rng(1234);
  std::vector<float> b = draw_everything();
  std::vector<float> b2 = draw_everything();
  test::check_close(b, a, 0.0);
  test::check_close(b2, a2, 0.0);
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i] != a2[i];
  BOOST_CHECK_GT(differ, a.size() / 4);
  reseed_global_rng(4321);
  std::vector<float> c = draw_everything();
  differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i] != c[i];
  BOOST_CHECK_GT(differ, a.size() / 4);
}

BOOST_AUTO_TEST_CASE(dynet_seed_flag_seeds_graphs) {
  auto run_with_flag = [](const char* seed) {
    std::string prog = "prog", flag = "--dynet-seed", value = seed;
    char* argv_storage[] = {&prog[0], &flag[0], &value[0], nullptr};
    int argc = 3;
    char** argv = argv_storage;
    initialize(argc, argv);
    BOOST_CHECK_EQUAL(argc, 1);  // the flag is consumed
    return draw_everything();
  };
  std::vector<float> a = run_with_flag("77");
  std::vector<float> b = run_with_flag("77");
  test::check_close(b, a, 0.0);
  std::vector<float> c = run_with_flag("78");
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i] != c[i];
  BOOST_CHECK_GT(differ, a.size() / 4);
}
