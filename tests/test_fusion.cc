#define BOOST_TEST_MODULE fusion
// Fused element-wise regions (exec/fusion.h) must give the values and gradients
// of unfused execution.  A property-based test draws random element-wise DAGs
// (unary functions, scalar ops, +, -, cmult, cdiv, n-ary sums, slices of wider
// values, of vectors and of matrices, with a batch of 1 or 2) over several
// instances, and compares every node's value and gradient and every parameter's
// gradient across plain execution and both batching strategies, fused and not.
#include <random>

#include "dynet_lite/compile.h"
#include "dynet_lite/exec/autobatch.h"
#include "test_utils.h"

using namespace dynet_lite;

namespace {

constexpr unsigned D = 4;  // a vector is {D}, a matrix {2, D}

struct TestModel {
  ParameterCollection pc;
  Parameter vec, mat, wide_w, wide_b;  // {D}, {2, D}, {3D, D}, {3D}
  LookupParameter emb;                 // {D} x 10
  TestModel() {
    vec = pc.add_parameters({D});
    mat = pc.add_parameters({2, D});
    wide_w = pc.add_parameters({3 * D, D});
    wide_b = pc.add_parameters({3 * D});
    emb = pc.add_lookup_parameters(10, {D});
  }
};

struct Result {
  std::vector<std::vector<float>> values, node_grads, param_grads;
  AutobatchStats stats;
};

/// One instance's random element-wise program.  Values of one shape class
/// (vectors, matrices, each with a batch of 1 or, for `batched`, 2) are combined
/// with each other only, so that every binary op sees equal shapes; slices come
/// from wider values (an affine output {3D}, a matrix {2, 3D} sliced along its
/// columns: one block each, run as views) or cut a matrix's rows (not one block:
/// such groups run unfused).
class InstanceBuilder {
 public:
  InstanceBuilder(ComputationGraph& cg, TestModel& m, std::mt19937& gen, bool batched)
      : cg_(cg), m_(m), gen_(gen), batched_(batched) {}

  /// Builds the program and returns the instance's loss.
  Expression build(std::vector<Expression>& outs) {
    sources();
    const unsigned steps = 3 + pick(20);
    for (unsigned s = 0; s < steps; ++s) {
      const unsigned cls = pick(2);
      std::vector<Expression>& pool = cls ? mats_ : vecs_;
      Expression e = step(pool, cls);
      pool.push_back(e);
      outs.push_back(e);
    }
    Expression loss = sum_elems(square(vecs_.back())) + sum_elems(cmult(mats_.back(), mats_[pick(mats_.size())]));
    return sum_batches(loss);
  }

 private:
  unsigned pick(size_t n) { return static_cast<unsigned>(gen_() % n); }
  Expression any(const std::vector<Expression>& pool) { return pool[pick(pool.size())]; }

  Expression vector_source() {
    if (batched_ && pick(2)) return lookup(cg_, m_.emb, std::vector<unsigned>{pick(10), pick(10)});
    switch (pick(3)) {
      case 0:
        return lookup(cg_, m_.emb, pick(10));
      case 1:
        return input(cg_, Dim({D}), test::test_values(D, 0.1f * pick(5)));
      default:
        return parameter(cg_, m_.vec);
    }
  }
  Expression matrix_source() {
    return pick(2) ? parameter(cg_, m_.mat) : input(cg_, Dim({2, D}), test::test_values(2 * D, 0.1f * pick(5)));
  }

  void sources() {
    for (unsigned k = 0; k < 2; ++k) vecs_.push_back(vector_source());
    mats_.push_back(matrix_source());
    wide_ = affine_transform({parameter(cg_, m_.wide_b), parameter(cg_, m_.wide_w), vecs_[0]});
    wide_mat_ = input(cg_, Dim({2, 3 * D}), test::test_values(6 * D, 0.05f * pick(5)));
  }

