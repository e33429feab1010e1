#define BOOST_TEST_MODULE ops_lstm
#include <cmath>
#include <cstdlib>

#include "alloc_counter.h"
#include "dynet_lite/core/arena.h"
#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/core/random.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/lstm.h"
#include "dynet_lite/ops/op_table.h"
#include "test_utils.h"

using namespace dynet_lite;
using test::check_close;
using test::check_gradients;
using test::check_throws_with;
using test::TestInput;

namespace {

using Xs = std::vector<Expression>;

// Counts of what ran, for the report at the end.
int g_value_tests = 0;
size_t g_gradient_elements = 0;
int g_gradient_checks = 0;

size_t grad_check(ParameterCollection& m, std::vector<TestInput> inputs, const test::Builder& b) {
  size_t n = check_gradients(m, std::move(inputs), b);
  BOOST_CHECK_GT(n, 0u);
  g_gradient_elements += n;
  ++g_gradient_checks;
  return n;
}
void values(const std::vector<float>& got, const std::vector<float>& want, double tol = 1e-6) {
  check_close(got, want, tol);
  ++g_value_tests;
}

// The tiny LSTM of the hand-computed tests: input 2, hidden 1 (rows i, f, o, g).
//   Wx = [ 0.1  0.2 ]   Wh = [ 0.2 ]   b = [ 0.4 ]
//        [-0.3  0.1 ]        [-0.2 ]       [ 0.2 ]
//        [ 0.2 -0.1 ]        [ 0.4 ]       [-0.2 ]
//        [ 0.4  0.3 ]        [-0.6 ]       [ 0.3 ]
const std::vector<float> kWx = {0.1f, -0.3f, 0.2f, 0.4f, 0.2f, 0.1f, -0.1f, 0.3f};  // column-major
const std::vector<float> kWh = {0.2f, -0.2f, 0.4f, -0.6f};
const std::vector<float> kB = {0.4f, 0.2f, -0.2f, 0.3f};

// Parameters Wx {4h, in}, Wh {4h, h}, b {4h} with fixed values.
struct LSTMParams {
  ParameterCollection m;
  Parameter wx, wh, b;
  unsigned in, hid;
  LSTMParams(unsigned in, unsigned hid, float scale = 0.6f) : in(in), hid(hid) {
    wx = m.add_parameters({4 * hid, in}, "Wx");
    wh = m.add_parameters({4 * hid, hid}, "Wh");
    b = m.add_parameters({4 * hid}, "b");
    std::vector<float> v = test::test_values(4 * hid * in);
    for (float& x : v) x *= scale;
    wx.set_value(v);
    v = test::test_values(4 * hid * hid, 0.1f);
    for (float& x : v) x *= scale;
    wh.set_value(v);
    v = test::test_values(4 * hid, -0.2f);
    for (float& x : v) x *= scale;
    b.set_value(v);
  }
  Xs exprs(ComputationGraph& cg) { return {parameter(cg, wx), parameter(cg, wh), parameter(cg, b)}; }
};

// The same step built from basic ops, with DyNet's +1 on the forget gate.
Expression composed_gates(Expression x, Expression h, Expression wx, Expression wh, Expression b, unsigned hid) {
  Expression pre = affine_transform({b, wx, x, wh, h});
  return concatenate({logistic(pick_range(pre, 0, hid)), logistic(pick_range(pre, hid, 2 * hid) + 1.f),
                      logistic(pick_range(pre, 2 * hid, 3 * hid)), tanh(pick_range(pre, 3 * hid, 4 * hid))});
}
Expression composed_c(Expression c, Expression g, unsigned hid) {
  return cmult(pick_range(g, hid, 2 * hid), c) + cmult(pick_range(g, 0, hid), pick_range(g, 3 * hid, 4 * hid));
}
Expression composed_h(Expression c, Expression g, unsigned hid) {
  return cmult(pick_range(g, 2 * hid, 3 * hid), tanh(c));
}

// Fixed model of the hand tests, with the weights as inputs or as parameters.
struct TinyLSTM {
  ParameterCollection m;
  Parameter wx = m.add_parameters({4, 2}, "Wx"), wh = m.add_parameters({4, 1}, "Wh"), b = m.add_parameters({4}, "b");
  TinyLSTM() {
    wx.set_value(kWx);
    wh.set_value(kWh);
    b.set_value(kB);
  }
};

double logit(double y) { return std::log(y / (1.0 - y)); }

}  // namespace

// ================================================================ values by hand
BOOST_AUTO_TEST_SUITE(values_by_hand)

BOOST_AUTO_TEST_CASE(gates_one_instance) {
  // x = (1, 2), h = 0.5:  pre = Wx x + Wh h + b = (1, 0, 0, 1)
  // gates = (sigmoid 1, sigmoid(0 + 1), sigmoid 0, tanh 1): DyNet's forget bias
  TinyLSTM t;
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}), {1.f, 2.f});
  Expression h = input(cg, Dim({1}), {0.5f});
  Expression g = vanilla_lstm_gates(x, h, parameter(cg, t.wx), parameter(cg, t.wh), parameter(cg, t.b));
  BOOST_CHECK(g.dim() == Dim({4}));
  values(as_vector(cg.forward(g)), {0.731058579f, 0.731058579f, 0.5f, 0.761594156f});
}

// DyNet 2.1's documented values for its fused gates (its test-rnn.cc
// lstm_node_gates_fwd / _dropout_fwd): the forget gate includes the +1.
BOOST_AUTO_TEST_CASE(gates_dynet_values) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}, 2), {0.f, 0.1f, 0.2f, 0.3f});
  Expression h = input(cg, Dim({2}, 2), {0.f, -0.1f, 0.2f, -0.3f});
  Expression wx = input(cg, Dim({8, 2}), {0.f, 1.1f, 2.2f, 3.3f, 0.f, 1.1f, 2.2f, 3.3f, 0.f, 1.1f, 2.2f, 3.3f, 0.f,
                                          1.1f, 2.2f, 3.3f});
  Expression wh = input(cg, Dim({8, 2}), {0.1f, 1.2f, 2.3f, 3.4f, 0.1f, 1.2f, 2.3f, 3.4f, 0.1f, 1.2f, 2.3f, 3.4f,
                                          0.1f, 1.2f, 2.3f, 3.4f});
  Expression b = input(cg, Dim({8}), {0.f, 0.1f, 0.f, 0.1f, 0.f, 0.1f, 0.f, 0.1f});
  values(as_vector(cg.forward(vanilla_lstm_gates(x, h, wx, wh, b))),
         {0.497500021f, 0.522484825f, 0.729087922f, 0.748381722f, 0.497500021f, 0.522484825f, -0.009999656681f,
          0.08975778475f, 0.497500021f, 0.629483112f, 0.866458277f, 0.917586682f, 0.497500021f, 0.629483112f,
          0.7013741309f, 0.8874941329f},
         1e-6);
  Expression mx = input(cg, Dim({2}, 2), {0.f, 1.f, 1.f, 1.f});
  Expression mh = input(cg, Dim({2}, 2), {0.f, 0.f, 1.f, 1.f});
  values(as_vector(cg.forward(vanilla_lstm_gates_dropout(x, h, wx, wh, b, mx, mh))),
         {0.5f, 0.5523079096f, 0.7720635494f, 0.8069013158f, 0.5f, 0.5523079096f, 0.2165180615f, 0.4053213087f,
          0.497500021f, 0.629483112f, 0.866458277f, 0.917586682f, 0.497500021f, 0.629483112f, 0.7013741309f,
          0.8874941329f},
         1e-6);
}

