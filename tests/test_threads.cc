#define BOOST_TEST_MODULE threads
#include "test_utils.h"

#include <atomic>
#include <memory>
#include <thread>

using dl::ComputationGraph;
using dl::Dim;
using dl::Expression;

namespace {

/// A small model shared by every thread: embeddings, a layer, a bias.
struct SharedModel {
  SharedModel() {
    E = m.add_lookup_parameters(10, {4}, "E");
    W = m.add_parameters({4, 4}, 0.f, "W");
    b = m.add_parameters({4}, 0.f, "b");
  }
  dl::ParameterCollection m;
  dl::LookupParameter E;
  dl::Parameter W, b;
};

/// loss = sum_elems(square(tanh(W * E[word] + b) - target)), `word` a function of the instance.
float run_instance(SharedModel& s, unsigned instance) {
  ComputationGraph cg;
  unsigned word = (instance * 7 + 3) % 10;
  Expression h = dl::tanh(dl::parameter(cg, s.W) * dl::lookup(cg, s.E, word) + dl::parameter(cg, s.b));
  std::vector<float> target = test::test_values(4, 0.01f * static_cast<float>(instance % 13));
  Expression loss = dl::sum_elems(dl::square(h - dl::input(cg, Dim({4}), target)));
  float v = dl::as_scalar(cg.forward(loss));
  cg.backward(loss);
  return v;
}

std::vector<float> all_gradients(SharedModel& s) {
  std::vector<float> g = dl::as_vector(s.W.get_storage().g);
  std::vector<float> gb = dl::as_vector(s.b.get_storage().g);
  std::vector<float> ge = test::table_gradient(s.E.get_storage());
  g.insert(g.end(), gb.begin(), gb.end());
  g.insert(g.end(), ge.begin(), ge.end());
  return g;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(threads)

BOOST_AUTO_TEST_CASE(several_graphs_alive_in_one_thread) {
  ComputationGraph g1;
  auto g2 = std::make_unique<ComputationGraph>();
  ComputationGraph g3;
  Expression a = dl::input(g1, Dim({2}), {1.f, 2.f});
  Expression b = dl::input(*g2, Dim({2}), {10.f, 20.f});
  Expression c = dl::input(g3, Dim({2}), {-1.f, -2.f});
  // Interleaved construction: each graph keeps its own nodes and memory.
  a = a * 2.f;
  b = b + 1.f;
  c = dl::square(c);
  a = a + 1.f;
  BOOST_CHECK_EQUAL(g1.size(), 3u);
  BOOST_CHECK_EQUAL(g2->size(), 2u);
  BOOST_CHECK_EQUAL(g3.size(), 2u);
  BOOST_CHECK(g1.get_id() != g2->get_id() && g2->get_id() != g3.get_id());
  test::check_close(dl::as_vector(b.value()), {11.f, 21.f});
  test::check_close(dl::as_vector(a.value()), {3.f, 5.f});
  // Destroying one graph (its memory goes back to the pool) leaves the others intact,
  // and a new graph that takes the pooled memory does not disturb them.
  g2.reset();
  ComputationGraph g4;
  Expression d = dl::input(g4, Dim({2}), {7.f, 8.f}) * 3.f;
  test::check_close(dl::as_vector(d.value()), {21.f, 24.f});
  test::check_close(dl::as_vector(c.value()), {1.f, 4.f});
  test::check_close(dl::as_vector(a.value()), {3.f, 5.f});
}

BOOST_AUTO_TEST_CASE(many_graphs_alive_then_backward_each) {
  SharedModel s;
  std::vector<std::unique_ptr<ComputationGraph>> graphs;
  std::vector<Expression> losses;
  for (unsigned k = 0; k < 20; ++k) {
    graphs.push_back(std::make_unique<ComputationGraph>());
    Expression h = dl::tanh(dl::parameter(*graphs.back(), s.W) * dl::lookup(*graphs.back(), s.E, k % 10));
    losses.push_back(dl::sum_elems(h));
  }
  s.m.reset_gradient();
  float total = 0;
  for (unsigned k = 0; k < 20; ++k) {
    total += dl::as_scalar(graphs[k]->forward(losses[k]));
    graphs[k]->backward(losses[k]);
  }
  std::vector<float> interleaved = all_gradients(s);
  // The same losses one graph at a time.
  s.m.reset_gradient();
  float total2 = 0;
  for (unsigned k = 0; k < 20; ++k) {
    ComputationGraph cg;
    Expression h = dl::tanh(dl::parameter(cg, s.W) * dl::lookup(cg, s.E, k % 10));
    Expression loss = dl::sum_elems(h);
    total2 += dl::as_scalar(cg.forward(loss));
    cg.backward(loss);
  }
  BOOST_CHECK_CLOSE(total, total2, 1e-4);
  test::check_close(interleaved, all_gradients(s), 1e-5);
}

BOOST_AUTO_TEST_CASE(four_threads_accumulate_into_shared_parameters) {
  SharedModel s;
  const unsigned kInstances = 4000;

  s.m.reset_gradient();
  double loss_single = 0;
  for (unsigned i = 0; i < kInstances; ++i) loss_single += run_instance(s, i);
  std::vector<float> single = all_gradients(s);

  s.m.reset_gradient();
  std::atomic<unsigned> next{0};
  std::vector<double> loss_per_thread(4, 0.0);
  std::vector<std::string> errors(4);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < 4; ++t) {
    pool.emplace_back([&, t] {
      try {
        for (unsigned i; (i = next.fetch_add(1)) < kInstances;) loss_per_thread[t] += run_instance(s, i);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : pool) th.join();
  for (unsigned t = 0; t < 4; ++t) BOOST_CHECK_MESSAGE(errors[t].empty(), "thread " << t << ": " << errors[t]);
  double loss_multi = loss_per_thread[0] + loss_per_thread[1] + loss_per_thread[2] + loss_per_thread[3];
  std::vector<float> multi = all_gradients(s);

  BOOST_CHECK_CLOSE(loss_single, loss_multi, 1e-6);
  // Same sums in another order: equal up to float rounding.
  test::check_close(multi, single, 1e-4);
  // The gradient is not trivially zero.
  float norm = 0;
  for (float g : single) norm += g * g;
  BOOST_CHECK_GT(norm, 1e-3f);
  // Every row of E that was used has its sparse-update mark.
  BOOST_CHECK_EQUAL(s.E.get_storage().non_zero_grads.size(), 10u);
}

BOOST_AUTO_TEST_CASE(threads_with_their_own_graph_sequences) {
  // Each thread builds graphs of growing size from its own parameters; results
  // equal those of the same work in the main thread.
  auto work = [](unsigned seed) {
    dl::ParameterCollection m;
    dl::Parameter p = m.add_parameters({3}, dl::ParameterInitConst(0.1f * static_cast<float>(seed + 1)));
    double acc = 0;
    for (unsigned g = 1; g <= 300; ++g) {
      ComputationGraph cg;
      Expression x = dl::parameter(cg, p);
      for (unsigned k = 0; k < g % 50 + 1; ++k) x = dl::tanh(x * 1.1f + 0.01f);
      Expression loss = dl::sum_elems(x);
      acc += dl::as_scalar(cg.forward(loss));
      cg.backward(loss);
    }
    return acc;
  };
  std::vector<double> want(4), got(4);
  for (unsigned t = 0; t < 4; ++t) want[t] = work(t);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < 4; ++t) pool.emplace_back([&, t] { got[t] = work(t); });
  for (auto& th : pool) th.join();
  for (unsigned t = 0; t < 4; ++t) BOOST_CHECK_EQUAL(got[t], want[t]);
}

BOOST_AUTO_TEST_SUITE_END()
