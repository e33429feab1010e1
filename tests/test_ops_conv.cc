#define BOOST_TEST_MODULE ops_conv
#include "alloc_counter.h"
#include "test_utils.h"

using namespace dynet_lite;
using test::iota;
using test::TestInput;

namespace {

using Xs = std::vector<Expression>;

std::vector<float> scaled(std::vector<float> v, float s) {
  for (float& x : v) x *= s;
  return v;
}

std::vector<float> concat(std::vector<float> a, const std::vector<float>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The definition of conv2d, written independently of the im2col kernel:
// y[oh, ow, co] = b[co] + sum_{fh, fw, ci} f[fh, fw, ci, co] x[oh s0 + fh - pt, ow s1 + fw - pl, ci]
// with TensorFlow's padding rule.  One batch element.
std::vector<float> reference_conv(const std::vector<float>& x, unsigned H, unsigned W, unsigned Ci,
                                  const std::vector<float>& f, unsigned FH, unsigned FW, unsigned Co,
                                  const std::vector<float>* b, unsigned s0, unsigned s1, bool valid, unsigned* OH_out,
                                  unsigned* OW_out) {
  unsigned OH = valid ? (H - FH) / s0 + 1 : (H + s0 - 1) / s0;
  unsigned OW = valid ? (W - FW) / s1 + 1 : (W + s1 - 1) / s1;
  int pt = valid ? 0 : std::max(0, int((OH - 1) * s0 + FH) - int(H)) / 2;
  int pl = valid ? 0 : std::max(0, int((OW - 1) * s1 + FW) - int(W)) / 2;
  std::vector<float> y(size_t(OH) * OW * Co);
  for (unsigned co = 0; co < Co; ++co)
    for (unsigned ow = 0; ow < OW; ++ow)
      for (unsigned oh = 0; oh < OH; ++oh) {
        double acc = b ? (*b)[co] : 0.0;
        for (unsigned ci = 0; ci < Ci; ++ci)
          for (unsigned fw = 0; fw < FW; ++fw)
            for (unsigned fh = 0; fh < FH; ++fh) {
              int h = int(oh * s0 + fh) - pt, w = int(ow * s1 + fw) - pl;
              if (h < 0 || w < 0 || h >= int(H) || w >= int(W)) continue;
              acc += double(f[fh + FH * (fw + FW * (ci + Ci * co))]) * x[h + H * (w + W * ci)];
            }
        y[oh + OH * (ow + OW * co)] = static_cast<float>(acc);
      }
  *OH_out = OH;
  *OW_out = OW;
  return y;
}

}  // namespace

// ================================================================ conv2d values

// x = [[1,4,7],[2,5,8],[3,6,9]] (x[h, w] = 1 + h + 3 w), one channel;
// f = [[1,3],[2,4]] (f[0,0]=1, f[1,0]=2, f[0,1]=3, f[1,1]=4).
const std::vector<float> kX3 = iota(9);
const std::vector<float> kF2 = {1, 2, 3, 4};

/// The image kX3 and the filter kF2 as inputs of `cg`.
struct ImageAndFilter {
  Expression x, f;
  explicit ImageAndFilter(ComputationGraph& cg)
      : x(input(cg, Dim({3, 3, 1}), kX3)), f(input(cg, Dim({2, 2, 1, 1}), kF2)) {}
};

BOOST_AUTO_TEST_CASE(conv2d_valid_stride1) {
  // y[0,0] = 1*1 + 2*2 + 3*4 + 4*5 = 37,  y[1,0] = 2 + 6 + 15 + 24 = 47,
  // y[0,1] = 4 + 10 + 21 + 32 = 67,       y[1,1] = 5 + 12 + 24 + 36 = 77
  ComputationGraph cg;
  const ImageAndFilter in(cg);
  Expression y = conv2d(in.x, in.f, {1, 1});
  BOOST_CHECK_EQUAL(y.dim(), Dim({2, 2, 1}));
  test::check_close(as_vector(cg.forward(y)), {37, 47, 67, 77});
}

BOOST_AUTO_TEST_CASE(conv2d_same_stride1_pads_bottom_right) {
  // padding total 1 per axis: all of it after the image (TensorFlow's rule)
  // y[2,0] = 1*3 + 3*6 = 21, y[2,1] = 6 + 3*9 = 33, y[0,2] = 7 + 2*8 = 23,
  // y[1,2] = 8 + 2*9 = 26, y[2,2] = 9
  ComputationGraph cg;
  const ImageAndFilter in(cg);
  Expression y = conv2d(in.x, in.f, {1, 1}, false);
  BOOST_CHECK_EQUAL(y.dim(), Dim({3, 3, 1}));
  test::check_close(as_vector(cg.forward(y)), {37, 47, 21, 67, 77, 33, 23, 26, 9});
}

BOOST_AUTO_TEST_CASE(conv2d_strides_valid_and_same) {
  ComputationGraph cg;
  const ImageAndFilter in(cg);
  // valid: ceil((3 - 2 + 1) / 2) = 1 per axis
  Expression yv = conv2d(in.x, in.f, {2, 2}, true);
  BOOST_CHECK_EQUAL(yv.dim(), Dim({1, 1, 1}));
  test::check_close(as_vector(cg.forward(yv)), {37});
  // same: ceil(3 / 2) = 2 per axis, windows start at 0 and 2
  Expression ys = conv2d(in.x, in.f, {2, 2}, false);
  BOOST_CHECK_EQUAL(ys.dim(), Dim({2, 2, 1}));
  test::check_close(as_vector(cg.forward(ys)), {37, 21, 23, 9});
  // different strides per axis: rows every 2, columns every 1
  Expression ym = conv2d(in.x, in.f, {2, 1}, true);
  BOOST_CHECK_EQUAL(ym.dim(), Dim({1, 2, 1}));
  test::check_close(as_vector(cg.forward(ym)), {37, 67});
}

BOOST_AUTO_TEST_CASE(conv2d_same_odd_padding_splits_top_smaller) {
  // H = 5, FH = 4, stride 1: padding 3 = 1 before + 2 after.
  // x = [1..5], f = [1, 10, 100, 1000] down the column:
  // y[0] = 10*1 + 100*2 + 1000*3 = 3210, y[1] = 4321, y[2] = 5432, y[3] = 543, y[4] = 54
  ComputationGraph cg;
  Expression x = input(cg, Dim({5, 1, 1}), iota(5));
  Expression f = input(cg, Dim({4, 1, 1, 1}), {1, 10, 100, 1000});
  test::check_close(as_vector(cg.forward(conv2d(x, f, {1, 1}, false))), {3210, 4321, 5432, 543, 54});
  // the same along the width
  Expression xw = input(cg, Dim({1, 5, 1}), iota(5));
  Expression fw = input(cg, Dim({1, 4, 1, 1}), {1, 10, 100, 1000});
  Expression yw = conv2d(xw, fw, {1, 1}, false);
  BOOST_CHECK_EQUAL(yw.dim(), Dim({1, 5, 1}));
  test::check_close(as_vector(cg.forward(yw)), {3210, 4321, 5432, 543, 54});
}

BOOST_AUTO_TEST_CASE(conv2d_3x3_same_is_neighbourhood_sum) {
  // all-ones 3x3 filter, padding 1 on each side: y = sum of the 3x3 neighbourhood
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 3, 1}), kX3);
  Expression f = input(cg, Dim({3, 3, 1, 1}), std::vector<float>(9, 1.f));
  // rows of x: [1,4,7],[2,5,8],[3,6,9]
  // y[0,0] = 1+2+4+5 = 12, y[1,0] = 1+2+3+4+5+6 = 21, y[2,0] = 2+3+5+6 = 16,
  // y[0,1] = 1+2+4+5+7+8 = 27, y[1,1] = 45, y[2,1] = 33, y[0,2] = 4+5+7+8 = 24, y[1,2] = 39, y[2,2] = 28
  test::check_close(as_vector(cg.forward(conv2d(x, f, {1, 1}, false))), {12, 21, 16, 27, 45, 33, 24, 39, 28});
}

