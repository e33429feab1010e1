#include "dynet_lite/backends/cpu/gemm.h"

#include "dynet_lite/backends/cpu/isa.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>
#if defined(__AVX__)
#include <immintrin.h>
#endif

#include <Eigen/Core>

namespace dynet_lite {
namespace cpu {

namespace {

// Eigen packs each call's operands into buffers of about (depth x rows) and
// (depth x cols) floats, on the stack up to 128 KiB and on the heap above.  Panels
// of at most 128 rows, 128 deep and 256 columns keep both on the stack and are
// large enough that the panel loop costs nothing measurable.
constexpr size_t kPanelRows = 128, kPanelDepth = 128, kPanelCols = 256;
// From this many multiply-adds on (milliseconds of work), one call lets Eigen
// block the product for the caches itself, packing each operand once; the heap
// allocation of its buffers costs nothing next to the arithmetic.  Panels would
// pack the right operand once per row panel (a 10,000-word softmax: 80 times).
constexpr size_t kWholeProduct = size_t(1) << 23;
// An operand streamed by the no-pack product from beyond the caches (a 10,000-word
// softmax weight: 10 MB) loses to Eigen's blocking; from this many floats on, a
// product of kWholeProduct multiply-adds or more goes to Eigen.
constexpr size_t kLargeOperand = size_t(1) << 20;
// gemm_nt with fewer columns of dy than this (a shallow product) spends its time
// loading and storing tiles of dW, which Eigen's kernel does better.
constexpr size_t kShallowDepth = 12;
// gemm_nt over more columns of dy than this (a weight's gradient from a whole
// graph's tokens) runs in slices of this many, so that a slice of dy and of x stay
// in the L2 cache together while every column of dW passes over them.
constexpr size_t kDepthSlice = 256;

using StridedConstMat = Eigen::Map<const Eigen::MatrixXf, 0, Eigen::OuterStride<>>;
using StridedMat = Eigen::Map<Eigen::MatrixXf, 0, Eigen::OuterStride<>>;
using ConstVec = Eigen::Map<const Eigen::VectorXf>;
using Vec = Eigen::Map<Eigen::VectorXf>;
using detail::Block;
using detail::ConstBlock;

// Block [r0, r0 + rows) x [c0, c0 + cols) of a column-major matrix with leading dimension ld.
inline StridedConstMat block(const float* a, size_t ld, size_t r0, size_t c0, size_t rows, size_t cols) {
  return StridedConstMat(a + c0 * ld + r0, rows, cols, Eigen::OuterStride<>(ld));
}
inline StridedMat block(float* a, size_t ld, size_t r0, size_t c0, size_t rows, size_t cols) {
  return StridedMat(a + c0 * ld + r0, rows, cols, Eigen::OuterStride<>(ld));
}
inline size_t panel(size_t start, size_t step, size_t total) { return total - start < step ? total - start : step; }

// dw += dy x^T with n == 1.  Up to kRank1RegisterRows rows, each block of dy
// stays in registers across the columns of dw.  Longer columns are updated one
// after another (dw read and written as one stream, dy from the L1): a block's
// walk across the columns, m floats apart, kept landing in the same cache sets
// (1024 x 256 ran at 3 GFLOP/s, against 60 for the stream).
constexpr size_t kRank1RegisterRows = 128;
void rank1_update(const float* dy, const float* x, float* dw, size_t m, size_t k) {
  if (m > kRank1RegisterRows) {
    const Eigen::Index rows = static_cast<Eigen::Index>(m);
    for (size_t p = 0; p < k; ++p) Vec(dw + p * m, rows) += x[p] * ConstVec(dy, rows);
    return;
  }
  size_t i = 0;
  for (; i + 16 <= m; i += 16) {
    const Eigen::Array<float, 16, 1> d = ConstBlock<16>(dy + i);
    for (size_t p = 0; p < k; ++p) Block<16>(dw + p * m + i) += d * x[p];
  }
  for (; i + 8 <= m; i += 8) {
    const Eigen::Array<float, 8, 1> d = ConstBlock<8>(dy + i);
    for (size_t p = 0; p < k; ++p) Block<8>(dw + p * m + i) += d * x[p];
  }
  for (; i < m; ++i)
    for (size_t p = 0; p < k; ++p) dw[p * m + i] += dy[i] * x[p];
}

// ---------------------------------------------------------------- no-pack product
// y (+)= a * B for a column-major (lda = m) and B given element by element, with
// no packing: the products here are small enough (a weight of a few hundred KB)
// that a tile of rows of `a` streams from the L1/L2 caches as it lies, while Eigen
// would copy (pack) all of `a` on every call.  A tile keeps kRows vectors x kCols
// columns of y in registers and adds, for each step t of the depth, one column of
// `a` times kCols scalars of B.  The width follows the instruction set the library
// is compiled for (GCC vector extensions; AVX-512 masks the last rows).
#if defined(__AVX512F__)
constexpr size_t kLanes = 16;
constexpr int kRows = 3, kCols = 8;  // 24 accumulators of the 32 registers
#elif defined(__AVX__)
constexpr size_t kLanes = 8;
constexpr int kRows = 2, kCols = 6;  // 12 of 16
#else
constexpr size_t kLanes = 4;
constexpr int kRows = 2, kCols = 4;  // 8 of 16
#endif
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float)), aligned(alignof(float))));
typedef float Lanes4 __attribute__((vector_size(4 * sizeof(float)), aligned(alignof(float))));

