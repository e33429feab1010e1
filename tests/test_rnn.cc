#define BOOST_TEST_MODULE rnn
#include "test_utils.h"

#include <cmath>
#include <memory>

#include "dynet_lite/except.h"
#include "dynet_lite/fast-lstm.h"
#include "dynet_lite/gru.h"
#include "dynet_lite/lstm.h"
#include "dynet_lite/rnn.h"

using namespace dynet_lite;

namespace {

using Vec = std::vector<double>;

/// y = W x with W stored column-major as DyNet does; `row0` picks a block of rows.
Vec matvec(const Parameter& p, const Vec& x, unsigned row0 = 0, unsigned nrows = 0) {
  const Dim d = p.dim();
  std::vector<float> w = as_vector(p.get_storage().values);
  if (nrows == 0) nrows = d.rows();
  Vec y(nrows, 0.0);
  for (unsigned r = 0; r < nrows; ++r)
    for (unsigned c = 0; c < d.cols(); ++c) y[r] += w[c * d.rows() + row0 + r] * x[c];
  return y;
}
Vec slice(const Parameter& p, unsigned row0, unsigned n) {
  std::vector<float> b = as_vector(p.get_storage().values);
  return Vec(b.begin() + row0, b.begin() + row0 + n);
}
Vec add(Vec a, const Vec& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}
double sigm(double v) { return 1.0 / (1.0 + std::exp(-v)); }

/// Runs `rnn` over `xs` (each of dimension xs[k].size()) and returns every output, concatenated.
std::vector<float> run_sequence(RNNBuilder& rnn, const std::vector<std::vector<float>>& xs, unsigned batch = 1) {
  ComputationGraph cg;
  rnn.new_graph(cg);
  rnn.start_new_sequence();
  std::vector<Expression> outs;
  for (auto& x : xs) outs.push_back(rnn.add_input(input(cg, Dim({static_cast<unsigned>(x.size() / batch)}, batch), x)));
  std::vector<float> r;
  for (auto& o : outs) {
    auto v = as_vector(cg.forward(o));
    r.insert(r.end(), v.begin(), v.end());
  }
  return r;
}

/// Gradient check over a 3-step sequence of 3-dimensional inputs (batch `bd`),
/// reducing all outputs; optionally with an initial state made from `h0_inputs`.
size_t grad_check_sequence(ParameterCollection& m, RNNBuilder& rnn, unsigned bd = 1, bool with_h0 = false,
                           unsigned hidden = 0) {
  std::vector<test::TestInput> inputs;
  for (int t = 0; t < 3; ++t) inputs.push_back({Dim({3}, bd), test::test_values(3 * bd, 0.1f * t)});
  const unsigned nh0 = with_h0 ? rnn.num_h0_components() : 0;
  for (unsigned k = 0; k < nh0; ++k) inputs.push_back({Dim({hidden}), test::test_values(hidden, 0.3f + 0.1f * k)});
  return test::check_gradients(m, inputs, [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    rnn.new_graph(cg);
    rnn.start_new_sequence(std::vector<Expression>(xs.begin() + 3, xs.end()));
    std::vector<Expression> outs;
    for (int t = 0; t < 3; ++t) outs.push_back(rnn.add_input(xs[t]));
    return concatenate(outs);
  });
}

/// The outputs of a reference recurrence over `xs`, from h = 0 (`h_dim` units):
/// `step(x, h)` returns the next h (and advances any other state it keeps).
template <class Step>
Vec reference_outputs(const std::vector<std::vector<float>>& xs, unsigned h_dim, Step step) {
  Vec h(h_dim, 0.0), out;
  for (auto& xf : xs) {
    h = step(Vec(xf.begin(), xf.end()), h);
    out.insert(out.end(), h.begin(), h.end());
  }
  return out;
}

/// A builder's outputs `got` agree with the reference outputs `want`.
void check_reference(const std::vector<float>& got, const Vec& want) {
  test::check_close(got, std::vector<float>(want.begin(), want.end()), 1e-5);
}

/// Gradient checks of a 2-layer `Builder` (3 inputs, 2 units): one sequence, and
/// a batch of 2 from an initial state.
template <class Builder>
void check_sequence_gradients() {
  ParameterCollection m;
  Builder rnn(2, 3, 2, m);
  BOOST_CHECK(grad_check_sequence(m, rnn) > 0);
  BOOST_CHECK(grad_check_sequence(m, rnn, 2, true, 2) > 0);
}

/// In a new sequence of `rnn` (3 inputs) in `cg`, add_input of `x4` ({4X2}) is a
/// dim_error naming `where`.
void check_rejects_input(ComputationGraph& cg, RNNBuilder& rnn, const Expression& x4, const char* where) {
  rnn.new_graph(cg);
  rnn.start_new_sequence();
  test::check_throws_with<dim_error>([&] { rnn.add_input(x4); }, {where, "{3}", "{4X2}"});
}

/// Every batch element of a batched run equals the run of that element alone.
void check_batch_matches_single(RNNBuilder& rnn, unsigned in_dim) {
  const unsigned B = 3;
  std::vector<std::vector<float>> batched(3), single_all;
  for (int t = 0; t < 3; ++t) batched[t] = test::test_values(in_dim * B, 0.2f * t - 0.1f);
  std::vector<float> got = run_sequence(rnn, batched, B);
  const size_t per_step = got.size() / 3;
  const size_t hid = per_step / B;
  for (unsigned b = 0; b < B; ++b) {
    std::vector<std::vector<float>> xs(3);
    for (int t = 0; t < 3; ++t) xs[t].assign(batched[t].begin() + b * in_dim, batched[t].begin() + (b + 1) * in_dim);
    std::vector<float> want = run_sequence(rnn, xs, 1);
    for (int t = 0; t < 3; ++t)
      for (size_t k = 0; k < hid; ++k)
        // Batched products sum in another order: float rounding, absolute near zero.
        BOOST_CHECK_MESSAGE(std::fabs(got[t * per_step + b * hid + k] - want[t * hid + k]) <=
                                1e-5 * (1 + std::fabs(want[t * hid + k])),
                            "step " << t << ", instance " << b << ", unit " << k << ": batched "
                                    << got[t * per_step + b * hid + k] << ", alone " << want[t * hid + k]);
  }
}

}  // namespace

