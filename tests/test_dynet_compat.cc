#define BOOST_TEST_MODULE dynet_compat
// What DyNet programs (and DyNet's own unit tests) read beyond the operations:
// DyNet's header names (exec.h, functors.h, mem.h, index-tensor.h with
// Eigen::DenseIndex), the gradient of a loss that depends on no parameter, and
// EGTrainer's meg / zeg state.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <vector>

#include "dynet_lite/exec.h"
#include "dynet_lite/functors.h"
#include "dynet_lite/index-tensor.h"
#include "dynet_lite/core/random.h"
#include "dynet_lite/mem.h"
#include "dynet_lite/training.h"
#include "test_utils.h"

using namespace dynet_lite;

// DyNet seeds d loss / d loss = 1 whatever the loss depends on (DyNet's
// tests/test-exec.cc loss_gradient): so does backward() here, batched or not.
BOOST_AUTO_TEST_CASE(gradient_of_a_loss_without_parameters_is_one) {
  const int saved = autobatch_flag;
  for (int flag : {0, 1}) {
    autobatch_flag = flag;
    ComputationGraph cg;
    ParameterCollection model;
    Parameter param = model.add_parameters({1});
    Expression loss = zeroes(cg, {1});
    Expression unused = parameter(cg, param);
    cg.incremental_forward(loss);
    cg.backward(loss);
    BOOST_CHECK_EQUAL(as_scalar(loss.gradient()), 1.f);
    // nodes the loss does not read still get zero
    BOOST_CHECK_EQUAL(as_scalar(cg.get_gradient(unused)), 0.f);
    // a loss that does depend on a parameter: 1 as well, and the parameter's
    Expression l2 = 3.f * parameter(cg, param);
    cg.forward(l2);
    cg.backward(l2);
    BOOST_CHECK_EQUAL(as_scalar(l2.gradient()), 1.f);
    BOOST_CHECK_EQUAL(as_vector(param.get_storage().g)[0], 3.f);
  }
  autobatch_flag = saved;
}

namespace {
// DyNet's tests read trainer state through a subclass, as here.
class EG : public EGTrainer {
 public:
  using EGTrainer::meg;
  using EGTrainer::zeg;
  explicit EG(ParameterCollection& m) : EGTrainer(m) {}
};

void one_update(ParameterCollection& m, Parameter& p, Trainer& t) {
  ComputationGraph cg;
  Expression loss = dot_product(parameter(cg, p), input(cg, {3}, {1.f, 2.f, 3.f}));
  cg.forward(loss);
  cg.backward(loss);
  t.update();
  (void)m;
}
}  // namespace

// meg and zeg: the maximum of log x + v and the log of the normaliser of the
// last update (v = -lr g after one update from zero momentum).
BOOST_AUTO_TEST_CASE(eg_trainer_meg_and_zeg) {
  ParameterCollection m;
  Parameter p = m.add_parameters({3});
  p.set_value({0.2f, 0.3f, 0.5f});
  EG eg(m);
  BOOST_CHECK_EQUAL(eg.meg.d, Dim({1}));
  BOOST_CHECK_EQUAL(eg.zeg.d, Dim({1}));
  one_update(m, p, eg);
  const double a[3] = {std::log(0.2) - 0.1, std::log(0.3) - 0.2, std::log(0.5) - 0.3};
  const double top = std::max(a[0], std::max(a[1], a[2]));
  const double lse = top + std::log(std::exp(a[0] - top) + std::exp(a[1] - top) + std::exp(a[2] - top));
  BOOST_CHECK_CLOSE(as_scalar(eg.meg), top, 1e-4);
  BOOST_CHECK_CLOSE(as_scalar(eg.zeg), lse, 1e-4);
  // x = exp(a - zeg)
  const std::vector<float> x = as_vector(p.get_storage().values);
  for (int i = 0; i < 3; ++i) BOOST_CHECK_CLOSE(x[i], std::exp(a[i] - lse), 1e-3);

  // saved and populated with the rest of the state
  std::stringstream ss;
  eg.save(ss);
  ParameterCollection m2;
  m2.add_parameters({3});
  EG eg2(m2);
  eg2.populate(ss);
  BOOST_CHECK_EQUAL(as_scalar(eg2.meg), as_scalar(eg.meg));
  BOOST_CHECK_EQUAL(as_scalar(eg2.zeg), as_scalar(eg.zeg));
}

