#define BOOST_TEST_MODULE compile
// Compiled programs (dynet_lite/compile.h): a replay must give, to the bit, the
// values and gradients of the same graph built afresh, on random dynamic graphs
// (those of test_autobatch and sliced gates), with and without batching,
// merging and fusion of element-wise groups, over many replays with new inputs
// and updated parameters; misuse is a clear error; replays allocate nothing and
// keep memory flat.
#include <functional>
#include <memory>
#include <random>

#include "alloc_counter.h"
#include "dynet_lite/compile.h"
#include "dynet_lite/core/random.h"
#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/exec/plain_tape.h"
#include "dynet_lite/lstm.h"
#include "dynet_lite/training.h"
#include "many_ops.h"
#include "test_utils.h"

using namespace dynet_lite;

namespace {

template <class E, class F>
void check_throws_containing(F f, const char* part) {
  test::check_throws_with<E>(f, {part});
}

struct TestModel {
  ParameterCollection pc;
  std::vector<Parameter> mats, vecs;
  Parameter tree_w, tree_u, tree_b;
  LookupParameter emb;
  unsigned d;
  explicit TestModel(unsigned dim) : d(dim) {
    for (int i = 0; i < 3; ++i) mats.push_back(pc.add_parameters({d, d}));
    for (int i = 0; i < 3; ++i) vecs.push_back(pc.add_parameters({d}));
    tree_w = pc.add_parameters({4 * d, d});
    tree_u = pc.add_parameters({4 * d, d});
    tree_b = pc.add_parameters({4 * d});
    emb = pc.add_lookup_parameters(20, {d});
  }
};

/// The inputs of one run: every lookup's index and every input's values, by slot.
struct Bindings {
  std::vector<unsigned> indices;
  std::vector<std::vector<float>> inputs;
};

/// Builds random program `seed` (the graphs of test_autobatch and gates sliced
/// from one product, with every lookup and input a slot) into `p`; returns how many slots of each kind it declared.
std::pair<unsigned, unsigned> build(Program& p, TestModel& m, unsigned seed, int strategy, int cse, bool fusion) {
  std::mt19937 top(seed), gen;
  auto pick = [&](unsigned n) { return static_cast<unsigned>(gen() % n); };
  ComputationGraph& cg = p.graph();
  cg.set_autobatch(strategy);
  cg.set_cse(cse);
  cg.set_fusion(fusion);
  std::vector<Expression> mats, vecs, losses;
  for (auto& w : m.mats) mats.push_back(parameter(cg, w));
  for (auto& v : m.vecs) vecs.push_back(parameter(cg, v));
  const Expression tree[3] = {parameter(cg, m.tree_b), parameter(cg, m.tree_w), parameter(cg, m.tree_u)};
  unsigned lookups = 0, inputs = 0;
  auto next_lookup = [&] { return p.lookup("l" + std::to_string(lookups++), m.emb); };
  unsigned instances = 2 + top() % 6;
  for (unsigned inst = 0; inst < instances; ++inst) {
    gen.seed(top());
    Expression h = pick(2) ? next_lookup() : p.input("x" + std::to_string(inputs++), Dim({m.d}));
    const unsigned len = 1 + pick(6);
    for (unsigned t = 0; t < len; ++t) {
      Expression x = next_lookup();
      switch (pick(11)) {
        case 0: h = tanh(h + x); break;
        case 1: h = logistic(cmult(h, vecs[pick(3)])); break;
        case 2: h = h - x * 0.5f; break;
        case 3: h = sum({h, x, vecs[pick(3)]}); break;
        case 4: h = rectify(h) + cmult(x, x); break;
        case 5: h = tanh(cmult(h, x) + vecs[pick(3)]); break;
        case 6: h = exp(h * 0.1f) - 1.f; break;
        case 7: h = tanh(mats[pick(3)] * h + vecs[pick(3)]); break;
        case 8: h = tanh(affine_transform({vecs[pick(3)], mats[pick(3)], h, mats[pick(3)], x})); break;
        case 9: {
          Expression g = treelstm_gates_affine({tree[0], tree[1], x, tree[2], h}, 1);
          h = treelstm_h(treelstm_c(g, {h}, 1), g);
          break;
        }
        case 10: {  // gates sliced from one product: slices of a fused region are views
          Expression g = tree[1] * h + tree[2] * x;
          h = cmult(logistic(pick_range(g, 0, m.d)), tanh(pick_range(g, m.d, 2 * m.d))) -
              pick_range(g, 3 * m.d, 4 * m.d);
          break;
        }
      }
      if (pick(10) == 0) cg.incremental_forward(h);  // read in the middle of building
    }
    losses.push_back(sum_elems(square(h)));
  }
  p.set_output(sum(losses));
  return {lookups, inputs};
}

Bindings draw(std::mt19937& gen, std::pair<unsigned, unsigned> counts, unsigned d) {
  Bindings b;
  // Few distinct rows, so that equal lookups (and equal subexpressions) occur.
  for (unsigned i = 0; i < counts.first; ++i) b.indices.push_back(gen() % 6);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (unsigned i = 0; i < counts.second; ++i) {
    b.inputs.emplace_back(d);
    for (float& v : b.inputs.back()) v = u(gen);
  }
  return b;
}

void bind(Program& p, const Bindings& b) {
  for (unsigned i = 0; i < b.indices.size(); ++i) p.set("l" + std::to_string(i), b.indices[i]);
  for (unsigned i = 0; i < b.inputs.size(); ++i) p.set("x" + std::to_string(i), b.inputs[i]);
}

struct Run {
  std::vector<float> loss;
  std::vector<std::vector<float>> grads;
};

/// Forward and backward, adding to the parameters' gradients; their values after.
Run collect(Program& p, TestModel& m) {
  Run r;
  r.loss = as_vector(p.forward());
  p.backward();
  for (auto& w : m.pc.parameters_list()) r.grads.push_back(as_vector(w->g));
  r.grads.push_back(test::table_gradient(m.emb.get_storage()));
  return r;
}

Run run(Program& p, TestModel& m) {
  m.pc.reset_gradient();
  return collect(p, m);
}

/// One way of running the random graphs.
struct Config {
  int strategy, cse;
  bool fusion;
};

/// Plain execution, then each batching strategy with and without merging and fusion.
std::vector<Config> all_configs() {
  std::vector<Config> configs{{0, 0, false}};
  for (int strategy : {1, 2})
    for (int cse : {0, 1})
      for (bool fusion : {false, true}) configs.push_back({strategy, cse, fusion});
  return configs;
}

std::ostream& operator<<(std::ostream& os, const Config& c) {
  return os << "strategy " << c.strategy << " cse " << c.cse << " fusion " << c.fusion;
}

void check_bitwise(const Run& replay, const Run& rebuilt, unsigned seed, const Config& c, int round) {
  BOOST_REQUIRE_MESSAGE(replay.loss == rebuilt.loss, "graph " << seed << " " << c << " round " << round << ": loss "
                                                              << replay.loss[0] << " replayed, " << rebuilt.loss[0]
                                                              << " rebuilt");
  BOOST_REQUIRE_EQUAL(replay.grads.size(), rebuilt.grads.size());
  for (size_t i = 0; i < replay.grads.size(); ++i)
    BOOST_REQUIRE_MESSAGE(replay.grads[i] == rebuilt.grads[i], "graph " << seed << " " << c << " round " << round
                                                                        << ": gradient of parameter " << i
                                                                        << " differs");
}

}  // namespace

