#pragma once
// Random programs over some forty operations, for the property-based tests
// that compare ways of running one program: batched against plain
// (test_autobatch), compiled against run as built (test_compile).
#include <functional>
#include <random>
#include <vector>

#include "dynet_lite/compile.h"
#include "dynet_lite/dynet.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/model.h"
#include "test_utils.h"

namespace test {

using namespace dynet_lite;

/// What a run of many_ops_program gives.
struct ManyOpsRun {
  bool ran = false;
  float loss = 0;
  std::vector<float> grads;  // the parameters' and the lookup table's
  unsigned added = 0;
};

/// What an operation of many_ops_program may draw: indices, a count, a flag, a shape.
struct OpDraws {
  unsigned i5, i3, i4, n5, i2;
  Dim shape;
};

namespace many_ops {
using E = const Expression&;
using D = const OpDraws&;
using Op = Expression (*)(E, E, D);
inline const Op kOps[] = {
    [](E a, E b, D) { return a + b; },
    [](E a, E b, D) { return a - b; },
    [](E a, E b, D) { return cmult(a, b); },
    [](E a, E b, D) { return cdiv(a, logistic(b) + 0.5f); },
    [](E a, E b, D) { return a * b; },
    [](E a, E, D) { return tanh(a); },
    [](E a, E, D) { return logistic(a); },
    [](E a, E, D) { return softmax(a); },
    [](E a, E, D) { return log_softmax(a); },
    [](E a, E, D) { return transpose(a); },
    [](E a, E, D d) { return reshape(a, d.shape); },
    [](E a, E b, D d) {
      return concatenate({a, b}, d.i3);
    },
    [](E a, E, D) { return sum_elems(a); },
    [](E a, E, D) { return sum_batches(a); },
    [](E a, E, D d) { return pick(a, d.i5, d.i3); },
    [](E a, E, D d) { return pick_range(a, d.i4, d.n5, d.i3); },
    [](E a, E, D d) { return max_dim(a, d.i3); },
    [](E a, E, D d) { return min_dim(a, d.i3); },
    [](E a, E, D d) { return mean_dim(a, {d.i3}, d.i2 == 1); },
    [](E a, E, D d) {
      return select_rows(a, std::vector<unsigned>{d.i4, d.i5 % 4});
    },
    [](E a, E, D d) { return select_cols(a, std::vector<unsigned>{d.i4}); },
    [](E a, E b, D) { return dot_product(a, b); },
    [](E a, E b, D) { return squared_distance(a, b); },
    [](E a, E b, D) { return l1_distance(a, b); },
    [](E a, E, D d) { return pickneglogsoftmax(a, d.i5); },
    [](E a, E, D d) { return hinge(a, d.i5); },
    [](E a, E b, D) {
      return logsumexp({a, b});
    },
    [](E a, E b, D) {
      return max({a, b});
    },
    [](E a, E b, D) {
      return affine_transform({a, b, a});
    },
    [](E a, E, D d) { return kmax_pooling(a, 1 + d.i3, d.i2); },
    [](E a, E b, D) { return cmult(b, a) * 0.5f; },
    [](E a, E b, D) { return rectify(a) - b; },
    [](E a, E, D) { return sqrt(abs(a) + 0.1f); },
    [](E a, E, D d) { return pick_batch_elems(a, std::vector<unsigned>{d.i3}); },
    [](E a, E, D d) { return sum_dim(a, {d.i3}); },
    [](E a, E b, D) { return colwise_add(a, b); },
    [](E a, E b, D) { return layer_norm(a, b, b); },
    [](E a, E, D) { return sparsemax(a); },
    [](E a, E, D d) { return logsumexp_dim(a, d.i3); },
    [](E a, E b, D d) {
      return conv2d(a, b, {1 + d.i2, 1 + d.i2}, d.i2 == 1);
    },
};
}  // namespace many_ops

/// A random program over the operations of many_ops::kOps (arithmetic, products,
/// affine, softmaxes, losses, slices, selections, reductions, concatenation,
/// reshape, transpose, k-max pooling, layer norm, sparsemax, conv2d) on a few
/// small shapes, batched or not, run under `strategy`.  An operation whose
/// shapes do not fit is refused when added (a dynet_lite error) and skipped;
/// the loss sums every operation added.  The same seed draws the same program
/// under every strategy.  With `cache`, the loss is computed and
/// back-propagated through the program of the graph's structure
/// (ProgramCache::forward(e)).
inline ManyOpsRun many_ops_program(ParameterCollection& pc, Parameter p, LookupParameter emb, unsigned seed,
                                   int strategy, ProgramCache* cache = nullptr) {
  std::mt19937 gen(seed);
  auto draw = [&gen](unsigned n) { return static_cast<unsigned>(gen() % n); };
  static const std::vector<std::vector<long>> shapes = {{3}, {3, 3}, {3, 1}, {1, 3}, {3, 2}, {2, 3}, {6}};
  auto shape = [&] { return Dim(shapes[draw(shapes.size())], draw(4) == 0 ? 2 : 1); };
  ManyOpsRun r;
  pc.reset_gradient();
  ComputationGraph cg;
  cg.set_autobatch(strategy);
  std::vector<Expression> pool = {parameter(cg, p), lookup(cg, emb, draw(6))};
  for (int k = 0; k < 3; ++k) {
    const Dim d = shape();
    std::vector<float> v(d.size());
    for (float& x : v) x = std::uniform_real_distribution<float>(-2.f, 2.f)(gen);
    pool.push_back(input(cg, d, v));
  }
  const size_t sources = pool.size();
  for (int step = 0; step < 12; ++step) {
    const Expression a = pool[draw(pool.size())], b = pool[draw(pool.size())];
    const OpDraws d{draw(5), draw(3), draw(4), 1 + draw(5), draw(2), shape()};
    const many_ops::Op op = many_ops::kOps[draw(sizeof(many_ops::kOps) / sizeof(*many_ops::kOps))];
    Expression e;
    try {
      e = op(a, b, d);
    } catch (const std::exception&) {  // refused when added: shapes that do not fit
      continue;
    }
    pool.push_back(e);
  }
  r.added = static_cast<unsigned>(pool.size() - sources);
  if (r.added == 0) return r;
  std::vector<Expression> terms;
  for (size_t k = sources; k < pool.size(); ++k) terms.push_back(sum_batches(sum_elems(pool[k])));
  const Expression loss = sum(terms);
  if (cache) {
    r.loss = as_scalar(cache->forward(loss));
    cache->backward(loss);
  } else {
    r.loss = as_scalar(cg.forward(loss));
    cg.backward(loss);
  }
  for (const auto& q : pc.parameters_list()) {
    const std::vector<float> g = as_vector(q->g);
    r.grads.insert(r.grads.end(), g.begin(), g.end());
  }
  const std::vector<float> t = test::table_gradient(emb.get_storage());
  r.grads.insert(r.grads.end(), t.begin(), t.end());
  r.ran = true;
  return r;
}

}  // namespace test
