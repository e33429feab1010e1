#pragma once
// Instruction sets of the CPU kernels.  The kernel sources are compiled for the
// target's baseline and again for AVX2 + FMA and for AVX-512
// (cmake/DynetLiteIsa.cmake); at first use the widest set that the CPU, the OS
// and the build support is chosen, or the one the environment variable
// DYNET_LITE_ISA names (baseline, avx2 or avx512).  The op table takes its CPU
// kernels from the chosen set, and so do the products (gemm.h) and the passes
// over whole parameters (VectorKernels).
#include <cstddef>
#include <cstdint>

namespace dynet_lite {

enum class DeviceRule;
struct DeviceRuleArgs;

namespace cpu {

enum class Isa : uint8_t { Baseline, Avx2, Avx512 };
constexpr unsigned kNumIsas = 3;

/// "sse2" (the x86-64 baseline; "generic" elsewhere), "avx2" or "avx512".
const char* isa_name(Isa isa);
/// Whether the kernels of `isa` are in this build and the CPU can run them.
bool isa_available(Isa isa);
/// The widest available set.
Isa best_isa();
/// The set in use: DYNET_LITE_ISA if set (an unknown or unavailable name throws
/// std::invalid_argument naming it), else best_isa().
Isa active_isa();
/// Changes the set in use (tests, benchmarks).  Graphs created afterwards use it;
/// throws std::invalid_argument when `isa` is not available.
void set_active_isa(Isa isa);

/// The large products of one instruction set (gemm.cc).
struct ProductKernels {
  void (*gemm_large)(const float* w, const float* x, float* y, size_t m, size_t k, size_t n, bool accumulate);
  void (*gemm_tn_large)(const float* w, const float* dy, float* dx, size_t m, size_t k, size_t n);
  void (*gemm_nt_large)(const float* dy, const float* x, float* dw, size_t m, size_t k, size_t n, bool assign);
};
/// The products of `isa`, or null for the baseline (compiled into the library).
const ProductKernels* product_kernels(Isa isa);

/// Passes over whole parameters (vector_kernels.cc): the gradient norm of
/// clipping and the trainers' steps.
struct VectorKernels {
  double (*squared_norm)(const float* x, size_t n);
  /// SimpleSGD: values -= rate * grads, then grads = 0.
  void (*sgd_step_and_clear)(float* values, float* grads, size_t n, float rate);
  /// An adaptive trainer's rule (backends/update_rules.h: DeviceRule, DeviceRuleArgs).
  void (*update_rule)(DeviceRule rule, const DeviceRuleArgs& args, float* values, const float* grads,
                      float* const* state, size_t n);
};
/// The passes of `isa`, or null for the baseline.
const VectorKernels* vector_kernels(Isa isa);
/// The passes of the set in use.
const VectorKernels& active_vector_kernels();

}  // namespace cpu
}  // namespace dynet_lite

// The entry points of a per-instruction-set compile: extern "C" names ending in
// "_<isa>", the only symbols of it that cmake/isa_bundle.sh leaves public.
#define DYNET_LITE_ISA_PASTE2(name, isa) name##_##isa
#define DYNET_LITE_ISA_PASTE(name, isa) DYNET_LITE_ISA_PASTE2(name, isa)
#ifdef DYNET_LITE_ISA
#define DYNET_LITE_ISA_ENTRY(name) DYNET_LITE_ISA_PASTE(name, DYNET_LITE_ISA)
#endif
