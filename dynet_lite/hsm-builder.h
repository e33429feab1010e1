#pragma once
/// \file hsm-builder.h
/// DyNet's hierarchical softmax: the classes are the leaves of a tree of
/// clusters, and p(w | r) is the product of the choices along w's path,
///   p(w | r) = prod_k p(child_k | cluster_k, r) * p(w | leaf cluster, r),
/// each choice a softmax over the cluster's children (or words), a logistic
/// when there are two, and certain (no parameters) when there is one.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "dynet_lite/cfsm-builder.h"

namespace dynet_lite {

/// One cluster of the tree: its sub-clusters, or (at a leaf) its words, and the
/// scores W h + b of choosing among them (W {n, rep_dim}, b {n}; {1, rep_dim}
/// and {1} for a choice between two, read as the logit of the first).
class Cluster {
 public:
  Cluster() = default;
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  /// The sub-cluster reached by path symbol `sym` (made on first use).  A
  /// cluster holds words or sub-clusters, not both: std::invalid_argument once
  /// it holds words.
  Cluster* add_child(unsigned sym);
  /// Adds a word (a leaf's class); std::invalid_argument once the cluster has
  /// sub-clusters.
  void add_word(unsigned word);
  /// Adds this cluster's parameters and its sub-clusters' to `model`, depth first.
  void initialize(unsigned rep_dim, ParameterCollection& model);
  void initialize(ParameterCollection& model);
  void new_graph(ComputationGraph& cg, bool update = true);
  /// A choice among the children (or words) drawn from p(. | h).
  unsigned sample(Expression h, ComputationGraph& cg) const;
  /// -log p(choice r | h).
  Expression neg_log_softmax(Expression h, unsigned r, ComputationGraph& cg) const;
  /// log p(. | h) over the children (or words), a column of output_size.
  Expression log_distribution(Expression h, ComputationGraph& cg) const;
  /// The position of a path symbol among the children, or of a word among the words.
  unsigned get_index(unsigned word) const;
  unsigned get_word(unsigned index) const;
  unsigned num_children() const { return static_cast<unsigned>(children.size()); }
  unsigned num_words() const { return static_cast<unsigned>(terminals.size()); }
  const Cluster* get_child(unsigned i) const { return children[i].get(); }
  /// The path symbols from the root to this cluster.
  const std::vector<unsigned>& get_path() const { return path; }
  Expression get_weights(ComputationGraph& cg) const;
  Expression get_bias(ComputationGraph& cg) const;
  /// The path, space separated.
  std::string toString() const;

 private:
  Expression predict(Expression h, ComputationGraph& cg) const;

  std::vector<std::unique_ptr<Cluster>> children;
  std::vector<unsigned> path;
  std::vector<unsigned> terminals;
  std::unordered_map<unsigned, unsigned> word2ind;  ///< symbol or word -> position
  Parameter p_weights, p_bias;
  mutable Expression weights, bias;
  mutable unsigned weights_graph = 0, bias_graph = 0;  ///< ids of the graphs they were added to
  mutable bool has_weights = false, has_bias = false;
  unsigned rep_dim = 0;
  unsigned output_size = 0;
  bool update = true;
};

/// Reads the tree from a file with one `path<TAB>word` line per word, the path
/// being cluster symbols separated by single spaces from the root down (further
/// columns, e.g. counts, are ignored); words are added to `word_dict`.  A path
/// that ends inside another path (a cluster with both words and sub-clusters)
/// is an error naming the line.
class HierarchicalSoftmaxBuilder : public SoftmaxBuilder {
 public:
  HierarchicalSoftmaxBuilder(unsigned rep_dim, const std::string& cluster_file, Dict& word_dict,
                             ParameterCollection& model);
  ~HierarchicalSoftmaxBuilder() override;

  /// Adds the tree's parameters to `model` again (DyNet's; the constructor has
  /// already added them to the builder's subcollection).
  void initialize(ParameterCollection& model);
  void new_graph(ComputationGraph& cg, bool update = true) override;
  /// -log p(wordidx | rep): the sum of -log p over the word's path.
  Expression neg_log_softmax(const Expression& rep, unsigned wordidx) override;
  /// One word per batch element of rep.
  Expression neg_log_softmax(const Expression& rep, const std::vector<unsigned>& wordidxs) override;
  /// A word drawn from p(. | rep), cluster by cluster, with the graph's random engine.
  unsigned sample(const Expression& rep) override;
  /// log p(w | rep) for every word id 0..N-1 of the dictionary at construction
  /// (words in no cluster get -infinity).
  Expression full_log_distribution(const Expression& rep) override;
  /// The tree has no single set of logits: this returns the log distribution,
  /// whose softmax is the distribution itself.
  Expression full_logits(const Expression& rep) override;
  ParameterCollection& get_parameter_collection() override { return local_model; }

 private:
  void read_cluster_file(const std::string& cluster_file, Dict& word_dict);
  void check(const Expression& rep, const char* what) const;
  const Cluster* leaf_of(unsigned wordidx, const char* what) const;

  std::unique_ptr<Cluster> root;
  std::vector<Cluster*> widx2path;  ///< word -> its leaf cluster (null: none)
  Dict path_symbols;
  ComputationGraph* pcg = nullptr;
  unsigned graph_id = 0;
  unsigned graph_slot = 0;  // the graph's registry slot: its liveness is known without reading it
  unsigned rep_dim = 0;
  unsigned dict_size = 0;
};

}  // namespace dynet_lite
