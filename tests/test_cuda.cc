#define BOOST_TEST_MODULE cuda
#include "test_utils.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dynet_lite/backends/cuda/cuda_check.h"
#include "dynet_lite/compile.h"
#include "dynet_lite/core/random.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/init.h"
#include "dynet_lite/lstm.h"
#include "dynet_lite/ops/op_table.h"
#include "dynet_lite/training.h"
#include "dynet_lite/treelstm.h"

// The CUDA backend.  Tests that need a GPU compare every GPU kernel (value and
// gradient, batched inputs) with the CPU kernel on the same graph; without a
// GPU they are reported as skipped, with the reason.  The tests at the end run
// everywhere: the build has the backend, asking for a missing GPU is a clear
// error, and the status checks format file:line.

namespace {

struct GpuState {
  dl::Device* device = nullptr;
  std::string reason;
};

// The first GPU, created once; the default device stays the CPU.
GpuState& gpu() {
  static GpuState state = [] {
    GpuState s;
    int count = 0;
    cudaError_t st = cudaGetDeviceCount(&count);
    if (st != cudaSuccess) {
      cudaGetLastError();
      s.reason = std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorName(st) + ")";
      return s;
    }
    if (count == 0) {
      s.reason = "no CUDA device (cudaGetDeviceCount: 0 devices)";
      return s;
    }
    dl::DynetParams p;
    p.ngpus_requested = true;
    p.requested_gpus = 1;
    p.random_seed = 7;
    dl::initialize(p);
    s.device = dl::get_device_manager_device("GPU:0");
    dl::set_default_device(dl::cpu_device());
    return s;
  }();
  return state;
}

struct NeedsGpu {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result r(gpu().device != nullptr);
    if (!r) r.message() << "needs a GPU: " << gpu().reason;
    return r;
  }
};

// A parameter of the test model: its shape and values (the same on each device).
struct ParamSpec {
  dl::Dim dim;
  std::vector<float> values;
};

using GpuBuilder = std::function<dl::Expression(dl::ComputationGraph&, const std::vector<dl::Expression>& inputs,
                                                const std::vector<dl::Expression>& params)>;

struct RunResult {
  std::vector<float> value;
  std::vector<std::vector<float>> input_grads, param_grads;
};

// Builds the graph on `dev`: inputs and parameters there, reduced with the
// harness's fixed weights, forward and full backward.
RunResult run_on(dl::Device* dev, const std::vector<test::TestInput>& inputs, const std::vector<ParamSpec>& params,
                 const GpuBuilder& build, int autobatch = 0) {
  dl::ParameterCollection m;
  std::vector<dl::Parameter> ps;
  for (const ParamSpec& p : params) ps.push_back(m.add_parameters(p.dim, dl::ParameterInitFromVector(p.values), "", dev));
  RunResult r;
  dl::ComputationGraph cg;
  cg.set_autobatch(autobatch);
  std::vector<dl::Expression> xs, pe;
  for (const auto& in : inputs) xs.push_back(dl::input(cg, in.dim, in.values, dev));
  for (auto& p : ps) pe.push_back(dl::parameter(cg, p));
  dl::Expression e = build(cg, xs, pe);
  dl::Dim d = e.dim();
  std::vector<float> w(d.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f + 0.37f * static_cast<float>((i * 7) % 11) / 11.f;
  dl::Expression loss = dl::sum_batches(dl::sum_elems(dl::cmult(e, dl::input(cg, d, w, dev))));
  cg.forward(loss);
  r.value = dl::as_vector(cg.get_value(e));
  cg.backward(loss, true);
  for (auto& x : xs) r.input_grads.push_back(dl::as_vector(cg.get_gradient(x)));
  for (auto& p : ps) r.param_grads.push_back(dl::as_vector(p.get_storage().g));
  return r;
}

void check_vectors(const std::vector<float>& gpu_v, const std::vector<float>& cpu_v, const std::string& what) {
  BOOST_REQUIRE_EQUAL(gpu_v.size(), cpu_v.size());
  for (size_t i = 0; i < cpu_v.size(); ++i) {
    float a = gpu_v[i], b = cpu_v[i];
    bool same = (std::isnan(a) && std::isnan(b)) || a == b ||
                std::fabs(a - b) <= 1e-5f + 1e-4f * std::max(std::fabs(a), std::fabs(b));
    BOOST_CHECK_MESSAGE(same, what << "[" << i << "]: GPU " << a << " vs CPU " << b);
  }
}

// Same graph on the CPU and on the GPU: values and every gradient agree.
void compare(const std::string& name, const std::vector<test::TestInput>& inputs, const std::vector<ParamSpec>& params,
             const GpuBuilder& build) {
  BOOST_TEST_CONTEXT(name) {
    RunResult c = run_on(dl::cpu_device(), inputs, params, build);
    RunResult g = run_on(gpu().device, inputs, params, build);
    check_vectors(g.value, c.value, name + " value");
    for (size_t k = 0; k < c.input_grads.size(); ++k)
      check_vectors(g.input_grads[k], c.input_grads[k], name + " d input " + std::to_string(k));
    for (size_t k = 0; k < c.param_grads.size(); ++k)
      check_vectors(g.param_grads[k], c.param_grads[k], name + " d param " + std::to_string(k));
  }
}

test::TestInput in(const dl::Dim& d, float offset = 0.f) { return {d, test::test_values(d.size(), offset)}; }
test::TestInput positive(const dl::Dim& d) {
  test::TestInput t = in(d);
  for (float& v : t.values) v = std::fabs(v) + 0.3f;
  return t;
}
ParamSpec param(const dl::Dim& d, float offset = 0.2f) { return {d, test::test_values(d.size(), offset)}; }

using E = dl::Expression;
using V = std::vector<dl::Expression>;
using dl::Dim;

}  // namespace

// ============================================================ GPU kernels vs CPU

BOOST_AUTO_TEST_SUITE(gpu_vs_cpu, *boost::unit_test::precondition(NeedsGpu()))

BOOST_AUTO_TEST_CASE(unary_ops) {
  struct Row {
    const char* name;
    E (*f)(const E&);
    bool positive_only;
  };
  for (Row r : {Row{"tanh", [](const E& x) { return dl::tanh(x); }, false},
                Row{"logistic", [](const E& x) { return dl::logistic(x); }, false},
                Row{"rectify", [](const E& x) { return dl::rectify(x); }, false},
                Row{"elu", [](const E& x) { return dl::elu(x, 0.7f); }, false},
                Row{"selu", [](const E& x) { return dl::selu(x); }, false},
                Row{"silu", [](const E& x) { return dl::silu(x, 1.3f); }, false},
                Row{"softsign", [](const E& x) { return dl::softsign(x); }, false},
                Row{"exp", [](const E& x) { return dl::exp(x); }, false},
                Row{"log", [](const E& x) { return dl::log(x); }, true},
                Row{"sqrt", [](const E& x) { return dl::sqrt(x); }, true},
                Row{"square", [](const E& x) { return dl::square(x); }, false},
                Row{"cube", [](const E& x) { return dl::cube(x); }, false},
                Row{"abs", [](const E& x) { return dl::abs(x); }, false},
                Row{"erf", [](const E& x) { return dl::erf(x); }, false},
                Row{"log_sigmoid", [](const E& x) { return dl::log_sigmoid(x); }, false},
                Row{"negate", [](const E& x) { return -x; }, false},
                Row{"add_scalar", [](const E& x) { return x + 0.25f; }, false},
                Row{"multiply_scalar", [](const E& x) { return x * -1.5f; }, false},
                Row{"scalar_minus", [](const E& x) { return 2.f - x; }, false},
                Row{"scalar_divide", [](const E& x) { return 2.f / x; }, true},
                Row{"flip_gradient", [](const E& x) { return dl::flip_gradient(x); }, false},
                Row{"scale_gradient", [](const E& x) { return dl::scale_gradient(x, 0.3f); }, false},
                Row{"nobackprop", [](const E& x) { return dl::nobackprop(x) + x; }, false}}) {
    auto f = r.f;
    test::TestInput x = r.positive_only ? positive(Dim({3, 4}, 2)) : in(Dim({3, 4}, 2));
    compare(r.name, {x}, {}, [f](dl::ComputationGraph&, const V& xs, const V&) { return f(xs[0]); });
    // through a parameter too (gradient accumulation on the GPU)
    ParamSpec p = param(Dim({5}));
    if (r.positive_only)
      for (float& v : p.values) v = std::fabs(v) + 0.3f;
    compare(std::string(r.name) + " (parameter)", {}, {p}, [f](dl::ComputationGraph&, const V&, const V& ps) {
      return f(ps[0]);
    });
  }
  // rectify and abs at their kinks
  test::TestInput kinks{Dim({4}), {0.f, -0.f, 1.f, -1.f}};
  compare("rectify at 0", {kinks}, {}, [](dl::ComputationGraph&, const V& xs, const V&) { return dl::rectify(xs[0]); });
  compare("abs at 0", {kinks}, {}, [](dl::ComputationGraph&, const V& xs, const V&) { return dl::abs(xs[0]); });
}

