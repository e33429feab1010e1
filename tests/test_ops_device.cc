#define BOOST_TEST_MODULE ops_device
#include <cstdlib>
#include <cstring>

#include "test_utils.h"

using namespace dynet_lite;
using test::TestInput;

namespace {

using Xs = std::vector<Expression>;

// A second device with host memory: a graph that uses it has two sets of
// arenas, and values must really be copied between them by to_device.  Never
// destroyed: the per-thread pool of graph memory may keep arenas of it.
test::HostMemoryDevice* second_device() {
  static auto* d = new test::HostMemoryDevice(DeviceType::CPU, 1, "HOST:1");
  return d;
}

}  // namespace

BOOST_AUTO_TEST_CASE(to_device_cpu_to_cpu_copies_value) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3}, 2), {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6});
  Expression y = to_device(x, cpu_device());
  BOOST_CHECK_EQUAL(y.dim(), Dim({2, 3}, 2));
  const Tensor& v = cg.forward(y);
  BOOST_CHECK(v.device == cpu_device());
  BOOST_CHECK(v.v != cg.get_value(x).v);  // a copy, not an alias
  test::check_close(as_vector(v), {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6});
}

BOOST_AUTO_TEST_CASE(to_device_cpu_to_cpu_passes_gradient_back) {
  // loss = sum(w * to_device(x)):  dx = w
  ComputationGraph cg;
  Expression x = input(cg, Dim({3}), {1, 2, 3});
  Expression w = input(cg, Dim({3}), {0.5f, -1, 2});
  Expression loss = sum_elems(cmult(to_device(x, cpu_device()), w));
  test::check_close(as_vector(cg.forward(loss)), {0.5f - 2 + 6});
  cg.backward(loss, true);
  test::check_close(as_vector(x.gradient()), {0.5f, -1, 2});
}

BOOST_AUTO_TEST_CASE(to_device_second_device_round_trip) {
  test::HostMemoryDevice* dev = second_device();
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 2}), {0.5f, -1, 2, 0});
  Expression on_dev = to_device(x, dev);
  Expression t = tanh(on_dev);  // runs on the node's device, inferred from its argument
  Expression back = to_device(t, cpu_device());
  const Tensor& vd = cg.forward(t);
  BOOST_CHECK(vd.device == dev);
  BOOST_CHECK(cg.get_value(on_dev).device == dev);
  BOOST_CHECK(dev->allocations > 0);
  const Tensor& vb = cg.forward(back);
  BOOST_CHECK(vb.device == cpu_device());
  test::check_close(as_vector(vb), {std::tanh(0.5f), std::tanh(-1.f), std::tanh(2.f), 0});
  Expression loss = sum_elems(back);
  cg.forward(loss);
  cg.backward(loss, true);
  // d tanh = 1 - tanh^2
  std::vector<float> want;
  for (float v : {0.5f, -1.f, 2.f, 0.f}) want.push_back(1 - std::tanh(v) * std::tanh(v));
  test::check_close(as_vector(x.gradient()), want);
  BOOST_CHECK(cg.get_gradient(on_dev).device == dev);
}

BOOST_AUTO_TEST_CASE(to_device_gradients) {
  ParameterCollection m;
  Parameter p = m.add_parameters({3});
  p.set_value({0.2f, -0.4f, 0.7f});
  size_t n = test::check_gradients(m, {{Dim({3}, 2), test::test_values(6)}}, [&](ComputationGraph& cg, const Xs& xs) {
    return to_device(xs[0] + parameter(cg, p), cpu_device());
  });
  BOOST_CHECK_EQUAL(n, 3u + 6u);
  test::HostMemoryDevice* dev = second_device();
  n = test::check_gradients(m, {{Dim({3}, 2), test::test_values(6)}}, [&](ComputationGraph& cg, const Xs& xs) {
    Expression a = to_device(xs[0], dev);
    Expression b = to_device(parameter(cg, p), dev);
    return to_device(cmult(tanh(a), b), cpu_device());
  });
  BOOST_CHECK_EQUAL(n, 3u + 6u);
}

BOOST_AUTO_TEST_CASE(to_device_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 3}), std::vector<float>(6, 1.f));
  test::check_throws_with<std::invalid_argument>([&] { to_device(x, nullptr); }, {"to_device", "null", "{2,3}"});
  test::check_throws_with<std::invalid_argument>([&] { to_device(Expression(), cpu_device()); },
                                                 {"to_device", "empty"});
  // other ops still refuse arguments from two devices
  Expression y = to_device(x, second_device());
  test::check_throws_with<std::invalid_argument>([&] { x + y; }, {"lives on", "HOST:1", "to_device"});
}