template <class V>
inline V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
inline void store(float* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

// B's element (t, c) at s[t * step + c * col]: B = x (step 1, col k) for y = W x,
// B = x^T (step k, col 1) for dW = dy x^T.
struct Scalars {
  const float* s;
  size_t step, col;
  float at(size_t t, size_t c) const { return s[t * step + c * col]; }
};

// The 64-byte cache lines of R vectors V (one at least).
template <class V, int R>
constexpr int kLinesOf = R * sizeof(V) >= 64 ? static_cast<int>(R * sizeof(V) / 64) : 1;

// Rows [0, R * lanes of V) of columns [0, C) of y (+)= a * B over depth T.
// kFetch: also fetches, at each step t, the cache lines of ahead + t * lda whose
// bits are set in `lines` (line l: floats 16 l on; tall_product below).
template <class V, int R, int C, bool kAccumulate, bool kFetch = false>
inline void tile(const float* a, size_t lda, size_t T, Scalars b, float* y, size_t ldy, const float* ahead = nullptr,
                 unsigned lines = 0) {
  constexpr size_t L = sizeof(V) / sizeof(float);
  V acc[R][C];
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) acc[r][c] = kAccumulate ? load<V>(y + c * ldy + r * L) : V{};
  for (size_t t = 0; t < T; ++t) {
    V av[R];
    for (int r = 0; r < R; ++r) av[r] = load<V>(a + t * lda + r * L);
    if constexpr (kFetch)
      for (int l = 0; l < kLinesOf<V, R>; ++l)
        if (lines >> l & 1) __builtin_prefetch(ahead + t * lda + l * 16, 0, 3);
    for (int c = 0; c < C; ++c) {
      const float bc = b.at(t, c);
      for (int r = 0; r < R; ++r) acc[r][c] += av[r] * bc;
    }
  }
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) store<V>(y + c * ldy + r * L, acc[r][c]);
}

#if defined(__AVX512F__)
// The last rows (fewer than 16): masked loads and stores touch no memory past them.
template <int C, bool kAccumulate>
inline void tile_masked(const float* a, size_t lda, size_t T, Scalars b, float* y, size_t ldy, size_t rows) {
  const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
  __m512 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = kAccumulate ? _mm512_maskz_loadu_ps(mask, y + c * ldy) : _mm512_setzero_ps();
  for (size_t t = 0; t < T; ++t) {
    const __m512 av = _mm512_maskz_loadu_ps(mask, a + t * lda);
    for (int c = 0; c < C; ++c) acc[c] = _mm512_fmadd_ps(av, _mm512_set1_ps(b.at(t, c)), acc[c]);
  }
  for (int c = 0; c < C; ++c) _mm512_mask_storeu_ps(y + c * ldy, mask, acc[c]);
}
#elif defined(__AVX__)
// The mask of the first `rows` (fewer than 8) lanes.
inline __m256i first_lanes(size_t rows) {
  static const int32_t kMaskSource[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskSource + 8 - rows));
}

// The last rows (fewer than 8) as one masked vector, so that a 50-row product
// costs about what a 48-row one does.
template <int C, bool kAccumulate>
inline void tile_masked(const float* a, size_t lda, size_t T, Scalars b, float* y, size_t ldy, size_t rows) {
  const __m256i mask = first_lanes(rows);
  __m256 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = kAccumulate ? _mm256_maskload_ps(y + c * ldy, mask) : _mm256_setzero_ps();
  for (size_t t = 0; t < T; ++t) {
    const __m256 av = _mm256_maskload_ps(a + t * lda, mask);
#if defined(__FMA__)
    for (int c = 0; c < C; ++c) acc[c] = _mm256_fmadd_ps(av, _mm256_set1_ps(b.at(t, c)), acc[c]);
#else
    for (int c = 0; c < C; ++c) acc[c] = _mm256_add_ps(acc[c], _mm256_mul_ps(av, _mm256_set1_ps(b.at(t, c))));
#endif
  }
  for (int c = 0; c < C; ++c) _mm256_maskstore_ps(y + c * ldy, mask, acc[c]);
}
#endif

// Rows [0, m) of columns [0, C), tile after tile.
template <int C, bool kAccumulate>
void row_tiles(const float* a, size_t lda, size_t m, size_t T, Scalars b, float* y, size_t ldy) {
  size_t i = 0;
  for (; i + kRows * kLanes <= m; i += kRows * kLanes) tile<Lanes, kRows, C, kAccumulate>(a + i, lda, T, b, y + i, ldy);
  for (; i + kLanes <= m; i += kLanes) tile<Lanes, 1, C, kAccumulate>(a + i, lda, T, b, y + i, ldy);
#if defined(__AVX512F__) || defined(__AVX__)
  if (i < m) tile_masked<C, kAccumulate>(a + i, lda, T, b, y + i, ldy, m - i);
#else
  if (kLanes > 4)
    for (; i + 4 <= m; i += 4) tile<Lanes4, 1, C, kAccumulate>(a + i, lda, T, b, y + i, ldy);
  for (; i < m; ++i)
    for (int c = 0; c < C; ++c) {
      float acc = kAccumulate ? y[c * ldy + i] : 0.f;
      for (size_t t = 0; t < T; ++t) acc += a[t * lda + i] * b.at(t, c);
      y[c * ldy + i] = acc;
    }
#endif
}

template <int C, bool kAccumulate>
void row_tiles_upto(size_t cols, const float* a, size_t lda, size_t m, size_t T, Scalars b, float* y, size_t ldy) {
  if constexpr (C > 1) {
    if (cols < C) return row_tiles_upto<C - 1, kAccumulate>(cols, a, lda, m, T, b, y, ldy);
  }
  row_tiles<C, kAccumulate>(a, lda, m, T, b, y, ldy);
}

// y (m x n, ldy m) (+)= a (m x T, lda m) * B (T x n).  Row panels of about 256 KB of
// `a` keep it in the L2 cache while every block of columns passes over it.
// Not inlined into its callers: there, the loop of a tile would share the
// registers with the caller's and keep B's column offsets on the stack.
template <bool kAccumulate>
__attribute__((noinline)) void nopack_product(const float* a, size_t m, size_t T, Scalars b, size_t n, float* y) {
  constexpr size_t kTileRows = kRows * kLanes;
  const size_t panel = std::max(kTileRows, (size_t(65536) / std::max<size_t>(T, 1)) / kTileRows * kTileRows);
  for (size_t i0 = 0; i0 < m; i0 += panel) {
    const size_t rows = std::min(panel, m - i0);
    size_t j = 0;
    for (; j + kCols <= n; j += kCols)
      row_tiles<kCols, kAccumulate>(a + i0, m, rows, T, Scalars{b.s + j * b.col, b.step, b.col}, y + j * m + i0, m);
    if (j < n)
      row_tiles_upto<kCols - 1, kAccumulate>(n - j, a + i0, m, rows, T, Scalars{b.s + j * b.col, b.step, b.col},
                                                y + j * m + i0, m);
  }
}


