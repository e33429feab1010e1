// Softmax output layers: standard and class-factored.
#include "dynet_lite/cfsm-builder.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "dynet_lite/core/graph_registry.h"
#include "dynet_lite/except.h"

namespace dynet_lite {

namespace {

/// Draws an index from the probabilities `p` (which sum to about 1).
unsigned draw(const std::vector<float>& p, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double r = u(rng);
  for (unsigned k = 0; k < p.size(); ++k) {
    r -= p[k];
    if (r < 0.0) return k;
  }
  return static_cast<unsigned>(p.size()) - 1;  // rounding left a sliver
}

void check_rep(const Expression& rep, unsigned rep_dim, ComputationGraph* pcg, unsigned graph_slot, unsigned graph_id,
               const char* builder, const char* what) {
  // The registry, not pcg, tells whether the graph is alive: pcg may dangle.
  DYNET_LITE_ARG_CHECK(pcg != nullptr && graph_is_live(graph_slot, graph_id) && rep.pg == pcg,
                       builder << "::" << what << ": call new_graph() with the graph of the representation first");
  const Dim d = rep.dim();
  DYNET_LITE_DIM_CHECK(d.rows() == rep_dim && d.batch_size() == rep_dim,
                       builder << "::" << what << ": expected a representation of dimension {" << rep_dim
                               << "} (any batch size), got " << d);
}

}  // namespace

SoftmaxBuilder::~SoftmaxBuilder() = default;

// ---------------------------------------------------------------- StandardSoftmaxBuilder

StandardSoftmaxBuilder::StandardSoftmaxBuilder(unsigned rep_dim, unsigned num_classes, ParameterCollection& model,
                                               bool bias)
    : bias(bias) {
  DYNET_LITE_ARG_CHECK(rep_dim > 0 && num_classes > 0, "StandardSoftmaxBuilder: rep_dim (" << rep_dim
                                                           << ") and num_classes (" << num_classes
                                                           << ") must be positive");
  local_model = model.add_subcollection("standard-softmax-builder");
  p_w = local_model.add_parameters({num_classes, rep_dim}, "w");
  if (bias) p_b = local_model.add_parameters({num_classes}, ParameterInitConst(0.f), "b");
}

StandardSoftmaxBuilder::StandardSoftmaxBuilder(Parameter& p_w, Parameter& p_b, bool bias)
    : p_w(p_w), p_b(p_b), bias(bias) {
  const Dim wd = p_w.dim();
  DYNET_LITE_DIM_CHECK(wd.nd == 2, "StandardSoftmaxBuilder: the weight must be a matrix, got " << wd);
  if (bias) {
    const Dim bd = p_b.dim();
    DYNET_LITE_DIM_CHECK(bd.rows() == wd.rows() && bd.size() == wd.rows(),
                         "StandardSoftmaxBuilder: bias " << bd << " does not match weight " << wd);
  }
}

void StandardSoftmaxBuilder::new_graph(ComputationGraph& cg, bool update) {
  pcg = &cg;
  graph_id = cg.get_id();
  graph_slot = cg.registry_slot();
  w = update ? parameter(cg, p_w) : const_parameter(cg, p_w);
  if (bias) b = update ? parameter(cg, p_b) : const_parameter(cg, p_b);
}

void StandardSoftmaxBuilder::check(const Expression& rep, const char* what) const {
  check_rep(rep, p_w.dim().cols(), pcg, graph_slot, graph_id, "StandardSoftmaxBuilder", what);
}

Expression StandardSoftmaxBuilder::full_logits(const Expression& rep) {
  check(rep, "full_logits");
  return bias ? affine_transform({b, w, rep}) : w * rep;
}

Expression StandardSoftmaxBuilder::full_log_distribution(const Expression& rep) {
  return log_softmax(full_logits(rep));
}

Expression StandardSoftmaxBuilder::neg_log_softmax(const Expression& rep, unsigned classidx) {
  DYNET_LITE_INDEX_CHECK(classidx < p_w.dim().rows(), "StandardSoftmaxBuilder::neg_log_softmax: class "
                                                          << classidx << " out of range (" << p_w.dim().rows()
                                                          << " classes)");
  return pickneglogsoftmax(full_logits(rep), classidx);
}

Expression StandardSoftmaxBuilder::neg_log_softmax(const Expression& rep, const std::vector<unsigned>& classidxs) {
  check(rep, "neg_log_softmax");
  DYNET_LITE_DIM_CHECK(classidxs.size() == rep.dim().bd,
                       "StandardSoftmaxBuilder::neg_log_softmax: " << classidxs.size()
                                                                   << " classes for a representation of batch size "
                                                                   << rep.dim().bd << " (" << rep.dim() << ")");
  for (unsigned c : classidxs)
    DYNET_LITE_INDEX_CHECK(c < p_w.dim().rows(), "StandardSoftmaxBuilder::neg_log_softmax: class "
                                                     << c << " out of range (" << p_w.dim().rows() << " classes)");
  return pickneglogsoftmax(full_logits(rep), classidxs);
}

unsigned StandardSoftmaxBuilder::sample(const Expression& rep) {
  check(rep, "sample");
  DYNET_LITE_DIM_CHECK(rep.dim().bd == 1, "StandardSoftmaxBuilder::sample: expects one representation, got a batch "
                                              << rep.dim());
  Expression p = softmax(full_logits(rep));
  return draw(as_vector(pcg->incremental_forward(p)), pcg->rng());
}

// ---------------------------------------------------------------- ClassFactoredSoftmaxBuilder

ClassFactoredSoftmaxBuilder::ClassFactoredSoftmaxBuilder(unsigned rep_dim, const std::string& cluster_file,
                                                         Dict& word_dict, ParameterCollection& model, bool bias)
    : rep_dim(rep_dim), bias(bias) {
  DYNET_LITE_ARG_CHECK(rep_dim > 0, "ClassFactoredSoftmaxBuilder: rep_dim must be positive");
  read_cluster_file(cluster_file, word_dict);
  local_model = model.add_subcollection("class-factored-softmax-builder");
  const unsigned nc = num_clusters();
  p_r2c = local_model.add_parameters({nc, rep_dim}, "r2c");
  if (bias) p_cbias = local_model.add_parameters({nc}, ParameterInitConst(0.f), "cbias");
  p_rc2ws.resize(nc);
  p_rcwbiases.resize(nc);
  for (unsigned c = 0; c < nc; ++c) {
    if (singleton_cluster[c]) continue;
    const unsigned n = static_cast<unsigned>(cidx2words[c].size());
    p_rc2ws[c] = local_model.add_parameters({n, rep_dim}, "rc2w");
    if (bias) p_rcwbiases[c] = local_model.add_parameters({n}, ParameterInitConst(0.f), "rcwbias");
  }
}

void ClassFactoredSoftmaxBuilder::read_cluster_file(const std::string& cluster_file, Dict& word_dict) {
  std::ifstream in(cluster_file);
  DYNET_LITE_CHECK(in.is_open(), io_error, "ClassFactoredSoftmaxBuilder: cannot open cluster file '" << cluster_file
                                                                                                    << "'");
  std::string line;
  unsigned lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank line
    std::istringstream fields(line);
    std::string cluster, word;
    fields >> cluster >> word;
    DYNET_LITE_CHECK(!word.empty(), io_error,
                     "ClassFactoredSoftmaxBuilder: " << cluster_file << ":" << lineno
                                                     << ": expected 'cluster<TAB>word', got '" << line << "'");
    const unsigned c = static_cast<unsigned>(cdict.convert(cluster));
    const unsigned wid = static_cast<unsigned>(word_dict.convert(word));
    if (wid >= widx2cidx.size()) {
      widx2cidx.resize(wid + 1, -1);
      widx2cwidx.resize(wid + 1, 0);
    }
    DYNET_LITE_CHECK(widx2cidx[wid] < 0, io_error,
                     "ClassFactoredSoftmaxBuilder: " << cluster_file << ":" << lineno << ": word '" << word
                                                     << "' is already in cluster '"
                                                     << cdict.convert(widx2cidx[wid]) << "'");
    widx2cidx[wid] = static_cast<int>(c);
    if (c >= cidx2words.size()) cidx2words.resize(c + 1);
    widx2cwidx[wid] = static_cast<unsigned>(cidx2words[c].size());
    cidx2words[c].push_back(wid);
  }
  DYNET_LITE_CHECK(!cidx2words.empty(), io_error,
                   "ClassFactoredSoftmaxBuilder: cluster file '" << cluster_file << "' has no entries");
  if (widx2cidx.size() < word_dict.size()) {
    widx2cidx.resize(word_dict.size(), -1);
    widx2cwidx.resize(word_dict.size(), 0);
  }
  singleton_cluster.resize(cidx2words.size());
  for (size_t c = 0; c < cidx2words.size(); ++c) singleton_cluster[c] = cidx2words[c].size() <= 1;
}

