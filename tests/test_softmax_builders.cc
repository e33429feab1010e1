#define BOOST_TEST_MODULE softmax_builders
#include "test_utils.h"

#include <cstdio>
#include <fstream>
#include <unistd.h>

#include "dynet_lite/cfsm-builder.h"
#include "dynet_lite/core/random.h"
#include "dynet_lite/except.h"

using namespace dynet_lite;

namespace {

struct ClusterFile {
  std::string path;
  explicit ClusterFile(const std::string& content) {
    static int n = 0;
    path = "/tmp/dynet_lite_clusters_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".txt";
    std::ofstream(path) << content;
  }
  ~ClusterFile() { std::remove(path.c_str()); }
};

// clusters: 10 = {a, b, c}, 11 = {d, e}, 0 = {f} (a singleton)
const char* kClusters = "10\ta\t5\n10\tb\t3\n11\td\n0\tf\n11\te\n\n10\tc\n";

std::vector<double> log_softmax_ref(const std::vector<double>& z) {
  double mx = z[0];
  for (double v : z) mx = std::max(mx, v);
  double s = 0;
  for (double v : z) s += std::exp(v - mx);
  std::vector<double> r;
  for (double v : z) r.push_back(v - mx - std::log(s));
  return r;
}

std::vector<double> affine_ref(const Parameter& w, const Parameter* b, const std::vector<float>& x) {
  const Dim d = w.dim();
  std::vector<float> wv = as_vector(w.get_storage().values);
  std::vector<double> y(d.rows(), 0.0);
  if (b) {
    std::vector<float> bv = as_vector(b->get_storage().values);
    for (unsigned r = 0; r < d.rows(); ++r) y[r] = bv[r];
  }
  for (unsigned r = 0; r < d.rows(); ++r)
    for (unsigned c = 0; c < d.cols(); ++c) y[r] += wv[c * d.rows() + r] * x[c];
  return y;
}

/// neg_log_softmax of `sm` on the 3-dimensional inputs `vals` (one per target) in
/// one batch gives, element by element, what it gives on each input alone.
template <class Builder>
void check_batched_equals_single(Builder& sm, const std::vector<float>& vals, const std::vector<unsigned>& targets) {
  const unsigned B = static_cast<unsigned>(targets.size());
  std::vector<float> batched =
      test::eval({{Dim({3}, B), vals}}, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
        sm.new_graph(cg);
        return sm.neg_log_softmax(xs[0], targets);
      });
  BOOST_REQUIRE_EQUAL(batched.size(), B);
  for (unsigned b = 0; b < B; ++b) {
    std::vector<float> one(vals.begin() + 3 * b, vals.begin() + 3 * b + 3);
    auto single = test::eval({{Dim({3}), one}}, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
      sm.new_graph(cg);
      return sm.neg_log_softmax(xs[0], targets[b]);
    });
    BOOST_CHECK_CLOSE(batched[b], single[0], 1e-3);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(standard_values) {
  ParameterCollection m;
  StandardSoftmaxBuilder sm(3, 4, m);
  auto ps = sm.get_parameter_collection().get_parameters();
  BOOST_REQUIRE_EQUAL(ps.size(), 2u);
  ps[1].set_value({0.1f, -0.2f, 0.3f, 0.f});
  std::vector<float> rep = {0.5f, -1.f, 0.25f};
  std::vector<double> lp = log_softmax_ref(affine_ref(ps[0], &ps[1], rep));
  ComputationGraph cg;
  sm.new_graph(cg);
  Expression r = input(cg, Dim({3}), rep);
  for (unsigned c = 0; c < 4; ++c) BOOST_CHECK_CLOSE(as_scalar(cg.forward(sm.neg_log_softmax(r, c))), -lp[c], 1e-3);
  std::vector<float> full = as_vector(cg.forward(sm.full_log_distribution(r)));
  for (unsigned c = 0; c < 4; ++c) BOOST_CHECK_CLOSE(full[c], lp[c], 1e-3);
  std::vector<float> logits = as_vector(cg.forward(sm.full_logits(r)));
  std::vector<double> want = affine_ref(ps[0], &ps[1], rep);
  for (unsigned c = 0; c < 4; ++c) BOOST_CHECK_CLOSE(logits[c], want[c], 1e-3);

  StandardSoftmaxBuilder nb(3, 4, m, false);
  BOOST_CHECK_EQUAL(nb.get_parameter_collection().get_parameters().size(), 1u);
  nb.new_graph(cg);
  std::vector<double> lp2 = log_softmax_ref(affine_ref(nb.get_parameter_collection().get_parameters()[0], nullptr, rep));
  BOOST_CHECK_CLOSE(as_scalar(cg.forward(nb.neg_log_softmax(r, 2))), -lp2[2], 1e-3);
}

BOOST_AUTO_TEST_CASE(standard_gradients_and_batches) {
  ParameterCollection m;
  StandardSoftmaxBuilder sm(3, 4, m);
  test::check_gradients(m, {{Dim({3}), test::test_values(3)}}, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    sm.new_graph(cg);
    return sm.neg_log_softmax(xs[0], 2u);
  });
  const std::vector<unsigned> classes = {3, 0, 2};
  test::check_gradients(m, {{Dim({3}, 3), test::test_values(9)}}, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    sm.new_graph(cg);
    return sm.neg_log_softmax(xs[0], classes);
  });
  check_batched_equals_single(sm, test::test_values(9, 0.2f), classes);
}

