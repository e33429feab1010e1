// Speed of the passes over whole parameters (backends/cpu/vector_kernels.cc) in
// every instruction set this build and this CPU have: the clipping norm,
// SimpleSGD's step and Adam's rule, on parameters of the given sizes (default:
// the tagger's dense parameters, about 75K floats, and a 1M-float layer).
// Rounds interleave the sets; each figure is the median over the rounds of
// microseconds per pass.
//   param_passes [--rounds N] [FLOATS ...]
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "bench_info.h"
#include "dynet_lite/backends/cpu/isa.h"
#include "dynet_lite/backends/update_rules.h"

namespace dl = dynet_lite;
using dl::cpu::Isa;

namespace {

int run(int argc, char** argv) {
  int rounds = 5;
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (a.find_first_not_of("0123456789") == std::string::npos)
      sizes.push_back(std::stoul(a));
    else
      throw std::invalid_argument("unknown argument '" + a + "' (usage: param_passes [--rounds N] [FLOATS ...])");
  }
  if (rounds < 1) throw std::invalid_argument("--rounds must be at least 1");
  if (sizes.empty()) sizes = {75000, 1000000};
  std::vector<Isa> isas;
  for (unsigned i = 0; i < dl::cpu::kNumIsas; ++i)
    if (dl::cpu::isa_available(static_cast<Isa>(i))) isas.push_back(static_cast<Isa>(i));

  bench::print_environment(std::cout);
  std::cout << "microseconds per pass, medians of " << rounds << " interleaved rounds\n\n| floats | pass |";
  for (Isa isa : isas) std::cout << ' ' << dl::cpu::isa_name(isa) << " |";
  std::cout << " widest / baseline |\n| --- | --- |";
  for (size_t k = 0; k < isas.size() + 1; ++k) std::cout << " --- |";
  std::cout << '\n';

  const char* passes[] = {"squared norm", "SimpleSGD step", "Adam rule"};
  for (size_t n : sizes) {
    std::vector<float> values(n, 0.5f), grads(n, 0.25f), m(n, 0.f), v(n, 0.f);
    float* state[3] = {m.data(), v.data(), nullptr};
    dl::DeviceRuleArgs adam;
    adam.rate = 1e-6f;
    adam.a = 0.9f;
    adam.b = 0.999f;
    adam.eps = 1e-8f;
    volatile double sink = 0;
    std::vector<std::vector<std::vector<double>>> us(3, std::vector<std::vector<double>>(isas.size()));
    for (int r = 0; r < rounds; ++r)
      for (size_t s = 0; s < isas.size(); ++s) {
        dl::cpu::set_active_isa(isas[s]);
        const dl::cpu::VectorKernels& k = dl::cpu::active_vector_kernels();
        us[0][s].push_back(1e6 * bench::seconds_per_call([&] { sink = sink + k.squared_norm(grads.data(), n); }, 9));
        // The step clears the gradient it reads: the traffic is the same either way.
        us[1][s].push_back(
            1e6 * bench::seconds_per_call([&] { k.sgd_step_and_clear(values.data(), grads.data(), n, 1e-6f); }, 9));
        us[2][s].push_back(1e6 * bench::seconds_per_call(
                                     [&] { k.update_rule(dl::DeviceRule::Adam, adam, values.data(), grads.data(), state, n); },
                                     9));
      }
    for (int p = 0; p < 3; ++p) {
      std::cout << "| " << n << " | " << passes[p] << " |";
      for (size_t s = 0; s < isas.size(); ++s)
        std::cout << ' ' << std::fixed << std::setprecision(1) << bench::median(us[p][s]) << " |";
      std::cout << ' ' << std::setprecision(2) << bench::median(us[p][0]) / bench::median(us[p].back()) << "x |\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bench::run_reporting_errors("param_passes", run, argc, argv); }