BOOST_AUTO_TEST_CASE(conv2d_channels_and_bias) {
  // 1x1 filters mix channels: co0 = ch0, co1 = ch1, co2 = ch0 - ch1; bias {0.5, -1, 2}
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 2, 2}), {1, 2, 3, 4, 10, 20, 30, 40});
  Expression f = input(cg, Dim({1, 1, 2, 3}), {1, 0, 0, 1, 1, -1});
  Expression b = input(cg, Dim({3}), {0.5f, -1, 2});
  Expression y = conv2d(x, f, b, {1, 1});
  BOOST_CHECK_EQUAL(y.dim(), Dim({2, 2, 3}));
  test::check_close(as_vector(cg.forward(y)), {1.5f, 2.5f, 3.5f, 4.5f, 9, 19, 29, 39, -7, -16, -25, -34});
  test::check_close(as_vector(cg.forward(conv2d(x, f, {1, 1}))), {1, 2, 3, 4, 10, 20, 30, 40, -9, -18, -27, -36});
}

BOOST_AUTO_TEST_CASE(conv2d_batches) {
  ComputationGraph cg;
  // a batch of 2 images (the second is 2x the first) with one filter
  Expression x = input(cg, Dim({3, 3, 1}, 2), concat(kX3, scaled(kX3, 2)));
  Expression f = input(cg, Dim({2, 2, 1, 1}), kF2);
  Expression y = conv2d(x, f, {1, 1});
  BOOST_CHECK_EQUAL(y.dim(), Dim({2, 2, 1}, 2));
  test::check_close(as_vector(cg.forward(y)), {37, 47, 67, 77, 74, 94, 134, 154});
  // one image, a batch of 2 filters (the second is -f)
  Expression x1 = input(cg, Dim({3, 3, 1}), kX3);
  Expression f2 = input(cg, Dim({2, 2, 1, 1}, 2), concat(kF2, scaled(kF2, -1)));
  Expression y2 = conv2d(x1, f2, {1, 1});
  BOOST_CHECK_EQUAL(y2.dim(), Dim({2, 2, 1}, 2));
  test::check_close(as_vector(cg.forward(y2)), {37, 47, 67, 77, -37, -47, -67, -77});
  // a batched bias
  Expression b = input(cg, Dim({1}, 2), {1, -1});
  test::check_close(as_vector(cg.forward(conv2d(x, f, b, {1, 1}))), {38, 48, 68, 78, 73, 93, 133, 153});
}

