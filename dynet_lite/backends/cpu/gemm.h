// The three dense products every CPU kernel needs, on column-major float data:
//
//   gemm      y (m x n)  (+)= W (m x k) * x (k x n)      forward of W x
//   gemm_tn   dx (k x n)  += W^T * dy (m x n)            gradient of x
//   gemm_nt   dW (m x k)  += dy (m x n) * x^T (k x n)    gradient of W
//
// Each picks its path from the shape: hand-written loops below a few thousand
// multiply-adds (Eigen's dispatch on dynamic sizes costs more than the arithmetic
// there); a matrix-vector product or a rank-1 update when n == 1, and gemm_tn on
// up to a few dozen columns, which read a weight of the L2's size (64 KB to 4 MB)
// column after column in one stream (gemm.cc, column_product_streamed and
// column_dots_streamed: the core's prefetchers serve one stream at nearly twice
// the rate of the several a blocked kernel reads at once); for a weight of
// 48K floats or more (on AVX-512: more than the L2 cache holds) and 32 columns or
// more, all three run a packed product (blocks of both operands copied into the
// order the register tiles read, as GotoBLAS and BLIS do); below that, gemm and
// gemm_nt use register tiles that read W (or dy) where it lies instead of packing
// it on every call as Eigen does (bench/gemm_shapes compares them with Eigen on
// the models' shapes);
// a weight beyond the caches (over 4 MB, a language model's softmax) goes to the
// GEMM library the build found (oneDNN) from 97 columns on, and below that to
// our tiles, strip after strip of W read once (gemm.cc, tall_product), except
// its gradient added into one (the library at any width);
// Eigen remains for small gemm_tn, for shallow gemm_nt, for matrix-vector
// products of small weights and for very large operands with few columns.
// Backward avoids gemm_tn where a weight is used more than once, or in a
// product of many columns: it multiplies by a transposed copy through gemm
// (backends/cpu/transposed_weights.h).
// bench/gemm_shapes measures all three on any shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <Eigen/Core>
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace dynet_lite {
namespace cpu {

namespace detail {

// Below this many multiply-adds the hand-written loops win (the chains of 8x8
// products of benchmark T5, the small gates of a character LSTM).  They are
// inline so that a kernel's call compiles to the loop itself.
constexpr size_t kSmallProduct = 4096;

template <int R>
using ConstBlock = Eigen::Map<const Eigen::Array<float, R, 1>>;
template <int R>
using Block = Eigen::Map<Eigen::Array<float, R, 1>>;


// Rows [i, i + R) of one output column, accumulated in registers:
// out[i..] (+)= sum_t a[t * m + i..] * s[t * s_step].
template <int R, bool kAccumulate>
inline void column_block(const float* a, size_t m, const float* s, size_t s_step, size_t T, float* out) {
  Block<R> dst(out);
  Eigen::Array<float, R, 1> acc;
  if (kAccumulate)
    acc = dst;
  else
    acc.setZero();
  for (size_t t = 0; t < T; ++t) acc += ConstBlock<R>(a + t * m) * s[t * s_step];
  dst = acc;
}

// For every output column c (m rows): out_c (+)= sum_t a_t * s[t * s_step + c * s_col],
// a_t the t-th column (m rows) of a.  Both the small product and the small dW have this form.
template <bool kAccumulate>
inline void columns_times_scalars(const float* a, size_t m, size_t T, const float* s, size_t s_step, size_t s_col,
                           float* out, size_t C) {
  for (size_t c = 0; c < C; ++c, out += m) {
    const float* sc = s + c * s_col;
    size_t i = 0;
    for (; i + 8 <= m; i += 8) column_block<8, kAccumulate>(a + i, m, sc, s_step, T, out + i);
    if (i + 4 <= m) {
      column_block<4, kAccumulate>(a + i, m, sc, s_step, T, out + i);
      i += 4;
    }
    for (; i < m; ++i) {
      float acc = kAccumulate ? out[i] : 0.f;
      for (size_t t = 0; t < T; ++t) acc += a[t * m + i] * sc[t * s_step];
      out[i] = acc;
    }
  }
}

#if defined(__AVX2__) && defined(__FMA__)
// Eight dot products <w_p, dy> (p = 0..7, m a multiple of 8) added to dx[0..8):
// eight accumulators, then their sums gathered into one vector by pairwise
// horizontal adds instead of eight separate reductions.
inline void tn_eight_columns(const float* w, const float* dy, float* dx, size_t m) {
  __m256 a[8];
  for (int q = 0; q < 8; ++q) a[q] = _mm256_setzero_ps();
  for (size_t i = 0; i < m; i += 8) {
    const __m256 d = _mm256_loadu_ps(dy + i);
    for (int q = 0; q < 8; ++q) a[q] = _mm256_fmadd_ps(_mm256_loadu_ps(w + q * m + i), d, a[q]);
  }
  // Lane l of h0123 holds the partial sums of columns 0-3 over rows 4l..4l+3.
  const __m256 h0123 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
  const __m256 h4567 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
  const __m256 sums = _mm256_add_ps(_mm256_permute2f128_ps(h0123, h4567, 0x20),
                                    _mm256_permute2f128_ps(h0123, h4567, 0x31));
  _mm256_storeu_ps(dx, _mm256_add_ps(_mm256_loadu_ps(dx), sums));
}
#endif

// dx += w^T dy for small shapes: dx[p, j] += <w_p, dy_j>.  Four dot products at a
// time share the loads of dy and give the adds of one partial sum room to overlap.
inline void small_tn(const float* w, const float* dy, float* dx, size_t m, size_t k, size_t n) {
  using Arr4 = Eigen::Array<float, 4, 1>;
  const size_t m4 = m & ~size_t(3);
  for (size_t j = 0; j < n; ++j, dy += m, dx += k) {
    size_t p = 0;
#if defined(__AVX2__) && defined(__FMA__)
    if (m % 8 == 0)
      for (; p + 8 <= k; p += 8) tn_eight_columns(w + p * m, dy, dx + p, m);
#endif
    for (; p + 4 <= k; p += 4) {
      const float* w0 = w + p * m;
      Arr4 a0 = Arr4::Zero(), a1 = Arr4::Zero(), a2 = Arr4::Zero(), a3 = Arr4::Zero();
      for (size_t i = 0; i < m4; i += 4) {
        const Arr4 d = ConstBlock<4>(dy + i);
        a0 += ConstBlock<4>(w0 + i) * d;
        a1 += ConstBlock<4>(w0 + m + i) * d;
        a2 += ConstBlock<4>(w0 + 2 * m + i) * d;
        a3 += ConstBlock<4>(w0 + 3 * m + i) * d;
      }
      float s0 = a0.sum(), s1 = a1.sum(), s2 = a2.sum(), s3 = a3.sum();
      for (size_t i = m4; i < m; ++i) {
        s0 += w0[i] * dy[i];
        s1 += w0[m + i] * dy[i];
        s2 += w0[2 * m + i] * dy[i];
        s3 += w0[3 * m + i] * dy[i];
      }
      dx[p] += s0;
      dx[p + 1] += s1;
      dx[p + 2] += s2;
      dx[p + 3] += s3;
    }
    for (; p < k; ++p) {
      const float* w0 = w + p * m;
      Arr4 a0 = Arr4::Zero();
      for (size_t i = 0; i < m4; i += 4) a0 += ConstBlock<4>(w0 + i) * ConstBlock<4>(dy + i);
      float s0 = a0.sum();
      for (size_t i = m4; i < m; ++i) s0 += w0[i] * dy[i];
      dx[p] += s0;
    }
  }
}

void gemm_large(const float* w, const float* x, float* y, size_t m, size_t k, size_t n, bool accumulate);

/// Column-major C (m x n) = op(A) op(B) + beta C through the GEMM library the
/// build found (oneDNN; backends/cpu/library_gemm.cc), on the calling thread;
/// false when there is none.  Used for products whose weight exceeds the caches
/// (a language model's softmax over its vocabulary) with more than 96 columns,
/// and such a weight's gradient added into one, where the library's blocking
/// beats ours (bench/gemm_libraries); with fewer columns, and on the smaller
/// shapes of the models, our kernels are as fast inside the models
/// (bench/RESULTS.md).
bool library_gemm(bool ta, bool tb, size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b,
                  size_t ldb, float beta, float* c, size_t ldc);
/// After library products on this thread (since the last call), when 8 MB or
/// more of the C library's heap lie free: gives them back to the system.  The
/// library allocates and frees a buffer of megabytes in every call, which
/// makes glibc serve later blocks of up to that size from its heap, where
/// what they leave free when they go stays resident; a backward pass calls
/// this at its end.
void release_library_heap();

void gemm_tn_large(const float* w, const float* dy, float* dx, size_t m, size_t k, size_t n);

/// Column-exact products: column c of the result is the same to the bit for any
/// number of columns n (one multiply-add chain per element, in an order set by
/// m and k alone), so the products of many nodes sharing W, run as one call,
/// equal the nodes' own calls.  In the instruction set of the caller's compile.
/// y (m x n) = W x (W m x k, x k x n; column-major, contiguous).
void columns_product(const float* w, size_t m, size_t k, const float* x, size_t n, float* y);
/// dx_c (k floats) (+)= W^T dy_c (dy_c m floats) for c in [0, n).
void columns_product_t(const float* w, size_t m, size_t k, const float* const* dy, float* const* dx, size_t n,
                       bool accumulate);
void gemm_nt_large(const float* dy, const float* x, float* dw, size_t m, size_t k, size_t n, bool assign);

extern thread_local uint64_t product_macs;

}  // namespace detail

/// Multiply-adds that gemm, gemm_tn and gemm_nt have run on this thread: the
/// benchmarks divide what a timed run adds to it by the time, for the rate at
/// which products were actually executed (work merged away by exec/cse.h, or
/// never needed, is not in it).
inline uint64_t product_macs() { return detail::product_macs; }

inline void gemm(const float* w, const float* x, float* y, size_t m, size_t k, size_t n, bool accumulate) {
  detail::product_macs += m * k * n;
  if (m * k * n > detail::kSmallProduct) return detail::gemm_large(w, x, y, m, k, n, accumulate);
  if (accumulate)
    detail::columns_times_scalars<true>(w, m, k, x, 1, k, y, n);
  else
    detail::columns_times_scalars<false>(w, m, k, x, 1, k, y, n);
}

inline void gemm_tn(const float* w, const float* dy, float* dx, size_t m, size_t k, size_t n) {
  detail::product_macs += m * k * n;
  if (m * k * n > detail::kSmallProduct) return detail::gemm_tn_large(w, dy, dx, m, k, n);
  detail::small_tn(w, dy, dx, m, k, n);
}

/// `assign`: dW = dy x^T, whatever dW held (the large products write it without
/// reading it).
inline void gemm_nt(const float* dy, const float* x, float* dw, size_t m, size_t k, size_t n, bool assign = false) {
  detail::product_macs += m * k * n;
  if (n == 1 || m * k * n > detail::kSmallProduct) return detail::gemm_nt_large(dy, x, dw, m, k, n, assign);
  if (assign) std::memset(dw, 0, m * k * sizeof(float));
  detail::columns_times_scalars<true>(dy, m, n, x, k, 1, dw, k);
}

}  // namespace cpu
}  // namespace dynet_lite