BOOST_AUTO_TEST_CASE(replay_equals_rebuild_on_random_graphs) {
  TestModel m(4);
  SimpleSGDTrainer trainer(m.pc, 0.05f);
  std::mt19937 gen(7);
  // Plain execution, then each batching strategy with and without merging and
  // fusion (a replayed fused region runs its lanes again, slices pointed anew).
  const std::vector<Config> configs = all_configs();
  uint64_t replays = 0, fused_regions = 0, unfused_regions = 0;
  for (unsigned seed = 1 + test::seed_offset(); seed <= 120 + test::seed_offset(); ++seed)
    for (const Config& c : configs) {
      Program compiled;
      const auto counts = build(compiled, m, seed, c.strategy, c.cse, c.fusion);
      for (int round = 0; round < 6; ++round) {
        const Bindings b = draw(gen, counts, m.d);
        Program fresh;
        build(fresh, m, seed, c.strategy, c.cse, c.fusion);
        bind(fresh, b);
        const Run rebuilt = run(fresh, m);
        bind(compiled, b);
        const Run replayed = run(compiled, m);
        if (round > 0) check_bitwise(replayed, rebuilt, seed, c, round);
        trainer.update();  // the next round reads the updated parameters
      }
      replays += compiled.replays();
      (c.fusion ? fused_regions : unfused_regions) += compiled.graph().autobatch_stats().fused_regions;
    }
  BOOST_TEST_MESSAGE(fused_regions << " fused regions captured");
  BOOST_CHECK_EQUAL(replays, 120u * configs.size() * 5);
  // The property covers fused regions: most graphs have some.
  BOOST_CHECK_GT(fused_regions, 120u * 4);
  BOOST_CHECK_EQUAL(unfused_regions, 0u);
}

// The same random graphs as programs of one cache, run in turns: each takes
// the cache's memory from the one before, a batched one computing its values
// again where its capture put them, and still equals the graph built afresh,
// to the bit.
BOOST_AUTO_TEST_CASE(programs_taking_turns_equal_rebuilt_random_graphs) {
  TestModel m(4);
  SimpleSGDTrainer trainer(m.pc, 0.05f);
  std::mt19937 gen(11);
  const std::vector<Config> configs = all_configs();
  for (const Config& c : configs) {
    ProgramCache cache(8);
    std::vector<std::pair<unsigned, unsigned>> counts(9);
    uint64_t replays = 0;
    for (int round = 0; round < 40; ++round) {
      const unsigned seed = 1 + (round * 5) % 8;  // 8 graphs, in turns
      Program& p = cache.get(seed, [&](Program& q) { counts[seed] = build(q, m, seed, c.strategy, c.cse, c.fusion); });
      const Bindings b = draw(gen, counts[seed], m.d);
      Program fresh;
      build(fresh, m, seed, c.strategy, c.cse, c.fusion);
      bind(fresh, b);
      const Run rebuilt = run(fresh, m);
      bind(p, b);
      const uint64_t before = p.replays();
      const Run replayed = run(p, m);
      replays += p.replays() - before;
      check_bitwise(replayed, rebuilt, seed, c, round);
      trainer.update();
    }
    BOOST_CHECK_EQUAL(cache.misses(), 8u);
    BOOST_CHECK_EQUAL(replays, 32u);  // every run after a program's first: none captured again
  }
}

// Backward adds to the parameters' gradients whatever they hold: a replay
// finds them zero or not as the rebuilt graph did (a second pass without an
// update between, say) and adds alike, to the bit.
BOOST_AUTO_TEST_CASE(replay_adds_to_gradients_already_there) {
  TestModel m(4);
  SimpleSGDTrainer trainer(m.pc, 0.05f);
  std::mt19937 gen(11);
  const Config c{0, 0, false};
  auto bound = [&](Program& p, const Bindings& b) {
    bind(p, b);
    return collect(p, m);
  };
  for (unsigned seed = 1 + test::seed_offset(); seed <= 40 + test::seed_offset(); ++seed) {
    Program compiled;
    const auto counts = build(compiled, m, seed, c.strategy, c.cse, c.fusion);
    for (int round = 0; round < 4; ++round) {
      const Bindings b1 = draw(gen, counts, m.d), b2 = draw(gen, counts, m.d);
      m.pc.reset_gradient();
      Program first, second;
      build(first, m, seed, c.strategy, c.cse, c.fusion);
      bound(first, b1);
      build(second, m, seed, c.strategy, c.cse, c.fusion);
      const Run rebuilt = bound(second, b2);
      m.pc.reset_gradient();
      bound(compiled, b1);
      const Run replayed = bound(compiled, b2);
      check_bitwise(replayed, rebuilt, seed, c, round);
      trainer.update();
    }
  }
}

// An LSTM's input products W_x x_t (vanilla_lstm_gates) are computed for a
// whole sequence at once in a replay, and their operands' gradients go back in
// one product (core/op_info.h ColumnProduct): to the bit what each step's own
// products give, with the inputs shared by both directions, a word read twice,
// words looked up in the loop of their steps (the lookups then run earlier), a
// second layer (whose inputs come from the first, so not grouped) and a graph
// wider than the kept memory's limit.
BOOST_AUTO_TEST_CASE(replayed_lstm_input_products_equal_the_steps_own) {
  struct Shape {
    unsigned layers, hidden;
    bool in_loop;  // each word looked up just before the forward LSTM reads it
  };
  const Shape shapes[] = {{1, 21, false}, {1, 128, false}, {2, 21, false}, {2, 128, false}, {1, 21, true}, {2, 128, true}};
  for (const auto& [layers, hidden, in_loop] : shapes) {
    ParameterCollection pc;
    const unsigned emb_dim = 37, words = 12;
    LookupParameter emb = pc.add_lookup_parameters(words, {emb_dim});
    VanillaLSTMBuilder fwd(layers, emb_dim, hidden, pc), bwd(layers, emb_dim, hidden, pc);
    Parameter w = pc.add_parameters({5, 2 * hidden}), b = pc.add_parameters({5});
    SimpleSGDTrainer trainer(pc, 0.1f);
    auto build = [&](Program& p, unsigned length) {
      ComputationGraph& cg = p.graph();
      fwd.new_graph(cg);
      bwd.new_graph(cg);
      fwd.start_new_sequence();
      bwd.start_new_sequence();
      std::vector<Expression> xs, fh(length), bh(length), losses;
      if (in_loop) {
        for (unsigned t = 0; t < length; ++t) {
          xs.push_back(p.lookup("w" + std::to_string(t), emb));
          fh[t] = fwd.add_input(xs[t]);
        }
      } else {
        for (unsigned t = 0; t < length; ++t) xs.push_back(p.lookup("w" + std::to_string(t), emb));
        xs.push_back(xs[0]);  // the first word read again at the end
        for (unsigned t = 0; t < length; ++t) fh[t] = fwd.add_input(xs[t + 1]);
      }
      for (unsigned t = length; t-- > 0;) bh[t] = bwd.add_input(xs[t]);
      Expression W = parameter(cg, w), B = parameter(cg, b);
      for (unsigned t = 0; t < length; ++t)
        losses.push_back(pickneglogsoftmax(W * concatenate({fh[t], bh[t]}) + B, p.index("y" + std::to_string(t))));
      p.set_output(sum(losses));
    };
    std::mt19937 gen(5);
    for (const unsigned length : {2u, 9u, 1000u}) {
      Program compiled;
      build(compiled, length);
      for (int round = 0; round < 4; ++round) {
        std::vector<unsigned> ws(length), ys(length);
        for (unsigned t = 0; t < length; ++t) ws[t] = gen() % words, ys[t] = gen() % 5;
        auto bind_and_run = [&](Program& p) {
          for (unsigned t = 0; t < length; ++t) {
            p.set("w" + std::to_string(t), ws[t]);
            p.set("y" + std::to_string(t), ys[t]);
          }
          pc.reset_gradient();
          Run r;
          r.loss = as_vector(p.forward());
          p.backward();
          for (auto& q : pc.parameters_list()) r.grads.push_back(as_vector(q->g));
          r.grads.push_back(test::table_gradient(emb.get_storage()));
          return r;
        };
        Program fresh;
        build(fresh, length);
        const Run rebuilt = bind_and_run(fresh);
        const Run replayed = bind_and_run(compiled);
        if (round > 0) check_bitwise(replayed, rebuilt, length, Config{0, 0, false}, round);
        trainer.update();
      }
      BOOST_CHECK_EQUAL(compiled.replays(), 3u);
      // Each direction's first layer is one group of every step.
      const auto groups = compiled.column_groups();
      BOOST_CHECK_EQUAL(groups.first, 2u);
      BOOST_CHECK_EQUAL(groups.second, 2u * length);
    }
  }
}