BOOST_AUTO_TEST_CASE(gates_batch_and_broadcast) {
  // x batch {(1, 2), (0, -1)}, h = 0.5 for both (a batch of 1 broadcast):
  //   instance 2: pre = -Wx[:,1] + 0.5 Wh + b = (0.3, 0, 0.1, -0.3)
  // (the forget gate is sigmoid(pre_f + 1), DyNet's bias)
  // then h batch {0.5, -1} with x (0, -1) for both:
  //   instance 2: pre = -Wx[:,1] - Wh + b = (0, 0.3, -0.5, 0.6)
  TinyLSTM t;
  ComputationGraph cg;
  Xs w = {parameter(cg, t.wx), parameter(cg, t.wh), parameter(cg, t.b)};
  Expression xb = input(cg, Dim({2}, 2), {1.f, 2.f, 0.f, -1.f});
  Expression h1 = input(cg, Dim({1}), {0.5f});
  Expression g = vanilla_lstm_gates(xb, h1, w[0], w[1], w[2]);
  BOOST_CHECK(g.dim() == Dim({4}, 2));
  values(as_vector(cg.forward(g)),
         {0.731058579f, 0.731058579f, 0.5f, 0.761594156f, 0.574442517f, 0.731058579f, 0.524979187f, -0.291312612f});
  Expression x1 = input(cg, Dim({2}), {0.f, -1.f});
  Expression hb = input(cg, Dim({1}, 2), {0.5f, -1.f});
  Expression g2 = vanilla_lstm_gates(x1, hb, w[0], w[1], w[2]);
  values(as_vector(cg.forward(g2)),
         {0.574442517f, 0.731058579f, 0.524979187f, -0.291312612f, 0.5f, 0.785834983f, 0.377540669f, 0.537049567f});
}

BOOST_AUTO_TEST_CASE(cell_and_output) {
  // gates (i, f, o, g) = (0.731058579, 0.5, 0.5, 0.761594156), c_tm1 = 2:
  //   c = 0.5 * 2 + 0.731058579 * 0.761594156 = 1.556769941
  //   h = 0.5 * tanh(1.556769941) = 0.5 * 0.914895619 = 0.457447810
  ComputationGraph cg;
  Expression g = input(cg, Dim({4}), {0.731058579f, 0.5f, 0.5f, 0.761594156f});
  Expression c0 = input(cg, Dim({1}), {2.f});
  Expression c = vanilla_lstm_c(c0, g);
  Expression h = vanilla_lstm_h(c, g);
  values(as_vector(cg.forward(c)), {1.556769941f});
  values(as_vector(cg.forward(h)), {0.457447810f});
  // A batch of two cells sharing one gates vector; c_tm1 = 0 leaves i * g.
  Expression cb = input(cg, Dim({1}, 2), {2.f, 0.f});
  values(as_vector(cg.forward(vanilla_lstm_c(cb, g))), {1.556769941f, 0.556769941f});
  // h of c = 0 is 0 whatever o is; tanh(c) saturates at 1 for large c.
  Expression ch = input(cg, Dim({1}, 2), {0.f, 40.f});
  values(as_vector(cg.forward(vanilla_lstm_h(ch, g))), {0.f, 0.5f});
}

BOOST_AUTO_TEST_CASE(full_step) {
  // The whole step of gates_one_instance with c_tm1 = 2:
  //   c = sigmoid(1) * 2 + sigmoid(1) * tanh(1) = 2.018887;  h = 0.5 tanh(c)
  TinyLSTM t;
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}), {1.f, 2.f});
  Expression h = input(cg, Dim({1}), {0.5f});
  Expression c0 = input(cg, Dim({1}), {2.f});
  Expression g = vanilla_lstm_gates(x, h, parameter(cg, t.wx), parameter(cg, t.wh), parameter(cg, t.b));
  Expression c = vanilla_lstm_c(c0, g);
  values(as_vector(cg.forward(vanilla_lstm_h(c, g))), {0.482668977f});
}

BOOST_AUTO_TEST_CASE(dropout_masks) {
  // x = (1, 2) with mask_x = (2, 0), h = 0.5 with mask_h = 2:  x' = (2, 0), h' = 1
  //   pre = 2 Wx[:,0] + Wh + b = (0.8, -0.6, 0.6, 0.5); the forget gate sees -0.6 + 1
  TinyLSTM t;
  ComputationGraph cg;
  Xs w = {parameter(cg, t.wx), parameter(cg, t.wh), parameter(cg, t.b)};
  Expression x = input(cg, Dim({2}), {1.f, 2.f});
  Expression h = input(cg, Dim({1}), {0.5f});
  Expression mx = input(cg, Dim({2}), {2.f, 0.f});
  Expression mh = input(cg, Dim({1}), {2.f});
  Expression g = vanilla_lstm_gates_dropout(x, h, w[0], w[1], w[2], mx, mh);
  values(as_vector(cg.forward(g)), {0.689974481f, 0.598687660f, 0.645656306f, 0.462117157f});
  // The same inputs split in two and concatenated by the op.
  Expression xa = input(cg, Dim({1}), {1.f});
  Expression xc = input(cg, Dim({1}), {2.f});
  values(as_vector(cg.forward(vanilla_lstm_gates_dropout_concat({xa, xc}, h, w[0], w[1], w[2], mx, mh))),
         {0.689974481f, 0.598687660f, 0.645656306f, 0.462117157f});
  values(as_vector(cg.forward(vanilla_lstm_gates_concat({xa, xc}, h, w[0], w[1], w[2]))),
         {0.731058579f, 0.731058579f, 0.5f, 0.761594156f});
  // Masks of ones change nothing; masks of zeros leave the bias alone.
  Expression ones2 = input(cg, Dim({2}), {1.f, 1.f}), one1 = input(cg, Dim({1}), {1.f});
  values(as_vector(cg.forward(vanilla_lstm_gates_dropout(x, h, w[0], w[1], w[2], ones2, one1))),
         {0.731058579f, 0.731058579f, 0.5f, 0.761594156f});
  Expression zeros2 = input(cg, Dim({2}), {0.f, 0.f}), zero1 = input(cg, Dim({1}), {0.f});
  // pre = b = (0.4, 0.2, -0.2, 0.3), the forget gate's + 1
  values(as_vector(cg.forward(vanilla_lstm_gates_dropout(x, h, w[0], w[1], w[2], zeros2, zero1))),
         {0.598687660f, 0.768524783f, 0.450166003f, 0.291312612f});
}

