#define BOOST_TEST_MODULE init
#include "test_utils.h"

#include <cstring>
#include <string>
#include <thread>

#include "dynet_lite/init.h"

using dl::ComputationGraph;

namespace {

/// argv built from strings, with the trailing null that main() gets.
struct Args {
  explicit Args(std::vector<std::string> a) : storage(std::move(a)) {
    for (auto& s : storage) ptrs.push_back(&s[0]);
    ptrs.push_back(nullptr);
    argc = static_cast<int>(storage.size());
    argv = ptrs.data();
  }
  std::vector<std::string> rest() const { return std::vector<std::string>(argv, argv + argc); }
  std::vector<std::string> storage;
  std::vector<char*> ptrs;
  int argc;
  char** argv;
};

std::vector<float> fresh_parameter_values() {
  dl::ParameterCollection m;
  dl::Parameter p = m.add_parameters({5, 4});
  dl::LookupParameter l = m.add_lookup_parameters(3, {2});
  std::vector<float> v = dl::as_vector(p.get_storage().values);
  std::vector<float> lv = dl::as_vector(l.get_storage().all_values);
  v.insert(v.end(), lv.begin(), lv.end());
  return v;
}

// Initialises DyNet with --dynet-seed `seed`, then returns what `draw()` draws.
template <class Draw>
std::vector<float> draw_with_seed(const char* seed, Draw draw) {
  Args a({"prog", "--dynet-seed", seed});
  dl::initialize(a.argc, a.argv);
  return draw();
}

/// Puts the process back to the defaults so test cases do not leak settings.
struct RestoreDefaults {
  ~RestoreDefaults() {
    dl::DynetParams p;
    p.random_seed = 1;
    dl::initialize(p);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(init, RestoreDefaults)

BOOST_AUTO_TEST_CASE(dynet_flags_removed_others_kept) {
  Args a({"prog", "--dynet-mem", "64", "--epochs", "3", "--dynet-seed=7", "data.txt", "--dynet_autobatch", "1",
          "--dynet-weight-decay", "0.0001", "-v"});
  dl::initialize(a.argc, a.argv);
  BOOST_CHECK_EQUAL(a.argc, 5);
  std::vector<std::string> want = {"prog", "--epochs", "3", "data.txt", "-v"};
  std::vector<std::string> got = a.rest();
  BOOST_CHECK_EQUAL_COLLECTIONS(got.begin(), got.end(), want.begin(), want.end());
  BOOST_CHECK(a.argv[a.argc] == nullptr);
  const dl::DynetParams& p = dl::current_params();
  BOOST_CHECK_EQUAL(p.random_seed, 7u);
  BOOST_CHECK_EQUAL(p.mem_descriptor, "64");
  BOOST_CHECK_EQUAL(p.autobatch, 1);
  BOOST_CHECK_CLOSE(p.weight_decay, 0.0001f, 1e-3);
}

BOOST_AUTO_TEST_CASE(other_arguments_left_alone) {
  Args a({"prog", "-dynet-seed", "dynet", "--seed", "--", "x"});
  dl::extract_dynet_params(a.argc, a.argv);
  BOOST_CHECK_EQUAL(a.argc, 6);
  std::vector<std::string> got = a.rest();
  BOOST_CHECK_EQUAL_COLLECTIONS(got.begin(), got.end(), a.storage.begin(), a.storage.end());
}

BOOST_AUTO_TEST_CASE(seed_makes_initialisation_reproducible) {
  std::vector<float> first = draw_with_seed("1234", fresh_parameter_values);
  std::vector<float> second = draw_with_seed("1234", fresh_parameter_values);
  BOOST_CHECK_EQUAL_COLLECTIONS(first.begin(), first.end(), second.begin(), second.end());
  std::vector<float> third = draw_with_seed("4321", fresh_parameter_values);
  BOOST_CHECK(first != third);
  // The values are not all the same number (a real random draw).
  BOOST_CHECK(first[0] != first[1]);
}

BOOST_AUTO_TEST_CASE(seed_makes_graph_randomness_reproducible) {
  auto draw = [] {
    ComputationGraph cg;
    return dl::as_vector(dl::random_normal(cg, {6}).value());
  };
  std::vector<float> first = draw_with_seed("99", draw);
  std::vector<float> second = draw_with_seed("99", draw);
  BOOST_CHECK_EQUAL_COLLECTIONS(first.begin(), first.end(), second.begin(), second.end());
}

BOOST_AUTO_TEST_CASE(mem_is_a_hint) {
  Args a({"prog", "--dynet-mem", "4"});
  dl::initialize(a.argc, a.argv);
  BOOST_CHECK_EQUAL(dl::default_arena_bytes(), 4u << 20);
  // A graph of a fresh thread (no pooled memory yet) starts with that size ...
  size_t cap = 0;
  std::thread t([&] {
    ComputationGraph cg;
    cap = cg.arena_capacity_bytes();
  });
  t.join();
  BOOST_CHECK_GE(cap, 4u << 20);
  // ... and a graph larger than the hint still works: memory grows.
  std::vector<float> big(3u << 20, 0.5f);  // 12 MB
  ComputationGraph cg;
  dl::Expression s = dl::sum_elems(dl::input(cg, {static_cast<unsigned>(big.size())}, big) * 2.f);
  BOOST_CHECK_CLOSE(dl::as_scalar(s.value()), static_cast<float>(big.size()), 1e-3);

  // DyNet's "forward,backward,parameters" form is accepted too.
  Args b({"prog", "--dynet-mem", "2,1,1"});
  dl::initialize(b.argc, b.argv);
  BOOST_CHECK_EQUAL(dl::default_arena_bytes(), 2u << 20);
  BOOST_CHECK_EQUAL(b.argc, 1);
}

BOOST_AUTO_TEST_CASE(autobatch_value) {
  for (int strategy : {0, 1, 2}) {
    Args a({"prog", "--dynet-autobatch", std::to_string(strategy)});
    dl::initialize(a.argc, a.argv);
    BOOST_CHECK_EQUAL(dl::current_params().autobatch, strategy);
    ComputationGraph cg;
    BOOST_CHECK_EQUAL(cg.autobatch(), strategy);
    cg.set_autobatch(0);
    BOOST_CHECK_EQUAL(cg.autobatch(), 0);
  }
  Args bad({"prog", "--dynet-autobatch", "5"});
  test::check_throws_with<std::invalid_argument>([&] { dl::initialize(bad.argc, bad.argv); },
                                                 {"--dynet-autobatch", "5"});
}

// Every flag's value is range-checked: no float-to-integer conversion out of
// range (undefined behaviour), no value silently ignored.
BOOST_AUTO_TEST_CASE(flag_values_out_of_range_are_clear_errors) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--dynet-seed", "-5"},        {"--dynet-seed", "1e20"},      {"--dynet-seed", "4294967296"},
      {"--dynet-seed", "1.5"},       {"--dynet-autobatch", "1e10"}, {"--dynet-autobatch", "nan"},
      {"--dynet-autobatch", "-1"},   {"--dynet-cse", "2"},          {"--dynet-mem", "1e30"},
      {"--dynet-mem", "-5"},         {"--dynet-mem", "abc"},        {"--dynet-mem", "0"},
      {"--dynet-mem", "1,2"},        {"--dynet-mem", "inf"},        {"--dynet-weight-decay", "nan"},
      {"--dynet-weight-decay", "1"}, {"--dynet-profiling", "-1"},   {"--dynet-gpus", "1e9"},
  };
  for (const auto& [flag, value] : bad) {
    Args a({"prog", flag, value});
    test::check_throws_with<std::invalid_argument>([&] { dl::initialize(a.argc, a.argv); }, {flag.c_str(), value.c_str()});
  }
  Args good({"prog", "--dynet-seed", "4294967295", "--dynet-mem", "1,1,1,1", "--dynet-profiling", "0"});
  BOOST_CHECK_NO_THROW(dl::initialize(good.argc, good.argv));
  BOOST_CHECK_EQUAL(dl::current_params().random_seed, 4294967295u);
  Args reset({"prog", "--dynet-mem", "1"});
  dl::initialize(reset.argc, reset.argv);
}

BOOST_AUTO_TEST_CASE(weight_decay_sets_the_collection_default) {
  Args a({"prog", "--dynet-weight-decay", "0.001"});
  dl::initialize(a.argc, a.argv);
  dl::ParameterCollection m;
  BOOST_CHECK_CLOSE(m.get_weight_decay_lambda(), 0.001f, 1e-3);
  dl::ParameterCollection sub = m.add_subcollection("layer");
  BOOST_CHECK_CLOSE(sub.get_weight_decay_lambda(), 0.001f, 1e-3);
  m.set_weight_decay_lambda(0.01f);
  BOOST_CHECK_CLOSE(m.get_weight_decay_lambda(), 0.01f, 1e-3);
  Args bad({"prog", "--dynet-weight-decay", "1.5"});
  test::check_throws_with<std::invalid_argument>([&] { dl::initialize(bad.argc, bad.argv); },
                                                 {"--dynet-weight-decay", "1.5"});
  // Without the flag collections start with no decay.
  Args none({"prog"});
  dl::initialize(none.argc, none.argv);
  BOOST_CHECK_EQUAL(dl::ParameterCollection().get_weight_decay_lambda(), 0.f);
}

BOOST_AUTO_TEST_CASE(initialize_is_optional) {
  // Graphs and models work with the defaults; cleanup() frees pooled memory.
  ComputationGraph cg;
  dl::Expression x = dl::input(cg, 3.f);
  BOOST_CHECK_EQUAL(dl::as_scalar((x * 2.f).value()), 6.f);
  BOOST_CHECK_NO_THROW(dl::cleanup());
}

BOOST_AUTO_TEST_SUITE_END()