// Additions pass their gradient on unchanged: a replay's backward takes the
// gradient of x in x + b (x - b, sum, x + c) as the sum's own memory where
// nothing else writes x's, and makes no call for it.  An argument read twice
// or by other nodes keeps its own, and so does the last argument of a node
// whose every call would go (its call begins the node's backward).  Every
// gradient (full backward: the intermediate ones too) equals the rebuilt
// graph's, over updates.
BOOST_AUTO_TEST_CASE(replay_passes_gradients_through_additions) {
  ParameterCollection pc;
  const unsigned d = 8, rounds_of_cases = 5;
  Parameter pw = pc.add_parameters({d, d}), pu = pc.add_parameters({d, d}), pb = pc.add_parameters({d});
  SimpleSGDTrainer trainer(pc, 0.05f);
  std::vector<Expression> kept;  // every node whose gradient the test reads
  Expression out;
  auto build = [&](Program& p) {
    kept.clear();
    ComputationGraph& cg = p.graph();
    Expression W = parameter(cg, pw), U = parameter(cg, pu), b = parameter(cg, pb);
    Expression h = p.input("x", {d});
    auto keep = [&](Expression e) {
      kept.push_back(e);
      return e;
    };
    for (unsigned r = 0; r < rounds_of_cases; ++r) {
      h = tanh(keep(W * h) + b);                                  // W h passed
      h = tanh(keep(U * h) - b);                                  // U h passed
      h = logistic(sum({keep(W * h), keep(U * h), b}));           // both products passed
      h = tanh(keep(h) + 0.5f);                                   // the node's only call: kept
      Expression u = keep(W * h);
      h = tanh(u + u);                                            // read twice: kept
      Expression v = keep(U * h);
      h = keep(tanh(v + b)) + keep(cmult(v, v) * 0.01f);          // v read thrice: kept; one term passed
    }
    out = sum_elems(square(h));
    p.set_output(out);
  };
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (bool full : {false, true}) {
    Program compiled;
    build(compiled);
    const std::vector<Expression> compiled_kept = kept;
    const Expression compiled_out = out;
    for (int round = 0; round < 5; ++round) {
      std::vector<float> x(d);
      for (float& v : x) v = u(gen);
      auto run_it = [&](Program& p) {
        p.set("x", x);
        pc.reset_gradient();
        Run r;
        r.loss = as_vector(p.forward());
        p.backward(out, full);
        for (auto& q : pc.parameters_list()) r.grads.push_back(as_vector(q->g));
        return r;
      };
      Program fresh;
      build(fresh);
      const Run rebuilt = run_it(fresh);
      std::vector<std::vector<float>> fresh_grads;
      if (full)
        for (const Expression& e : kept) fresh_grads.push_back(as_vector(e.gradient()));
      kept = compiled_kept;
      out = compiled_out;
      const Run replayed = run_it(compiled);
      if (round > 0) check_bitwise(replayed, rebuilt, 0, Config{0, 0, false}, round);
      if (full && round > 0)
        for (size_t i = 0; i < kept.size(); ++i)
          BOOST_REQUIRE_MESSAGE(as_vector(kept[i].gradient()) == fresh_grads[i],
                                "round " << round << ": gradient of kept node " << i << " differs");
      trainer.update();
    }
    BOOST_CHECK_EQUAL(compiled.replays(), 4u);
    BOOST_CHECK_EQUAL(compiled.passed_gradients(), rounds_of_cases * 5);
  }
}

// A large parameter's node that one product alone reads gets its weight
// gradient written straight into the parameter's while that is zero, in a
// replay as in a rebuilt graph (the node's gradient then reads the
// parameter's); after a second pass before the update the replay does as the
// rebuilt graph does.  Bitwise equal every way, over updates.
BOOST_AUTO_TEST_CASE(replay_writes_a_large_weight_gradient_into_the_parameter) {
  const unsigned rows = 512, in = 160, cols = 24;  // W: 81,920 floats
  ParameterCollection pc;
  Parameter w = pc.add_parameters({rows, in}), b = pc.add_parameters({rows});
  SimpleSGDTrainer trainer(pc, 0.05f);
  auto loss_of = [&](ComputationGraph& cg, Expression& W, Expression x) {
    W = parameter(cg, w);
    return sum_batches(sum_elems(square(tanh(affine_transform({parameter(cg, b), W, x})))));
  };
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  auto draw = [&] {
    std::vector<float> x(size_t(in) * cols);
    for (float& v : x) v = u(gen);
    return x;
  };
  struct Pass {
    std::vector<float> loss, dw, db;
    bool node_reads_parameter;
  };
  auto finish = [&](const Tensor& loss, Expression& W) {
    const Tensor& g = W.gradient();
    return Pass{as_vector(loss), as_vector(w.get_storage().g), as_vector(b.get_storage().g),
                g.v == w.get_storage().g.v};
  };
  Program p;
  Expression pw;
  Expression ploss = loss_of(p.graph(), pw, p.input("x", Dim({in}, cols)));
  p.set_output(ploss);
  auto replay = [&](const std::vector<float>& x) {
    p.set("x", x);
    const Tensor& l = p.forward();
    p.backward();
    return finish(l, pw);
  };
  auto rebuild = [&](const std::vector<float>& x) {
    ComputationGraph cg;
    Expression W;
    Expression l = loss_of(cg, W, input(cg, Dim({in}, cols), x));
    const Tensor& v = cg.forward(l);
    cg.backward(l);
    return finish(v, W);
  };
  auto same = [](const Pass& a, const Pass& r, const std::string& what) {
    BOOST_CHECK_MESSAGE(a.loss == r.loss && a.dw == r.dw && a.db == r.db, what << ": replay differs from rebuild");
    BOOST_CHECK_MESSAGE(a.node_reads_parameter == r.node_reads_parameter,
                        what << ": the replay's W node " << (a.node_reads_parameter ? "reads" : "does not read")
                             << " the parameter's gradient, the rebuilt one's "
                             << (r.node_reads_parameter ? "does" : "does not"));
  };
  for (int round = 0; round < 8; ++round) {
    const std::vector<float> x = draw(), x2 = draw();
    const bool twice = round == 3 || round == 4;  // two passes before an update
    pc.reset_gradient();
    const Pass rebuilt = rebuild(x);
    const Pass rebuilt2 = twice ? rebuild(x2) : Pass{};
    pc.reset_gradient();
    const Pass replayed = replay(x);
    const Pass replayed2 = twice ? replay(x2) : Pass{};
    const std::string name = "round " + std::to_string(round);
    if (round > 0) {
      same(replayed, rebuilt, name);
      BOOST_CHECK_MESSAGE(replayed.node_reads_parameter, name << ": W's gradient went through its node");
    }
    if (twice) {
      same(replayed2, rebuilt2, name + ", second pass");
      BOOST_CHECK(!replayed2.node_reads_parameter);
    }
    trainer.update();
  }
  BOOST_CHECK_EQUAL(p.replays(), 7u + 2u);
}

