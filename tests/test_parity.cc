#define BOOST_TEST_MODULE parity
// DyNet's globals and helpers that DyNet programs and tests use directly:
// default_device and autobatch_flag, IndexTensor and the TensorTools that
// return one, categorical_sample_log_prob.
#include <cstring>
#include <string>
#include <vector>

#include "dynet_lite/init.h"
#include "dynet_lite/tensor.h"
#include "test_utils.h"

BOOST_AUTO_TEST_SUITE(globals)

// DyNet programs and tests start with `if (default_device == nullptr) initialize(...)`.
BOOST_AUTO_TEST_CASE(default_device_reads_null_until_initialize) {
  BOOST_CHECK(dl::default_device == nullptr);
  dl::Device* raw = dl::default_device;
  BOOST_CHECK(raw == nullptr);
  BOOST_CHECK(dl::default_device() == dl::cpu_device());  // the device in use
  BOOST_CHECK_EQUAL(dl::default_device->name, "CPU");
  BOOST_CHECK_EQUAL(dl::autobatch_flag, 0);

  std::vector<std::string> args = {"prog", "--dynet-autobatch", "1", "--dynet-seed", "7"};
  std::vector<char*> av;
  for (auto& a : args) av.push_back(&a[0]);
  av.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  char** argv = av.data();
  if (dl::default_device == nullptr) dl::initialize(argc, argv);
  BOOST_CHECK(dl::default_device != nullptr);
  BOOST_CHECK(static_cast<dl::Device*>(dl::default_device) == dl::cpu_device());
  BOOST_CHECK_EQUAL(argc, 1);
  BOOST_CHECK_EQUAL(dl::autobatch_flag, 1);

  // New graphs take the flag's value as it is when they are created.
  {
    dl::ComputationGraph cg;
    BOOST_CHECK_EQUAL(cg.autobatch(), 1);
  }
  dl::autobatch_flag = 2;
  {
    dl::ComputationGraph cg;
    BOOST_CHECK_EQUAL(cg.autobatch(), 2);
  }
  dl::autobatch_flag = 0;
  {
    dl::ComputationGraph cg;
    BOOST_CHECK_EQUAL(cg.autobatch(), 0);
  }

  // Assigning null makes it read as unset again; the CPU stays in use.
  dl::default_device = nullptr;
  BOOST_CHECK(dl::default_device == nullptr);
  BOOST_CHECK(dl::default_device() == dl::cpu_device());
  dl::default_device = dl::cpu_device();
  BOOST_CHECK(dl::default_device != nullptr);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(index_tensors)

// DyNet's test-tensor.cc: x = {1, 2, 1 | 4, 5, 6} (a batch of two columns).
BOOST_AUTO_TEST_CASE(argmax_and_topk_of_a_batch) {
  dl::ComputationGraph cg;
  dl::Expression x = dl::input(cg, dl::Dim({3}, 2), {1.f, 2.f, 1.f, 4.f, 5.f, 6.f});
  dl::IndexTensor ids = dl::TensorTools::argmax(cg.forward(x));
  BOOST_CHECK_EQUAL(ids.d, dl::Dim({1}, 2));
  BOOST_CHECK(dl::as_vector(ids) == (std::vector<std::ptrdiff_t>{1, 2}));
  auto top = dl::TensorTools::topk(x.value());
  BOOST_CHECK(dl::as_vector(top.second) == (std::vector<std::ptrdiff_t>{1, 2}));
  BOOST_CHECK(dl::as_vector(top.first) == (std::vector<float>{2.f, 6.f}));
  // The two largest, largest first; equal values in index order.
  auto top2 = dl::TensorTools::topk(x.value(), 0, 2);
  BOOST_CHECK_EQUAL(top2.first.d, dl::Dim({2}, 2));
  BOOST_CHECK(dl::as_vector(top2.second) == (std::vector<std::ptrdiff_t>{1, 0, 2, 1}));
  BOOST_CHECK(dl::as_vector(top2.first) == (std::vector<float>{2.f, 1.f, 6.f, 5.f}));
}

BOOST_AUTO_TEST_CASE(along_other_dimensions) {
  // A {2, 3} matrix, column-major: rows (1, 7, 3) and (4, 2, 9).
  dl::ComputationGraph cg;
  dl::Expression m = dl::input(cg, dl::Dim({2, 3}), {1.f, 4.f, 7.f, 2.f, 3.f, 9.f});
  const dl::Tensor& v = cg.forward(m);
  BOOST_CHECK(dl::as_vector(dl::TensorTools::argmax(v, 0)) == (std::vector<std::ptrdiff_t>{1, 0, 1}));
  dl::IndexTensor by_row = dl::TensorTools::argmax(v, 1);
  BOOST_CHECK_EQUAL(by_row.d, dl::Dim({2, 1}));
  BOOST_CHECK(dl::as_vector(by_row) == (std::vector<std::ptrdiff_t>{1, 2}));
  auto top = dl::TensorTools::topk(v, 1, 2);
  BOOST_CHECK(dl::as_vector(top.second) == (std::vector<std::ptrdiff_t>{1, 2, 2, 0}));
  BOOST_CHECK(dl::as_vector(top.first) == (std::vector<float>{7.f, 9.f, 3.f, 4.f}));
}

BOOST_AUTO_TEST_CASE(errors) {
  dl::ComputationGraph cg;
  dl::Expression x = dl::input(cg, dl::Dim({3}), {1.f, 2.f, 3.f});
  const dl::Tensor& v = cg.forward(x);
  test::check_throws_with<std::runtime_error>([&] { dl::TensorTools::argmax(v, 0, 2); }, {"argmax", "num"});
  test::check_throws_with<std::invalid_argument>([&] { dl::TensorTools::topk(v, 0, 4); }, {"topk", "num 4"});
  test::check_throws_with<std::invalid_argument>([&] { dl::TensorTools::argmax(v, 2); }, {"argmax", "dimension 2"});
}

// Sampling from log-probabilities: a certain outcome always comes out, and the
// frequencies follow the distribution.
BOOST_AUTO_TEST_CASE(categorical_sample_log_prob) {
  dl::ComputationGraph cg;
  const float certain = 0.f, never = -1e30f;
  dl::Expression x = dl::input(cg, dl::Dim({3}, 2), {never, certain, never, never, never, certain});
  for (int k = 0; k < 20; ++k)
    BOOST_CHECK(dl::as_vector(dl::TensorTools::categorical_sample_log_prob(cg.forward(x))) ==
                (std::vector<std::ptrdiff_t>{1, 2}));
  dl::Expression p = dl::log(dl::input(cg, dl::Dim({2}), {0.2f, 0.8f}));
  const dl::Tensor& lp = cg.forward(p);
  int ones = 0;
  const int n = 4000;
  for (int k = 0; k < n; ++k) ones += dl::as_vector(dl::TensorTools::categorical_sample_log_prob(lp))[0] == 1;
  BOOST_CHECK_CLOSE(ones / double(n), 0.8, 5.0);  // within 5% of 0.8 (4 standard deviations)
}

BOOST_AUTO_TEST_SUITE_END()