// ---------------------------------------------------------------- tall product
// y (m x n) (+)= W x for a weight beyond the caches (a language model's softmax
// over its vocabulary) and few columns.  Strip after strip of kRows vectors of
// rows, every block of columns in turn, so that W is read from memory once and
// a strip stays in the L1/L2 while its blocks pass over it; nothing is packed.
// Each strip's columns lie m floats apart, one line or two per page, which the
// hardware prefetchers do not follow: the tiles fetch the strip kFetchStrips
// ahead themselves, spreading its lines over the strip's blocks of columns.
constexpr size_t kFetchStrips = 3;

// A tile of kRows vectors fetching ahead, not inlined (see nopack_product).
template <int C, bool kAccumulate>
__attribute__((noinline)) void fetching_tile(const float* a, size_t lda, size_t T, Scalars b, float* y, size_t ldy,
                                             const float* ahead, unsigned lines) {
  tile<Lanes, kRows, C, kAccumulate, true>(a, lda, T, b, y, ldy, ahead, lines);
}

template <int C, bool kAccumulate>
void fetching_tile_upto(size_t cols, const float* a, size_t lda, size_t T, Scalars b, float* y, size_t ldy,
                        const float* ahead, unsigned lines) {
  if constexpr (C > 1) {
    if (cols < C) return fetching_tile_upto<C - 1, kAccumulate>(cols, a, lda, T, b, y, ldy, ahead, lines);
  }
  fetching_tile<C, kAccumulate>(a, lda, T, b, y, ldy, ahead, lines);
}

template <bool kAccumulate>
void tall_product(const float* w, size_t m, size_t k, const float* x, size_t n, float* y) {
  constexpr size_t kStrip = kRows * kLanes;
  constexpr int kStripLines = kLinesOf<Lanes, kRows>;
  const size_t blocks = (n + kCols - 1) / kCols;
  // Block jb of every strip fetches the lines l with l % blocks == jb: each line once.
  unsigned lines[kStripLines] = {};
  for (int l = 0; l < kStripLines; ++l) lines[static_cast<size_t>(l) % blocks] |= 1u << l;
  const size_t whole = m / kStrip * kStrip;
  for (size_t i = 0; i < whole; i += kStrip) {
    // The strip kFetchStrips ahead, or this one again near the end.
    const float* ahead = w + (i + (kFetchStrips + 1) * kStrip <= whole ? i + kFetchStrips * kStrip : i);
    for (size_t jb = 0; jb < blocks; ++jb) {
      const size_t j = jb * kCols;
      fetching_tile_upto<kCols, kAccumulate>(n - j, w + i, m, k, Scalars{x + j * k, 1, k}, y + j * m + i, m, ahead,
                                             jb < kStripLines ? lines[jb] : 0u);
    }
  }
  if (whole < m)  // the last rows, fewer than a strip
    for (size_t j = 0; j < n; j += kCols)
      row_tiles_upto<kCols, kAccumulate>(n - j, w + whole, m, m - whole, k, Scalars{x + j * k, 1, k}, y + j * m + whole,
                                         m);
}

// ---------------------------------------------------------------- packed product
// C (m x n, ldc) (+)= A (m x depth) * B (depth x n) for operands too large for the
// caches as they lie (a softmax weight of a few MB, or its transpose).  Streaming
// such an A as it lies costs a TLB look-up per column and defeats the prefetchers,
// and its tiles of C miss the cache; here, as in GotoBLAS and BLIS, blocks of A
// (kPackRows x kPackDepth, in L2) and of B (kPackDepth x all columns) are first
// copied into micro-panels that the register tiles read contiguously.
// A's element (i, t) is at a[i * a_row + t * a_col], B's (t, j) at b[t * b_row + j * b_col].
constexpr size_t kMR = kRows * kLanes, kNR = kCols;
// A block's rows are a whole number of micro-panels, so that no panel is a
// partial edge computed in full and copied out.
constexpr size_t kPackDepth = 256, kPackRows = (128 + kMR - 1) / kMR * kMR, kPackCols = 2048;

struct Strided {
  const float* p;
  size_t row, col;
  float at(size_t i, size_t j) const { return p[i * row + j * col]; }
};

