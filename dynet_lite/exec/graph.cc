// ComputationGraph: adding nodes (shape inference, merging equal expressions),
// checkpoints, and access to values.  Running the nodes is its executor's job
// (exec/executor.h).
#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <new>
#include <ostream>

#include "dynet_lite/core/graph_registry.h"
#include "dynet_lite/core/random.h"
#include "dynet_lite/dynet.h"
#include "dynet_lite/exec/executor.h"
#include "dynet_lite/exec/graph_memory.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/model.h"

namespace dynet_lite {

namespace {
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

// ------------------------------------------------------------ ComputationGraph

namespace {
// The executor of a new graph on `m`: made anew in the storage of the one the
// bundle kept from its last graph, or allocated the first time.
std::unique_ptr<Executor> take_executor(GraphMemory& m, std::mt19937& rng) {
  if (!m.spare_executor) return std::make_unique<Executor>(m, rng);
  Executor* e = m.spare_executor.release();
  e->~Executor();
  return std::unique_ptr<Executor>(new (e) Executor(m, rng));
}
}  // namespace

ComputationGraph::ComputationGraph() : ComputationGraph(acquire_graph_memory()) {}

ComputationGraph::ComputationGraph(std::unique_ptr<GraphMemory> memory, bool seeded)
    : ops_(op_rows()),
      mem_(std::move(memory)),
      autobatch_(autobatch_flag),
      cse_(current_params().cse),
      fusion_(current_params().fusion != 0),
      rng_(seeded ? next_graph_seed() : std::mt19937::default_seed),
      executor_(take_executor(*mem_, rng_)) {
  build_start_ns_ = now_ns();
  mem_->batch_state().profiling = profiling_flag > 0;
  const GraphRegistration r = register_graph();
  slot_ = r.slot;
  id_ = r.id;
}

void ComputationGraph::note_first_forward() {
  build_timed_ = true;
  mem_->batch_state().stats.build_seconds += static_cast<double>(now_ns() - build_start_ns_) * 1e-9;
}

ComputationGraph::~ComputationGraph() {
  unregister_graph(slot_);  // first: expressions of this graph are stale from here on
  executor_->reset();       // its recorded device graphs, tape and values go now
  mem_->spare_executor = std::move(executor_);
  release_graph_memory(std::move(mem_));
}

void ComputationGraph::clear() {
  mem_->reset();
  executor_->reset();
  num_nodes_ = 0;
  id_ = renew_graph_id(slot_);
  build_start_ns_ = now_ns();
  build_timed_ = false;
}

void ComputationGraph::checkpoint() {
  GraphMemory::Checkpoint c{num_nodes_,
                            executor_->evaluated(),
                            mem_->padded_value_floats,
                            mem_->padded_parameter_floats,
                            mem_->meta.mark(),
                            {},
                            {}};
  for (auto& a : mem_->device_arenas) {
    c.values.push_back(a->values.mark());
    c.gathers.push_back(a->gathers.mark());
  }
  mem_->checkpoints.push_back(std::move(c));
}

void ComputationGraph::revert() {
  DYNET_LITE_CHECK(!mem_->checkpoints.empty(), std::runtime_error, "ComputationGraph::revert: no checkpoint to revert to");
  GraphMemory::Checkpoint c = std::move(mem_->checkpoints.back());
  mem_->checkpoints.pop_back();
  ++revert_count_;
  num_nodes_ = c.num_nodes;
  mem_->padded_value_floats = c.padded_value_floats;
  mem_->padded_value_nodes = c.num_nodes;
  mem_->padded_parameter_floats = c.padded_parameter_floats;
  // The executor first: it reads the batch groups made after the checkpoint,
  // whose member lists are in the graph memory the rewind frees.
  executor_->revert(c.evaluated);
  mem_->meta.rewind(c.meta);
  for (size_t k = 0; k < c.values.size(); ++k) {
    mem_->device_arenas[k]->values.rewind(c.values[k]);
    mem_->device_arenas[k]->gathers.rewind(c.gathers[k]);
  }
}

Node& ComputationGraph::node(VariableIndex i) { return mem_->node(i); }
const Node& ComputationGraph::node(VariableIndex i) const { return mem_->node(i); }

void* ComputationGraph::allocate_graph_bytes(size_t bytes) { return mem_->meta.allocate(bytes); }

size_t ComputationGraph::arena_capacity_bytes() const { return mem_->capacity_bytes(); }
size_t ComputationGraph::arena_peak_bytes() const { return mem_->peak_bytes(); }

void ComputationGraph::check_index(VariableIndex i, const char* what) const {
  DYNET_LITE_INDEX_CHECK(i < num_nodes_, "ComputationGraph::" << what << ": node " << i << " does not exist (the graph has "
                                                               << num_nodes_ << " nodes)");
}

unsigned ComputationGraph::node_stamp(VariableIndex i) const { return node(i).stamp; }

const Dim& ComputationGraph::get_dimension(VariableIndex i) const {
  check_index(i, "get_dimension");
  return node(i).value.d;
}

namespace {
// A shape function returns its Dim written in pieces (a copy of an argument's,
// then a dimension or two changed).  Read back word by word, every load takes
// its word from one of those stores; a wide load over several of them would
// wait until they reach the cache.
inline void copy_dim_by_words(const Dim& from, Dim& to) {
  const volatile Dim& src = from;
  for (unsigned k = 0; k < DYNET_MAX_TENSOR_DIM; ++k) to.d[k] = src.d[k];
  to.nd = src.nd;
  to.bd = src.bd;
}
}  // namespace

VariableIndex ComputationGraph::add_node(OpKind op, const Expression* args, unsigned num_args, const void* params,
                                         size_t params_size, bool trainable, Device* device,
                                         const Dim* leaf_dim) {
  const OpInfo& info = ops_[static_cast<unsigned>(op)];
  VariableIndex idx = num_nodes_;
  Node& n = mem_->node_slot(idx);
  n.op = op;
  n.num_args = static_cast<uint16_t>(num_args);
  n.aux = nullptr;
  n.grad = nullptr;
  DYNET_LITE_ASSERT(params_size <= Node::kParamBytes, info.name << ": parameters too large");
  n.merged = false;
  n.internal = false;
  n.readers = 0;
  // Unused parameter bytes are zeroed so that batching can compare parameters
  // (all of them first: a memset of constant size is a few stores).
  std::memset(n.params, 0, Node::kParamBytes);
  if (params_size) std::memcpy(n.params, params, params_size);
  const Arena::Mark meta_mark = mem_->meta.mark();
  VariableIndex* a = num_args ? static_cast<VariableIndex*>(mem_->meta.allocate(num_args * sizeof(VariableIndex)))
                              : nullptr;
  const Tensor* small[8];
  const Tensor** xs = small;
  if (num_args > 8) {
    mem_->xs.resize(num_args);
    xs = mem_->xs.data();
  }
  bool variable = trainable;
  Device* dev = device;
  for (unsigned k = 0; k < num_args; ++k) {
    const Expression& e = args[k];
    DYNET_LITE_ARG_CHECK(e.pg == this, info.name << ": argument " << k
                                                 << (e.pg ? " belongs to another ComputationGraph"
                                                          : " is an empty Expression (never assigned)"));
    DYNET_LITE_ARG_CHECK(is_live(e.i, e.graph_id, e.stamp),
                         info.name << ": argument " << k << " is stale: its graph was cleared or reverted since it was made");
    a[k] = e.i;
    Node& an = mem_->node(e.i);
    an.readers += an.readers != 255;  // a node merged away below still counts: more, never fewer
    variable |= an.variable;
    if (!dev) dev = an.value.device;
    DYNET_LITE_ARG_CHECK(an.value.device == dev || op == OpKind::ToDevice, info.name << ": argument " << k << " lives on " << an.value.device->name
                                                          << " but the operation runs on " << dev->name
                                                          << "; move it with to_device()");
    xs[k] = &an.value;
  }
  if (!dev) dev = default_device();
  n.args = a;
  n.value.v = nullptr;
  n.value.device = dev;
  n.value.mem_pool = DeviceMempool::FXS;
  n.variable = variable && !info.blocks_gradient;
  n.stamp = revert_count_;
  const bool cse_on = cse();
  // The lookup's hash before the shape, so that its slot is fetched meanwhile.
  const uint64_t cse_hash = cse_on ? mem_->cse.prepare(n, info) : 0;
  if (leaf_dim) n.value.d = *leaf_dim;
  copy_dim_by_words(info.shape(xs, num_args, n), n.value.d);
  // Leaves stay apart (they cost nothing, and a lookup block read in place by
  // the next batched group keeps its layout); their consumers merge.
  if (cse_on) {
    const VariableIndex same = mem_->cse.add(*mem_, ops_, idx, cse_hash, revert_count_);
    if (same != idx) {
      mem_->meta.rewind(meta_mark);
      ++mem_->batch_state().stats.cse_merged;
      return same;
    }
  }
  num_nodes_ = idx + 1;
  const size_t padded = padded_gradient_floats(n.value.d.size());
  mem_->padded_value_floats += padded;
  mem_->padded_value_nodes = num_nodes_;
  if (info.dense_parameter) mem_->padded_parameter_floats += padded;
  if (info.input_gradient) mem_->loss_nodes.push_back(idx);
  if (immediate_compute_) run_forward(idx);
  return idx;
}

void ComputationGraph::check_own(const Expression& e, const char* what) const {
  // The pointer and the registry first: an expression of another graph, or of
  // a destroyed one, is refused without touching that graph.
  if (e.pg == this && e.graph_is_live() && is_live(e.i, e.graph_id, e.stamp)) return;
  const char* why = e.pg == nullptr      ? "is default-constructed (never assigned)"
                    : !e.graph_is_live() ? "is stale: its graph was destroyed or cleared since it was made"
                    : e.pg != this       ? "belongs to another graph"
                                         : "is stale: the graph was reverted past it";
  DYNET_LITE_ARG_CHECK(false, what << ": the expression " << why);
}

const Tensor& ComputationGraph::forward(const Expression& last) {
  check_own(last, "forward");
  return forward(last.i);
}
const Tensor& ComputationGraph::incremental_forward(const Expression& last) {
  check_own(last, "incremental_forward");
  return incremental_forward(last.i);
}

const Tensor& ComputationGraph::forward(VariableIndex last) {
  check_index(last, "forward");
  invalidate();
  run_forward(last);
  return node(last).value;
}

const Tensor& ComputationGraph::incremental_forward(VariableIndex last) {
  check_index(last, "incremental_forward");
  if (last >= executor_->evaluated()) run_forward(last);
  return node(last).value;
}

const Tensor& ComputationGraph::get_value(VariableIndex i) { return incremental_forward(i); }
const Tensor& ComputationGraph::get_value(const Expression& e) {
  check_own(e, "get_value");
  return get_value(e.i);
}

const Tensor& ComputationGraph::get_gradient(VariableIndex i) {
  check_index(i, "get_gradient");
  DYNET_LITE_CHECK(executor_->backward_done(), std::runtime_error,
                   "get_gradient: call backward() first (node " << i << ")");
  Node& n = node(i);
  DYNET_LITE_CHECK(!n.merged, std::runtime_error,
                   "get_gradient: node " << i << " (" << ops_[static_cast<unsigned>(n.op)].name
                                         << ") stands for several equal expressions, merged by common subexpression "
                                            "elimination, and its gradient is theirs together; build the graph with "
                                            "set_cse(0) or --dynet-cse 0 to read their gradients one by one");
  DYNET_LITE_CHECK(i >= mem_->marks.size() || mem_->marks[i] != GradientMark::Released, std::runtime_error,
                   "get_gradient: node " << i << " (" << ops_[static_cast<unsigned>(n.op)].name
                                         << ") is a builder's own step, whose gradient's memory backward gave to "
                                            "another step once this one had passed its gradient on; call "
                                            "backward(loss, true) to keep every node's own gradient");
  if (i < mem_->marks.size() && mem_->marks[i] == GradientMark::InParameter)
    return parameter_node_gradient(i, n);
  if (i < mem_->marks.size() && mem_->marks[i] == GradientMark::OnDemand) remake_gradient(i, n);
  if (!executor_->find_gradient(i, n)) {
    // No gradient flowed here: the loss does not depend on this node, or it is
    // a loss that depends on no parameter, whose gradient is still
    // d loss / d loss = 1 (as in DyNet, which seeds it whatever follows).
    const float g = i == executor_->backward_from() ? 1.f : 0.f;
    DeviceArenas& da = mem_->arenas(n.value.device);
    n.grad = da.grads.allocate_floats(n.value.d.size());
    n.value.device->fill(n.grad, g, n.value.d.size());
  }
  // A tensor that stays put for the caller's reference (until the graph is cleared).
  Tensor& view = mem_->gradient_views[i];
  view = gradient_tensor(n);
  return view;
}
// Plain backward summed node i's gradient straight into its parameter's
// (reach_parameter): it is the parameter's gradient as long as nothing else has
// written to that.
const Tensor& ComputationGraph::parameter_node_gradient(VariableIndex i, const Node& n) {
  const ParameterStorage& p = *ops_[static_cast<unsigned>(n.op)].dense_parameter(n);
  uint64_t writes = 0;
  for (const auto& r : mem_->parameter_gradients)
    if (r.node == i) writes = r.writes;
  DYNET_LITE_CHECK(p.nonzero_grad && p.gradient_writes == writes, std::runtime_error,
                   "get_gradient: node " << i << " (parameter '" << p.name
                                         << "') passed its gradient straight into the parameter's, which has changed "
                                            "since (another graph's backward or an update); read it before, or call "
                                            "backward(loss, true) to keep every node's own gradient");
  Tensor& view = mem_->gradient_views[i];
  view = Tensor(n.value.d, p.g.v, p.device, DeviceMempool::PS);
  return view;
}

// Backward left node i's gradient unstored (GradientMark::OnDemand): its losses
// remake it, once, in the pass's gradient memory (the sum of their parts when
// several losses read it).
void ComputationGraph::remake_gradient(VariableIndex i, Node& n) {
  GraphMemory::OnDemandGradient* first = nullptr;
  const size_t size = n.value.d.size();
  Arena& grads = mem_->arenas(n.value.device).grads;
  float* part = nullptr;
  for (auto& od : mem_->on_demand_gradients) {
    if (od.node != i) continue;
    if (!first) {
      first = &od;
      if (od.made) break;  // made before
      od.made = grads.allocate_floats(size);
      ops_[static_cast<unsigned>(od.loss->op)].input_gradient(od.x, *od.loss, od.dy, od.b0, od.b1, od.made);
      continue;
    }
    if (!part) part = grads.allocate_floats(size);
    ops_[static_cast<unsigned>(od.loss->op)].input_gradient(od.x, *od.loss, od.dy, od.b0, od.b1, part);
    for (size_t e = 0; e < size; ++e) first->made[e] += part[e];
  }
  if (!first) return;
  n.grad = first->made;
  if (mem_->has_batch_groups()) mem_->batch_state().node_gradients[i] = first->made;
}

const Tensor& ComputationGraph::get_gradient(const Expression& e) {
  check_own(e, "get_gradient");
  return get_gradient(e.i);
}

void ComputationGraph::invalidate() {
  executor_->invalidate();
  for (auto& c : mem_->checkpoints) {
    c.evaluated = 0;
    for (auto& m : c.values) m = Arena::Mark{};
    for (auto& m : c.gathers) m = Arena::Mark{};
  }
}

void ComputationGraph::run_forward(VariableIndex last) {
  if (!build_timed_) note_first_forward();
  executor_->forward(last, RunOptions{autobatch_strategy(autobatch_), check_validity_, fusion_});
}

void ComputationGraph::backward(const Expression& last, bool full) {
  check_own(last, "backward");
  backward(last.i, full);
}

void ComputationGraph::backward(VariableIndex last, bool full) {
  check_index(last, "backward");
  incremental_forward(last);
  const Node& target = node(last);
  DYNET_LITE_DIM_CHECK(target.value.d.batch_size() == 1,
                       "backward: the loss must be a scalar (one element per batch element), but node "
                           << last << " (" << op_name(target.op) << ") has shape " << target.value.d);
  executor_->backward(last, full, RunOptions{autobatch_strategy(autobatch_), check_validity_, fusion_});
}

AutobatchStats ComputationGraph::autobatch_stats() const {
  return mem_->batch_state_ ? mem_->batch_state_->stats : AutobatchStats();
}

void ComputationGraph::print_graphviz() const { print_graphviz(std::cerr); }

void ComputationGraph::print_graphviz(std::ostream& os) const {
  os << "digraph G {\n  rankdir=LR;\n  nodesep=.05;\n";
  for (VariableIndex i = 0; i < num_nodes_; ++i) {
    const Node& n = node(i);
    os << "  N" << i << " [label=\"v" << i << " = " << op_name(n.op) << "(";
    for (unsigned k = 0; k < n.num_args; ++k) os << (k ? ", " : "") << 'v' << n.args[k];
    os << ") " << n.value.d << "\"];\n";
    for (unsigned k = 0; k < n.num_args; ++k) os << "  N" << n.args[k] << " -> N" << i << ";\n";
  }
  os << "}\n";
}

}  // namespace dynet_lite
