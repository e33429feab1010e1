// Convolutions and pooling: conv2d, maxpooling2d, filter1d_narrow, circ_conv,
// circ_corr.
//
// Layout (DyNet's): images are {H, W, C} X N, column-major, so element (h, w, c)
// of batch element n is at v[n * H*W*C + c * H*W + w * H + h].  Filters are
// {FH, FW, Ci, Co}.  conv2d is a cross-correlation (the filter is not flipped),
// as in DyNet and TensorFlow.  "same" padding puts the odd padded row/column at
// the bottom/right, as TensorFlow does.
//
// Every kernel treats batch elements independently and broadcasts an argument
// with a batch of 1, so they all batch as Elementwise.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "dynet_lite/backends/cpu/eigen.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

using cpu::MatMap;
using ConstMatMap = Eigen::Map<const Eigen::MatrixXf>;

// ---------------------------------------------------------------- window geometry

struct Window2DParams {
  unsigned stride[2];
  unsigned ksize[2];  // maxpooling2d's window (conv2d reads its filter's size)
  bool is_valid;
  unsigned char unused[3];  // no padding: parameters are compared byte by byte
};

// Output size and leading padding of one spatial dimension.
//   valid: out = ceil((in - k + 1) / s), no padding
//   same:  out = ceil(in / s), padding (out - 1) s + k - in split with the smaller
//          half first (top / left)
struct Axis {
  unsigned out;
  int pad;  // rows/columns of padding before the first input row/column
};
inline Axis axis_geometry(unsigned in, unsigned k, unsigned s, bool valid) {
  Axis a;
  if (valid) {
    a.out = (in - k + 1 + s - 1) / s;  // callers ensured in >= k
    a.pad = 0;
  } else {
    a.out = (in + s - 1) / s;
    long total = static_cast<long>(a.out - 1) * s + k - in;
    a.pad = total > 0 ? static_cast<int>(total / 2) : 0;
  }
  return a;
}

std::string dims_string(const std::vector<unsigned>& v) {
  std::string s = "{";
  for (size_t j = 0; j < v.size(); ++j) s += (j ? "," : "") + std::to_string(v[j]);
  return s + "}";
}

// ---------------------------------------------------------------- conv2d

// Geometry of one conv2d node, derived from the argument shapes and params.
struct ConvGeom {
  unsigned H, W, Ci, FH, FW, Co, OH, OW;
  int pad_h, pad_w;
  unsigned sh, sw;
  size_t positions() const { return size_t(OH) * OW; }   // output pixels per channel
  size_t patch() const { return size_t(FH) * FW * Ci; }  // filter taps per output channel
};

ConvGeom conv_geom(const Dim& x, const Dim& f, const Window2DParams& p) {
  ConvGeom g;
  g.H = x[0];
  g.W = x[1];
  g.Ci = x[2];
  g.FH = f[0];
  g.FW = f[1];
  g.Co = f[3];
  g.sh = p.stride[0];
  g.sw = p.stride[1];
  Axis ah = axis_geometry(g.H, g.FH, g.sh, p.is_valid);
  Axis aw = axis_geometry(g.W, g.FW, g.sw, p.is_valid);
  g.OH = ah.out;
  g.OW = aw.out;
  g.pad_h = ah.pad;
  g.pad_w = aw.pad;
  return g;
}

