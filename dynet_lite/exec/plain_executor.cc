// Plain execution: nodes run one by one in the order they were added.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>

#include "dynet_lite/core/exec_context.h"
#include "dynet_lite/core/float_mode.h"
#include "dynet_lite/except.h"
#include "dynet_lite/exec/executor.h"
#include "dynet_lite/exec/graph_memory.h"
#include "dynet_lite/exec/plain_tape.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/model.h"
#include "dynet_lite/ops/op_table.h"

namespace dynet_lite {

namespace {

// Argument tensors of n: in `small` when there are few, else in m.xs.
inline const Tensor* const* gather_args(GraphMemory& m, const Node& n, const Tensor** small) {
  const Tensor** xs = small;
  if (n.num_args > 8) {
    m.xs.resize(n.num_args);
    xs = m.xs.data();
  }
  for (unsigned k = 0; k < n.num_args; ++k) xs[k] = &m.node(n.args[k]).value;
  return xs;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// The kernel context of the device of the node being run, remade when the
/// device changes.
class DeviceContext {
 public:
  DeviceContext(GraphMemory& m, std::mt19937& rng) : m_(m), rng_(rng), ctx_(nullptr, nullptr, &rng, nullptr) {}
  /// Switches to `dev` if needed; `backward` also offers the CPU's transposes.
  void use(Device* dev, bool backward) {
    if (dev == current_) return;
    current_ = dev;
    arenas_ = &m_.arenas(dev);
    ctx_ = ExecContext(&arenas_->values, &arenas_->scratch, &rng_, dev, &m_.meta);
    if (backward) m_.offer_backward_memory(ctx_, *arenas_);
  }
  DeviceArenas& arenas() { return *arenas_; }
  ExecContext& ctx() { return ctx_; }

 private:
  GraphMemory& m_;
  std::mt19937& rng_;
  Device* current_ = nullptr;
  DeviceArenas* arenas_ = nullptr;
  ExecContext ctx_;
};

/// Before something else adds to parameter p's gradient: a node of this graph
/// whose gradient reach_parameter summed into it (and is still all of it) gets
/// it copied back into its own memory.
void keep_parameter_node_gradients(GraphMemory& m, const ParameterStorage& p) {
  auto& records = m.parameter_gradients;
  for (size_t r = 0; r < records.size();) {
    Node& n0 = m.node(records[r].node);
    if (op_info(n0.op).dense_parameter(n0) != &p || records[r].writes != p.gradient_writes) {
      ++r;
      continue;
    }
    std::memcpy(n0.grad, p.g.v, n0.value.d.size() * sizeof(float));
    m.marks[records[r].node] = GradientMark::Flows;
    records.erase(records.begin() + static_cast<std::ptrdiff_t>(r));
  }
}

/// A parameter node's gradient is complete: adds it into the parameter's.
void accumulate_leaf(GraphMemory& m, Node& n, const OpInfo& info) {
  if (!m.parameter_gradients.empty() && info.dense_parameter)
    if (const ParameterStorage* p = info.dense_parameter(n)) keep_parameter_node_gradients(m, *p);
  info.accumulate(n, gradient_tensor(n));
}

/// Node j's gradient is from now on the parameter p's own (zero until now, and
/// written by the caller, which holds p's lock): marked InParameter, and
/// recorded with p's write count, which tells get_gradient whether it still is.
void gradient_in_parameter(GraphMemory& m, VariableIndex j, ParameterStorage& p) {
  p.nonzero_grad = true;
  ++p.gradient_writes;
  m.marks[j] = GradientMark::InParameter;
  m.parameter_gradients.push_back({j, p.gradient_writes});
}

/// Where a replayed step adds the gradient of parameter node a, which went
/// into its parameter's when the tape was recorded: there again while that is
/// zero (the caller holds its lock); otherwise (a second pass before the
/// update, another thread's graph adding to it) into the node's own memory,
/// zeroed unless the kernel assigns it, and `own` is set: the caller then
/// accumulates it after the call (accumulate_own), as an ordinary pass does.
float* replayed_parameter_target(GraphMemory& m, VariableIndex a, bool assigns, bool& own) {
  Node& an = m.node(a);
  ParameterStorage& p = *op_info(an.op).dense_parameter(an);
  own = p.nonzero_grad;
  if (!own) {
    gradient_in_parameter(m, a, p);
    return p.g.v;
  }
  if (!assigns) std::memset(an.grad, 0, an.value.d.size() * sizeof(float));
  return an.grad;
}

void accumulate_own(GraphMemory& m, VariableIndex a) {
  Node& an = m.node(a);
  m.marks[a] = GradientMark::Flows;
  accumulate_leaf(m, an, op_info(an.op));
}

/// A dense parameter's node reached by plain backward on the CPU with a gradient
/// no kernel wrote: its deferred weight-gradient terms (if any) make all of it.
/// While the parameter's own gradient is zero (nothing arrived since the last
/// update), the terms are summed straight into it: the node's gradient is never
/// zeroed, written or copied.  Otherwise the node's gradient is zeroed, the
/// terms are summed into it and it is accumulated as usual.  A tape's replay
/// decides again (kParameter), as the parameter's state may differ.
void reach_parameter(GraphMemory& m, VariableIndex j, Node& n, const OpInfo& info, Arena& scratch) {
  ParameterStorage& p = *info.dense_parameter(n);
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (!p.nonzero_grad) {
      m.weight_grads.flush(n.grad, scratch, p.g.v);
      gradient_in_parameter(m, j, p);
      return;
    }
  }
  const size_t size = n.value.d.size();
  std::memset(n.grad, 0, size * sizeof(float));
  m.weight_grads.flush(n.grad, scratch);
  m.marks[j] = GradientMark::Flows;
  accumulate_leaf(m, n, info);
}

/// Backward of node n, whose gradient (GradientMark::OnDemand) is never
/// stored: `loss` remakes it a block of columns at a time (on_demand_columns)
/// into scratch memory, and n's kernel `b` adds argument k's gradient of the
/// block into target(k), for each k of buf.active.  The parameters of the
/// arguments in `sole_parameters` (bit k: argument k) stay locked throughout
/// (in address order, so that two threads never wait on each other), and
/// target(k) is called while they are.
template <class Target>
void on_demand_pass(GraphMemory& m, Node& n, const Node& loss, BackwardFn b, const Tensor* const* xs,
                    uint32_t sole_parameters, ExecContext& ctx, Arena& scratch, GraphMemory::OnDemandBuffers& buf,
                    Target target) {
  const OpInfo* ops = op_rows();
  const InputGradientFn remake = ops[static_cast<unsigned>(loss.op)].input_gradient;
  Device* dev = n.value.device;
  ctx.set_weight_grads(nullptr);
  buf.mutexes.clear();
  for (unsigned k = 0; k < n.num_args; ++k)
    if (sole_parameters >> k & 1) {
      const Node& an = m.node(n.args[k]);
      buf.mutexes.push_back(&ops[static_cast<unsigned>(an.op)].dense_parameter(an)->mutex);
    }
  std::sort(buf.mutexes.begin(), buf.mutexes.end(), std::less<std::mutex*>());
  struct Held {
    std::vector<std::mutex*>& mutexes;
    size_t locked = 0;
    ~Held() {
      while (locked > 0) mutexes[--locked]->unlock();
    }
  } held{buf.mutexes};
  for (; held.locked < buf.mutexes.size(); ++held.locked) buf.mutexes[held.locked]->lock();
  buf.targets.clear();
  for (unsigned k : buf.active) buf.targets.push_back(target(k));
  const unsigned B = n.value.d.bd, step = on_demand_columns(n.value.d);
  const size_t col = n.value.d.batch_size();
  const Arena::Mark outer = scratch.mark();
  float* dy_block = scratch.allocate_floats(col * step);
  buf.part_args.resize(n.num_args);
  buf.part_xs.resize(n.num_args);
  for (unsigned b0 = 0; b0 < B; b0 += step) {
    const unsigned c = std::min(step, B - b0);
    remake(n.value, loss, loss.grad, b0, b0 + c, dy_block);
    Node part = n;
    part.value.d.bd = c;
    part.value.v = n.value.v + size_t(b0) * col;
    const Tensor dy(part.value.d, dy_block, dev, DeviceMempool::DEDFS);
    for (unsigned p = 0; p < n.num_args; ++p) {
      buf.part_args[p] = *xs[p];
      if (xs[p]->d.bd == B) {
        buf.part_args[p].d.bd = c;
        buf.part_args[p].v += size_t(b0) * xs[p]->d.batch_size();
      }
      buf.part_xs[p] = &buf.part_args[p];
    }
    for (size_t t = 0; t < buf.active.size(); ++t) {
      const unsigned k = buf.active[t];
      const Node& an = m.node(n.args[k]);
      Tensor dx(an.value.d, buf.targets[t], dev, DeviceMempool::DEDFS);
      if (an.value.d.bd == B) {
        dx.d.bd = c;
        dx.v += size_t(b0) * an.value.d.batch_size();
      }
      const Arena::Mark inner = scratch.mark();
      b(buf.part_xs.data(), n.num_args, part, dy, k, dx, ctx);
      scratch.rewind(inner);
    }
  }
  scratch.rewind(outer);
}

/// One backward pass from the loss down.  A node's gradient memory is assigned
/// when a consumer first sends it gradient (from one block on a single-device
/// graph); when the pass reaches the node, every consumer has run, so its
/// gradient is complete and it passes it on.  Nodes that do not depend on a
/// parameter get nothing (unless `full`).
///
/// On the CPU the block is not zeroed as a whole: a gradient is zeroed just
/// before its first writer adds to it, and not at all when that writer can
/// assign it (OpInfo::assigns_gradient) or when only deferred weight-gradient
/// terms make it (a parameter's, summed into the parameter: reach_parameter).
class PlainBackward {
 public:
  /// `tape`: where to record the pass's steps (a captured graph), or null.
  PlainBackward(GraphMemory& m, std::mt19937& rng, bool full, const RunOptions& options, PlainTape* tape)
      : m_(m), device_(m, rng), ops_(op_rows()), full_(full), options_(options), tape_(tape) {}

