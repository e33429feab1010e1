#include "dynet_lite/backends/cpu/isa.h"

#include "dynet_lite/init.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dynet_lite {
namespace cpu {

#if DYNET_LITE_HAVE_ISA_AVX2
extern "C" const ProductKernels* dynet_lite_product_kernels_avx2();
extern "C" const VectorKernels* dynet_lite_vector_kernels_avx2();
#endif
#if DYNET_LITE_HAVE_ISA_AVX512
extern "C" const ProductKernels* dynet_lite_product_kernels_avx512();
extern "C" const VectorKernels* dynet_lite_vector_kernels_avx512();
#endif

namespace {

// What the CPU and the OS support (libgcc's and compiler-rt's checks read CPUID
// and, for AVX and AVX-512, whether the OS saves the registers: XGETBV).
bool cpu_runs(Isa isa) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  switch (isa) {
    case Isa::Baseline:
      return true;
    case Isa::Avx2:
      return avx2;
    case Isa::Avx512:
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  }
  return false;
#else
  return isa == Isa::Baseline;
#endif
}

bool built(Isa isa) {
  switch (isa) {
    case Isa::Baseline:
      return true;
    case Isa::Avx2:
#if DYNET_LITE_HAVE_ISA_AVX2
      return true;
#else
      return false;
#endif
    case Isa::Avx512:
#if DYNET_LITE_HAVE_ISA_AVX512
      return true;
#else
      return false;
#endif
  }
  return false;
}

constexpr int kUnset = -1;
std::atomic<int> g_active{kUnset};

Isa from_environment() {
  const char* name = std::getenv("DYNET_LITE_ISA");
  if (!name || !*name) return best_isa();
  for (unsigned i = 0; i < kNumIsas; ++i) {
    const Isa isa = static_cast<Isa>(i);
    if (std::strcmp(name, isa_name(isa)) == 0 || (isa == Isa::Baseline && std::strcmp(name, "baseline") == 0)) {
      if (!isa_available(isa))
        throw std::invalid_argument(std::string("DYNET_LITE_ISA=") + name +
                                    ": this CPU or this build cannot run those kernels (best: " +
                                    isa_name(best_isa()) + ")");
      return isa;
    }
  }
  throw std::invalid_argument(std::string("DYNET_LITE_ISA=") + name +
                              ": unknown instruction set (baseline, avx2 or avx512)");
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Baseline:
#if defined(__x86_64__)
      return "sse2";
#else
      return "generic";
#endif
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx512:
      return "avx512";
  }
  return "?";
}

bool isa_available(Isa isa) { return built(isa) && cpu_runs(isa); }

Isa best_isa() {
  static const Isa best = [] {
    Isa b = Isa::Baseline;
    for (unsigned i = 1; i < kNumIsas; ++i)
      if (isa_available(static_cast<Isa>(i))) b = static_cast<Isa>(i);
    return b;
  }();
  return best;
}

Isa active_isa() {
  int v = g_active.load(std::memory_order_acquire);
  if (v == kUnset) {
    int chosen = static_cast<int>(from_environment());
    // The first caller's choice stands (set_active_isa may have run meanwhile).
    if (!g_active.compare_exchange_strong(v, chosen, std::memory_order_acq_rel)) return static_cast<Isa>(v);
    v = chosen;
  }
  return static_cast<Isa>(v);
}

void set_active_isa(Isa isa) {
  if (!isa_available(isa))
    throw std::invalid_argument(std::string("set_active_isa: ") + isa_name(isa) +
                                " kernels are not available here (best: " + isa_name(best_isa()) + ")");
  g_active.store(static_cast<int>(isa), std::memory_order_release);
}

namespace {
// The entry point `name` of each wider compile, or null where the build has none.
#if DYNET_LITE_HAVE_ISA_AVX2
#define DYNET_LITE_AVX2_ENTRY(name) name##_avx2
#else
#define DYNET_LITE_AVX2_ENTRY(name) nullptr
#endif
#if DYNET_LITE_HAVE_ISA_AVX512
#define DYNET_LITE_AVX512_ENTRY(name) name##_avx512
#else
#define DYNET_LITE_AVX512_ENTRY(name) nullptr
#endif

// The table of `isa` from its compile's entry point; null for the baseline
// (compiled into the library) and for a set the build lacks.
template <class Kernels>
const Kernels* table_of(Isa isa, const Kernels* (*avx2)(), const Kernels* (*avx512)()) {
  const Kernels* (*entry)() = isa == Isa::Avx2 ? avx2 : isa == Isa::Avx512 ? avx512 : nullptr;
  return entry ? entry() : nullptr;
}
}  // namespace

const ProductKernels* product_kernels(Isa isa) {
  return table_of<ProductKernels>(isa, DYNET_LITE_AVX2_ENTRY(dynet_lite_product_kernels),
                                  DYNET_LITE_AVX512_ENTRY(dynet_lite_product_kernels));
}

const VectorKernels* vector_kernels(Isa isa) {
  return table_of<VectorKernels>(isa, DYNET_LITE_AVX2_ENTRY(dynet_lite_vector_kernels),
                                 DYNET_LITE_AVX512_ENTRY(dynet_lite_vector_kernels));
}

}  // namespace cpu

const char* cpu_kernels() { return cpu::isa_name(cpu::active_isa()); }

}  // namespace dynet_lite
