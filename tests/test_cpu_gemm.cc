#define BOOST_TEST_MODULE cpu_gemm
// The CPU backend's three products (backends/cpu/gemm.h) against a plain triple
// loop in double precision, over shapes that reach every path: the inline small
// loops, matrix-vector products, the no-pack tiles with every remainder of rows
// (masked on AVX-512, narrower vectors or scalars elsewhere) and of columns,
// the packed product with every edge of its blocks, Eigen for shallow operands,
// the tall product and the GEMM library (or Eigen) for very large ones,
// accumulating or overwriting.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "dynet_lite/backends/cpu/gemm.h"

using dynet_lite::cpu::gemm;
using dynet_lite::cpu::gemm_nt;
using dynet_lite::cpu::gemm_tn;

namespace {

std::vector<float> random_values(size_t n, std::mt19937& gen) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

// a (r x c, column-major) element (i, j), transposed when `t`.
float at(const std::vector<float>& a, size_t rows, size_t i, size_t j, bool t) {
  return t ? a[i * rows + j] : a[j * rows + i];
}

// out (r x c) += op(a) * op(b), op(a) r x d, in double.
std::vector<double> reference(const std::vector<float>& a, size_t a_rows, bool ta, const std::vector<float>& b,
                              size_t b_rows, bool tb, size_t r, size_t d, size_t c, const std::vector<float>& start) {
  std::vector<double> out(start.begin(), start.end());
  for (size_t j = 0; j < c; ++j)
    for (size_t i = 0; i < r; ++i) {
      double s = 0;
      for (size_t t = 0; t < d; ++t) s += double(at(a, a_rows, i, t, ta)) * at(b, b_rows, t, j, tb);
      out[j * r + i] += s;
    }
  return out;
}

void check_close(const std::vector<float>& got, const std::vector<double>& want, size_t depth, const char* what,
                 size_t m, size_t k, size_t n) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  const double tol = 1e-5 * (1 + double(depth));
  for (size_t i = 0; i < got.size(); ++i)
    BOOST_REQUIRE_MESSAGE(std::fabs(got[i] - want[i]) <= tol, what << " m=" << m << " k=" << k << " n=" << n
                                                                   << " element " << i << ": " << got[i] << " vs "
                                                                   << want[i]);
}

void check_shape(size_t m, size_t k, size_t n, std::mt19937& gen) {
  const std::vector<float> w = random_values(m * k, gen), x = random_values(k * n, gen), dy = random_values(m * n, gen);
  const std::vector<float> y0 = random_values(m * n, gen), dx0 = random_values(k * n, gen),
                           dw0 = random_values(m * k, gen);
  // y = W x and y += W x
  std::vector<float> y = y0;
  gemm(w.data(), x.data(), y.data(), m, k, n, true);
  check_close(y, reference(w, m, false, x, k, false, m, k, n, y0), k, "gemm accumulate", m, k, n);
  y = y0;
  gemm(w.data(), x.data(), y.data(), m, k, n, false);
  check_close(y, reference(w, m, false, x, k, false, m, k, n, std::vector<float>(m * n, 0.f)), k, "gemm", m, k, n);
  // dx += W^T dy
  std::vector<float> dx = dx0;
  gemm_tn(w.data(), dy.data(), dx.data(), m, k, n);
  check_close(dx, reference(w, m, true, dy, m, false, k, m, n, dx0), m, "gemm_tn", m, k, n);
  // dW += dy x^T
  std::vector<float> dw = dw0;
  gemm_nt(dy.data(), x.data(), dw.data(), m, k, n);
  check_close(dw, reference(dy, m, false, x, k, true, m, n, k, dw0), n, "gemm_nt", m, k, n);
  // dW = dy x^T over whatever dW held
  dw = dw0;
  gemm_nt(dy.data(), x.data(), dw.data(), m, k, n, true);
  check_close(dw, reference(dy, m, false, x, k, true, m, n, k, std::vector<float>(m * k, 0.f)), n, "gemm_nt assign", m,
              k, n);
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_row_and_column_remainder) {
  std::mt19937 gen(7);
  // Rows 1..70 cover every remainder of 4, 8, 16 and 48-row tiles; columns 1..19
  // every remainder of 4-, 6- and 8-column blocks; depths below and above the
  // shallow-product cut of gemm_nt (12).
  for (size_t m = 1; m <= 70; ++m)
    for (size_t n : {1, 2, 3, 5, 7, 8, 9, 13, 19})
      for (size_t k : {1, 3, 16, 37}) check_shape(m, k, n, gen);
}