Dim conv2d_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 2 || n == 3, "conv2d: takes x, f and optionally b, got " << n << " arguments");
  const Window2DParams& p = node.p<Window2DParams>();
  const Dim& x = xs[0]->d;
  const Dim& f = xs[1]->d;
  DYNET_LITE_DIM_CHECK(x.nd >= 2 && x.nd <= 3, "conv2d: x " << x << " must be an image {H, W, Ci}");
  DYNET_LITE_DIM_CHECK(f.nd >= 2 && f.nd <= 4, "conv2d: f " << f << " must be filters {FH, FW, Ci, Co}");
  DYNET_LITE_DIM_CHECK(f[2] == x[2],
                       "conv2d: f " << f << " has " << f[2] << " input channels but x " << x << " has " << x[2]);
  DYNET_LITE_DIM_CHECK(x.size() > 0 && f.size() > 0, "conv2d: x " << x << " and f " << f << " must not be empty");
  DYNET_LITE_DIM_CHECK(!p.is_valid || (x[0] >= f[0] && x[1] >= f[1]), "conv2d: with valid padding the filter f "
                                                                          << f << " ({" << f[0] << "," << f[1]
                                                                          << "}) must fit inside x " << x << " ({"
                                                                          << x[0] << "," << x[1] << "})");
  DYNET_LITE_DIM_CHECK(x.bd == f.bd || x.bd == 1 || f.bd == 1,
                       "conv2d: x " << x << " and f " << f << " have batch sizes " << x.bd << " and " << f.bd
                                    << " (they must be equal or one of them 1)");
  unsigned bd = std::max(x.bd, f.bd);
  if (n == 3) {
    const Dim& b = xs[2]->d;
    DYNET_LITE_DIM_CHECK(b.nd == 1 && b[0] == f[3], "conv2d: bias b " << b << " must be {" << f[3]
                                                                      << "}, one value per output channel of f " << f);
    DYNET_LITE_DIM_CHECK(b.bd == bd || b.bd == 1 || bd == 1, "conv2d: bias b " << b << " has batch size " << b.bd
                                                                               << " but x " << x << " and f " << f
                                                                               << " give " << bd);
    bd = std::max(bd, b.bd);
  }
  ConvGeom g = conv_geom(x, f, p);
  return Dim({g.OH, g.OW, g.Co}, bd);
}

// im2col, transposed: cols is positions() x patch(), column q = (fh, fw, ci) in
// the filter's own order, row = output pixel (oh, ow).  Padding reads as 0.
void image_to_columns(const float* x, const ConvGeom& g, float* cols) {
  const size_t P = g.positions();
  for (unsigned ci = 0; ci < g.Ci; ++ci)
    for (unsigned fw = 0; fw < g.FW; ++fw)
      for (unsigned fh = 0; fh < g.FH; ++fh) {
        float* col = cols + (size_t(ci) * g.FW * g.FH + size_t(fw) * g.FH + fh) * P;
        const float* xc = x + size_t(ci) * g.H * g.W;
        for (unsigned ow = 0; ow < g.OW; ++ow) {
          float* out = col + size_t(ow) * g.OH;
          long w = long(ow) * g.sw + fw - g.pad_w;
          if (w < 0 || w >= long(g.W)) {
            std::fill(out, out + g.OH, 0.f);
            continue;
          }
          const float* xw = xc + size_t(w) * g.H;
          for (unsigned oh = 0; oh < g.OH; ++oh) {
            long h = long(oh) * g.sh + fh - g.pad_h;
            out[oh] = (h >= 0 && h < long(g.H)) ? xw[h] : 0.f;
          }
        }
      }
}

// The adjoint of image_to_columns: dx += the columns scattered back.
void columns_to_image_add(const float* cols, const ConvGeom& g, float* dx) {
  const size_t P = g.positions();
  for (unsigned ci = 0; ci < g.Ci; ++ci)
    for (unsigned fw = 0; fw < g.FW; ++fw)
      for (unsigned fh = 0; fh < g.FH; ++fh) {
        const float* col = cols + (size_t(ci) * g.FW * g.FH + size_t(fw) * g.FH + fh) * P;
        float* dc = dx + size_t(ci) * g.H * g.W;
        for (unsigned ow = 0; ow < g.OW; ++ow) {
          long w = long(ow) * g.sw + fw - g.pad_w;
          if (w < 0 || w >= long(g.W)) continue;
          const float* in = col + size_t(ow) * g.OH;
          float* dw = dc + size_t(w) * g.H;
          for (unsigned oh = 0; oh < g.OH; ++oh) {
            long h = long(oh) * g.sh + fh - g.pad_h;
            if (h >= 0 && h < long(g.H)) dw[h] += in[oh];
          }
        }
      }
}