BOOST_AUTO_TEST_CASE(binary_ops_with_broadcasting) {
  struct Row {
    const char* name;
    E (*f)(const E&, const E&);
    bool positive_only;
  };
  for (Row r : {Row{"add", [](const E& a, const E& b) { return a + b; }, false},
                Row{"subtract", [](const E& a, const E& b) { return a - b; }, false},
                Row{"cmult", [](const E& a, const E& b) { return dl::cmult(a, b); }, false},
                Row{"cdiv", [](const E& a, const E& b) { return dl::cdiv(a, b); }, true},
                Row{"pow", [](const E& a, const E& b) { return dl::pow(a, b); }, true},
                Row{"max", [](const E& a, const E& b) { return dl::max(a, b); }, false},
                Row{"min", [](const E& a, const E& b) { return dl::min(a, b); }, false}}) {
    auto f = r.f;
    auto mk = [&](const Dim& d, float off) { return r.positive_only ? positive(d) : in(d, off); };
    GpuBuilder b = [f](dl::ComputationGraph&, const V& xs, const V&) { return f(xs[0], xs[1]); };
    compare(std::string(r.name) + " same shapes", {mk(Dim({3, 4}, 2), 0.f), mk(Dim({3, 4}, 2), 0.1f)}, {}, b);
    compare(std::string(r.name) + " column broadcast", {mk(Dim({3, 4}, 2), 0.f), mk(Dim({3}, 1), 0.1f)}, {}, b);
    compare(std::string(r.name) + " batch broadcast", {mk(Dim({3, 4}, 1), 0.f), mk(Dim({3, 4}, 3), 0.1f)}, {}, b);
    compare(std::string(r.name) + " row broadcast", {mk(Dim({1, 4}, 3), 0.f), mk(Dim({3, 1}, 1), 0.1f)}, {}, b);
  }
  compare("sum", {in(Dim({3, 2}, 3)), in(Dim({3, 2}, 1), 0.2f), in(Dim({3, 2}, 3), 0.4f)}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::sum(xs); });
  compare("logsumexp", {in(Dim({3, 2}, 3)), in(Dim({3, 2}, 1), 0.2f)}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::logsumexp(xs); });
}

BOOST_AUTO_TEST_CASE(products) {
  compare("matmul W x, batched x", {in(Dim({4, 2}, 3))}, {param(Dim({3, 4}))},
          [](dl::ComputationGraph&, const V& xs, const V& ps) { return ps[0] * xs[0]; });
  compare("matmul both batched", {in(Dim({3, 4}, 3)), in(Dim({4}, 3), 0.3f)}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return xs[0] * xs[1]; });
  compare("matmul batched W, shared x", {in(Dim({3, 4}, 3)), in(Dim({4, 2}, 1), 0.3f)}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return xs[0] * xs[1]; });
  compare("affine_transform, two products", {in(Dim({4, 5}, 2)), in(Dim({6, 5}, 2), 0.1f)},
          {param(Dim({3})), param(Dim({3, 4}), 0.1f), param(Dim({3, 6}), 0.3f)},
          [](dl::ComputationGraph&, const V& xs, const V& ps) {
            return dl::affine_transform({ps[0], ps[1], xs[0], ps[2], xs[1]});
          });
  compare("affine_transform, batched bias", {in(Dim({3}, 4)), in(Dim({4}), 0.2f)}, {param(Dim({3, 4}))},
          [](dl::ComputationGraph&, const V& xs, const V& ps) { return dl::affine_transform({xs[0], ps[0], xs[1]}); });
  compare("affine_transform, matrix bias", {in(Dim({3, 2}, 1)), in(Dim({4, 2}, 3), 0.2f)}, {param(Dim({3, 4}))},
          [](dl::ComputationGraph&, const V& xs, const V& ps) { return dl::affine_transform({xs[0], ps[0], xs[1]}); });
  compare("transpose", {in(Dim({3, 4}, 2))}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::transpose(xs[0]); });
  compare("transpose 3-d", {in(Dim({2, 3, 4}, 2))}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::transpose(xs[0], {2, 0, 1}); });
}

BOOST_AUTO_TEST_CASE(reductions_and_softmax) {
  test::TestInput x = in(Dim({3, 4}, 3));
  struct Row {
    const char* name;
    E (*f)(const E&);
  };
  for (Row r : {Row{"sum_elems", [](const E& e) { return dl::sum_elems(e); }},
                Row{"mean_elems", [](const E& e) { return dl::mean_elems(e); }},
                Row{"sum_batches", [](const E& e) { return dl::sum_batches(e); }},
                Row{"mean_batches", [](const E& e) { return dl::mean_batches(e); }},
                Row{"sum_dim 0", [](const E& e) { return dl::sum_dim(e, {0}); }},
                Row{"sum_dim 1 and batch", [](const E& e) { return dl::sum_dim(e, {1}, true); }},
                Row{"mean_dim 0", [](const E& e) { return dl::mean_dim(e, {0}); }},
                Row{"max_dim 0", [](const E& e) { return dl::max_dim(e, 0); }},
                Row{"min_dim 1", [](const E& e) { return dl::min_dim(e, 1); }},
                Row{"softmax columns", [](const E& e) { return dl::softmax(e); }},
                Row{"softmax rows", [](const E& e) { return dl::softmax(e, 1); }},
                Row{"log_softmax", [](const E& e) { return dl::log_softmax(e); }}}) {
    auto f = r.f;
    compare(r.name, {x}, {}, [f](dl::ComputationGraph&, const V& xs, const V&) { return f(xs[0]); });
  }
  // a long column: several warps per group
  compare("log_softmax 1000 rows", {in(Dim({1000}, 2))}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::log_softmax(xs[0]); });
  std::vector<unsigned> labels = {2, 0, 4};
  compare("pickneglogsoftmax", {in(Dim({5}, 3))}, {},
          [labels](dl::ComputationGraph&, const V& xs, const V&) { return dl::pickneglogsoftmax(xs[0], labels); });
  compare("pickneglogsoftmax one index", {in(Dim({5}, 3))}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::pickneglogsoftmax(xs[0], 3u); });
}

BOOST_AUTO_TEST_CASE(shape_ops) {
  test::TestInput x = in(Dim({4, 3}, 2));
  compare("pick_range rows", {x}, {}, [](dl::ComputationGraph&, const V& xs, const V&) {
    return dl::pick_range(xs[0], 1, 3, 0);
  });
  compare("pick_range cols", {x}, {}, [](dl::ComputationGraph&, const V& xs, const V&) {
    return dl::pick_range(xs[0], 1, 2, 1);
  });
  compare("pick", {x}, {}, [](dl::ComputationGraph&, const V& xs, const V&) { return dl::pick(xs[0], 2u, 0); });
  std::vector<unsigned> per_batch = {1, 3};
  compare("pick per batch element", {x}, {}, [per_batch](dl::ComputationGraph&, const V& xs, const V&) {
    return dl::pick(xs[0], per_batch, 0);
  });
  compare("pick from a batch of 1", {in(Dim({4, 3}))}, {}, [per_batch](dl::ComputationGraph&, const V& xs, const V&) {
    return dl::pick(xs[0], per_batch, 0);
  });
  std::vector<unsigned> elems = {1, 0, 1};
  compare("pick_batch_elems", {x}, {}, [elems](dl::ComputationGraph&, const V& xs, const V&) {
    return dl::pick_batch_elems(xs[0], elems);
  });
  std::vector<unsigned> rows = {3, 0, 3};
  compare("select_rows", {x}, {}, [rows](dl::ComputationGraph&, const V& xs, const V&) {
    return dl::select_rows(xs[0], rows);
  });
  std::vector<unsigned> cols = {2, 2, 0};
  compare("select_cols", {x}, {}, [cols](dl::ComputationGraph&, const V& xs, const V&) {
    return dl::select_cols(xs[0], cols);
  });
  compare("concatenate rows with batch broadcast", {x, in(Dim({2, 3}, 1), 0.3f)}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::concatenate({xs[0], xs[1]}); });
  compare("concatenate_cols", {x, in(Dim({4, 1}, 2), 0.3f)}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::concatenate_cols({xs[0], xs[1]}); });
  compare("concatenate_to_batch", {x, in(Dim({4, 3}, 1), 0.3f)}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::concatenate_to_batch({xs[0], xs[1]}); });
  compare("reshape", {x}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::tanh(dl::reshape(xs[0], Dim({2, 6}))); });
}