  Expression step(const std::vector<Expression>& pool, unsigned cls) {
    const Expression a = any(pool), b = any(pool);
    switch (pick(17)) {
      case 0:
        return tanh(a);
      case 1:
        return logistic(a);
      case 2:
        return rectify(a) + b;
      case 3:
        return 1.f - a;
      case 4:
        return a * 0.5f;
      case 5:
        return a + b;
      case 6:
        return a - b;
      case 7:
        return cmult(a, b);
      case 8:
        return cdiv(a, logistic(b) + 1.f);
      case 9:
        return sum({a, b, any(pool)});
      case 10:
        return -a;
      case 11:
        return exp(a * 0.1f);
      case 12:
        return softsign(a) + 0.25f;
      case 13: {  // a slice that is one block of its argument
        const unsigned s = pick(3);
        return cls ? pick_range(wide_mat_, s * D, (s + 1) * D, 1) : pick_range(wide_, s * D, (s + 1) * D);
      }
      case 14:  // rows of a matrix: not one block
        return cls ? concatenate({pick_range(a, 0, 1, 0), pick_range(b, 1, 2, 0)}) : tanh(a);
      case 15:
        return cls ? a : cmult(a, vector_source());  // a new source, maybe another batch size
      default:
        return square(a) - b;
    }
  }

  ComputationGraph& cg_;
  TestModel& m_;
  std::mt19937& gen_;
  const bool batched_;
  std::vector<Expression> vecs_, mats_;
  Expression wide_, wide_mat_;
};

/// Graph `seed` under the given strategy, fusion and merging of equal
/// expressions.  The program is drawn from `seed` alone.
/// With `reuse`, the program is built in that graph after clearing it (its
/// arenas then hold the previous graph's values and gradients).
Result run_program(TestModel& m, unsigned seed, int strategy, bool fusion, int cse, ComputationGraph* reuse = nullptr) {
  std::mt19937 top(seed), gen;
  ComputationGraph fresh;
  ComputationGraph& cg = reuse ? *reuse : fresh;
  if (reuse) cg.clear();
  cg.set_autobatch(strategy);
  cg.set_fusion(fusion);
  cg.set_cse(cse);
  m.pc.reset_gradient();
  const bool batched = seed % 3 == 0;
  std::vector<Expression> outs, losses;
  const unsigned instances = 1 + top() % 7;
  unsigned instance_seed = 0;
  for (unsigned inst = 0; inst < instances; ++inst) {
    if (inst == 0 || top() % 3 != 0) instance_seed = top();  // else the previous instance again
    gen.seed(instance_seed);
    losses.push_back(InstanceBuilder(cg, m, gen, batched).build(outs));
  }
  Expression loss = sum(losses);
  cg.forward(loss);
  cg.backward(loss, seed % 4 == 0);
  Result r;
  for (const Expression& e : outs) r.values.push_back(as_vector(e.value()));
  r.values.push_back(as_vector(loss.value()));
  if (!cg.cse())
    for (VariableIndex i = 0; i <= loss.i; ++i) r.node_grads.push_back(as_vector(cg.get_gradient(i)));
  for (auto& p : m.pc.parameters_list()) r.param_grads.push_back(as_vector(p->g));
  r.param_grads.push_back(test::table_gradient(m.emb.get_storage()));
  r.stats = cg.autobatch_stats();
  return r;
}

void check_close(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b, float tol,
                 const std::string& what) {
  BOOST_REQUIRE_EQUAL(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    BOOST_REQUIRE_EQUAL(a[i].size(), b[i].size());
    for (size_t k = 0; k < a[i].size(); ++k)
      BOOST_REQUIRE_MESSAGE(std::fabs(a[i][k] - b[i][k]) <= tol * (1 + std::fabs(a[i][k])),
                            what << " " << i << "[" << k << "]: " << a[i][k] << " vs " << b[i][k]);
  }
  test::counts().value_checks += a.size();
}

void check_same(const Result& plain, const Result& r, const std::string& what) {
  check_close(plain.values, r.values, 1e-5f, what + " value");
  if (!r.node_grads.empty()) check_close(plain.node_grads, r.node_grads, 1e-4f, what + " node gradient");
  check_close(plain.param_grads, r.param_grads, 1e-4f, what + " parameter gradient");
}

}  // namespace