int ClassFactoredSoftmaxBuilder::cluster_of(unsigned wordidx) const {
  return wordidx < widx2cidx.size() ? widx2cidx[wordidx] : -1;
}

void ClassFactoredSoftmaxBuilder::new_graph(ComputationGraph& cg, bool upd) {
  pcg = &cg;
  graph_id = cg.get_id();
  graph_slot = cg.registry_slot();
  update = upd;
  r2c = update ? parameter(cg, p_r2c) : const_parameter(cg, p_r2c);
  if (bias) cbias = update ? parameter(cg, p_cbias) : const_parameter(cg, p_cbias);
  rc2ws.assign(num_clusters(), Expression());
  rc2biases.assign(num_clusters(), Expression());
  rc_in_graph.assign(num_clusters(), 0);
}

void ClassFactoredSoftmaxBuilder::check(const Expression& rep, const char* what) const {
  check_rep(rep, rep_dim, pcg, graph_slot, graph_id, "ClassFactoredSoftmaxBuilder", what);
}

void ClassFactoredSoftmaxBuilder::check_word(unsigned wordidx, const char* what) const {
  DYNET_LITE_INDEX_CHECK(wordidx < widx2cidx.size() && widx2cidx[wordidx] >= 0,
                         "ClassFactoredSoftmaxBuilder::" << what << ": word id " << wordidx
                                                         << " has no cluster in the cluster file");
}

