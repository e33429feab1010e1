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
