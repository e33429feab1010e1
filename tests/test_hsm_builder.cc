#define BOOST_TEST_MODULE hsm_builder
#include "test_utils.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <unistd.h>

#include "dynet_lite/except.h"
#include "dynet_lite/hsm-builder.h"

using namespace dynet_lite;

namespace {

struct ClusterFile {
  std::string path;
  explicit ClusterFile(const std::string& content) {
    static int n = 0;
    path = "/tmp/dynet_lite_hsm_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".txt";
    std::ofstream(path) << content;
  }
  ~ClusterFile() { std::remove(path.c_str()); }
};

// The tree:  root -> 0 -> {00: {a, b, c}, 01: {d, e}}
//                 -> 1 -> {f}
// so the root and cluster 0 choose between two (a logistic), leaf 00 among
// three (a softmax), leaf 01 between two, and leaf 1 holds one word.
const char* kTree = "0 00\ta\t5\n0 00\tb\n0 01\td\n1\tf\t2\n0 01\te\n\n0 00\tc\n";

double dot_affine(const Parameter& w, const Parameter& b, unsigned row, const std::vector<float>& x) {
  const Dim d = w.dim();
  const std::vector<float> wv = as_vector(w.get_storage().values), bv = as_vector(b.get_storage().values);
  double y = bv[row];
  for (unsigned c = 0; c < d.cols(); ++c) y += wv[c * d.rows() + row] * x[c];
  return y;
}
double log_sig(double s) { return -std::log1p(std::exp(-s)); }

struct Tree {
  ParameterCollection m;
  Dict d;
  ClusterFile f{kTree};
  HierarchicalSoftmaxBuilder hsm{3, f.path, d, m};
};

double loss_of(HierarchicalSoftmaxBuilder& hsm, const std::vector<float>& x, unsigned w) {
  ComputationGraph cg;
  hsm.new_graph(cg);
  return as_scalar(cg.forward(hsm.neg_log_softmax(input(cg, Dim({3}), x), w)));
}

}  // namespace

BOOST_AUTO_TEST_CASE(parameters_per_cluster_in_dynet_order) {
  Tree t;
  // root (2 choices): {1,3},{1}; cluster 0 (2): {1,3},{1}; leaf 00 (3): {3,3},{3};
  // leaf 01 (2): {1,3},{1}; leaf 1 (1 word): none
  const auto ps = t.m.parameters_list();
  const std::vector<Dim> want = {Dim({1, 3}), Dim({1}), Dim({1, 3}), Dim({1}), Dim({3, 3}),
                                 Dim({3}),    Dim({1, 3}), Dim({1})};
  BOOST_REQUIRE_EQUAL(ps.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) BOOST_CHECK_EQUAL(ps[i]->dim, want[i]);
  BOOST_CHECK_EQUAL(t.d.size(), 6u);
  BOOST_CHECK_EQUAL(ps[0]->name, "/hsm-builder/_0");
}

BOOST_AUTO_TEST_CASE(loss_is_the_sum_over_the_path) {
  Tree t;
  for (auto& p : t.m.parameters_list()) {
    std::vector<float> v = test::test_values(p->dim.size(), 0.05f * p->dim.size());
    TensorTools::set_elements(p->values, v);
  }
  const auto ps = t.m.get_parameter_storages();
  auto P = [&](size_t i) { return Parameter(ps[i]); };
  const std::vector<float> x = {0.3f, -0.8f, 0.5f};
  const double s_root = dot_affine(P(0), P(1), 0, x), s_0 = dot_affine(P(2), P(3), 0, x);
  const double s_01 = dot_affine(P(6), P(7), 0, x);
  double z00[3], mx = -1e30, sum = 0;
  for (unsigned r = 0; r < 3; ++r) mx = std::max(mx, z00[r] = dot_affine(P(4), P(5), r, x));
  for (double z : z00) sum += std::exp(z - mx);
  const double lse00 = mx + std::log(sum);
  // a: root chooses 0 (first: logit s), cluster 0 chooses 00 (first), then a in softmax
  const double want_a = -(log_sig(s_root) + log_sig(s_0) + z00[0] - lse00);
  // e: root 0, cluster 0 chooses 01 (second: logit -s), leaf 01 chooses e (second)
  const double want_e = -(log_sig(s_root) + log_sig(-s_0) + log_sig(-s_01));
  // f: root chooses 1 (second); its leaf holds one word, which costs nothing
  const double want_f = -log_sig(-s_root);
  BOOST_CHECK_CLOSE(loss_of(t.hsm, x, t.d.convert("a")), want_a, 1e-3);
  BOOST_CHECK_CLOSE(loss_of(t.hsm, x, t.d.convert("e")), want_e, 1e-3);
  BOOST_CHECK_CLOSE(loss_of(t.hsm, x, t.d.convert("f")), want_f, 1e-3);
}