BOOST_AUTO_TEST_CASE(standard_sample_follows_distribution) {
  ParameterCollection m;
  StandardSoftmaxBuilder sm(2, 3, m);
  auto ps = sm.get_parameter_collection().get_parameters();
  ps[0].set_value({1.f, 0.f, -1.f, 0.f, 0.f, 0.f});
  ComputationGraph cg;
  sm.new_graph(cg);
  Expression r = input(cg, Dim({2}), {1.f, 0.f});
  std::vector<float> lp = as_vector(cg.forward(sm.full_log_distribution(r)));
  std::vector<int> counts(3, 0);
  const int n = 3000;
  reseed_global_rng(12345);  // a fixed draw: the test is deterministic
  for (int k = 0; k < n; ++k) {
    unsigned s = sm.sample(r);
    BOOST_REQUIRE(s < 3);
    ++counts[s];
  }
  // Each count is binomial(n, p): allow five standard deviations.
  for (unsigned c = 0; c < 3; ++c) {
    const double p = std::exp(lp[c]);
    BOOST_CHECK_LE(std::fabs(counts[c] / double(n) - p), 5 * std::sqrt(p * (1 - p) / n));
  }
}

BOOST_AUTO_TEST_CASE(standard_errors) {
  ParameterCollection m;
  StandardSoftmaxBuilder sm(3, 4, m);
  ComputationGraph cg;
  Expression r = input(cg, Dim({3}), test::test_values(3));
  Expression r4 = input(cg, Dim({4}, 2), test::test_values(8));
  test::check_throws_with<std::invalid_argument>([&] { sm.neg_log_softmax(r, 0u); }, {"StandardSoftmaxBuilder", "new_graph"});
  sm.new_graph(cg);
  test::check_throws_with<dim_error>([&] { sm.neg_log_softmax(r4, 0u); }, {"StandardSoftmaxBuilder", "{3}", "{4X2}"});
  test::check_throws_with<index_error>([&] { sm.neg_log_softmax(r, 4u); }, {"StandardSoftmaxBuilder", "class 4", "4 classes"});
  Expression rb = input(cg, Dim({3}, 2), test::test_values(6));
  test::check_throws_with<dim_error>([&] { sm.neg_log_softmax(rb, std::vector<unsigned>{1, 2, 3}); },
                                     {"StandardSoftmaxBuilder", "3 classes", "batch size 2"});
}