// y_n = cols(x_n) * F  (+ b broadcast over pixels), with F the filters seen as a
// patch() x Co matrix and y_n a positions() x Co matrix.
void conv2d_forward(const Tensor* const* xs, unsigned n, Node& node, ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const Tensor& f = *xs[1];
  Tensor& y = node.value;
  const ConvGeom g = conv_geom(x.d, f.d, node.p<Window2DParams>());
  const size_t P = g.positions(), K = g.patch();
  float* cols = ctx.scratch_floats(P * K);
  const float* prev_x = nullptr;
  for (unsigned b = 0; b < y.d.bd; ++b) {
    const float* xb = x.batch_ptr(b);
    if (xb != prev_x) image_to_columns(xb, g, cols);  // a broadcast x is unfolded once
    prev_x = xb;
    MatMap yb(y.batch_ptr(b), P, g.Co);
    yb.noalias() = ConstMatMap(cols, P, K) * ConstMatMap(f.batch_ptr(b), K, g.Co);
    if (n == 3) yb.rowwise() += cpu::batch_vec(*xs[2], b).transpose();
  }
}

// dF += cols(x_n)^T dy_n;  dcols = dy_n F^T, dx_n += col2im(dcols);  db += sum over pixels of dy_n
void conv2d_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned i, Tensor& dx,
                     ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const Tensor& f = *xs[1];
  const ConvGeom g = conv_geom(x.d, f.d, node.p<Window2DParams>());
  const size_t P = g.positions(), K = g.patch();
  if (i == 2) {
    for (unsigned b = 0; b < dy.d.bd; ++b)
      cpu::batch_vec(dx, b) += ConstMatMap(dy.batch_ptr(b), P, g.Co).colwise().sum().transpose();
    return;
  }
  float* cols = ctx.scratch_floats(P * K);
  if (i == 1) {
    const float* prev_x = nullptr;
    for (unsigned b = 0; b < dy.d.bd; ++b) {
      const float* xb = x.batch_ptr(b);
      if (xb != prev_x) image_to_columns(xb, g, cols);
      prev_x = xb;
      MatMap(dx.batch_ptr(b), K, g.Co).noalias() +=
          ConstMatMap(cols, P, K).transpose() * ConstMatMap(dy.batch_ptr(b), P, g.Co);
    }
    return;
  }
  for (unsigned b = 0; b < dy.d.bd; ++b) {
    MatMap(cols, P, K).noalias() =
        ConstMatMap(dy.batch_ptr(b), P, g.Co) * ConstMatMap(f.batch_ptr(b), K, g.Co).transpose();
    columns_to_image_add(cols, g, dx.batch_ptr(b));
  }
}

// ---------------------------------------------------------------- maxpooling2d

Dim maxpool_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  DYNET_LITE_DIM_CHECK(n == 1, "maxpooling2d: takes one argument, got " << n);
  const Window2DParams& p = node.p<Window2DParams>();
  const Dim& x = xs[0]->d;
  DYNET_LITE_DIM_CHECK(x.nd >= 2 && x.nd <= 3 && x.size() > 0,
                       "maxpooling2d: x " << x << " must be a non-empty image {H, W} or {H, W, C}");
  DYNET_LITE_DIM_CHECK(!p.is_valid || (x[0] >= p.ksize[0] && x[1] >= p.ksize[1]),
                       "maxpooling2d: with valid padding the window {" << p.ksize[0] << "," << p.ksize[1]
                                                                       << "} must fit inside x " << x);
  Axis ah = axis_geometry(x[0], p.ksize[0], p.stride[0], p.is_valid);
  Axis aw = axis_geometry(x[1], p.ksize[1], p.stride[1], p.is_valid);
  Dim r = x;
  r.d[0] = ah.out;
  r.d[1] = aw.out;
  return r;
}

// Calls f(out_index, in_index_of_the_maximum) for every output element of one
// batch element.  Padding never wins (it is outside the image); a tie goes to
// the first position scanning the window row by row (DyNet's choice).
template <class F>
void for_each_window_max(const float* x, const Dim& xd, const Dim& yd, const Window2DParams& p, F&& f) {
  const unsigned H = xd[0], W = xd[1], C = xd[2], OH = yd[0], OW = yd[1];
  Axis ah = axis_geometry(H, p.ksize[0], p.stride[0], p.is_valid);
  Axis aw = axis_geometry(W, p.ksize[1], p.stride[1], p.is_valid);
  size_t o = 0;
  for (unsigned c = 0; c < C; ++c) {
    const size_t base = size_t(c) * H * W;
    for (unsigned ow = 0; ow < OW; ++ow) {
      long w0 = long(ow) * p.stride[1] - aw.pad;
      long w1 = std::min<long>(w0 + p.ksize[1], W);
      w0 = std::max<long>(w0, 0);
      for (unsigned oh = 0; oh < OH; ++oh, ++o) {
        long h0 = long(oh) * p.stride[0] - ah.pad;
        long h1 = std::min<long>(h0 + p.ksize[0], H);
        h0 = std::max<long>(h0, 0);
        size_t best = base + size_t(w0) * H + size_t(h0);
        for (long h = h0; h < h1; ++h)
          for (long w = w0; w < w1; ++w) {
            size_t k = base + size_t(w) * H + size_t(h);
            if (x[k] > x[best]) best = k;
          }
        f(o, best);
      }
    }
  }
}

