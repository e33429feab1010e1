// The order a backward tape's steps must keep when they may run side by side
// (exec/plain_tape.h).
#include "dynet_lite/exec/plain_tape.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace dynet_lite {

StepOrder backward_step_order(const std::vector<PlainTape::Backward>& steps) {
  constexpr uint32_t kNone = ~0u;
  std::unordered_map<const Node*, uint32_t> last_write;  // of a node's gradient
  std::unordered_map<const Node*, uint32_t> last_call;   // of a node's backward calls
  uint32_t last_accumulate = kNone;
  auto last_of = [](const std::unordered_map<const Node*, uint32_t>& m, const Node* n) {
    auto it = m.find(n);
    return it == m.end() ? kNone : it->second;
  };
  StepOrder order;
  order.offsets.reserve(steps.size() + 1);
  order.offsets.push_back(0);
  uint32_t deps[4];
  for (uint32_t s = 0; s < steps.size(); ++s) {
    const PlainTape::Backward& step = steps[s];
    unsigned nd = 0;
    deps[nd++] = last_of(last_write, step.n);  // reads (and, flushing, writes) the node's gradient
    switch (step.kind) {
      case PlainTape::Backward::kFlush:
      case PlainTape::Backward::kZero:
        last_write[step.n] = s;
        break;
      case PlainTape::Backward::kParameter:
        last_write[step.n] = s;
        [[fallthrough]];
      case PlainTape::Backward::kAccumulate:
      case PlainTape::Backward::kOnDemand:  // CPU tapes only, never recorded as a device graph
        deps[nd++] = last_accumulate;
        last_accumulate = s;
        break;
      case PlainTape::Backward::kIntoParameter:  // a call that writes a parameter's gradient
        deps[nd++] = last_accumulate;
        last_accumulate = s;
        [[fallthrough]];
      case PlainTape::Backward::kCall:
        deps[nd++] = last_of(last_call, step.n);
        deps[nd++] = last_of(last_write, step.arg);
        last_call[step.n] = s;
        last_write[step.arg] = s;
        break;
    }
    std::sort(deps, deps + nd);
    for (unsigned k = 0; k < nd; ++k)
      if (deps[k] != kNone && (k == 0 || deps[k] != deps[k - 1])) order.after.push_back(deps[k]);
    order.offsets.push_back(static_cast<uint32_t>(order.after.size()));
  }
  return order;
}

namespace {

// The op's ColumnProduct when it applies to the node of this call, else null.
const ColumnProduct* column_product(const OpInfo* ops, const Node& n, const Tensor* const* xs, unsigned nargs) {
  const ColumnProduct& cp = ops[static_cast<unsigned>(n.op)].column_product;
  return cp.applies && cp.applies(xs, nargs, n) ? &cp : nullptr;
}

}  // namespace

void plan_column_groups(PlainTape& tape, const OpInfo* ops) {
  tape.column_groups.clear();
  tape.column_operands.clear();
  tape.columns_floats = 0;
  tape.order.clear();
  const uint32_t n = static_cast<uint32_t>(tape.forward.size());
  // The steps of each weight, in order (step i computes node i).
  std::unordered_map<const Tensor*, std::vector<uint32_t>> by_weight;
  std::vector<const Tensor*> weights;  // in the order first met
  for (uint32_t s = 0; s < n; ++s) {
    PlainTape::Forward& f = tape.forward[s];
    f.column = PlainTape::kNoColumn;
    const ColumnProduct* cp = column_product(ops, *f.n, tape.args.data() + f.xs, f.nargs);
    if (!cp) continue;
    const Tensor* w = tape.args[f.xs + cp->weight];
    auto ins = by_weight.try_emplace(w);
    if (ins.second) weights.push_back(w);
    ins.first->second.push_back(s);
  }
  if (weights.empty()) return;
  // The order steps run in, and each step's position in it.  A leaf that reads
  // nothing computed in the pass and draws no random number (a parameter, a
  // lookup, an input, a constant) may run earlier: a user's loop that looks up
  // each word just before its LSTM step gets its products grouped too.
  std::vector<uint32_t> order(n), pos(n);
  for (uint32_t s = 0; s < n; ++s) order[s] = pos[s] = s;
  auto movable = [&](uint32_t s) {
    const Node& x = *tape.forward[s].n;
    const OpInfo& info = ops[static_cast<unsigned>(x.op)];
    return x.num_args == 0 && info.leaf && (info.trainable_leaf || info.pure || x.op == OpKind::Input);
  };
  std::vector<uint32_t> hoisted;  // of the group being formed
  std::vector<char> moving(n, 0);
  for (const Tensor* w : weights) {
    const std::vector<uint32_t>& steps = by_weight[w];
    for (size_t a = 0; a < steps.size();) {
      const uint32_t at = steps[a];
      const PlainTape::Forward& first = tape.forward[at];
      const ColumnProduct& cp = ops[static_cast<unsigned>(first.n->op)].column_product;
      const uint32_t m = first.n->value.d.rows(), k = tape.args[first.xs + cp.operand]->d.rows();
      // The run of steps after `at` whose operands run before it, or can.
      hoisted.clear();
      size_t b = a + 1;
      while (b < steps.size()) {
        const PlainTape::Forward& f = tape.forward[steps[b]];
        if (f.n->op != first.n->op || f.n->value.d.rows() != m || tape.args[f.xs + cp.operand]->d.rows() != k) break;
        const uint32_t x = f.n->args[cp.operand];
        if (pos[x] > pos[at]) {
          if (!movable(x)) break;
          if (!moving[x]) {
            moving[x] = 1;
            hoisted.push_back(x);
          }
        }
        ++b;
      }
      if (b - a < 2) {
        for (uint32_t x : hoisted) moving[x] = 0;
        a = b;
        continue;
      }
      if (!hoisted.empty()) {  // the operands' leaves move to just before `at`, in their order
        std::sort(hoisted.begin(), hoisted.end(), [&](uint32_t x, uint32_t y) { return pos[x] < pos[y]; });
        std::vector<uint32_t> next;
        next.reserve(n);
        for (uint32_t s : order) {
          if (moving[s]) continue;
          if (s == at) next.insert(next.end(), hoisted.begin(), hoisted.end());
          next.push_back(s);
        }
        order.swap(next);
        for (uint32_t p = 0; p < n; ++p) pos[order[p]] = p;
        for (uint32_t x : hoisted) moving[x] = 0;
      }
      PlainTape::ColumnGroup g{at, cp.product, w, m, k, static_cast<uint32_t>(tape.column_operands.size()),
                               static_cast<uint32_t>(b - a), static_cast<uint32_t>(tape.columns_floats)};
      for (size_t c = a; c < b; ++c) {
        PlainTape::Forward& f = tape.forward[steps[c]];
        tape.column_operands.push_back(tape.args[f.xs + cp.operand]);
        f.column = g.out + static_cast<uint32_t>(c - a) * m;
      }
      tape.columns_floats += size_t(m) * (b - a);
      tape.column_groups.push_back(g);
      a = b;
    }
  }
  std::sort(tape.column_groups.begin(), tape.column_groups.end(),
            [&](const PlainTape::ColumnGroup& x, const PlainTape::ColumnGroup& y) { return pos[x.at] < pos[y.at]; });
  bool moved = false;
  for (uint32_t p = 0; p < n && !moved; ++p) moved = order[p] != p;
  if (moved) tape.order.swap(order);
}

