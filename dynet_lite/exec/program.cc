// Compiled programs (dynet_lite/compile.h): slots, capture and replay of a
// graph, and the cache of programs by key.
#include <algorithm>

#include "dynet_lite/backends/device_graph.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/compile.h"
#include "dynet_lite/core/hash.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/core/op_kind.h"
#include "dynet_lite/core/random.h"
#include "dynet_lite/devices.h"
#include "dynet_lite/except.h"
#include "dynet_lite/exec/autobatch.h"
#include "dynet_lite/exec/executor.h"
#include "dynet_lite/exec/graph_memory.h"
#include "dynet_lite/exec/structure.h"

namespace dynet_lite {

enum SlotKind { kInputSlot, kIndexSlot, kIndicesSlot };

/// A slot's storage: the graph's nodes point at it, so it never moves.
struct Program::Slot {
  SlotKind kind;
  std::string name;
  Dim dim;                       // input
  std::vector<float> values;     // input
  unsigned index = 0;            // one index
  std::vector<unsigned> indices;  // several
  bool set = false;
};

namespace {
const char* kind_name(int kind) {
  return kind == kInputSlot ? "an input" : kind == kIndexSlot ? "an index" : "an indices";
}
}  // namespace

namespace {
// A program's arenas start small and grow to what its graph holds: a cache may
// keep thousands of programs (one per tree shape).
constexpr size_t kProgramArenaBytes = 4 * 1024;
}  // namespace

/// The CPU arenas that the programs of a cache take turns with, and which
/// program holds them.  A program run without batching lays its values out
/// anew at each run; a batched program's groups write where its capture put
/// them, which holds while the arenas keep the capture's chunks
/// (Executor::take_back_layout): those of the values and the gathered
/// arguments keep their chunks (Arena::keep_chunks), so a batched program is
/// captured once.
struct Program::SharedMemory {
  SharedMemory() {
    arenas.values.keep_chunks();
    arenas.gathers.keep_chunks();
  }
  DeviceArenas arenas{cpu_device(), kProgramArenaBytes};
  Program* holder = nullptr;
};

Program::Program() : cg_(new ComputationGraph(std::make_unique<GraphMemory>(kProgramArenaBytes))) {}
Program::Program(Unseeded)
    : cg_(new ComputationGraph(std::make_unique<GraphMemory>(kProgramArenaBytes), false)), seeded_(false) {}
Program::~Program() {
  if (shared_ && shared_->holder == this) return_shared_memory();
}

namespace {
void swap_arenas(DeviceArenas& a, DeviceArenas& b) {
  a.grads.swap(b.grads);
  a.kept.swap(b.kept);
  a.scratch.swap(b.scratch);
  a.values.swap(b.values);
  a.gathers.swap(b.gathers);
}
}  // namespace

void Program::take_shared_memory() {
  if (shared_->holder == this) return;
  if (shared_->holder) shared_->holder->return_shared_memory();
  DeviceArenas& mine = *cg_->mem_->device_arenas.front();
  DYNET_LITE_CHECK(mine.device == shared_->arenas.device, std::logic_error,
                   "compiled program: its CPU arenas are on " << mine.device->name << ", the cache's on "
                                                              << shared_->arenas.device->name);
  swap_arenas(mine, shared_->arenas);
  shared_->holder = this;
  if (cg_->executor_->batched_capture()) {
    // Batched groups computed their values into blocks where the capture put
    // them: taken back there while the arenas keep the capture's chunks (a
    // replay computes them again), captured anew otherwise.
    cg_->executor_->take_back_layout();
  } else {
    // Plain execution lays the values out from the start of the arena (the
    // capture began on an emptied one); what another program left there is gone.
    mine.values.rewind(Arena::Mark{});
    cg_->executor_->drop_values();
  }
}

void Program::return_shared_memory() {
  swap_arenas(*cg_->mem_->device_arenas.front(), shared_->arenas);
  shared_->holder = nullptr;
  if (cg_->executor_->batched_capture())
    cg_->executor_->forget_batched_values();
  else
    cg_->executor_->drop_values();
}

Program::Slot& Program::declare(const std::string& name, int kind, const Dim& d, unsigned count) {
  DYNET_LITE_ARG_CHECK(!captured_, "Program: slot '" << name << "' declared after the program's first run");
  DYNET_LITE_ARG_CHECK(slots_.find(name) == slots_.end(), "Program: slot '" << name << "' is declared twice");
  auto slot = std::make_unique<Slot>();
  slot->kind = static_cast<SlotKind>(kind);
  slot->name = name;
  slot->dim = d;
  if (kind == kInputSlot) slot->values.assign(d.size(), 0.f);
  if (kind == kIndicesSlot) slot->indices.assign(count, 0);
  Slot& s = *slot;
  order_.push_back(&s);
  slots_.emplace(name, std::move(slot));
  return s;
}

Program::SlotRef Program::slot(const std::string& name) {
  auto it = slots_.find(name);
  DYNET_LITE_ARG_CHECK(it != slots_.end(), "Program::set: no slot '" << name << "' (declare it while building)");
  return SlotRef(it->second.get());
}

Program::Slot& Program::check_kind(SlotRef ref, int kind, const char* what) {
  DYNET_LITE_ARG_CHECK(ref.s_, "Program::set: an empty slot handle (take one with slot(name))");
  Slot& s = *ref.s_;
  DYNET_LITE_ARG_CHECK(s.kind == kind, "Program::set: slot '" << s.name << "' is " << kind_name(s.kind)
                                                             << " slot, given " << what);
  return s;
}

Expression Program::input(const std::string& name, const Dim& d) {
  DYNET_LITE_DIM_CHECK(d.size() > 0, "Program::input: slot '" << name << "' of shape " << d << " has no elements");
  Slot& s = declare(name, kInputSlot, d, 0);
  return dynet_lite::input(*cg_, d, &s.values);
}

const unsigned* Program::index(const std::string& name) { return &declare(name, kIndexSlot, Dim(), 1).index; }

const std::vector<unsigned>* Program::indices(const std::string& name, unsigned count) {
  DYNET_LITE_ARG_CHECK(count > 0, "Program::indices: slot '" << name << "' of 0 indices");
  return &declare(name, kIndicesSlot, Dim(), count).indices;
}

Expression Program::lookup(const std::string& name, LookupParameter p) {
  return dynet_lite::lookup(*cg_, p, index(name));
}

Expression Program::lookup(const std::string& name, LookupParameter p, unsigned count) {
  return dynet_lite::lookup(*cg_, p, indices(name, count));
}

void Program::set(const std::string& name, const std::vector<float>& values) { set(slot(name), values); }
void Program::set(const std::string& name, unsigned index) { set(slot(name), index); }
void Program::set(const std::string& name, const std::vector<unsigned>& indices) { set(slot(name), indices); }

void Program::set(SlotRef ref, const std::vector<float>& values) {
  Slot& s = check_kind(ref, kInputSlot, "values");
  DYNET_LITE_DIM_CHECK(values.size() == s.values.size(), "Program::set: slot '" << s.name << "' has shape " << s.dim
                                                                                << " (" << s.values.size()
                                                                                << " values), given "
                                                                                << values.size() << " values");
  std::copy(values.begin(), values.end(), s.values.begin());
  s.set = true;
}

void Program::set(SlotRef ref, unsigned index) {
  Slot& s = check_kind(ref, kIndexSlot, "one index");
  s.index = index;
  s.set = true;
  index_set_after_forward_ = &s;
}

void Program::set(SlotRef ref, const std::vector<unsigned>& indices) {
  Slot& s = check_kind(ref, kIndicesSlot, "indices");
  DYNET_LITE_DIM_CHECK(indices.size() == s.indices.size(), "Program::set: slot '" << s.name << "' holds "
                                                                                  << s.indices.size()
                                                                                  << " indices, given "
                                                                                  << indices.size());
  std::copy(indices.begin(), indices.end(), s.indices.begin());
  s.set = true;
  index_set_after_forward_ = &s;
}

void Program::set_output(const Expression& e) {
  DYNET_LITE_ARG_CHECK(e.pg == cg_.get() && !e.is_stale(), "Program::set_output: the expression is not of this program's graph");
  output_ = e;
  has_output_ = true;
}

const Tensor& Program::forward() {
  DYNET_LITE_ARG_CHECK(has_output_, "Program::forward: no expression given and no output set (set_output)");
  return forward(output_);
}

bool Program::device_graph() const { return cg_->executor_->has_device_graph(); }
bool Program::backward_device_graph() const { return cg_->executor_->has_backward_device_graph(); }
std::pair<size_t, size_t> Program::column_groups() const { return cg_->executor_->column_groups(); }
size_t Program::passed_gradients() const { return cg_->executor_->passed_gradients(); }

void Program::backward() {
  DYNET_LITE_ARG_CHECK(has_output_, "Program::backward: no expression given and no output set (set_output)");
  backward(output_);
}

void Program::backward(const Expression& e, bool full) {
  DYNET_LITE_CHECK(!(index_set_after_forward_ && cg_->executor_->has_device_graph()), std::logic_error,
                   "Program::backward: index slot '" << index_set_after_forward_->name
                                                     << "' was set after forward(); run forward() again first");
  // After another program of the cache ran, the forward is computed again first
  // (a batched capture's by a replay: its groups write where they wrote).
  if (shares_ && captured_ && cg_->executor_->captured()) {
    check_replayable(e.i);
    take_shared_memory();
    if (cg_->executor_->batched_capture() && cg_->executor_->evaluated() <= e.i)
      cg_->executor_->replay_forward(RunOptions{autobatch_strategy(cg_->autobatch_), cg_->check_validity_, cg_->fusion_});
  }
  cg_->backward(e, full);
}

const Tensor& Program::forward(const Expression& e) {
  DYNET_LITE_ARG_CHECK(e.pg == cg_.get() && !e.is_stale(),
                       "Program::forward: the expression is stale or belongs to another graph");
  for (const Slot* s : order_)
    DYNET_LITE_ARG_CHECK(s->set, "Program::forward: slot '" << s->name << "' was never set");
  // Each run after the first is a fresh graph's: it takes the next seed of
  // --dynet-seed's sequence, as constructing a graph does, so that its random
  // numbers (dropout) and every later graph's are those of a rebuilt loop.
  if (seeded_ && captured_) cg_->rng_.seed(next_graph_seed());
  // Its memory back first: a batched capture whose arenas another program
  // reorganised is made again.
  if (captured_ && cg_->executor_->captured()) {
    check_replayable(e.i);
    if (shares_) take_shared_memory();
  }
  // A graph recomputed or cleared by hand since (ComputationGraph::forward,
  // invalidate, revert) is captured again.
  if (!captured_ || !cg_->executor_->captured()) {
    if (shared_ && shared_->holder == this) return_shared_memory();
    shares_ = shared_ && default_device()->type == DeviceType::CPU;
    if (shares_) take_shared_memory();
    capture(e.i);
  } else {
    if (cg_->executor_->has_device_graph()) check_slot_indices();
    cg_->executor_->replay_forward(RunOptions{autobatch_strategy(cg_->autobatch_), cg_->check_validity_, cg_->fusion_});
    ++replays_;
  }
  index_set_after_forward_ = nullptr;
  return cg_->node(e.i).value;
}

void Program::capture(VariableIndex last) {
  ComputationGraph& cg = *cg_;
  // The whole graph, so that every later run computes the same nodes.
  last = cg.size() - 1;
  cg.invalidate();
  cg.executor_->begin_capture();
  cg.run_forward(last);
  cg.executor_->end_capture(last);
  captured_ = true;
  captured_last_ = last;
  parameters_.clear();
  captured_size_ = cg.size();
  captured_device_ = default_device();
  // The parameters it reads, to refuse a replay once their model is gone.
  for (VariableIndex i = 0; i < cg.size(); ++i) {
    const Node& n = cg.node(i);
    if (n.op == OpKind::Parameter) {
      const op_params::ParamParams& p = n.p<op_params::ParamParams>();
      if (p.p) parameters_.push_back(p.p->weak_from_this());
      if (p.lp) parameters_.push_back(p.lp->weak_from_this());
    } else if (n.op == OpKind::Lookup) {
      parameters_.push_back(n.p<op_params::LookupParams>().lp->weak_from_this());
    }
  }
  plan_device_graph();
}

namespace {
// Whether `p` points into slot storage of `slots`.
template <class T>
bool in_slots(const std::vector<Program::SlotRange>& slots, const T* p) {
  for (const auto& r : slots)
    if (static_cast<const void*>(p) == r.begin) return true;
  return false;
}
}  // namespace

void Program::plan_device_graph() {
  ComputationGraph& cg = *cg_;
  checked_.clear();
  if (cg.size() == 0) return;
  Device* d = cg.node(0).value.device;
  if (!can_record_device_graph(d)) return;
  // The slots' storage never moves: the graph's inputs are read from there.
  std::vector<SlotRange> slots;
  for (const Slot* s : order_) {
    if (s->kind == kInputSlot) slots.push_back({s->values.data(), s->values.size() * sizeof(float)});
    if (s->kind == kIndexSlot) slots.push_back({&s->index, sizeof(unsigned)});
    if (s->kind == kIndicesSlot) slots.push_back({s->indices.data(), s->indices.size() * sizeof(unsigned)});
  }
  for (VariableIndex i = 0; i < cg.size(); ++i) {
    const Node& n = cg.node(i);
    if (n.value.device != d) return;  // work on the host or another device is not recorded
    const OpInfo& info = op_info(n.op);
    bool ok;
    if (n.op == OpKind::Input) {
      const auto& p = n.p<op_params::InputParams>();
      ok = p.pdata ? in_slots(slots, p.pdata->data()) : !p.pscalar;
    } else if (n.op == OpKind::Lookup) {
      const auto& p = n.p<op_params::LookupParams>();
      ok = p.pindex ? in_slots(slots, p.pindex) : !p.pindices || in_slots(slots, p.pindices->data());
      if (ok && (p.pindex || p.pindices)) checked_.push_back(i);
    } else if (n.op == OpKind::PickNegLogSoftmax) {
      const auto& p = n.p<op_params::PnlsParams>();
      ok = p.pindex ? in_slots(slots, p.pindex) : !p.pindices || in_slots(slots, p.pindices->data());
      if (ok && (p.pindex || p.pindices)) checked_.push_back(i);
    } else {
      // Anything else that reads the host at run time, or draws random numbers,
      // would be frozen by the recording.
      ok = info.pure && (!info.pure_node || info.pure_node(n));
    }
    if (!ok) {
      checked_.clear();
      return;
    }
  }
  std::vector<HostRange> live;
  for (const auto& r : slots) live.push_back({r.begin, r.bytes});
  cg.executor_->use_device_graph(d, std::move(live));
}

void Program::check_slot_indices() const {
  // A launched graph runs no host code: the kernels' own checks are made here.
  for (VariableIndex i : checked_) {
    const Node& n = cg_->node(i);
    if (n.op == OpKind::Lookup) {
      const auto& p = n.p<op_params::LookupParams>();
      const unsigned* idx = p.pindex ? p.pindex : p.pindices->data();
      const size_t count = p.pindex ? 1 : p.pindices->size();
      for (size_t k = 0; k < count; ++k)
        DYNET_LITE_INDEX_CHECK(idx[k] < p.lp->num_rows(), "lookup: index " << idx[k] << " out of range for lookup parameter '"
                                                                          << p.lp->name << "' with " << p.lp->num_rows()
                                                                          << " rows");
    } else {
      const auto& p = n.p<op_params::PnlsParams>();
      const unsigned* idx = p.pindex ? p.pindex : p.pindices->data();
      const size_t count = p.pindex ? 1 : p.pindices->size();
      const unsigned rows = cg_->node(n.args[0]).value.d.rows();
      for (size_t k = 0; k < count; ++k)
        DYNET_LITE_INDEX_CHECK(idx[k] < rows, "pickneglogsoftmax: index " << idx[k] << " out of range for "
                                                                          << rows << " rows");
    }
  }
}

bool Program::parameters_alive() const {
  for (const auto& p : parameters_)
    if (p.expired()) return false;
  return true;
}

void Program::copy_structure(const ComputationGraph& src, const GraphStructure& s) {
  ComputationGraph& cg = *cg_;
  DYNET_LITE_CHECK(cg.size() == 0 && !captured_, std::logic_error, "Program: a structure copied into a built program");
  cg.set_autobatch(src.autobatch());
  cg.set_cse(0);  // src's nodes are merged already; each is copied as it is
  cg.set_fusion(src.fusion());
  cg.set_check_validity(src.check_validity());
  std::vector<Expression> args;
  size_t next = 0;
  for (VariableIndex i = 0; i < src.size(); ++i) {
    const Node& n = src.node(i);
    alignas(8) unsigned char with_slot[Node::kParamBytes];
    const void* params = n.params;
    if (next < s.data.size() && s.data[next].node == i) {
      const GraphStructure::DataNode& d = s.data[next++];
      const int kind = d.slot == DataSlot::Values ? kInputSlot : d.slot == DataSlot::Index ? kIndexSlot : kIndicesSlot;
      Slot& slot = declare("#" + std::to_string(i), kind, n.value.d, d.count);
      slot_parameters(n, d, &slot.values, &slot.index, &slot.indices, with_slot);
      structure_slots_.push_back(&slot);
      params = with_slot;
    }
    args.clear();
    for (unsigned k = 0; k < n.num_args; ++k) args.emplace_back(&cg, n.args[k]);
    const VariableIndex j = cg.add_node(n.op, args.data(), n.num_args, params, Node::kParamBytes, n.variable,
                                        n.value.device, n.num_args ? nullptr : &n.value.d);
    DYNET_LITE_CHECK(j == i, std::logic_error, "Program: node " << i << " copied as node " << j);
    cg.node(j).merged = n.merged;
  }
}

void Program::bind_structure(const ComputationGraph& src, const GraphStructure& s) {
  for (size_t k = 0; k < s.data.size(); ++k) {
    Slot& slot = *structure_slots_[k];
    read_node_data(src, s.data[k], slot.values.data(), slot.kind == kIndexSlot ? &slot.index : slot.indices.data());
    slot.set = true;
    if (slot.kind != kInputSlot) index_set_after_forward_ = &slot;
  }
}

void Program::check_replayable(VariableIndex last) const {
  DYNET_LITE_ARG_CHECK(cg_->size() == captured_size_,
                       "Program::forward: the graph has " << cg_->size() << " nodes but was captured with "
                                                          << captured_size_ << "; build a new program");
  DYNET_LITE_ARG_CHECK(last <= captured_last_, "Program::forward: node " << last << " is not part of the capture");
  DYNET_LITE_CHECK(default_device() == captured_device_, std::invalid_argument,
                   "Program::forward: captured with default device "
                       << captured_device_->name << ", but the default device is now " << default_device()->name
                       << "; capture a program per device");
  for (const auto& p : parameters_)
    DYNET_LITE_CHECK(!p.expired(), std::runtime_error,
                     "Program::forward: a parameter the program reads was destroyed with its model");
}

// ---------------------------------------------------------------- cache

ProgramCache::ProgramCache(size_t capacity) : capacity_(capacity), shared_(new Program::SharedMemory) {
  DYNET_LITE_ARG_CHECK(capacity > 0, "ProgramCache: capacity must be at least 1");
}

ProgramCache::~ProgramCache() { clear(); }

void ProgramCache::check_use(bool by_structure) {
  const int use = by_structure ? 2 : 1;
  DYNET_LITE_CHECK(use_ == 0 || use_ == use, std::logic_error,
                   "ProgramCache: " << (by_structure ? "forward(e)" : "get()") << " on a cache that serves "
                                    << (by_structure ? "get()" : "forward(e)") << "; use one cache for each");
  use_ = use;
}

void ProgramCache::drop(std::list<Entry>::iterator it) {
  if (it->second.get() == last_program_) last_program_ = nullptr;
  structures_.erase(it->first);
  index_.erase(it->first);
  programs_.erase(it);
}

Program& ProgramCache::insert(uint64_t key, std::unique_ptr<Program> program) {
  if (programs_.size() >= capacity_) {
    drop(std::prev(programs_.end()));
    ++evictions_;
  }
  programs_.emplace_front(key, std::move(program));
  index_[key] = programs_.begin();
  return *programs_.front().second;
}

bool ProgramCache::seen_enough(uint64_t key, unsigned after) {
  auto it = sightings_.find(key);
  const unsigned seen = it == sightings_.end() ? 0 : it->second;
  if (seen < after) {
    if (sightings_.size() >= 64 * capacity_) sightings_.clear();  // forget rather than grow without bound
    ++sightings_[key];
    return false;
  }
  sightings_.erase(key);
  return true;
}

Program& ProgramCache::get(uint64_t key, const std::function<void(Program&)>& build) {
  check_use(false);
  auto it = index_.find(key);
  if (it != index_.end()) {
    ++hits_;
    programs_.splice(programs_.begin(), programs_, it->second);
    return *programs_.front().second;
  }
  ++misses_;
  auto program = std::make_unique<Program>();
  program->shared_ = shared_.get();
  build(*program);  // may throw: nothing is kept then
  return insert(key, std::move(program));
}

Program* ProgramCache::get_if_seen(uint64_t key, unsigned after, const std::function<void(Program&)>& build) {
  check_use(false);
  if (!contains(key) && !seen_enough(key, after)) return nullptr;
  return &get(key, build);
}

namespace {
void check_live(const Expression& e, const char* what) {
  DYNET_LITE_ARG_CHECK(e.pg != nullptr && e.graph_is_live() && e.pg->is_live(e.i, e.graph_id, e.stamp),
                       what << ": the expression is empty or stale (its graph was cleared or destroyed)");
}
}  // namespace

const Tensor& ProgramCache::forward(const Expression& e, unsigned after) {
  check_live(e, "ProgramCache::forward");
  check_use(true);
  ComputationGraph& cg = *e.pg;
  last_program_ = nullptr;
  last_graph_ = &cg;
  last_graph_id_ = cg.get_id();
  if (!structure_) structure_ = std::make_unique<GraphStructure>();
  GraphStructure& s = *structure_;
  describe_structure(cg, *cg.mem_, s);
  Program* program = nullptr;
  if (!s.blocker) {
    auto it = index_.find(s.key);
    bool other = false;  // the key is another structure's (a collision)
    if (it != index_.end()) {
      Program& found = *it->second->second;
      if (!found.parameters_alive()) {  // its model is gone: compiled again for this one
        drop(it->second);
      } else if (structures_.at(s.key) == s.words) {
        ++hits_;
        programs_.splice(programs_.begin(), programs_, it->second);
        program = &found;
      } else {
        other = true;
      }
    }
    if (!program && !other && seen_enough(s.key, after)) {
      ++misses_;
      // Making it leaves the seeds of later graphs as they were.
      std::unique_ptr<Program> made(new Program(Program::Unseeded{}));
      made->shared_ = shared_.get();
      made->copy_structure(cg, s);
      program = &insert(s.key, std::move(made));
      structures_[s.key] = s.words;
    }
  }
  if (!program) {
    ++uncompiled_;
    return cg.forward(e);
  }
  program->bind_structure(cg, s);
  // Random numbers (dropout, noise) come from e's graph's generator, as they
  // would had the graph run: the same draws, in the same order; the graph's
  // generator then stands where that run would have left it.
  ComputationGraph& runs = *program->cg_;
  runs.rng_ = cg.rng_;
  const Tensor& value = program->forward(Expression(&runs, e.i));
  cg.rng_ = runs.rng_;
  last_program_ = program;  // backward(e) goes there once its forward has run
  return value;
}

void ProgramCache::backward(const Expression& e, bool full) {
  check_live(e, "ProgramCache::backward");
  if (last_program_ && e.pg == last_graph_ && e.graph_id == last_graph_id_) {
    last_program_->backward(Expression(last_program_->cg_.get(), e.i), full);
    return;
  }
  e.pg->backward(e, full);
}

void ProgramCache::clear() {
  programs_.clear();
  index_.clear();
  sightings_.clear();
  structures_.clear();
  last_program_ = nullptr;
}

uint64_t ProgramCache::key_of(const std::vector<unsigned>& sizes) {
  uint64_t h = hash::mix(0x5851f42d4c957f2dULL, sizes.size());
  for (unsigned s : sizes) h = hash::mix(h, s);
  return hash::finish(h);
}

}  // namespace dynet_lite
