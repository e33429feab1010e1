#pragma once
/// \file cfsm-builder.h
/// Output layers that turn a representation into a distribution over classes
/// (DyNet's cfsm-builder.h): a plain softmax, and the class-factored softmax of
/// Goodman (2001), p(w | r) = p(cluster(w) | r) * p(w | cluster(w), r).
#include <string>
#include <vector>

#include "dynet_lite/dict.h"
#include "dynet_lite/dynet.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/model.h"

namespace dynet_lite {

class SoftmaxBuilder {
 public:
  virtual ~SoftmaxBuilder();
  /// Adds the parameters to `cg` (as constants when `update` is false).
  virtual void new_graph(ComputationGraph& cg, bool update = true) = 0;
  /// -log p(classidx | rep); rep a column vector (or a batch: the same class for all).
  virtual Expression neg_log_softmax(const Expression& rep, unsigned classidx) = 0;
  /// Batched: -log p(classidxs[b] | rep_b), one loss per batch element.
  virtual Expression neg_log_softmax(const Expression& rep, const std::vector<unsigned>& classidxs) = 0;
  /// A class drawn from p(. | rep) with the graph's random engine.
  virtual unsigned sample(const Expression& rep) = 0;
  /// log p(. | rep) over all classes.
  virtual Expression full_log_distribution(const Expression& rep) = 0;
  /// Unnormalised scores whose softmax is p(. | rep).
  virtual Expression full_logits(const Expression& rep) = 0;
  virtual ParameterCollection& get_parameter_collection() = 0;

 protected:
  ParameterCollection local_model;
};

/// softmax(W rep + b): W {num_classes, rep_dim}, b {num_classes} (zeros).
class StandardSoftmaxBuilder : public SoftmaxBuilder {
 public:
  StandardSoftmaxBuilder() = default;
  StandardSoftmaxBuilder(unsigned rep_dim, unsigned num_classes, ParameterCollection& model, bool bias = true);
  /// Uses existing parameters (p_b is ignored without bias).
  StandardSoftmaxBuilder(Parameter& p_w, Parameter& p_b, bool bias = true);

  void new_graph(ComputationGraph& cg, bool update = true) override;
  Expression neg_log_softmax(const Expression& rep, unsigned classidx) override;
  Expression neg_log_softmax(const Expression& rep, const std::vector<unsigned>& classidxs) override;
  unsigned sample(const Expression& rep) override;
  Expression full_log_distribution(const Expression& rep) override;
  Expression full_logits(const Expression& rep) override;
  ParameterCollection& get_parameter_collection() override { return local_model; }

 private:
  void check(const Expression& rep, const char* what) const;

  Parameter p_w, p_b;
  Expression w, b;
  ComputationGraph* pcg = nullptr;
  unsigned graph_id = 0;
  unsigned graph_slot = 0;  // the graph's registry slot: its liveness is known without reading it
  bool bias = true;
};

/// Class-factored softmax.  The cluster file has one `cluster<TAB>word` line per
/// word (further columns, e.g. counts, are ignored; blank lines are skipped);
/// the words are added to `word_dict` (which must not be frozen unless it already
/// holds them).  Clusters with one word need no word-level parameters.
class ClassFactoredSoftmaxBuilder : public SoftmaxBuilder {
 public:
  ClassFactoredSoftmaxBuilder(unsigned rep_dim, const std::string& cluster_file, Dict& word_dict,
                              ParameterCollection& model, bool bias = true);

  void new_graph(ComputationGraph& cg, bool update = true) override;
  Expression neg_log_softmax(const Expression& rep, unsigned wordidx) override;
  Expression neg_log_softmax(const Expression& rep, const std::vector<unsigned>& wordidxs) override;
  unsigned sample(const Expression& rep) override;
  /// log p(w | rep) for every word id 0..N-1 of the dictionary at construction
  /// (words without a cluster get -infinity).
  Expression full_log_distribution(const Expression& rep) override;
  /// The factored model has no single set of logits; this returns the log
  /// distribution, whose softmax is the distribution itself.
  Expression full_logits(const Expression& rep) override;
  /// log p(cluster | rep) and the cluster scores.
  Expression class_log_distribution(const Expression& rep);
  Expression class_logits(const Expression& rep);
  ParameterCollection& get_parameter_collection() override { return local_model; }

  unsigned num_clusters() const { return static_cast<unsigned>(cidx2words.size()); }
  /// Cluster of a word id (-1 when the word is in no cluster).
  int cluster_of(unsigned wordidx) const;
  const Dict& cluster_dict() const { return cdict; }

 private:
  void read_cluster_file(const std::string& cluster_file, Dict& word_dict);
  void check(const Expression& rep, const char* what) const;
  void check_word(unsigned wordidx, const char* what) const;
  /// The word-level parameters of cluster c in the current graph (added on first use).
  const Expression& cluster_w(unsigned c);
  const Expression& cluster_b(unsigned c);
  Expression cluster_scores(unsigned c, const Expression& rep);

  unsigned rep_dim = 0;
  bool bias = true;
  bool update = true;
  Dict cdict;
  std::vector<int> widx2cidx;            ///< word -> cluster (-1: none)
  std::vector<unsigned> widx2cwidx;      ///< word -> row within its cluster
  std::vector<std::vector<unsigned>> cidx2words;
  std::vector<char> singleton_cluster;
  Parameter p_r2c, p_cbias;
  std::vector<Parameter> p_rc2ws, p_rcwbiases;  ///< per cluster (unset for singletons)
  ComputationGraph* pcg = nullptr;
  unsigned graph_id = 0;
  unsigned graph_slot = 0;  // the graph's registry slot: its liveness is known without reading it
  Expression r2c, cbias;
  std::vector<Expression> rc2ws, rc2biases;  ///< per cluster, lazily added per graph
  std::vector<char> rc_in_graph;
};

}  // namespace dynet_lite