  void run(VariableIndex last) {
    last_ = last;
    if (Device* one = single_device(last)) {
      if (one->type == DeviceType::CPU) find_on_demand(last);
      allocate_block(last, one);
    }
    if (lazy_) m_.unwritten.assign(last + 1, 0);
    recycle_ = lazy_ && !full_;
    m_.internal_slots.clear();
    m_.free_slots.clear();
    if (tape_) {
      tape_->backward_from = last;
      tape_->full = full_;
      tape_->block = block_start_;
      tape_->block_floats = block_floats_;
      tape_->zeroes_slots = lazy_;
    }
    Node& target = m_.node(last);
    m_.marks[last] = GradientMark::Flows;
    give_gradient(target, last);
    target.value.device->fill(target.grad, 1.f, target.value.d.size());
    if (lazy_) {
      m_.unwritten[last] = 0;
      run_nodes<true>(last);
    } else {
      run_nodes<false>(last);
    }
    // Nodes are flushed as they are reached; this is only a safety net.
    if (!m_.weight_grads.empty()) {
      zero_deferred();
      m_.weight_grads.flush_all(m_.arenas(target.value.device).scratch);
    }
  }

 private:
  /// The device of every node up to `last`, or null when they lie on several.
  Device* single_device(VariableIndex last) const {
    if (m_.device_arenas.size() == 1) return m_.device_arenas.front()->device;
    Device* d = m_.node(0).value.device;
    for (VariableIndex j = 1; j <= last; ++j)
      if (m_.node(j).value.device != d) return nullptr;
    return d;
  }

  /// A loss argument left unstored (find_on_demand), and the arguments of it
  /// (bit k: argument k) that are dense parameters' nodes it alone reads: their
  /// gradient may go straight into the parameter's.
  struct OnDemand {
    VariableIndex node, loss;
    uint32_t sole_parameters;
  };

