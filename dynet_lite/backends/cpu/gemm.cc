#include "dynet_lite/backends/cpu/gemm.h"

#include <cstring>

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

// dw += dy x^T with n == 1: each block of dy stays in registers across the columns of dw.
void rank1_update(const float* dy, const float* x, float* dw, size_t m, size_t k) {
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

}  // namespace

namespace detail {

void gemm_large(const float* w, const float* x, float* y, size_t m, size_t k, size_t n, bool accumulate) {
  if (n == 1) {  // a matrix-vector product: Eigen packs nothing
    if (accumulate)
      Vec(y, m).noalias() += block(w, m, 0, 0, m, k) * ConstVec(x, k);
    else
      Vec(y, m).noalias() = block(w, m, 0, 0, m, k) * ConstVec(x, k);
    return;
  }
  if (m * k * n >= kWholeProduct) {
    if (accumulate)
      block(y, m, 0, 0, m, n).noalias() += block(w, m, 0, 0, m, k) * block(x, k, 0, 0, k, n);
    else
      block(y, m, 0, 0, m, n).noalias() = block(w, m, 0, 0, m, k) * block(x, k, 0, 0, k, n);
    return;
  }
  if (!accumulate) std::memset(y, 0, m * n * sizeof(float));
  for (size_t c0 = 0; c0 < n; c0 += kPanelCols)
    for (size_t i0 = 0; i0 < m; i0 += kPanelRows)
      for (size_t t0 = 0; t0 < k; t0 += kPanelDepth) {
        const size_t nc = panel(c0, kPanelCols, n), mr = panel(i0, kPanelRows, m), kd = panel(t0, kPanelDepth, k);
        block(y, m, i0, c0, mr, nc).noalias() += block(w, m, i0, t0, mr, kd) * block(x, k, t0, c0, kd, nc);
      }
}

void gemm_tn_large(const float* w, const float* dy, float* dx, size_t m, size_t k, size_t n) {
  if (n == 1) {
    Vec(dx, k).noalias() += block(w, m, 0, 0, m, k).transpose() * ConstVec(dy, m);
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

void gemm_nt_large(const float* dy, const float* x, float* dw, size_t m, size_t k, size_t n) {
  if (n == 1) {
    rank1_update(dy, x, dw, m, k);
    return;
  }
  if (m * k * n >= kWholeProduct) {
    block(dw, m, 0, 0, m, k).noalias() += block(dy, m, 0, 0, m, n) * block(x, k, 0, 0, k, n).transpose();
    return;
  }
  for (size_t t0 = 0; t0 < k; t0 += kPanelCols)
    for (size_t i0 = 0; i0 < m; i0 += kPanelRows)
      for (size_t c0 = 0; c0 < n; c0 += kPanelDepth) {
        const size_t kc = panel(t0, kPanelCols, k), mr = panel(i0, kPanelRows, m), nd = panel(c0, kPanelDepth, n);
        block(dw, m, i0, t0, mr, kc).noalias() += block(dy, m, i0, c0, mr, nd) * block(x, k, t0, c0, kc, nd).transpose();
      }
}

}  // namespace detail
}  // namespace cpu
}  // namespace dynet_lite