// A loss's scores over many columns (two blocks of on_demand_columns or more)
// are not given a stored gradient: backward has the loss remake it a block at
// a time (GradientMark::OnDemand), in a replay as in a rebuilt graph, so that
// the gradients are the same to the bit (blocks sum in another order than one
// product over every column).  The output weight goes into its parameter's
// gradient while that is zero; read by a second node too, into its node's.
// The scores' gradient, asked for after backward, is remade alike.
BOOST_AUTO_TEST_CASE(replay_remakes_the_scores_gradient_as_a_rebuilt_graph_does) {
  const unsigned rows = 4096, in = 32, cols = 1100;  // scores: 2 blocks of 512 columns and 76
  ParameterCollection pc;
  Parameter w = pc.add_parameters({rows, in}), b = pc.add_parameters({rows}), e = pc.add_parameters({in, in});
  SimpleSGDTrainer trainer(pc, 0.05f);
  std::mt19937 gen(9);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (bool w_twice : {false, true}) {
    auto loss_of = [&](ComputationGraph& cg, Expression x, Expression& scores, const std::function<Expression(Expression)>& pick) {
      Expression W = parameter(cg, w);
      scores = affine_transform({parameter(cg, b), W, tanh(parameter(cg, e) * x)});
      Expression loss = sum_batches(pick(scores));
      return w_twice ? loss + sum_elems(W) * 0.001f : loss;
    };
    struct Pass {
      std::vector<float> loss, dw, db, de, dscores;
    };
    auto finish = [&](const Tensor& loss, Expression& scores) {
      const std::vector<float> ds = as_vector(scores.gradient());
      return Pass{as_vector(loss), as_vector(w.get_storage().g), as_vector(b.get_storage().g),
                  as_vector(e.get_storage().g), std::vector<float>(ds.begin(), ds.begin() + 3 * rows)};
    };
    Program p;
    Expression pscores;
    p.set_output(loss_of(p.graph(), p.input("x", Dim({in}, cols)), pscores,
                         [&](Expression s) { return pickneglogsoftmax(s, p.indices("y", cols)); }));
    for (int round = 0; round < 6; ++round) {
      std::vector<float> x(size_t(in) * cols), x2(x.size());
      for (float& v : x) v = u(gen);
      for (float& v : x2) v = u(gen);
      std::vector<unsigned> y(cols);
      for (unsigned& v : y) v = gen() % rows;
      const bool twice = round == 3;  // two passes before an update
      auto rebuild = [&](const std::vector<float>& xs) {
        ComputationGraph cg;
        Expression scores;
        Expression l = loss_of(cg, input(cg, Dim({in}, cols), xs), scores,
                               [&](Expression s) { return pickneglogsoftmax(s, y); });
        const Tensor& v = cg.forward(l);
        cg.backward(l);
        return finish(v, scores);
      };
      auto replay = [&](const std::vector<float>& xs) {
        p.set("x", xs);
        p.set("y", y);
        const Tensor& v = p.forward();
        p.backward();
        return finish(v, pscores);
      };
      pc.reset_gradient();
      Pass rebuilt = rebuild(x);
      if (twice) rebuilt = rebuild(x2);
      pc.reset_gradient();
      Pass replayed = replay(x);
      if (twice) replayed = replay(x2);
      if (round > 0) {
        BOOST_TEST_CONTEXT("W read " << (w_twice ? "twice" : "once") << ", round " << round) {
          BOOST_CHECK(replayed.loss == rebuilt.loss);
          BOOST_CHECK(replayed.dw == rebuilt.dw);
          BOOST_CHECK(replayed.db == rebuilt.db);
          BOOST_CHECK(replayed.de == rebuilt.de);
          BOOST_CHECK(replayed.dscores == rebuilt.dscores);
        }
      }
      trainer.update();
    }
    BOOST_CHECK_EQUAL(p.replays(), 6u);
  }
}

BOOST_AUTO_TEST_CASE(inference_replays_forward_only) {
  TestModel m(3);
  Program p;
  ComputationGraph& cg = p.graph();
  cg.set_autobatch(1);
  std::vector<Expression> outs;
  for (int i = 0; i < 5; ++i)
    outs.push_back(softmax(parameter(cg, m.mats[0]) * p.lookup("w" + std::to_string(i), m.emb)));
  Expression all = concatenate(outs);
  for (unsigned round = 0; round < 20; ++round) {
    for (int i = 0; i < 5; ++i) p.set("w" + std::to_string(i), (round + 3 * i) % 20);
    const std::vector<float> got = as_vector(p.forward(all));
    ComputationGraph fresh;
    std::vector<Expression> f;
    for (int i = 0; i < 5; ++i)
      f.push_back(softmax(parameter(fresh, m.mats[0]) * lookup(fresh, m.emb, (round + 3 * i) % 20)));
    BOOST_CHECK(got == as_vector(fresh.forward(concatenate(f))));
  }
  BOOST_CHECK_EQUAL(p.replays(), 19u);
}

BOOST_AUTO_TEST_CASE(misuse_is_a_clear_error) {
  auto model = std::make_unique<TestModel>(3);
  Program p;
  Expression x = p.input("x", Dim({3}));
  Expression y = tanh(parameter(p.graph(), model->mats[0]) * x + p.lookup("w", model->emb));
  p.set_output(sum_elems(y));
  // A slot never set.
  check_throws_containing<std::invalid_argument>([&] { p.forward(); }, "slot 'x' was never set");
  // Values of the wrong size, a slot that does not exist, a slot of another kind.
  check_throws_containing<std::invalid_argument>(
      [&] {
        p.set("x", std::vector<float>{1, 2});
      },
      "slot 'x' has shape {3} (3 values), given 2 values");
  check_throws_containing<std::invalid_argument>([&] { p.set("z", 1u); }, "no slot 'z'");
  check_throws_containing<std::invalid_argument>([&] { p.set("x", 1u); }, "slot 'x' is an input slot");
  check_throws_containing<std::invalid_argument>([&] { p.set(p.slot("w"), std::vector<float>{1}); },
                                                 "slot 'w' is an index slot");
  check_throws_containing<std::invalid_argument>([&] { p.set(Program::SlotRef(), 1u); }, "an empty slot handle");
  p.set("x", std::vector<float>{1, 2, 3});
  p.set("w", 4u);
  p.forward();
  // An index out of range, at the first run and at a replay.
  p.set("w", 20u);
  check_throws_containing<std::out_of_range>([&] { p.forward(); }, "index 20 out of range");
  p.set("w", 5u);
  BOOST_CHECK_NO_THROW(p.forward());
  // Another default device than at the capture.
  // Static: the library may keep a device pointer until the program ends.
  static test::HostMemoryDevice second_device(DeviceType::CPU, 1, "CPU:1");
  Device* second = &second_device;
  Device* first = default_device();
  set_default_device(second);
  check_throws_containing<std::invalid_argument>([&] { p.forward(); }, "the default device is now CPU:1");
  set_default_device(first);
  BOOST_CHECK_NO_THROW(p.forward());
  // Declaring a slot or adding a node after the capture.
  check_throws_containing<std::invalid_argument>([&] { p.input("late", Dim({3})); }, "after the program's first run");
  Expression extra = y * 2.f;
  check_throws_containing<std::invalid_argument>([&] { p.forward(extra); }, "was captured with");
  // An expression of another graph.
  ComputationGraph other;
  Expression foreign = input(other, 1.f);
  check_throws_containing<std::invalid_argument>([&] { p.forward(foreign); }, "belongs to another graph");
  // The model destroyed (with every handle to its parameters).
  Program q;
  Expression z = tanh(parameter(q.graph(), model->mats[1]) * q.input("x", Dim({3})));
  q.set_output(sum_elems(z));
  q.set("x", std::vector<float>{1, 2, 3});
  q.forward();
  model.reset();
  check_throws_containing<std::runtime_error>([&] { q.forward(); }, "destroyed with its model");
}

BOOST_AUTO_TEST_CASE(a_program_recomputed_by_hand_is_captured_again) {
  TestModel m(3);
  Program p;
  Expression y = tanh(parameter(p.graph(), m.mats[0]) * p.lookup("w", m.emb));
  p.set_output(sum_elems(y));
  p.set("w", 1u);
  const float first = as_scalar(p.forward());
  p.graph().forward(y);  // recomputes (and invalidates the capture)
  p.set("w", 2u);
  const float second = as_scalar(p.forward());
  ComputationGraph fresh;
  BOOST_CHECK_EQUAL(second,
                    as_scalar(fresh.forward(sum_elems(tanh(parameter(fresh, m.mats[0]) * lookup(fresh, m.emb, 2u))))));
  BOOST_CHECK_NE(first, second);
}