BOOST_AUTO_TEST_CASE(saturation) {
  // Very large pre-activations give exact 0 / 1 / -1 gates, never NaN.
  ComputationGraph cg;
  Expression x = input(cg, Dim({1}), {1.f});
  Expression h = input(cg, Dim({1}), {0.f});
  Expression wx = input(cg, Dim({4, 1}), {200.f, -200.f, 30.f, -200.f});
  Expression wh = input(cg, Dim({4, 1}), {0.f, 0.f, 0.f, 0.f});
  Expression b = input(cg, Dim({4}), {0.f, 0.f, 0.f, 0.f});
  Expression g = vanilla_lstm_gates(x, h, wx, wh, b);
  values(as_vector(cg.forward(g)), {1.f, 0.f, 1.f, -1.f}, 0.0);
  Expression c0 = input(cg, Dim({1}), {5.f});
  Expression hh = vanilla_lstm_h(vanilla_lstm_c(c0, g), g);  // c = 0 * 5 + 1 * -1 = -1
  values(as_vector(cg.forward(hh)), {-0.761594156f});
  Expression loss = sum_elems(hh);
  cg.backward(loss, true);
  for (float v : as_vector(cg.get_gradient(x))) BOOST_CHECK(std::isfinite(v));
  for (float v : as_vector(cg.get_gradient(wx))) BOOST_CHECK(std::isfinite(v));
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ against basic ops
BOOST_AUTO_TEST_SUITE(against_composed)

// Runs a two-step LSTM (fused or composed) and returns the values of h2 and every
// gradient (parameters, then x, h, c inputs).
std::vector<float> run_steps(LSTMParams& p, bool fused, unsigned batch, bool dropout, unsigned h_batch,
                             bool zero_h0 = false) {
  const unsigned in = p.in, hid = p.hid;
  ComputationGraph cg;
  Xs w = p.exprs(cg);
  Expression x1 = input(cg, Dim({in}, batch), test::test_values(in * batch, 0.2f));
  Expression x2 = input(cg, Dim({in}, batch), test::test_values(in * batch, -0.3f));
  Expression h0 = input(cg, Dim({hid}, h_batch),
                        zero_h0 ? std::vector<float>(hid * h_batch, 0.f) : test::test_values(hid * h_batch, 0.1f));
  Expression c0 = input(cg, Dim({hid}, h_batch), test::test_values(hid * h_batch, -0.1f));
  std::vector<float> mxv(in * batch), mhv(hid * batch);
  for (size_t k = 0; k < mxv.size(); ++k) mxv[k] = (k % 3 == 1) ? 0.f : 1.5f;
  for (size_t k = 0; k < mhv.size(); ++k) mhv[k] = (k % 4 == 2) ? 0.f : 1.5f;
  Expression mx = input(cg, Dim({in}, batch), mxv), mh = input(cg, Dim({hid}, batch), mhv);
  Expression h = h0, c = c0;
  for (Expression x : {x1, x2}) {
    Expression g;
    if (fused)
      g = dropout ? vanilla_lstm_gates_dropout(x, h, w[0], w[1], w[2], mx, mh)
                  : vanilla_lstm_gates(x, h, w[0], w[1], w[2]);
    else
      g = dropout ? composed_gates(cmult(x, mx), cmult(h, mh), w[0], w[1], w[2], hid)
                  : composed_gates(x, h, w[0], w[1], w[2], hid);
    c = fused ? vanilla_lstm_c(c, g) : composed_c(c, g, hid);
    h = fused ? vanilla_lstm_h(c, g) : composed_h(c, g, hid);
  }
  Expression loss = test::weighted_reduce(cg, concatenate({h, c}));
  std::vector<float> out = as_vector(cg.forward(h));
  cg.forward(loss);
  cg.backward(loss, true);
  for (Parameter q : {p.wx, p.wh, p.b}) {
    std::vector<float> gq = as_vector(q.get_storage().g);
    out.insert(out.end(), gq.begin(), gq.end());
  }
  p.m.reset_gradient();
  for (Expression e : {x1, x2, h0, c0, mx, mh}) {
    std::vector<float> ge = as_vector(cg.get_gradient(e));
    out.insert(out.end(), ge.begin(), ge.end());
  }
  return out;
}

BOOST_AUTO_TEST_CASE(values_and_gradients_match) {
  LSTMParams p(5, 3);
  for (unsigned batch : {1u, 3u}) {
    for (bool dropout : {false, true}) {
      BOOST_TEST_CONTEXT("batch " << batch << (dropout ? " dropout" : "")) {
        values(run_steps(p, true, batch, dropout, batch), run_steps(p, false, batch, dropout, batch), 1e-5);
      }
    }
  }
  // h_tm1 and c_tm1 with a batch of 1 broadcast against x with a batch of 3
  values(run_steps(p, true, 3, false, 1), run_steps(p, false, 3, false, 1), 1e-5);
  // An h_tm1 of zeros broadcast (the builders' zero state): the fused gates skip
  // W_h h_tm1 and its dW_h term, but h_tm1's own gradient W_h^T dpre must remain.
  for (unsigned batch : {1u, 3u})
    for (bool dropout : {false, true}) {
      BOOST_TEST_CONTEXT("zero h0, batch " << batch << (dropout ? " dropout" : "")) {
        std::vector<float> fused = run_steps(p, true, batch, dropout, 1, true);
        values(fused, run_steps(p, false, batch, dropout, 1, true), 1e-5);
        // h0's gradient (before those of c0 {hid}, mx {in} and mh {hid} x batch) is not zero.
        const size_t at = fused.size() - (p.in + p.hid) * batch - 2 * p.hid;
        float norm = 0.f;
        for (unsigned k = 0; k < p.hid; ++k) norm += std::abs(fused[at + k]);
        BOOST_CHECK_GT(norm, 1e-4f);
      }
    }
}

BOOST_AUTO_TEST_CASE(large_sizes_use_the_blocked_product) {
  // Above the small-product threshold the kernels switch to Eigen's GEMM.
  LSTMParams p(40, 24, 0.2f);
  values(run_steps(p, true, 4, false, 4), run_steps(p, false, 4, false, 4), 1e-4);
  values(run_steps(p, true, 4, true, 4), run_steps(p, false, 4, true, 4), 1e-4);
  values(run_steps(p, true, 4, true, 1), run_steps(p, false, 4, true, 1), 1e-4);
  // Products split into panels (128 rows, 128 deep, 256 columns) with ragged edges:
  // Wx {160, 300}, a batch of 260.
  LSTMParams q(300, 40, 0.05f);
  values(run_steps(q, true, 260, true, 260), run_steps(q, false, 260, true, 260), 2e-4);
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ gradient checks
BOOST_AUTO_TEST_SUITE(gradients)

BOOST_AUTO_TEST_CASE(gates_batched_inputs_unbatched_weights) {
  LSTMParams p(3, 2);
  grad_check(p.m, {{Dim({3}, 2), test::test_values(6, 0.1f)}, {Dim({2}, 2), test::test_values(4, -0.2f)}},
             [&](ComputationGraph& cg, const Xs& xs) {
               Xs w = p.exprs(cg);
               return vanilla_lstm_gates(xs[0], xs[1], w[0], w[1], w[2]);
             });
  // one instance; and h with a batch of 1 against x with a batch of 3
  grad_check(p.m, {{Dim({3}), test::test_values(3, 0.1f)}, {Dim({2}), test::test_values(2, -0.2f)}},
             [&](ComputationGraph& cg, const Xs& xs) {
               Xs w = p.exprs(cg);
               return vanilla_lstm_gates(xs[0], xs[1], w[0], w[1], w[2]);
             });
  grad_check(p.m, {{Dim({3}, 3), test::test_values(9, 0.1f)}, {Dim({2}), test::test_values(2, -0.2f)}},
             [&](ComputationGraph& cg, const Xs& xs) {
               Xs w = p.exprs(cg);
               return vanilla_lstm_gates(xs[0], xs[1], w[0], w[1], w[2]);
             });
  // x with a batch of 1 against h with a batch of 2
  grad_check(p.m, {{Dim({3}), test::test_values(3, 0.1f)}, {Dim({2}, 2), test::test_values(4, -0.2f)}},
             [&](ComputationGraph& cg, const Xs& xs) {
               Xs w = p.exprs(cg);
               return vanilla_lstm_gates(xs[0], xs[1], w[0], w[1], w[2]);
             });
}

BOOST_AUTO_TEST_CASE(gates_weights_as_inputs) {
  // Weights given as (unbatched) inputs rather than parameters: their gradients
  // are checked as input gradients.
  ParameterCollection none;
  grad_check(none,
             {{Dim({2}, 2), test::test_values(4, 0.3f)},
              {Dim({1}, 2), test::test_values(2, -0.1f)},
              {Dim({4, 2}), kWx},
              {Dim({4, 1}), kWh},
              {Dim({4}), kB}},
             [&](ComputationGraph&, const Xs& xs) { return vanilla_lstm_gates(xs[0], xs[1], xs[2], xs[3], xs[4]); });
}

BOOST_AUTO_TEST_CASE(gates_concat) {
  LSTMParams p(5, 2);
  grad_check(p.m,
             {{Dim({2}, 2), test::test_values(4, 0.1f)},
              {Dim({3}, 2), test::test_values(6, 0.3f)},
              {Dim({2}, 2), test::test_values(4, -0.2f)}},
             [&](ComputationGraph& cg, const Xs& xs) {
               Xs w = p.exprs(cg);
               return vanilla_lstm_gates_concat({xs[0], xs[1]}, xs[2], w[0], w[1], w[2]);
             });
}

BOOST_AUTO_TEST_CASE(gates_dropout_every_input) {
  // Gradients reach x, h, the weights and both masks.
  LSTMParams p(3, 2);
  grad_check(p.m,
             {{Dim({3}, 2), test::test_values(6, 0.1f)},
              {Dim({2}, 2), test::test_values(4, -0.2f)},
              {Dim({3}, 2), {1.5f, 0.f, 1.5f, 0.7f, 1.5f, 0.f}},
              {Dim({2}, 2), {0.f, 1.5f, 1.2f, 1.5f}}},
             [&](ComputationGraph& cg, const Xs& xs) {
               Xs w = p.exprs(cg);
               return vanilla_lstm_gates_dropout(xs[0], xs[1], w[0], w[1], w[2], xs[2], xs[3]);
             });
  // masks with a batch of 1 shared by a batch of 3
  grad_check(p.m,
             {{Dim({3}, 3), test::test_values(9, 0.1f)},
              {Dim({2}, 3), test::test_values(6, -0.2f)},
              {Dim({3}), {1.5f, 0.f, 0.8f}},
              {Dim({2}), {1.3f, 0.6f}}},
             [&](ComputationGraph& cg, const Xs& xs) {
               Xs w = p.exprs(cg);
               return vanilla_lstm_gates_dropout(xs[0], xs[1], w[0], w[1], w[2], xs[2], xs[3]);
             });
  // x and h with a batch of 1, masks with a batch of 2
  grad_check(p.m,
             {{Dim({3}), test::test_values(3, 0.1f)},
              {Dim({2}), test::test_values(2, -0.2f)},
              {Dim({3}, 2), {1.5f, 0.f, 0.8f, 0.4f, 1.1f, 0.f}},
              {Dim({2}, 2), {1.3f, 0.6f, 0.f, 2.f}}},
             [&](ComputationGraph& cg, const Xs& xs) {
               Xs w = p.exprs(cg);
               return vanilla_lstm_gates_dropout(xs[0], xs[1], w[0], w[1], w[2], xs[2], xs[3]);
             });
}

BOOST_AUTO_TEST_CASE(gates_dropout_concat) {
  LSTMParams p(4, 2);
  grad_check(p.m,
             {{Dim({1}, 2), test::test_values(2, 0.1f)},
              {Dim({3}, 2), test::test_values(6, 0.3f)},
              {Dim({2}, 2), test::test_values(4, -0.2f)},
              {Dim({4}), {1.5f, 0.f, 0.8f, 1.1f}},
              {Dim({2}), {1.3f, 0.6f}}},
             [&](ComputationGraph& cg, const Xs& xs) {
               Xs w = p.exprs(cg);
               return vanilla_lstm_gates_dropout_concat({xs[0], xs[1]}, xs[2], w[0], w[1], w[2], xs[3], xs[4]);
             });
}

// Two batch elements of gates (hidden size 2) as a gates op would give them (in
// (0, 1) and (-1, 1)).
const std::vector<float> kGates = {0.3f, 0.8f, 0.6f, -0.4f, 0.2f,  0.55f, 0.9f, 0.35f,
                                   0.7f, 0.1f, 0.5f, 0.45f, -0.8f, 0.2f,  0.6f, 0.65f};

/// Gradient checks of f(c, gates), hidden size 2: c ({2}X2 values `c2`) and kGates
/// both batched, then c with a batch of 1 shared by two gates, and the other way round.
void check_cell_op(Expression (*f)(const Expression&, const Expression&), const std::vector<float>& c2) {
  ParameterCollection none;
  auto b = [f](ComputationGraph&, const Xs& xs) { return f(xs[0], xs[1]); };
  grad_check(none, {{Dim({2}, 2), c2}, {Dim({8}, 2), kGates}}, b);
  grad_check(none, {{Dim({2}), {c2[0], c2[1]}}, {Dim({8}, 2), kGates}}, b);
  grad_check(none, {{Dim({2}, 2), c2}, {Dim({8}), std::vector<float>(kGates.begin(), kGates.begin() + 8)}}, b);
}

BOOST_AUTO_TEST_CASE(cell) {
  check_cell_op(vanilla_lstm_c, {0.5f, -1.2f, 2.f, 0.3f});
  // hidden size 1
  ParameterCollection none;
  grad_check(
      none, {{Dim({1}, 3), {0.5f, -1.2f, 2.f}}, {Dim({4}, 3), std::vector<float>(kGates.begin(), kGates.begin() + 12)}},
      [](ComputationGraph&, const Xs& xs) { return vanilla_lstm_c(xs[0], xs[1]); });
}

BOOST_AUTO_TEST_CASE(output) { check_cell_op(vanilla_lstm_h, {0.5f, -1.2f, 2.f, 0.f}); }

BOOST_AUTO_TEST_CASE(two_steps_through_everything) {
  // x, h_0, c_0 batched, shared weights: the gradient flows back through two steps.
  LSTMParams p(3, 2);
  grad_check(p.m,
             {{Dim({3}, 2), test::test_values(6, 0.1f)},
              {Dim({3}, 2), test::test_values(6, -0.4f)},
              {Dim({2}, 2), test::test_values(4, -0.2f)},
              {Dim({2}, 2), test::test_values(4, 0.3f)}},
             [&](ComputationGraph& cg, const Xs& xs) {
               Xs w = p.exprs(cg);
               Expression h = xs[2], c = xs[3];
               for (unsigned t = 0; t < 2; ++t) {
                 Expression g = vanilla_lstm_gates(xs[t], h, w[0], w[1], w[2]);
                 c = vanilla_lstm_c(c, g);
                 h = vanilla_lstm_h(c, g);
               }
               return concatenate({h, c});
             });
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ weight noise
BOOST_AUTO_TEST_SUITE(weight_noise)

BOOST_AUTO_TEST_CASE(noise_is_applied_and_backward_uses_it) {
  // x runs over 0 and the unit vectors e_1..e_in (h = 0), so the noisy weights can be
  // read back from the gates: pre_0 = b', pre_j = b' + Wx'[:, j].
  const unsigned in = 6, hid = 8, N = in + 1;
  const float stddev = 0.5f;
  reseed_global_rng(20240611);  // graph engines are seeded from it: no flaky statistics
  LSTMParams p(in, hid, 0.3f);
  ComputationGraph cg;
  Xs w = p.exprs(cg);
  std::vector<float> xv(in * N, 0.f);
  for (unsigned j = 1; j <= in; ++j) xv[j * in + (j - 1)] = 1.f;
  Expression x = input(cg, Dim({in}, N), xv);
  Expression h = input(cg, Dim({hid}), std::vector<float>(hid, 0.f));
  Expression g = vanilla_lstm_gates(x, h, w[0], w[1], w[2], stddev);
  Expression loss = test::weighted_reduce(cg, g);
  cg.forward(loss);  // (forward recomputes every node: read g after it)
  std::vector<float> y = as_vector(g.value());
  cg.backward(loss, true);
  const unsigned rows = 4 * hid;
  std::vector<double> pre(rows * N);
  for (unsigned c = 0; c < N; ++c)
    for (unsigned r = 0; r < rows; ++r) {
      double v = y[c * rows + r];
      pre[c * rows + r] = r < 3 * hid ? logit(v) : std::atanh(v);
    }
  std::vector<float> wx = as_vector(p.wx.get_storage().values), bv = as_vector(p.b.get_storage().values);
  std::vector<double> wx_noisy(rows * in);
  double sum = 0, sum2 = 0;
  unsigned count = 0;
  for (unsigned r = 0; r < rows; ++r) {
    double nb = pre[r] - bv[r];
    sum += nb;
    sum2 += nb * nb;
    ++count;
    for (unsigned j = 0; j < in; ++j) {
      wx_noisy[j * rows + r] = pre[(j + 1) * rows + r] - pre[r];
      double nw = wx_noisy[j * rows + r] - wx[j * rows + r];
      sum += nw;
      sum2 += nw * nw;
      ++count;
    }
  }
  double mean = sum / count, sd = std::sqrt(sum2 / count - mean * mean);
  BOOST_TEST_MESSAGE("weight noise: " << count << " samples, mean " << mean << ", sd " << sd);
  BOOST_CHECK_SMALL(mean, 0.12);
  BOOST_CHECK_CLOSE(sd, stddev, 20.0);  // percent
  // dpre = w (dy) times the activation's derivative; dL/dx_c = Wx'^T dpre_c with the
  // noisy weights; dL/db = sum_c dpre_c; dL/dWx[:, j] = dpre_(j+1).
  std::vector<float> dx = as_vector(cg.get_gradient(x));
  std::vector<float> db = as_vector(p.b.get_storage().g), dwx = as_vector(p.wx.get_storage().g);
  std::vector<double> dpre(rows * N), db_want(rows, 0.0);
  for (unsigned k = 0; k < rows * N; ++k) {
    double wk = 0.5 + 0.37 * static_cast<double>((k * 7) % 11) / 11.0;
    double v = y[k];
    dpre[k] = (k % rows) < 3 * hid ? wk * v * (1 - v) : wk * (1 - v * v);
    db_want[k % rows] += dpre[k];
  }
  for (unsigned r = 0; r < rows; ++r) BOOST_CHECK_SMALL(db[r] - db_want[r], 1e-4);
  for (unsigned j = 0; j < in; ++j)
    for (unsigned r = 0; r < rows; ++r) BOOST_CHECK_SMALL(dwx[j * rows + r] - dpre[(j + 1) * rows + r], 1e-4);
  double max_noise_effect = 0;
  for (unsigned c = 0; c < N; ++c)
    for (unsigned j = 0; j < in; ++j) {
      double want = 0, clean = 0;
      for (unsigned r = 0; r < rows; ++r) {
        want += wx_noisy[j * rows + r] * dpre[c * rows + r];
        clean += wx[j * rows + r] * dpre[c * rows + r];
      }
      BOOST_CHECK_SMALL(dx[c * in + j] - want, 2e-3);
      max_noise_effect = std::max(max_noise_effect, std::fabs(want - clean));
    }
  BOOST_CHECK_GT(max_noise_effect, 1e-2);  // the check above could tell the noisy weights from the clean ones
  ++g_value_tests;
  p.m.reset_gradient();
}

BOOST_AUTO_TEST_CASE(fresh_noise_per_node_and_none_without_it) {
  LSTMParams p(3, 2);
  ComputationGraph cg;
  Xs w = p.exprs(cg);
  Expression x = input(cg, Dim({3}), test::test_values(3));
  Expression h = input(cg, Dim({2}), test::test_values(2, 0.2f));
  std::vector<float> clean = as_vector(cg.forward(vanilla_lstm_gates(x, h, w[0], w[1], w[2])));
  std::vector<float> noisy1 = as_vector(cg.forward(vanilla_lstm_gates(x, h, w[0], w[1], w[2], 0.1f)));
  std::vector<float> noisy2 = as_vector(cg.forward(vanilla_lstm_gates(x, h, w[0], w[1], w[2], 0.1f)));
  BOOST_CHECK(noisy1 != clean);
  BOOST_CHECK(noisy2 != noisy1);
  values(as_vector(cg.forward(vanilla_lstm_gates(x, h, w[0], w[1], w[2], 0.f))), clean, 0.0);
  // the same noise level for the dropout variant
  Expression mx = input(cg, Dim({3}), {1.f, 1.f, 1.f}), mh = input(cg, Dim({2}), {1.f, 1.f});
  BOOST_CHECK(as_vector(cg.forward(vanilla_lstm_gates_dropout(x, h, w[0], w[1], w[2], mx, mh, 0.1f))) != clean);
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ errors
BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(dim_errors_name_op_and_dims) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}), {1.f, 2.f});
  Expression h = input(cg, Dim({1}), {0.5f});
  Expression wx = input(cg, Dim({4, 2}), kWx), wh = input(cg, Dim({4, 1}), kWh), b = input(cg, Dim({4}), kB);
  Expression xm = input(cg, Dim({2, 3}), test::test_values(6));
  check_throws_with<dim_error>([&] { vanilla_lstm_gates(xm, h, wx, wh, b); },
                               {"vanilla_lstm_gates", "x_t {2,3}", "column vector"});
  Expression hm = input(cg, Dim({1, 2}), {1.f, 2.f});
  check_throws_with<dim_error>([&] { vanilla_lstm_gates(x, hm, wx, wh, b); }, {"vanilla_lstm_gates", "h_tm1 {1,2}"});
  Expression wx83 = input(cg, Dim({8, 3}), test::test_values(24));
  check_throws_with<dim_error>([&] { vanilla_lstm_gates(x, h, wx83, wh, b); },
                               {"vanilla_lstm_gates", "Wx {8,3}", "{4,2}", "x_t {2}", "h_tm1 {1}"});
  Expression wh42 = input(cg, Dim({4, 2}), test::test_values(8));
  check_throws_with<dim_error>([&] { vanilla_lstm_gates(x, h, wx, wh42, b); },
                               {"vanilla_lstm_gates", "Wh {4,2}", "{4,1}"});
  Expression b3 = input(cg, Dim({3}), test::test_values(3));
  check_throws_with<dim_error>([&] { vanilla_lstm_gates(x, h, wx, wh, b3); }, {"vanilla_lstm_gates", "b {3}", "{4}"});
  Expression wxb = input(cg, Dim({4, 2}, 2), test::test_values(16));
  check_throws_with<dim_error>([&] { vanilla_lstm_gates(x, h, wxb, wh, b); },
                               {"vanilla_lstm_gates", "not be batched", "{4,2X2}"});
  Expression x2 = input(cg, Dim({2}, 2), test::test_values(4)), h3 = input(cg, Dim({1}, 3), test::test_values(3));
  check_throws_with<dim_error>([&] { vanilla_lstm_gates(x2, h3, wx, wh, b); },
                               {"vanilla_lstm_gates", "x_t {2X2}", "h_tm1 {1X3}"});
  // dropout masks
  Expression m3 = input(cg, Dim({3}), test::test_values(3)), m1 = input(cg, Dim({1}), {1.f});
  check_throws_with<dim_error>([&] { vanilla_lstm_gates_dropout(x, h, wx, wh, b, m3, m1); },
                               {"vanilla_lstm_gates_dropout", "dropout_mask_x {3}", "{2}"});
  Expression m2 = input(cg, Dim({2}), {1.f, 1.f});
  check_throws_with<dim_error>([&] { vanilla_lstm_gates_dropout(x, h, wx, wh, b, m2, m2); },
                               {"vanilla_lstm_gates_dropout", "dropout_mask_h {2}", "{1}"});
  Expression m1b3 = input(cg, Dim({1}, 3), test::test_values(3));
  check_throws_with<dim_error>([&] { vanilla_lstm_gates_dropout(x2, h, wx, wh, b, m2, m1b3); },
                               {"vanilla_lstm_gates_dropout", "x_t {2X2}", "dropout_mask_h {1X3}"});
  // concatenated inputs of the wrong total size
  check_throws_with<dim_error>(
      [&] {
        vanilla_lstm_gates_concat({x, h, h}, h, wx, wh, b);
      },
      {"vanilla_lstm_gates", "Wx {4,2}", "x_t {4}"});
  // cell and output
  Expression g = input(cg, Dim({4}), test::test_values(4)), g8 = input(cg, Dim({8}), test::test_values(8));
  check_throws_with<dim_error>([&] { vanilla_lstm_c(h, g8); }, {"vanilla_lstm_c", "gates_t {8}", "c_tm1 {1}"});
  check_throws_with<dim_error>([&] { vanilla_lstm_h(h, g8); }, {"vanilla_lstm_h", "gates_t {8}", "c_t {1}"});
  Expression g4b3 = input(cg, Dim({4}, 3), test::test_values(12)), c2 = input(cg, Dim({1}, 2), {1.f, 2.f});
  check_throws_with<dim_error>([&] { vanilla_lstm_c(c2, g4b3); }, {"vanilla_lstm_c", "c_tm1 {1X2}", "gates_t {4X3}"});
  check_throws_with<dim_error>([&] { vanilla_lstm_h(xm, g); }, {"vanilla_lstm_h", "c_t {2,3}", "column vector"});
  ++g_value_tests;  // (counted once: every error above named the op and the dims)
}