  /// Arguments of losses (OpInfo::input_gradient) worth leaving unstored: at
  /// least two blocks (on_demand_columns) of gradient, read by
  /// nothing else up to `last`, of an op that batches element-wise (batch
  /// element b of its value depends on batch element b of the arguments that
  /// have the value's batch, and on the others whole), so that its backward can
  /// run on a block of columns at a time.  Not for a pass that keeps every
  /// gradient (`full`) or checks them.
  void find_on_demand(VariableIndex last) {
    if (m_.loss_nodes.empty() || full_ || options_.check_validity) return;
    VariableIndex first_reader = last + 1;
    for (VariableIndex l : m_.loss_nodes) {
      if (l > last || on_demand_.size() == kMaxOnDemand) continue;
      const Node& loss = m_.node(l);  // a reverted slot may hold another op now
      if (!ops_[static_cast<unsigned>(loss.op)].input_gradient || loss.num_args != 1 || !loss.variable) continue;
      const VariableIndex x = loss.args[0];
      if (!worth_on_demand(m_.node(x), loss)) continue;
      bool seen = false;
      for (const auto& od : on_demand_) seen |= od.node == x;
      if (seen) continue;  // two losses read it
      on_demand_.push_back({x, l, sole_parameter_candidates(m_.node(x))});
      first_reader = std::min(first_reader, x + 1);
    }
    if (on_demand_.empty()) return;
    // Drop those with a reader other than their loss, and the parameters' nodes
    // read by another node.
    for (const OnDemand& od : on_demand_) {
      const Node& x = m_.node(od.node);
      for (unsigned k = 0; k < x.num_args; ++k)
        if (od.sole_parameters >> k & 1) first_reader = std::min(first_reader, x.args[k] + 1);
    }
    for (VariableIndex i = first_reader; i <= last; ++i) {
      const Node& n = m_.node(i);
      for (unsigned k = 0; k < n.num_args; ++k)
        for (size_t c = 0; c < on_demand_.size();) {
          OnDemand& od = on_demand_[c];
          if (od.node == n.args[k] && od.loss != i) {
            od = on_demand_.back();
            on_demand_.pop_back();
            continue;
          }
          if (od.sole_parameters && od.node != i) {
            const Node& x = m_.node(od.node);
            for (unsigned p = 0; p < x.num_args; ++p)
              if (x.args[p] == n.args[k]) od.sole_parameters &= ~(uint32_t(1) << p);
          }
          ++c;
        }
      if (on_demand_.empty()) return;
    }
  }

  /// The arguments of x (bits) that are dense parameters' nodes, each read once by x.
  uint32_t sole_parameter_candidates(const Node& x) const {
    uint32_t bits = 0;
    for (unsigned k = 0; k < x.num_args && k < 32; ++k) {
      unsigned uses = 0;
      for (unsigned p = 0; p < x.num_args; ++p) uses += x.args[p] == x.args[k];
      if (uses == 1 && sums_into_parameter(m_.node(x.args[k]))) bits |= uint32_t(1) << k;
    }
    return bits;
  }

  bool worth_on_demand(const Node& x, const Node& loss) const {
    const OpInfo& info = ops_[static_cast<unsigned>(x.op)];
    const Dim& d = x.value.d;
    if (x.value.device->type != DeviceType::CPU || !x.variable || x.aux || info.leaf || info.blocks_gradient ||
        info.batch != BatchKind::Elementwise || d.bd != loss.value.d.bd || d.bd < 2 * on_demand_columns(d))
      return false;
    for (unsigned k = 0; k < x.num_args; ++k) {
      const unsigned bd = m_.node(x.args[k]).value.d.bd;
      if (bd != 1 && bd != d.bd) return false;
    }
    return true;
  }

  static constexpr size_t kMaxOnDemand = 16;

  /// Marks the argument `a` of loss j OnDemand when find_on_demand chose it.
  bool leave_on_demand(VariableIndex j, VariableIndex a, Node& an) {
    for (const auto& od : on_demand_)
      if (od.loss == j && od.node == a) {
        m_.marks[a] = GradientMark::OnDemand;
        an.grad = nullptr;
        const Node& loss = m_.node(j);
        m_.on_demand_gradients.push_back({a, &loss, an.value, loss.grad, 0, an.value.d.bd, nullptr});
        return true;
      }
    return false;
  }

  /// The memory backward_on_demand adds argument k's gradient into: the
  /// parameter's own while that is zero and this node alone reads the
  /// parameter's node (which is then marked InParameter, as reach_parameter
  /// does), else the node's, zeroed.  The caller holds the parameter's lock.
  float* on_demand_target(const OnDemand& od, unsigned k, VariableIndex a, Node& an) {
    if (od.sole_parameters >> k & 1) {
      ParameterStorage& p = *ops_[static_cast<unsigned>(an.op)].dense_parameter(an);
      if (!p.nonzero_grad) {
        gradient_in_parameter(m_, a, p);
        if (lazy_) m_.unwritten[a] = 0;
        return p.g.v;
      }
    }
    ensure_zero(a, an);
    return an.grad;
  }

  /// Node j (marked OnDemand) passes on its gradient, remade by its loss a
  /// block of columns at a time in scratch memory and never stored
  /// (on_demand_pass).  The arguments' gradients are zeroed first and only
  /// added to (no weight-gradient term is left for later: it would read the
  /// block after it is gone).  A tape records the pass as one kOnDemand step.
  template <bool kLazy>
  void backward_on_demand(VariableIndex j, Node& n, const OpInfo& info) {
    const OnDemand* od = nullptr;
    for (const auto& c : on_demand_)
      if (c.node == j) od = &c;
    const Node& loss = m_.node(od->loss);
    Device* dev = n.value.device;
    device_.use(dev, true);
    GraphMemory::OnDemandBuffers& buf = m_.on_demand_buffers;
    buf.active.clear();
    for (unsigned k = 0; k < n.num_args; ++k) {
      const VariableIndex a = n.args[k];
      Node& an = m_.node(a);
      if (!an.variable) continue;
      if (m_.marks[a] == GradientMark::None) {
        m_.marks[a] = GradientMark::Flows;
        give_gradient(an, a);
      }
      buf.active.push_back(k);
    }
    if (buf.active.empty()) {
      if (tape_) {
        PlainTape::Backward& step = record(PlainTape::Backward::kOnDemand, n);
        step.arg = const_cast<Node*>(&loss);
        step.at = j;
      }
      return;
    }
    if (kLazy && !deferred_unwritten_.empty() && m_.end_backward_node_flushes(device_.arenas())) zero_deferred();
    m_.end_backward_node(device_.arenas());
    ExecContext& ctx = device_.ctx();
    ctx.begin_node();
    BackwardFn b = backward_kernel(info, dev);
    const Tensor* const* xs = gather_args(m_, n, small_);
    uint32_t into = 0;  // the arguments whose gradient goes into their parameter's
    on_demand_pass(m_, n, loss, b, xs, od->sole_parameters, ctx, device_.arenas().scratch, buf, [&](unsigned k) {
      const VariableIndex a = n.args[k];
      Node& an = m_.node(a);
      float* t = on_demand_target(*od, k, a, an);
      if (t != an.grad) into |= uint32_t(1) << k;
      return t;
    });
    if (tape_) {
      PlainTape::Backward& step = record_call(PlainTape::Backward::kOnDemand, j, n, b, true);
      step.arg = const_cast<Node*>(&loss);
      step.at = j;
      step.k = into;
    }
  }

