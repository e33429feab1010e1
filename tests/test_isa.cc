#define BOOST_TEST_MODULE isa
// The CPU kernels of every instruction set this build and this CPU have
// (backends/cpu/isa.h) compute what the baseline's compute: a model that reaches
// the products (small and large), the fused LSTM steps, the activations, softmax
// and its loss, with and without automatic batching.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "dynet_lite/backends/cpu/gemm.h"
#include "dynet_lite/backends/cpu/isa.h"
#include "dynet_lite/lstm.h"
#include "dynet_lite/ops/op_table.h"
#include "test_utils.h"

using namespace dynet_lite;
using cpu::Isa;

namespace {

std::vector<Isa> available_isas() {
  std::vector<Isa> out;
  for (unsigned i = 0; i < cpu::kNumIsas; ++i)
    if (cpu::isa_available(static_cast<Isa>(i))) out.push_back(static_cast<Isa>(i));
  return out;
}

// Sets an instruction set for the scope, then puts the previous one back.
struct IsaScope {
  Isa saved = cpu::active_isa();
  explicit IsaScope(Isa isa) { cpu::set_active_isa(isa); }
  ~IsaScope() { cpu::set_active_isa(saved); }
};

struct Run {
  std::vector<float> losses;
  std::vector<float> grads;  // every parameter's and every lookup row's gradient
};

// Three sentences through a BiLSTM-like tagger step with a wide hidden layer (its
// products pass the small-product cut) and a large output layer (the packed and
// no-pack paths), one graph each strategy, the gradients after each backward.
Run run_model(int autobatch) {
  ParameterCollection m;
  LookupParameter emb = m.add_lookup_parameters(40, {24});
  VanillaLSTMBuilder lstm(1, 24, 96, m);
  Parameter w = m.add_parameters({160, 96});
  Parameter b = m.add_parameters({160});
  Parameter v = m.add_parameters({300, 160});
  // A product below the small-product cut whose rows are a multiple of 8 and
  // whose columns are not (AVX2's eight-column W^T dy and its remainder).
  Parameter u = m.add_parameters({16, 29});
  Parameter z = m.add_parameters({29});
  // Fixed, varied values: the generator's defaults could change with the library.
  for (auto& p : m.parameters_list()) {
    std::vector<float> vals = test::test_values(p->size(), 0.01f * p->size() / 7.f);
    for (float& x : vals) x *= 0.3f;
    std::copy(vals.begin(), vals.end(), p->values.v);
  }
  for (auto& p : m.lookup_parameters_list()) {
    std::vector<float> vals = test::test_values(p->all_values.d.size());
    std::copy(vals.begin(), vals.end(), p->all_values.v);
  }
  const std::vector<std::vector<unsigned>> sentences = {{1, 5, 7, 9, 2}, {3, 3, 8}, {11, 12, 13, 14, 15, 16, 17}};
  Run run;
  ComputationGraph cg;
  cg.set_autobatch(autobatch);
  lstm.new_graph(cg);
  std::vector<Expression> losses;
  for (const auto& s : sentences) {
    lstm.start_new_sequence();
    for (size_t t = 0; t < s.size(); ++t) {
      Expression h = lstm.add_input(lookup(cg, emb, s[t]));
      Expression hid = tanh(affine_transform({parameter(cg, b), parameter(cg, w), h}));
      Expression gate = logistic(hid);
      Expression scores = parameter(cg, v) * cmult(hid, gate);
      losses.push_back(pickneglogsoftmax(scores, (s[t] * 7 + t) % 300));
    }
  }
  Expression small = tanh(parameter(cg, u) * tanh(parameter(cg, z)));
  losses.push_back(sum_elems(cmult(small, small)));
  Expression loss = sum(losses);
  run.losses.push_back(as_scalar(cg.forward(loss)));
  std::vector<float> sm = as_vector(cg.forward(softmax(losses[0] * losses[1])));
  run.losses.insert(run.losses.end(), sm.begin(), sm.end());
  cg.backward(loss);
  for (auto& p : m.parameters_list())
    run.grads.insert(run.grads.end(), p->g.v, p->g.v + p->size());
  for (auto& p : m.lookup_parameters_list()) {
    const std::vector<float> g = test::table_gradient(*p);
    run.grads.insert(run.grads.end(), g.begin(), g.end());
  }
  return run;
}

void check_close_rel(const std::vector<float>& got, const std::vector<float>& want, const char* what, Isa isa) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  double scale = 0;
  for (float x : want) scale = std::max(scale, static_cast<double>(std::fabs(x)));
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > 1e-4 * scale + 1e-6) ++bad;
  BOOST_CHECK_MESSAGE(bad == 0, what << " of " << cpu::isa_name(isa) << ": " << bad << " of " << got.size()
                                     << " elements differ from the baseline's by more than 1e-4 of "
                                     << scale);
  BOOST_CHECK_GT(scale, 0.0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_active_set_is_the_best_or_the_one_asked_for) {
  const char* env = std::getenv("DYNET_LITE_ISA");
  BOOST_CHECK(cpu::isa_available(Isa::Baseline));
  BOOST_CHECK(cpu::isa_available(cpu::best_isa()));
  if (!env || !*env) {
    BOOST_CHECK(cpu::active_isa() == cpu::best_isa());
  } else {
    std::string want = env;
    if (want == "baseline") want = cpu::isa_name(Isa::Baseline);
    BOOST_CHECK_EQUAL(cpu::isa_name(cpu::active_isa()), want);
  }
  BOOST_TEST_MESSAGE("CPU kernels: " << cpu::isa_name(cpu::active_isa()) << " (best "
                                     << cpu::isa_name(cpu::best_isa()) << ")");
}