BOOST_AUTO_TEST_CASE(lookups_and_parameters) {
  // The same table on each device; gradients land in the rows used.
  auto run = [](dl::Device* dev, std::vector<float>* value, std::vector<float>* grads) {
    dl::ParameterCollection m;
    dl::LookupParameter lp = m.add_lookup_parameters(5, Dim({3}), dl::ParameterInitFromVector(test::test_values(15)),
                                                     "E", dev);
    dl::ComputationGraph cg;
    E batch = dl::lookup(cg, lp, std::vector<unsigned>{1, 4, 1});
    E one = dl::lookup(cg, lp, 2u);
    E e = dl::tanh(batch + one);
    E loss = dl::sum_batches(dl::sum_elems(dl::square(e)));
    cg.forward(loss);
    *value = dl::as_vector(cg.get_value(e));
    cg.backward(loss);
    *grads = test::table_gradient(lp.get_storage());
    BOOST_CHECK_EQUAL(lp.get_storage().non_zero_grads.size(), 3u);
  };
  std::vector<float> cv, cg_, gv, gg;
  run(dl::cpu_device(), &cv, &cg_);
  run(gpu().device, &gv, &gg);
  check_vectors(gv, cv, "lookup value");
  check_vectors(gg, cg_, "lookup gradient");
}

BOOST_AUTO_TEST_CASE(dropout_same_seed_same_mask) {
  for (dl::OpKind op : {dl::OpKind::Dropout, dl::OpKind::DropoutBatch, dl::OpKind::DropoutDim}) {
    GpuBuilder b = [op](dl::ComputationGraph&, const V& xs, const V&) {
      if (op == dl::OpKind::Dropout) return dl::dropout(xs[0], 0.4f);
      if (op == dl::OpKind::DropoutBatch) return dl::dropout_batch(xs[0], 0.4f);
      return dl::dropout_dim(xs[0], 1, 0.4f);
    };
    // Each graph's engine is seeded from the global seed: reseed before each run.
    dl::reseed_global_rng(11);
    RunResult c = run_on(dl::cpu_device(), {in(Dim({6, 5}, 3))}, {}, b);
    dl::reseed_global_rng(11);
    RunResult g = run_on(gpu().device, {in(Dim({6, 5}, 3))}, {}, b);
    check_vectors(g.value, c.value, "dropout value");
    check_vectors(g.input_grads[0], c.input_grads[0], "dropout gradient");
  }
}

BOOST_AUTO_TEST_CASE(autobatch_on_gpu_matches_plain_execution) {
  // Four instances of a small tagger step: batched and plain runs agree.
  GpuBuilder b = [](dl::ComputationGraph&, const V& xs, const V& ps) {
    V losses;
    for (unsigned k = 0; k < 4; ++k) {
      E h = dl::tanh(dl::affine_transform({ps[0], ps[1], dl::pick_range(xs[0], k * 3, k * 3 + 3)}));
      losses.push_back(dl::pickneglogsoftmax(ps[2] * h, k % 2));
    }
    return dl::sum(losses);
  };
  std::vector<test::TestInput> inputs = {in(Dim({12}))};
  std::vector<ParamSpec> params = {param(Dim({4})), param(Dim({4, 3}), 0.1f), param(Dim({2, 4}), 0.3f)};
  RunResult plain = run_on(gpu().device, inputs, params, b, 0);
  for (int strategy : {1, 2}) {
    RunResult batched = run_on(gpu().device, inputs, params, b, strategy);
    check_vectors(batched.value, plain.value, "autobatch value");
    for (size_t k = 0; k < plain.param_grads.size(); ++k)
      check_vectors(batched.param_grads[k], plain.param_grads[k], "autobatch d param " + std::to_string(k));
    check_vectors(batched.input_grads[0], plain.input_grads[0], "autobatch d input");
  }
}

BOOST_AUTO_TEST_CASE(autobatched_lookups_on_gpu) {
  // Lookups of one table from many instances run as one group, repeated rows
  // included; their gradients reach the table as in plain execution.
  auto run = [](dl::Device* dev, int autobatch, std::vector<float>* table_grad, std::vector<float>* w_grad) {
    dl::ParameterCollection m;
    dl::LookupParameter lp =
        m.add_lookup_parameters(7, Dim({3}), dl::ParameterInitFromVector(test::test_values(21)), "E", dev);
    dl::Parameter W = m.add_parameters(Dim({4, 3}), dl::ParameterInitFromVector(test::test_values(12, 0.2f)), "W", dev);
    dl::ComputationGraph cg;
    cg.set_autobatch(autobatch);
    V losses;
    const unsigned rows[] = {1, 4, 1, 6, 0, 4, 4, 2, 1};
    for (unsigned k = 0; k < 9; ++k) {
      E e = k == 8 ? dl::const_lookup(cg, lp, rows[k]) : dl::lookup(cg, lp, rows[k]);
      losses.push_back(dl::pickneglogsoftmax(dl::tanh(dl::parameter(cg, W) * e), k % 4));
    }
    E loss = dl::sum(losses);
    cg.forward(loss);
    cg.backward(loss);
    *table_grad = test::table_gradient(lp.get_storage());
    *w_grad = dl::as_vector(W.get_storage().g);
    BOOST_CHECK_EQUAL(lp.get_storage().non_zero_grads.size(), 5u);  // rows 0, 1, 2, 4, 6
  };
  std::vector<float> ct, cw;
  run(dl::cpu_device(), 0, &ct, &cw);
  for (int strategy : {0, 1, 2}) {
    std::vector<float> gt, gw;
    run(gpu().device, strategy, &gt, &gw);
    check_vectors(gt, ct, "table gradient, autobatch " + std::to_string(strategy));
    check_vectors(gw, cw, "W gradient, autobatch " + std::to_string(strategy));
  }
}

BOOST_AUTO_TEST_CASE(squared_norms_of_several_vectors_read_back_once) {
  // The trainers' gradient norm of parameters on a GPU: one kernel over every
  // vector (short, empty, longer than a block's stride, unaligned) and one copy back.
  dl::Device* d = gpu().device;
  const std::vector<size_t> sizes{1, 0, 255, 257, 100003, 4096};
  std::vector<std::vector<float>> host;
  std::vector<float*> dev;
  double expected = 0;
  for (size_t j = 0; j < sizes.size(); ++j) {
    host.push_back(test::test_values(sizes[j], 0.01f * static_cast<float>(j + 1)));
    float* p = static_cast<float*>(d->allocate(std::max<size_t>(sizes[j], 1) * sizeof(float) + 4));
    d->copy_from_host(p + (j == 3 ? 1 : 0), host.back().data(), sizes[j]);
    dev.push_back(p);
    for (float x : host.back()) expected += static_cast<double>(x) * x;
  }
  std::vector<const float*> xs;
  for (size_t j = 0; j < dev.size(); ++j) xs.push_back(dev[j] + (j == 3 ? 1 : 0));
  const double got = d->squared_norms(xs.data(), sizes.data(), static_cast<unsigned>(xs.size()));
  BOOST_CHECK_CLOSE(got, expected, 1e-3);
  std::vector<const float*> hs;
  for (const auto& h : host) hs.push_back(h.data());
  BOOST_CHECK_CLOSE(dl::cpu_device()->squared_norms(hs.data(), sizes.data(), static_cast<unsigned>(hs.size())), expected,
                    1e-9);
  BOOST_CHECK_EQUAL(d->squared_norms(nullptr, nullptr, 0), 0.0);
  for (float* p : dev) d->release(p);
}

BOOST_AUTO_TEST_CASE(simple_sgd_on_gpu) {
  // Three updates of the same model on each device end at the same values; with
  // the loss scaled by 50 the global-norm clipping (threshold 5) takes over.
  for (float scale : {1.f, 50.f}) {
    auto train = [scale](dl::Device* dev) {
      dl::ParameterCollection m;
      dl::Parameter W = m.add_parameters(Dim({3, 4}), dl::ParameterInitFromVector(test::test_values(12)), "W", dev);
      dl::LookupParameter emb =
          m.add_lookup_parameters(6, Dim({4}), dl::ParameterInitFromVector(test::test_values(24, 0.1f)), "E", dev);
      dl::SimpleSGDTrainer trainer(m, 0.2f);
      for (unsigned step = 0; step < 3; ++step) {
        dl::ComputationGraph cg;
        E x = dl::lookup(cg, emb, std::vector<unsigned>{step, 5});
        E loss = dl::sum_batches(dl::pickneglogsoftmax(dl::parameter(cg, W) * x, std::vector<unsigned>{1, 2})) * scale;
        cg.forward(loss);
        cg.backward(loss);
        trainer.update();
      }
      if (scale > 1.f) BOOST_CHECK_EQUAL(trainer.clips, 3.f);
      std::vector<float> out = dl::as_vector(W.get_storage().values);
      std::vector<float> e = dl::as_vector(emb.get_storage().all_values);
      out.insert(out.end(), e.begin(), e.end());
      return out;
    };
    check_vectors(train(gpu().device), train(dl::cpu_device()), "parameters after SGD, loss x" + std::to_string(scale));
  }
}