void plan_passed_gradients(PlainTape& tape, const OpInfo* ops) {
  using Step = PlainTape::Backward;
  std::vector<Step>& steps = tape.backward;
  // The calls writing each node's gradient, and the nodes whose gradient other
  // steps write or remake (summed weight terms, leaves, on-demand losses).
  std::unordered_map<const Node*, unsigned> calls_into;
  std::unordered_set<const Node*> kept;
  for (const Step& step : steps) {
    switch (step.kind) {
      case Step::kCall:
      case Step::kIntoParameter:
        ++calls_into[step.arg];
        break;
      case Step::kOnDemand:
        kept.insert(step.n);
        if (step.arg) kept.insert(step.arg);
        break;
      case Step::kFlush:
      case Step::kAccumulate:
      case Step::kParameter:
        kept.insert(step.n);
        break;
      case Step::kZero:
        break;
    }
  }
  std::vector<char> drop(steps.size(), 0);
  std::unordered_set<const Node*> shared;  // arguments now on their node's gradient
  for (size_t s = 0; s < steps.size(); ++s) {
    Step& step = steps[s];
    if (step.kind != Step::kCall) continue;
    Node* n = step.n;
    Node* a = step.arg;
    const OpInfo& info = ops[static_cast<unsigned>(n->op)];
    if (a == n || !info.passes_gradient || !info.passes_gradient(tape.args.data() + step.xs, step.nargs, *n, step.k))
      continue;
    if (calls_into[a] != 1 || kept.count(a) || kept.count(n) || a->internal || n->internal || !a->grad || !n->grad ||
        ops[static_cast<unsigned>(a->op)].accumulate)
      continue;
    if (step.begin_node) {
      Step* next = s + 1 < steps.size() ? &steps[s + 1] : nullptr;
      if (!next || next->n != n || (next->kind != Step::kCall && next->kind != Step::kIntoParameter)) continue;
      next->begin_node = true;
    }
    drop[s] = 1;
    a->grad = n->grad;  // n's steps come before a's: a chain of them ends on the first node's memory
    shared.insert(a);
  }
  tape.passed = shared.size();
  if (shared.empty()) return;
  size_t keep = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    if (drop[s] || (steps[s].kind == Step::kZero && shared.count(steps[s].n))) continue;
    steps[keep++] = steps[s];
  }
  steps.resize(keep);
}

void plan_input_terms(PlainTape& tape, const OpInfo* ops) {
  std::unordered_set<const float*> pending;  // gradients the terms left since the last flush add to
  for (PlainTape::Backward& step : tape.backward) {
    step.input_later = false;
    step.flush_inputs = false;
    if (!pending.empty()) {
      bool touches = pending.count(step.n->grad) != 0;
      if (step.kind == PlainTape::Backward::kCall) touches = touches || pending.count(step.arg->grad) != 0;
      // Its arguments' gradients are not named in the step: summed first.
      if (step.kind == PlainTape::Backward::kOnDemand) touches = true;
      if (touches) {
        step.flush_inputs = true;
        pending.clear();
      }
    }
    if (step.kind != PlainTape::Backward::kCall) continue;
    const ColumnProduct* cp = column_product(ops, *step.n, tape.args.data() + step.xs, step.nargs);
    if (!cp || step.k != cp->operand) continue;
    const OpInfo& target = ops[static_cast<unsigned>(step.arg->op)];
    if (target.dense_parameter && target.dense_parameter(*step.arg)) continue;
    step.input_later = true;
    pending.insert(step.arg->grad);
  }
}

}  // namespace dynet_lite