BOOST_AUTO_TEST_CASE(conv2d_filter_as_large_as_image) {
  // valid: a single output, the full dot product;  same with a 1x1 image: only the centre tap
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 3, 1}), kX3);
  Expression f = input(cg, Dim({3, 3, 1, 1}), std::vector<float>(9, 1.f));
  test::check_close(as_vector(cg.forward(conv2d(x, f, {1, 1}))), {45});
  Expression x1 = input(cg, Dim({1, 1, 1}), {2});
  Expression f3 = input(cg, Dim({3, 3, 1, 1}), iota(9));  // centre tap f[1,1] = 5
  Expression y = conv2d(x1, f3, {1, 1}, false);
  BOOST_CHECK_EQUAL(y.dim(), Dim({1, 1, 1}));
  test::check_close(as_vector(cg.forward(y)), {10});
}

BOOST_AUTO_TEST_CASE(conv2d_matches_reference_definition) {
  // Sizes, strides and paddings that reach every edge case of the unfolding.
  struct Case {
    unsigned H, W, Ci, FH, FW, Co, s0, s1;
    bool valid;
  };
  const Case cases[] = {{5, 4, 2, 2, 3, 3, 1, 1, true},  {5, 4, 2, 2, 3, 3, 1, 1, false},
                        {7, 6, 3, 3, 3, 2, 2, 2, true},  {7, 6, 3, 3, 3, 2, 2, 2, false},
                        {6, 7, 1, 4, 2, 1, 3, 2, false}, {8, 5, 2, 5, 5, 4, 2, 3, false},
                        {4, 4, 1, 1, 1, 2, 3, 3, true},  {9, 9, 4, 3, 3, 5, 1, 2, false}};
  for (const Case& c : cases) {
    std::vector<float> xv = test::test_values(size_t(c.H) * c.W * c.Ci * 2);
    std::vector<float> fv = test::test_values(size_t(c.FH) * c.FW * c.Ci * c.Co, 0.1f);
    std::vector<float> bv = test::test_values(c.Co, -0.3f);
    ComputationGraph cg;
    Expression x = input(cg, Dim({c.H, c.W, c.Ci}, 2), xv);
    Expression f = input(cg, Dim({c.FH, c.FW, c.Ci, c.Co}), fv);
    Expression b = input(cg, Dim({c.Co}), bv);
    Expression y = conv2d(x, f, b, {c.s0, c.s1}, c.valid);
    std::vector<float> got = as_vector(cg.forward(y));
    unsigned OH = 0, OW = 0;
    size_t per = size_t(c.H) * c.W * c.Ci;
    std::vector<float> x0(xv.begin(), xv.begin() + per), x1(xv.begin() + per, xv.end());
    std::vector<float> want =
        reference_conv(x0, c.H, c.W, c.Ci, fv, c.FH, c.FW, c.Co, &bv, c.s0, c.s1, c.valid, &OH, &OW);
    std::vector<float> want1 =
        reference_conv(x1, c.H, c.W, c.Ci, fv, c.FH, c.FW, c.Co, &bv, c.s0, c.s1, c.valid, &OH, &OW);
    BOOST_CHECK_EQUAL(y.dim(), Dim({OH, OW, c.Co}, 2));
    test::check_close(got, concat(want, want1), 1e-4);
  }
}

BOOST_AUTO_TEST_CASE(conv2d_backward_values) {
  // loss = sum(y) with y = conv2d(x, f) valid, 3x3 image, 2x2 filter:
  // df[fh, fw] = sum of the x entries it touches = sum x[fh..fh+1, fw..fw+1]
  //   df[0,0] = 1+2+4+5 = 12, df[1,0] = 2+3+5+6 = 16, df[0,1] = 4+5+7+8 = 24, df[1,1] = 28
  // dx[h, w] = sum of the filter taps that read it: corners get one tap, the centre all four
  ComputationGraph cg;
  const ImageAndFilter in(cg);
  Expression b = input(cg, Dim({1}), std::vector<float>{0.f});
  Expression loss = sum_elems(conv2d(in.x, in.f, b, {1, 1}));
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(in.f.gradient()), {12, 16, 24, 28});
  test::check_close(as_vector(in.x.gradient()), {1, 3, 2, 4, 10, 6, 3, 7, 4});
  test::check_close(as_vector(b.gradient()), {4});
}

// ================================================================ conv2d gradients

BOOST_AUTO_TEST_CASE(conv2d_gradients_parameters_valid) {
  ParameterCollection m;
  Parameter pf = m.add_parameters({2, 3, 2, 3});
  Parameter pb = m.add_parameters({3});
  pf.set_value(test::test_values(36, 0.1f));
  pb.set_value(test::test_values(3, -0.2f));
  size_t n =
      test::check_gradients(m, {{Dim({4, 5, 2}, 2), test::test_values(80)}}, [&](ComputationGraph& cg, const Xs& xs) {
        return conv2d(xs[0], parameter(cg, pf), parameter(cg, pb), {1, 1});
      });
  BOOST_CHECK_EQUAL(n, 36u + 3u + 80u);
}

BOOST_AUTO_TEST_CASE(conv2d_gradients_same_strided) {
  ParameterCollection m;
  Parameter pf = m.add_parameters({3, 2, 2, 2});
  pf.set_value(test::test_values(24, -0.1f));
  size_t n = test::check_gradients(m, {{Dim({5, 4, 2}, 2), test::test_values(80, 0.05f)}},
                                   [&](ComputationGraph& cg, const Xs& xs) {
                                     return conv2d(xs[0], parameter(cg, pf), {2, 2}, false);
                                   });
  BOOST_CHECK_EQUAL(n, 24u + 80u);
}