BOOST_AUTO_TEST_CASE(model_shapes) {
  std::mt19937 gen(11);
  // The benchmark models' products (LSTM gates, Tree-LSTM, tagger MLP), with the
  // batch sizes autobatching produces.
  const size_t shapes[][3] = {{200, 128, 64}, {200, 50, 61}, {256, 20, 33}, {256, 64, 3},  {640, 128, 100},
                              {384, 128, 9},  {17, 32, 300}, {32, 100, 70}, {5, 128, 64}, {1024, 256, 12}};
  for (const auto& s : shapes) check_shape(s[0], s[1], s[2], gen);
}

BOOST_AUTO_TEST_CASE(matrix_vector_products_on_both_sides_of_the_streamed_cuts) {
  std::mt19937 gen(17);
  // One column: W x and W^T dy read W in one stream from 384 rows (W x) or 64
  // rows and 8K floats (W^T dy) up to 2^20 floats, Eigen's product below and
  // above; every remainder of a vector of rows on each side.
  const size_t shapes[][2] = {{64, 127},  {64, 128},  {65, 128},   {63, 200},   {383, 128}, {384, 85},
                              {384, 86},  {385, 128}, {399, 256},  {640, 256},  {1031, 7},  {1024, 1024},
                              {1025, 1024}, {200, 50}, {6021, 256}};
  for (const auto& s : shapes) check_shape(s[0], s[1], 1, gen);
  // W^T dy on a few columns: four, two and one a pass, below 12 columns on
  // any rows, up to the packed product's 32 on 256 rows or more.
  for (size_t n : {2, 3, 5, 7, 11, 12, 13, 31, 32}) {
    check_shape(640, 256, n, gen);
    check_shape(200, 128, n, gen);
    check_shape(256, 33, n, gen);
  }
}

BOOST_AUTO_TEST_CASE(deep_products_without_packing) {
  std::mt19937 gen(13);
  // y = W x with depths of 511 to 700 and weights small enough for the no-pack
  // tiles, with every column remainder (gemm_tn and gemm_nt get the same shapes).
  for (size_t k : {511, 512, 513, 700})
    for (size_t m : {23, 40})
      for (size_t n : {2, 6, 7, 13}) check_shape(m, k, n, gen);
}

BOOST_AUTO_TEST_CASE(deep_gemm_nt_runs_in_slices) {
  std::mt19937 gen(19);
  // gemm_nt over more than 256 columns of dy runs in slices of 256: one slice
  // and a remainder, several whole slices, and one column past a slice.
  check_shape(200, 50, 300, gen);
  check_shape(40, 64, 768, gen);
  check_shape(17, 20, 513, gen);
}

BOOST_AUTO_TEST_CASE(large_operands_with_few_columns_stay_with_our_tiles) {
  std::mt19937 gen(13);
  // A weight of more than 2^20 floats and 2^23 multiply-adds with at most 96
  // columns: the tall product (strips of rows, each fetched ahead) for W x, the
  // no-pack tiles for dW assigned (the library or Eigen for dW added), the
  // packed product or Eigen for W^T dy.  Rows that leave a partial strip, every
  // remainder of a block of columns, and the last column count before the
  // library.
  check_shape(4100, 260, 9, gen);
  check_shape(4099, 257, 33, gen);
  for (size_t n : {5, 16, 22, 47}) check_shape(4113, 256, n, gen);
  check_shape(4096, 257, 96, gen);
}

BOOST_AUTO_TEST_CASE(large_operands_with_many_columns_take_the_librarys_path) {
  std::mt19937 gen(23);
  // The same weights from 97 columns: the GEMM library (oneDNN, row-major,
  // called with the operands swapped) where the build has it, Eigen's blocked
  // product or the packed one otherwise.
  check_shape(4100, 260, 97, gen);
  check_shape(4099, 257, 130, gen);
}