// ---------------------------------------------------------------- values against a reference

BOOST_AUTO_TEST_CASE(vanilla_lstm_values) {
  ParameterCollection m;
  VanillaLSTMBuilder lstm(1, 3, 2, m);
  // non-zero biases so every term is exercised
  lstm.params[0][2].set_value({0.1f, -0.2f, 0.3f, 0.05f, -0.1f, 0.2f, 0.15f, -0.3f});
  std::vector<std::vector<float>> xs = {{0.5f, -1.f, 0.25f}, {0.1f, 0.2f, -0.3f}};
  std::vector<float> got = run_sequence(lstm, xs);
  // reference: gates i, f, o, g in blocks of 2 rows; forget bias 1
  const unsigned h = 2;
  Vec cp(h, 0.0);
  const Vec want = reference_outputs(xs, h, [&](const Vec& x, const Vec& hp) {
    Vec pre = add(add(matvec(lstm.params[0][0], x), matvec(lstm.params[0][1], hp)), slice(lstm.params[0][2], 0, 8));
    Vec hn(h), cn(h);
    for (unsigned k = 0; k < h; ++k) {
      double i = sigm(pre[k]), f = sigm(pre[h + k] + 1.0), o = sigm(pre[2 * h + k]), g = std::tanh(pre[3 * h + k]);
      cn[k] = f * cp[k] + i * g;
      hn[k] = o * std::tanh(cn[k]);
    }
    cp = cn;
    return hn;
  });
  check_reference(got, want);
}