BOOST_AUTO_TEST_CASE(conv2d_gradients_mixed_strides_inputs_only) {
  ParameterCollection m;
  size_t n = test::check_gradients(m,
                                   {{Dim({6, 5, 1}), test::test_values(30)},
                                    {Dim({3, 2, 1, 2}), test::test_values(12, 0.2f)},
                                    {Dim({2}), {0.3f, -0.4f}}},
                                   [&](ComputationGraph&, const Xs& xs) {
                                     return conv2d(xs[0], xs[1], xs[2], {2, 1}, false);
                                   });
  BOOST_CHECK_EQUAL(n, 44u);
}

BOOST_AUTO_TEST_CASE(conv2d_gradients_batch_one_against_many) {
  ParameterCollection m;
  // one image, a batch of 3 filters, a batch of 3 biases
  size_t n = test::check_gradients(m,
                                   {{Dim({4, 4, 2}), test::test_values(32)},
                                    {Dim({2, 2, 2, 1}, 3), test::test_values(24, 0.1f)},
                                    {Dim({1}, 3), {0.1f, 0.2f, -0.3f}}},
                                   [&](ComputationGraph&, const Xs& xs) {
                                     return conv2d(xs[0], xs[1], xs[2], {1, 2});
                                   });
  BOOST_CHECK_EQUAL(n, 32u + 24u + 3u);
  // a batch of 2 images, batch-1 filter and bias as inputs
  n = test::check_gradients(m,
                            {{Dim({4, 3, 1}, 2), test::test_values(24)},
                             {Dim({2, 2, 1, 2}), test::test_values(8, 0.1f)},
                             {Dim({2}), {0.1f, 0.2f}}},
                            [&](ComputationGraph&, const Xs& xs) {
                              return conv2d(xs[0], xs[1], xs[2], {1, 1}, false);
                            });
  BOOST_CHECK_EQUAL(n, 24u + 8u + 2u);
}

// ================================================================ conv2d errors

BOOST_AUTO_TEST_CASE(conv2d_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 3, 2}), std::vector<float>(18, 1.f));
  Expression f = input(cg, Dim({2, 2, 3, 1}), std::vector<float>(12, 1.f));
  test::check_throws_with<dim_error>([&] { conv2d(x, f, {1, 1}); }, {"conv2d", "{2,2,3,1}", "{3,3,2}", "channels"});
  Expression big = input(cg, Dim({4, 2, 2, 1}), std::vector<float>(16, 1.f));
  test::check_throws_with<dim_error>([&] { conv2d(x, big, {1, 1}); }, {"conv2d", "{4,2,2,1}", "{3,3,2}", "valid"});
  BOOST_CHECK_EQUAL(conv2d(x, big, {1, 1}, false).dim(), Dim({3, 3, 1}));  // same padding allows it
  Expression f2 = input(cg, Dim({2, 2, 2, 3}), std::vector<float>(24, 1.f));
  Expression b = input(cg, Dim({2}), {1, 2});
  test::check_throws_with<dim_error>([&] { conv2d(x, f2, b, {1, 1}); }, {"conv2d", "bias", "{2}", "{3}"});
  test::check_throws_with<std::invalid_argument>([&] { conv2d(x, f2, {1}); }, {"conv2d", "stride", "{1}", "{3,3,2}"});
  test::check_throws_with<std::invalid_argument>([&] { conv2d(x, f2, {1, 0}); }, {"conv2d", "stride", "{1,0}"});
  Expression v = input(cg, Dim({3, 3, 2, 2}), std::vector<float>(36, 1.f));
  test::check_throws_with<dim_error>([&] { conv2d(v, f2, {1, 1}); }, {"conv2d", "{3,3,2,2}", "image"});
  Expression xb = input(cg, Dim({3, 3, 2}, 2), std::vector<float>(36, 1.f));
  Expression fb = input(cg, Dim({2, 2, 2, 3}, 3), std::vector<float>(72, 1.f));
  test::check_throws_with<dim_error>([&] { conv2d(xb, fb, {1, 1}); }, {"conv2d", "{3,3,2X2}", "{2,2,2,3X3}"});
}

// ================================================================ maxpooling2d

// x by rows: [1 3 6 0; 5 4 9 3; 2 8 1 5; 0 7 2 4]
const std::vector<float> kP4 = {1, 5, 2, 0, 3, 4, 8, 7, 6, 9, 1, 2, 0, 3, 5, 4};

BOOST_AUTO_TEST_CASE(maxpooling2d_values) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({4, 4, 1}), kP4);
  // 2x2 windows, stride 2: max{1,5,3,4} = 5, max{2,0,8,7} = 8, max{6,9,0,3} = 9, max{1,2,5,4} = 5
  Expression y = maxpooling2d(x, {2, 2}, {2, 2});
  BOOST_CHECK_EQUAL(y.dim(), Dim({2, 2, 1}));
  test::check_close(as_vector(cg.forward(y)), {5, 8, 9, 5});
  // 3x3 windows, stride 1, valid: {2,2}: max rows 0-2 cols 0-2 = 9, rows 1-3 cols 0-2 = 9,
  // rows 0-2 cols 1-3 = 9, rows 1-3 cols 1-3 = 9
  test::check_close(as_vector(cg.forward(maxpooling2d(x, {3, 3}, {1, 1}))), {9, 9, 9, 9});
  // 1x2 windows, stride {1, 2}: max of column pairs per row
  Expression y12 = maxpooling2d(x, {1, 2}, {1, 2});
  BOOST_CHECK_EQUAL(y12.dim(), Dim({4, 2, 1}));
  test::check_close(as_vector(cg.forward(y12)), {3, 5, 8, 7, 6, 9, 5, 4});
}