#ifdef DYNET_LITE_EXPECT_GEMM_LIBRARY
BOOST_AUTO_TEST_CASE(gemm_library_loads_on_first_use) {
  // oneDNN is loaded when the first product needs it; C = A B + C with A 3x2,
  // B 2x2 (column-major) through it.
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[4] = {1, 0, 1, 1};
  float c[6] = {1, 1, 1, 1, 1, 1};
  BOOST_REQUIRE(dynet_lite::cpu::detail::library_gemm(false, false, 3, 2, 2, a, 3, b, 2, 1.f, c, 3));
  const float want[6] = {2, 3, 4, 6, 8, 10};
  for (int i = 0; i < 6; ++i) BOOST_CHECK_EQUAL(c[i], want[i]);
}
#endif

BOOST_AUTO_TEST_CASE(packed_products_every_block_edge) {
  std::mt19937 gen(17);
  // Weights of 48K floats and more with 32 columns and more are packed.  Rows not
  // a multiple of the register tile, a depth over one packed block (256) and not
  // a multiple of 8 (the transposing copy's blocks), columns not a multiple of the
  // tile and, in the second shape, more than one block of columns (2048).
  check_shape(250, 300, 40, gen);
  check_shape(301, 250, 33, gen);
  check_shape(100, 490, 2060, gen);
  // AVX-512 builds pack only weights larger than the L2 cache (up to 2 MB here):
  // the same edges past that size.
  check_shape(1000, 700, 33, gen);
  check_shape(730, 760, 2049, gen);
}

// The column-exact products: each column the same bits whether computed alone or
// with others, over every remainder of rows, columns and depth, and close to the
// reference; the transposed one assigning or adding.
BOOST_AUTO_TEST_CASE(column_exact_products_give_each_column_alone_bits) {
  using dynet_lite::cpu::detail::columns_product;
  using dynet_lite::cpu::detail::columns_product_t;
  std::mt19937 gen(3);
  for (size_t m : {1, 7, 16, 50, 200, 243})
    for (size_t k : {1, 5, 17, 128})
      for (size_t n : {1, 2, 3, 9}) {
        const std::vector<float> w = random_values(m * k, gen), x = random_values(k * n, gen),
                                 dy = random_values(m * n, gen), start = random_values(k * n, gen);
        std::vector<float> y(m * n), y1(m);
        columns_product(w.data(), m, k, x.data(), n, y.data());
        const std::vector<double> ref = reference(w, m, false, x, k, false, m, k, n, std::vector<float>(m * n, 0.f));
        for (size_t c = 0; c < n; ++c) {
          columns_product(w.data(), m, k, x.data() + c * k, 1, y1.data());
          for (size_t i = 0; i < m; ++i) {
            BOOST_REQUIRE_EQUAL(y[c * m + i], y1[i]);
            BOOST_REQUIRE_SMALL(y[c * m + i] - ref[c * m + i], 1e-4 * (1.0 + std::sqrt(double(k))));
          }
        }
        for (bool accumulate : {false, true}) {
          std::vector<float> dx = start, dx1 = start;
          std::vector<const float*> ds;
          std::vector<float*> dxs;
          for (size_t c = 0; c < n; ++c) ds.push_back(dy.data() + c * m), dxs.push_back(dx.data() + c * k);
          columns_product_t(w.data(), m, k, ds.data(), dxs.data(), n, accumulate);
          const std::vector<double> ref_t =
              reference(w, m, true, dy, m, false, k, m, n, accumulate ? start : std::vector<float>(k * n, 0.f));
          for (size_t c = 0; c < n; ++c) {
            const float* d = dy.data() + c * m;
            float* out = dx1.data() + c * k;
            columns_product_t(w.data(), m, k, &d, &out, 1, accumulate);
            for (size_t j = 0; j < k; ++j) {
              BOOST_REQUIRE_EQUAL(dx[c * k + j], dx1[c * k + j]);
              BOOST_REQUIRE_SMALL(dx[c * k + j] - ref_t[c * k + j], 1e-4 * (1.0 + std::sqrt(double(m))));
            }
          }
        }
      }
}