BOOST_AUTO_TEST_CASE(gru_values) {
  ParameterCollection m;
  GRUBuilder gru(1, 3, 2, m);
  gru.params[0][2].set_value({0.1f, -0.2f});
  gru.params[0][5].set_value({0.3f, 0.05f});
  gru.params[0][8].set_value({-0.1f, 0.2f});
  std::vector<std::vector<float>> xs = {{0.5f, -1.f, 0.25f}, {0.1f, 0.2f, -0.3f}, {-0.7f, 0.4f, 0.9f}};
  std::vector<float> got = run_sequence(gru, xs);
  auto& p = gru.params[0];
  const Vec want = reference_outputs(xs, 2, [&](const Vec& x, const Vec& hp) {
    Vec z = add(add(matvec(p[0], x), matvec(p[1], hp)), slice(p[2], 0, 2));
    Vec r = add(add(matvec(p[3], x), matvec(p[4], hp)), slice(p[5], 0, 2));
    for (auto& v : z) v = sigm(v);
    for (auto& v : r) v = sigm(v);
    Vec rh(2);
    for (int k = 0; k < 2; ++k) rh[k] = r[k] * hp[k];
    Vec g = add(add(matvec(p[6], x), matvec(p[7], rh)), slice(p[8], 0, 2));
    Vec hn(2);
    for (int k = 0; k < 2; ++k) hn[k] = (1 - z[k]) * hp[k] + z[k] * std::tanh(g[k]);
    return hn;
  });
  check_reference(got, want);
}

BOOST_AUTO_TEST_CASE(simple_rnn_and_coupled_values) {
  ParameterCollection m;
  SimpleRNNBuilder rnn(1, 3, 2, m);
  CoupledLSTMBuilder cl(1, 3, 2, m);
  std::vector<std::vector<float>> xs = {{0.5f, -1.f, 0.25f}, {0.1f, 0.2f, -0.3f}};
  {
    std::vector<float> got = run_sequence(rnn, xs);
    auto ps = rnn.get_parameter_collection().get_parameters();
    const Vec want = reference_outputs(xs, 2, [&](const Vec& x, const Vec& hp) {
      Vec a = add(add(matvec(ps[0], x), matvec(ps[1], hp)), slice(ps[2], 0, 2));
      for (auto& v : a) v = std::tanh(v);
      return a;
    });
    check_reference(got, want);
  }
  {
    auto& p = cl.params[0];  // x2i h2i c2i bi x2o h2o c2o bo x2c h2c bc
    p[3].set_value({0.2f, -0.1f});
    p[7].set_value({0.05f, 0.3f});
    p[10].set_value({-0.2f, 0.1f});
    std::vector<float> got = run_sequence(cl, xs);
    Vec cp(2, 0.0);
    const Vec want = reference_outputs(xs, 2, [&](const Vec& x, const Vec& hp) {
      Vec i = add(add(add(matvec(p[0], x), matvec(p[1], hp)), matvec(p[2], cp)), slice(p[3], 0, 2));
      Vec g = add(add(matvec(p[8], x), matvec(p[9], hp)), slice(p[10], 0, 2));
      Vec cn(2);
      for (int k = 0; k < 2; ++k) {
        i[k] = sigm(i[k]);
        cn[k] = (1 - i[k]) * cp[k] + i[k] * std::tanh(g[k]);
      }
      Vec o = add(add(add(matvec(p[4], x), matvec(p[5], hp)), matvec(p[6], cn)), slice(p[7], 0, 2));
      Vec hn(2);
      for (int k = 0; k < 2; ++k) hn[k] = sigm(o[k]) * std::tanh(cn[k]);
      cp = cn;
      return hn;
    });
    check_reference(got, want);
  }
}