BOOST_AUTO_TEST_CASE(maxpooling2d_same_padding_ignores_the_pad) {
  // all-negative 3x3 input, 2x2 windows stride 2, same: out 2x2, padding after the
  // image; the padded cells must not win (a zero would beat every entry)
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 3}), scaled(iota(9), -1));  // x[h,w] = -(1 + h + 3w)
  Expression y = maxpooling2d(x, {2, 2}, {2, 2}, false);
  BOOST_CHECK_EQUAL(y.dim(), Dim({2, 2}));
  test::check_close(as_vector(cg.forward(y)), {-1, -3, -7, -9});
  // 3x3 windows, stride 1, same: padding 1 on each side
  Expression y3 = maxpooling2d(x, {3, 3}, {1, 1}, false);
  BOOST_CHECK_EQUAL(y3.dim(), Dim({3, 3}));
  test::check_close(as_vector(cg.forward(y3)), {-1, -1, -2, -1, -1, -2, -4, -4, -5});
}

BOOST_AUTO_TEST_CASE(maxpooling2d_channels_and_batches) {
  ComputationGraph cg;
  // two channels (the second is -x) and two batch elements (the second is x + 10)
  std::vector<float> b0 = concat(kP4, scaled(kP4, -1));
  std::vector<float> b1 = b0;
  for (float& v : b1) v += 10;
  Expression x = input(cg, Dim({4, 4, 2}, 2), concat(b0, b1));
  Expression y = maxpooling2d(x, {2, 2}, {2, 2});
  BOOST_CHECK_EQUAL(y.dim(), Dim({2, 2, 2}, 2));
  // channel 1: -min of each window: min{1,5,3,4} = 1, min{2,0,8,7} = 0, min{6,9,0,3} = 0, min{1,2,5,4} = 1
  test::check_close(as_vector(cg.forward(y)), {5, 8, 9, 5, -1, 0, 0, -1, 15, 18, 19, 15, 9, 10, 10, 9});
}

BOOST_AUTO_TEST_CASE(maxpooling2d_backward_routes_to_the_maximum) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({4, 4, 1}), kP4);
  Expression w = input(cg, Dim({2, 2, 1}), {1, 2, 3, 4});
  Expression loss = sum_elems(cmult(maxpooling2d(x, {2, 2}, {2, 2}), w));
  cg.forward(loss);
  cg.backward(loss, true);
  // maxima at (1,0) -> 1, (2,1) -> 2, (1,2) -> 3, (2,3) -> 4
  std::vector<float> want(16, 0.f);
  want[1] = 1;
  want[2 + 4 * 1] = 2;
  want[1 + 4 * 2] = 3;
  want[2 + 4 * 3] = 4;
  test::check_close(as_vector(x.gradient()), want);
}

BOOST_AUTO_TEST_CASE(maxpooling2d_ties_and_overlaps) {
  // a constant image: every window ties; the gradient goes to the first cell of
  // the window scanning row by row, exactly once per window
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 3}), std::vector<float>(9, 2.f));
  Expression loss = sum_elems(maxpooling2d(x, {2, 2}, {1, 1}));
  cg.forward(loss);
  cg.backward(loss, true);
  // windows start at (0,0), (1,0), (0,1), (1,1): one unit each at those cells
  test::check_close(as_vector(x.gradient()), {1, 1, 0, 1, 1, 0, 0, 0, 0});
  // ties between (1,0) and (0,1) only: row-by-row order picks (0,1)
  ComputationGraph cg2;
  Expression x2 = input(cg2, Dim({2, 2}), {0, 5, 5, 1});
  Expression l2 = sum_elems(maxpooling2d(x2, {2, 2}, {1, 1}));
  cg2.forward(l2);
  cg2.backward(l2, true);
  test::check_close(as_vector(x2.gradient()), {0, 0, 1, 0});
  // overlapping windows with one dominant cell: it collects every window's gradient
  ComputationGraph cg3;
  Expression x3 = input(cg3, Dim({3, 3}), {0, 0, 0, 0, 9, 0, 0, 0, 0});
  Expression l3 = sum_elems(maxpooling2d(x3, {2, 2}, {1, 1}));
  cg3.forward(l3);
  cg3.backward(l3, true);
  test::check_close(as_vector(x3.gradient()), {0, 0, 0, 0, 4, 0, 0, 0, 0});
}

BOOST_AUTO_TEST_CASE(maxpooling2d_gradients) {
  ParameterCollection m;
  // test_values has no ties, so central differences are valid away from kinks
  size_t n =
      test::check_gradients(m, {{Dim({5, 4, 2}, 2), test::test_values(80)}}, [&](ComputationGraph&, const Xs& xs) {
        return maxpooling2d(xs[0], {2, 3}, {2, 1}, false);
      });
  BOOST_CHECK_EQUAL(n, 80u);
  n = test::check_gradients(m, {{Dim({5, 5, 1}), test::test_values(25, 0.1f)}}, [&](ComputationGraph&, const Xs& xs) {
    return maxpooling2d(xs[0], {3, 3}, {2, 2});
  });
  BOOST_CHECK_EQUAL(n, 25u);
  ParameterCollection m2;
  Parameter p = m2.add_parameters({4, 4, 1});
  p.set_value(test::test_values(16, 0.2f));
  n = test::check_gradients(m2, {{Dim({4, 4, 1}, 3), test::test_values(48)}}, [&](ComputationGraph& cg, const Xs& xs) {
    return maxpooling2d(xs[0] + parameter(cg, p), {2, 2}, {2, 2});
  });
  BOOST_CHECK_EQUAL(n, 16u + 48u);
}