BOOST_AUTO_TEST_CASE(replays_allocate_nothing_and_memory_stays_flat) {
  TestModel m(8);
  for (int strategy : {0, 1}) {
    Program p;
    ComputationGraph& cg = p.graph();
    cg.set_autobatch(strategy);
    std::vector<Expression> losses;
    for (int s = 0; s < 4; ++s) {
      Expression h = p.input("x" + std::to_string(s), Dim({m.d}));
      for (int t = 0; t < 5; ++t)
        h = tanh(parameter(cg, m.mats[t % 3]) * h + p.lookup("w" + std::to_string(s * 5 + t), m.emb));
      losses.push_back(pickneglogsoftmax(h, p.index("y" + std::to_string(s))));
    }
    p.set_output(sum(losses));
    auto bind_round = [&](unsigned r) {
      for (int s = 0; s < 4; ++s) {
        p.set("x" + std::to_string(s), test::test_values(m.d, 0.01f * r));
        p.set("y" + std::to_string(s), (r + s) % m.d);
        for (int t = 0; t < 5; ++t) p.set("w" + std::to_string(s * 5 + t), (r * 7 + s + t) % 20);
      }
    };
    auto step = [&] {
      p.forward();
      p.backward();
    };
    bind_round(0);
    for (int warm = 0; warm < 3; ++warm) step();
    // Binding through handles, found once, looks nothing up and allocates nothing.
    std::vector<Program::SlotRef> words;
    for (int k = 0; k < 20; ++k) words.push_back(p.slot("w" + std::to_string(k)));
    const Program::SlotRef x0 = p.slot("x0");
    const std::vector<float> x0_values = test::test_values(m.d, 0.5f);
    auto rebind_and_step = [&](int r) {
      for (int k = 0; k < 20; ++k) p.set(words[k], static_cast<unsigned>(r + k) % 20);
      p.set(x0, x0_values);
      step();
    };
    // New indices may lay batched arguments out anew: the arenas grow to the
    // largest layout once.
    for (int r = 0; r < 40; ++r) rebind_and_step(r);
    const long allocations = test::allocations_during([&] {
      for (int r = 0; r < 1000; ++r) rebind_and_step(r);
    });
    if (allocations >= 0) BOOST_CHECK_EQUAL(allocations, 0);
    const size_t bytes = cg.arena_capacity_bytes();
    for (unsigned r = 0; r < 100000; ++r) {
      if (r % 1000 == 0) bind_round(r);
      step();
    }
    BOOST_CHECK_EQUAL(cg.arena_capacity_bytes(), bytes);
    BOOST_CHECK_EQUAL(p.replays(), 101042u);
    bind_round(0);  // the handles set the same slots as the names
    const std::vector<float> by_name = as_vector(p.forward());
    for (int k = 0; k < 20; ++k) p.set(words[k], static_cast<unsigned>(k / 5 + k % 5) % 20);
    p.set(x0, test::test_values(m.d, 0.f));
    BOOST_CHECK(as_vector(p.forward()) == by_name);
  }
}

BOOST_AUTO_TEST_CASE(cache_counts_hits_and_drops_the_least_recently_used) {
  TestModel m(3);
  ProgramCache cache(2);
  unsigned built = 0;
  auto program_for = [&](unsigned length) -> Program& {
    return cache.get(length, [&](Program& p) {
      ++built;
      Expression h = p.input("x", Dim({m.d}));
      for (unsigned t = 0; t < length; ++t) h = tanh(parameter(p.graph(), m.mats[0]) * h);
      p.set_output(sum_elems(h));
    });
  };
  for (unsigned length : {3u, 4u, 3u, 3u, 5u, 4u, 3u}) {
    Program& p = program_for(length);
    p.set("x", std::vector<float>{0.1f * length, 0.2f, 0.3f});
    p.forward();
  }
  // 3 miss, 4 miss, 3 hit, 3 hit, 5 miss (drops 4), 4 miss (drops 3), 3 miss (drops 5).
  BOOST_CHECK_EQUAL(cache.hits(), 2u);
  BOOST_CHECK_EQUAL(cache.misses(), 5u);
  BOOST_CHECK_EQUAL(cache.evictions(), 3u);
  BOOST_CHECK_EQUAL(cache.size(), 2u);
  BOOST_CHECK_EQUAL(built, 5u);
  BOOST_CHECK(cache.contains(3) && cache.contains(4) && !cache.contains(5));
  BOOST_CHECK_EQUAL(ProgramCache::key_of({3, 5}), ProgramCache::key_of({3, 5}));
  BOOST_CHECK_NE(ProgramCache::key_of({3, 5}), ProgramCache::key_of({5, 3}));
  check_throws_containing<std::invalid_argument>([] { ProgramCache c(0); }, "capacity");
}

namespace {
void take_turns(int strategy) {
  TestModel m(48);  // gradients beyond the arenas' first chunk
  SimpleSGDTrainer trainer(m.pc, 0.05f);
  ProgramCache cache(8);
  // A chain of `length` steps over the rows in slots w0 .. w{length-1}.
  auto chain = [&](ComputationGraph& cg, unsigned length, const std::function<Expression(unsigned)>& row) {
    Expression h = row(0);
    for (unsigned t = 1; t < length; ++t) h = tanh(parameter(cg, m.mats[t % 3]) * h + row(t));
    return sum_elems(square(h));
  };
  auto program_for = [&](unsigned length) -> Program& {
    return cache.get(length, [&](Program& p) {
      p.graph().set_autobatch(strategy);
      p.set_output(chain(p.graph(), length, [&](unsigned t) { return p.lookup("w" + std::to_string(t), m.emb); }));
    });
  };
  std::mt19937 gen(3);
  uint64_t replays_before = 0;
  for (unsigned round = 0; round < 76; ++round) {
    const unsigned length = 2 + (round * 7) % 8;  // 8 lengths, taking turns
    if (round == 60)  // the memory has grown to the largest program's
      for (unsigned l = 2; l < 10; ++l) replays_before += program_for(l).replays();
    std::vector<unsigned> rows(length);
    for (unsigned& r : rows) r = gen() % 20;
    Program& p = program_for(length);
    for (unsigned t = 0; t < length; ++t) p.set("w" + std::to_string(t), rows[t]);
    m.pc.reset_gradient();
    const float loss = as_scalar(p.forward());
    p.backward();
    const std::vector<float> grad = as_vector(m.mats[1].get_storage().g);
    m.pc.reset_gradient();
    ComputationGraph fresh;
    fresh.set_autobatch(strategy);
    Expression l = chain(fresh, length, [&](unsigned t) { return lookup(fresh, m.emb, rows[t]); });
    BOOST_REQUIRE_EQUAL(loss, as_scalar(fresh.forward(l)));
    fresh.backward(l);
    BOOST_REQUIRE(grad == as_vector(m.mats[1].get_storage().g));
    trainer.update();
  }
  BOOST_CHECK_EQUAL(cache.misses(), 8u);
  // Since then every run was a replay, batched programs' too: none captured again.
  uint64_t replays_after = 0;
  for (unsigned l = 2; l < 10; ++l) replays_after += program_for(l).replays();
  BOOST_CHECK_EQUAL(replays_after - replays_before, 16u);
  // The program holding the shared memory shows it; the others keep small arenas.
  Program& a = program_for(3);
  Program& b = program_for(9);
  a.set("w0", 1u), a.set("w1", 2u), a.set("w2", 3u);
  const float first = as_scalar(a.forward());
  const size_t holding = a.graph().arena_capacity_bytes();
  for (unsigned t = 0; t < 9; ++t) b.set("w" + std::to_string(t), t);
  b.forward();
  BOOST_CHECK_LT(a.graph().arena_capacity_bytes(), holding);
  // a's values went with the memory: backward and forward compute them again.
  m.pc.reset_gradient();
  a.backward();
  BOOST_CHECK_EQUAL(as_scalar(a.forward()), first);
}
}  // namespace

BOOST_AUTO_TEST_CASE(programs_of_a_cache_share_memory_and_take_turns) {
  // Plain and batched programs take turns with all their memory; a batched one
  // computes its values where its capture put them.
  for (int strategy : {0, 1}) take_turns(strategy);
}