BOOST_AUTO_TEST_CASE(dynet_header_names) {
  // exec.h gives the batching flag DyNet programs set
  const int saved = autobatch_flag;
  autobatch_flag = 2;
  {
    ComputationGraph cg;
    BOOST_CHECK_EQUAL(cg.autobatch(), 2);
  }
  autobatch_flag = saved;
  // functors.h: the floor of the log-domain clamps, which binary_log_loss uses
  BOOST_CHECK_EQUAL(DYNET_DEVICE_MIN, std::numeric_limits<float>::min());
  ComputationGraph cg;
  Expression l = binary_log_loss(input(cg, 0.f), input(cg, 1.f));
  BOOST_CHECK_CLOSE(as_scalar(l.value()), -std::log(DYNET_DEVICE_MIN), 1e-4);
  // index-tensor.h: Eigen::DenseIndex without Eigen
  std::vector<Eigen::DenseIndex> ids = as_vector(TensorTools::argmax(input(cg, {3}, {0.f, 5.f, 1.f}).value()));
  BOOST_CHECK(ids == std::vector<Eigen::DenseIndex>({1}));
}

// With a seed, parameters get DyNet's initial values whatever graphs were made
// before them: creating a graph does not draw from the parameters' engine.
BOOST_AUTO_TEST_CASE(graphs_do_not_move_parameter_initialisation) {
  auto draw = [](int graphs) {
    reseed_global_rng(10);
    ParameterCollection m;
    m.add_parameters({4, 3});
    for (int g = 0; g < graphs; ++g) {
      ComputationGraph cg;
      cg.forward(random_normal(cg, Dim({2})));
    }
    return as_vector(m.add_parameters({5, 2}).get_storage().values);
  };
  const std::vector<float> none = draw(0);
  BOOST_CHECK(draw(1) == none);
  BOOST_CHECK(draw(3) == none);
  // graphs still get engines of their own, reproducible from the seed
  auto noise = [] {
    reseed_global_rng(10);
    ComputationGraph a, b;
    std::vector<float> x = as_vector(a.forward(random_normal(a, Dim({3}))));
    std::vector<float> y = as_vector(b.forward(random_normal(b, Dim({3}))));
    x.insert(x.end(), y.begin(), y.end());
    return x;
  };
  const std::vector<float> n1 = noise();
  BOOST_CHECK(n1 == noise());
  BOOST_CHECK(std::vector<float>(n1.begin(), n1.begin() + 3) != std::vector<float>(n1.begin() + 3, n1.end()));
}

// mem.h: DyNet's CPUAllocator (as DyNet's tests/test-dynet.cc uses it).
BOOST_AUTO_TEST_CASE(cpu_allocator) {
  CPUAllocator a;
  BOOST_CHECK_EQUAL(a.align, 32);
  BOOST_CHECK_EQUAL(a.round_up_align(33), 64u);
  BOOST_CHECK_EQUAL(a.round_up_align(64), 64u);
  void* mem = a.malloc(1024);
  BOOST_CHECK_EQUAL(reinterpret_cast<std::uintptr_t>(mem) % 32, 0u);
  static_cast<char*>(mem)[0] = 99;
  static_cast<char*>(mem)[1023] = 98;
  a.zero(mem, 1024);
  BOOST_CHECK_EQUAL(static_cast<char*>(mem)[0], 0);
  BOOST_CHECK_EQUAL(static_cast<char*>(mem)[1023], 0);
  a.free(mem);
  a.free(a.malloc(0));
}
