#pragma once
// While a graph runs, denormal floats are flushed to zero (x86 FTZ and DAZ), as
// DyNet's -Ofast build and TensorFlow's compute threads do: gradients that vanish
// through long chains otherwise become denormals, which the CPU handles ~100x
// slower.  The thread's previous mode is restored afterwards, so user code outside
// the library keeps IEEE behaviour.  Values below 1.2e-38 become 0.
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define DYNET_LITE_HAVE_MXCSR 1
#endif

namespace dynet_lite {

class FlushDenormals {
 public:
#ifdef DYNET_LITE_HAVE_MXCSR
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFtz | kDaz); }
  ~FlushDenormals() { _mm_setcsr(saved_); }

 private:
  static constexpr unsigned kFtz = 0x8000;  // flush-to-zero
  static constexpr unsigned kDaz = 0x0040;  // denormals-are-zero
  unsigned saved_;
#else
  FlushDenormals() = default;
#endif
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;
};

}  // namespace dynet_lite