BOOST_AUTO_TEST_CASE(random_elementwise_dags_fused_equal_unfused) {
  TestModel m;
  uint64_t regions = 0, fused_groups = 0, groups_unfused = 0;
  for (unsigned seed = 1 + test::seed_offset(); seed <= 400 + test::seed_offset(); ++seed) {
    const Result plain = run_program(m, seed, 0, true, 0);
    BOOST_REQUIRE_EQUAL(plain.stats.fused_regions, 0u);  // plain execution never fuses
    for (int strategy : {1, 2})
      for (int cse : {0, 1}) {
        const std::string what =
            "graph " + std::to_string(seed) + " strategy " + std::to_string(strategy) + " cse " + std::to_string(cse);
        const Result fused = run_program(m, seed, strategy, true, cse);
        check_same(plain, fused, what + " fused");
        const Result unfused = run_program(m, seed, strategy, false, cse);
        check_same(plain, unfused, what + " unfused");
        BOOST_REQUIRE_EQUAL(unfused.stats.fused_regions, 0u);
        regions += fused.stats.fused_regions;
        fused_groups += fused.stats.fused_groups;
        groups_unfused += unfused.stats.kernels;
      }
  }
  BOOST_TEST_MESSAGE("fused regions " << regions << " of " << fused_groups << " groups; unfused kernels "
                                      << groups_unfused);
  BOOST_CHECK_GT(regions, 1000u);
  BOOST_CHECK_GT(fused_groups, 2 * regions);  // regions of several groups, not single ones
}

// The same programs in one graph per strategy, cleared and rebuilt each time:
// gradients a fused region writes without zeroing them first must not show
// what the previous graph left in the arena.
BOOST_AUTO_TEST_CASE(random_elementwise_dags_in_a_reused_graph) {
  TestModel m;
  ComputationGraph reused[2];
  for (unsigned seed = 1001 + test::seed_offset(); seed <= 1200 + test::seed_offset(); ++seed) {
    const Result plain = run_program(m, seed, 0, true, 0);
    for (int strategy : {1, 2})
      check_same(plain, run_program(m, seed, strategy, true, seed % 2, &reused[strategy - 1]),
                 "graph " + std::to_string(seed) + " strategy " + std::to_string(strategy) + " reused");
  }
}

// A DyNet user's Tree-LSTM cell written with primitive expressions (as
// bench/dynet_treelstm.cc): slices of one affine output, gates, the cell as a sum
// of products with the children's cells.  Fused, it must give the values and
// gradients of unfused execution, and its element-wise groups must run fused.
BOOST_AUTO_TEST_CASE(primitive_tree_lstm_cell) {
  const unsigned H = 5;
  ParameterCollection pc;
  Parameter pw = pc.add_parameters({5 * H, H}), pu0 = pc.add_parameters({5 * H, H}),
            pu1 = pc.add_parameters({5 * H, H});
  Parameter pb = pc.add_parameters({5 * H});
  LookupParameter emb = pc.add_lookup_parameters(7, {H});
  auto run = [&](int strategy, bool fusion) {
    ComputationGraph cg;
    cg.set_autobatch(strategy);
    cg.set_fusion(fusion);
    cg.set_cse(0);
    pc.reset_gradient();
    Expression W = parameter(cg, pw), U0 = parameter(cg, pu0), U1 = parameter(cg, pu1), b = parameter(cg, pb);
    std::vector<Expression> losses, outs;
    for (unsigned tree = 0; tree < 6; ++tree) {
      // A left-branching tree over 2 + tree % 3 words.
      Expression h, c;
      for (unsigned w = 0; w < 2 + tree % 3; ++w) {
        Expression pre = affine_transform({b, W, lookup(cg, emb, (tree + w) % 7)});
        Expression io = logistic(pick_range(pre, 0, 2 * H)), u = tanh(pick_range(pre, 2 * H, 3 * H));
        Expression leaf_c = cmult(pick_range(io, 0, H), u);
        Expression leaf_h = cmult(pick_range(io, H, 2 * H), tanh(leaf_c));
        if (w == 0) {
          h = leaf_h;
          c = leaf_c;
          continue;
        }
        pre = affine_transform({b, U0, h, U1, leaf_h});
        io = logistic(pick_range(pre, 0, 2 * H));
        u = tanh(pick_range(pre, 2 * H, 3 * H));
        Expression f = logistic(pick_range(pre, 3 * H, 5 * H) + 1.f);
        c = cmult(pick_range(io, 0, H), u) + cmult(pick_range(f, 0, H), c) + cmult(pick_range(f, H, 2 * H), leaf_c);
        h = cmult(pick_range(io, H, 2 * H), tanh(c));
        outs.push_back(h);
      }
      losses.push_back(sum_elems(square(h - 0.1f * tree)));
    }
    Expression loss = sum(losses);
    cg.forward(loss);
    cg.backward(loss);
    Result r;
    for (const Expression& e : outs) r.values.push_back(as_vector(e.value()));
    for (VariableIndex i = 0; i <= loss.i; ++i) r.node_grads.push_back(as_vector(cg.get_gradient(i)));
    for (auto& p : pc.parameters_list()) r.param_grads.push_back(as_vector(p->g));
    r.param_grads.push_back(test::table_gradient(emb.get_storage()));
    r.stats = cg.autobatch_stats();
    return r;
  };
  const Result plain = run(0, true);
  for (int strategy : {1, 2}) {
    const Result fused = run(strategy, true), unfused = run(strategy, false);
    check_same(plain, fused, "fused strategy " + std::to_string(strategy));
    check_same(plain, unfused, "unfused strategy " + std::to_string(strategy));
    BOOST_CHECK_GT(fused.stats.fused_regions, 0u);
    BOOST_CHECK_GT(fused.stats.fused_groups, 2 * fused.stats.fused_regions);
    BOOST_CHECK_LT(fused.stats.kernels, unfused.stats.kernels);
  }
}