// y = max over each window;  dx[argmax] += dy
void maxpool_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& x = *xs[0];
  Tensor& y = node.value;
  const Window2DParams& p = node.p<Window2DParams>();
  for (unsigned b = 0; b < y.d.bd; ++b) {
    const float* xb = x.batch_ptr(b);
    float* yb = y.batch_ptr(b);
    for_each_window_max(xb, x.d, y.d, p, [&](size_t o, size_t k) { yb[o] = xb[k]; });
  }
}

void maxpool_backward(const Tensor* const* xs, unsigned, const Node& node, const Tensor& dy, unsigned, Tensor& dx,
                      ExecContext&) {
  const Tensor& x = *xs[0];
  const Window2DParams& p = node.p<Window2DParams>();
  for (unsigned b = 0; b < dy.d.bd; ++b) {
    const float* gb = dy.batch_ptr(b);
    float* db = dx.batch_ptr(b);
    for_each_window_max(x.batch_ptr(b), x.d, dy.d, p, [&](size_t o, size_t k) { db[k] += gb[o]; });
  }
}

// ---------------------------------------------------------------- filter1d_narrow

// x {d, n}, f {d, w, k}: y {k, n - w + 1}, y[j, i] = sum_{r, c} x[r, i + c] f[r, c, j].
// The window of x starting at column i is contiguous (d*w floats), so y's column
// i is F^T times that window, F = f seen as a (d*w) x k matrix: one GEMM over a
// strided view of x.
Dim filter1d_shape(const Tensor* const* xs, unsigned n, const Node&) {
  DYNET_LITE_DIM_CHECK(n == 2, "filter1d_narrow: takes x and f, got " << n << " arguments");
  const Dim& x = xs[0]->d;
  const Dim& f = xs[1]->d;
  DYNET_LITE_DIM_CHECK(x.nd <= 2 && f.nd <= 3, "filter1d_narrow: x " << x << " must be a matrix {d, n} and f " << f
                                                                     << " filters {d, w} or {d, w, k}");
  DYNET_LITE_DIM_CHECK(x.rows() == f.rows() && x.rows() > 0,
                       "filter1d_narrow: x " << x << " has " << x.rows() << " rows but f " << f << " has " << f.rows());
  DYNET_LITE_DIM_CHECK(f.cols() >= 1 && f.cols() <= x.cols(), "filter1d_narrow: the filter width "
                                                                  << f.cols() << " of f " << f
                                                                  << " must be between 1 and the " << x.cols()
                                                                  << " columns of x " << x);
  DYNET_LITE_DIM_CHECK(x.bd == f.bd || x.bd == 1 || f.bd == 1,
                       "filter1d_narrow: x " << x << " and f " << f << " have batch sizes " << x.bd << " and " << f.bd);
  return Dim({f[2], x.cols() - f.cols() + 1}, std::max(x.bd, f.bd));
}

using StridedMap = Eigen::Map<const Eigen::MatrixXf, 0, Eigen::OuterStride<>>;
using StridedMutMap = Eigen::Map<Eigen::MatrixXf, 0, Eigen::OuterStride<>>;

void filter1d_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const Tensor& x = *xs[0];
  const Tensor& f = *xs[1];
  Tensor& y = node.value;
  const Eigen::Index d = x.d.rows(), w = f.d.cols(), k = f.d[2], out = y.d.cols();
  for (unsigned b = 0; b < y.d.bd; ++b) {
    StridedMap windows(x.batch_ptr(b), d * w, out, Eigen::OuterStride<>(d));
    MatMap(y.batch_ptr(b), k, out).noalias() = ConstMatMap(f.batch_ptr(b), d * w, k).transpose() * windows;
  }
}

