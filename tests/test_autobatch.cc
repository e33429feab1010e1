#define BOOST_TEST_MODULE autobatch
// Batched and unbatched execution must give the same values and gradients.  A
// property-based test generates random dynamic graphs with a fixed seed: several
// instances of different lengths, shared and per-instance parameters, lookups,
// mid-build reads (incremental_forward), and compares every node value, every
// node gradient and every parameter gradient across --dynet-autobatch 0, 1 and 2.
// With common subexpression elimination (on by default while batching) equal
// expressions are one node, so node gradients are compared without it, and the
// values of the user's expressions and the parameter gradients with it too.
#include <random>

#include "dynet_lite/core/node.h"
#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/lstm.h"
#include "many_ops.h"
#include "test_utils.h"

using namespace dynet_lite;

namespace {

struct TestModel {
  ParameterCollection pc;
  std::vector<Parameter> mats;  // d x d
  std::vector<Parameter> vecs;  // d
  Parameter tree_w, tree_u, tree_b;  // a Tree-LSTM step of arity 1: 4d x d, 4d x d, 4d
  LookupParameter emb;          // d x 20
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

struct Result {
  std::vector<std::vector<float>> values;
  std::vector<std::vector<float>> grads;       // parameters'
  std::vector<std::vector<float>> node_grads;  // every node's (without merging only)
  AutobatchStats stats;
};

// Runs forward and backward (`full`: constant nodes' gradients too) on the sum of
// `losses`; returns the values of `outs` and of the loss, every parameter's
// gradient, every node's gradient (unless equal expressions were merged) and the
// batching counters.
Result run_and_collect(ComputationGraph& cg, const std::vector<Expression>& outs,
                       const std::vector<Expression>& losses, ParameterCollection& pc, LookupParameter& emb,
                       bool full = false) {
  Expression loss = sum(losses);
  cg.forward(loss);
  cg.backward(loss, full);
  Result r;
  for (auto& e : outs) r.values.push_back(as_vector(e.value()));
  r.values.push_back(as_vector(loss.value()));
  for (auto& p : pc.parameters_list()) r.grads.push_back(as_vector(p->g));
  r.grads.push_back(test::table_gradient(emb.get_storage()));
  // Every node's own gradient too (batched backward keeps them in a dense array
  // and writes a node's tensor only when asked), the nodes that get none
  // included; a builder's internal steps (an LSTM's gates) give none, as plain
  // backward reuses their gradients' memory.
  if (!cg.cse())
    for (VariableIndex i = 0; i <= loss.i; ++i)
      r.node_grads.push_back(cg.node(i).internal ? std::vector<float>() : as_vector(cg.get_gradient(i)));
  r.stats = cg.autobatch_stats();
  return r;
}

// Builds graph number `seed` with the given strategy, merging equal expressions
// or not (`cse`).  The program is drawn from `seed` alone, so every strategy
// builds the very same graph.  An instance now and then repeats an earlier one,
// word for word, so that merging finds whole chains.
// With `reuse`, the program is built in that graph after clearing it (its arenas
// then hold the previous graph's values and gradients).
Result run_program(TestModel& m, unsigned seed, int strategy, bool use_matrix_ops, ComputationGraph* reuse = nullptr,
                   int cse = 0) {
  std::mt19937 top(seed), gen;
  auto pick = [&](unsigned n) { return static_cast<unsigned>(gen() % n); };
  ComputationGraph fresh;
  ComputationGraph& cg = reuse ? *reuse : fresh;
  if (reuse) cg.clear();
  cg.set_autobatch(strategy);
  cg.set_cse(cse);
  m.pc.reset_gradient();
  std::vector<Expression> mats, vecs, all, losses;
  for (auto& p : m.mats) mats.push_back(parameter(cg, p));
  for (auto& p : m.vecs) vecs.push_back(parameter(cg, p));
  const Expression tree[3] = {parameter(cg, m.tree_b), parameter(cg, m.tree_w), parameter(cg, m.tree_u)};
  unsigned instances = 2 + top() % 6, instance_seed = 0;
  for (unsigned inst = 0; inst < instances; ++inst) {
    if (inst == 0 || top() % 4 != 0) instance_seed = top();  // else the previous instance again
    gen.seed(instance_seed);
    Expression h = pick(2) ? lookup(cg, m.emb, pick(20))
                           : input(cg, Dim({m.d}), test::test_values(m.d, 0.1f * static_cast<float>(pick(3))));
    unsigned len = 1 + pick(6);
    for (unsigned t = 0; t < len; ++t) {
      Expression x = lookup(cg, m.emb, pick(20));
      switch (pick(use_matrix_ops ? 10 : 7)) {
        case 0: h = tanh(h + x); break;
        case 1: h = logistic(cmult(h, vecs[pick(3)])) ; break;
        case 2: h = h - x * 0.5f; break;
        case 3: h = sum({h, x, vecs[pick(3)]}); break;
        case 4: h = rectify(h) + cmult(x, x); break;
        case 5: h = tanh(cmult(h, x) + vecs[pick(3)]); break;
        case 6: h = exp(h * 0.1f) - 1.f; break;
        case 7: h = tanh(mats[pick(3)] * h + vecs[pick(3)]); break;
        case 8: h = tanh(affine_transform({vecs[pick(3)], mats[pick(3)], h, mats[pick(3)], x})); break;
        case 9: {  // the fused Tree-LSTM step, h as the one child's state and cell
          Expression g = treelstm_gates_affine({tree[0], tree[1], x, tree[2], h}, 1);
          h = treelstm_h(treelstm_c(g, {h}, 1), g);
          break;
        }
      }
      all.push_back(h);
      if (pick(10) == 0) cg.incremental_forward(h);  // read in the middle of building
    }
    losses.push_back(sum_elems(square(h)));
  }
  // One graph in four asks for every node's gradient (constant nodes too).
  return run_and_collect(cg, all, losses, m.pc, m.emb, seed % 4 == 0);
}

void check_same(const Result& a, const Result& b, unsigned seed, int strategy) {
  BOOST_REQUIRE_EQUAL(a.values.size(), b.values.size());
  for (size_t i = 0; i < a.values.size(); ++i)
    for (size_t k = 0; k < a.values[i].size(); ++k)
      BOOST_REQUIRE_MESSAGE(std::fabs(a.values[i][k] - b.values[i][k]) <= 1e-5f * (1 + std::fabs(a.values[i][k])),
                            "graph " << seed << " strategy " << strategy << " value " << i << "[" << k << "]: "
                                     << a.values[i][k] << " vs " << b.values[i][k]);
  auto same_grads = [&](const std::vector<std::vector<float>>& x, const std::vector<std::vector<float>>& y,
                        const char* what) {
    BOOST_REQUIRE_EQUAL(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i)
      for (size_t k = 0; k < x[i].size(); ++k)
        BOOST_REQUIRE_MESSAGE(std::fabs(x[i][k] - y[i][k]) <= 1e-4f * (1 + std::fabs(x[i][k])),
                              "graph " << seed << " strategy " << strategy << " " << what << " gradient " << i << "["
                                       << k << "]: " << x[i][k] << " vs " << y[i][k]);
  };
  same_grads(a.grads, b.grads, "parameter");
  // Without merging both have every node's gradient; with it, b has none.
  if (!b.node_grads.empty()) same_grads(a.node_grads, b.node_grads, "node");
}

}  // namespace

BOOST_AUTO_TEST_CASE(random_graphs_elementwise_and_lookup) {
  TestModel m(4);
  uint64_t batched = 0, kernels = 0, nodes = 0, merged = 0;
  for (unsigned seed = 1 + test::seed_offset(); seed <= 1000 + test::seed_offset(); ++seed) {
    Result plain = run_program(m, seed, 0, false);
    BOOST_REQUIRE(!plain.node_grads.empty());
    for (int strategy : {0, 1, 2}) {
      for (int cse : {0, 1}) {
        if (strategy == 0 && cse == 0) continue;
        Result b = run_program(m, seed, strategy, false, nullptr, cse);
        check_same(plain, b, seed, strategy);
        batched += b.stats.batched_groups;
        kernels += b.stats.kernels;
        nodes += b.stats.nodes;
        merged += b.stats.cse_merged;
        if (!cse) BOOST_REQUIRE_EQUAL(b.stats.cse_merged, 0u);
      }
    }
  }
  BOOST_TEST_MESSAGE("nodes " << nodes << ", kernels " << kernels << ", batched groups " << batched
                              << ", expressions merged " << merged);
  BOOST_CHECK_GT(batched, 0u);
  BOOST_CHECK_LT(kernels, nodes);
  BOOST_CHECK_GT(merged, 1000u);
}

// The same programs in one graph per strategy, cleared and rebuilt each time:
// gradient blocks that batched backward zeroes only when first written must not
// show what the previous graph left in the arena.
BOOST_AUTO_TEST_CASE(random_graphs_in_a_reused_graph) {
  TestModel m(4);
  ComputationGraph reused[2];
  for (unsigned seed = 1 + test::seed_offset(); seed <= 300 + test::seed_offset(); ++seed) {
    Result plain = run_program(m, seed, 0, seed % 2 == 0);
    for (int strategy : {1, 2})
      check_same(plain, run_program(m, seed, strategy, seed % 2 == 0, &reused[strategy - 1], seed % 3 != 0), seed,
                 strategy);
  }
}

// Lookups batch as one group whose gradient rows are added under one lock: a
// mix of trainable and constant lookups, repeated rows, and lookups of a batch of
// indices must give the table the same gradient as unbatched execution.
BOOST_AUTO_TEST_CASE(lookup_groups_mixing_constant_and_batched_lookups) {
  TestModel m(4);
  auto run = [&](int strategy, int cse) {
    ComputationGraph cg;
    cg.set_autobatch(strategy);
    cg.set_cse(cse);
    m.pc.reset_gradient();
    std::vector<Expression> outs, losses;
    for (unsigned inst = 0; inst < 12; ++inst) {
      Expression x = inst % 3 == 1 ? const_lookup(cg, m.emb, (inst * 7) % 5) : lookup(cg, m.emb, (inst * 7) % 5);
      Expression y = lookup(cg, m.emb, std::vector<unsigned>{inst % 4, (inst + 9) % 20});  // a batch of 2
      Expression h = tanh(x * (0.5f + 0.1f * inst)) + sum_batches(cmult(y, y));
      outs.push_back(h);
      losses.push_back(sum_elems(h));
    }
    return run_and_collect(cg, outs, losses, m.pc, m.emb);
  };
  Result plain = run(0, 0);
  for (int strategy : {1, 2})
    for (int cse : {0, 1}) {
      Result batched = run(strategy, cse);
      check_same(plain, batched, 0, strategy);
      BOOST_CHECK_LT(batched.stats.kernels, plain.stats.nodes);
      if (!cse) BOOST_CHECK_EQUAL(batched.stats.cse_merged, 0u);
    }
}

BOOST_AUTO_TEST_CASE(random_graphs_with_shared_matrix_products) {
  TestModel m(3);
  uint64_t batched = 0, gathered = 0;
  for (unsigned seed = 5001 + test::seed_offset(); seed <= 6000 + test::seed_offset(); ++seed) {
    Result plain = run_program(m, seed, 0, true);
    for (int strategy : {1, 2}) {
      Result b = run_program(m, seed, strategy, true, nullptr, seed % 2);
      check_same(plain, b, seed, strategy);
      batched += b.stats.batched_groups;
      gathered += b.stats.bytes_gathered;
    }
  }
  BOOST_TEST_MESSAGE("batched groups " << batched << ", bytes gathered " << gathered);
  BOOST_CHECK_GT(batched, 0u);
}

// The same with products large enough that plain backward zeroes gradients one
// by one (assigned by the products' and the Tree-LSTM's kernels where nothing
// wrote them yet, the parameters' summed straight into theirs), in one graph
// cleared and rebuilt each time, so that a gradient left unzeroed would show
// what the previous graph left in the arena.
BOOST_AUTO_TEST_CASE(random_graphs_with_large_products_in_a_reused_graph) {
  TestModel m(72);  // the Tree-LSTM's gates (288 floats) too
  ComputationGraph reused;
  for (unsigned seed = 7001 + test::seed_offset(); seed <= 7150 + test::seed_offset(); ++seed) {
    Result plain = run_program(m, seed, 0, true, &reused);
    Result b = run_program(m, seed, 1, true);
    check_same(plain, b, seed, 1);
  }
}

BOOST_AUTO_TEST_CASE(unbatchable_ops_are_listed) {
  std::vector<const char*> names = unbatchable_ops();
  auto has = [&](const std::string& n) {
    for (const char* x : names)
      if (n == x) return true;
    return false;
  };
  BOOST_CHECK(has("sum_batches"));
  BOOST_CHECK(has("concatenate_to_batch"));
  BOOST_CHECK(!has("tanh"));
  BOOST_CHECK(!has("matmul"));
  BOOST_CHECK(!has("input"));  // leaves are not listed: they compute nothing to batch
}

BOOST_AUTO_TEST_CASE(plan_cache_hits_for_graphs_of_the_same_shape) {
  TestModel m(4);
  ComputationGraph cg;
  cg.set_autobatch(1);
  uint64_t hits = 0, misses = 0;
  for (int rep = 0; rep < 4; ++rep) {
    cg.clear();
    std::vector<Expression> losses;
    for (unsigned inst = 0; inst < 4; ++inst) {
      Expression h = lookup(cg, m.emb, inst);
      for (int t = 0; t < 3; ++t) h = tanh(h + lookup(cg, m.emb, (inst + t) % 20));
      losses.push_back(sum_elems(square(h)));
    }
    Expression loss = sum(losses);
    cg.forward(loss);
    cg.backward(loss);
    hits += cg.autobatch_stats().plan_hits;
    misses += cg.autobatch_stats().plan_misses;
  }
  // The first sighting is scheduled and remembered, the second scheduled and
  // stored, the later ones reuse the stored plan.
  BOOST_CHECK_EQUAL(misses, 2u);
  BOOST_CHECK_EQUAL(hits, 2u);
}

// A BiLSTM tagger over a minibatch of sentences (word ids below the table's
// size), built in one graph: losses of 3 tags from W [f_t; b_t].
struct BiLstmMinibatch {
  ParameterCollection pc;
  LookupParameter emb;
  VanillaLSTMBuilder fwd, bwd;
  Parameter w;
  std::vector<std::vector<unsigned>> sentences;