BOOST_AUTO_TEST_CASE(maxpooling2d_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({3, 3, 2}), std::vector<float>(18, 1.f));
  test::check_throws_with<dim_error>(
      [&] {
        maxpooling2d(x, {4, 2}, {1, 1});
      },
      {"maxpooling2d", "{4,2}", "{3,3,2}", "valid"});
  BOOST_CHECK_EQUAL(maxpooling2d(x, {4, 2}, {1, 1}, false).dim(), Dim({3, 3, 2}));
  test::check_throws_with<std::invalid_argument>(
      [&] {
        maxpooling2d(x, {2}, {1, 1});
      },
      {"maxpooling2d", "ksize", "{2}", "{3,3,2}"});
  test::check_throws_with<std::invalid_argument>(
      [&] {
        maxpooling2d(x, {2, 2}, {0, 1});
      },
      {"maxpooling2d", "stride", "{0,1}"});
  Expression v = input(cg, Dim({3}), {1, 2, 3});
  test::check_throws_with<dim_error>([&] { maxpooling2d(v, {1, 1}, {1, 1}); }, {"maxpooling2d", "{3}"});
}

// ================================================================ filter1d_narrow

// x = [[1,2,3,4],[5,6,7,8]];  f = [[1,2],[3,4]];  g = [[1,0],[0,-1]]
const std::vector<float> kX24 = {1, 5, 2, 6, 3, 7, 4, 8};
const std::vector<float> kF22 = {1, 3, 2, 4};
const std::vector<float> kG22 = {1, 0, 0, -1};

BOOST_AUTO_TEST_CASE(filter1d_narrow_values) {
  // y[i] = 1 x[0,i] + 3 x[1,i] + 2 x[0,i+1] + 4 x[1,i+1]: 1+15+4+24 = 44, 54, 64
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 4}), kX24);
  Expression f = input(cg, Dim({2, 2}), kF22);
  Expression y = filter1d_narrow(x, f);
  BOOST_CHECK_EQUAL(y.dim(), Dim({1, 3}));
  test::check_close(as_vector(cg.forward(y)), {44, 54, 64});
  // two filters {2,2,2}: the second gives x[0,i] - x[1,i+1] = -5 everywhere
  Expression f2 = input(cg, Dim({2, 2, 2}), concat(kF22, kG22));
  Expression y2 = filter1d_narrow(x, f2);
  BOOST_CHECK_EQUAL(y2.dim(), Dim({2, 3}));
  test::check_close(as_vector(cg.forward(y2)), {44, -5, 54, -5, 64, -5});
}

BOOST_AUTO_TEST_CASE(filter1d_narrow_extreme_widths) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 4}), kX24);
  // width = sequence length: one output column, the full dot product 1*1+5*2+... = sum x * f
  Expression full = input(cg, Dim({2, 4}), {1, 0, 0, 1, 1, 0, 0, 1});  // x[0,0] + x[1,1] + x[0,2] + x[1,3]
  Expression y = filter1d_narrow(x, full);
  BOOST_CHECK_EQUAL(y.dim(), Dim({1, 1}));
  test::check_close(as_vector(cg.forward(y)), {1 + 6 + 3 + 8});
  // width 1: a per-column weighted sum of the rows
  Expression one = input(cg, Dim({2, 1}), {2, -1});
  test::check_close(as_vector(cg.forward(filter1d_narrow(x, one))), {-3, -2, -1, 0});
}

BOOST_AUTO_TEST_CASE(filter1d_narrow_batches) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 4}, 2), concat(kX24, scaled(kX24, -1)));
  Expression f = input(cg, Dim({2, 2}), kF22);
  test::check_close(as_vector(cg.forward(filter1d_narrow(x, f))), {44, 54, 64, -44, -54, -64});
  Expression x1 = input(cg, Dim({2, 4}), kX24);
  Expression fb = input(cg, Dim({2, 2}, 2), concat(kF22, kG22));
  test::check_close(as_vector(cg.forward(filter1d_narrow(x1, fb))), {44, 54, 64, -5, -5, -5});
}

BOOST_AUTO_TEST_CASE(filter1d_narrow_backward_values) {
  // loss = sum(y), y {1,3}: df[r, c] = sum_i x[r, i + c] = x[r,c] + x[r,c+1] + x[r,c+2]
  //   df[0,0] = 6, df[1,0] = 18, df[0,1] = 9, df[1,1] = 21
  // dx[r, j] = sum over windows covering column j of f[r, j - i]: columns 0 and 3 once, 1 and 2 twice
  //   dx[:,0] = f[:,0] = (1,3), dx[:,1] = (3,7), dx[:,2] = (3,7), dx[:,3] = f[:,1] = (2,4)
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 4}), kX24);
  Expression f = input(cg, Dim({2, 2}), kF22);
  Expression loss = sum_elems(filter1d_narrow(x, f));
  cg.forward(loss);
  cg.backward(loss, true);
  test::check_close(as_vector(f.gradient()), {6, 18, 9, 21});
  test::check_close(as_vector(x.gradient()), {1, 3, 3, 7, 3, 7, 2, 4});
}