BOOST_AUTO_TEST_CASE(an_unavailable_set_is_refused_by_name) {
  for (unsigned i = 0; i < cpu::kNumIsas; ++i) {
    const Isa isa = static_cast<Isa>(i);
    if (cpu::isa_available(isa)) continue;
    const Isa before = cpu::active_isa();
    test::check_throws_with<std::invalid_argument>([&] { cpu::set_active_isa(isa); }, {"set_active_isa", cpu::isa_name(isa)});
    BOOST_CHECK(cpu::active_isa() == before);
  }
}

BOOST_AUTO_TEST_CASE(every_set_computes_what_the_baseline_computes) {
  for (int autobatch : {0, 1}) {
    Run want;
    {
      IsaScope scope(Isa::Baseline);
      want = run_model(autobatch);
    }
    const OpInfo* baseline_rows = nullptr;
    {
      IsaScope scope(Isa::Baseline);
      baseline_rows = op_rows();
    }
    for (Isa isa : available_isas()) {
      IsaScope scope(isa);
      // Each set has its own rows, so the graphs below run its kernels.
      BOOST_CHECK_EQUAL(op_rows() == baseline_rows, isa == Isa::Baseline);
      Run got = run_model(autobatch);
      check_close_rel(got.losses, want.losses, "losses", isa);
      check_close_rel(got.grads, want.grads, "gradients", isa);
    }
  }
}

BOOST_AUTO_TEST_CASE(every_set_multiplies_large_products_exactly_enough) {
  // y = W x, dx += W^T dy, dW += dy x^T through the dispatching entry points, on
  // shapes that take the packed, the no-pack and Eigen's paths and the
  // matrix-vector products read in one stream.
  struct Shape {
    size_t m, k, n;
  };
  for (Shape s : {Shape{300, 160, 64}, Shape{64, 50, 3}, Shape{512, 256, 40}, Shape{17, 1000, 1},
                 Shape{640, 256, 1}, Shape{401, 100, 1}}) {
    std::vector<float> w = test::test_values(s.m * s.k), x = test::test_values(s.k * s.n, 0.5f),
                       dy = test::test_values(s.m * s.n, -0.25f);
    std::vector<float> y_ref(s.m * s.n, 0.f), dx_ref(s.k * s.n, 0.f), dw_ref(s.m * s.k, 0.f);
    for (size_t j = 0; j < s.n; ++j)
      for (size_t p = 0; p < s.k; ++p)
        for (size_t i = 0; i < s.m; ++i) {
          y_ref[j * s.m + i] += w[p * s.m + i] * x[j * s.k + p];
          dx_ref[j * s.k + p] += w[p * s.m + i] * dy[j * s.m + i];
          dw_ref[p * s.m + i] += dy[j * s.m + i] * x[j * s.k + p];
        }
    for (Isa isa : available_isas()) {
      IsaScope scope(isa);
      std::vector<float> y(s.m * s.n, 0.f), dx(s.k * s.n, 0.f), dw(s.m * s.k, 0.f);
      cpu::gemm(w.data(), x.data(), y.data(), s.m, s.k, s.n, false);
      cpu::gemm_tn(w.data(), dy.data(), dx.data(), s.m, s.k, s.n);
      cpu::gemm_nt(dy.data(), x.data(), dw.data(), s.m, s.k, s.n);
      check_close_rel(y, y_ref, "gemm", isa);
      check_close_rel(dx, dx_ref, "gemm_tn", isa);
      check_close_rel(dw, dw_ref, "gemm_nt", isa);
    }
  }
}