BOOST_AUTO_TEST_CASE(adaptive_trainers_on_gpu) {
  // Every trainer with a GPU rule: three updates of a dense parameter and of
  // the used rows of a lookup table end at the CPU's values.
  using Make = std::function<std::unique_ptr<dl::Trainer>(dl::ParameterCollection&)>;
  const std::vector<std::pair<std::string, Make>> trainers = {
      {"CyclicalSGD", [](dl::ParameterCollection& m) { return std::make_unique<dl::CyclicalSGDTrainer>(m); }},
      {"MomentumSGD", [](dl::ParameterCollection& m) { return std::make_unique<dl::MomentumSGDTrainer>(m, 0.1f); }},
      {"Adagrad", [](dl::ParameterCollection& m) { return std::make_unique<dl::AdagradTrainer>(m); }},
      {"Adadelta", [](dl::ParameterCollection& m) { return std::make_unique<dl::AdadeltaTrainer>(m); }},
      {"RMSProp", [](dl::ParameterCollection& m) { return std::make_unique<dl::RMSPropTrainer>(m, 0.01f); }},
      {"Adam", [](dl::ParameterCollection& m) { return std::make_unique<dl::AdamTrainer>(m, 0.01f); }},
      {"Amsgrad", [](dl::ParameterCollection& m) { return std::make_unique<dl::AmsgradTrainer>(m, 0.01f); }}};
  for (const auto& t : trainers) {
    auto train = [&t](dl::Device* dev) {
      dl::ParameterCollection m;
      dl::Parameter W = m.add_parameters(Dim({3, 4}), dl::ParameterInitFromVector(test::test_values(12)), "W", dev);
      dl::LookupParameter emb =
          m.add_lookup_parameters(6, Dim({4}), dl::ParameterInitFromVector(test::test_values(24, 0.1f)), "E", dev);
      std::unique_ptr<dl::Trainer> trainer = t.second(m);
      for (unsigned step = 0; step < 3; ++step) {
        dl::ComputationGraph cg;
        E x = dl::lookup(cg, emb, std::vector<unsigned>{step, 5});
        E loss = dl::sum_batches(dl::pickneglogsoftmax(dl::parameter(cg, W) * x, std::vector<unsigned>{1, 2}));
        cg.forward(loss);
        cg.backward(loss);
        trainer->update();
      }
      std::vector<float> out = dl::as_vector(W.get_storage().values);
      std::vector<float> e = dl::as_vector(emb.get_storage().all_values);
      out.insert(out.end(), e.begin(), e.end());
      return out;
    };
    check_vectors(train(gpu().device), train(dl::cpu_device()), t.first + ": parameters after 3 updates");
  }
  // EG (on host copies of a GPU parameter): three updates end at the CPU's
  // values, and a value <= 0 is the CPU's error, naming the parameter.
  auto eg = [](dl::Device* dev, std::vector<float> init) {
    dl::ParameterCollection m;
    dl::Parameter W = m.add_parameters(Dim({2, 2}), dl::ParameterInitFromVector(init), "W", dev);
    dl::EGTrainer trainer(m, 0.5f, 0.5f);
    for (unsigned step = 0; step < 3; ++step) {
      dl::ComputationGraph cg;
      E loss = dl::sum_elems(dl::square(dl::parameter(cg, W)));
      cg.forward(loss);
      cg.backward(loss);
      trainer.update();
    }
    return dl::as_vector(W.get_storage().values);
  };
  check_vectors(eg(gpu().device, {0.1f, 0.2f, 0.3f, 0.4f}), eg(dl::cpu_device(), {0.1f, 0.2f, 0.3f, 0.4f}),
                "EGTrainer: parameters after 3 updates");
  test::check_throws_with<std::invalid_argument>([&] { eg(gpu().device, {0.5f, 0.f, 0.25f, 0.25f}); },
                                                 {"EGTrainer", "'/W'", "<= 0"});
}

BOOST_AUTO_TEST_CASE(mixed_cpu_gpu_graph) {
  // An input on the CPU moves to the GPU, is transformed there, and comes back.
  auto run = [](bool mixed, std::vector<float>* value, std::vector<float>* grad) {
    dl::ParameterCollection m;
    dl::Device* gdev = mixed ? gpu().device : dl::cpu_device();
    dl::Parameter W = m.add_parameters(Dim({3, 4}), dl::ParameterInitFromVector(test::test_values(12)), "W", gdev);
    dl::ComputationGraph cg;
    E x = dl::input(cg, Dim({4}, 2), test::test_values(8, 0.2f), dl::cpu_device());
    E h = dl::tanh(dl::parameter(cg, W) * (mixed ? dl::to_device(x, gdev) : x));
    E back = mixed ? dl::to_device(h, dl::cpu_device()) : h;
    E loss = dl::sum_batches(dl::sum_elems(dl::square(back)));
    cg.forward(loss);
    *value = dl::as_vector(cg.get_value(back));
    cg.backward(loss, true);
    *grad = dl::as_vector(cg.get_gradient(x));
    std::vector<float> gw = dl::as_vector(W.get_storage().g);
    grad->insert(grad->end(), gw.begin(), gw.end());
  };
  std::vector<float> cv, cgr, mv, mg;
  run(false, &cv, &cgr);
  run(true, &mv, &mg);
  check_vectors(mv, cv, "mixed graph value");
  check_vectors(mg, cgr, "mixed graph gradients");
}

BOOST_AUTO_TEST_CASE(fused_lstm_steps) {
  // The fused LSTM ops, with every argument batched or broadcast (a batch of 1).
  const unsigned h = 3, n = 4;
  const std::vector<ParamSpec> w = {param(Dim({4 * h, n}), 0.1f), param(Dim({4 * h, h}), 0.3f), param(Dim({4 * h}))};
  for (auto bd : {std::pair<unsigned, unsigned>{3, 1}, {1, 3}, {3, 3}, {1, 1}}) {
    const std::string tag = " (x batch " + std::to_string(bd.first) + ", h batch " + std::to_string(bd.second) + ")";
    compare("vanilla_lstm_gates" + tag, {in(Dim({n}, bd.first)), in(Dim({h}, bd.second), 0.2f)}, w,
            [](dl::ComputationGraph&, const V& xs, const V& ps) {
              return dl::vanilla_lstm_gates(xs[0], xs[1], ps[0], ps[1], ps[2]);
            });
    compare("vanilla_lstm_c" + tag, {in(Dim({h}, bd.first)), in(Dim({4 * h}, bd.second), 0.2f)}, {},
            [](dl::ComputationGraph&, const V& xs, const V&) { return dl::vanilla_lstm_c(xs[0], xs[1]); });
    compare("vanilla_lstm_h" + tag, {in(Dim({h}, bd.first)), in(Dim({4 * h}, bd.second), 0.2f)}, {},
            [](dl::ComputationGraph&, const V& xs, const V&) { return dl::vanilla_lstm_h(xs[0], xs[1]); });
  }
  // Dropout masks: one shared, one per batch element; then a batch that only the masks have.
  compare("vanilla_lstm_gates_dropout",
          {in(Dim({n}, 3)), in(Dim({h}, 3), 0.2f), positive(Dim({n}, 1)), positive(Dim({h}, 3))}, w,
          [](dl::ComputationGraph&, const V& xs, const V& ps) {
            return dl::vanilla_lstm_gates_dropout(xs[0], xs[1], ps[0], ps[1], ps[2], xs[2], xs[3]);
          });
  compare("vanilla_lstm_gates_dropout, batch from the masks",
          {in(Dim({n}, 1)), in(Dim({h}, 1), 0.2f), positive(Dim({n}, 2)), positive(Dim({h}, 2))}, w,
          [](dl::ComputationGraph&, const V& xs, const V& ps) {
            return dl::vanilla_lstm_gates_dropout(xs[0], xs[1], ps[0], ps[1], ps[2], xs[2], xs[3]);
          });
  // A whole step: gates -> c -> h, the state carried over twice.
  compare("lstm step chain", {in(Dim({h}), 0.1f), in(Dim({h}), 0.2f), in(Dim({n}, 2)), in(Dim({n}, 2), 0.3f)}, w,
          [](dl::ComputationGraph&, const V& xs, const V& ps) {
            E hh = xs[0], c = xs[1];
            for (size_t t = 2; t < xs.size(); ++t) {
              E g = dl::vanilla_lstm_gates(xs[t], hh, ps[0], ps[1], ps[2]);
              c = dl::vanilla_lstm_c(c, g);
              hh = dl::vanilla_lstm_h(c, g);
            }
            return hh;
          });
  // Weight noise is drawn from the graph's engine in the same order on both devices.
  GpuBuilder noisy = [](dl::ComputationGraph&, const V& xs, const V& ps) {
    return dl::vanilla_lstm_gates(xs[0], xs[1], ps[0], ps[1], ps[2], 0.1f);
  };
  dl::reseed_global_rng(13);
  RunResult c = run_on(dl::cpu_device(), {in(Dim({n}, 2)), in(Dim({h}, 2), 0.2f)}, w, noisy);
  dl::reseed_global_rng(13);
  RunResult g = run_on(gpu().device, {in(Dim({n}, 2)), in(Dim({h}, 2), 0.2f)}, w, noisy);
  check_vectors(g.value, c.value, "weight noise value");
  for (size_t k = 0; k < c.param_grads.size(); ++k)
    check_vectors(g.param_grads[k], c.param_grads[k], "weight noise d param " + std::to_string(k));
}