#if defined(__AVX__)
// dst[j * ld_dst + q] = src[q * ld_src + j] for q, j in [0, 8).
inline void transpose8x8(const float* src, size_t ld_src, float* dst, size_t ld_dst) {
  __m256 r[8], t[8];
  for (int q = 0; q < 8; ++q) r[q] = _mm256_loadu_ps(src + q * ld_src);
  for (int q = 0; q < 8; q += 2) {
    t[q] = _mm256_unpacklo_ps(r[q], r[q + 1]);
    t[q + 1] = _mm256_unpackhi_ps(r[q], r[q + 1]);
  }
  for (int q = 0; q < 8; q += 4) {
    r[q] = _mm256_shuffle_ps(t[q], t[q + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[q + 1] = _mm256_shuffle_ps(t[q], t[q + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[q + 2] = _mm256_shuffle_ps(t[q + 1], t[q + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[q + 3] = _mm256_shuffle_ps(t[q + 1], t[q + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int q = 0; q < 4; ++q) {
    _mm256_storeu_ps(dst + q * ld_dst, _mm256_permute2f128_ps(r[q], r[q + 4], 0x20));
    _mm256_storeu_ps(dst + (q + 4) * ld_dst, _mm256_permute2f128_ps(r[q], r[q + 4], 0x31));
  }
}
#endif

// Micro-panels of kMR rows: panel r holds rows [r * kMR, r * kMR + kMR) of the
// block, depth-major (kMR floats per step), the rows past the block zero.
void pack_rows(Strided a, size_t i0, size_t rows, size_t t0, size_t depth, float* out) {
  for (size_t r0 = 0; r0 < rows; r0 += kMR, out += kMR * depth) {
    const size_t nr = std::min(kMR, rows - r0);
    if (a.row == 1) {  // a column of A is contiguous: copy kMR floats a step
      const float* src = a.p + (i0 + r0) + t0 * a.col;
      if (nr == kMR) {
        for (size_t t = 0; t < depth; ++t) std::memcpy(out + t * kMR, src + t * a.col, kMR * sizeof(float));
      } else {
        for (size_t t = 0; t < depth; ++t) {
          float* dst = out + t * kMR;
          std::memcpy(dst, src + t * a.col, nr * sizeof(float));
          std::memset(dst + nr, 0, (kMR - nr) * sizeof(float));
        }
      }
    } else {  // a row of A is contiguous (A is a transpose): walk each row
      size_t r = 0;
#if defined(__AVX__)
      if (a.col == 1)  // blocks of 8 rows x 8 steps, transposed in registers
        for (; r + 8 <= nr; r += 8) {
          const float* src = a.p + (i0 + r0 + r) * a.row + t0;
          size_t t = 0;
          for (; t + 8 <= depth; t += 8) transpose8x8(src + t, a.row, out + t * kMR + r, kMR);
          for (; t < depth; ++t)
            for (size_t q = 0; q < 8; ++q) out[t * kMR + r + q] = src[q * a.row + t];
        }
#endif
      for (; r < kMR; ++r) {
        float* dst = out + r;
        if (r < nr) {
          const float* src = a.p + (i0 + r0 + r) * a.row + t0 * a.col;
          for (size_t t = 0; t < depth; ++t) dst[t * kMR] = src[t * a.col];
        } else {
          for (size_t t = 0; t < depth; ++t) dst[t * kMR] = 0.f;
        }
      }
    }
  }
}

// Micro-panels of kNR columns of B, depth-major, the columns past n zero.
void pack_cols(Strided b, size_t t0, size_t depth, size_t n, float* out) {
  for (size_t j0 = 0; j0 < n; j0 += kNR, out += kNR * depth) {
    const size_t nc = std::min(kNR, n - j0);
    size_t t = 0;
    // Whole panels from the two layouts the products pass, a vector at a time
    // (element by element through b.at(), B = dy of a softmax's dx += W^T dy took
    // a tenth of that product).
    if (nc == kNR && b.col == 1) {  // a row of B is contiguous (B = x^T of dW += dy x^T)
      const float* src = b.p + t0 * b.row + j0;
      for (; t < depth; ++t) std::memcpy(out + t * kNR, src + t * b.row, kNR * sizeof(float));
    }
#if defined(__AVX__)
    if constexpr (kNR == 8) {
      if (nc == kNR && b.row == 1)  // a column of B is contiguous: 8 steps x 8 columns transposed in registers
        for (; t + 8 <= depth; t += 8) transpose8x8(b.p + (t0 + t) + j0 * b.col, b.col, out + t * kNR, kNR);
    }
#endif
    for (; t < depth; ++t) {
      float* dst = out + t * kNR;
      size_t c = 0;
      for (; c < nc; ++c) dst[c] = b.at(t0 + t, j0 + c);
      for (; c < kNR; ++c) dst[c] = 0.f;
    }
  }
}

// Buffers kept from call to call (per thread): no allocation once grown.
float* pack_buffer(std::vector<float>& buf, size_t floats) {
  if (buf.size() < floats) buf.resize(floats);
  return buf.data();
}

void packed_block(Strided a, Strided b, float* c, size_t ldc, size_t m, size_t n, size_t depth, bool accumulate) {
  thread_local std::vector<float> a_buf, b_buf;
  const size_t n_panels = (n + kNR - 1) / kNR;
  float* bp = pack_buffer(b_buf, n_panels * kNR * kPackDepth);
  float* ap = pack_buffer(a_buf, (kPackRows + kMR) * kPackDepth);
  alignas(64) float edge[kMR * kNR];
  for (size_t t0 = 0; t0 < depth; t0 += kPackDepth) {
    const size_t kc = std::min(kPackDepth, depth - t0);
    const bool add = accumulate || t0 > 0;
    pack_cols(b, t0, kc, n, bp);
    for (size_t i0 = 0; i0 < m; i0 += kPackRows) {
      const size_t mc = std::min(kPackRows, m - i0);
      pack_rows(a, i0, mc, t0, kc, ap);
      for (size_t jp = 0; jp < n_panels; ++jp) {
        const size_t j0 = jp * kNR, nc = std::min(kNR, n - j0);
        const Scalars bs{bp + jp * kNR * kc, kNR, 1};
        for (size_t r0 = 0; r0 < mc; r0 += kMR) {
          const float* apanel = ap + (r0 / kMR) * kMR * kc;
          float* cp = c + (i0 + r0) + j0 * ldc;
          const size_t nr = std::min(kMR, mc - r0);
          if (nr == kMR && nc == kNR) {
            if (add)
              tile<Lanes, kRows, kCols, true>(apanel, kMR, kc, bs, cp, ldc);
            else
              tile<Lanes, kRows, kCols, false>(apanel, kMR, kc, bs, cp, ldc);
          } else {  // an edge: the whole tile into `edge`, then its valid part
            tile<Lanes, kRows, kCols, false>(apanel, kMR, kc, bs, edge, kMR);
            for (size_t j = 0; j < nc; ++j)
              for (size_t i = 0; i < nr; ++i) cp[j * ldc + i] = (add ? cp[j * ldc + i] : 0.f) + edge[j * kMR + i];
          }
        }
      }
    }
  }
}

// Blocks of columns bound the packed copy of B (kPackCols x kPackDepth floats).
void packed_product(Strided a, Strided b, float* c, size_t ldc, size_t m, size_t n, size_t depth, bool accumulate) {
  for (size_t j0 = 0; j0 < n; j0 += kPackCols)
    packed_block(a, Strided{b.p + j0 * b.col, b.row, b.col}, c + j0 * ldc, ldc, m, std::min(kPackCols, n - j0), depth,
                 accumulate);
}

// The packed product pays for its copies from a weight (W, or dW for gemm_nt) of
// this many floats and this many columns on: below, the no-pack tiles win.  Where
// the cut lies depends on the core (bench/gemm_shapes measures both sides of it):
//  - AVX2 (the 2 x 6 tiles, 512 KB of L2): packing pays from 48K floats (192 KB);
//  - AVX-512 (the 3 x 8 tiles, 1 MB of L2): the tiles stream W from the L2
//    faster than the packed product copies it, so the cut is the whole L2.
// gemm_tn keeps the small cut on both: its unpacked path (Eigen's panels) is the
// slower one there.
constexpr size_t kPackedOperand = size_t(48) << 10, kPackedMinCols = 32;
size_t packed_weight_floats() {
#if defined(__AVX512F__) && defined(_SC_LEVEL2_CACHE_SIZE)
  static const size_t floats = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? std::max(kPackedOperand, static_cast<size_t>(l2) / sizeof(float)) : kPackedOperand;
  }();
  return floats;
#else
  return kPackedOperand;
#endif
}
inline bool packing_pays(size_t a_floats, size_t n, size_t cut) { return n >= kPackedMinCols && a_floats >= cut; }

// ---------------------------------------------------------------- entry points
// The large products of this compile; detail::gemm_large and its siblings call
// these directly in a per-instruction-set compile, and through the chosen set's
// table (isa.h) in the baseline one.

// A weight beyond the caches in a product of kWholeProduct multiply-adds or
// more: the GEMM library's blocking (library_gemm in gemm.h), where there is one.
inline bool for_library(size_t weight_floats, size_t m, size_t k, size_t n) {
  return n > 1 && weight_floats > kLargeOperand && m * k * n >= kWholeProduct;
}
// Such a weight times at most this many columns stays with our kernels: y = W x
// in the tall product, dW = dy x^T when assigned (a gradient written straight
// into a parameter's zero one) in the no-pack tiles, dx += W^T dy in the packed
// product or Eigen's.  On those shapes they run within a few percent of the
// library or faster (6024 x 256, bench/gemm_libraries), and a program whose
// products all stay here (a language model trained sentence by sentence)
// never maps the library, which costs about 9 MB of resident memory (its code,
// its OpenMP runtime and its buffers).
constexpr size_t kOwnColumns = 96;
inline bool for_library_wide(size_t weight_floats, size_t m, size_t k, size_t n) {
  return n > kOwnColumns && for_library(weight_floats, m, k, n);
}

// Matrix-vector products whose weight lies in the L2 read it in one stream
// (column-exact section below).  Smaller weights stay with Eigen, whose
// product keeps y in registers; larger ones come from the L3 or memory, where
// Eigen's several streams at once are as fast or faster.
void column_product_streamed(const float* w, size_t m, size_t k, const float* x, float* y, bool accumulate);
void column_dots_streamed(const float* w, size_t m, size_t k, const float* dy, float* dx, size_t n);
constexpr size_t kStreamedRows = 384, kStreamedMinFloats = size_t(32) << 10, kStreamedMaxFloats = size_t(1) << 20;
constexpr size_t kDotsMinRows = 64, kDotsMinFloats = size_t(8) << 10;
// Columns of dy up to which W^T dy streams: all shapes below kDotsFewCols,
// from kDotsLongRows rows up to the packed product's cut (kPackedMinCols).
constexpr size_t kDotsFewCols = 12, kDotsLongRows = 256;
inline bool streamed_product_pays(size_t m, size_t k) {
  return m >= kStreamedRows && m * k >= kStreamedMinFloats && m * k <= kStreamedMaxFloats;
}
inline bool streamed_dots_pay(size_t m, size_t k, size_t n) {
  return m >= kDotsMinRows && m * k >= kDotsMinFloats && m * k <= kStreamedMaxFloats &&
         (n < kDotsFewCols || (m >= kDotsLongRows && n < kPackedMinCols));
}

void gemm_large_here(const float* w, const float* x, float* y, size_t m, size_t k, size_t n, bool accumulate) {
  if (n == 1) {  // a matrix-vector product: Eigen packs nothing
    if (streamed_product_pays(m, k)) return column_product_streamed(w, m, k, x, y, accumulate);
    if (accumulate)
      Vec(y, m).noalias() += block(w, m, 0, 0, m, k) * ConstVec(x, k);
    else
      Vec(y, m).noalias() = block(w, m, 0, 0, m, k) * ConstVec(x, k);
    return;
  }
  if (for_library(m * k, m, k, n)) {
    if (n <= kOwnColumns) {
      if (accumulate)
        tall_product<true>(w, m, k, x, n, y);
      else
        tall_product<false>(w, m, k, x, n, y);
      return;
    }
    if (detail::library_gemm(false, false, m, n, k, w, m, x, k, accumulate ? 1.f : 0.f, y, m)) return;
  }
  if (packing_pays(m * k, n, packed_weight_floats())) {
    packed_product(Strided{w, 1, m}, Strided{x, 1, k}, y, m, m, n, k, accumulate);
    return;
  }
  if (m * k > kLargeOperand && m * k * n >= kWholeProduct) {
    if (accumulate)
      block(y, m, 0, 0, m, n).noalias() += block(w, m, 0, 0, m, k) * block(x, k, 0, 0, k, n);
    else
      block(y, m, 0, 0, m, n).noalias() = block(w, m, 0, 0, m, k) * block(x, k, 0, 0, k, n);
    return;
  }
  if (accumulate)
    nopack_product<true>(w, m, k, Scalars{x, 1, k}, n, y);
  else
    nopack_product<false>(w, m, k, Scalars{x, 1, k}, n, y);
}

void gemm_tn_large_here(const float* w, const float* dy, float* dx, size_t m, size_t k, size_t n) {
  if (streamed_dots_pay(m, k, n)) return column_dots_streamed(w, m, k, dy, dx, n);
  if (n == 1) {
    Vec(dx, k).noalias() += block(w, m, 0, 0, m, k).transpose() * ConstVec(dy, m);
    return;
  }
  if (for_library_wide(m * k, m, k, n) && detail::library_gemm(true, false, k, n, m, w, m, dy, m, 1.f, dx, k))
    return;
  if (packing_pays(m * k, n, kPackedOperand)) {  // A = W^T, read along W's columns
    packed_product(Strided{w, m, 1}, Strided{dy, 1, m}, dx, k, k, n, m, true);
    return;
  }
  if (m * k * n >= kWholeProduct) {
    block(dx, k, 0, 0, k, n).noalias() += block(w, m, 0, 0, m, k).transpose() * block(dy, m, 0, 0, m, n);
    return;
  }
  for (size_t c0 = 0; c0 < n; c0 += kPanelCols)
    for (size_t t0 = 0; t0 < k; t0 += kPanelRows)
      for (size_t i0 = 0; i0 < m; i0 += kPanelDepth) {
        const size_t nc = panel(c0, kPanelCols, n), kr = panel(t0, kPanelRows, k), md = panel(i0, kPanelDepth, m);
        block(dx, k, t0, c0, kr, nc).noalias() +=
            block(w, m, i0, t0, md, kr).transpose() * block(dy, m, i0, c0, md, nc);
      }
}

// assign: dW = dy x^T, without reading dW (zeroed first where a path adds).
void gemm_nt_large_here(const float* dy, const float* x, float* dw, size_t m, size_t k, size_t n, bool assign) {
  if (n == 1) {
    if (assign) std::memset(dw, 0, m * k * sizeof(float));
    rank1_update(dy, x, dw, m, k);
    return;
  }
  if (for_library(m * k, m, k, n)) {
    // Assigned, dW is written without being read (B(t, p) = x[t * k + p]): as
    // fast as the library there, which needs it zeroed first.  Added into, the
    // library's blocking is faster on few columns (bench/gemm_libraries).
    if (assign && n <= kOwnColumns) return nopack_product<false>(dy, m, n, Scalars{x, k, 1}, k, dw);
    if (detail::library_gemm(false, true, m, k, n, dy, m, x, k, assign ? 0.f : 1.f, dw, m)) return;
  }
  if (packing_pays(m * k, n, packed_weight_floats())) {  // A = dy, B = x^T
    packed_product(Strided{dy, 1, m}, Strided{x, k, 1}, dw, m, m, k, n, !assign);
    return;
  }
  // Shallow, or a dy too large for the caches: Eigen.
  if (n < kShallowDepth || (m * n > kLargeOperand && m * k * n >= kWholeProduct)) {
    if (assign)
      block(dw, m, 0, 0, m, k).noalias() = block(dy, m, 0, 0, m, n) * block(x, k, 0, 0, k, n).transpose();
    else
      block(dw, m, 0, 0, m, k).noalias() += block(dy, m, 0, 0, m, n) * block(x, k, 0, 0, k, n).transpose();
    return;
  }
  for (size_t t0 = 0; t0 < n; t0 += kDepthSlice) {
    const Scalars xs{x + t0 * k, k, 1};
    if (assign && t0 == 0)
      nopack_product<false>(dy, m, std::min(kDepthSlice, n), xs, k, dw);
    else
      nopack_product<true>(dy + t0 * m, m, std::min(kDepthSlice, n - t0), xs, k, dw);
  }
}

// ---------------------------------------------------------------- column-exact products
// Products whose column c of the result is the same to the bit whatever the
// number of columns: each element is one multiply-add chain in a fixed order
// (nopack_product splits its rows and depth by m and the depth alone), so a
// product computed for many columns at once equals the columns computed one by
// one.  A compiled program relies on it to run the input products of many
// nodes as one (detail::columns_product).

inline Lanes fma_lanes(const Lanes& a, const Lanes& b, const Lanes& c) {
#if defined(__AVX512F__)
  return reinterpret_cast<Lanes>(
      _mm512_fmadd_ps(reinterpret_cast<__m512>(a), reinterpret_cast<__m512>(b), reinterpret_cast<__m512>(c)));
#elif defined(__FMA__)
  return reinterpret_cast<Lanes>(
      _mm256_fmadd_ps(reinterpret_cast<__m256>(a), reinterpret_cast<__m256>(b), reinterpret_cast<__m256>(c)));
#else
  return a * b + c;
#endif
}

// The lanes' sum, always in the same order.
inline float lane_sum(const Lanes& v) {
#if defined(__AVX512F__)
  return _mm512_reduce_add_ps(reinterpret_cast<__m512>(v));
#else
  float a[kLanes];
  std::memcpy(a, &v, sizeof v);
  for (size_t w = kLanes / 2; w > 0; w /= 2)
    for (size_t l = 0; l < w; ++l) a[l] += a[l + w];
  return a[0];
#endif
}

// The last `rows` (fewer than a vector's) floats from p, zeros after them.
inline Lanes load_tail(const float* p, size_t rows) {
#if defined(__AVX512F__)
  return reinterpret_cast<Lanes>(_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << rows) - 1), p));
#elif defined(__AVX__)
  return reinterpret_cast<Lanes>(_mm256_maskload_ps(p, first_lanes(rows)));
#else
  Lanes v{};
  std::memcpy(&v, p, rows * sizeof(float));
  return v;
#endif
}

// Stores the first `rows` (fewer than a vector's) lanes of v at p.
inline void store_tail(float* p, const Lanes& v, size_t rows) {
#if defined(__AVX512F__)
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << rows) - 1), reinterpret_cast<__m512>(v));
#elif defined(__AVX__)
  _mm256_maskstore_ps(p, first_lanes(rows), reinterpret_cast<__m256>(v));
#else
  std::memcpy(p, &v, rows * sizeof(float));
#endif
}

// y = W x for one column: R vectors of rows at a time in registers (with
// kTail, the last of them the rows past the whole vectors, zero-padded), every
// column of W streamed through them.  Each element is the chain of
// nopack_product's tiles (from zero, one multiply-add per step of the depth,
// in order), so it has the bits of a column computed with others.
template <int R, bool kTail>
inline void column_strip(const float* w, size_t m, size_t k, const float* x, float* y, size_t tail) {
  Lanes acc[R];
  for (int r = 0; r < R; ++r) acc[r] = Lanes{};
  constexpr int kWhole = kTail ? R - 1 : R;
  for (size_t t = 0; t < k; ++t) {
    const Lanes b = Lanes{} + x[t];
    const float* c = w + t * m;
    for (int r = 0; r < kWhole; ++r) acc[r] = fma_lanes(load<Lanes>(c + r * kLanes), b, acc[r]);
    if (kTail) acc[R - 1] = fma_lanes(load_tail(c + kWhole * kLanes, tail), b, acc[R - 1]);
  }
  for (int r = 0; r < kWhole; ++r) store<Lanes>(y + r * kLanes, acc[r]);
  if (kTail) store_tail(y + kWhole * kLanes, acc[R - 1], tail);
}

#if defined(__AVX512F__)
constexpr int kStrip = 16;
#else
constexpr int kStrip = 8;
#endif

// The strip of `vectors` (at most kStrip) vectors of rows.
template <int R = kStrip>
inline void column_strip_of(size_t vectors, bool tail, const float* w, size_t m, size_t k, const float* x, float* y,
                            size_t tail_rows) {
  if constexpr (R > 1) {
    if (static_cast<size_t>(R) > vectors) return column_strip_of<R - 1>(vectors, tail, w, m, k, x, y, tail_rows);
  }
  if (tail)
    column_strip<R, true>(w, m, k, x, y, tail_rows);
  else
    column_strip<R, false>(w, m, k, x, y, tail_rows);
}

// The same chains with y in memory: W's columns one after another, each
// element of y loaded, given one multiply-add and stored per column.  W is
// then read as one stream, front to back, which the core's prefetchers follow
// best: with two or four columns a pass (two or four streams) the same product
// ran 1.0-1.2x slower, and Eigen's matrix-vector product 1.2-1.4x slower, from
// 384 rows and 128 KB of weight on (AVX-512, weights in the L2: 384 x 128 1.16
// against 1.42 us, 640 x 256 3.9 against 4.8, 1024 x 128 3.1 against 4.3).
// With `accumulate` the chains start from y instead of zero.
void column_product_streamed(const float* w, size_t m, size_t k, const float* x, float* y, bool accumulate) {
  const size_t mv = m / kLanes * kLanes, tail = m % kLanes;
  if (!accumulate) std::memset(y, 0, m * sizeof(float));
  for (size_t t = 0; t < k; ++t) {
    const Lanes b = Lanes{} + x[t];
    const float* c = w + t * m;
    for (size_t i = 0; i < mv; i += kLanes) store<Lanes>(y + i, fma_lanes(load<Lanes>(c + i), b, load<Lanes>(y + i)));
    if (tail) store_tail(y + mv, fma_lanes(load_tail(c + mv, tail), b, load_tail(y + mv, tail)), tail);
  }
}

// dx += W^T dy for C columns of dy (m floats each, `ldy` apart; dx's k floats
// each `ldx` apart): dx[c][j] gets the dot product of W's column j with dy's
// column c, W's columns one after another (W read as one stream, as above,
// and each of its vectors used for the C columns), the rows of each dot
// product in R sums of a vector: four for one column, two for more, so that
// four to eight chains of multiply-adds are in flight.  (Eight sums for one
// column left 200 x 128 at 44 GFLOP/s, against 84 with four: the rows of a
// short column fill few of them.)
template <int C>
void dots_streamed(const float* w, size_t m, size_t k, const float* dy, size_t ldy, float* dx, size_t ldx) {
  constexpr int R = C >= 2 ? 2 : 4;
  const size_t step = R * kLanes, mr = m / step * step, mv = m / kLanes * kLanes, tail = m % kLanes;
  for (size_t j = 0; j < k; ++j) {
    const float* col = w + j * m;
    Lanes acc[C][R];
    for (int c = 0; c < C; ++c)
      for (int r = 0; r < R; ++r) acc[c][r] = Lanes{};
    size_t i = 0;
    for (; i < mr; i += step)
      for (int r = 0; r < R; ++r) {
        const Lanes wv = load<Lanes>(col + i + r * kLanes);
        for (int c = 0; c < C; ++c) acc[c][r] = fma_lanes(wv, load<Lanes>(dy + c * ldy + i + r * kLanes), acc[c][r]);
      }
    for (int r = 0; i < mv; i += kLanes, ++r) {
      const Lanes wv = load<Lanes>(col + i);
      for (int c = 0; c < C; ++c) acc[c][r] = fma_lanes(wv, load<Lanes>(dy + c * ldy + i), acc[c][r]);
    }
    if (tail) {
      const Lanes wv = load_tail(col + mv, tail);
      for (int c = 0; c < C; ++c) acc[c][R - 1] = fma_lanes(wv, load_tail(dy + c * ldy + mv, tail), acc[c][R - 1]);
    }
    for (int c = 0; c < C; ++c) {
      Lanes sum = acc[c][0];
      for (int r = 1; r < R; ++r) sum += acc[c][r];
      dx[c * ldx + j] += lane_sum(sum);
    }
  }
}

// dx (k x n) += W^T dy (dy m x n) through dots_streamed, four columns of dy a
// pass.  Against Eigen's product, which reads several of W's columns at once
// (AVX-512, weights in the L2): one column, 640 x 256 2.5 against 4.7 us,
// 384 x 128 0.94 against 1.32, 1024 x 128 2.0 against 3.6; at 640 x 256, two
// columns 173 against 34 GFLOP/s, four 208 against 75, sixteen 206 against
// 137.  200 x 128 from 12 columns on and weights from the L3 (6021 x 256, one
// column 0.85x) are Eigen's.
void column_dots_streamed(const float* w, size_t m, size_t k, const float* dy, float* dx, size_t n) {
  size_t c = 0;
  for (; c + 4 <= n; c += 4) dots_streamed<4>(w, m, k, dy + c * m, m, dx + c * k, k);
  for (; c + 2 <= n; c += 2) dots_streamed<2>(w, m, k, dy + c * m, m, dx + c * k, k);
  if (c < n) dots_streamed<1>(w, m, k, dy + c * m, m, dx + c * k, k);
}

// One strip of registers where the rows fit in one (each column of W read
// once, no load or store of y between columns), else y streamed through memory
// (the strips would read W's columns in pieces, slower than one stream from
// 384 rows on).  Both give each element the same chain.
void column_product(const float* w, size_t m, size_t k, const float* x, float* y) {
  const size_t vectors = (m + kLanes - 1) / kLanes, tail = m % kLanes;
  if (vectors > static_cast<size_t>(kStrip)) return column_product_streamed(w, m, k, x, y, false);
  column_strip_of(vectors, tail != 0, w, m, k, x, y, tail);
}

// Columns [j, j + J) of dx_c (+)= W^T dy_c for the C columns given: the rows
// in lanes (the last ones zero-padded), summed across.
template <int J, int C>
inline void dot_tile(const float* w, size_t m, size_t j, const float* const* dy, float* const* dx, bool accumulate) {
  const size_t mv = m / kLanes * kLanes;
  Lanes acc[J][C];
  for (int q = 0; q < J; ++q)
    for (int c = 0; c < C; ++c) acc[q][c] = Lanes{};
  for (size_t i = 0; i < mv; i += kLanes) {
    Lanes d[C];
    for (int c = 0; c < C; ++c) d[c] = load<Lanes>(dy[c] + i);
    for (int q = 0; q < J; ++q) {
      const Lanes a = load<Lanes>(w + (j + q) * m + i);
      for (int c = 0; c < C; ++c) acc[q][c] = fma_lanes(a, d[c], acc[q][c]);
    }
  }
  if (mv < m) {
    Lanes d[C];
    for (int c = 0; c < C; ++c) d[c] = load_tail(dy[c] + mv, m - mv);
    for (int q = 0; q < J; ++q) {
      const Lanes a = load_tail(w + (j + q) * m + mv, m - mv);
      for (int c = 0; c < C; ++c) acc[q][c] = fma_lanes(a, d[c], acc[q][c]);
    }
  }
  for (int q = 0; q < J; ++q)
    for (int c = 0; c < C; ++c) {
      const float s = lane_sum(acc[q][c]);
      dx[c][j + q] = accumulate ? dx[c][j + q] + s : s;
    }
}

// Columns of dy per tile of a wide W^T d: four reuse each load of W four times
// (200 x 128, 20 columns: 0.64 us a column, against 0.83 with two).
constexpr size_t kDotCols = 4;

template <int C>
void dot_columns(const float* w, size_t m, size_t k, const float* const* dy, float* const* dx, bool accumulate) {
  constexpr int J = C == 1 ? 8 : 4;  // 8 or 16 sums in registers
  size_t j = 0;
  for (; j + J <= k; j += J) dot_tile<J, C>(w, m, j, dy, dx, accumulate);
  for (; j < k; ++j) dot_tile<1, C>(w, m, j, dy, dx, accumulate);
}

}  // namespace