const Expression& ClassFactoredSoftmaxBuilder::cluster_w(unsigned c) {
  if (!rc_in_graph[c]) {
    rc2ws[c] = update ? parameter(*pcg, p_rc2ws[c]) : const_parameter(*pcg, p_rc2ws[c]);
    if (bias) rc2biases[c] = update ? parameter(*pcg, p_rcwbiases[c]) : const_parameter(*pcg, p_rcwbiases[c]);
    rc_in_graph[c] = 1;
  }
  return rc2ws[c];
}

const Expression& ClassFactoredSoftmaxBuilder::cluster_b(unsigned c) {
  cluster_w(c);
  return rc2biases[c];
}

Expression ClassFactoredSoftmaxBuilder::cluster_scores(unsigned c, const Expression& rep) {
  const Expression& wc = cluster_w(c);
  return bias ? affine_transform({cluster_b(c), wc, rep}) : wc * rep;
}

Expression ClassFactoredSoftmaxBuilder::class_logits(const Expression& rep) {
  check(rep, "class_logits");
  return bias ? affine_transform({cbias, r2c, rep}) : r2c * rep;
}

Expression ClassFactoredSoftmaxBuilder::class_log_distribution(const Expression& rep) {
  return log_softmax(class_logits(rep));
}

Expression ClassFactoredSoftmaxBuilder::neg_log_softmax(const Expression& rep, unsigned wordidx) {
  check(rep, "neg_log_softmax");
  check_word(wordidx, "neg_log_softmax");
  const unsigned c = static_cast<unsigned>(widx2cidx[wordidx]);
  Expression cnlp = pickneglogsoftmax(class_logits(rep), c);
  if (singleton_cluster[c]) return cnlp;
  return cnlp + pickneglogsoftmax(cluster_scores(c, rep), widx2cwidx[wordidx]);
}