BOOST_AUTO_TEST_CASE(fused_treelstm_steps) {
  const unsigned h = 3;
  compare("treelstm_gates", {in(Dim({5 * h}, 2))}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::treelstm_gates(xs[0], 2); });
  compare("treelstm_c, children batched and shared",
          {in(Dim({5 * h}, 2)), in(Dim({h}, 1), 0.1f), in(Dim({h}, 2), 0.2f)}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) {
            return dl::treelstm_c(xs[0], {xs[1], xs[2]}, 2);
          });
  compare("treelstm_c, shared gates", {in(Dim({5 * h}, 1)), in(Dim({h}, 3), 0.1f)}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::treelstm_c(xs[0], {xs[1]}, 2); });
  compare("treelstm_c, a leaf", {in(Dim({5 * h}, 2))}, {},
          [](dl::ComputationGraph&, const V& xs, const V&) { return dl::treelstm_c(xs[0], {}, 2); });
  // More children than one kernel launch takes (8): the sum goes on in order.
  std::vector<test::TestInput> many = {in(Dim({13 * h}, 2))};
  for (unsigned k = 0; k < 10; ++k) many.push_back(in(Dim({h}, k % 2 ? 2 : 1), 0.05f * static_cast<float>(k)));
  compare("treelstm_c, ten children", many, {}, [](dl::ComputationGraph&, const V& xs, const V&) {
    return dl::treelstm_c(xs[0], V(xs.begin() + 1, xs.end()), 10);
  });
  for (auto bd : {std::pair<unsigned, unsigned>{2, 1}, {1, 2}, {2, 2}}) {
    compare("treelstm_h (c batch " + std::to_string(bd.first) + ", gates batch " + std::to_string(bd.second) + ")",
            {in(Dim({h}, bd.first)), in(Dim({5 * h}, bd.second), 0.2f)}, {},
            [](dl::ComputationGraph&, const V& xs, const V&) { return dl::treelstm_h(xs[0], xs[1]); });
  }
}

BOOST_AUTO_TEST_CASE(lstm_and_treelstm_builders_on_gpu) {
  // Builders with their parameters on the GPU, sequences and a tree of different
  // sizes in one graph: the GPU matches the CPU, and autobatching on the GPU
  // matches plain execution there.
  auto run = [](dl::Device* dev, int autobatch) {
    dl::Device* before = dl::default_device();
    dl::set_default_device(dev);
    dl::ParameterCollection m;
    dl::VanillaLSTMBuilder lstm(1, 4, 5, m);
    dl::NaryTreeLSTMBuilder tree(2, 1, 4, 5, m);
    for (const auto& p : m.parameters_list())
      dl::TensorTools::set_elements(p->values,
                                    test::test_values(p->dim.size(), 0.01f * static_cast<float>(p->dim.size() % 7)));
    dl::ComputationGraph cg;
    cg.set_autobatch(autobatch);
    lstm.new_graph(cg);
    tree.new_graph(cg);
    V outs;
    float off = 0.f;
    for (unsigned len : {3u, 5u, 2u}) {
      lstm.start_new_sequence();
      for (unsigned t = 0; t < len; ++t)
        outs.push_back(lstm.add_input(dl::input(cg, Dim({4}), test::test_values(4, off += 0.1f), dev)));
    }
    tree.start_new_sequence();
    tree.set_num_elements(5);
    tree.add_input(0, {}, dl::input(cg, Dim({4}), test::test_values(4, 0.3f), dev));
    tree.add_input(1, {}, dl::input(cg, Dim({4}), test::test_values(4, 0.5f), dev));
    tree.add_input(2, {0, 1}, dl::input(cg, Dim({4}), test::test_values(4, 0.7f), dev));
    tree.add_input(3, {}, dl::input(cg, Dim({4}), test::test_values(4, 0.9f), dev));
    outs.push_back(tree.add_input(4, {2, 3}, dl::input(cg, Dim({4}), test::test_values(4, 1.1f), dev)));
    E loss = dl::sum_elems(dl::square(dl::sum(outs)));
    std::vector<float> r = {dl::as_scalar(cg.forward(loss))};
    cg.backward(loss);
    for (const auto& p : m.parameters_list()) {
      std::vector<float> gr = dl::as_vector(p->g);
      r.insert(r.end(), gr.begin(), gr.end());
    }
    dl::set_default_device(before);
    return r;
  };
  std::vector<float> cpu = run(dl::cpu_device(), 0), plain = run(gpu().device, 0);
  check_vectors(plain, cpu, "builders GPU vs CPU");
  for (int strategy : {1, 2})
    check_vectors(run(gpu().device, strategy), plain, "builders autobatch " + std::to_string(strategy));
}