  /// One zeroed block on `dev` for the gradients of every node up to `last`, padded.
  void allocate_block(VariableIndex last, Device* dev) {
    size_t bound = 0, parameters = 0;
    if (last + 1 == m_.padded_value_nodes) {
      bound = m_.padded_value_floats;
      parameters = m_.padded_parameter_floats;
    } else {
      for (VariableIndex j = 0; j <= last; ++j) {
        const Node& n = m_.node(j);
        const size_t padded = padded_gradient_floats(n.value.d.size());
        bound += padded;
        if (ops_[static_cast<unsigned>(n.op)].dense_parameter) parameters += padded;
      }
    }
    for (const auto& od : on_demand_) bound -= padded_gradient_floats(m_.node(od.node).value.d.size());
    DeviceArenas& da = m_.arenas(dev);
    block_ = da.grads.allocate_floats(bound);
    block_floats_ = bound;
    block_start_ = block_;
    block_end_ = block_ + bound;
    parameters_ = block_;
    block_ += parameters;
    zeroed_end_ = block_;
    // Zeroing gradient by gradient pays where large ones (parameters' matrices)
    // make up much of the block; a graph of small nodes zeroes it at once.
    lazy_ = dev->type == DeviceType::CPU && !options_.check_validity && bound >= kLazyMeanFloats * (size_t(last) + 1);
    if (!lazy_) da.device->fill(block_start_, 0.f, bound);
  }

  void give_gradient(Node& n, VariableIndex i) {
    const size_t sz = n.value.d.size();
    float* g;
    if (block_ && ops_[static_cast<unsigned>(n.op)].dense_parameter) {
      // A parameter's node: its gradient mostly goes straight into the
      // parameter's (reach_parameter, into_parameter), its own memory left
      // unwritten.  These lie at the block's bottom, in the same places from
      // graph to graph of one model, the others above them: pages that no
      // pass writes stay out of the resident set.
      n.grad = parameters_;
      parameters_ += padded_gradient_floats(sz);
      if (lazy_) {
        m_.unwritten[i] = 1;
        if (sz <= kEagerFloats) ensure_zero(i, n);
      }
      return;
    }
    if (recycle_ && n.internal) {
      give_internal_gradient(n, i);
      return;
    }
    if (block_) {
      g = block_;
      const size_t padded = padded_gradient_floats(sz);
      block_ += padded;
      if (lazy_) {
        if (g + padded <= zeroed_end_) {
          // zeroed with an earlier small gradient
        } else if (padded <= kEagerFloats) {
          zero_ahead(g, padded);
        } else {
          m_.unwritten[i] = 1;
        }
      }
    } else {
      g = m_.arenas(n.value.device).grads.allocate_floats(sz);
      n.value.device->fill(g, 0.f, sz);
    }
    n.grad = g;
  }

  /// Internal node i (Node::internal; a pass that keeps every gradient makes
  /// none) gets the smallest free slot that holds its gradient, else fresh
  /// memory from the block.  Either way it is written or zeroed before it is
  /// read (unwritten), and it is the node's until its backward has run
  /// (release_internal_gradient): an LSTM's gates take one slot per step in
  /// flight instead of one per step of the whole graph.
  void give_internal_gradient(Node& n, VariableIndex i) {
    const size_t padded = padded_gradient_floats(n.value.d.size());
    std::vector<GraphMemory::GradientSlot>& free = m_.free_slots;
    size_t best = free.size();
    for (size_t s = 0; s < free.size(); ++s)
      if (free[s].floats >= padded && (best == free.size() || free[s].floats < free[best].floats)) best = s;
    GraphMemory::GradientSlot slot{i, static_cast<uint32_t>(padded), block_};
    if (best < free.size()) {
      slot = free[best];
      slot.node = i;
      free[best] = free.back();
      free.pop_back();
    } else {
      block_ += padded;
    }
    m_.internal_slots.push_back(slot);
    n.grad = slot.at;
    m_.unwritten[i] = 1;
  }

  /// Internal node j has passed its gradient on: nothing reads it any more
  /// (the LSTM gates' weight terms left for later read their own copy of the
  /// pre-activations' derivative), and its slot is free for the next one.
  void release_internal_gradient(VariableIndex j) {
    std::vector<GraphMemory::GradientSlot>& used = m_.internal_slots;
    for (size_t s = used.size(); s-- > 0;)
      if (used[s].node == j) {
        m_.free_slots.push_back(used[s]);
        used[s] = used.back();
        used.pop_back();
        m_.marks[j] = GradientMark::Released;
        return;
      }
  }

  /// Gradients of up to this many floats are zeroed when given (tracking them
  /// would cost more than zeroing them), with the block's next kZeroAheadFloats
  /// at least: one memset for many small gradients, given one after another.
  static constexpr size_t kEagerFloats = 256;
  /// The mean floats of gradient per node from which gradients are zeroed one by one.
  static constexpr size_t kLazyMeanFloats = 64;
  static constexpr size_t kZeroAheadFloats = 2048;
  void zero_ahead(float* g, size_t padded) {
    float* from = std::max(g, zeroed_end_);
    float* to = std::min(g + std::max(padded, kZeroAheadFloats), block_end_);
    std::memset(from, 0, static_cast<size_t>(to - from) * sizeof(float));
    zeroed_end_ = to;
    if (!tape_) return;
    const size_t at = static_cast<size_t>(from - tape_->block), floats = static_cast<size_t>(to - from);
    auto& ranges = tape_->zeroed_ranges;
    if (!ranges.empty() && ranges.back().first + ranges.back().second == at)
      ranges.back().second += floats;
    else
      ranges.emplace_back(at, floats);
  }