// FastLSTMBuilder: coupled gates without peepholes (c2i and c2o unused, as in DyNet).
BOOST_AUTO_TEST_CASE(fast_lstm_values) {
  ParameterCollection m;
  FastLSTMBuilder lstm(1, 3, 2, m);
  const auto& p = lstm.params[0];
  BOOST_REQUIRE_EQUAL(p.size(), 11u);
  BOOST_CHECK_EQUAL(lstm.get_parameter_collection().size(), 11u);
  BOOST_CHECK_EQUAL(p[2].dim(), Dim({2, 1}));  // c2i {h, 1}, as DyNet
  BOOST_CHECK_EQUAL(p[0].get_fullname(), "/fast-lstm-builder/_0");
  lstm.params[0][3].set_value({0.1f, -0.2f});   // bi
  lstm.params[0][7].set_value({0.3f, 0.05f});   // bo
  lstm.params[0][10].set_value({-0.1f, 0.2f});  // bc
  std::vector<std::vector<float>> xs = {{0.5f, -1.f, 0.25f}, {0.1f, 0.2f, -0.3f}, {-0.4f, 0.3f, 0.9f}};
  std::vector<float> got = run_sequence(lstm, xs);
  Vec c(2, 0.0);
  bool first = true;
  Vec want = reference_outputs(xs, 2, [&](const Vec& x, const Vec& h) {
    auto pre = [&](unsigned wx, unsigned wh, unsigned b) {
      return add(add(matvec(p[wx], x), first ? Vec(2, 0.0) : matvec(p[wh], h)), slice(p[b], 0, 2));
    };
    Vec i = pre(0, 1, 3), o = pre(4, 5, 7), g = pre(8, 9, 10), hn(2);
    for (unsigned k = 0; k < 2; ++k) {
      const double gi = sigm(i[k]);
      c[k] = (1 - gi) * c[k] + gi * std::tanh(g[k]);
      hn[k] = sigm(o[k]) * std::tanh(c[k]);
    }
    first = false;
    return hn;
  });
  check_reference(got, want);
}

BOOST_AUTO_TEST_CASE(fast_lstm_gradients_and_batches) {
  check_sequence_gradients<FastLSTMBuilder>();
  ParameterCollection m;
  FastLSTMBuilder lstm(2, 3, 2, m);
  check_batch_matches_single(lstm, 3);
  FastLSTMBuilder other(2, 3, 2, m);
  other.copy(lstm);
  BOOST_CHECK(run_sequence(other, {{0.1f, 0.2f, 0.3f}}) == run_sequence(lstm, {{0.1f, 0.2f, 0.3f}}));
}

// The fused gates add DyNet's forget bias of 1, as VanillaLSTMBuilder does by default.
BOOST_AUTO_TEST_CASE(compact_matches_vanilla_with_forget_bias_one) {
  ParameterCollection m;
  VanillaLSTMBuilder v(2, 3, 4, m, false, 1.f);
  CompactVanillaLSTMBuilder c(2, 3, 4, m);
  for (unsigned l = 0; l < 2; ++l)
    for (unsigned j = 0; j < 3; ++j) c.params[l][j].set_value(as_vector(v.params[l][j].get_storage().values));
  std::vector<std::vector<float>> xs = {test::test_values(3), test::test_values(3, 0.5f), test::test_values(3, -0.4f)};
  test::check_close(run_sequence(c, xs), run_sequence(v, xs), 1e-6);
}

// ---------------------------------------------------------------- gradients

BOOST_AUTO_TEST_CASE(gradients_simple_rnn) {
  check_sequence_gradients<SimpleRNNBuilder>();
  ParameterCollection m2;
  SimpleRNNBuilder lag(1, 3, 2, m2, true);
  test::check_gradients(m2, {{Dim({3}), test::test_values(3)}, {Dim({2}), test::test_values(2, 0.4f)}},
                        [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
                          lag.new_graph(cg);
                          lag.start_new_sequence();
                          lag.add_input(xs[0]);
                          return lag.add_auxiliary_input(xs[0], xs[1]);
                        });
}

BOOST_AUTO_TEST_CASE(gradients_vanilla_lstm) { check_sequence_gradients<VanillaLSTMBuilder>(); }

BOOST_AUTO_TEST_CASE(gradients_vanilla_lstm_layer_norm) {
  ParameterCollection m;
  VanillaLSTMBuilder lstm(1, 3, 3, m, true);
  BOOST_CHECK(grad_check_sequence(m, lstm) > 0);
}

BOOST_AUTO_TEST_CASE(gradients_coupled_lstm) { check_sequence_gradients<CoupledLSTMBuilder>(); }

BOOST_AUTO_TEST_CASE(gradients_compact_lstm) { check_sequence_gradients<CompactVanillaLSTMBuilder>(); }

BOOST_AUTO_TEST_CASE(gradients_gru) { check_sequence_gradients<GRUBuilder>(); }

// ---------------------------------------------------------------- batches