namespace detail {

void columns_product(const float* w, size_t m, size_t k, const float* x, size_t n, float* y) {
  product_macs += m * k * n;
  if (n == 1)
    column_product(w, m, k, x, y);
  else
    nopack_product<false>(w, m, k, Scalars{x, 1, k}, n, y);
}

void columns_product_t(const float* w, size_t m, size_t k, const float* const* dy, float* const* dx, size_t n,
                       bool accumulate) {
  product_macs += m * k * n;
  size_t c = 0;
  for (; c + kDotCols <= n; c += kDotCols) dot_columns<kDotCols>(w, m, k, dy + c, dx + c, accumulate);
  for (; c + 2 <= n; c += 2) dot_columns<2>(w, m, k, dy + c, dx + c, accumulate);
  if (c < n) dot_columns<1>(w, m, k, dy + c, dx + c, accumulate);
}

#ifdef DYNET_LITE_ISA
// The counter is the baseline compile's: one per thread, whichever set runs.
void gemm_large(const float* w, const float* x, float* y, size_t m, size_t k, size_t n, bool accumulate) {
  gemm_large_here(w, x, y, m, k, n, accumulate);
}
void gemm_tn_large(const float* w, const float* dy, float* dx, size_t m, size_t k, size_t n) {
  gemm_tn_large_here(w, dy, dx, m, k, n);
}
void gemm_nt_large(const float* dy, const float* x, float* dw, size_t m, size_t k, size_t n, bool assign) {
  gemm_nt_large_here(dy, x, dw, m, k, n, assign);
}
#else
thread_local uint64_t product_macs = 0;

void gemm_large(const float* w, const float* x, float* y, size_t m, size_t k, size_t n, bool accumulate) {
  if (const ProductKernels* wider = product_kernels(active_isa())) return wider->gemm_large(w, x, y, m, k, n, accumulate);
  gemm_large_here(w, x, y, m, k, n, accumulate);
}
void gemm_tn_large(const float* w, const float* dy, float* dx, size_t m, size_t k, size_t n) {
  if (const ProductKernels* wider = product_kernels(active_isa())) return wider->gemm_tn_large(w, dy, dx, m, k, n);
  gemm_tn_large_here(w, dy, dx, m, k, n);
}
void gemm_nt_large(const float* dy, const float* x, float* dw, size_t m, size_t k, size_t n, bool assign) {
  if (const ProductKernels* wider = product_kernels(active_isa()))
    return wider->gemm_nt_large(dy, x, dw, m, k, n, assign);
  gemm_nt_large_here(dy, x, dw, m, k, n, assign);
}
#endif

}  // namespace detail
}  // namespace cpu
}  // namespace dynet_lite

#ifdef DYNET_LITE_ISA
extern "C" const dynet_lite::cpu::ProductKernels* DYNET_LITE_ISA_ENTRY(dynet_lite_product_kernels)() {
  static const dynet_lite::cpu::ProductKernels kernels{dynet_lite::cpu::detail::gemm_large,
                                                       dynet_lite::cpu::detail::gemm_tn_large,
                                                       dynet_lite::cpu::detail::gemm_nt_large};
  return &kernels;
}
#endif