  /// Zeroes node i's gradient if nothing has written it yet.
  void ensure_zero(VariableIndex i, Node& n) {
    if (!lazy_ || !m_.unwritten[i]) return;
    std::memset(n.grad, 0, n.value.d.size() * sizeof(float));
    m_.unwritten[i] = 0;
    record(PlainTape::Backward::kZero, n);
  }

  /// Whether node i's deferred terms may go straight into its parameter's
  /// gradient (reach_parameter).
  bool sums_into_parameter(const Node& n) const {
    const OpInfo& info = ops_[static_cast<unsigned>(n.op)];
    return info.accumulate && n.variable && !full_ && info.dense_parameter && info.dense_parameter(n);
  }

  /// Before a kernel call adding to node a's unwritten gradient: whether the
  /// kernel may assign it, else zeroes it.
  __attribute__((noinline)) bool assign_or_zero(VariableIndex a, Node& an, const OpInfo& info) {
    if (info.assigns_gradient) return true;
    ensure_zero(a, an);
    return false;
  }

  /// After a kernel asked to assign node a's gradient: it did, unless it left
  /// its term for later (the sink holds more than `pending` terms).  Then the
  /// gradient is untouched, and stays so for a parameter's terms to be summed
  /// into the parameter (reach_parameter); otherwise returns true: zero it
  /// (after the call's step).
  __attribute__((noinline)) bool after_assigning(VariableIndex a, const Node& an, size_t pending) {
    if (m_.weight_grads.size() == pending) {
      m_.unwritten[a] = 0;
      return false;
    }
    if (!sums_into_parameter(an)) return true;
    if (m_.marks[a] != GradientMark::PendingWeightGrads) deferred_unwritten_.push_back(a);
    return false;
  }

  /// Before every pending term is summed into its target: zeroes the targets
  /// nothing has written yet.
  void zero_deferred() {
    for (VariableIndex i : deferred_unwritten_) ensure_zero(i, m_.node(i));
    deferred_unwritten_.clear();
  }

  /// The nodes from `last` down, each as its gradient is complete.  `kLazy`:
  /// lazy_, decided for the pass (the other way pays nothing for it).
  template <bool kLazy>
  void run_nodes(VariableIndex last) {
    for (VariableIndex j = last + 1; j-- > 0;)
      if (m_.marks[j] != GradientMark::None) {
        backward_node<kLazy>(j);
        if (kLazy && recycle_ && m_.node(j).internal) release_internal_gradient(j);
      }
  }

  /// Node j's gradient is complete: passes it on to its arguments.
  template <bool kLazy>
  void backward_node(VariableIndex j) {
    Node& n = m_.node(j);
    const OpInfo& info = ops_[static_cast<unsigned>(n.op)];
    if (m_.marks[j] >= GradientMark::InParameter) {  // done already, or remade here
      if (m_.marks[j] == GradientMark::OnDemand) backward_on_demand<kLazy>(j, n, info);
      return;
    }
    if (kLazy && m_.unwritten[j]) {
      if (sums_into_parameter(n)) {
        reach_parameter(m_, j, n, info, m_.arenas(n.value.device).scratch);
        m_.unwritten[j] = 0;
        if (tape_) record(PlainTape::Backward::kParameter, n).k = j;
        return;
      }
      ensure_zero(j, n);
    }
    if (options_.check_validity) check_finite(gradient_tensor(n), "gradient", info.name, j);
    // Every use of this node has run: the weight gradients they left for later
    // are summed now, as one product, before anything reads them.
    if (m_.marks[j] == GradientMark::PendingWeightGrads) {
      m_.weight_grads.flush(n.grad, m_.arenas(n.value.device).scratch);
      record(PlainTape::Backward::kFlush, n);
    }
    if (info.accumulate) {
      if (n.variable) {
        accumulate_leaf(m_, n, info);
        if (tape_) record(PlainTape::Backward::kAccumulate, n).accumulate = info.accumulate;
      }
      return;
    }
    if (info.blocks_gradient || n.num_args == 0) return;
    Device* dev = n.value.device;
    device_.use(dev, true);
    BackwardFn b = backward_kernel(info, dev);
    const Tensor* const* xs = gather_args(m_, n, small_);
    ExecContext& ctx = device_.ctx();
    const Tensor dy = gradient_tensor(n);
    // A graph run once (no tape) hands a gradient that the op passes on
    // unchanged to an argument that only this node reads (passes_gradient).
    const bool passes = !tape_ && info.passes_gradient && dev->type == DeviceType::CPU && !(recycle_ && n.internal);
    bool first_call = true;
    for (unsigned k = 0; k < n.num_args; ++k) {
      const VariableIndex a = n.args[k];
      Node& an = m_.node(a);
      if (!full_ && !an.variable) continue;
      if (!on_demand_.empty() && info.input_gradient && leave_on_demand(j, a, an)) continue;
      if (passes && m_.marks[a] == GradientMark::None && pass_gradient<kLazy>(n, info, xs, k, a, an)) continue;
      if (m_.marks[a] == GradientMark::None) {
        m_.marks[a] = GradientMark::Flows;
        give_gradient(an, a);
      }
      if (first_call) {  // as the tape's replay does at the step that begins a node
        if (dev->type == DeviceType::CPU) {
          if (kLazy && !deferred_unwritten_.empty() && m_.end_backward_node_flushes(device_.arenas())) zero_deferred();
          m_.end_backward_node(device_.arenas());
        }
        ctx.begin_node();
      }
      if (kLazy && m_.unwritten[a] && m_.marks[a] == GradientMark::Flows &&
          into_parameter(j, n, info, b, xs, dy, k, a, an)) {
        if (tape_) {
          PlainTape::Backward& step = record_call(PlainTape::Backward::kIntoParameter, j, n, b, first_call);
          step.assign = info.assigns_gradient;
          step.k = k;
          step.arg = &an;
          step.at = a;
        }
        first_call = false;
        continue;
      }
      // An unwritten gradient is assigned by a kernel that can, else zeroed first.
      const bool assign = kLazy && m_.unwritten[a] && assign_or_zero(a, an, info);
      Arena::Mark scratch_mark = device_.arenas().scratch.mark();
      const size_t pending = m_.weight_grads.size();
      const bool defer = dev->type == DeviceType::CPU && an.value.device->type == DeviceType::CPU;
      ctx.set_weight_grads(defer ? &m_.weight_grads : nullptr);
      Tensor dx = gradient_tensor(an);
      if (assign) {
        ctx.set_assign_dx(true);
        b(xs, n.num_args, n, dy, k, dx, ctx);
        ctx.set_assign_dx(false);
      } else {
        b(xs, n.num_args, n, dy, k, dx, ctx);
      }
      const bool zero_after_call = assign && after_assigning(a, an, pending);
      if (tape_) {
        PlainTape::Backward& step = record_call(PlainTape::Backward::kCall, j, n, b, first_call);
        step.weight_grads = defer;
        step.assign = assign;
        step.k = k;
        step.arg = &an;
      }
      first_call = false;
      if (zero_after_call) ensure_zero(a, an);
      if (m_.weight_grads.size() != pending) m_.marks[a] = GradientMark::PendingWeightGrads;
      device_.arenas().scratch.rewind(scratch_mark);
    }
  }

