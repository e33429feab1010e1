// Hierarchical softmax: a tree of clusters read from a file, each a softmax
// (a logistic for two choices) over its sub-clusters or words.
#include "dynet_lite/hsm-builder.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "dynet_lite/core/graph_registry.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

namespace {
/// An index drawn from probabilities `p` (summing to about 1).
unsigned draw(const std::vector<float>& p, std::mt19937& rng) {
  double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  for (unsigned k = 0; k < p.size(); ++k) {
    r -= p[k];
    if (r < 0.0) return k;
  }
  return static_cast<unsigned>(p.size()) - 1;  // rounding left a sliver
}
}  // namespace

// ---------------------------------------------------------------- Cluster

Cluster* Cluster::add_child(unsigned sym) {
  // word2ind holds the children's symbols or the words: never both.
  DYNET_LITE_ARG_CHECK(terminals.empty(), "Cluster::add_child: cluster '" << toString() << "' holds "
                                                                          << terminals.size()
                                                                          << " words; it cannot have sub-clusters too");
  auto it = word2ind.find(sym);
  if (it != word2ind.end()) return children[it->second].get();
  auto c = std::make_unique<Cluster>();
  c->rep_dim = rep_dim;
  c->path = path;
  c->path.push_back(sym);
  word2ind.emplace(sym, static_cast<unsigned>(children.size()));
  children.push_back(std::move(c));
  return children.back().get();
}

void Cluster::add_word(unsigned word) {
  DYNET_LITE_ARG_CHECK(children.empty(), "Cluster::add_word: cluster '" << toString() << "' has " << children.size()
                                                                        << " sub-clusters; it cannot hold words too");
  word2ind[word] = static_cast<unsigned>(terminals.size());
  terminals.push_back(word);
}

void Cluster::initialize(unsigned rd, ParameterCollection& model) {
  rep_dim = rd;
  initialize(model);
}

void Cluster::initialize(ParameterCollection& model) {
  output_size = children.empty() ? num_words() : num_children();
  // DyNet's order (weights, bias, then the sub-clusters depth first), so that a
  // seed gives DyNet's initial values.
  if (output_size == 2) {
    p_weights = model.add_parameters({1, rep_dim});
    p_bias = model.add_parameters({1}, ParameterInitConst(0.f));
  } else if (output_size > 2) {
    p_weights = model.add_parameters({output_size, rep_dim});
    p_bias = model.add_parameters({output_size}, ParameterInitConst(0.f));
  }
  for (auto& child : children) {
    child->rep_dim = rep_dim;
    child->initialize(model);
  }
}

void Cluster::new_graph(ComputationGraph& cg, bool upd) {
  update = upd;
  has_weights = has_bias = false;
  for (auto& child : children) child->new_graph(cg, upd);
}

unsigned Cluster::get_index(unsigned word) const {
  auto it = word2ind.find(word);
  DYNET_LITE_INDEX_CHECK(it != word2ind.end(), "Cluster::get_index: " << word << " is not in cluster '"
                                                                        << toString() << "'");
  return it->second;
}

unsigned Cluster::get_word(unsigned index) const {
  DYNET_LITE_INDEX_CHECK(index < terminals.size(), "Cluster::get_word: index " << index << " out of range ("
                                                                               << terminals.size() << " words)");
  return terminals[index];
}

Expression Cluster::get_weights(ComputationGraph& cg) const {
  if (!has_weights || weights_graph != cg.get_id() || weights.pg != &cg) {
    weights = update ? parameter(cg, p_weights) : const_parameter(cg, p_weights);
    weights_graph = cg.get_id();
    has_weights = true;
  }
  return weights;
}

Expression Cluster::get_bias(ComputationGraph& cg) const {
  if (!has_bias || bias_graph != cg.get_id() || bias.pg != &cg) {
    bias = update ? parameter(cg, p_bias) : const_parameter(cg, p_bias);
    bias_graph = cg.get_id();
    has_bias = true;
  }
  return bias;
}

Expression Cluster::predict(Expression h, ComputationGraph& cg) const {
  return affine_transform({get_bias(cg), get_weights(cg), h});
}

// With two choices the score s is the logit of the first:
// -log p(0) = -log sigmoid(s), -log p(1) = -log sigmoid(-s).
Expression Cluster::neg_log_softmax(Expression h, unsigned r, ComputationGraph& cg) const {
  DYNET_LITE_INDEX_CHECK(r < output_size, "Cluster::neg_log_softmax: choice " << r << " out of range (cluster '"
                                                                              << toString() << "' has "
                                                                              << output_size << ")");
  if (output_size == 1) return zeros(cg, Dim({1}, h.dim().bd));
  if (output_size == 2) return -log_sigmoid(r == 0 ? predict(h, cg) : -predict(h, cg));
  return pickneglogsoftmax(predict(h, cg), r);
}