BOOST_AUTO_TEST_CASE(batched_equals_single) {
  ParameterCollection m;
  SimpleRNNBuilder a(2, 3, 4, m);
  VanillaLSTMBuilder b(2, 3, 4, m);
  VanillaLSTMBuilder bl(1, 3, 4, m, true);
  CoupledLSTMBuilder c(2, 3, 4, m);
  CompactVanillaLSTMBuilder d(2, 3, 4, m);
  GRUBuilder e(2, 3, 4, m);
  for (RNNBuilder* r : std::vector<RNNBuilder*>{&a, &b, &bl, &c, &d, &e}) check_batch_matches_single(*r, 3);
}

// ---------------------------------------------------------------- state handling

BOOST_AUTO_TEST_CASE(pointers_rewind_and_state_layout) {
  ParameterCollection m;
  VanillaLSTMBuilder lstm(2, 3, 2, m);
  ComputationGraph cg;
  lstm.new_graph(cg);
  lstm.start_new_sequence();
  Expression x0 = input(cg, Dim({3}), test::test_values(3));
  Expression x1 = input(cg, Dim({3}), test::test_values(3, 0.3f));
  Expression x2 = input(cg, Dim({3}), test::test_values(3, -0.3f));
  Expression h0 = lstm.add_input(x0);
  BOOST_CHECK_EQUAL(lstm.state().t, 0);
  Expression h1 = lstm.add_input(x1);
  lstm.rewind_one_step();
  BOOST_CHECK_EQUAL(lstm.state().t, 0);
  Expression h2 = lstm.add_input(x2);  // branches from step 0
  BOOST_CHECK_EQUAL(lstm.state().t, 2);
  BOOST_CHECK_EQUAL(lstm.get_head(2).t, 0);
  Expression h3 = lstm.add_input(RNNPointer(0), x1);  // same as h1
  test::check_close(as_vector(cg.forward(h3)), as_vector(cg.forward(h1)), 1e-7);
  BOOST_CHECK(as_vector(cg.forward(h2)) != as_vector(cg.forward(h1)));
  BOOST_CHECK_EQUAL(lstm.final_h().size(), 2u);
  std::vector<Expression> s = lstm.final_s();
  BOOST_REQUIRE_EQUAL(s.size(), 4u);
  BOOST_CHECK_EQUAL(s[3].i, lstm.back().i);  // cells first, then outputs
  BOOST_CHECK_EQUAL(lstm.get_h(RNNPointer(0))[1].i, h0.i);
  BOOST_CHECK_EQUAL(lstm.num_h0_components(), 4u);

  // An initial state given to start_new_sequence is the state before step 0:
  // continuing from it equals continuing the original sequence.
  lstm.start_new_sequence(lstm.get_s(RNNPointer(0)));
  BOOST_CHECK(lstm.get_h(RNNPointer(-1)).size() == 2u);
  Expression h4 = lstm.add_input(x1);
  test::check_close(as_vector(cg.forward(h4)), as_vector(cg.forward(h1)), 1e-7);

  // set_h keeps the cells of the state it starts from
  lstm.start_new_sequence();
  lstm.add_input(x0);
  std::vector<Expression> hs = lstm.final_h();
  lstm.set_h(RNNPointer(0), hs);
  Expression h5 = lstm.add_input(x1);
  test::check_close(as_vector(cg.forward(h5)), as_vector(cg.forward(h1)), 1e-7);
}

BOOST_AUTO_TEST_CASE(copy_parameters) {
  ParameterCollection m;
  GRUBuilder a(1, 3, 2, m), b(1, 3, 2, m);
  std::vector<std::vector<float>> xs = {test::test_values(3)};
  BOOST_CHECK(run_sequence(a, xs) != run_sequence(b, xs));
  b.copy(a);
  test::check_close(run_sequence(b, xs), run_sequence(a, xs), 1e-7);
  VanillaLSTMBuilder v(1, 3, 2, m);
  test::check_throws_with<std::invalid_argument>([&] { v.copy(a); }, {"VanillaLSTMBuilder::copy"});
  GRUBuilder big(1, 3, 4, m);
  test::check_throws_with<std::invalid_argument>([&] { big.copy(a); }, {"GRUBuilder::copy", "sizes"});
}

