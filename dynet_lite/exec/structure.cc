#include "dynet_lite/exec/structure.h"

#include <algorithm>
#include <cstring>

#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/hash.h"
#include "dynet_lite/core/op_info.h"
#include "dynet_lite/core/op_kind.h"
#include "dynet_lite/dynet.h"
#include "dynet_lite/except.h"
#include "dynet_lite/exec/graph_memory.h"

namespace dynet_lite {

namespace {

using op_params::IndexSource;
using op_params::InputParams;
using op_params::LookupParams;
using op_params::PnlsParams;

template <class P>
P params_of(const Node& n) {
  P p;
  std::memcpy(&p, n.params, sizeof(P));
  return p;
}

template <class P>
void write_params(const P& p, unsigned char (&out)[Node::kParamBytes]) {
  std::memset(out, 0, Node::kParamBytes);
  std::memcpy(out, &p, sizeof(P));
}

// Where the parameters P of an op keep their indices: behind a pointer to one
// (`one`) or to a vector (`many`), copied into graph memory (`copied`), or
// one by value (`value`).  Lookups, pickneglogsoftmax and hinge (whose
// parameters derive from pickneglogsoftmax's) name them alike.
template <class P>
struct IndexFields {
  static constexpr auto one = &P::pindex;
  static constexpr auto many = &P::pindices;
  static constexpr auto copied = &P::indices;
  static constexpr auto value = &P::index;
};
// pick, pick_batch_elems, select_rows, select_cols.
template <>
struct IndexFields<IndexSource> {
  static constexpr auto one = &IndexSource::pone;
  static constexpr auto many = &IndexSource::pvec;
  static constexpr auto copied = &IndexSource::values;
  static constexpr auto value = &IndexSource::one;
};

// Whether p holds a vector of indices (not one index).
template <class P>
bool holds_many(const P& p) {
  using F = IndexFields<P>;
  return p.*F::many || p.*F::copied;
}

// p without its indices: what the structure holds.
template <class P>
P without_indices(P p) {
  using F = IndexFields<P>;
  p.*F::one = nullptr;
  p.*F::many = nullptr;
  p.*F::copied = nullptr;
  p.*F::value = 0;
  return p;
}

// The indices p holds now, wherever they are.
template <class P>
void read_indices(const P& p, const char* op, unsigned* out, unsigned count) {
  using F = IndexFields<P>;
  if (p.*F::one) {
    out[0] = *(p.*F::one);
  } else if (p.*F::many) {
    const std::vector<unsigned>& v = *(p.*F::many);
    DYNET_LITE_DIM_CHECK(v.size() == count, op << ": the index vector behind the pointer now holds " << v.size()
                                               << " indices, but the node was built for " << count);
    std::copy(v.begin(), v.end(), out);
  } else if (p.*F::copied) {
    std::copy(p.*F::copied, p.*F::copied + count, out);
  } else {
    out[0] = p.*F::value;
  }
}

// `out` (parameters without data) reading its index or indices from a slot;
// P may be the leading part of out's parameters (hinge's PnlsParams): the rest
// stays as it is.
template <class P>
void point_at_slot(bool one, const unsigned* index, const std::vector<unsigned>* indices,
                   unsigned char (&out)[Node::kParamBytes]) {
  using F = IndexFields<P>;
  P p;
  std::memcpy(&p, out, sizeof(P));
  if (one)
    p.*F::one = index;
  else
    p.*F::many = indices;
  std::memcpy(out, &p, sizeof(P));
}

// The ops whose parameters point at data that no slot takes (graph memory, a
// user's variable): a graph with one runs as it is.
bool blocks_compiling(OpKind op) {
  switch (op) {
    case OpKind::RestrictedLogSoftmax:
    case OpKind::StridedSelect:
    case OpKind::SparsemaxLoss:
    case OpKind::PoissonLoss:
    case OpKind::HingeDim:
    case OpKind::OneHot:
      return true;
    default:
      return false;
  }
}

// The ops whose parameters are an IndexSource.
bool takes_index_source(OpKind op) {
  return op == OpKind::Pick || op == OpKind::PickBatchElems || op == OpKind::SelectRows || op == OpKind::SelectCols;
}

// The slot of node n, its count, and the parameters without the data (what
// the structure holds); or a blocker.
DataSlot classify(const Node& n, unsigned& count, unsigned char (&structural)[Node::kParamBytes],
                  const char*& blocker) {
  std::memcpy(structural, n.params, Node::kParamBytes);
  count = 0;
  switch (n.op) {
    case OpKind::Input: {
      const InputParams p = params_of<InputParams>(n);
      if (p.sparse_ids) {
        blocker = "input (sparse)";
        return DataSlot::None;
      }
      write_params(InputParams{}, structural);
      count = static_cast<unsigned>(n.value.d.size());
      return DataSlot::Values;
    }
    case OpKind::Lookup: {
      const LookupParams p = params_of<LookupParams>(n);
      write_params(without_indices(p), structural);
      count = n.value.d.bd;
      return holds_many(p) ? DataSlot::Indices : DataSlot::Index;
    }
    case OpKind::PickNegLogSoftmax:
    case OpKind::Hinge: {  // hinge's parameters begin with pickneglogsoftmax's
      const PnlsParams p = without_indices(params_of<PnlsParams>(n));
      std::memcpy(structural, &p, sizeof p);
      count = p.count;
      return count == 1 ? DataSlot::Index : DataSlot::Indices;
    }
    default:
      break;
  }
  if (blocks_compiling(n.op)) {
    blocker = op_name(n.op);
    return DataSlot::None;
  }
  if (takes_index_source(n.op)) {
    const IndexSource p = params_of<IndexSource>(n);
    write_params(without_indices(p), structural);
    count = p.count;
    return holds_many(p) ? DataSlot::Indices : DataSlot::Index;
  }
  return DataSlot::None;
}

// Whether classify() has anything to do for an op: it takes data or keeps a
// graph from being compiled.
bool takes_data_or_blocks(OpKind op) {
  return op == OpKind::Input || op == OpKind::Lookup || op == OpKind::PickNegLogSoftmax || op == OpKind::Hinge ||
         takes_index_source(op) || blocks_compiling(op);
}

}  // namespace

void describe_structure(const ComputationGraph& cg, const GraphMemory& mem, GraphStructure& s) {
  s.data.clear();
  s.blocker = nullptr;
  const VariableIndex n = cg.size();
  constexpr size_t kParamWords = Node::kParamBytes / 8;
  constexpr size_t kMostWords = 3 + DYNET_MAX_TENSOR_DIM + kParamWords;  // and the arguments
  if (s.words.size() < 1 + size_t(n) * 8) s.words.resize(1 + size_t(n) * 8);
  size_t at = 0;
  s.words[at++] = static_cast<uint64_t>(n) | static_cast<uint64_t>(static_cast<unsigned>(cg.autobatch()) & 0xff) << 32 |
                  static_cast<uint64_t>(cg.cse()) << 40 | static_cast<uint64_t>(cg.fusion()) << 41 |
                  static_cast<uint64_t>(cg.check_validity()) << 42;
  for (VariableIndex i = 0; i < n; ++i) {
    const Node& node = mem.node(i);
    if (at + kMostWords + node.num_args > s.words.size()) s.words.resize(2 * (at + kMostWords + node.num_args));
    uint64_t* w = s.words.data() + at;
    const Dim& d = node.value.d;
    unsigned count = 0;
    // Three words of header, the dimensions and the arguments two a word, then
    // the parameters without their data, their trailing zero words left out.
    uint64_t* params = w + 3 + (d.nd + 1) / 2 + (node.num_args + 1u) / 2;
    DataSlot slot = DataSlot::None;
    unsigned param_words = kParamWords;
    if (takes_data_or_blocks(node.op)) {
      slot = classify(node, count, *reinterpret_cast<unsigned char(*)[Node::kParamBytes]>(params), s.blocker);
      if (s.blocker) {
        s.words.clear();
        return;
      }
      if (slot != DataSlot::None) s.data.push_back({i, slot, count});
      while (param_words > 0 && params[param_words - 1] == 0) --param_words;
    } else {
      // Read from the node itself, not back from the words just written.
      uint64_t p[kParamWords];
      std::memcpy(p, node.params, Node::kParamBytes);
      while (param_words > 0 && p[param_words - 1] == 0) --param_words;
      for (unsigned k = 0; k < param_words; ++k) params[k] = p[k];
    }
    *w++ =
        static_cast<uint64_t>(node.op) | static_cast<uint64_t>(node.num_args) << 16 | static_cast<uint64_t>(d.bd) << 32;
    *w++ = reinterpret_cast<uintptr_t>(node.value.device);
    *w++ = d.nd | static_cast<uint64_t>(node.variable) << 8 | static_cast<uint64_t>(node.merged) << 9 |
           static_cast<uint64_t>(slot) << 10 | static_cast<uint64_t>(param_words) << 16;
    for (unsigned k = 0; k < d.nd; k += 2) *w++ = d.d[k] | (k + 1 < d.nd ? static_cast<uint64_t>(d.d[k + 1]) << 32 : 0);
    for (unsigned k = 0; k < node.num_args; k += 2)
      *w++ = node.args[k] | (k + 1u < node.num_args ? static_cast<uint64_t>(node.args[k + 1]) << 32 : 0);
    at = static_cast<size_t>(w - s.words.data()) + param_words;
  }
  s.words.resize(at);
  // Four independent chains, two words a multiply: the words are compared
  // anyway on a match, the key need only spread them.
  uint64_t lane[4] = {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL, 0x082efa98ec4e6c89ULL};
  const uint64_t* w = s.words.data();
  const size_t m = s.words.size();
  size_t k = 0;
  for (; k + 8 <= m; k += 8)
    for (unsigned l = 0; l < 4; ++l)
      lane[l] = hash::mix_fast(lane[l], w[k + l] ^ (w[k + 4 + l] << 29 | w[k + 4 + l] >> 35));
  for (; k < m; ++k) lane[0] = hash::mix_fast(lane[0], w[k]);
  uint64_t h = hash::mix(m, hash::finish(lane[0]));
  for (unsigned l = 1; l < 4; ++l) h = hash::mix(h, hash::finish(lane[l]));
  s.key = h;
}

void read_node_data(const ComputationGraph& cg, const GraphStructure::DataNode& d, float* values, unsigned* indices) {
  const Node& n = cg.node(d.node);
  switch (n.op) {
    case OpKind::Input: {
      const InputParams p = params_of<InputParams>(n);
      if (p.pscalar) {
        values[0] = *p.pscalar;
      } else if (p.pdata) {
        DYNET_LITE_DIM_CHECK(p.pdata->size() == d.count, "input: the vector behind the pointer now holds "
                                                             << p.pdata->size()
                                                             << " values, but the input was declared with shape "
                                                             << n.value.d << " (" << d.count << " values)");
        std::copy(p.pdata->begin(), p.pdata->end(), values);
      } else if (p.data) {
        std::copy(p.data, p.data + d.count, values);
      } else {
        values[0] = p.scalar;
      }
      return;
    }
    case OpKind::Lookup:
      read_indices(params_of<LookupParams>(n), "lookup", indices, d.count);
      return;
    case OpKind::PickNegLogSoftmax:
    case OpKind::Hinge:
      read_indices(params_of<PnlsParams>(n), op_name(n.op), indices, d.count);
      return;
    default:
      break;
  }
  DYNET_LITE_CHECK(takes_index_source(n.op), std::logic_error, op_name(n.op) << " takes no data from a slot");
  read_indices(params_of<IndexSource>(n), op_name(n.op), indices, d.count);
}

void slot_parameters(const Node& n, const GraphStructure::DataNode& d, const std::vector<float>* values,
                     const unsigned* index, const std::vector<unsigned>* indices,
                     unsigned char (&out)[Node::kParamBytes]) {
  unsigned count = 0;
  const char* blocker = nullptr;
  classify(n, count, out, blocker);  // the parameters without the data
  const bool one = d.slot == DataSlot::Index;
  switch (n.op) {
    case OpKind::Input: {
      InputParams p;
      p.pdata = values;
      write_params(p, out);
      return;
    }
    case OpKind::Lookup:
      point_at_slot<LookupParams>(one, index, indices, out);
      return;
    case OpKind::PickNegLogSoftmax:
    case OpKind::Hinge:
      point_at_slot<PnlsParams>(one, index, indices, out);
      return;
    default:
      point_at_slot<IndexSource>(one, index, indices, out);
      return;
  }
}

}  // namespace dynet_lite