// The order a GPU's recorded backward graph keeps (exec/plain_tape.h): on random
// backward tapes, every two steps that touch one gradient (or the parameters'
// gradients) stay in the tape's order through chains of predecessors, and
// independent branches are left unordered.
BOOST_AUTO_TEST_CASE(backward_step_order_keeps_every_shared_gradient_in_tape_order) {
  using Step = dl::PlainTape::Backward;
  std::mt19937 rng(7);
  size_t unordered_pairs = 0;
  for (int round = 0; round < 50; ++round) {
    const unsigned n_nodes = 3 + rng() % 40;
    std::vector<dl::Node> nodes(n_nodes);
    std::vector<std::vector<unsigned>> args(n_nodes);
    std::vector<Step> steps;
    for (unsigned j = 1; j < n_nodes; ++j) {
      const unsigned nargs = 1 + rng() % 3;
      for (unsigned k = 0; k < nargs; ++k) args[j].push_back(rng() % j);  // repeats allowed
    }
    auto push = [&](Step::Kind kind, unsigned n, unsigned arg) {
      Step s{};
      s.kind = kind;
      s.n = &nodes[n];
      s.arg = kind == Step::kCall ? &nodes[arg] : nullptr;
      steps.push_back(s);
    };
    for (unsigned j = n_nodes; j-- > 0;) {
      if (rng() % 5 == 0) push(Step::kFlush, j, 0);
      if (args[j].empty()) {
        if (rng() % 2) push(Step::kAccumulate, j, 0);
        continue;
      }
      for (unsigned a : args[j]) push(Step::kCall, j, a);
    }
    const dl::StepOrder order = dl::backward_step_order(steps);
    const size_t S = steps.size();
    BOOST_REQUIRE_EQUAL(order.offsets.size(), S + 1);
    // reach[s][t]: step t is an ancestor of step s.
    std::vector<std::vector<bool>> reach(S, std::vector<bool>(S, false));
    for (size_t s = 0; s < S; ++s)
      for (size_t k = 0; k < order.count(s); ++k) {
        const uint32_t t = order.of(s)[k];
        BOOST_REQUIRE_LT(t, s);
        reach[s][t] = true;
        for (size_t u = 0; u < t; ++u)
          if (reach[t][u]) reach[s][u] = true;
      }
    // What each step reads and writes: gradients by node, "params" as one more.
    const dl::Node* params = nullptr;
    auto touches = [&](const Step& s) {
      std::vector<std::pair<const dl::Node*, bool>> t{{s.n, s.kind == Step::kFlush}};  // (what, writes)
      if (s.kind == Step::kCall) t.push_back({s.arg, true});
      if (s.kind == Step::kAccumulate) t.push_back({params, true});
      return t;
    };
    for (size_t s = 0; s < S; ++s)
      for (size_t t = 0; t < s; ++t) {
        bool conflict = steps[s].kind == Step::kCall && steps[t].kind == Step::kCall && steps[s].n == steps[t].n;
        for (const auto& [a, wa] : touches(steps[s]))
          for (const auto& [b, wb] : touches(steps[t]))
            if (a == b && (wa || wb)) conflict = true;
        if (conflict)
          BOOST_CHECK_MESSAGE(reach[s][t], "round " << round << ": step " << s << " may run before step " << t);
        else if (!reach[s][t])
          ++unordered_pairs;
      }
  }
  BOOST_CHECK_GT(unordered_pairs, 0u);  // independent steps may run side by side
}

// ---------------------------------------------------------------- programs by structure
// ProgramCache::forward(e): graphs built as usual, matched to programs by
// their structure, the data of each run taken from the graph.

namespace {

/// The data of one run of a structure: lookup rows (distinct, so that merging
/// equal expressions does not change the structure), inputs and indices.
struct GraphData {
  std::vector<unsigned> rows;
  std::vector<std::vector<float>> inputs;
  std::vector<unsigned> picks;  // < d each
  float scalar = 0.f;
};

GraphData draw_data(std::mt19937& gen, unsigned d) {
  GraphData g;
  std::vector<unsigned> all(200);
  for (unsigned i = 0; i < all.size(); ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), gen);
  g.rows.assign(all.begin(), all.begin() + 120);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int i = 0; i < 60; ++i) {
    g.inputs.emplace_back(d);
    for (float& v : g.inputs.back()) v = u(gen);
  }
  for (int i = 0; i < 60; ++i) g.picks.push_back(gen() % d);
  g.scalar = u(gen);
  return g;
}

/// Random graph `seed` built as a user builds one, its data written in every
/// way the expression functions take it (by value, copied, behind pointers).
Expression build_plain(ComputationGraph& cg, TestModel& m, LookupParameter table, unsigned seed, const Config& c,
                       const GraphData& data) {
  std::mt19937 top(seed), gen;
  auto choose = [&](unsigned n) { return static_cast<unsigned>(gen() % n); };
  cg.set_autobatch(c.strategy);
  cg.set_cse(c.cse);
  cg.set_fusion(c.fusion);
  std::vector<Expression> mats, vecs, losses;
  for (auto& w : m.mats) mats.push_back(parameter(cg, w));
  for (auto& v : m.vecs) vecs.push_back(parameter(cg, v));
  unsigned row = 0, in = 0, idx = 0;
  auto next_row = [&]() -> Expression {
    const unsigned k = row++;
    return choose(2) ? lookup(cg, table, data.rows[k]) : lookup(cg, table, &data.rows[k]);
  };
  auto next_input = [&]() -> Expression {
    const unsigned k = in++;
    return choose(2) ? input(cg, Dim({m.d}), data.inputs[k]) : input(cg, Dim({m.d}), &data.inputs[k]);
  };
  const unsigned instances = 2 + top() % 4;
  for (unsigned inst = 0; inst < instances; ++inst) {
    gen.seed(top());
    Expression h = choose(2) ? next_row() : next_input();
    const unsigned len = 1 + choose(5);
    for (unsigned t = 0; t < len; ++t) {
      Expression x = choose(3) ? next_row() : next_input();
      switch (choose(6)) {
        case 0: h = tanh(h + x); break;
        case 1: h = logistic(cmult(h, vecs[choose(3)])) * input(cg, data.scalar); break;
        case 2: h = tanh(mats[choose(3)] * h + vecs[choose(3)]); break;
        case 3: h = tanh(affine_transform({vecs[choose(3)], mats[choose(3)], h, mats[choose(3)], x})); break;
        case 4: {  // two rows at once, a batch of 2 summed
          const std::vector<unsigned> two{data.rows[row], data.rows[row + 1]};
          row += 2;
          h = h + sum_batches(lookup(cg, table, two));
          break;
        }
        case 5:  // picks and a selection: {1} and {3} make {4}
          h = tanh((h + concatenate({pick(x, data.picks[idx]), select_rows(h, {data.picks[idx + 1], 0u, 1u})}) * 0.5f) *
                   pick(h, &data.picks[idx + 2]));
          idx += 3;
          break;
      }
    }
    Expression loss = sum_elems(square(h));
    switch (choose(3)) {
      case 0: loss = loss + pickneglogsoftmax(h, data.picks[idx++]); break;
      case 1: loss = loss + pickneglogsoftmax(h, &data.picks[idx++]); break;
      case 2: loss = loss + hinge(h, data.picks[idx++], 0.5f); break;
    }
    losses.push_back(loss);
  }
  return sum(losses);
}