BOOST_AUTO_TEST_CASE(parameter_shapes) {
  ParameterCollection m;
  VanillaLSTMBuilder lstm(2, 3, 5, m);
  BOOST_CHECK(lstm.params[0][0].dim() == Dim({20, 3}));
  BOOST_CHECK(lstm.params[0][1].dim() == Dim({20, 5}));
  BOOST_CHECK(lstm.params[1][0].dim() == Dim({20, 5}));
  BOOST_CHECK_EQUAL(lstm.get_parameter_collection().get_parameters().size(), 6u);
  BOOST_CHECK_EQUAL(m.parameter_count(), 2 * (20 * 5 + 20) + 20 * 3 + 20 * 5);
}

// ---------------------------------------------------------------- dropout

namespace {
/// Gradient of the summed outputs with respect to each of `T` inputs of dimension n.
std::vector<std::vector<float>> input_grads(ComputationGraph& cg, RNNBuilder& rnn, unsigned n, unsigned T) {
  rnn.start_new_sequence();
  std::vector<Expression> xs, outs;
  for (unsigned t = 0; t < T; ++t) {
    xs.push_back(input(cg, Dim({n}), test::test_values(n, 0.1f * t)));
    outs.push_back(rnn.add_input(xs.back()));
  }
  Expression loss = sum_elems(sum(outs));
  cg.forward(loss);
  cg.backward(loss, true);
  std::vector<std::vector<float>> g;
  for (auto& x : xs) g.push_back(as_vector(cg.get_gradient(x)));
  return g;
}
std::vector<int> zero_pattern(const std::vector<float>& g) {
  std::vector<int> z;
  for (float v : g) z.push_back(v == 0.f);
  return z;
}
}  // namespace

BOOST_AUTO_TEST_CASE(variational_dropout_masks_fixed_per_sequence) {
  const unsigned n = 24;
  ParameterCollection m;
  VanillaLSTMBuilder lstm(1, n, 3, m);
  lstm.set_dropout(0.5f, 0.f);
  ComputationGraph cg;
  lstm.new_graph(cg);
  auto g1 = input_grads(cg, lstm, n, 3);
  auto p = zero_pattern(g1[0]);
  int zeros_count = 0;
  for (int z : p) zeros_count += z;
  BOOST_CHECK(zeros_count > 2 && zeros_count < 22);  // about half dropped
  BOOST_CHECK(zero_pattern(g1[1]) == p);             // the same mask at every step
  BOOST_CHECK(zero_pattern(g1[2]) == p);
  // a new sequence draws a new mask (different with overwhelming probability)
  ComputationGraph cg2;
  lstm.new_graph(cg2);
  auto g2 = input_grads(cg2, lstm, n, 1);
  auto g3 = input_grads(cg2, lstm, n, 1);
  BOOST_CHECK(zero_pattern(g2[0]) != zero_pattern(g3[0]) || zero_pattern(g2[0]) != p);
  // disabled: nothing is dropped and the outputs equal a builder that never had dropout
  lstm.disable_dropout();
  ComputationGraph cg3;
  lstm.new_graph(cg3);
  auto g4 = input_grads(cg3, lstm, n, 2);
  for (float v : g4[0]) BOOST_CHECK(v != 0.f);
  std::vector<std::vector<float>> xs = {test::test_values(n)};
  std::vector<float> off = run_sequence(lstm, xs);
  lstm.set_dropout(0.5f);
  std::vector<float> on = run_sequence(lstm, xs);
  BOOST_CHECK(on != off);
  lstm.disable_dropout();
  test::check_close(run_sequence(lstm, xs), off, 1e-7);
}