BOOST_AUTO_TEST_CASE(filter1d_narrow_gradients) {
  ParameterCollection m;
  Parameter pf = m.add_parameters({3, 2, 4});
  pf.set_value(test::test_values(24, 0.1f));
  size_t n = test::check_gradients(
      m, {{Dim({3, 5}, 2), test::test_values(30)}},
      [&](ComputationGraph& cg, const Xs& xs) { return filter1d_narrow(xs[0], parameter(cg, pf)); });
  BOOST_CHECK_EQUAL(n, 24u + 30u);
  ParameterCollection m2;
  n = test::check_gradients(m2, {{Dim({2, 4}), test::test_values(8)}, {Dim({2, 3}, 3), test::test_values(18, 0.2f)}},
                            [&](ComputationGraph&, const Xs& xs) { return filter1d_narrow(xs[0], xs[1]); });
  BOOST_CHECK_EQUAL(n, 8u + 18u);
}

BOOST_AUTO_TEST_CASE(filter1d_narrow_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2, 4}), kX24);
  Expression f3 = input(cg, Dim({3, 2}), std::vector<float>(6, 1.f));
  test::check_throws_with<dim_error>([&] { filter1d_narrow(x, f3); }, {"filter1d_narrow", "{2,4}", "{3,2}", "rows"});
  Expression wide = input(cg, Dim({2, 5}), std::vector<float>(10, 1.f));
  test::check_throws_with<dim_error>([&] { filter1d_narrow(x, wide); },
                                     {"filter1d_narrow", "{2,5}", "{2,4}", "width 5"});
}

// ================================================================ circ_conv, circ_corr

BOOST_AUTO_TEST_CASE(circ_conv_corr_values) {
  // u = [1,2,3], v = [4,5,6]
  // conv: y0 = u0v0 + u1v2 + u2v1 = 4+12+15 = 31, y1 = u0v1 + u1v0 + u2v2 = 5+8+18 = 31,
  //       y2 = u0v2 + u1v1 + u2v0 = 6+10+12 = 28
  // corr: y0 = u0v0 + u1v1 + u2v2 = 32, y1 = u0v1 + u1v2 + u2v0 = 5+12+12 = 29,
  //       y2 = u0v2 + u1v0 + u2v1 = 6+8+15 = 29
  ComputationGraph cg;
  Expression u = input(cg, Dim({3}), {1, 2, 3});
  Expression v = input(cg, Dim({3}), {4, 5, 6});
  test::check_close(as_vector(cg.forward(circ_conv(u, v))), {31, 31, 28});
  test::check_close(as_vector(cg.forward(circ_conv(v, u))), {31, 31, 28});  // commutative
  test::check_close(as_vector(cg.forward(circ_corr(u, v))), {32, 29, 29});
  // corr(v, u): y0 = 32, y1 = v0u1 + v1u2 + v2u0 = 8+15+6 = 29, y2 = v0u2 + v1u0 + v2u1 = 12+5+12 = 29
  test::check_close(as_vector(cg.forward(circ_corr(v, u))), {32, 29, 29});
  // a delta at position 1 shifts: conv(e1, v) = v rotated down by one, corr(e1, v) = v rotated up
  Expression e1 = input(cg, Dim({3}), {0, 1, 0});
  test::check_close(as_vector(cg.forward(circ_conv(e1, v))), {6, 4, 5});
  test::check_close(as_vector(cg.forward(circ_corr(e1, v))), {5, 6, 4});
}

BOOST_AUTO_TEST_CASE(circ_length_one_and_batches) {
  ComputationGraph cg;
  Expression a = input(cg, Dim({1}), {2});
  Expression b = input(cg, Dim({1}), {3});
  test::check_close(as_vector(cg.forward(circ_conv(a, b))), {6});
  test::check_close(as_vector(cg.forward(circ_corr(a, b))), {6});
  Expression u = input(cg, Dim({3}, 2), {1, 2, 3, 0, 1, 0});
  Expression v = input(cg, Dim({3}), {4, 5, 6});
  Expression y = circ_conv(u, v);
  BOOST_CHECK_EQUAL(y.dim(), Dim({3}, 2));
  test::check_close(as_vector(cg.forward(y)), {31, 31, 28, 6, 4, 5});
  test::check_close(as_vector(cg.forward(circ_corr(u, v))), {32, 29, 29, 5, 6, 4});
}

