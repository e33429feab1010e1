// Compiled programs: a graph captured by its first forward runs again on new
// inputs.  Plain execution simply runs the nodes again: the values are
// allocated anew in the same order from the same point of the arena, so every
// node gets the memory it had.  Batched execution runs the recorded groups
// again (exec/batched_forward.cc), with no signatures, schedule or layout
// decisions but those that depend on where values lie.
#include "dynet_lite/core/float_mode.h"
#include "dynet_lite/except.h"
#include "dynet_lite/exec/batch_state.h"
#include "dynet_lite/exec/executor.h"

namespace dynet_lite {

/// While a pass is recorded as a device graph: its steps are marked
/// (mark_device_step) and its scratch memory is kept until the recording ends,
/// as steps that may run at once must not share it.  The recorded graph uses
/// that memory again at each launch; work queued after a launch, in order on
/// the same device, may reuse it.
class Executor::StepMarks {
 public:
  StepMarks(Executor& e, Arena& scratch) : e_(e), scratch_(scratch), start_(scratch.mark()) { e.mark_steps_ = true; }
  ~StepMarks() {
    e_.mark_steps_ = false;
    scratch_.rewind(start_);
  }
  StepMarks(const StepMarks&) = delete;
  StepMarks& operator=(const StepMarks&) = delete;