// A compiled program replays its fused regions: new inputs give the values a
// graph built afresh gives, slices pointing at the new values.
BOOST_AUTO_TEST_CASE(compiled_program_replays_fused_regions) {
  ParameterCollection pc;
  Parameter pw = pc.add_parameters({3 * D, D});
  Parameter pb = pc.add_parameters({3 * D});
  auto build = [&](ComputationGraph& cg, const std::vector<Expression>& xs) {
    Expression W = parameter(cg, pw), b = parameter(cg, pb);
    std::vector<Expression> hs;
    for (const Expression& x : xs) {
      Expression pre = affine_transform({b, W, x});
      hs.push_back(cmult(logistic(pick_range(pre, 0, D)), tanh(pick_range(pre, D, 2 * D))) -
                   pick_range(pre, 2 * D, 3 * D));
    }
    return sum_elems(square(sum(hs)));
  };
  Program p;
  p.graph().set_autobatch(1);
  std::vector<Expression> xs;
  for (unsigned k = 0; k < 4; ++k) xs.push_back(p.input("x" + std::to_string(k), Dim({D})));
  p.set_output(build(p.graph(), xs));
  for (unsigned round = 0; round < 3; ++round) {
    std::vector<std::vector<float>> values;
    for (unsigned k = 0; k < 4; ++k) {
      values.push_back(test::test_values(D, 0.1f * (round + k)));
      p.set("x" + std::to_string(k), values.back());
    }
    const float replayed = as_scalar(p.forward());
    ComputationGraph fresh;
    fresh.set_autobatch(0);
    std::vector<Expression> fresh_xs;
    for (const auto& v : values) fresh_xs.push_back(input(fresh, Dim({D}), v));
    const float expected = as_scalar(fresh.forward(build(fresh, fresh_xs)));
    BOOST_CHECK_CLOSE(replayed, expected, 1e-3);
    BOOST_CHECK_GT(p.graph().autobatch_stats().fused_regions, 0u);
  }
}

// With check_validity a NaN made inside a fused region is reported.
BOOST_AUTO_TEST_CASE(nan_inside_a_fused_region_is_reported) {
  ComputationGraph cg;
  cg.set_autobatch(1);
  cg.set_check_validity(true);
  std::vector<Expression> losses;
  for (unsigned k = 0; k < 3; ++k) {
    Expression x = input(cg, Dim({D}), test::test_values(D));
    losses.push_back(sum_elems(tanh(log(x - 5.f))));
  }
  BOOST_CHECK_THROW(cg.forward(sum(losses)), std::runtime_error);
}
