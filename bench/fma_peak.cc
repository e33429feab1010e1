// The single-thread floating-point peak of this CPU: a loop of independent
// fused multiply-adds in the widest vectors it runs (AVX-512, AVX2 + FMA, or
// SSE2 multiply and add), enough chains in flight to hide the FMA latency.
// bench/run_all.py divides each task's achieved GFLOP/s by this figure.
//
//   fma_peak [--rounds N]     prints "fma_peak isa=... median G GFLOP/s"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <immintrin.h>

namespace {

constexpr int kChains = 12;  // latency 4 x 2 ports, with room to spare
constexpr long kIterations = 50'000'000;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The timed loop, written out in each function so that it is compiled for that
// function's instruction set.  The first lane of every chain is summed into a
// volatile so that the loop is kept.
#define DYNET_LITE_PEAK_LOOP(V, SET1, STEP, LANES)                          \
  V acc[kChains];                                                           \
  const V scale = SET1(0.999f), bias = SET1(1e-3f);                         \
  for (auto& a : acc) a = bias;                                             \
  const auto t0 = std::chrono::steady_clock::now();                         \
  for (long i = 0; i < kIterations; ++i) {                                  \
    _Pragma("GCC unroll 12") /* chains in registers, not in memory */       \
    for (int c = 0; c < kChains; ++c) acc[c] = STEP(acc[c], scale, bias);   \
  }                                                                         \
  const double s = seconds_since(t0);                                       \
  volatile float sink = 0;                                                  \
  for (auto& a : acc) sink = sink + reinterpret_cast<const float*>(&a)[0];  \
  return 2.0 * (LANES) * kChains * kIterations / s * 1e-9;

__attribute__((target("avx512f"))) double run_avx512() {
  DYNET_LITE_PEAK_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, 16)
}

__attribute__((target("avx2,fma"))) double run_avx2() {
  DYNET_LITE_PEAK_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, 8)
}

// No FMA: a multiply and an add, counted as the two flops they are.
inline __m128 mul_add(__m128 a, __m128 b, __m128 c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
double run_sse2() { DYNET_LITE_PEAK_LOOP(__m128, _mm_set1_ps, mul_add, 4) }

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: fma_peak [--rounds N]\n");
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;
  __builtin_cpu_init();
  const char* isa = __builtin_cpu_supports("avx512f") ? "avx512"
                    : (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? "avx2"
                                                                                       : "sse2";
  std::vector<double> rates;
  for (int r = 0; r < rounds; ++r)
    rates.push_back(isa[3] == '5' ? run_avx512() : isa[3] == '2' ? run_avx2() : run_sse2());
  std::sort(rates.begin(), rates.end());
  std::printf("fma_peak isa=%s median %.1f GFLOP/s, best %.1f over %d rounds\n", isa, rates[rates.size() / 2],
              rates.back(), rounds);
  return 0;
}