BOOST_AUTO_TEST_CASE(missing_gpu_kernel_names_the_op) {
  // layer_norm has no GPU kernel yet: a clear error, not a wrong answer.
  test::check_throws_with<dl::unsupported_error>(
      [] {
        dl::ComputationGraph cg;
        E x = dl::input(cg, Dim({4}), test::test_values(4), gpu().device);
        E g = dl::input(cg, Dim({4}), test::test_values(4), gpu().device);
        E b = dl::input(cg, Dim({4}), test::test_values(4), gpu().device);
        cg.forward(dl::layer_norm(x, g, b));
      },
      {"layer_norm is not implemented on GPU:0"});
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------- compiled programs

BOOST_AUTO_TEST_SUITE(compiled_on_gpu, *boost::unit_test::precondition(NeedsGpu()))

namespace {
/// The default device is the GPU while it lives (programs and graphs built then run there).
struct OnGpu {
  OnGpu() { dl::set_default_device(gpu().device); }
  ~OnGpu() { dl::set_default_device(dl::cpu_device()); }
};

struct GpuModel {
  dl::ParameterCollection m;
  dl::Parameter W, b;
  dl::LookupParameter E;
  GpuModel() {
    W = m.add_parameters(Dim({5, 4}), dl::ParameterInitFromVector(test::test_values(20)), "W", gpu().device);
    b = m.add_parameters(Dim({5}), dl::ParameterInitFromVector(test::test_values(5, 0.2f)), "b", gpu().device);
    E = m.add_lookup_parameters(9, Dim({4}), dl::ParameterInitFromVector(test::test_values(36, 0.1f)), "E",
                                gpu().device);
  }
};

/// One word and a batch of two through W, a scaled input, and losses picked by index.
struct Inputs {
  unsigned word, tag;
  std::vector<unsigned> words, tags;
  std::vector<float> x;
};

E tagger_loss(dl::ComputationGraph& cg, GpuModel& g, E one, E two, E x, const std::function<E(E, int)>& pick) {
  E W = dl::parameter(cg, g.W), b = dl::parameter(cg, g.b);
  E h1 = dl::tanh(dl::affine_transform({b, W, one + x}));
  E h2 = dl::tanh(dl::affine_transform({b, W, two}));
  return pick(h1, 0) + dl::sum_batches(pick(h2, 1));
}

Inputs inputs_of_round(unsigned r) {
  return {r % 9, r % 5, {(r + 3) % 9, (r * 2) % 9}, {(r + 1) % 5, (r + 4) % 5}, test::test_values(4, 0.1f * r)};
}
}  // namespace

BOOST_AUTO_TEST_CASE(replays_launch_a_cuda_graph_with_new_inputs) {
  OnGpu on_gpu;
  GpuModel g;
  dl::SimpleSGDTrainer trainer(g.m, 0.1f);
  dl::Program p;
  p.set_output(tagger_loss(p.graph(), g, p.lookup("w", g.E), p.lookup("ws", g.E, 2), p.input("x", Dim({4})),
                           [&](E h, int k) {
                             return k == 0 ? dl::pickneglogsoftmax(h, p.index("t")) : dl::pickneglogsoftmax(h, p.indices("ts", 2));
                           }));
  for (unsigned r = 0; r < 12; ++r) {
    const Inputs in = inputs_of_round(r);
    p.set("w", in.word), p.set("t", in.tag), p.set("ws", in.words), p.set("ts", in.tags), p.set("x", in.x);
    g.m.reset_gradient();
    const float replayed = dl::as_scalar(p.forward());
    p.backward();
    const std::vector<float> grad_replayed = dl::as_vector(g.W.get_storage().g);
    const std::vector<float> dE_replayed = test::table_gradient(g.E.get_storage());
    const std::set<unsigned> rows_replayed(g.E.get_storage().non_zero_grads.begin(),
                                           g.E.get_storage().non_zero_grads.end());
    // A program of small nodes records the graph at its first replay.
    if (r >= 1) BOOST_CHECK_MESSAGE(p.device_graph(), "round " << r << ": replay ran kernel by kernel");
    // A backward pass is recorded once a forward graph has laid out the values.
    if (r >= 4) BOOST_CHECK_MESSAGE(p.backward_device_graph(), "round " << r << ": backward ran kernel by kernel");
    g.m.reset_gradient();
    dl::ComputationGraph cg;
    E loss = tagger_loss(cg, g, dl::lookup(cg, g.E, in.word), dl::lookup(cg, g.E, in.words), dl::input(cg, Dim({4}), in.x),
                         [&](E h, int k) {
                           return k == 0 ? dl::pickneglogsoftmax(h, in.tag) : dl::pickneglogsoftmax(h, in.tags);
                         });
    const float rebuilt = dl::as_scalar(cg.forward(loss));
    cg.backward(loss);
    check_vectors({replayed}, {rebuilt}, "loss of round " + std::to_string(r));
    check_vectors(grad_replayed, dl::as_vector(g.W.get_storage().g), "dW of round " + std::to_string(r));
    check_vectors(dE_replayed, test::table_gradient(g.E.get_storage()), "dE of round " + std::to_string(r));
    const std::set<unsigned> rows_rebuilt(g.E.get_storage().non_zero_grads.begin(),
                                          g.E.get_storage().non_zero_grads.end());
    BOOST_CHECK_MESSAGE(rows_replayed == rows_rebuilt, "round " << r << ": other rows marked with gradients");
    trainer.update();  // the next round reads the updated parameters
  }
  // Training through the program alone: the sparse update sees the rows the
  // launched backward graph wrote (their gradients are cleared after it).
  for (unsigned r = 0; r < 4; ++r) {
    const Inputs in = inputs_of_round(r + 20);
    p.set("w", in.word), p.set("t", in.tag), p.set("ws", in.words), p.set("ts", in.tags), p.set("x", in.x);
    p.forward();
    p.backward();
    trainer.update();
    const std::vector<float> left = test::table_gradient(g.E.get_storage());
    BOOST_CHECK_MESSAGE(std::all_of(left.begin(), left.end(), [](float v) { return v == 0.f; }),
                        "round " << r << ": lookup gradients left after the update");
  }
  // The recorded gradient goes to the rows forward read: a slot set in between is refused.
  p.set("w", 1u);
  p.forward();
  p.set("w", 2u);
  test::check_throws_with<std::logic_error>([&] { p.backward(); }, {"index slot 'w'", "after forward"});
  // The kernels' index checks are made before a launch.
  p.set("w", 9u);
  test::check_throws_with<std::out_of_range>([&] { p.forward(); }, {"index 9 out of range"});
}

// A program of large nodes (here 4,096 floats each) gains less from a
// launched graph: its first replay runs kernel by kernel, its second records.
BOOST_AUTO_TEST_CASE(programs_of_large_nodes_record_at_their_second_replay) {
  OnGpu on_gpu;
  dl::ParameterCollection m;
  dl::Parameter w = m.add_parameters(Dim({4096}), dl::ParameterInitFromVector(test::test_values(4096, 0.1f)), "w",
                                     gpu().device);
  dl::Program p;
  p.set_output(dl::sum_elems(dl::tanh(dl::cmult(dl::parameter(p.graph(), w), p.input("x", Dim({4096}))))));
  for (unsigned r = 0; r < 4; ++r) {
    const std::vector<float> x = test::test_values(4096, 0.01f * r);
    p.set("x", x);
    const float replayed = dl::as_scalar(p.forward());
    BOOST_CHECK_MESSAGE(p.device_graph() == (r >= 2), "round " << r << ": graph " << p.device_graph());
    dl::ComputationGraph cg;
    const float rebuilt = dl::as_scalar(
        cg.forward(dl::sum_elems(dl::tanh(dl::cmult(dl::parameter(cg, w), dl::input(cg, Dim({4096}), x))))));
    check_vectors({replayed}, {rebuilt}, "loss of round " + std::to_string(r));
  }
}

// A batched program of large groups (two inputs of 4,096 floats through one
// weight, batched) runs its first three replays kernel by kernel and records
// at its fourth; every replay equals a graph built afresh with batching.
BOOST_AUTO_TEST_CASE(batched_programs_of_large_groups_record_at_their_fourth_replay) {
  OnGpu on_gpu;
  dl::ParameterCollection m;
  dl::Parameter w = m.add_parameters(Dim({4096}), dl::ParameterInitFromVector(test::test_values(4096, 0.1f)), "w",
                                     gpu().device);
  auto loss = [&](dl::ComputationGraph& cg, E x, E y) {
    E W = dl::parameter(cg, w);
    return dl::sum_elems(dl::tanh(dl::cmult(W, x)) + dl::tanh(dl::cmult(W, y)));
  };
  dl::Program p;
  p.graph().set_autobatch(1);
  p.set_output(loss(p.graph(), p.input("x", Dim({4096})), p.input("y", Dim({4096}))));
  for (unsigned r = 0; r < 7; ++r) {
    const std::vector<float> x = test::test_values(4096, 0.01f * r), y = test::test_values(4096, 0.5f - 0.02f * r);
    p.set("x", x), p.set("y", y);
    const float replayed = dl::as_scalar(p.forward());
    BOOST_CHECK_MESSAGE(p.device_graph() == (r >= 4), "round " << r << ": graph " << p.device_graph());
    dl::ComputationGraph cg;
    cg.set_autobatch(1);
    const float rebuilt =
        dl::as_scalar(cg.forward(loss(cg, dl::input(cg, Dim({4096}), x), dl::input(cg, Dim({4096}), y))));
    check_vectors({replayed}, {rebuilt}, "loss of round " + std::to_string(r));
  }
}

namespace {
/// A BiLSTM tagger on the GPU: its two directions and the words' output layers
/// are independent branches of the recorded graphs, and the words' gradients
/// meet in the shared weights and the lookup table.
struct GpuBiLstm {
  dl::ParameterCollection m;
  dl::LookupParameter table;
  dl::VanillaLSTMBuilder fwd, bwd;
  dl::Parameter W, b;
  GpuBiLstm() : fwd(1, 6, 5, m), bwd(1, 6, 5, m) {
    table = m.add_lookup_parameters(11, Dim({6}), "E", gpu().device);
    W = m.add_parameters(Dim({4, 10}), "W", gpu().device);
    b = m.add_parameters(Dim({4}), "b", gpu().device);
  }
  /// Loss of a sentence whose word and tag at t come from `word(t)`, `tag(t)`.
  E loss(dl::ComputationGraph& cg, unsigned len, const std::function<E(unsigned)>& word,
         const std::function<E(E, unsigned)>& pick) {
    fwd.new_graph(cg);
    bwd.new_graph(cg);
    std::vector<E> xs, fh(len), bh(len), losses;
    for (unsigned t = 0; t < len; ++t) xs.push_back(word(t));
    fwd.start_new_sequence();
    for (unsigned t = 0; t < len; ++t) fh[t] = fwd.add_input(xs[t]);
    bwd.start_new_sequence();
    for (unsigned t = len; t-- > 0;) bh[t] = bwd.add_input(xs[t]);
    E Wx = dl::parameter(cg, W), bx = dl::parameter(cg, b);
    for (unsigned t = 0; t < len; ++t)
      losses.push_back(pick(dl::affine_transform({bx, Wx, dl::concatenate({fh[t], bh[t]})}), t));
    return dl::sum(losses);
  }
};

/// The loss and every gradient of the pass just run.
struct BiLstmRun {
  float loss;
  std::vector<std::vector<float>> grads;
  std::vector<float> dE;
};

BiLstmRun collect(GpuBiLstm& g, float loss) {
  BiLstmRun r{loss, {}, test::table_gradient(g.table.get_storage())};
  for (const auto& q : g.m.parameters_list()) r.grads.push_back(dl::as_vector(q->g));
  return r;
}

void check_same(GpuBiLstm& g, const BiLstmRun& replayed, const BiLstmRun& rebuilt, unsigned r) {
  const std::string round = " of round " + std::to_string(r);
  check_vectors({replayed.loss}, {rebuilt.loss}, "loss" + round);
  size_t k = 0;
  for (const auto& q : g.m.parameters_list()) {
    check_vectors(replayed.grads[k], rebuilt.grads[k], "gradient of " + q->name + round);
    ++k;
  }
  check_vectors(replayed.dE, rebuilt.dE, "dE" + round);
}
}  // namespace

BOOST_AUTO_TEST_CASE(independent_branches_of_a_recorded_graph_match_a_rebuild) {
  OnGpu on_gpu;
  GpuBiLstm g;
  dl::SimpleSGDTrainer trainer(g.m, 0.2f);
  constexpr unsigned kLen = 7;
  auto name = [](char c, unsigned t) { return std::string(1, c) + std::to_string(t); };
  dl::Program p;
  p.set_output(g.loss(p.graph(), kLen, [&](unsigned t) { return p.lookup(name('w', t), g.table); },
                      [&](E h, unsigned t) { return dl::pickneglogsoftmax(h, p.index(name('t', t))); }));
  std::mt19937 rng(11);
  for (unsigned r = 0; r < 40; ++r) {
    std::vector<unsigned> words(kLen), tags(kLen);
    for (unsigned t = 0; t < kLen; ++t) {
      words[t] = rng() % 11;  // repeated words send two gradients to one row
      tags[t] = rng() % 4;
      p.set(name('w', t), words[t]);
      p.set(name('t', t), tags[t]);
    }
    g.m.reset_gradient();
    const float value = dl::as_scalar(p.forward());
    p.backward();
    const BiLstmRun replayed = collect(g, value);
    if (r >= 1) BOOST_CHECK_MESSAGE(p.device_graph(), "round " << r << ": replay ran kernel by kernel");
    if (r >= 4) BOOST_CHECK_MESSAGE(p.backward_device_graph(), "round " << r << ": backward ran kernel by kernel");
    g.m.reset_gradient();
    dl::ComputationGraph cg;
    E loss = g.loss(cg, kLen, [&](unsigned t) { return dl::lookup(cg, g.table, words[t]); },
                    [&](E h, unsigned t) { return dl::pickneglogsoftmax(h, tags[t]); });
    const float rebuilt = dl::as_scalar(cg.forward(loss));
    cg.backward(loss);
    check_same(g, replayed, collect(g, rebuilt), r);
    trainer.update();
  }
}

// Graphs built as usual on the GPU, run through the programs of their
// structure (ProgramCache::forward(e)): from the program's first replay on (its
// nodes are small) a CUDA graph, with the words and tags of each graph bound to it.
BOOST_AUTO_TEST_CASE(programs_by_structure_launch_cuda_graphs) {
  OnGpu on_gpu;
  GpuBiLstm g;
  dl::SimpleSGDTrainer trainer(g.m, 0.2f);
  dl::ProgramCache programs(4);
  constexpr unsigned kLen = 6;
  for (unsigned r = 0; r < 10; ++r) {
    auto word = [&](unsigned t) { return (r * 3 + t * 5) % 11; };
    auto tag = [&](unsigned t) { return (r + t) % 4; };
    auto build = [&](dl::ComputationGraph& cg) {
      return g.loss(cg, kLen, [&](unsigned t) { return dl::lookup(cg, g.table, word(t)); },
                    [&](E h, unsigned t) { return dl::pickneglogsoftmax(h, tag(t)); });
    };
    g.m.reset_gradient();
    dl::ComputationGraph cg;
    E loss = build(cg);
    const float by_structure = dl::as_scalar(programs.forward(loss, 0));
    programs.backward(loss);
    const std::vector<float> dW = dl::as_vector(g.W.get_storage().g);
    const std::vector<float> dE = test::table_gradient(g.table.get_storage());
    BOOST_REQUIRE(programs.last_program() != nullptr);
    if (r >= 1)
      BOOST_CHECK_MESSAGE(programs.last_program()->device_graph(), "round " << r << ": replay ran kernel by kernel");
    g.m.reset_gradient();
    dl::ComputationGraph fresh;
    E same = build(fresh);
    const float rebuilt = dl::as_scalar(fresh.forward(same));
    fresh.backward(same);
    check_vectors({by_structure}, {rebuilt}, "loss of round " + std::to_string(r));
    check_vectors(dW, dl::as_vector(g.W.get_storage().g), "dW of round " + std::to_string(r));
    check_vectors(dE, test::table_gradient(g.table.get_storage()), "dE of round " + std::to_string(r));
    trainer.update();
  }
  BOOST_CHECK_EQUAL(programs.misses(), 1u);
  BOOST_CHECK_EQUAL(programs.hits(), 9u);
}

// Batched programs of one cache on the GPU, four structures in turns (two
// sentences of lengths n and n + 1 per graph, batching across them): each
// replay and its backward, launched CUDA graphs of the recorded groups, equal a
// graph of the same structure built afresh with the same batching, over
// updates; no structure is captured twice.
BOOST_AUTO_TEST_CASE(batched_programs_in_turns_match_rebuilds) {
  OnGpu on_gpu;
  GpuBiLstm g;
  dl::SimpleSGDTrainer trainer(g.m, 0.2f);
  dl::ProgramCache programs(8);
  auto name = [](char c, unsigned s, unsigned t) {
    return std::string(1, c) + std::to_string(s) + "_" + std::to_string(t);
  };
  std::mt19937 rng(5);
  uint64_t replays = 0;
  for (unsigned r = 0; r < 24; ++r) {
    const unsigned len = 3 + (r * 3) % 4;
    const unsigned lens[2] = {len, len + 1};
    std::vector<unsigned> words[2], tags[2];
    for (unsigned s = 0; s < 2; ++s)
      for (unsigned t = 0; t < lens[s]; ++t) words[s].push_back(rng() % 11), tags[s].push_back(rng() % 4);
    dl::Program& p = programs.get(len, [&](dl::Program& q) {
      q.graph().set_autobatch(1);
      E total;
      for (unsigned s = 0; s < 2; ++s) {
        E l = g.loss(q.graph(), lens[s], [&](unsigned t) { return q.lookup(name('w', s, t), g.table); },
                     [&](E h, unsigned t) { return dl::pickneglogsoftmax(h, q.index(name('t', s, t))); });
        total = s == 0 ? l : total + l;
      }
      q.set_output(total);
    });
    for (unsigned s = 0; s < 2; ++s)
      for (unsigned t = 0; t < lens[s]; ++t) p.set(name('w', s, t), words[s][t]), p.set(name('t', s, t), tags[s][t]);
    g.m.reset_gradient();
    const uint64_t before = p.replays();
    const float value = dl::as_scalar(p.forward());
    p.backward();
    replays += p.replays() - before;
    // Small groups: recorded at the first replay, forward and backward.
    BOOST_CHECK_MESSAGE(p.device_graph() == (p.replays() > 0), "round " << r << ": graph " << p.device_graph());
    BOOST_CHECK_MESSAGE(p.backward_device_graph() == (p.replays() > 0),
                        "round " << r << ": backward graph " << p.backward_device_graph());
    const BiLstmRun replayed = collect(g, value);
    g.m.reset_gradient();
    dl::ComputationGraph cg;
    cg.set_autobatch(1);
    E total;
    for (unsigned s = 0; s < 2; ++s) {
      E l = g.loss(cg, lens[s], [&](unsigned t) { return dl::lookup(cg, g.table, words[s][t]); },
                   [&](E h, unsigned t) { return dl::pickneglogsoftmax(h, tags[s][t]); });
      total = s == 0 ? l : total + l;
    }
    const float rebuilt = dl::as_scalar(cg.forward(total));
    cg.backward(total);
    check_same(g, replayed, collect(g, rebuilt), r);
    trainer.update();
  }
  BOOST_CHECK_EQUAL(programs.misses(), 4u);
  BOOST_CHECK_EQUAL(replays, 20u);
}

BOOST_AUTO_TEST_CASE(random_draws_replay_kernel_by_kernel) {
  OnGpu on_gpu;
  GpuModel g;
  dl::Program drop;
  drop.set_output(dl::sum_elems(dl::dropout(dl::parameter(drop.graph(), g.W) * drop.input("x", Dim({4})), 0.5f)));
  drop.set("x", test::test_values(4, 1.f));
  std::vector<float> seen;
  for (int r = 0; r < 6; ++r) seen.push_back(dl::as_scalar(drop.forward()));
  BOOST_CHECK(!drop.device_graph());
  BOOST_CHECK_MESSAGE(std::count(seen.begin(), seen.end(), seen[0]) < 6, "dropout drew the same mask at every run");
}

namespace {
/// Three words (one looked up twice in a batch) through W, each picked by a
/// loss: with batching, a group of lookups and a group of losses whose indices
/// are combined from the members'.
E batched_words_loss(dl::ComputationGraph& cg, GpuModel& g, const std::function<E(unsigned)>& word,
                     const std::function<E(E, unsigned)>& pick) {
  E W = dl::parameter(cg, g.W), b = dl::parameter(cg, g.b);
  std::vector<E> losses;
  for (unsigned t = 0; t < 3; ++t) losses.push_back(pick(dl::tanh(dl::affine_transform({b, W, word(t)})), t));
  return dl::sum(losses);
}
}  // namespace

// A batched program on the GPU launches one CUDA graph of its groups from its
// first replay, and one of its backward pass; before each launch the groups'
// combined indices (and the lookups' gradient rows) are written again from the
// slots.  Every replay, training or inference only, equals a
// graph built afresh; an index out of range is refused before the launch.
BOOST_AUTO_TEST_CASE(batched_programs_launch_cuda_graphs_with_new_indices) {
  OnGpu on_gpu;
  GpuModel g;
  dl::SimpleSGDTrainer trainer(g.m, 0.1f);
  dl::Program p;
  p.graph().set_autobatch(1);
  auto slot = [](char c, unsigned t) { return std::string(1, c) + std::to_string(t); };
  p.set_output(batched_words_loss(
      p.graph(), g, [&](unsigned t) { return t == 1 ? p.lookup("w1", g.E, 2) : p.lookup(slot('w', t), g.E); },
      [&](E h, unsigned t) {
        return t == 1 ? dl::sum_batches(dl::pickneglogsoftmax(h, p.indices("t1", 2))) : dl::pickneglogsoftmax(h, p.index(slot('t', t)));
      }));
  for (unsigned r = 0; r < 10; ++r) {
    const unsigned w0 = r % 9, w2 = (r * 4 + 1) % 9, t0 = r % 5, t2 = (r + 2) % 5;
    const std::vector<unsigned> w1 = {(r + 5) % 9, r % 9}, t1 = {(r * 3) % 5, (r + 1) % 5};
    p.set("w0", w0), p.set("w2", w2), p.set("w1", w1), p.set("t0", t0), p.set("t2", t2), p.set("t1", t1);
    const bool train = r % 3 != 2;
    g.m.reset_gradient();
    const float replayed = dl::as_scalar(p.forward());
    if (train) p.backward();
    BOOST_CHECK_MESSAGE(p.device_graph() == (r >= 1), "round " << r << ": graph " << p.device_graph());
    // The first backward after a launched forward graph is recorded as one too.
    if (train)
      BOOST_CHECK_MESSAGE(p.backward_device_graph() == (r >= 1), "round " << r << ": backward graph "
                                                                          << p.backward_device_graph());
    const std::vector<float> dW = dl::as_vector(g.W.get_storage().g);
    const std::vector<float> dE = test::table_gradient(g.E.get_storage());
    const std::set<unsigned> rows(g.E.get_storage().non_zero_grads.begin(), g.E.get_storage().non_zero_grads.end());
    g.m.reset_gradient();
    dl::ComputationGraph cg;
    cg.set_autobatch(1);
    const std::vector<unsigned> word = {w0, 0, w2}, tag = {t0, 0, t2};
    E loss = batched_words_loss(
        cg, g, [&](unsigned t) { return t == 1 ? dl::lookup(cg, g.E, w1) : dl::lookup(cg, g.E, word[t]); },
        [&](E h, unsigned t) {
          return t == 1 ? dl::sum_batches(dl::pickneglogsoftmax(h, t1)) : dl::pickneglogsoftmax(h, tag[t]);
        });
    const float rebuilt = dl::as_scalar(cg.forward(loss));
    BOOST_CHECK_CLOSE(replayed, rebuilt, 1e-4);
    if (train) {
      cg.backward(loss);
      test::check_close(dW, dl::as_vector(g.W.get_storage().g), 1e-4f);
      test::check_close(dE, test::table_gradient(g.E.get_storage()), 1e-4f);
      BOOST_CHECK(rows == std::set<unsigned>(g.E.get_storage().non_zero_grads.begin(),
                                             g.E.get_storage().non_zero_grads.end()));
      trainer.update();
    }
  }
  p.set("w2", 9u);
  test::check_throws_with<dl::index_error>([&] { p.forward(); }, {"lookup", "index 9", "'/E'", "9 rows"});
  p.set("w2", 3u), p.set("t2", 5u);
  test::check_throws_with<dl::index_error>([&] { p.forward(); }, {"pickneglogsoftmax", "index 5", "5 rows"});
}

BOOST_AUTO_TEST_SUITE_END()

// ============================================================ without a GPU too

BOOST_AUTO_TEST_CASE(library_is_built_with_the_cuda_backend) {
  BOOST_CHECK(dl::has_cuda_backend());
  // Every op the benchmarks need has a GPU forward kernel in the table.
  for (dl::OpKind op :
       {dl::OpKind::Input, dl::OpKind::Parameter, dl::OpKind::Lookup, dl::OpKind::MatMul, dl::OpKind::AffineTransform,
        dl::OpKind::Tanh, dl::OpKind::LogSoftmax, dl::OpKind::PickNegLogSoftmax, dl::OpKind::Concatenate,
        dl::OpKind::PickRange, dl::OpKind::Dropout, dl::OpKind::SumBatches, dl::OpKind::VanillaLSTMGates,
        dl::OpKind::VanillaLSTMGatesDropout, dl::OpKind::VanillaLSTMC, dl::OpKind::VanillaLSTMH,
        dl::OpKind::TreeLSTMGates, dl::OpKind::TreeLSTMC, dl::OpKind::TreeLSTMH}) {
    const dl::OpInfo& r = dl::op_info(op);
    BOOST_CHECK_MESSAGE(r.forward[1] != nullptr, r.name << " has no GPU forward kernel");
    BOOST_CHECK_MESSAGE(r.backward[1] != nullptr || r.accumulate || r.blocks_gradient,
                        r.name << " has no GPU backward kernel");
  }
}

BOOST_AUTO_TEST_CASE(asking_for_a_missing_gpu_is_a_clear_error) {
  int count = 0;
  cudaError_t st = cudaGetDeviceCount(&count);
  cudaGetLastError();
  if (st == cudaSuccess && count > 0) {
    BOOST_TEST_MESSAGE("this machine has a GPU: the missing-GPU error cannot be provoked; checking a bad number");
    int argc = 3;
    std::string a0 = "prog", a1 = "--dynet-devices", a2 = "GPU:" + std::to_string(count);
    char* argv_storage[] = {&a0[0], &a1[0], &a2[0], nullptr};
    char** argv = argv_storage;
    test::check_throws_with<dl::index_error>([&] { dl::initialize(argc, argv); },
                                             {"--dynet-devices", a2.c_str(), "CUDA device"});
    return;
  }
  for (const char* flag : {"--dynet-gpus", "--dynet-devices"}) {
    int argc = 3;
    std::string a0 = "prog", a1 = flag, a2 = std::string(flag) == "--dynet-gpus" ? "1" : "CPU,GPU:0";
    char* argv_storage[] = {&a0[0], &a1[0], &a2[0], nullptr};
    char** argv = argv_storage;
    test::check_throws_with<dl::cuda_error>([&] { dl::initialize(argc, argv); },
                                            {"no CUDA device found (cudaGetDeviceCount: ", flag});
    BOOST_CHECK(dl::default_device() == dl::cpu_device());
  }
}

BOOST_AUTO_TEST_CASE(bad_device_lists_are_rejected) {
  dl::DynetParams p;
  p.ids_requested = true;
  p.devices = "GPU:0,TPU:1";
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    // Without a GPU the device count check comes first.
    test::check_throws_with<dl::cuda_error>([&] { dl::initialize(p); }, {"no CUDA device found"});
    return;
  }
  test::check_throws_with<std::invalid_argument>([&] { dl::initialize(p); }, {"unknown device 'TPU:1'"});
}