// dF += windows dy^T;  windows(dx) += F dy (windows overlap: accumulate column by column)
void filter1d_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                       ExecContext& ctx) {
  const Tensor& x = *xs[0];
  const Tensor& f = *xs[1];
  const Eigen::Index d = x.d.rows(), w = f.d.cols(), k = f.d[2], out = dy.d.cols();
  if (i == 1) {
    for (unsigned b = 0; b < dy.d.bd; ++b) {
      StridedMap windows(x.batch_ptr(b), d * w, out, Eigen::OuterStride<>(d));
      MatMap(dx.batch_ptr(b), d * w, k).noalias() += windows * ConstMatMap(dy.batch_ptr(b), k, out).transpose();
    }
    return;
  }
  MatMap g(ctx.scratch_floats(size_t(d * w * out)), d * w, out);
  for (unsigned b = 0; b < dy.d.bd; ++b) {
    g.noalias() = ConstMatMap(f.batch_ptr(b), d * w, k) * ConstMatMap(dy.batch_ptr(b), k, out);
    float* db = dx.batch_ptr(b);
    for (Eigen::Index c = 0; c < out; ++c) cpu::VecMap(db + c * d, d * w) += g.col(c);
  }
}

// ---------------------------------------------------------------- circ_conv, circ_corr

Dim circ_shape(const Tensor* const* xs, unsigned n, const Node& node) {
  const char* op = op_name(node.op);
  DYNET_LITE_DIM_CHECK(n == 2, op << ": takes two arguments, got " << n);
  const Dim& u = xs[0]->d;
  const Dim& v = xs[1]->d;
  DYNET_LITE_DIM_CHECK(u.nd <= 1 && v.nd <= 1 && u.rows() == v.rows() && u.rows() > 0,
                       op << ": u " << u << " and v " << v << " must be vectors of the same length");
  DYNET_LITE_DIM_CHECK(u.bd == v.bd || u.bd == 1 || v.bd == 1, op << ": u " << u << " and v " << v
                                                                  << " have batch sizes " << u.bd << " and " << v.bd
                                                                  << " (they must be equal or one of them 1)");
  return Dim({u.rows()}, std::max(u.bd, v.bd));
}

// Direct O(n) per output element: n is a vector length (holographic embeddings
// use a few hundred), where the sums beat the bookkeeping of an FFT.

// out[k] (+)= sum_i a[i] b[(k + S i) mod n];  S = +1: correlation, S = -1: convolution.
template <int S>
void circ_sum(const float* a, const float* b, float* out, size_t n, bool accumulate) {
  for (size_t k = 0; k < n; ++k) {
    float acc = 0.f;
    size_t j = k;  // (k + S i) mod n, stepped without a division
    for (size_t i = 0; i < n; ++i) {
      acc += a[i] * b[j];
      if (S > 0)
        j = j + 1 == n ? 0 : j + 1;
      else
        j = j == 0 ? n - 1 : j - 1;
    }
    out[k] = accumulate ? out[k] + acc : acc;
  }
}

// y[k] = sum_i u[i] v[(k - i) mod n]  (symmetric in u and v)
// du[i] += sum_m v[m] dy[(i + m) mod n],  dv[j] += sum_m u[m] dy[(j + m) mod n]
void circ_conv_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const size_t n = node.value.d.rows();
  for (unsigned b = 0; b < node.value.d.bd; ++b)
    circ_sum<-1>(xs[0]->batch_ptr(b), xs[1]->batch_ptr(b), node.value.batch_ptr(b), n, false);
}
void circ_conv_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                        ExecContext&) {
  const size_t n = dy.d.rows();
  const Tensor& other = *xs[1 - i];
  for (unsigned b = 0; b < dy.d.bd; ++b) circ_sum<+1>(other.batch_ptr(b), dy.batch_ptr(b), dx.batch_ptr(b), n, true);
}