Run gradients_after(TestModel& m, LookupParameter table, float loss) {
  Run r;
  r.loss = {loss};
  for (auto& w : m.pc.parameters_list()) r.grads.push_back(as_vector(w->g));
  r.grads.push_back(test::table_gradient(table.get_storage()));
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(programs_by_structure_equal_graphs_run_as_they_are) {
  TestModel m(4);
  LookupParameter table = m.pc.add_lookup_parameters(200, {m.d});
  SimpleSGDTrainer trainer(m.pc, 0.05f);
  std::mt19937 gen(11);
  const std::vector<Config> configs{{0, 0, false}, {1, 0, true}, {1, 1, true}, {2, 1, false}};
  for (unsigned seed = 1 + test::seed_offset(); seed <= 40 + test::seed_offset(); ++seed)
    for (const Config& c : configs) {
      ProgramCache programs(4);
      for (int round = 0; round < 6; ++round) {
        const GraphData data = draw_data(gen, m.d);
        m.pc.reset_gradient();
        Run as_is;
        {
          ComputationGraph cg;
          Expression loss = build_plain(cg, m, table, seed, c, data);
          const float l = as_scalar(cg.forward(loss));
          cg.backward(loss);
          as_is = gradients_after(m, table, l);
        }
        m.pc.reset_gradient();
        ComputationGraph cg;
        Expression loss = build_plain(cg, m, table, seed, c, data);
        const float l = as_scalar(programs.forward(loss));
        programs.backward(loss);
        check_bitwise(gradients_after(m, table, l), as_is, seed, c, round);
        trainer.update();
      }
      // Seen once (run as it is), compiled at the second sight, then replayed.
      BOOST_REQUIRE_EQUAL(programs.uncompiled(), 1u);
      BOOST_REQUIRE_EQUAL(programs.misses(), 1u);
      BOOST_REQUIRE_EQUAL(programs.hits(), 4u);
    }
}

BOOST_AUTO_TEST_CASE(programs_by_structure_tell_structures_apart) {
  TestModel m(3);
  ProgramCache programs(8);
  auto run_chain = [&](unsigned length, unsigned row, int mat) {
    ComputationGraph cg;
    Expression h = lookup(cg, m.emb, row);
    for (unsigned t = 0; t < length; ++t) h = tanh(parameter(cg, m.mats[mat]) * h);
    Expression loss = sum_elems(h);
    const float via_cache = as_scalar(programs.forward(loss, 0));
    ComputationGraph fresh;
    Expression g = lookup(fresh, m.emb, row);
    for (unsigned t = 0; t < length; ++t) g = tanh(parameter(fresh, m.mats[mat]) * g);
    BOOST_CHECK_EQUAL(via_cache, as_scalar(fresh.forward(sum_elems(g))));
  };
  // after = 0: compiled at the first sight.  Another length or another
  // parameter is another structure; another row is the same one.
  run_chain(3, 1, 0);
  run_chain(3, 2, 0);
  run_chain(4, 2, 0);
  run_chain(3, 2, 1);
  run_chain(3, 5, 1);
  BOOST_CHECK_EQUAL(programs.misses(), 3u);
  BOOST_CHECK_EQUAL(programs.hits(), 2u);
  BOOST_CHECK_EQUAL(programs.uncompiled(), 0u);
  // Constants are structure: a pick of another fixed element too (pick by value
  // is data, so that one is the same structure).
  ComputationGraph a;
  programs.forward(sum_elems(pick(input(a, Dim({3}), std::vector<float>{1, 2, 3}), 0u) * 2.f), 0);
  ComputationGraph b;
  const float two = as_scalar(programs.forward(sum_elems(pick(input(b, Dim({3}), std::vector<float>{1, 2, 3}), 1u) * 2.f), 0));
  BOOST_CHECK_EQUAL(two, 4.f);
  ComputationGraph c;
  const float three = as_scalar(programs.forward(sum_elems(pick(input(c, Dim({3}), std::vector<float>{1, 2, 3}), 1u) * 3.f), 0));
  BOOST_CHECK_EQUAL(three, 6.f);
  BOOST_CHECK_EQUAL(programs.misses(), 5u);
  BOOST_CHECK_EQUAL(programs.hits(), 3u);
}

BOOST_AUTO_TEST_CASE(programs_by_structure_run_what_they_cannot_compile_as_it_is) {
  TestModel m(3);
  ProgramCache programs(4);
  for (int round = 0; round < 3; ++round) {
    ComputationGraph cg;
    Expression sparse = input(cg, Dim({3}), std::vector<unsigned>{1}, std::vector<float>{2.f + round}, 0.5f);
    Expression loss = sum_elems(tanh(parameter(cg, m.mats[0]) * sparse));
    ComputationGraph fresh;
    Expression same = input(fresh, Dim({3}), std::vector<unsigned>{1}, std::vector<float>{2.f + round}, 0.5f);
    BOOST_CHECK_EQUAL(as_scalar(programs.forward(loss, 0)),
                      as_scalar(fresh.forward(sum_elems(tanh(parameter(fresh, m.mats[0]) * same)))));
    programs.backward(loss);
  }
  for (int round = 0; round < 2; ++round) {
    ComputationGraph cg;
    Expression x = input(cg, Dim({3}), std::vector<float>{1, 2, 3});
    programs.forward(sum_elems(cmult(one_hot(cg, 3, 1u), x)), 0);
  }
  BOOST_CHECK_EQUAL(programs.uncompiled(), 5u);
  BOOST_CHECK_EQUAL(programs.size(), 0u);
}

BOOST_AUTO_TEST_CASE(programs_by_structure_misuse_is_a_clear_error) {
  auto model = std::make_unique<TestModel>(3);
  ProgramCache programs(4);
  std::vector<float> x{1, 2, 3};
  auto build = [&](ComputationGraph& cg) { return sum_elems(tanh(parameter(cg, model->mats[0]) * input(cg, Dim({3}), &x))); };
  {
    ComputationGraph cg;
    programs.forward(build(cg), 0);
  }
  // The vector behind a pointer resized after the graph was built.
  {
    ComputationGraph cg;
    Expression loss = build(cg);
    x.push_back(4.f);
    check_throws_containing<std::invalid_argument>([&] { programs.forward(loss, 0); },
                                                   "input: the vector behind the pointer now holds 4 values");
    x.pop_back();
  }
  // A lookup index behind a pointer out of range at the run.
  {
    ComputationGraph cg;
    unsigned row = 1;
    Expression loss = sum_elems(lookup(cg, model->emb, &row));
    programs.forward(loss, 0);
    ComputationGraph again;
    Expression loss2 = sum_elems(lookup(again, model->emb, &row));
    row = 20;
    check_throws_containing<std::out_of_range>([&] { programs.forward(loss2, 0); }, "index 20 out of range");
  }
  // Stale and empty expressions; a cache serving get() as well.
  Expression stale;
  {
    ComputationGraph cg;
    stale = input(cg, 1.f);
  }
  check_throws_containing<std::invalid_argument>([&] { programs.forward(stale); }, "empty or stale");
  check_throws_containing<std::invalid_argument>([&] { programs.forward(Expression()); }, "empty or stale");
  check_throws_containing<std::logic_error>([&] { programs.get(1, [](Program&) {}); }, "use one cache for each");
  // The model destroyed: a graph of a new model compiles anew, never an error
  // (its parameters may lie where the old ones did).
  model = std::make_unique<TestModel>(3);
  ComputationGraph cg;
  ComputationGraph fresh;
  BOOST_CHECK_EQUAL(as_scalar(programs.forward(build(cg), 0)), as_scalar(fresh.forward(build(fresh))));
}

BOOST_AUTO_TEST_CASE(programs_by_structure_draw_the_graphs_random_numbers) {
  TestModel m(4);
  for (int strategy : {0, 1}) {
    ProgramCache programs(4);
    std::vector<float> seen;
    for (int round = 0; round < 5; ++round) {
      auto build = [&](ComputationGraph& g) {
        g.set_autobatch(strategy);
        Expression x = input(g, Dim({m.d}), std::vector<float>{0.5f, -1.f, 2.f, 0.25f});
        Expression h = dropout(tanh(parameter(g, m.mats[0]) * x), 0.5f);
        return sum_elems(cmult(h, random_bernoulli(g, Dim({m.d}), 0.5f, 2.f)) + random_normal(g, Dim({1})));
      };
      ComputationGraph cg, ref;
      Expression loss = build(cg);
      Expression same = build(ref);
      ref.rng() = cg.rng();  // the draws a run of cg would make
      const float expected = as_scalar(ref.forward(same));
      const float got = as_scalar(programs.forward(loss, 0));
      BOOST_CHECK_EQUAL(got, expected);
      BOOST_CHECK(cg.rng() == ref.rng());  // left where the run left it
      seen.push_back(got);
    }
    BOOST_CHECK_EQUAL(programs.hits(), 4u);
    std::sort(seen.begin(), seen.end());
    BOOST_CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());  // new draws each run
  }
}

