#pragma once
// The structure of a graph, by which ProgramCache::forward(e) finds the
// compiled program of an ordinary graph (dynet_lite/compile.h): every node's
// operation, shape, device, arguments, flags and inline parameters, and the
// graph's execution settings; not the data that varies between graphs of one
// structure, which a program takes from its slots: the values of inputs and the
// indices of lookups, picks, row and column selections and the index losses
// (pickneglogsoftmax, hinge).
//
// The ops whose parameters point at memory other than a parameter's are all
// handled here: those above become slots, and the others (sparse inputs,
// restricted_log_softmax, strided_select, sparsemax_loss, poisson_loss,
// hinge_dim, one_hot) keep a graph from being compiled.  A new op whose
// parameters point at memory must be added to structure.cc.
#include <cstdint>
#include <vector>

#include "dynet_lite/core/node.h"

namespace dynet_lite {

class ComputationGraph;
struct GraphMemory;

/// How a node takes the data that varies between graphs of one structure.
enum class DataSlot : unsigned char {
  None,     ///< it takes none
  Values,   ///< an input's values
  Index,    ///< one index
  Indices,  ///< `count` indices
};

struct GraphStructure {
  std::vector<uint64_t> words;  ///< the exact description, compared on a match
  uint64_t key = 0;             ///< a hash of `words`
  struct DataNode {
    VariableIndex node;
    DataSlot slot;
    unsigned count;  ///< values or indices
  };
  std::vector<DataNode> data;  ///< the nodes that take data, in order
  /// Null where the graph can be compiled; else the name of an op that keeps it from it.
  const char* blocker = nullptr;
};

/// Describes every node of `cg` (whose memory is `mem`) and its execution
/// settings into `s`, reusing its storage.
void describe_structure(const ComputationGraph& cg, const GraphMemory& mem, GraphStructure& s);

/// The data node `d` of `cg` holds now, into `values` (DataSlot::Values, d.count
/// floats) or `indices` (d.count indices).  Throws, naming the op, where a
/// user's vector behind a pointer no longer has the size the node was built with.
void read_node_data(const ComputationGraph& cg, const GraphStructure::DataNode& d, float* values, unsigned* indices);

/// Node n's parameters with its data read from a slot instead: `values`,
/// `index` or `indices` (whichever d.slot names), into `out`.
void slot_parameters(const Node& n, const GraphStructure::DataNode& d, const std::vector<float>* values,
                     const unsigned* index, const std::vector<unsigned>* indices,
                     unsigned char (&out)[Node::kParamBytes]);

}  // namespace dynet_lite