  BiLstmMinibatch(unsigned vocabulary, unsigned input, unsigned hidden)
      : emb(pc.add_lookup_parameters(vocabulary, {input})),
        fwd(1, input, hidden, pc),
        bwd(1, input, hidden, pc),
        w(pc.add_parameters({3, 2 * hidden})) {}

  Result run(int strategy, int cse) {
    ComputationGraph cg;
    cg.set_autobatch(strategy);
    cg.set_cse(cse);
    pc.reset_gradient();
    fwd.new_graph(cg);
    bwd.new_graph(cg);
    Expression W = parameter(cg, w);
    std::vector<Expression> losses, outs;
    for (const auto& s : sentences) {
      std::vector<Expression> xs, f(s.size()), b(s.size());
      for (unsigned word : s) xs.push_back(lookup(cg, emb, word));
      fwd.start_new_sequence();
      for (size_t t = 0; t < s.size(); ++t) f[t] = fwd.add_input(xs[t]);
      bwd.start_new_sequence();
      for (size_t t = s.size(); t-- > 0;) b[t] = bwd.add_input(xs[t]);
      for (size_t t = 0; t < s.size(); ++t) {
        outs.push_back(W * concatenate({f[t], b[t]}));
        losses.push_back(pickneglogsoftmax(outs.back(), s[t] % 3));
      }
    }
    return run_and_collect(cg, outs, losses, pc, emb);
  }
};

// A bidirectional LSTM over many sentences: the forward and backward LSTMs' cell
// ops share a signature and are batched together, their arguments coming from two
// different gates groups.  Such groups run as in-place pieces instead of
// gathering; values and gradients must not change.
BOOST_AUTO_TEST_CASE(bilstm_groups_split_into_in_place_runs_give_the_same_results) {
  BiLstmMinibatch net(30, 6, 5);
  std::mt19937 gen(11);
  net.sentences.resize(24);
  for (auto& s : net.sentences) {
    s.resize(3 + gen() % 5);
    for (auto& word : s) word = gen() % 30;
  }
  Result plain = net.run(0, 0);
  for (int strategy : {1, 2})
    for (int cse : {0, 1}) {
      Result batched = net.run(strategy, cse);
      check_same(plain, batched, 0, strategy);
      BOOST_CHECK_GT(batched.stats.split_groups, 0u);
      BOOST_CHECK_LT(batched.stats.kernels * 4, batched.stats.nodes);
    }
}

BOOST_AUTO_TEST_CASE(merged_sentence_starts_and_ends_add_no_kernels_to_a_bilstm) {
  // Sentences of a tagger's minibatch often start with the same words and end
  // with the same full stop: merging makes their first forward steps and their
  // first backward steps one node each.  The two directions' cells must still
  // run side by side in one group per step, and the groups of the following
  // steps still read their arguments in place: merging must not cost kernel
  // calls or copies.
  const unsigned V = 200;
  BiLstmMinibatch net(V, 12, 5);  // inputs wider than the states, as in the tagger
  std::mt19937 gen(17);
  net.sentences.resize(64);
  for (auto& s : net.sentences) {
    s.resize(5 + gen() % 16);
    for (auto& word : s) word = 2 + gen() % (V - 2);
    s[0] = gen() % 2;         // one of two sentence starts
    if (gen() % 3) s[1] = 2;  // ... often followed by the same word
    s.back() = 0;             // the full stop
  }
  const Result unmerged = net.run(1, 0), merged = net.run(1, 1);
  check_same(unmerged, merged, 0, 1);
  BOOST_CHECK_GT(merged.stats.cse_merged, 0u);
  // Within a few percent: the steps just after a merged prefix read one merged
  // value for several sentences, which no layout can give in place.
  BOOST_CHECK_LE(merged.stats.kernels, unmerged.stats.kernels * 21 / 20);
  BOOST_CHECK_LE(merged.stats.bytes_gathered, unmerged.stats.bytes_gathered * 5 / 4);
}

BOOST_AUTO_TEST_CASE(output_layer_shared_by_merging_is_not_gathered_whole) {
  // A language model's first prediction is the same for every sentence (the
  // same start symbol, the same initial state): merging makes its output layer
  // one node that every sentence's first loss reads.  The loss group then mixes
  // that shared value with the per-word ones, which lie side by side; only the
  // repeats are gathered, not every word's scores.
  const unsigned V = 1000, D = 6;  // scores far larger than the LSTM's values
  ParameterCollection pc;
  LookupParameter emb = pc.add_lookup_parameters(V, {D});
  VanillaLSTMBuilder lstm(1, D, 8, pc);
  Parameter R = pc.add_parameters({V, 8}), bias = pc.add_parameters({V});
  std::mt19937 gen(5);
  std::vector<std::vector<unsigned>> sentences(32);
  size_t tokens = 0;
  for (auto& s : sentences) {
    s.assign(1, 0);  // the start symbol
    s.resize(20 + gen() % 10);  // long enough for the loss group's runs to pay
    for (size_t t = 1; t < s.size(); ++t) s[t] = 1 + gen() % (V - 1);
    tokens += s.size() - 1;
  }
  auto run = [&](int strategy, int cse) {
    ComputationGraph cg;
    cg.set_autobatch(strategy);
    cg.set_cse(cse);
    pc.reset_gradient();
    lstm.new_graph(cg);
    Expression r = parameter(cg, R), b = parameter(cg, bias);
    std::vector<Expression> losses, outs;
    for (const auto& s : sentences) {
      lstm.start_new_sequence();
      for (size_t t = 0; t + 1 < s.size(); ++t) {
        outs.push_back(affine_transform({b, r, lstm.add_input(lookup(cg, emb, s[t]))}));
        losses.push_back(pickneglogsoftmax(outs.back(), s[t + 1]));
      }
    }
    return run_and_collect(cg, outs, losses, pc, emb);
  };
  Result plain = run(0, 0);
  for (int strategy : {1, 2}) {
    Result merged = run(strategy, 1);
    check_same(plain, merged, 0, strategy);
    BOOST_CHECK_GT(merged.stats.cse_merged, 0u);
    // Gathering every word's scores for the loss group would copy this much.
    BOOST_CHECK_LT(merged.stats.bytes_gathered, tokens * V * sizeof(float) / 2);
  }
}

// Programs drawn from some forty operations, far more kinds than the graphs
// above: batched with either strategy (merging on, as by default) they give
// the loss and the gradients of plain execution.
BOOST_AUTO_TEST_CASE(random_programs_of_many_ops_batched_equal_plain) {
  ParameterCollection pc;
  Parameter p = pc.add_parameters({3, 3});
  LookupParameter emb = pc.add_lookup_parameters(6, {3});
  unsigned compared = 0, ops = 0;
  for (unsigned seed = 1 + test::seed_offset(); seed <= 400 + test::seed_offset(); ++seed) {
    const test::ManyOpsRun plain = test::many_ops_program(pc, p, emb, seed, 0);
    if (!plain.ran || !std::isfinite(plain.loss)) continue;
    ops += plain.added;
    for (int strategy : {1, 2}) {
      const test::ManyOpsRun batched = test::many_ops_program(pc, p, emb, seed, strategy);
      BOOST_REQUIRE(batched.ran);
      BOOST_REQUIRE_MESSAGE(
          std::fabs(batched.loss - plain.loss) <= 1e-4f * (1 + std::fabs(plain.loss)),
          "program " << seed << " strategy " << strategy << ": loss " << batched.loss << " vs " << plain.loss);
      BOOST_REQUIRE_EQUAL(batched.grads.size(), plain.grads.size());
      for (size_t i = 0; i < plain.grads.size(); ++i)
        if (std::isfinite(plain.grads[i]))
          BOOST_REQUIRE_MESSAGE(std::fabs(batched.grads[i] - plain.grads[i]) <= 2e-3f * (1 + std::fabs(plain.grads[i])),
                                "program " << seed << " strategy " << strategy << ": gradient " << i << " "
                                           << batched.grads[i] << " vs " << plain.grads[i]);
      ++compared;
    }
  }
  BOOST_TEST_MESSAGE(compared << " batched runs compared, " << ops << " operations in the plain programs");
  BOOST_CHECK_GT(compared, 700u);  // most programs run
  BOOST_CHECK_GT(ops, 1500u);      // and hold several operations each
  test::counts().value_checks += compared;
}