BOOST_AUTO_TEST_CASE(circ_gradients) {
  ParameterCollection m;
  size_t n = test::check_gradients(m, {{Dim({5}), test::test_values(5)}, {Dim({5}), test::test_values(5, 0.3f)}},
                                   [&](ComputationGraph&, const Xs& xs) { return circ_conv(xs[0], xs[1]); });
  BOOST_CHECK_EQUAL(n, 10u);
  n = test::check_gradients(m, {{Dim({5}), test::test_values(5)}, {Dim({5}), test::test_values(5, 0.3f)}},
                            [&](ComputationGraph&, const Xs& xs) { return circ_corr(xs[0], xs[1]); });
  BOOST_CHECK_EQUAL(n, 10u);
  // batched u against a batch-1 parameter v
  Parameter pv = m.add_parameters({4});
  pv.set_value(test::test_values(4, -0.2f));
  n = test::check_gradients(m, {{Dim({4}, 3), test::test_values(12)}},
                            [&](ComputationGraph& cg, const Xs& xs) { return circ_conv(xs[0], parameter(cg, pv)); });
  BOOST_CHECK_EQUAL(n, 4u + 12u);
  n = test::check_gradients(m, {{Dim({4}, 3), test::test_values(12)}},
                            [&](ComputationGraph& cg, const Xs& xs) { return circ_corr(parameter(cg, pv), xs[0]); });
  BOOST_CHECK_EQUAL(n, 4u + 12u);
  // the same node on both sides
  n = test::check_gradients(m, {{Dim({4}), test::test_values(4)}},
                            [&](ComputationGraph&, const Xs& xs) { return circ_corr(xs[0], xs[0]); });
  BOOST_CHECK_EQUAL(n, 4u + 4u);
}

BOOST_AUTO_TEST_CASE(circ_errors) {
  ComputationGraph cg;
  Expression u = input(cg, Dim({3}), {1, 2, 3});
  Expression v = input(cg, Dim({4}), {1, 2, 3, 4});
  test::check_throws_with<dim_error>([&] { circ_conv(u, v); }, {"circ_conv", "{3}", "{4}"});
  test::check_throws_with<dim_error>([&] { circ_corr(u, v); }, {"circ_corr", "{3}", "{4}"});
  Expression mtx = input(cg, Dim({3, 2}), std::vector<float>(6, 1.f));
  test::check_throws_with<dim_error>([&] { circ_conv(u, mtx); }, {"circ_conv", "{3,2}", "vectors"});
  Expression b2 = input(cg, Dim({3}, 2), std::vector<float>(6, 1.f));
  Expression b3 = input(cg, Dim({3}, 3), std::vector<float>(9, 1.f));
  test::check_throws_with<dim_error>([&] { circ_corr(b2, b3); }, {"circ_corr", "{3X2}", "{3X3}"});
}

// ================================================================ autobatching

BOOST_AUTO_TEST_CASE(conv_family_autobatched_matches_plain) {
  // Several instances of each op over a shared filter parameter: the batched
  // run must give the plain run's values and parameter gradients.
  auto run = [](int strategy, std::vector<float>* grad) {
    ParameterCollection m;
    Parameter pf = m.add_parameters({2, 2, 1, 2});
    Parameter pg = m.add_parameters({2, 2, 3});
    pf.set_value(test::test_values(8, 0.1f));
    pg.set_value(test::test_values(12, -0.1f));
    ComputationGraph cg;
    cg.set_autobatch(strategy);
    std::vector<Expression> losses;
    for (unsigned k = 0; k < 3; ++k) {
      Expression x = input(cg, Dim({4, 3, 1}), test::test_values(12, 0.1f * k));
      Expression c = maxpooling2d(conv2d(x, parameter(cg, pf), {1, 1}, false), {2, 2}, {2, 1});
      Expression s = input(cg, Dim({2, 2}), test::test_values(4, -0.2f * k));
      Expression f = filter1d_narrow(s, parameter(cg, pg));
      Expression u = input(cg, Dim({3}), test::test_values(3, 0.3f * k));
      Expression cc = circ_conv(u, reshape(f, Dim({3})));
      losses.push_back(sum_elems(c) + sum_elems(cmult(cc, circ_corr(u, cc))));
    }
    Expression loss = sum(losses);
    float value = as_scalar(cg.forward(loss));
    cg.backward(loss);
    *grad = concat(as_vector(pf.get_storage().g), as_vector(pg.get_storage().g));
    return value;
  };
  test::check_autobatch_agrees(run);
}

// ================================================================ no allocations

BOOST_AUTO_TEST_CASE(conv_family_kernels_do_not_allocate) {
  // The same graph twice in one thread: the second run reuses the warm arenas, so
  // its forward and backward passes may not call operator new at all.
  ParameterCollection m;
  Parameter pf = m.add_parameters({3, 3, 2, 4});
  Parameter pb = m.add_parameters({4});
  pf.set_value(test::test_values(72, 0.1f));
  std::vector<float> image = test::test_values(12 * 10 * 2 * 2);
  std::vector<float> seq = test::test_values(4 * 9);
  long counted = -1;  // of the second run
  for (int run = 0; run < 2; ++run) {
    ComputationGraph cg;
    Expression x = input(cg, Dim({12, 10, 2}, 2), &image);
    Expression c = conv2d(x, parameter(cg, pf), parameter(cg, pb), {2, 1}, false);
    Expression p = maxpooling2d(rectify(c), {2, 2}, {2, 2});
    Expression s = input(cg, Dim({4, 9}), &seq);
    Expression f = filter1d_narrow(s, reshape(parameter(cg, pf), Dim({4, 3, 6})));
    Expression u = reshape(f, Dim({42}));
    Expression loss = sum_batches(sum_elems(p)) + sum_elems(circ_conv(u, u)) + sum_elems(circ_corr(u, u));
    counted = test::allocations_during([&] {
      cg.forward(loss);
      cg.backward(loss);
    });
  }
  if (counted >= 0)
    BOOST_CHECK_EQUAL(counted, 0);
  else
    BOOST_TEST_MESSAGE("allocation count skipped: operator new is replaced by a tool");
}