// y[k] = sum_i u[i] v[(i + k) mod n]
// du[i] += sum_k dy[k] v[(i + k) mod n],  dv[m] += sum_k dy[k] u[(m - k) mod n]
void circ_corr_forward(const Tensor* const* xs, unsigned, Node& node, ExecContext&) {
  const size_t n = node.value.d.rows();
  for (unsigned b = 0; b < node.value.d.bd; ++b)
    circ_sum<+1>(xs[0]->batch_ptr(b), xs[1]->batch_ptr(b), node.value.batch_ptr(b), n, false);
}
void circ_corr_backward(const Tensor* const* xs, unsigned, const Node&, const Tensor& dy, unsigned i, Tensor& dx,
                        ExecContext&) {
  const size_t n = dy.d.rows();
  for (unsigned b = 0; b < dy.d.bd; ++b) {
    if (i == 0)
      circ_sum<+1>(dy.batch_ptr(b), xs[1]->batch_ptr(b), dx.batch_ptr(b), n, true);
    else
      circ_sum<-1>(dy.batch_ptr(b), xs[0]->batch_ptr(b), dx.batch_ptr(b), n, true);
  }
}

Window2DParams window_params(const char* op, const char* what, const std::vector<unsigned>& ksize,
                             const std::vector<unsigned>& stride, bool is_valid, const Dim& x) {
  DYNET_LITE_ARG_CHECK(stride.size() == 2 && stride[0] > 0 && stride[1] > 0,
                       op << ": stride " << dims_string(stride) << " must be two positive numbers (x is " << x << ")");
  Window2DParams p{};
  p.stride[0] = stride[0];
  p.stride[1] = stride[1];
  if (what) {
    DYNET_LITE_ARG_CHECK(
        ksize.size() == 2 && ksize[0] > 0 && ksize[1] > 0,
        op << ": " << what << " " << dims_string(ksize) << " must be two positive numbers (x is " << x << ")");
    p.ksize[0] = ksize[0];
    p.ksize[1] = ksize[1];
  }
  p.is_valid = is_valid;
  return p;
}

}  // namespace

void register_conv_ops(OpTable& t) {
  t.define(OpKind::Conv2D, "conv", "conv2d", conv2d_shape, conv2d_forward, conv2d_backward, BatchKind::Elementwise,
           Purity::Impure);
  t.define(OpKind::MaxPooling2D, "conv", "maxpooling2d", maxpool_shape, maxpool_forward, maxpool_backward,
           BatchKind::Elementwise, Purity::Impure);
  t.define(OpKind::Filter1DNarrow, "conv", "filter1d_narrow", filter1d_shape, filter1d_forward, filter1d_backward,
           BatchKind::Elementwise, Purity::Impure);
  t.define(OpKind::CircConv, "conv", "circ_conv", circ_shape, circ_conv_forward, circ_conv_backward,
           BatchKind::Elementwise, Purity::Impure);
  t.define(OpKind::CircCorr, "conv", "circ_corr", circ_shape, circ_corr_forward, circ_corr_backward,
           BatchKind::Elementwise, Purity::Impure);
}

Expression conv2d(const Expression& x, const Expression& f, const std::vector<unsigned>& stride, bool is_valid) {
  Window2DParams p = window_params("conv2d", nullptr, {}, stride, is_valid, x.dim());
  return detail::add(OpKind::Conv2D, {x, f}, p);
}
Expression conv2d(const Expression& x, const Expression& f, const Expression& b, const std::vector<unsigned>& stride,
                  bool is_valid) {
  Window2DParams p = window_params("conv2d", nullptr, {}, stride, is_valid, x.dim());
  return detail::add(OpKind::Conv2D, {x, f, b}, p);
}
Expression maxpooling2d(const Expression& x, const std::vector<unsigned>& ksize, const std::vector<unsigned>& stride,
                        bool is_valid) {
  Window2DParams p = window_params("maxpooling2d", "ksize", ksize, stride, is_valid, x.dim());
  return detail::add(OpKind::MaxPooling2D, {x}, p);
}
Expression filter1d_narrow(const Expression& x, const Expression& f) {
  return detail::add(OpKind::Filter1DNarrow, {x, f});
}
Expression circ_conv(const Expression& u, const Expression& v) { return detail::add(OpKind::CircConv, {u, v}); }
Expression circ_corr(const Expression& u, const Expression& v) { return detail::add(OpKind::CircCorr, {u, v}); }

}  // namespace dynet_lite