BOOST_AUTO_TEST_CASE(argument_errors) {
  ComputationGraph cg;
  Expression x = input(cg, Dim({2}), {1.f, 2.f});
  Expression h = input(cg, Dim({1}), {0.5f});
  Expression wx = input(cg, Dim({4, 2}), kWx), wh = input(cg, Dim({4, 1}), kWh), b = input(cg, Dim({4}), kB);
  check_throws_with<std::invalid_argument>([&] { vanilla_lstm_gates(x, h, wx, wh, b, -0.5f); },
                                           {"vanilla_lstm_gates", "weightnoise_std -0.5"});
  check_throws_with<std::invalid_argument>([&] { vanilla_lstm_gates_concat({}, h, wx, wh, b); },
                                           {"vanilla_lstm_gates_concat", "empty"});
  check_throws_with<std::invalid_argument>([&] { vanilla_lstm_gates_dropout_concat({}, h, wx, wh, b, h, h); },
                                           {"vanilla_lstm_gates_dropout_concat", "empty"});
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ batching and kernels
BOOST_AUTO_TEST_SUITE(batching)

struct AutobatchRun {
  std::vector<float> loss_and_values;
  std::vector<float> grads;
  AutobatchStats stats;
};

// Two instances of a two-step LSTM (the second step with dropout masks) in one graph.
AutobatchRun run_instances(LSTMParams& p, int strategy) {
  const unsigned in = p.in, hid = p.hid;
  ComputationGraph cg;
  cg.set_autobatch(strategy);
  Xs w = p.exprs(cg);
  Xs leaves, losses;
  Xs outs;
  for (unsigned k = 0; k < 2; ++k) {
    float o = 0.3f * k;
    Expression x1 = input(cg, Dim({in}), test::test_values(in, 0.1f + o));
    Expression x2 = input(cg, Dim({in}), test::test_values(in, -0.2f - o));
    Expression h = input(cg, Dim({hid}), test::test_values(hid, o));
    Expression c = input(cg, Dim({hid}), test::test_values(hid, -o));
    std::vector<float> mxv(in), mhv(hid);
    for (unsigned i = 0; i < in; ++i) mxv[i] = (i + k) % 3 == 0 ? 0.f : 1.5f;
    for (unsigned i = 0; i < hid; ++i) mhv[i] = (i + k) % 2 == 0 ? 0.f : 2.f;
    Expression mx = input(cg, Dim({in}), mxv), mh = input(cg, Dim({hid}), mhv);
    leaves.insert(leaves.end(), {x1, x2, h, c, mx, mh});
    Expression g1 = vanilla_lstm_gates(x1, h, w[0], w[1], w[2]);
    Expression c1 = vanilla_lstm_c(c, g1);
    Expression h1 = vanilla_lstm_h(c1, g1);
    Expression g2 = vanilla_lstm_gates_dropout(x2, h1, w[0], w[1], w[2], mx, mh);
    Expression c2 = vanilla_lstm_c(c1, g2);
    Expression h2 = vanilla_lstm_h(c2, g2);
    outs.insert(outs.end(), {g1, c1, h1, g2, c2, h2});
    losses.push_back(test::weighted_reduce(cg, concatenate({h2, c2})));
  }
  AutobatchRun r;
  r.loss_and_values = test::loss_and_values(cg, losses, outs);
  for (Parameter q : {p.wx, p.wh, p.b}) {
    std::vector<float> gq = as_vector(q.get_storage().g);
    r.grads.insert(r.grads.end(), gq.begin(), gq.end());
  }
  p.m.reset_gradient();
  for (Expression e : leaves) {
    std::vector<float> ge = as_vector(cg.get_gradient(e));
    r.grads.insert(r.grads.end(), ge.begin(), ge.end());
  }
  r.stats = cg.autobatch_stats();
  return r;
}

BOOST_AUTO_TEST_CASE(autobatch_equals_plain) {
  LSTMParams p(3, 2);
  AutobatchRun plain = run_instances(p, 0);
  for (int strategy : {1, 2}) {
    BOOST_TEST_CONTEXT("strategy " << strategy) {
      AutobatchRun batched = run_instances(p, strategy);
      values(batched.loss_and_values, plain.loss_and_values, 1e-6);
      values(batched.grads, plain.grads, 1e-5);
      // 12 LSTM nodes in pairs, at least: the pairs ran as one kernel each
      BOOST_CHECK_GE(batched.stats.batched_groups, 6u);
      BOOST_CHECK_LT(batched.stats.kernels, batched.stats.nodes);
    }
  }
}

BOOST_AUTO_TEST_CASE(op_table_rows) {
  test::check_elementwise_rows({{OpKind::VanillaLSTMGates, "vanilla_lstm_gates"},
                                {OpKind::VanillaLSTMGatesDropout, "vanilla_lstm_gates_dropout"},
                                {OpKind::VanillaLSTMC, "vanilla_lstm_c"},
                                {OpKind::VanillaLSTMH, "vanilla_lstm_h"}});
}

BOOST_AUTO_TEST_CASE(no_heap_allocation_in_kernels) {
  // Forward and backward of every argument, run straight from the op table on the
  // nodes of a built graph, for a small product and one above the threshold, with
  // dropout and weight noise.
  for (unsigned hid : {2u, 32u}) {
    const unsigned in = hid == 2 ? 3 : 16, N = 8;
    LSTMParams p(in, hid, 0.2f);
    ComputationGraph cg;
    Xs w = p.exprs(cg);
    Expression x = input(cg, Dim({in}, N), test::test_values(in * N));
    Expression h = input(cg, Dim({hid}, N), test::test_values(hid * N, 0.1f));
    Expression c = input(cg, Dim({hid}), test::test_values(hid, 0.1f));
    Expression mx = input(cg, Dim({in}), std::vector<float>(in, 1.5f));
    Expression mh = input(cg, Dim({hid}, N), std::vector<float>(hid * N, 2.f));
    Expression g = vanilla_lstm_gates_dropout(x, h, w[0], w[1], w[2], mx, mh, 0.1f);
    Expression cc = vanilla_lstm_c(c, g);
    Expression hh = vanilla_lstm_h(cc, g);
    Expression loss = sum_batches(sum_elems(hh));
    cg.forward(loss);
    cg.backward(loss, true);
    Arena graph_memory(cpu_device(), 1 << 20), scratch(cpu_device(), 1 << 20);
    std::mt19937 rng(1);
    ExecContext ctx(&graph_memory, &scratch, &rng, cpu_device());
    std::vector<float> buffer(1 << 16, 0.f), dyv(4 * hid * N, 0.5f);
    const long counted = test::allocations_during([&] {
      for (Expression e : {g, cc, hh}) {
        Node& n = cg.node(e.i);
        const OpInfo& info = op_info(n.op);
        const Tensor* xs[7];
        for (unsigned k = 0; k < n.num_args; ++k) xs[k] = &cg.node(n.args[k]).value;
        Tensor dy(n.value.d, dyv.data(), cpu_device(), DeviceMempool::NONE);
        info.forward[0](xs, n.num_args, n, ctx);
        for (unsigned k = 0; k < n.num_args; ++k) {
          Tensor dx(xs[k]->d, buffer.data(), cpu_device(), DeviceMempool::NONE);
          info.backward[0](xs, n.num_args, n, dy, k, dx, ctx);
        }
      }
    });
    if (counted >= 0)
      BOOST_CHECK_EQUAL(counted, 0);
    else
      BOOST_TEST_MESSAGE("allocation count skipped: operator new is replaced by a tool");
  }
}

// ---------------------------------------------------------------- CompactVanillaLSTMBuilder on the fused ops

// Two sequences (batch 2) through a 2-layer builder in one graph; returns the
// loss, the outputs and every parameter gradient.
std::vector<float> builder_run(CompactVanillaLSTMBuilder& lstm, ParameterCollection& m, int strategy,
                               AutobatchStats* stats = nullptr, unsigned* fused_nodes = nullptr) {
  ComputationGraph cg;
  cg.set_autobatch(strategy);
  lstm.new_graph(cg);
  Xs losses, outs;
  for (unsigned s = 0; s < 2; ++s) {
    lstm.start_new_sequence();
    for (unsigned t = 0; t < 3; ++t) {
      Expression x = input(cg, Dim({3}, 2), test::test_values(6, 0.2f * t - 0.3f * s));
      outs.push_back(lstm.add_input(x));
    }
    losses.push_back(test::weighted_reduce(cg, outs.back()));
  }
  Expression loss = sum(losses);
  std::vector<float> r = {as_scalar(cg.forward(loss))};
  for (Expression e : outs) {
    std::vector<float> v = as_vector(e.value());
    r.insert(r.end(), v.begin(), v.end());
  }
  cg.backward(loss);
  for (auto& p : m.parameters_list()) {
    std::vector<float> g = as_vector(p->g);
    r.insert(r.end(), g.begin(), g.end());
  }
  m.reset_gradient();
  if (stats) *stats = cg.autobatch_stats();
  if (fused_nodes) {
    *fused_nodes = 0;
    for (VariableIndex i = 0; i < cg.size(); ++i) {
      OpKind k = cg.node(i).op;
      *fused_nodes += k == OpKind::VanillaLSTMGates || k == OpKind::VanillaLSTMC || k == OpKind::VanillaLSTMH;
      BOOST_CHECK(k != OpKind::Logistic && k != OpKind::AffineTransform);
    }
  }
  return r;
}

BOOST_AUTO_TEST_CASE(compact_builder_uses_fused_ops_and_autobatches) {
  ParameterCollection m;
  CompactVanillaLSTMBuilder lstm(2, 3, 4, m);
  for (auto& layer : lstm.params)
    for (unsigned j = 0; j < 3; ++j) {
      std::vector<float> v = test::test_values(layer[j].get_storage().size(), 0.1f * j);
      for (float& x : v) x *= 0.5f;
      layer[j].set_value(v);
    }
  unsigned fused = 0;
  AutobatchStats stats;
  std::vector<float> plain = builder_run(lstm, m, 0, nullptr, &fused);
  BOOST_CHECK_EQUAL(fused, 2u * 3u * 2u * 3u);  // sequences x steps x layers x (gates, c, h)
  std::vector<float> batched = builder_run(lstm, m, 1, &stats);
  values(batched, plain, 1e-5);
  BOOST_CHECK_GT(stats.batched_groups, 0u);
  // The same step by hand from basic ops, for the first step of layer 0.
  ComputationGraph cg;
  lstm.new_graph(cg);
  lstm.start_new_sequence();
  Expression x = input(cg, Dim({3}, 2), test::test_values(6, -0.3f));
  lstm.add_input(x);
  std::vector<float> h_layer0 = as_vector(lstm.get_h(RNNPointer(0))[0].value());
  // The first step has no previous state: W_h (params[0][1]) takes no part.
  Expression wx = parameter(cg, lstm.params[0][0]), b = parameter(cg, lstm.params[0][2]);
  Expression pre = affine_transform({b, wx, x});
  Expression g = concatenate({logistic(pick_range(pre, 0, 12)), tanh(pick_range(pre, 12, 16))});
  Expression want = composed_h(cmult(pick_range(g, 0, 4), pick_range(g, 12, 16)), g, 4);
  values(h_layer0, as_vector(want.value()), 1e-6);
}

BOOST_AUTO_TEST_CASE(compact_builder_weight_noise_and_dropout) {
  ParameterCollection m;
  CompactVanillaLSTMBuilder lstm(1, 3, 2, m);
  std::vector<float> clean = builder_run(lstm, m, 0);
  lstm.set_weightnoise(0.2f);
  std::vector<float> noisy = builder_run(lstm, m, 0);
  BOOST_CHECK(noisy != clean);
  for (float v : noisy) BOOST_CHECK(std::isfinite(v));
  lstm.set_weightnoise(0.f);
  values(builder_run(lstm, m, 0), clean, 0.0);
  // Both dropout rates: one fused dropout node per step; one rate: the plain gates op.
  lstm.set_dropout(0.3f, 0.4f);
  ComputationGraph cg;
  lstm.new_graph(cg);
  lstm.start_new_sequence();
  Expression y = lstm.add_input(input(cg, Dim({3}), test::test_values(3)));
  unsigned dropout_nodes = 0;
  for (VariableIndex i = 0; i < cg.size(); ++i) dropout_nodes += cg.node(i).op == OpKind::VanillaLSTMGatesDropout;
  BOOST_CHECK_EQUAL(dropout_nodes, 1u);
  for (float v : as_vector(y.value())) BOOST_CHECK(std::isfinite(v));
  lstm.set_dropout(0.3f, 0.f);
  lstm.new_graph(cg);
  lstm.start_new_sequence();
  lstm.add_input(input(cg, Dim({3}), test::test_values(3)));
  unsigned gates_nodes = 0;
  for (VariableIndex i = 0; i < cg.size(); ++i) gates_nodes += cg.node(i).op == OpKind::VanillaLSTMGates;
  BOOST_CHECK_EQUAL(gates_nodes, 1u);
}

BOOST_AUTO_TEST_CASE(report) {
  BOOST_TEST_MESSAGE("lstm ops: " << g_value_tests << " value comparisons, " << g_gradient_checks
                                  << " gradient checks over " << g_gradient_elements << " elements");
  BOOST_CHECK_GT(g_gradient_checks, 0);
}

BOOST_AUTO_TEST_SUITE_END()