 private:
  Executor& e_;
  Arena& scratch_;
  Arena::Mark start_;
};

void Executor::begin_capture() {
  drop_device_graph();
  tape_.clear();
  GraphMemory::CaptureMarks& c = m_.capture;
  c.values_before.clear();
  for (auto& a : m_.device_arenas) c.values_before.push_back(a->values.mark());
  captured_last_ = kNotCaptured;
}

void Executor::end_capture(VariableIndex last) {
  DYNET_LITE_CHECK(evaluated_ == last + 1, std::logic_error,
                   "compiled program: the capture computed " << evaluated_ << " nodes, not " << last + 1);
  GraphMemory::CaptureMarks& c = m_.capture;
  // A device first used by this forward had no arena before it: it starts empty.
  while (c.values_before.size() < m_.device_arenas.size()) c.values_before.push_back(Arena::Mark{});
  c.meta = m_.meta.mark();
  c.values_after.clear();
  c.gathers_after.clear();
  for (auto& a : m_.device_arenas) {
    c.values_after.push_back(a->values.mark());
    c.gathers_after.push_back(a->gathers.mark());
  }
  // A batched capture replays its recorded groups: what scheduling them took
  // (the segment's description, the scheduler's arrays, a few words per node)
  // is not needed again, and a cache may keep hundreds of such programs.
  if (m_.has_batch_groups()) {
    BatchState& st = m_.batch_state();
    st.segment = SegmentNodes{};
    st.scheduling = ScheduleScratch{};
  }
  c.chunks.clear();
  for (auto& a : m_.device_arenas) {
    for (const Arena* arena : {&a->values, &a->gathers})
      for (size_t k = 0; k <= arena->mark().chunk; ++k)
        c.chunks.emplace_back(arena->chunk_base(k), arena->chunk_size(k));
  }
  captured_last_ = last;
  write_forward_tape(last);
}

void Executor::take_back_layout() {
  GraphMemory::CaptureMarks& c = m_.capture;
  bool same = c.values_after.size() == m_.device_arenas.size();
  size_t at = 0;
  for (size_t d = 0; same && d < m_.device_arenas.size(); ++d) {
    DeviceArenas& a = *m_.device_arenas[d];
    const Arena::Mark* ends[2] = {&c.values_after[d], &c.gathers_after[d]};
    Arena* arenas[2] = {&a.values, &a.gathers};
    for (int w = 0; same && w < 2; ++w)
      for (size_t k = 0; same && k <= ends[w]->chunk; ++k, ++at)
        same = at < c.chunks.size() && k < arenas[w]->num_chunks() && arenas[w]->chunk_base(k) == c.chunks[at].first &&
               arenas[w]->chunk_size(k) >= c.chunks[at].second;
  }
  if (!same) {
    invalidate();
    return;
  }
  for (size_t d = 0; d < m_.device_arenas.size(); ++d) {
    m_.device_arenas[d]->values.seek(c.values_after[d]);
    m_.device_arenas[d]->gathers.seek(c.gathers_after[d]);
  }
  forget_batched_values();
}

void Executor::drop_values() {
  if (m_.has_batch_groups()) {  // batched by hand since: its groups go too
    invalidate();
    return;
  }
  evaluated_ = 0;
  backward_done_ = false;
}

void Executor::replay_forward(const RunOptions& options) {
  DYNET_LITE_CHECK(captured(), std::logic_error, "compiled program: replay before capture");
  FlushDenormals flush_denormals;
  const GraphMemory::CaptureMarks& c = m_.capture;
  backward_done_ = false;
  if (m_.has_batch_groups()) {
    rewind_batched_capture();
    bool launched = false;
    if (graph_device_ && !options.check_validity) {
      if (device_graph_) {
        launch_batched_device_graph();
        launched = true;
      } else {
        launched = !graph_failed_ && ++replays_by_kernel_ > replays_by_kernel_first_ &&
                   record_batched_device_graph(options);
      }
    }
    if (!launched) {
      // A run kernel by kernel lays the values out otherwise than the recording
      // (a looked-up row is used in place): the graphs are recorded again later.
      device_graph_.reset();
      drop_backward_device_graph();
      replay_batched(options);
    }
    evaluated_ = captured_last_ + 1;
    return;
  }
  if (graph_device_ && !options.check_validity) {
    if (device_graph_) {
      device_graph_->launch();
      evaluated_ = captured_last_ + 1;
      return;
    }
    if (!graph_failed_ && ++replays_by_kernel_ > replays_by_kernel_first_ && record_device_graph(options)) return;
  }
  // A run kernel by kernel lays the values out otherwise than the recording
  // (a looked-up row is used in place): the graphs are recorded again later.
  device_graph_.reset();
  drop_backward_device_graph();
  for (size_t d = 0; d < m_.device_arenas.size(); ++d) m_.device_arenas[d]->values.rewind(c.values_before[d]);
  evaluated_ = 0;
  if (!tape_.forward.empty() && !options.check_validity)
    replay_forward_tape();
  else
    forward_plain(captured_last_, options);
}

void Executor::use_device_graph(Device* d, std::vector<HostRange> live) {
  DYNET_LITE_CHECK(captured(), std::logic_error, "compiled program: a device graph needs a captured graph");
  drop_device_graph();
  if (!can_record_device_graph(d)) return;
  graph_device_ = d;
  graph_live_ = std::move(live);
  // A batched pass launches a kernel a group.
  const size_t calls = m_.has_batch_groups() ? m_.batch_state().groups.size() : size_t(captured_last_) + 1;
  const size_t computed = m_.padded_value_floats - m_.padded_parameter_floats;  // parameters' values are theirs
  if (computed < kLaunchBoundFloats * calls)
    replays_by_kernel_first_ = 0;
  else
    replays_by_kernel_first_ = m_.has_batch_groups() ? kBatchedReplaysByKernel : 1;
}

void Executor::rewind_batched_capture() {
  const GraphMemory::CaptureMarks& c = m_.capture;
  m_.meta.rewind(c.meta);
  for (size_t d = 0; d < m_.device_arenas.size(); ++d) {
    m_.device_arenas[d]->values.rewind(c.values_after[d]);
    m_.device_arenas[d]->gathers.rewind(c.gathers_after[d]);
  }
  evaluated_ = 0;
}

std::vector<HostRange> Executor::live_with_graph_host_memory() const {
  std::vector<HostRange> live = graph_live_;
  for (size_t k = 0; k < m_.meta.num_chunks(); ++k) live.push_back({m_.meta.chunk_base(k), m_.meta.chunk_size(k)});
  return live;
}

bool Executor::record_batched_device_graph(const RunOptions& options) {
  BatchState& st = m_.batch_state();
  drop_backward_device_graph();  // it read the values where the last pass left them
  // The groups whose host side a launch does again: those whose indices the
  // op combined from the members' (lookups, losses), read from the slots.
  refill_groups_.clear();
  for (size_t gi = 0; gi < st.groups.size(); ++gi) {
    const BatchGroup& g = st.groups[gi];
    if (g.k < 2) continue;
    const OpInfo& info = op_info(g.exec->op);
    if (info.batch != BatchKind::Custom) continue;
    if (!info.batch_refill) {
      graph_failed_ = true;
      return false;
    }
    refill_groups_.push_back(gi);
  }
  // The combined indices lie in the graph's host memory (refilled before each launch).
  const size_t meta_chunks = m_.meta.num_chunks();
  begin_device_graph(graph_device_, live_with_graph_host_memory());
  try {
    replay_batched(options);
  } catch (const std::logic_error&) {  // the user's mistake (an index out of range ...): reported
    end_device_graph(graph_device_);
    rewind_batched_capture();
    throw;
  } catch (const std::runtime_error&) {  // a call the device cannot record: run kernel by kernel
    end_device_graph(graph_device_);
    rewind_batched_capture();
    graph_failed_ = true;
    return false;
  }
  device_graph_ = end_device_graph(graph_device_);
  // Host memory added while recording is not refilled: the next replay records
  // again, in the grown memory.
  const bool grown = m_.meta.num_chunks() != meta_chunks;
  if (!device_graph_ || grown) {
    device_graph_.reset();
    graph_failed_ = !grown;
    rewind_batched_capture();
    return false;
  }
  graph_meta_end_ = m_.meta.mark();
  graph_values_end_.clear();
  graph_gathers_end_.clear();
  for (auto& a : m_.device_arenas) {
    graph_values_end_.push_back(a->values.mark());
    graph_gathers_end_.push_back(a->gathers.mark());
  }
  // Recording ran the host side only: now the pass itself.
  device_graph_->launch();
  return true;
}

bool Executor::batched_backward_device_graph(VariableIndex last, bool full, const RunOptions& options) {
  DeviceArenas& da = m_.arenas(graph_device_);
  if (backward_graph_) {
    if (last != backward_graph_last_ || full != backward_graph_full_) return false;
    // The gradients must lie where the recorded pass put them.
    m_.begin_backward();
    bool same = da.grads.num_chunks() >= backward_graph_chunks_.size();
    for (size_t k = 0; same && k < backward_graph_chunks_.size(); ++k)
      same = da.grads.chunk_base(k) == backward_graph_chunks_[k].first &&
             da.grads.chunk_size(k) == backward_graph_chunks_[k].second;
    if (!same) {
      drop_backward_device_graph();
      return false;
    }
    da.grads.seek(backward_grads_end_);
    // The host side first: it writes the row lists the launch copies in.
    batched_accumulates_host_side();
    m_.meta.seek(backward_meta_end_);
    backward_graph_->launch();
    backward_done_ = true;
    return true;
  }
  if (backward_graph_failed_) return false;
  BatchState& st = m_.batch_state();
  const size_t meta_chunks = m_.meta.num_chunks();
  const Arena::Mark meta_start = m_.meta.mark();
  st.backward.accumulate_calls.clear();
  st.backward.log_accumulates = true;
  begin_device_graph(graph_device_, live_with_graph_host_memory());
  try {
    backward_batched(last, full, options);
  } catch (const std::logic_error&) {
    st.backward.log_accumulates = false;
    end_device_graph(graph_device_);
    throw;
  } catch (const std::runtime_error&) {  // a call the device cannot record
    st.backward.log_accumulates = false;
    end_device_graph(graph_device_);
    backward_graph_failed_ = true;
    m_.meta.rewind(meta_start);
    return false;
  }
  st.backward.log_accumulates = false;
  std::unique_ptr<DeviceGraph> g = end_device_graph(graph_device_);
  // Host memory added while recording is not copied in again: recorded later.
  const bool grown = m_.meta.num_chunks() != meta_chunks;
  if (!g || grown) {
    backward_graph_failed_ = !grown;
    m_.meta.rewind(meta_start);
    return false;
  }
  backward_graph_last_ = last;
  backward_graph_full_ = full;
  backward_graph_chunks_.clear();
  backward_grads_end_ = da.grads.mark();
  for (size_t k = 0; k <= backward_grads_end_.chunk && k < da.grads.num_chunks(); ++k)
    backward_graph_chunks_.emplace_back(da.grads.chunk_base(k), da.grads.chunk_size(k));
  backward_meta_end_ = m_.meta.mark();
  // Recording ran the host side only (the accumulate calls' included): now the pass itself.
  backward_graph_ = std::move(g);
  backward_graph_->launch();
  return true;
}

void Executor::launch_batched_device_graph() {
  BatchState& st = m_.batch_state();
  for (size_t gi : refill_groups_) {
    const BatchGroup& g = st.groups[gi];
    st.member_nodes.resize(g.k);
    for (unsigned j = 0; j < g.k; ++j) st.member_nodes[j] = &m_.node(g.members[j]);
    op_info(g.exec->op).batch_refill(st.member_nodes.data(), g.k, *g.exec);
  }
  // What the recording allocated is the graph's again.
  m_.meta.seek(graph_meta_end_);
  for (size_t d = 0; d < m_.device_arenas.size(); ++d) {
    m_.device_arenas[d]->values.seek(graph_values_end_[d]);
    m_.device_arenas[d]->gathers.seek(graph_gathers_end_[d]);
  }
  device_graph_->launch();
  st.node_values_valid = captured_last_ + 1;
}

bool Executor::record_device_graph(const RunOptions& options) {
  const GraphMemory::CaptureMarks& c = m_.capture;
  for (size_t d = 0; d < m_.device_arenas.size(); ++d) m_.device_arenas[d]->values.rewind(c.values_before[d]);
  evaluated_ = 0;
  drop_backward_device_graph();  // it read the values where the last pass left them
  StepMarks marks(*this, m_.arenas(graph_device_).scratch);
  begin_device_graph(graph_device_, graph_live_);
  try {
    forward_plain(captured_last_, options);
  } catch (const std::logic_error&) {  // the user's mistake (an index out of range ...): reported
    end_device_graph(graph_device_);
    evaluated_ = 0;
    throw;
  } catch (const std::runtime_error&) {  // a call the device cannot record: run kernel by kernel
    end_device_graph(graph_device_);
    evaluated_ = 0;
    graph_failed_ = true;
    return false;
  }
  device_graph_ = end_device_graph(graph_device_);
  if (!device_graph_) {
    evaluated_ = 0;
    graph_failed_ = true;
    return false;
  }
  // Recording ran the kernels' host side only: now the pass itself.
  device_graph_->launch();
  return true;
}

bool Executor::backward_device_graph(VariableIndex last, bool full) {
  if (!tape_.has_backward || tape_.backward_from != last || tape_.full != full || tape_.device != graph_device_)
    return false;
  if (backward_graph_) {
    // The gradients must lie where the recorded pass put them.
    DeviceArenas& da = m_.arenas(graph_device_);
    if (da.grads.allocate_floats(tape_.block_floats) != tape_.block) {
      da.grads.reset();
      drop_backward_device_graph();
      return false;
    }
    backward_graph_->launch();
    // Which parameters and rows received gradient: the accumulate functions'
    // host side, for the trainers' sparse updates.
    HostEffectsOnly host_only(graph_device_);
    for (const PlainTape::Backward& step : tape_.backward)
      if (step.kind == PlainTape::Backward::kAccumulate) step.accumulate(*step.n, gradient_tensor(*step.n));
    return true;
  }
  if (backward_graph_failed_) return false;
  StepMarks marks(*this, m_.arenas(graph_device_).scratch);
  begin_device_graph(graph_device_, graph_live_);
  bool taped;
  try {
    taped = replay_backward_tape(last, full);
  } catch (const std::logic_error&) {
    end_device_graph(graph_device_);
    throw;
  } catch (const std::runtime_error&) {  // a call the device cannot record
    end_device_graph(graph_device_);
    backward_graph_failed_ = true;
    m_.arenas(graph_device_).grads.reset();
    return false;
  }
  std::unique_ptr<DeviceGraph> g = end_device_graph(graph_device_);
  if (!taped) return false;  // the gradients would lie elsewhere: the ordinary pass records the tape again
  if (!g) {
    backward_graph_failed_ = true;
    m_.arenas(graph_device_).grads.reset();
    return false;
  }
  // Recording ran the host side only (the accumulate functions' bookkeeping
  // included): now the pass itself.
  backward_graph_ = std::move(g);
  backward_graph_->launch();
  return true;
}

}  // namespace dynet_lite
