#define BOOST_TEST_MODULE graph
#include "dynet_lite/ops/op_table.h"
#include "test_utils.h"

using namespace dynet_lite;

// A graph with static storage is destroyed at exit after this thread's pool of
// graph memory (thread-local objects go first): its destructor must not use the
// pool.  Under AddressSanitizer a use of the destroyed pool is reported.
ComputationGraph static_graph;

BOOST_AUTO_TEST_CASE(static_graph_outlives_the_thread_pool) {
  static_graph.clear();
  Expression y = tanh(input(static_graph, Dim({2}), std::vector<float>{0.f, 1.f}) * 2.f);
  test::check_close(as_vector(static_graph.forward(y)), {0.f, std::tanh(2.f)});
  static_graph.backward(sum_elems(y));
}

BOOST_AUTO_TEST_CASE(op_table_is_complete) {
  unsigned n = 0;
  const char* const* missing = incomplete_ops(&n);
  std::string names;
  for (unsigned i = 0; i < n; ++i) names += std::string(missing[i]) + " ";
  BOOST_CHECK_MESSAGE(n == 0, "ops without a complete row: " << names);
}

BOOST_AUTO_TEST_CASE(tanh_of_input) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), std::vector<float>{-1.f, 0.f, 2.f});
  Expression y = tanh(x);
  std::vector<float> v = as_vector(cg.forward(y));
  test::check_close(v, {std::tanh(-1.f), 0.f, std::tanh(2.f)});
  BOOST_CHECK_EQUAL(y.dim(), Dim({3}));
}

BOOST_AUTO_TEST_CASE(gradient_check_harness_on_cmult_and_tanh) {
  ParameterCollection m;
  Parameter w = m.add_parameters({3});
  size_t n = test::check_gradients(m, {{Dim({3}, 2), test::test_values(6)}},
                                   [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
                                     return tanh(cmult(xs[0], parameter(cg, w)) + 0.5f);
                                   });
  BOOST_CHECK_EQUAL(n, 9u);
}