BOOST_AUTO_TEST_CASE(full_distribution_sums_to_one_and_matches_the_losses) {
  Tree t;
  const std::vector<float> x = {0.9f, -0.4f, 0.2f};
  ComputationGraph cg;
  t.hsm.new_graph(cg);
  Expression rep = input(cg, Dim({3}), x);
  const std::vector<float> lp = as_vector(cg.forward(t.hsm.full_log_distribution(rep)));
  BOOST_REQUIRE_EQUAL(lp.size(), 6u);
  double total = 0;
  for (unsigned w = 0; w < 6; ++w) {
    total += std::exp(lp[w]);
    BOOST_CHECK_CLOSE(-lp[w], loss_of(t.hsm, x, w), 1e-3);
  }
  BOOST_CHECK_CLOSE(total, 1.0, 1e-4);
}

BOOST_AUTO_TEST_CASE(gradients_and_batches) {
  Tree t;
  const unsigned a = t.d.convert("a"), e = t.d.convert("e"), f = t.d.convert("f");
  test::check_gradients(t.m, {{Dim({3}, 3), test::test_values(9)}},
                        [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
                          t.hsm.new_graph(cg);
                          return t.hsm.neg_log_softmax(xs[0], std::vector<unsigned>{a, e, f});
                        });
  // element b of the batch equals the loss of that element alone
  const std::vector<float> vals = test::test_values(9, 0.2f);
  ComputationGraph cg;
  t.hsm.new_graph(cg);
  const std::vector<float> got =
      as_vector(cg.forward(t.hsm.neg_log_softmax(input(cg, Dim({3}, 3), vals), std::vector<unsigned>{a, e, f})));
  const unsigned ws[3] = {a, e, f};
  for (unsigned b = 0; b < 3; ++b)
    BOOST_CHECK_CLOSE(got[b], loss_of(t.hsm, std::vector<float>(vals.begin() + 3 * b, vals.begin() + 3 * b + 3), ws[b]),
                      1e-3);
}

BOOST_AUTO_TEST_CASE(samples_follow_the_distribution) {
  Tree t;
  const std::vector<float> x = {0.5f, 0.1f, -0.3f};
  ComputationGraph cg;
  t.hsm.new_graph(cg);
  Expression rep = input(cg, Dim({3}), x);
  const std::vector<float> lp = as_vector(cg.forward(t.hsm.full_log_distribution(rep)));
  std::map<unsigned, unsigned> count;
  const unsigned n = 6000;
  for (unsigned i = 0; i < n; ++i) ++count[t.hsm.sample(rep)];
  for (unsigned w = 0; w < 6; ++w) {
    const double p = std::exp(lp[w]);
    // 5 standard deviations of a binomial count
    BOOST_CHECK_SMALL(count[w] / double(n) - p, 5 * std::sqrt(p * (1 - p) / n) + 1e-3);
  }
}

BOOST_AUTO_TEST_CASE(errors_name_the_file_line_or_word) {
  ParameterCollection m;
  Dict d;
  test::check_throws_with<io_error>([&] { HierarchicalSoftmaxBuilder(3, "/nonexistent/clusters", d, m); },
                                    {"HierarchicalSoftmaxBuilder", "/nonexistent/clusters"});
  ClusterFile no_word("0 1\n");
  test::check_throws_with<io_error>([&] { HierarchicalSoftmaxBuilder(3, no_word.path, d, m); },
                                    {"HierarchicalSoftmaxBuilder", ":1:", "path<TAB>word"});
  ClusterFile inner("0 1\ta\n0\tb\n");
  test::check_throws_with<io_error>([&] { HierarchicalSoftmaxBuilder(3, inner.path, d, m); },
                                    {"HierarchicalSoftmaxBuilder", ":2:", "'b'"});
  // A path going on below a cluster that holds words (the path symbol equal
  // to a word's id: its look-up once found the word's entry among the children).
  ClusterFile below_words("0\ta\n0 0\tb\n");
  test::check_throws_with<io_error>([&] { HierarchicalSoftmaxBuilder(3, below_words.path, d, m); },
                                    {"HierarchicalSoftmaxBuilder", ":2:", "'b'", "holds words"});
  ClusterFile twice("0\ta\n1\ta\n");
  test::check_throws_with<io_error>([&] { HierarchicalSoftmaxBuilder(3, twice.path, d, m); },
                                    {":2:", "'a'", "already"});
  Tree t;
  ComputationGraph cg;
  t.hsm.new_graph(cg);
  Cluster leaf;
  leaf.add_word(0);
  test::check_throws_with<std::invalid_argument>([&] { leaf.add_child(0); }, {"Cluster::add_child", "words"});
  Cluster inner_node;
  inner_node.add_child(0);
  test::check_throws_with<std::invalid_argument>([&] { inner_node.add_word(0); },
                                                 {"Cluster::add_word", "sub-clusters"});
  test::check_throws_with<index_error>([&] { t.hsm.neg_log_softmax(input(cg, Dim({3}), {0.f, 0.f, 0.f}), 99u); },
                                       {"neg_log_softmax", "99", "no cluster"});
  test::check_throws_with<dim_error>([&] { t.hsm.neg_log_softmax(input(cg, Dim({4}), {0.f, 0.f, 0.f, 0.f}), 0u); },
                                     {"neg_log_softmax", "{3}", "{4}"});
}
