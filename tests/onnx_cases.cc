// Writes the ONNX export cases that tests/onnx_check.py runs in ONNX Runtime:
//   onnx_cases DIR
// For every case, DIR/NAME.onnx is exported once from a graph built on a sample,
// and DIR/NAME.json holds runs on other inputs (other batch sizes, sequence
// lengths): the inputs and dynet_lite's outputs, to be matched to 1e-5 relative.
// One case per exportable op (a small random model around it) and per builder
// (forward, reverse, bidirectional, stacked; the vanilla LSTM both as ONNX LSTM
// nodes and as a Scan), so the exported file is shown to
// serve every size, not only the sample's.
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dynet_lite/expr.h"
#include "dynet_lite/fast-lstm.h"
#include "dynet_lite/gru.h"
#include "dynet_lite/lstm.h"
#include "dynet_lite/onnx.h"
#include "dynet_lite/rnn.h"
#include "dynet_lite/treelstm.h"

using namespace dynet_lite;

namespace {

std::mt19937 rng(7);

std::vector<float> randn(size_t n, float scale = 1.f) {
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// ---------------------------------------------------------------- JSON

std::string json_floats(const std::vector<float>& v) {
  std::ostringstream os;
  os.precision(9);
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os.str() + "]";
}
std::string json_ints(const std::vector<long>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os.str() + "]";
}
std::string tensor(const char* dtype, const std::vector<long>& shape, const std::string& data) {
  return std::string("{\"dtype\":\"") + dtype + "\",\"shape\":" + json_ints(shape) + ",\"data\":" + data + "}";
}

// One run: named inputs and expected outputs.
struct Run {
  std::vector<std::pair<std::string, std::string>> inputs, outputs;
  std::string json() const {
    auto obj = [](const std::vector<std::pair<std::string, std::string>>& kv) {
      std::string s = "{";
      for (size_t i = 0; i < kv.size(); ++i) s += (i ? "," : "") + ("\"" + kv[i].first + "\":") + kv[i].second;
      return s + "}";
    };
    return "{\"inputs\":" + obj(inputs) + ",\"outputs\":" + obj(outputs) + "}";
  }
};

void write_case(const std::string& dir, const std::string& name, const std::vector<Run>& runs) {
  std::ofstream out(dir + "/" + name + ".json");
  out << "[";
  for (size_t i = 0; i < runs.size(); ++i) out << (i ? ",\n" : "") << runs[i].json();
  out << "]\n";
  if (!out) throw std::runtime_error("cannot write " + dir + "/" + name + ".json");
}

// Boundary shape of an expression's value: [batch, ..., d1, d0], a vector [batch, n].
std::vector<long> boundary_shape(const Dim& d, long lead = -1) {
  std::vector<long> s;
  if (lead >= 0) s.push_back(lead);
  s.push_back(d.bd);
  for (unsigned k = d.nd; k-- > 0;) s.push_back(d.d[k]);
  return s;
}

// ---------------------------------------------------------------- op cases

// An op case: y = f(x, model) for a declared input x of shape `xd` (batch free).
struct OpCase {
  std::string name;
  Dim xd;
  std::function<Expression(ComputationGraph&, Expression)> f;
};

void op_case(const std::string& dir, const OpCase& c) {
  auto build = [&](ComputationGraph& cg, unsigned batch, std::vector<float>& xv) {
    Dim d = c.xd;
    d.bd = batch;
    xv = randn(d.size());
    Expression x = input(cg, d, xv);
    return std::make_pair(x, c.f(cg, x));
  };
  {
    ComputationGraph cg;
    std::vector<float> xv;
    auto xy = build(cg, 2, xv);
    OnnxExporter ex(cg);
    ex.add_input(xy.first, "x");
    ex.add_output(xy.second, "y");
    ex.save(dir + "/" + c.name + ".onnx");
  }
  std::vector<Run> runs;
  for (unsigned batch : {1u, 3u, 5u}) {
    ComputationGraph cg;
    std::vector<float> xv;
    auto xy = build(cg, batch, xv);
    Run r;
    r.inputs.push_back({"x", tensor("float32", boundary_shape(xy.first.dim()), json_floats(xv))});
    r.outputs.push_back(
        {"y", tensor("float32", boundary_shape(xy.second.dim()), json_floats(as_vector(cg.forward(xy.second))))});
    runs.push_back(r);
  }
  write_case(dir, c.name, runs);
}

std::vector<OpCase> op_cases(ParameterCollection& pc) {
  Parameter W = pc.add_parameters({5, 4}, 0.f, "W");
  Parameter W2 = pc.add_parameters({4, 5}, 0.f, "W2");
  Parameter b = pc.add_parameters({5}, 0.f, "b");
  Parameter v4 = pc.add_parameters({4}, 0.f, "v4");
  Parameter M = pc.add_parameters({4, 3}, 0.f, "M");
  Parameter g = pc.add_parameters({4}, 0.f, "g");
  LookupParameter E = pc.add_lookup_parameters(10, {4}, "E");
  Parameter Wx8 = pc.add_parameters({8, 4}, 0.f, "Wx8"), Wh8 = pc.add_parameters({8, 2}, 0.f, "Wh8");
  Parameter b8 = pc.add_parameters({8}, 0.f, "b8");
  Parameter W10 = pc.add_parameters({10, 4}, 0.f, "W10"), U10 = pc.add_parameters({10, 2}, 0.f, "U10");
  Parameter b10 = pc.add_parameters({10}, 0.f, "b10");
  const Dim v{4}, m{4, 3};
  using G = ComputationGraph;
  using X = Expression;
  auto P = [](G& cg, Parameter p) { return parameter(cg, p); };
  std::vector<OpCase> cs = {
      {"add", v, [=](G& cg, X x) { return x + P(cg, v4); }},
      {"subtract", v, [=](G& cg, X x) { return P(cg, v4) - x; }},
      {"cmult", v, [=](G& cg, X x) { return cmult(x, P(cg, v4)); }},
      {"cdiv", v, [=](G& cg, X x) { return cdiv(x, exp(P(cg, v4)) + 1.f); }},
      {"scalars", v, [=](G&, X x) { return 2.f / (3.f - (x * 0.5f + 1.5f)) - x / 4.f; }},
      {"negate", v, [=](G&, X x) { return -x; }},
      {"pow", v, [=](G& cg, X x) { return pow(exp(x), P(cg, v4)); }},
      {"max_min", v, [=](G& cg, X x) { return max(x, P(cg, v4)) + min(x, -P(cg, v4)); }},
      {"sum", v,
       [=](G& cg, X x) {
         return sum({x, P(cg, v4), x * 2.f}) + average({x, P(cg, v4)});
       }},
      {"unary", v,
       [=](G&, X x) {
         return tanh(x) + logistic(x) + rectify(x) + elu(x, 0.7f) + selu(x) + silu(x, 1.3f) + softsign(x) + exp(x) +
                log(exp(x) + 1.f) + sqrt(square(x) + 1.f) + cube(x) + abs(x) + erf(x) + log_sigmoid(x);
       }},
      {"trig", v,
       [=](G&, X x) {
         X s = tanh(x) * 0.9f;
         return sin(x) + cos(x) + tan(s) + asin(s) + acos(s) + atan(x) + sinh(x) + cosh(x) + asinh(x) +
                acosh(square(x) + 1.5f) + atanh(s) + round(x * 3.f) + ceil(x * 3.f) + floor(x * 3.f);
       }},
      {"matmul", m, [=](G& cg, X x) { return P(cg, W) * x; }},
      {"affine_transform", v,
       [=](G& cg, X x) {
         return affine_transform({P(cg, b), P(cg, W), x, P(cg, W), tanh(x)});
       }},
      {"transpose", m, [=](G& cg, X x) { return transpose(x) * P(cg, W2); }},
      {"softmax", m, [=](G&, X x) { return softmax(x) + softmax(x, 1); }},
      {"log_softmax", v, [=](G&, X x) { return log_softmax(x); }},
      {"logsumexp", v,
       [=](G& cg, X x) {
         return logsumexp({x, P(cg, v4), x * 2.f});
       }},
      {"pickneglogsoftmax", v, [=](G&, X x) { return pickneglogsoftmax(x, 2u); }},
      {"distances", v,
       [=](G& cg, X x) {
         return squared_distance(x, P(cg, v4)) + l1_distance(x, P(cg, v4)) + squared_norm(x) + l2_norm(x) +
                dot_product(x, P(cg, v4));
       }},
      {"reduce", m,
       [=](G&, X x) {
         return sum_elems(x) + mean_elems(x) + sum_dim(x, {0}) * 0.f + pick(sum_dim(x, {1}), 0u) +
                pick(mean_dim(x, {0}), 1u, 0) + pick(max_dim(x, 0), 2u) + pick(min_dim(x, 1), 3u);
       }},
      {"batch_ops", v,
       [=](G&, X x) {
         X both = concatenate_to_batch({x, x * 2.f});  // batch 2B
         return pick_batch_elems(both, {1, 0}) + sum_batches(both);
       }},
      {"reduce_batches", v, [=](G&, X x) { return sum_batches(x) + mean_batches(x); }},
      {"shapes", m,
       [=](G&, X x) {
         X r = reshape(x, {3, 4});
         X a = concatenate({pick_range(r, 1, 3), select_rows(r, {2, 0})});
         X b = concatenate_cols({select_cols(transpose(x), {1, 3}), pick(r, 2u, 1)});
         return concatenate({reshape(a, {16}), reshape(b, {9})});
       }},
      {"concatenate", v,
       [=](G& cg, X x) {
         return concatenate({x, P(cg, v4), x});
       }},
      {"pick", m,
       [=](G&, X x) {
         return concatenate({pick(x, 1u, 1) + pick(x, 0u, 1), pick(x, 2u, 0)});
       }},
      {"gradient_ops", v, [=](G&, X x) { return nobackprop(x) + flip_gradient(x) + scale_gradient(x, 0.3f); }},
      {"layer_norm", v, [=](G& cg, X x) { return layer_norm(x, P(cg, g), P(cg, v4)); }},
      {"lookup", v, [=](G& cg, X x) { return x + lookup(cg, E, 3u) + const_lookup(cg, E, 7u); }},
      {"constant", v,
       [=](G& cg, X x) {
         return x + constant(cg, {4}, 0.25f) + input(cg, {4}, std::vector<float>{1, 2, 3, 4});
       }},
      {"lstm_ops", v,
       [=](G& cg, X x) {
         X h = tanh(pick_range(x, 0, 2)), c0 = pick_range(x, 2, 4);
         X gates = vanilla_lstm_gates(x, h, P(cg, Wx8), P(cg, Wh8), P(cg, b8));
         X c = vanilla_lstm_c(c0, gates);
         return concatenate({vanilla_lstm_h(c, gates), c});
       }},
      {"treelstm_ops", v,
       [=](G& cg, X x) {
         X h1 = tanh(pick_range(x, 0, 2)), c1 = pick_range(x, 2, 4), h2 = logistic(c1);
         X gates = treelstm_gates_affine({P(cg, b10), P(cg, W10), x, P(cg, U10), h1}, 2);
         X gates2 = treelstm_gates(affine_transform({P(cg, b10), P(cg, U10), h2}), 2);
         X c = treelstm_c(gates, {c1, h2}, 2), cl = treelstm_c(gates2, {}, 2);
         return concatenate({treelstm_h(c, gates), treelstm_h(cl, gates2)});
       }},
  };
  return cs;
}

// ---------------------------------------------------------------- builder cases

// A tagger-like network over a sequence of word ids: the builders' outputs per
// position feed a softmax layer.
struct SeqModel {
  std::string name;
  std::function<std::vector<Expression>(ComputationGraph&, const std::vector<Expression>&, OnnxExporter*)> net;
  bool plain = false;  ///< one output, not a sequence (e.g. from the last state)
  bool native = true;  ///< fused vanilla LSTMs as ONNX LSTM nodes (OnnxExporter::set_native_lstm)
};

void seq_case(const std::string& dir, ParameterCollection& pc, const SeqModel& sm, unsigned vocab) {
  LookupParameter E = pc.add_lookup_parameters(vocab, {5}, sm.name + "_E");
  auto ids_for = [&](unsigned len, unsigned batch) {
    std::uniform_int_distribution<unsigned> d(0, vocab - 1);
    std::vector<std::vector<unsigned>> ids(len, std::vector<unsigned>(batch));
    for (auto& row : ids)
      for (auto& i : row) i = d(rng);
    return ids;
  };
  auto build = [&](ComputationGraph& cg, const std::vector<std::vector<unsigned>>& ids, OnnxExporter* ex,
                   std::vector<Expression>& xs) {
    xs.clear();
    for (const auto& row : ids) xs.push_back(lookup(cg, E, row));
    return sm.net(cg, xs, ex);
  };
  {
    ComputationGraph cg;
    std::vector<Expression> xs;
    OnnxExporter ex(cg);
    ex.set_native_lstm(sm.native);
    std::vector<Expression> ys = build(cg, ids_for(3, 2), &ex, xs);
    ex.add_sequence_input(xs, "words");
    if (sm.plain) {
      ex.add_output(ys[0], "y");
    } else {
      ex.add_sequence_output(ys, "y");
    }
    ex.save(dir + "/" + sm.name + ".onnx");
  }
  std::vector<Run> runs;
  for (unsigned len : {1u, 2u, 4u, 7u}) {
    for (unsigned batch : {1u, 3u}) {
      ComputationGraph cg;
      std::vector<Expression> xs;
      auto ids = ids_for(len, batch);
      std::vector<Expression> ys = build(cg, ids, nullptr, xs);
      std::vector<long> flat;
      for (const auto& row : ids)
        for (unsigned i : row) flat.push_back(i);
      std::vector<float> out;
      for (const Expression& y : ys) {
        std::vector<float> v = as_vector(cg.forward(y));
        out.insert(out.end(), v.begin(), v.end());
      }
      Run r;
      r.inputs.push_back(
          {"words", tensor("int64", {static_cast<long>(len), static_cast<long>(batch)}, json_ints(flat))});
      const std::vector<long> shape = sm.plain ? boundary_shape(ys[0].dim()) : boundary_shape(ys[0].dim(), len);
      r.outputs.push_back({"y", tensor("float32", shape, json_floats(out))});
      runs.push_back(r);
    }
  }
  write_case(dir, sm.name, runs);
}

// Per position: log_softmax(V tanh(h) + c).
std::vector<Expression> head(ComputationGraph& cg, Parameter V, Parameter c, const std::vector<Expression>& hs) {
  std::vector<Expression> ys;
  for (const Expression& h : hs)
    ys.push_back(log_softmax(affine_transform({parameter(cg, c), parameter(cg, V), tanh(h)})));
  return ys;
}

template <class B>
SeqModel one_way(const std::string& name, ParameterCollection& pc, B* builder, unsigned hidden, bool reverse) {
  Parameter V = pc.add_parameters({3, hidden}, 0.f, name + "_V");
  Parameter c = pc.add_parameters({3}, 0.f, name + "_c");
  return {name, [=](ComputationGraph& cg, const std::vector<Expression>& xs, OnnxExporter* ex) {
            builder->new_graph(cg);
            builder->start_new_sequence();
            std::vector<Expression> hs(xs.size());
            if (reverse) {
              for (size_t i = xs.size(); i-- > 0;) hs[i] = builder->add_input(xs[i]);
            } else {
              for (size_t i = 0; i < xs.size(); ++i) hs[i] = builder->add_input(xs[i]);
            }
            if (ex) ex->add_recurrence(*builder);
            return head(cg, V, c, hs);
          }};
}

// The same network with its fused vanilla LSTMs exported as a Scan.
SeqModel as_scan(SeqModel m) {
  m.native = false;
  return m;
}

// A sentence encoding from the last states of a forward and a backward LSTM
// (as a character BiLSTM encodes a word): one output, not a sequence.
SeqModel last_states(ParameterCollection& pc, VanillaLSTMBuilder* f, VanillaLSTMBuilder* b) {
  Parameter V = pc.add_parameters({3, 4}, 0.f, "last_V");
  SeqModel m{"lstm_last_states", [=](ComputationGraph& cg, const std::vector<Expression>& xs, OnnxExporter* ex) {
               for (auto* r : {f, b}) {
                 r->new_graph(cg);
                 r->start_new_sequence();
               }
               for (size_t i = 0; i < xs.size(); ++i) f->add_input(xs[i]);
               for (size_t i = xs.size(); i-- > 0;) b->add_input(xs[i]);
               if (ex) {
                 ex->add_recurrence(*f);
                 ex->add_recurrence(*b);
               }
               return std::vector<Expression>{softmax(parameter(cg, V) * concatenate({f->back(), b->back()}))};
             }};
  m.plain = true;
  return m;
}

// Forward and backward LSTMs, concatenated, then a second (stacked) LSTM.
SeqModel bilstm(ParameterCollection& pc, VanillaLSTMBuilder* f, VanillaLSTMBuilder* b, VanillaLSTMBuilder* top) {
  Parameter V = pc.add_parameters({3, 4}, 0.f, "bilstm_V");
  Parameter c = pc.add_parameters({3}, 0.f, "bilstm_c");
  return {"bilstm_stacked", [=](ComputationGraph& cg, const std::vector<Expression>& xs, OnnxExporter* ex) {
            const size_t n = xs.size();
            std::vector<Expression> fh(n), bh(n), th(n);
            for (auto* r : {f, b, top}) {
              r->new_graph(cg);
              r->start_new_sequence();
            }
            for (size_t i = 0; i < n; ++i) fh[i] = f->add_input(xs[i]);
            for (size_t i = n; i-- > 0;) bh[i] = b->add_input(xs[i]);
            for (size_t i = 0; i < n; ++i) th[i] = top->add_input(concatenate({fh[i], bh[i]}));
            if (ex) {
              ex->add_recurrence(*f);
              ex->add_recurrence(*b);
              ex->add_recurrence(*top);
            }
            return head(cg, V, c, th);
          }};
}

// ---------------------------------------------------------------- tree case

// A random binary tree over `leaves` words, nodes in post-order (root last).
struct Tree {
  std::vector<int> word;                   // -1 for inner nodes
  std::vector<std::vector<int>> children;  // two for inner nodes
};
int grow(Tree& t, unsigned leaves, unsigned vocab) {
  if (leaves == 1) {
    t.word.push_back(static_cast<int>(std::uniform_int_distribution<unsigned>(0, vocab - 1)(rng)));
    t.children.push_back({});
    return static_cast<int>(t.word.size()) - 1;
  }
  const unsigned left = std::uniform_int_distribution<unsigned>(1, leaves - 1)(rng);
  const int a = grow(t, left, vocab), b = grow(t, leaves - left, vocab);
  t.word.push_back(-1);
  t.children.push_back({a, b});
  return static_cast<int>(t.word.size()) - 1;
}

// Root scores of an N = 2 Tree-LSTM (two layers) over word embeddings.
void tree_case(const std::string& dir, ParameterCollection& pc) {
  const unsigned vocab = 13;
  LookupParameter E = pc.add_lookup_parameters(vocab, {5}, "tree_E");
  NaryTreeLSTMBuilder builder(2, 2, 5, 6, pc);
  Parameter V = pc.add_parameters({3, 6}, 0.f, "tree_V"), c = pc.add_parameters({3}, 0.f, "tree_c");
  auto build = [&](ComputationGraph& cg, const Tree& t) {
    builder.new_graph(cg);
    builder.start_new_sequence();
    builder.set_num_elements(static_cast<int>(t.word.size()));
    Expression h;
    for (size_t k = 0; k < t.word.size(); ++k) {
      Expression x = t.word[k] < 0 ? Expression() : lookup(cg, E, static_cast<unsigned>(t.word[k]));
      h = builder.add_input(static_cast<int>(k), t.children[k], x);
    }
    return log_softmax(affine_transform({parameter(cg, c), parameter(cg, V), h}));
  };
  {
    Tree sample;
    grow(sample, 4, vocab);
    ComputationGraph cg;
    Expression y = build(cg, sample);
    OnnxExporter ex(cg);
    ex.add_tree(builder, "tree");
    ex.add_output(y, "y");
    ex.save(dir + "/treelstm.onnx");
  }
  std::vector<Run> runs;
  for (unsigned leaves : {1u, 2u, 3u, 5u, 8u, 8u}) {
    Tree t;
    grow(t, leaves, vocab);
    ComputationGraph cg;
    Expression y = build(cg, t);
    std::vector<long> words, children;
    for (size_t k = 0; k < t.word.size(); ++k) {
      words.push_back(t.word[k]);
      for (unsigned l = 0; l < 2; ++l) children.push_back(t.children[k].empty() ? -1 : t.children[k][l]);
    }
    const long n = static_cast<long>(t.word.size());
    Run r;
    r.inputs.push_back({"tree_words", tensor("int64", {n}, json_ints(words))});
    r.inputs.push_back({"tree_children", tensor("int64", {n, 2}, json_ints(children))});
    r.outputs.push_back({"y", tensor("float32", boundary_shape(y.dim()), json_floats(as_vector(cg.forward(y))))});
    runs.push_back(r);
  }
  write_case(dir, "treelstm", runs);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: onnx_cases DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  try {
    ParameterCollection pc;
    for (const OpCase& c : op_cases(pc)) op_case(dir, c);
    SimpleRNNBuilder rnn(2, 5, 6, pc);
    VanillaLSTMBuilder lstm(2, 5, 6, pc), lstm_rev(1, 5, 6, pc), lstm_ln(1, 5, 6, pc, true);
    CoupledLSTMBuilder coupled(1, 5, 6, pc);
    CompactVanillaLSTMBuilder compact(1, 5, 6, pc);
    FastLSTMBuilder fast(2, 5, 6, pc);
    GRUBuilder gru(2, 5, 6, pc);
    VanillaLSTMBuilder f(1, 5, 2, pc), b(1, 5, 2, pc), top(1, 4, 4, pc), lf(1, 5, 2, pc), lb(1, 5, 2, pc);
    const std::vector<SeqModel> models = {
        one_way("rnn", pc, &rnn, 6, false),
        one_way("lstm", pc, &lstm, 6, false),
        one_way("lstm_reverse", pc, &lstm_rev, 6, true),
        as_scan(one_way("lstm_scan", pc, &lstm, 6, false)),
        as_scan(one_way("lstm_reverse_scan", pc, &lstm_rev, 6, true)),
        one_way("lstm_layer_norm", pc, &lstm_ln, 6, false),
        one_way("coupled_lstm", pc, &coupled, 6, false),
        one_way("compact_lstm", pc, &compact, 6, false),
        one_way("fast_lstm", pc, &fast, 6, true),
        one_way("gru", pc, &gru, 6, true),
        bilstm(pc, &f, &b, &top),
        last_states(pc, &lf, &lb),
    };
    for (const SeqModel& m : models) seq_case(dir, pc, m, 11);
    tree_case(dir, pc);
  } catch (const std::exception& e) {
    std::cerr << "onnx_cases: " << e.what() << "\n";
    return 1;
  }
  std::cout << "onnx_cases: wrote the cases to " << dir << "\n";
  return 0;
}