Expression ClassFactoredSoftmaxBuilder::neg_log_softmax(const Expression& rep,
                                                        const std::vector<unsigned>& wordidxs) {
  check(rep, "neg_log_softmax");
  const unsigned bd = rep.dim().bd;
  DYNET_LITE_DIM_CHECK(wordidxs.size() == bd, "ClassFactoredSoftmaxBuilder::neg_log_softmax: "
                                                  << wordidxs.size() << " words for a representation of batch size "
                                                  << bd << " (" << rep.dim() << ")");
  std::vector<unsigned> clusters(bd);
  for (unsigned k = 0; k < bd; ++k) {
    check_word(wordidxs[k], "neg_log_softmax");
    clusters[k] = static_cast<unsigned>(widx2cidx[wordidxs[k]]);
  }
  Expression cnlp = pickneglogsoftmax(class_logits(rep), clusters);
  // Word part: the batch elements of each cluster go through that cluster's
  // softmax together; the pieces are then put back in batch order.
  std::vector<Expression> pieces;
  std::vector<unsigned> order;  // batch element of each position of the concatenation
  std::vector<unsigned> singles;
  std::vector<char> done(num_clusters(), 0);
  for (unsigned k = 0; k < bd; ++k) {
    const unsigned c = clusters[k];
    if (singleton_cluster[c]) {
      singles.push_back(k);
      continue;
    }
    if (done[c]) continue;
    done[c] = 1;
    std::vector<unsigned> elems, rows;
    for (unsigned j = k; j < bd; ++j)
      if (clusters[j] == c) {
        elems.push_back(j);
        rows.push_back(widx2cwidx[wordidxs[j]]);
      }
    Expression r = elems.size() == bd ? rep : pick_batch_elems(rep, elems);
    pieces.push_back(pickneglogsoftmax(cluster_scores(c, r), rows));
    order.insert(order.end(), elems.begin(), elems.end());
  }
  if (pieces.empty()) return cnlp;  // every word is alone in its cluster
  if (!singles.empty()) {
    pieces.push_back(zeros(*pcg, Dim({1}, static_cast<unsigned>(singles.size()))));
    order.insert(order.end(), singles.begin(), singles.end());
  }
  Expression wnlp = pieces.size() == 1 ? pieces[0] : concatenate_to_batch(pieces);
  bool identity = true;
  for (unsigned k = 0; k < bd; ++k) identity = identity && order[k] == k;
  if (!identity) {
    std::vector<unsigned> position(bd);
    for (unsigned k = 0; k < bd; ++k) position[order[k]] = k;
    wnlp = pick_batch_elems(wnlp, position);
  }
  return cnlp + wnlp;
}

unsigned ClassFactoredSoftmaxBuilder::sample(const Expression& rep) {
  check(rep, "sample");
  DYNET_LITE_DIM_CHECK(rep.dim().bd == 1, "ClassFactoredSoftmaxBuilder::sample: expects one representation, "
                                          "got a batch "
                                              << rep.dim());
  Expression pc = softmax(class_logits(rep));
  const unsigned c = draw(as_vector(pcg->incremental_forward(pc)), pcg->rng());
  if (singleton_cluster[c]) return cidx2words[c][0];
  Expression pw = softmax(cluster_scores(c, rep));
  return cidx2words[c][draw(as_vector(pcg->incremental_forward(pw)), pcg->rng())];
}

Expression ClassFactoredSoftmaxBuilder::full_log_distribution(const Expression& rep) {
  Expression cdist = class_log_distribution(rep);
  std::vector<Expression> pieces;
  std::vector<unsigned> offset(num_clusters());
  unsigned total = 0;
  for (unsigned c = 0; c < num_clusters(); ++c) {
    offset[c] = total;
    Expression lc = pick(cdist, c);
    if (singleton_cluster[c]) {
      pieces.push_back(lc);
      total += 1;
    } else {
      pieces.push_back(log_softmax(cluster_scores(c, rep)) + lc);
      total += static_cast<unsigned>(cidx2words[c].size());
    }
  }
  bool uncovered = false;
  for (int c : widx2cidx) uncovered = uncovered || c < 0;
  if (uncovered) pieces.push_back(constant(*pcg, Dim({1}), -std::numeric_limits<float>::infinity()));
  std::vector<unsigned> rows(widx2cidx.size());
  for (size_t w = 0; w < rows.size(); ++w)
    rows[w] = widx2cidx[w] < 0 ? total : offset[widx2cidx[w]] + widx2cwidx[w];
  return select_rows(concatenate(pieces), rows);
}

Expression ClassFactoredSoftmaxBuilder::full_logits(const Expression& rep) { return full_log_distribution(rep); }

}  // namespace dynet_lite