Expression Cluster::log_distribution(Expression h, ComputationGraph& cg) const {
  if (output_size == 1) return zeros(cg, Dim({1}, h.dim().bd));
  if (output_size == 2) {
    Expression s = predict(h, cg);
    return concatenate({log_sigmoid(s), log_sigmoid(-s)});
  }
  return log_softmax(predict(h, cg));
}

unsigned Cluster::sample(Expression h, ComputationGraph& cg) const {
  if (output_size <= 1) return 0;
  return draw(as_vector(cg.incremental_forward(exp(log_distribution(h, cg)))), cg.rng());
}

std::string Cluster::toString() const {
  std::ostringstream ss;
  for (size_t i = 0; i < path.size(); ++i) ss << (i ? " " : "") << path[i];
  return ss.str();
}

// ---------------------------------------------------------------- HierarchicalSoftmaxBuilder

HierarchicalSoftmaxBuilder::HierarchicalSoftmaxBuilder(unsigned rd, const std::string& cluster_file,
                                                       Dict& word_dict, ParameterCollection& model)
    : rep_dim(rd) {
  DYNET_LITE_ARG_CHECK(rep_dim > 0, "HierarchicalSoftmaxBuilder: rep_dim must be positive");
  local_model = model.add_subcollection("hsm-builder");
  read_cluster_file(cluster_file, word_dict);
  dict_size = static_cast<unsigned>(word_dict.size());
  root->initialize(rep_dim, local_model);
}

HierarchicalSoftmaxBuilder::~HierarchicalSoftmaxBuilder() = default;

void HierarchicalSoftmaxBuilder::initialize(ParameterCollection& model) { root->initialize(model); }

void HierarchicalSoftmaxBuilder::read_cluster_file(const std::string& cluster_file, Dict& word_dict) {
  std::ifstream in(cluster_file);
  DYNET_LITE_CHECK(in.is_open(), io_error,
                   "HierarchicalSoftmaxBuilder: cannot open cluster file '" << cluster_file << "'");
  root = std::make_unique<Cluster>();
  std::string line;
  unsigned lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank line
    const size_t tab = line.find('\t');
    std::istringstream path_fields(line.substr(0, tab)), rest(tab == std::string::npos ? "" : line.substr(tab));
    std::string symbol, word;
    rest >> word;
    DYNET_LITE_CHECK(!word.empty(), io_error,
                     "HierarchicalSoftmaxBuilder: " << cluster_file << ":" << lineno
                                                    << ": expected 'path<TAB>word', got '" << line << "'");
    Cluster* node = root.get();
    while (path_fields >> symbol) {
      DYNET_LITE_CHECK(node->num_words() == 0, io_error,
                       "HierarchicalSoftmaxBuilder: " << cluster_file << ":" << lineno << ": the path of '" << word
                                                      << "' goes on below cluster '" << node->toString()
                                                      << "', which holds words: a cluster has words or sub-clusters, "
                                                         "not both");
      node = node->add_child(static_cast<unsigned>(path_symbols.convert(symbol)));
    }
    DYNET_LITE_CHECK(node != root.get() && node->num_children() == 0, io_error,
                     "HierarchicalSoftmaxBuilder: " << cluster_file << ":" << lineno << ": the path of '" << word
                                                    << "' must end at a cluster without sub-clusters");
    const unsigned wid = static_cast<unsigned>(word_dict.convert(word));
    if (wid >= widx2path.size()) widx2path.resize(wid + 1, nullptr);
    DYNET_LITE_CHECK(widx2path[wid] == nullptr, io_error,
                     "HierarchicalSoftmaxBuilder: " << cluster_file << ":" << lineno << ": word '" << word
                                                    << "' is already in cluster '" << widx2path[wid]->toString()
                                                    << "'");
    node->add_word(wid);
    widx2path[wid] = node;
  }
  DYNET_LITE_CHECK(root->num_children() > 0, io_error,
                   "HierarchicalSoftmaxBuilder: cluster file '" << cluster_file << "' has no entries");
}

void HierarchicalSoftmaxBuilder::new_graph(ComputationGraph& cg, bool update) {
  pcg = &cg;
  graph_id = cg.get_id();
  graph_slot = cg.registry_slot();
  root->new_graph(cg, update);
}