BOOST_AUTO_TEST_CASE(every_set_runs_the_passes_over_whole_parameters) {
  // The gradient norm and SimpleSGD's step through the set in use, on a length with a remainder for every vector width
  // and more than one of the SGD step's blocks.
  const size_t n = 5003;
  const std::vector<float> g = test::test_values(n, 0.75f), v0 = test::test_values(n, -0.5f);
  double norm_ref = 0;
  for (float x : g) norm_ref += double(x) * x;
  const float rate = 0.1f;
  const cpu::VectorKernels* baseline = nullptr;
  {
    IsaScope scope(Isa::Baseline);
    baseline = &cpu::active_vector_kernels();
  }
  for (Isa isa : available_isas()) {
    IsaScope scope(isa);
    const cpu::VectorKernels& k = cpu::active_vector_kernels();
    BOOST_CHECK_EQUAL(&k == baseline, isa == Isa::Baseline);
    BOOST_CHECK_CLOSE(k.squared_norm(g.data(), n), norm_ref, 1e-4);
    std::vector<float> values = v0, grads = g;
    k.sgd_step_and_clear(values.data(), grads.data(), n, rate);
    for (size_t i = 0; i < n; ++i) {
      BOOST_REQUIRE_SMALL(values[i] - (v0[i] - rate * g[i]), 1e-6f);  // FMA rounds once
      BOOST_REQUIRE_EQUAL(grads[i], 0.f);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_element_is_computed_the_same_whatever_the_tensor_length) {
  // Element-wise functions run a packet at a time, the tail of a tensor through
  // one padded packet (cpu::in_packets): an element's value and gradient do not
  // depend on how many elements follow it, in any set, and are the function's
  // to float rounding.  (Eigen runs a tail shorter than a packet one float at
  // a time, with other formulas for exp and log: with AVX-512 a tail of up to
  // 15 floats.)
  const unsigned full = 40;
  const std::vector<float> xs = test::test_values(full, 0.9f);
  struct Fn {
    const char* name;
    std::function<dl::Expression(const dl::Expression&)> f;
    double (*ref)(double);
  };
  const std::vector<Fn> fns = {
      {"tanh", [](const dl::Expression& x) { return dl::tanh(x); }, [](double x) { return std::tanh(x); }},
      {"logistic", [](const dl::Expression& x) { return dl::logistic(x); },
       [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"exp", [](const dl::Expression& x) { return dl::exp(x); }, [](double x) { return std::exp(x); }},
      {"log(exp)", [](const dl::Expression& x) { return dl::log(dl::exp(x)); }, [](double x) { return x; }},
      {"x * 1.5 + 0.25", [](const dl::Expression& x) { return x * 1.5f + 0.25f; },
       [](double x) { return x * 1.5 + 0.25; }}};
  for (Isa isa : available_isas()) {
    IsaScope scope(isa);
    for (const Fn& fn : fns) {
      // The values of fn on xs[0, n), and the gradient of their dot product with fixed weights.
      auto run = [&](unsigned n, std::vector<float>* grad) {
        ParameterCollection m;
        dl::Parameter p =
            m.add_parameters({n}, dl::ParameterInitFromVector(std::vector<float>(xs.begin(), xs.begin() + n)));
        ComputationGraph cg;
        dl::Expression y = fn.f(dl::parameter(cg, p));
        dl::Expression loss = dl::dot_product(y, dl::input(cg, {n}, test::test_values(n, 0.5f)));
        cg.forward(loss);
        cg.backward(loss);
        *grad = dl::as_vector(p.get_storage().g);
        return dl::as_vector(y.value());
      };
      std::vector<float> g_full, g;
      const std::vector<float> y_full = run(full, &g_full);
      for (unsigned i = 0; i < full; ++i)
        BOOST_CHECK_SMALL(y_full[i] - static_cast<float>(fn.ref(xs[i])), 2e-6f * std::max(1.f, std::abs(y_full[i])));
      for (unsigned n = 1; n < full; ++n) {
        const std::vector<float> y = run(n, &g);
        BOOST_TEST_CONTEXT(cpu::isa_name(isa) << ": " << fn.name << " of " << n << " elements") {
          BOOST_CHECK(std::memcmp(y.data(), y_full.data(), n * sizeof(float)) == 0);
          BOOST_CHECK(std::memcmp(g.data(), g_full.data(), n * sizeof(float)) == 0);
        }
      }
    }
  }
}