BOOST_AUTO_TEST_CASE(cuda_status_checks_name_call_and_place) {
  int line = 0;
  test::check_throws_with<dl::cuda_error>(
      [&] {
        line = __LINE__ + 1;
        DYNET_LITE_CUDA_CHECK(cudaErrorInvalidValue);
      },
      {"cudaErrorInvalidValue failed at ", "test_cuda.cc:", "cudaErrorInvalidValue: "});
  // The line is the one of the failed call.
  try {
    line = __LINE__ + 1;
    DYNET_LITE_CUDA_CHECK(cudaErrorMemoryAllocation);
    BOOST_ERROR("no exception");
  } catch (const dl::cuda_error& e) {
    BOOST_CHECK_MESSAGE(std::string(e.what()).find("test_cuda.cc:" + std::to_string(line) + ":") != std::string::npos,
                        e.what());
  }
  test::check_throws_with<dl::cuda_error>([] { DYNET_LITE_CUBLAS_CHECK(CUBLAS_STATUS_NOT_INITIALIZED); },
                                          {"CUBLAS_STATUS_NOT_INITIALIZED", "failed at ", "test_cuda.cc:"});
  // A successful call does nothing.
  DYNET_LITE_CUDA_CHECK(cudaSuccess);
  DYNET_LITE_CUBLAS_CHECK(CUBLAS_STATUS_SUCCESS);
  BOOST_CHECK_EQUAL(std::string(dl::cuda::cublas_status_name(CUBLAS_STATUS_ALLOC_FAILED)), "CUBLAS_STATUS_ALLOC_FAILED");
}