BOOST_AUTO_TEST_CASE(dropout_other_builders) {
  const unsigned n = 24;
  ParameterCollection m;
  CoupledLSTMBuilder c(1, n, 3, m);
  CompactVanillaLSTMBuilder d(1, n, 3, m);
  GRUBuilder g(1, n, 3, m);
  SimpleRNNBuilder s(1, n, 3, m);
  for (RNNBuilder* r : std::vector<RNNBuilder*>{&c, &d, &g, &s}) {
    std::vector<std::vector<float>> xs = {test::test_values(n), test::test_values(n, 0.2f)};
    std::vector<float> off = run_sequence(*r, xs);
    r->set_dropout(0.5f);
    ComputationGraph cg;
    r->new_graph(cg);
    auto gr = input_grads(cg, *r, n, 1);
    int zeros_count = 0;
    for (float v : gr[0]) zeros_count += v == 0.f;
    BOOST_CHECK(zeros_count > 2 && zeros_count < 22);
    BOOST_CHECK(run_sequence(*r, xs) != off);
    r->disable_dropout();
    test::check_close(run_sequence(*r, xs), off, 1e-7);
  }
  // coupled: masks are per sequence too
  c.set_dropout(0.5f, 0.f, 0.f);
  ComputationGraph cg;
  c.new_graph(cg);
  auto gc = input_grads(cg, c, n, 3);
  BOOST_CHECK(zero_pattern(gc[0]) == zero_pattern(gc[2]));
  test::check_throws_with<std::invalid_argument>([&] { c.set_dropout(1.5f); }, {"CoupledLSTMBuilder", "1.5"});
}

// ---------------------------------------------------------------- errors

BOOST_AUTO_TEST_CASE(errors_name_builder_and_dims) {
  ParameterCollection m;
  VanillaLSTMBuilder lstm(1, 3, 2, m);
  ComputationGraph cg;
  Expression x4 = input(cg, Dim({4}, 2), test::test_values(8));
  test::check_throws_with<std::invalid_argument>([&] { lstm.start_new_sequence(); }, {"VanillaLSTMBuilder", "new_graph"});
  lstm.new_graph(cg);
  test::check_throws_with<std::invalid_argument>([&] { lstm.add_input(x4); },
                                                 {"VanillaLSTMBuilder", "start_new_sequence"});
  lstm.start_new_sequence();
  test::check_throws_with<dim_error>([&] { lstm.add_input(x4); }, {"VanillaLSTMBuilder::add_input", "{3}", "{4X2}"});
  // the failed step left no trace
  BOOST_CHECK_EQUAL(lstm.state().t, -1);
  test::check_throws_with<index_error>([&] { lstm.add_input(RNNPointer(5), input(cg, Dim({3}), test::test_values(3))); },
                                       {"VanillaLSTMBuilder::add_input", "state 5"});
  Expression h = input(cg, Dim({2}), test::test_values(2));
  test::check_throws_with<std::invalid_argument>([&] { lstm.start_new_sequence({h}); },
                                                 {"VanillaLSTMBuilder::start_new_sequence", "1 expressions", "expected 2"});
  Expression h3 = input(cg, Dim({3}), test::test_values(3));
  test::check_throws_with<dim_error>([&] { lstm.start_new_sequence({h, h3}); }, {"VanillaLSTMBuilder", "{3}", "{2}"});
  test::check_throws_with<std::invalid_argument>([&] { lstm.set_dropout(-0.1f); }, {"VanillaLSTMBuilder", "-0.1"});
  test::check_throws_with<std::invalid_argument>([&] { VanillaLSTMBuilder bad(0, 3, 2, m); }, {"VanillaLSTMBuilder", "positive"});

  GRUBuilder gru(1, 3, 2, m);
  check_rejects_input(cg, gru, x4, "GRUBuilder::add_input");
  SimpleRNNBuilder rnn(1, 3, 2, m);
  check_rejects_input(cg, rnn, x4, "SimpleRNNBuilder::add_input");
  test::check_throws_with<std::invalid_argument>([&] { rnn.add_auxiliary_input(h3, h); }, {"support_lags"});
  CoupledLSTMBuilder cl(1, 3, 2, m);
  check_rejects_input(cg, cl, x4, "CoupledLSTMBuilder::add_input");
  CompactVanillaLSTMBuilder cv(1, 3, 2, m);
  check_rejects_input(cg, cv, x4, "CompactVanillaLSTMBuilder::add_input");
  // a cleared graph needs a new new_graph()
  ComputationGraph cg2;
  lstm.new_graph(cg2);
  lstm.start_new_sequence();
  cg2.clear();
  test::check_throws_with<std::invalid_argument>([&] { lstm.start_new_sequence(); }, {"cleared"});
}