  /// Node n's gradient becomes its argument k's (node a's): n's backward
  /// would add it, unchanged, into a's zero gradient, and n is a's only
  /// reader, so nothing else writes a's gradient, and n's, complete now, is
  /// never written again.  The value is the same, but for a zero's sign: a
  /// -0 stays -0 where 0 + (-0) gives +0.  Not for a leaf (its gradient goes
  /// into its parameter's), a node whose memory is reused (internal), or
  /// where n's is (release_internal_gradient; the caller checks).
  template <bool kLazy>
  bool pass_gradient(const Node& n, const OpInfo& info, const Tensor* const* xs, unsigned k, VariableIndex a, Node& an) {
    if (an.readers != 1 || an.internal || ops_[static_cast<unsigned>(an.op)].accumulate ||
        !info.passes_gradient(xs, n.num_args, n, k))
      return false;
    m_.marks[a] = GradientMark::Flows;
    an.grad = n.grad;
    if (kLazy) m_.unwritten[a] = 0;
    return true;
  }

  /// A dense parameter's node of kDirectFloats or more that node j alone reads,
  /// its gradient not written yet, gets it from j's kernel straight into the
  /// parameter's gradient while that is zero (nothing arrived since the last
  /// update): its own memory is never written, and no pass adds it into the
  /// parameter.  The node is then marked InParameter, as reach_parameter marks
  /// one.  Returns false (nothing done) where this does not apply;
  /// check_validity keeps every node's own gradient.
  bool into_parameter(VariableIndex j, Node& n, const OpInfo& info, BackwardFn b, const Tensor* const* xs,
                      const Tensor& dy, unsigned k, VariableIndex a, Node& an) {
    if (options_.check_validity || an.value.d.size() < kDirectFloats || !sums_into_parameter(an) ||
        n.value.device->type != DeviceType::CPU || an.value.device->type != DeviceType::CPU || !sole_reader(j, a))
      return false;
    ParameterStorage& p = *ops_[static_cast<unsigned>(an.op)].dense_parameter(an);
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.nonzero_grad) return false;
    ExecContext& ctx = device_.ctx();
    const Arena::Mark scratch_mark = device_.arenas().scratch.mark();
    Tensor dx(an.value.d, p.g.v, p.device, DeviceMempool::PS);
    ctx.set_weight_grads(nullptr);  // a term left for later would be summed into the node's memory
    ctx.set_assign_dx(info.assigns_gradient);
    b(xs, n.num_args, n, dy, k, dx, ctx);
    ctx.set_assign_dx(false);
    device_.arenas().scratch.rewind(scratch_mark);
    gradient_in_parameter(m_, a, p);
    m_.unwritten[a] = 0;
    return true;
  }
  static constexpr size_t kDirectFloats = size_t(1) << 16;

  /// Whether node j is the only node up to last_ that reads node a, and reads it once.
  bool sole_reader(VariableIndex j, VariableIndex a) const {
    unsigned uses = 0;
    for (VariableIndex i = a + 1; i <= last_; ++i) {
      const Node& r = m_.node(i);
      for (unsigned q = 0; q < r.num_args; ++q)
        if (r.args[q] == a && (i != j || ++uses > 1)) return false;
    }
    return true;
  }

  /// A step calling node j's backward kernel `b`.
  PlainTape::Backward& record_call(PlainTape::Backward::Kind kind, VariableIndex j, Node& n, BackwardFn b,
                                   bool begin_node) {
    PlainTape::Backward& step = record(kind, n);
    step.begin_node = begin_node;
    step.xs = tape_->forward[j].xs;
    step.nargs = n.num_args;
    step.b = b;
    return step;
  }

  PlainTape::Backward& record(PlainTape::Backward::Kind kind, Node& n) {
    static PlainTape::Backward ignored;
    if (!tape_) return ignored;
    PlainTape::Backward step{};
    step.kind = kind;
    step.n = &n;
    tape_->backward.push_back(step);
    return tape_->backward.back();
  }

  GraphMemory& m_;
  DeviceContext device_;
  const OpInfo* ops_;
  const bool full_;
  const RunOptions& options_;
  PlainTape* tape_;
  float* block_ = nullptr;
  size_t block_floats_ = 0;
  bool lazy_ = false;       // the block is zeroed slot by slot (m_.unwritten)
  bool recycle_ = false;    // internal nodes' gradient slots are reused (give_internal_gradient)
  VariableIndex last_ = 0;  // the pass starts from this node
  float* block_start_ = nullptr;
  float* block_end_ = nullptr;
  float* parameters_ = nullptr;  // parameters' nodes get their gradient from here up
  float* zeroed_end_ = nullptr;  // zero_ahead() has zeroed the block up to here
  /// Unwritten parameters' gradients that terms left for later will be summed into.
  std::vector<VariableIndex> deferred_unwritten_;
  std::vector<OnDemand> on_demand_;  // this pass's (find_on_demand)
  const Tensor* small_[8];
};

}  // namespace

