#include "dynet_lite/exec/batch_memory.h"

#include <Eigen/Core>
#include <algorithm>

#include "dynet_lite/backends/batch_copies.h"
#include "dynet_lite/exec/graph_memory.h"
#include "dynet_lite/exec/signature.h"

namespace dynet_lite {

namespace {

/// A group splits into runs only when they average at least this many members;
/// below, one gather and one kernel call cost less than the extra calls.
constexpr unsigned kMinRunLength = 8;

/// Products with a shared weight stay whole: one wide GEMM (the weight packed
/// once) beats a copy of the inputs less than splitting it into thin ones.
bool shares_weight(const GraphMemory& m, const Node& n0) {
  bool shares = false;
  for (unsigned p = 0; p < n0.num_args; ++p) shares |= is_shared_leaf(m.node(n0.args[p]));
  return shares;
}

/// How far a group is from reading its stacked arguments in place, in this member
/// order, as floats copied.  A group that splits into runs (`whole` false)
/// copies about each argument's size times the number of members whose value does
/// not follow the previous member's: a few breaks, a few runs that each read in
/// place.  A group that runs whole gathers an argument entirely at its first
/// break.  0: no copy at all.
size_t layout_cost(const GraphMemory& m, const DenseView& dv, const VariableIndex* members, unsigned k, bool whole) {
  const Node& n0 = m.node(members[0]);
  size_t cost = 0;
  for (unsigned p = 0; p < n0.num_args; ++p) {
    const Node& a0 = m.node(n0.args[p]);
    if (is_shared_leaf(a0)) continue;
    const size_t sz = a0.value.d.size();
    const float* prev = a0.value.v;
    bool same = true;
    size_t breaks = 0;
    for (unsigned j = 1; j < k; ++j) {
      const float* v = dv.arg_value(members[j], p);
      same &= v == a0.value.v;
      breaks += v != prev + sz;
      prev = v;
      if (whole && breaks && !same) break;  // gathered whole: the first break decides
    }
    if (same && a0.value.d.bd == 1) continue;
    cost += whole ? (breaks ? k * sz : 0) : breaks * sz;
  }
  return cost;
}

/// Splits an ordered group into runs whose stacked arguments already lie side by
/// side: member j starts a new run when, for some argument not passed once (the
/// same value of batch 1 for every member), its value does not follow member
/// j-1's directly.  Writes the run lengths to `runs` and returns how many there
/// are.  A group that mixes the outputs of two earlier groups (the forward and
/// backward LSTMs' cells, say) splits into two runs that each read in place.  An
/// argument that some members share and others do not (a language model's first
/// word, whose output layer merging made one node for every sentence) breaks
/// the run at each repeat: those members are gathered, the rest read in place.
unsigned contiguous_runs(const GraphMemory& m, const DenseView& dv, const VariableIndex* members, unsigned k,
                         std::vector<unsigned char>& stacked, uint32_t* runs) {
  const Node& n0 = m.node(members[0]);
  // Members' arguments p have one shape (the signature says so): n0's.
  stacked.resize(n0.num_args);
  for (unsigned p = 0; p < n0.num_args; ++p) {
    const float* v0 = dv.arg_value(members[0], p);
    bool same = m.node(n0.args[p]).value.d.bd == 1;
    for (unsigned j = 1; j < k && same; ++j) same = dv.arg_value(members[j], p) == v0;
    stacked[p] = !same;
  }
  unsigned count = 0, start = 0;
  for (unsigned j = 1; j < k; ++j) {
    bool follows = true;
    for (unsigned p = 0; p < n0.num_args && follows; ++p)
      if (stacked[p])
        follows = dv.arg_value(members[j], p) == dv.arg_value(members[j - 1], p) + m.node(n0.args[p]).value.d.size();
    if (!follows) {
      runs[count++] = j - start;
      start = j;
    }
  }
  runs[count++] = k - start;
  return count;
}

}  // namespace

void order_members_by_layout(const GraphMemory& m, BatchState& st, const DenseView& dv, VariableIndex* members,
                             unsigned k) {
  const Node& n0 = m.node(members[0]);
  const bool whole = shares_weight(m, n0);
  size_t best = layout_cost(m, dv, members, k, whole);
  if (best == 0) return;
  // Sort (address, member) pairs: one look-up per member instead of two per comparison.
  std::vector<std::pair<const float*, VariableIndex>>& keyed = st.forward.keyed_members;
  std::vector<VariableIndex>& sorted_members = st.forward.sorted_members;
  keyed.resize(k);
  sorted_members.resize(k);
  for (unsigned p = 0; p < n0.num_args; ++p) {
    if (is_shared_leaf(m.node(n0.args[p]))) continue;
    bool sorted = true;
    for (unsigned j = 0; j < k; ++j) {
      keyed[j] = {dv.arg_value(members[j], p), members[j]};
      sorted &= j == 0 || keyed[j - 1] < keyed[j];
    }
    if (sorted) continue;
    std::sort(keyed.begin(), keyed.end());
    for (unsigned j = 0; j < k; ++j) sorted_members[j] = keyed[j].second;
    const size_t cost = layout_cost(m, dv, sorted_members.data(), k, whole);
    if (cost < best) {
      best = cost;
      std::copy(sorted_members.begin(), sorted_members.end(), members);
      if (best == 0) return;
    }
  }
}

void split_into_pieces(GraphMemory& m, BatchState& st, const DenseView& dv, VariableIndex* members, unsigned k) {
  ForwardScratch& fw = st.forward;
  fw.pieces.clear();
  fw.run_lengths.resize(k);
  unsigned nruns = 1;
  if (k > 1 && !shares_weight(m, m.node(members[0])))
    nruns = contiguous_runs(m, dv, members, k, fw.stacked, fw.run_lengths.data());
  if (nruns == 1 || k < kMinRunLength * nruns) {
    fw.pieces.push_back({members, k});
    return;
  }
  ++st.stats.split_groups;
  // Pieces in member order: a long run reads in place; a stretch of short runs
  // is one piece that gathers.
  unsigned at = 0, short_start = 0, short_len = 0;
  for (unsigned r = 0; r < nruns; ++r) {
    const unsigned len = fw.run_lengths[r];
    if (len >= kMinRunLength) {
      if (short_len) fw.pieces.push_back({members + short_start, short_len});
      short_len = 0;
      fw.pieces.push_back({members + at, len});
    } else {
      if (!short_len) short_start = at;
      short_len += len;
    }
    at += len;
  }
  if (short_len) fw.pieces.push_back({members + short_start, short_len});
}

void gather_values(BatchState& st, const DenseView& dv, Device* dev, DeviceArenas& da, float* dst, const uint32_t* ids,
                   size_t sz, unsigned k) {
  if (dev->type == DeviceType::CPU) {
    for (unsigned j = 0; j < k; ++j) dev->copy(dst + j * sz, dv.value(ids[j] & ~BatchGroup::kVariableBit), sz);
    return;
  }
  // One kernel, not a copy per member.
  std::vector<const float*>& sources = st.forward.gather_sources;
  sources.resize(k);
  for (unsigned j = 0; j < k; ++j) sources[j] = dv.value(ids[j] & ~BatchGroup::kVariableBit);
  Arena::Mark mark = da.scratch.mark();
  device_gather(dev, dst, sources.data(), sz, k, da.scratch);
  da.scratch.rewind(mark);
}

void scatter_add_gradients(const GraphMemory& m, BatchState& st, Device* dev, DeviceArenas& da, const float* src,
                           const uint32_t* ids, size_t sz, unsigned k) {
  const std::vector<float*>& grad_of = st.node_gradients;
  if (dev->type == DeviceType::CPU) {
    for (unsigned j = 0; j < k; ++j) {
      const VariableIndex aj = ids[j] & ~BatchGroup::kVariableBit;
      if (m.marks[aj] == GradientMark::None) continue;
      Eigen::Map<Eigen::ArrayXf>(grad_of[aj], sz) += Eigen::Map<const Eigen::ArrayXf>(src + j * sz, sz);
      st.stats.bytes_scattered += sz * sizeof(float);
    }
    return;
  }
  // One kernel, not an addition per member.
  std::vector<float*>& targets = st.backward.scatter_targets;
  targets.resize(k);
  for (unsigned j = 0; j < k; ++j) {
    const VariableIndex aj = ids[j] & ~BatchGroup::kVariableBit;
    const bool marked = m.marks[aj] != GradientMark::None;
    targets[j] = marked ? grad_of[aj] : nullptr;
    if (marked) st.stats.bytes_scattered += sz * sizeof(float);
  }
  device_scatter_add(dev, targets.data(), src, sz, k, da.scratch);
}

}  // namespace dynet_lite