void HierarchicalSoftmaxBuilder::check(const Expression& rep, const char* what) const {
  // The registry, not pcg, tells whether the graph is alive: pcg may dangle.
  DYNET_LITE_ARG_CHECK(pcg != nullptr && graph_is_live(graph_slot, graph_id) && rep.pg == pcg,
                       "HierarchicalSoftmaxBuilder::" << what
                                                      << ": call new_graph() with the graph of the representation first");
  const Dim d = rep.dim();
  DYNET_LITE_DIM_CHECK(d.rows() == rep_dim && d.batch_size() == rep_dim,
                       "HierarchicalSoftmaxBuilder::" << what << ": expected a representation of dimension {"
                                                      << rep_dim << "} (any batch size), got " << d);
}

const Cluster* HierarchicalSoftmaxBuilder::leaf_of(unsigned wordidx, const char* what) const {
  DYNET_LITE_INDEX_CHECK(wordidx < widx2path.size() && widx2path[wordidx] != nullptr,
                         "HierarchicalSoftmaxBuilder::" << what << ": word " << wordidx << " is in no cluster");
  return widx2path[wordidx];
}

Expression HierarchicalSoftmaxBuilder::neg_log_softmax(const Expression& rep, unsigned wordidx) {
  check(rep, "neg_log_softmax");
  const Cluster* leaf = leaf_of(wordidx, "neg_log_softmax");
  std::vector<Expression> terms;
  const Cluster* node = root.get();
  for (unsigned sym : leaf->get_path()) {
    const unsigned r = node->get_index(sym);
    terms.push_back(node->neg_log_softmax(rep, r, *pcg));
    node = node->get_child(r);
  }
  terms.push_back(node->neg_log_softmax(rep, node->get_index(wordidx), *pcg));
  return sum(terms);
}

Expression HierarchicalSoftmaxBuilder::neg_log_softmax(const Expression& rep, const std::vector<unsigned>& wordidxs) {
  check(rep, "neg_log_softmax");
  const unsigned bd = rep.dim().bd;
  DYNET_LITE_DIM_CHECK(wordidxs.size() == bd, "HierarchicalSoftmaxBuilder::neg_log_softmax: "
                                                  << wordidxs.size() << " words for a representation of batch size "
                                                  << bd << " (" << rep.dim() << ")");
  // Each element has its own path: one loss per element, stacked as a batch.
  std::vector<Expression> losses;
  for (unsigned b = 0; b < bd; ++b)
    losses.push_back(neg_log_softmax(bd == 1 ? rep : pick_batch_elem(rep, b), wordidxs[b]));
  return bd == 1 ? losses[0] : concatenate_to_batch(losses);
}

unsigned HierarchicalSoftmaxBuilder::sample(const Expression& rep) {
  check(rep, "sample");
  DYNET_LITE_DIM_CHECK(rep.dim().bd == 1, "HierarchicalSoftmaxBuilder::sample: expects one representation, got a "
                                          "batch "
                                              << rep.dim());
  const Cluster* node = root.get();
  while (node->num_children() > 0) node = node->get_child(node->sample(rep, *pcg));
  return node->get_word(node->sample(rep, *pcg));
}

Expression HierarchicalSoftmaxBuilder::full_log_distribution(const Expression& rep) {
  check(rep, "full_log_distribution");
  // The log-probabilities of every leaf's words, leaf after leaf, then one
  // -infinity for the words of no cluster; select_rows puts them in word order.
  std::vector<Expression> pieces;
  std::vector<unsigned> row(widx2path.size(), 0);
  unsigned total = 0;
  struct Visit {
    const Cluster* node;
    Expression logp;  // log p(node | rep); empty at the root
  };
  std::vector<Visit> stack = {{root.get(), Expression()}};
  while (!stack.empty()) {
    Visit v = stack.back();
    stack.pop_back();
    Expression dist = v.node->log_distribution(rep, *pcg);
    if (v.logp.pg) dist = dist + v.logp;
    if (v.node->num_children() == 0) {
      pieces.push_back(dist);
      for (unsigned k = 0; k < v.node->num_words(); ++k) row[v.node->get_word(k)] = total + k;
      total += v.node->num_words();
      continue;
    }
    for (unsigned k = v.node->num_children(); k-- > 0;) stack.push_back({v.node->get_child(k), pick(dist, k)});
  }
  std::vector<unsigned> rows(std::max<size_t>(dict_size, widx2path.size()), total);
  for (size_t w = 0; w < widx2path.size(); ++w)
    if (widx2path[w]) rows[w] = row[w];
  bool uncovered = false;
  for (unsigned r : rows) uncovered = uncovered || r == total;
  if (uncovered) pieces.push_back(constant(*pcg, Dim({1}, rep.dim().bd), -std::numeric_limits<float>::infinity()));
  return select_rows(concatenate(pieces), rows);
}

Expression HierarchicalSoftmaxBuilder::full_logits(const Expression& rep) { return full_log_distribution(rep); }

}  // namespace dynet_lite