// A program's runs draw their random numbers as graphs built afresh at their
// places would: its graph takes a seed of the sequence when made, each later
// run the next one.  A loop of replays so draws what a loop rebuilding its
// graphs draws, to the bit, and leaves the same seeds to the graphs after it.
BOOST_AUTO_TEST_CASE(replays_draw_the_random_numbers_of_fresh_graphs) {
  TestModel m(4);
  for (int strategy : {0, 1}) {
    auto build = [&](ComputationGraph& g, Expression x) {
      g.set_autobatch(strategy);
      Expression h = dropout(tanh(parameter(g, m.mats[0]) * x), 0.5f);
      return sum_elems(cmult(h, random_bernoulli(g, Dim({m.d}), 0.5f, 2.f)) + random_normal(g, Dim({1})));
    };
    const std::vector<float> x0{0.5f, -1.f, 2.f, 0.25f};
    auto after = [] {  // a graph built after the loop: what its engine draws
      ComputationGraph g;
      return g.rng()();
    };
    reseed_global_rng(17);
    std::vector<float> rebuilt;
    for (int run = 0; run < 6; ++run) {
      ComputationGraph cg;
      rebuilt.push_back(as_scalar(cg.forward(build(cg, input(cg, Dim({m.d}), x0)))));
    }
    const uint32_t rebuilt_after = after();
    reseed_global_rng(17);
    std::vector<float> replayed;
    {
      Program p;
      Expression loss = build(p.graph(), p.input("x", Dim({m.d})));
      p.set("x", x0);
      for (int run = 0; run < 6; ++run) replayed.push_back(as_scalar(p.forward(loss)));
      BOOST_CHECK_EQUAL(p.replays(), 5u);
    }
    BOOST_CHECK(replayed == rebuilt);
    BOOST_CHECK_EQUAL(after(), rebuilt_after);
    std::sort(rebuilt.begin(), rebuilt.end());
    BOOST_CHECK(std::adjacent_find(rebuilt.begin(), rebuilt.end()) == rebuilt.end());  // new draws each run
  }
}

// An LSTM with variational dropout: the masks are random nodes of the graph.
BOOST_AUTO_TEST_CASE(programs_by_structure_run_an_lstm_with_dropout_as_its_graph) {
  TestModel m(4);
  VanillaLSTMBuilder lstm(1, m.d, m.d, m.pc);
  lstm.set_dropout(0.25f);
  ProgramCache programs(4);
  for (int round = 0; round < 5; ++round) {
    auto build = [&](ComputationGraph& g) {
      lstm.new_graph(g);
      lstm.start_new_sequence();
      Expression h;
      for (unsigned t = 0; t < 3; ++t) h = lstm.add_input(lookup(g, m.emb, t + round));
      return sum_elems(h);
    };
    ComputationGraph ref;
    Expression same = build(ref);
    ComputationGraph cg;
    Expression loss = build(cg);
    ref.rng() = cg.rng();
    m.pc.reset_gradient();
    const float expected = as_scalar(ref.forward(same));
    ref.backward(same);
    Run a = gradients_after(m, m.emb, expected);
    m.pc.reset_gradient();
    const float got = as_scalar(programs.forward(loss, 0));
    programs.backward(loss);
    Run b = gradients_after(m, m.emb, got);
    check_bitwise(b, a, 0, Config{0, 0, false}, round);
  }
}

// Making a program takes no seed from --dynet-seed's sequence: the graphs
// after it draw what they would have drawn without the cache.
BOOST_AUTO_TEST_CASE(programs_by_structure_leave_the_seeds_of_later_graphs) {
  TestModel m(4);
  auto losses = [&](bool by_structure) {
    reseed_global_rng(42);
    ProgramCache programs(4);
    std::vector<float> out;
    for (int round = 0; round < 6; ++round) {
      ComputationGraph cg;
      Expression x = input(cg, Dim({m.d}), std::vector<float>{0.5f, -1.f, 2.f, 0.25f});
      Expression loss = sum_elems(dropout(tanh(parameter(cg, m.mats[round % 2]) * x), 0.5f));
      out.push_back(as_scalar(by_structure ? programs.forward(loss, 0) : cg.forward(loss)));
    }
    return out;
  };
  BOOST_CHECK(losses(true) == losses(false));
}

// A loop that builds its graphs as usual and runs them by structure allocates
// nothing once warm: building a graph, describing it, binding its data and
// replaying its program all reuse their memory.
BOOST_AUTO_TEST_CASE(programs_by_structure_allocate_nothing_once_warm) {
  TestModel m(8);
  for (int strategy : {0, 1}) {
    ProgramCache programs(4);
    auto step = [&](unsigned r, bool run) {
      ComputationGraph cg;
      cg.set_autobatch(strategy);
      Expression total;
      for (unsigned s = 0; s < 4; ++s) {
        Expression h = lookup(cg, m.emb, (r + s) % 20);
        for (unsigned t = 0; t < 5; ++t)
          h = tanh(parameter(cg, m.mats[t % 3]) * h + lookup(cg, m.emb, (r * 7 + s + t) % 20));
        Expression loss = pickneglogsoftmax(h, (r + s) % m.d);
        total = s ? total + loss : loss;
      }
      if (!run) return;
      programs.forward(total);
      programs.backward(total);
    };
    for (unsigned r = 0; r < 50; ++r) step(r, true);
    const uint64_t hits = programs.hits();
    const long building = test::allocations_during([&] {
      for (unsigned r = 0; r < 1000; ++r) step(r, false);
    });
    const long running = test::allocations_during([&] {
      for (unsigned r = 0; r < 1000; ++r) step(r, true);
    });
    if (building >= 0) {
      BOOST_CHECK_EQUAL(building, 0);
      BOOST_CHECK_EQUAL(running, 0);
    }
    BOOST_CHECK_EQUAL(programs.hits(), hits + 1000);
  }
}

// Programs drawn from some forty operations (tests/many_ops.h), compiled by
// structure: the first sight runs as built, the second is captured, the third
// replays.  Each gives the loss and the gradients of the graph run as it is,
// to the bit, plain and batched.
BOOST_AUTO_TEST_CASE(random_programs_of_many_ops_compiled_by_structure_equal_rebuilt) {
  ParameterCollection pc;
  Parameter p = pc.add_parameters({3, 3});
  LookupParameter emb = pc.add_lookup_parameters(6, {3});
  unsigned compared = 0, replays = 0;
  for (unsigned seed = 1 + test::seed_offset(); seed <= 200 + test::seed_offset(); ++seed)
    for (int strategy : {0, 1}) {
      const test::ManyOpsRun rebuilt = test::many_ops_program(pc, p, emb, seed, strategy);
      if (!rebuilt.ran || !std::isfinite(rebuilt.loss)) continue;
      ProgramCache programs(4);
      for (int run = 0; run < 3; ++run) {
        const test::ManyOpsRun compiled = test::many_ops_program(pc, p, emb, seed, strategy, &programs);
        BOOST_REQUIRE(compiled.ran);
        BOOST_REQUIRE_MESSAGE(compiled.loss == rebuilt.loss, "program " << seed << " strategy " << strategy << " run "
                                                                        << run << ": loss " << compiled.loss << " vs "
                                                                        << rebuilt.loss);
        BOOST_REQUIRE_EQUAL(compiled.grads.size(), rebuilt.grads.size());
        for (size_t i = 0; i < rebuilt.grads.size(); ++i)
          BOOST_REQUIRE_MESSAGE(
              compiled.grads[i] == rebuilt.grads[i] || (std::isnan(compiled.grads[i]) && std::isnan(rebuilt.grads[i])),
              "program " << seed << " strategy " << strategy << " run " << run << ": gradient " << i << " "
                         << compiled.grads[i] << " vs " << rebuilt.grads[i]);
        ++compared;
      }
      replays += programs.last_program() != nullptr && programs.last_program()->replays() > 0;
    }
  BOOST_TEST_MESSAGE(compared << " compiled runs compared, " << replays << " programs replayed");
  BOOST_CHECK_GT(replays, 350u);  // the structures compile and replay
  test::counts().value_checks += compared;
}