void Executor::forward_plain(VariableIndex last, const RunOptions& options) {
  GraphMemory& m = m_;
  // After batched execution, backward follows the recorded groups: nodes run
  // here join them as groups of one.
  const bool record = m.has_batch_groups();
  const OpInfo* ops = op_rows();
  DeviceContext device(m, rng_);
  const Tensor* small[8];
  const auto t0 = std::chrono::steady_clock::now();
  const VariableIndex first = evaluated_;
  for (VariableIndex i = evaluated_; i <= last; ++i) {
    Node& n = m.node(i);
    const OpInfo& info = ops[static_cast<unsigned>(n.op)];
    Device* dev = n.value.device;
    device.use(dev, false);
    DeviceArenas& da = device.arenas();
    ForwardFn f = forward_kernel(info, dev);
    const Tensor* const* xs = gather_args(m, n, small);
    if (!info.sets_own_value) n.value.v = da.values.allocate_floats(n.value.d.size());
    // Recorded as a step of the graph that waits for the arguments' steps (node i is step i).
    if (mark_steps_) mark_device_step(graph_device_, n.args, n.num_args);
    Arena::Mark scratch_mark = da.scratch.mark();
    f(xs, n.num_args, n, device.ctx());
    if (!mark_steps_) da.scratch.rewind(scratch_mark);
    evaluated_ = i + 1;
    if (record) {
      VariableIndex* mem = static_cast<VariableIndex*>(m.meta.allocate(sizeof(VariableIndex)));
      *mem = i;
      m.batch_state().groups.push_back({&n, mem, 1, nullptr, nullptr, nullptr});
    }
    if (options.check_validity) check_finite(n.value, "value", info.name, i);
  }
  AutobatchStats& stats = m.batch_state().stats;
  stats.nodes += last + 1 - first;
  stats.kernels += last + 1 - first;
  stats.forward_seconds += seconds_since(t0);
}

void Executor::backward_plain(VariableIndex last, bool full, const RunOptions& options) {
  m_.begin_backward();
  backward_done_ = true;
  const bool flows = full || m_.node(last).variable;  // else the loss depends on no parameter
  const auto t0 = std::chrono::steady_clock::now();
  // A captured graph on one device follows its tape (which leaves the marks
  // as the recorded pass set them), or records it.
  const bool taped = !tape_.forward.empty() && !options.check_validity;
  if (flows && taped && device_graph_ && backward_device_graph(last, full)) {
    m_.batch_state().stats.backward_seconds += seconds_since(t0);
    return;
  }
  if (flows && taped && replay_backward_tape(last, full)) {
    m_.batch_state().stats.backward_seconds += seconds_since(t0);
    return;
  }
  m_.marks.assign(last + 1, GradientMark::None);
  if (!flows) return;
  tape_.drop_backward();
  drop_backward_device_graph();
  PlainBackward(m_, rng_, full, options, taped ? &tape_ : nullptr).run(last);
  tape_.has_backward = taped;
  if (taped && tape_.device->type == DeviceType::CPU) {
    plan_passed_gradients(tape_, op_rows());
    plan_input_terms(tape_, op_rows());
  }
  m_.batch_state().stats.backward_seconds += seconds_since(t0);
}

void Executor::write_forward_tape(VariableIndex last) {
  tape_.clear();
  if (m_.has_batch_groups()) return;
  const OpInfo* ops = op_rows();
  Device* dev = m_.node(0).value.device;
  for (VariableIndex i = 0; i <= last; ++i) {
    Node& n = m_.node(i);
    if (n.value.device != dev) {
      tape_.clear();
      return;
    }
    const OpInfo& info = ops[static_cast<unsigned>(n.op)];
    const uint32_t xs = static_cast<uint32_t>(tape_.args.size());
    for (unsigned k = 0; k < n.num_args; ++k) tape_.args.push_back(&m_.node(n.args[k]).value);
    tape_.forward.push_back({forward_kernel(info, dev), &n, xs, n.num_args, !info.sets_own_value});
  }
  tape_.device = dev;
  if (dev->type == DeviceType::CPU) plan_column_groups(tape_, ops);
}

void Executor::replay_forward_tape() {
  DeviceArenas& da = m_.arenas(tape_.device);
  ExecContext ctx(&da.values, &da.scratch, &rng_, tape_.device, &m_.meta);
  const Tensor* const* args = tape_.args.data();
  const auto t0 = std::chrono::steady_clock::now();
  const PlainTape::ColumnGroup* group = tape_.column_groups.data();
  const PlainTape::ColumnGroup* const groups_end = group + tape_.column_groups.size();
  // The groups' products, for the pass only (a cache's programs share the arenas).
  const Arena::Mark columns_mark = da.scratch.mark();
  float* const columns = tape_.columns_floats ? da.scratch.allocate_floats(tape_.columns_floats) : nullptr;
  const size_t steps = tape_.forward.size();
  const uint32_t* order = tape_.order.empty() ? nullptr : tape_.order.data();
  for (size_t p = 0; p < steps; ++p) {
    const size_t s = order ? order[p] : p;
    const PlainTape::Forward& step = tape_.forward[s];
    Node& n = *step.n;
    for (; group != groups_end && group->at == s; ++group) {  // the products of steps sharing a weight
      const Arena::Mark mark = da.scratch.mark();
      float* x = da.scratch.allocate_floats(size_t(group->k) * group->count);
      for (uint32_t c = 0; c < group->count; ++c)
        std::memcpy(x + size_t(c) * group->k, tape_.column_operands[group->operands + c]->v, group->k * sizeof(float));
      group->product(group->w->v, group->m, group->k, x, group->count, columns + group->out);
      da.scratch.rewind(mark);
    }
    if (step.allocate) n.value.v = da.values.allocate_floats(n.value.d.size());
    const Arena::Mark scratch_mark = da.scratch.mark();
    if (step.column != PlainTape::kNoColumn) {
      ctx.set_precomputed_product(columns + step.column);
      step.f(args + step.xs, step.nargs, n, ctx);
      ctx.set_precomputed_product(nullptr);
    } else {
      step.f(args + step.xs, step.nargs, n, ctx);
    }
    da.scratch.rewind(scratch_mark);
  }
  da.scratch.rewind(columns_mark);
  evaluated_ = static_cast<VariableIndex>(tape_.forward.size());
  AutobatchStats& stats = m_.batch_state().stats;
  stats.nodes += evaluated_;
  stats.kernels += evaluated_;
  stats.forward_seconds += seconds_since(t0);
}