BOOST_AUTO_TEST_CASE(class_factored_values) {
  ClusterFile f(kClusters);
  Dict d;
  d.convert("<unk>");  // a word with no cluster
  ParameterCollection m;
  ClassFactoredSoftmaxBuilder cf(3, f.path, d, m);
  BOOST_CHECK_EQUAL(cf.num_clusters(), 3u);
  BOOST_CHECK_EQUAL(d.size(), 7u);
  BOOST_CHECK_EQUAL(cf.cluster_of(d.convert("e")), cf.cluster_of(d.convert("d")));
  BOOST_CHECK_EQUAL(cf.cluster_of(0), -1);
  // r2c, cbias, and word-level weights for the two clusters with several words
  BOOST_CHECK_EQUAL(cf.get_parameter_collection().get_parameters().size(), 6u);
  std::vector<float> rep = {0.5f, -1.f, 0.25f};
  ComputationGraph cg;
  cf.new_graph(cg);
  Expression r = input(cg, Dim({3}), rep);
  std::vector<float> full = as_vector(cg.forward(cf.full_log_distribution(r)));
  BOOST_REQUIRE_EQUAL(full.size(), 7u);
  BOOST_CHECK(std::isinf(full[0]) && full[0] < 0);
  double total = 0;
  for (unsigned w = 1; w < 7; ++w) {
    total += std::exp(full[w]);
    BOOST_CHECK_CLOSE(as_scalar(cg.forward(cf.neg_log_softmax(r, w))), -full[w], 1e-3);
  }
  BOOST_CHECK_CLOSE(total, 1.0, 1e-3);
  // p(a) = p(cluster 10) p(a | 10), from the parameters directly
  auto ps = cf.get_parameter_collection().get_parameters();
  std::vector<double> lc = log_softmax_ref(affine_ref(ps[0], &ps[1], rep));
  std::vector<double> lw = log_softmax_ref(affine_ref(ps[2], &ps[3], rep));
  BOOST_CHECK_CLOSE(full[d.convert("a")], lc[0] + lw[0], 1e-3);
  BOOST_CHECK_CLOSE(full[d.convert("c")], lc[0] + lw[2], 1e-3);
  BOOST_CHECK_CLOSE(full[d.convert("f")], lc[2], 1e-3);  // singleton: the class probability only
  std::vector<float> cl = as_vector(cg.forward(cf.class_log_distribution(r)));
  for (unsigned c = 0; c < 3; ++c) BOOST_CHECK_CLOSE(cl[c], lc[c], 1e-3);
  // sampling draws words with a cluster, about as often as their probability
  std::vector<int> counts(7, 0);
  const int n = 3000;
  for (int k = 0; k < n; ++k) ++counts[cf.sample(r)];
  BOOST_CHECK_EQUAL(counts[0], 0);
  for (unsigned w = 1; w < 7; ++w) BOOST_CHECK_SMALL(counts[w] / double(n) - std::exp(full[w]), 0.04);
}

BOOST_AUTO_TEST_CASE(class_factored_gradients_and_batches) {
  ClusterFile f(kClusters);
  Dict d;
  ParameterCollection m;
  ClassFactoredSoftmaxBuilder cf(3, f.path, d, m);
  const unsigned a = d.convert("a"), c = d.convert("c"), e = d.convert("e"), ff = d.convert("f");
  for (unsigned w : {a, ff}) {
    test::check_gradients(m, {{Dim({3}), test::test_values(3)}}, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
      cf.new_graph(cg);
      return cf.neg_log_softmax(xs[0], w);
    });
  }
  const std::vector<unsigned> words = {e, a, ff, c, e};  // clusters out of order, a singleton in the middle
  const unsigned B = static_cast<unsigned>(words.size());
  test::check_gradients(m, {{Dim({3}, B), test::test_values(3 * B)}}, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    cf.new_graph(cg);
    return cf.neg_log_softmax(xs[0], words);
  });
  check_batched_equals_single(cf, test::test_values(3 * B, 0.3f), words);
}

BOOST_AUTO_TEST_CASE(class_factored_errors) {
  Dict d;
  ParameterCollection m;
  ClusterFile bad("10\ta\n10\tb\nlonely\n");
  test::check_throws_with<io_error>([&] { ClassFactoredSoftmaxBuilder cf(3, bad.path, d, m); },
                                    {bad.path.c_str(), ":3:", "cluster<TAB>word", "lonely"});
  ClusterFile dup("10\ta\n11\ta\n");
  test::check_throws_with<io_error>([&] { ClassFactoredSoftmaxBuilder cf(3, dup.path, d, m); },
                                    {dup.path.c_str(), ":2:", "'a'", "already"});
  test::check_throws_with<io_error>([&] { ClassFactoredSoftmaxBuilder cf(3, "/nonexistent/c.txt", d, m); },
                                    {"/nonexistent/c.txt"});
  ClusterFile f(kClusters);
  Dict d2;
  d2.convert("<unk>");
  ClassFactoredSoftmaxBuilder cf(3, f.path, d2, m);
  ComputationGraph cg;
  cf.new_graph(cg);
  Expression r = input(cg, Dim({3}), test::test_values(3));
  test::check_throws_with<index_error>([&] { cf.neg_log_softmax(r, 0u); }, {"ClassFactoredSoftmaxBuilder", "word id 0"});
  test::check_throws_with<index_error>([&] { cf.neg_log_softmax(r, 99u); }, {"word id 99"});
  Expression r2 = input(cg, Dim({2}), test::test_values(2));
  test::check_throws_with<dim_error>([&] { cf.neg_log_softmax(r2, 1u); }, {"ClassFactoredSoftmaxBuilder", "{3}", "{2}"});
}