// A kIntoParameter step: the call writes its weight gradient where
// replayed_parameter_target says, holding the parameter's lock while it
// writes the parameter's gradient.
void Executor::into_parameter_step(const PlainTape::Backward& step, const Tensor* const* args, ExecContext& ctx) {
  Node& an = *step.arg;
  std::unique_lock<std::mutex> lock(op_info(an.op).dense_parameter(an)->mutex);
  bool own;
  Tensor dx(an.value.d, replayed_parameter_target(m_, step.at, step.assign, own), an.value.device,
            DeviceMempool::PS);
  if (own) lock.unlock();  // the kernel writes the node's memory
  ctx.set_weight_grads(nullptr);
  ctx.set_assign_dx(step.assign);
  step.b(args + step.xs, step.nargs, *step.n, gradient_tensor(*step.n), step.k, dx, ctx);
  ctx.set_assign_dx(false);
  if (own) accumulate_own(m_, step.at);
}

// A kOnDemand step: node n's backward on its gradient remade by its loss
// (on_demand_pass), as the recorded pass ran it.  An argument whose gradient
// went into its parameter's then (bit k of step.k) goes where
// replayed_parameter_target says.
void Executor::on_demand_step(const PlainTape::Backward& step, const Tensor* const* args, ExecContext& ctx,
                              Arena& scratch) {
  Node& n = *step.n;
  const Node& loss = *step.arg;
  m_.on_demand_gradients.push_back({step.at, &loss, n.value, loss.grad, 0, n.value.d.bd, nullptr});
  if (!step.begin_node) return;  // no argument gets a gradient
  GraphMemory::OnDemandBuffers& buf = m_.on_demand_buffers;
  buf.active.clear();
  for (unsigned k = 0; k < n.num_args; ++k)
    if (m_.node(n.args[k]).variable) buf.active.push_back(k);
  uint32_t own = 0;  // went into its parameter's when recorded, into its own now
  on_demand_pass(m_, n, loss, step.b, args + step.xs, step.k, ctx, scratch, buf, [&](unsigned k) {
    if (!(step.k >> k & 1)) return m_.node(n.args[k]).grad;
    bool o;
    float* target = replayed_parameter_target(m_, n.args[k], false, o);
    own |= uint32_t(o) << k;
    return target;
  });
  for (unsigned k = 0; k < n.num_args; ++k)
    if (own >> k & 1) accumulate_own(m_, n.args[k]);
}

bool Executor::replay_backward_tape(VariableIndex last, bool full) {
  if (!tape_.has_backward || tape_.backward_from != last || tape_.full != full) return false;
  DeviceArenas& da = m_.arenas(tape_.device);
  // The recorded pass's gradients lie in one block; the tape holds only if the
  // block lands where it did (a reorganised arena puts it elsewhere).
  float* block = da.grads.allocate_floats(tape_.block_floats);
  if (block != tape_.block) {
    da.grads.reset();
    m_.transposes.reset(&da.grads);
    return false;
  }
  Device* dev = tape_.device;
  if (!tape_.zeroes_slots) dev->fill(block, 0.f, tape_.block_floats);
  for (const auto& [at, floats] : tape_.zeroed_ranges) std::memset(block + at, 0, floats * sizeof(float));
  Node& target = m_.node(last);
  dev->fill(target.grad, 1.f, target.value.d.size());
  ExecContext ctx(&da.values, &da.scratch, &rng_, dev, &m_.meta);
  const bool cpu = dev->type == DeviceType::CPU;
  m_.offer_backward_memory(ctx, da);
  const Tensor* const* args = tape_.args.data();
  StepOrder order;
  if (mark_steps_) order = backward_step_order(tape_.backward);
  for (size_t s = 0; s < tape_.backward.size(); ++s) {
    const PlainTape::Backward& step = tape_.backward[s];
    Node& n = *step.n;
    if (mark_steps_) mark_device_step(dev, order.of(s), order.count(s));
    if (step.flush_inputs) m_.input_grads.flush();
    switch (step.kind) {
      case PlainTape::Backward::kFlush:
        m_.weight_grads.flush(n.grad, da.scratch);
        break;
      case PlainTape::Backward::kAccumulate:
        accumulate_leaf(m_, n, op_info(n.op));
        break;
      case PlainTape::Backward::kZero:
        std::memset(n.grad, 0, n.value.d.size() * sizeof(float));
        break;
      case PlainTape::Backward::kParameter:
        reach_parameter(m_, step.k, n, op_info(n.op), da.scratch);
        break;
      case PlainTape::Backward::kCall:
      case PlainTape::Backward::kIntoParameter:
      case PlainTape::Backward::kOnDemand: {
        if (step.begin_node) {
          if (cpu) {
            // The input terms read kept memory.
            if (!m_.input_grads.empty() && m_.end_backward_node_rewinds(da)) m_.input_grads.flush();
            m_.end_backward_node(da);
          }
          ctx.begin_node();
        }
        const Arena::Mark scratch_mark = da.scratch.mark();
        if (step.kind == PlainTape::Backward::kIntoParameter) {
          into_parameter_step(step, args, ctx);
        } else if (step.kind == PlainTape::Backward::kOnDemand) {
          on_demand_step(step, args, ctx, da.scratch);
        } else {
          ctx.set_weight_grads(step.weight_grads ? &m_.weight_grads : nullptr);
          ctx.set_assign_dx(step.assign);
          ctx.set_input_grads(step.input_later ? &m_.input_grads : nullptr);
          Tensor dx = gradient_tensor(*step.arg);
          step.b(args + step.xs, step.nargs, n, gradient_tensor(n), step.k, dx, ctx);
          ctx.set_assign_dx(false);
          ctx.set_input_grads(nullptr);
        }
        if (!mark_steps_) da.scratch.rewind(scratch_mark);
        break;
      }
    }
  }
  if (!m_.input_grads.empty()) m_.input_grads.flush();
  if (!m_.weight_grads.empty()) m_.weight_grads.flush_all(da.scratch);
  return true;
}

}  // namespace dynet_lite
