// OnnxExporter: reads the nodes of a graph built on a sample and writes them as
// one ONNX model.
//
// Three ways a node is exported:
//  - plain (main graph): its arguments' values, then its op's ONNX form;
//  - as a sequence template: a node of a sequence output is written once, from
//    position 0, with a leading [seq] axis; the sequence inputs and the outputs
//    of recurrences are its boundary, nodes that read no position are plain;
//  - in a Scan body: one step of a recurrence (step 1 of the sample), its
//    previous state and its input being the body's inputs.  A recurrence that
//    is a stack of fused vanilla LSTM layers becomes ONNX LSTM nodes instead.
// Before a node is written as a template (or a step as a body), every position
// (step) is checked to be built the same way from its own position's inputs,
// by a structural hash that names the boundary nodes by role, so a model that
// would run with other numbers than the graph is refused, never written.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <unordered_map>

#include "dynet_lite/backends/lstm_gates.h"
#include "dynet_lite/backends/op_params.h"
#include "dynet_lite/core/node.h"
#include "dynet_lite/export/onnx_module.h"
#include "dynet_lite/export/onnx_ops.h"
#include "dynet_lite/export/onnx_writer.h"
#include "dynet_lite/model.h"
#include "dynet_lite/onnx.h"
#include "dynet_lite/ops/op_table.h"
#include "dynet_lite/treelstm.h"

namespace dynet_lite {

using namespace onnx_export;

namespace {

constexpr int64_t kOpset = 17;
constexpr int64_t kIrVersion = 8;  // ONNX 1.12

std::string node_text(const ComputationGraph& cg, VariableIndex i) {
  std::ostringstream os;
  os << op_name(cg.node(i).op) << " (node " << i << ", " << cg.node(i).value.d << ")";
  return os.str();
}

[[noreturn]] void fail(const std::string& msg) { throw onnx_error("ONNX export: " + msg); }

// A structural signature and the sequence position it reads (-1: none).
struct Sig {
  uint64_t hash = 0;
  int pos = -1;
};

}  // namespace

struct OnnxExporter::Impl {
  // One recurrence: the builder's steps as the sample built them.
  struct Recurrence {
    std::string name;
    std::vector<VariableIndex> x;               // input of step k
    std::vector<std::vector<VariableIndex>> s;  // state after step k
    std::vector<VariableIndex> out;             // output of step k
    bool reverse = false;                       // step k reads position T-1-k
    std::string seq_out;                        // ONNX name of the outputs [seq, ...]
    std::vector<std::string> final_state;       // ONNX names of the last state
  };
  struct SeqInput {
    std::string name;
    std::vector<VariableIndex> steps;
  };
  struct Output {
    std::string name;
    std::vector<VariableIndex> steps;  // one for a plain output
    bool sequence = false;
  };

  ComputationGraph& cg;
  unsigned graph_id;
  std::vector<std::weak_ptr<const void>> params;  // every parameter the graph reads
  std::map<VariableIndex, std::string> inputs;    // plain graph inputs
  std::vector<SeqInput> seq_inputs;
  std::map<VariableIndex, std::pair<int, int>> seq_step;  // node -> (sequence input, position)
  std::vector<Recurrence> recs;
  std::map<VariableIndex, std::pair<int, int>> rec_out;    // node -> (recurrence, step)
  std::map<VariableIndex, std::pair<int, int>> rec_final;  // last state node -> (recurrence, index)
  std::vector<Output> outputs;
  int seq_len = -1;
  // One tree: the nodes of a Tree-LSTM as the sample built them, by id.
  struct TreeDecl {
    std::string name;
    unsigned N = 0;
    std::vector<VariableIndex> x;               // input of node id (kNoInput: none)
    std::vector<std::vector<int>> children;     // of node id
    std::vector<std::vector<VariableIndex>> s;  // state of node id: cells, then outputs
    int leaf = -1, inner = -1;                  // the nodes traced as the Loop body
    const LookupParameterStorage* table = nullptr;
    std::vector<std::string> root_state;  // ONNX names, once written
  };
  static constexpr VariableIndex kNoInput = ~0u;
  std::vector<TreeDecl> trees;
  std::map<VariableIndex, int> tree_input;                 // a node's input -> tree
  std::map<VariableIndex, std::pair<int, int>> tree_root;  // root state node -> (tree, index)

  // Per export.
  std::vector<char> depends;   // node reads a sequence position or a tree node
  std::vector<char> plain_ok;  // ... only through last states and roots (or not at all)
  std::unordered_map<VariableIndex, Sig> sigs;
  std::unordered_map<VariableIndex, uint64_t> plain_hashes;
  std::unordered_map<VariableIndex, std::string> plain, templ;
  std::map<VariableIndex, std::string> seq_input_value;  // by first step
  ModelState* model = nullptr;
  GraphIr* main = nullptr;
  bool use_native_lstm = true;

  explicit Impl(ComputationGraph& g) : cg(g), graph_id(g.get_id()) {
    for (VariableIndex i = 0; i < cg.size(); ++i) {
      const Node& n = cg.node(i);
      if (n.op == OpKind::Parameter) {
        const auto& p = n.p<op_params::ParamParams>();
        if (p.p) params.push_back(p.p->weak_from_this());
        if (p.lp) params.push_back(p.lp->weak_from_this());
      } else if (n.op == OpKind::Lookup) {
        params.push_back(n.p<op_params::LookupParams>().lp->weak_from_this());
      }
    }
  }

  void check_expr(const Expression& e, const char* what) {
    if (e.pg != &cg) fail(std::string(what) + ": the expression belongs to another graph");
    if (e.is_stale() || cg.get_id() != graph_id)
      fail(std::string(what) + ": the expression is stale (its graph was cleared or reverted)");
  }
  void check_leaf(const Expression& e, const char* what) {
    check_expr(e, what);
    const OpKind op = cg.node(e.i).op;
    if (op != OpKind::Input && op != OpKind::Lookup)
      fail(std::string(what) + ": " + node_text(cg, e.i) + " is not an input() or lookup() leaf");
    if (inputs.count(e.i) || seq_step.count(e.i))
      fail(std::string(what) + ": " + node_text(cg, e.i) + " is declared twice");
  }
  void check_name(const std::string& name, const char* what) {
    if (name.empty()) fail(std::string(what) + ": empty name");
    for (const auto& kv : inputs)
      if (kv.second == name) fail(std::string(what) + ": the name '" + name + "' is taken");
    for (const auto& s : seq_inputs)
      if (s.name == name) fail(std::string(what) + ": the name '" + name + "' is taken");
    for (const auto& o : outputs)
      if (o.name == name) fail(std::string(what) + ": the name '" + name + "' is taken");
  }

  // ---------------------------------------------------------------- structure checks

  // Which nodes read a sequence position (a sequence input, through any path).
  void mark_dependents() {
    depends.assign(cg.size(), 0);
    for (VariableIndex i = 0; i < cg.size(); ++i) {
      if (seq_step.count(i) || tree_input.count(i)) {
        depends[i] = 1;
        continue;
      }
      const Node& n = cg.node(i);
      for (unsigned k = 0; k < n.num_args; ++k)
        if (depends[n.args[k]]) depends[i] = 1;
    }
    plain_ok.assign(cg.size(), 0);
    for (VariableIndex i = 0; i < cg.size(); ++i) {
      const Node& n = cg.node(i);
      bool ok = !depends[i] || rec_final.count(i) || tree_root.count(i) || n.num_args > 0;
      for (unsigned k = 0; k < n.num_args && ok && depends[i] && !rec_final.count(i) && !tree_root.count(i); ++k)
        ok = plain_ok[n.args[k]] != 0;
      plain_ok[i] = ok;
    }
  }

  static uint64_t mix(uint64_t h, uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

  static uint64_t params_hash(const Node& n) {
    uint64_t h = static_cast<uint64_t>(n.op);
    for (unsigned k = 0; k < Node::kParamBytes; ++k) h = mix(h, n.params[k]);
    for (unsigned k = 0; k < DYNET_MAX_TENSOR_DIM; ++k) h = mix(h, n.value.d.d[k]);
    return mix(mix(h, n.value.d.nd), n.value.d.bd);
  }

  // A node that reads no position, by what it computes: its op, parameters and
  // arguments (equal hashes: equal values, e.g. the same parameter added to the
  // graph once per position).
  uint64_t plain_hash(VariableIndex i) {
    auto it = plain_hashes.find(i);
    if (it != plain_hashes.end()) return it->second;
    const Node& n = cg.node(i);
    uint64_t h = params_hash(n);
    for (unsigned k = 0; k < n.num_args; ++k) h = mix(h, plain_hash(n.args[k]));
    return plain_hashes[i] = h;
  }

  // A recurrence's output at step k stands at the position its input reads.
  int position_of_rec_step(int r, int k) { return sig(recs[r].x[k]).pos; }

  // The template signature of node i: boundaries named by role, plain nodes by
  // identity, the rest by op, parameters and arguments; and the position read.
  Sig sig(VariableIndex i) {
    auto it = sigs.find(i);
    if (it != sigs.end()) return it->second;
    Sig s;
    if (!depends[i]) {
      s.hash = mix(1, plain_hash(i));
    } else if (seq_step.count(i)) {
      s.hash = mix(2, seq_step.at(i).first);
      s.pos = seq_step.at(i).second;
    } else if (rec_out.count(i)) {
      const auto& ro = rec_out.at(i);
      s.hash = mix(3, ro.first);
      s.pos = position_of_rec_step(ro.first, ro.second);
    } else {
      const Node& n = cg.node(i);
      s.hash = params_hash(n);
      for (unsigned k = 0; k < n.num_args; ++k) {
        const Sig a = sig(n.args[k]);
        s.hash = mix(s.hash, a.hash);
        if (a.pos >= 0 && s.pos >= 0 && a.pos != s.pos)
          fail(node_text(cg, i) + " reads positions " + std::to_string(s.pos) + " and " + std::to_string(a.pos) +
               " of the sequence; only what the recurrences carry may cross positions");
        if (a.pos >= 0) s.pos = a.pos;
      }
    }
    return sigs[i] = s;
  }

  // Checks that steps[t] is built like steps[0] and reads position t.
  void check_positions(const std::vector<VariableIndex>& steps, const std::string& what) {
    if (static_cast<int>(steps.size()) != seq_len)
      fail(what + " has " + std::to_string(steps.size()) + " positions, the sequence inputs " +
           std::to_string(seq_len));
    const Sig first = sig(steps[0]);
    for (size_t t = 0; t < steps.size(); ++t) {
      const Sig s = sig(steps[t]);
      if (s.hash != first.hash)
        fail(what + ": position " + std::to_string(t) + " (" + node_text(cg, steps[t]) +
             ") is not computed the way position 0 is");
      if (s.pos != static_cast<int>(t))
        fail(what + ": position " + std::to_string(t) + " (" + node_text(cg, steps[t]) + ") reads position " +
             std::to_string(s.pos));
    }
  }

  // ---------------------------------------------------------------- writing nodes

  std::string emit(GraphWriter& w, VariableIndex i, const std::vector<std::string>& in, unsigned lead) {
    std::vector<bool> arg_lead;
    const Node& node = cg.node(i);
    for (unsigned k = 0; k < node.num_args; ++k) arg_lead.push_back(lead > 0 && depends[node.args[k]]);
    const Node& n = cg.node(i);
    const OnnxForm* f = onnx_form(n.op);
    if (!f)
      fail(node_text(cg, i) + ": " + op_name(n.op) +
           " has no ONNX form (docs/ops.md lists the ops that export; disable dropout before exporting)");
    std::vector<Dim> dims;
    for (unsigned k = 0; k < n.num_args; ++k) dims.push_back(cg.node(n.args[k]).value.d);
    const Tensor* value = n.num_args == 0 ? &cg.get_value(i) : nullptr;
    EmitArgs a{w, n, in, dims, lead, arg_lead, value};
    return f->emit(a);
  }

  std::vector<std::string> args_of(VariableIndex i, const std::function<std::string(VariableIndex)>& get) {
    const Node& n = cg.node(i);
    std::vector<std::string> in;
    for (unsigned k = 0; k < n.num_args; ++k) in.push_back(get(n.args[k]));
    return in;
  }

  // A node in the main graph.
  std::string plain_value(VariableIndex i) {
    auto it = plain.find(i);
    if (it != plain.end()) return it->second;
    GraphWriter w(main, model);
    std::string v;
    if (inputs.count(i)) {
      v = declared_input(w, i);
    } else if (rec_final.count(i)) {
      const auto& rf = rec_final.at(i);
      scan(rf.first);
      v = recs[rf.first].final_state[rf.second];
    } else if (tree_root.count(i)) {
      const auto& tr = tree_root.at(i);
      loop(tr.first);
      v = trees[tr.first].root_state[tr.second];
    } else if (!plain_ok[i]) {
      fail(node_text(cg, i) +
           " reads a position of a sequence input; export it with add_sequence_output, or "
           "through a recurrence's last state");
    } else {
      v = emit(w, i, args_of(i, [this](VariableIndex a) { return plain_value(a); }), 0);
    }
    return plain[i] = v;
  }

  // A node of a sequence template, with the [seq] axis.
  std::string template_value(VariableIndex i) {
    if (!depends[i]) return plain_value(i);
    auto it = templ.find(i);
    if (it != templ.end()) return it->second;
    GraphWriter w(main, model);
    std::string v;
    if (seq_step.count(i)) {
      v = sequence_input(seq_step.at(i).first);
    } else if (rec_out.count(i)) {
      scan(rec_out.at(i).first);
      v = recs[rec_out.at(i).first].seq_out;
    } else {
      v = emit(w, i, args_of(i, [this](VariableIndex a) { return template_value(a); }), 1);
    }
    return templ[i] = v;
  }

  // ---------------------------------------------------------------- inputs and outputs

  // [..., n] at the boundary for a vector, the canonical [..., 1, n] inside.
  static std::vector<int64_t> boundary_dims(const Dim& d) {
    std::vector<int64_t> v = canon_dims(d);
    if (d.nd <= 1) v.erase(v.begin());
    return v;
  }

  std::string declared_input(GraphWriter& w, VariableIndex i) {
    const Node& n = cg.node(i);
    const std::string& name = inputs.at(i);
    ValueInfoIr* vi = main->add_input();
    vi->set_name(name);
    if (n.op == OpKind::Lookup) {
      set_tensor_type(vi, kInt64, {"batch"}, {});
      return w.op("Gather", {model->lookup_table(n.p<op_params::LookupParams>().lp), name});
    }
    set_tensor_type(vi, kFloat, {"batch"}, boundary_dims(n.value.d));
    return n.value.d.nd <= 1 ? w.unsqueeze(name, {-2}) : name;
  }

  std::string sequence_input(int s) {
    const SeqInput& in = seq_inputs[s];
    auto it = seq_input_value.find(in.steps[0]);
    if (it != seq_input_value.end()) return it->second;
    GraphWriter w(main, model);
    const Node& n = cg.node(in.steps[0]);
    ValueInfoIr* vi = main->add_input();
    vi->set_name(in.name);
    std::string v;
    if (n.op == OpKind::Lookup) {
      set_tensor_type(vi, kInt64, {"seq", "batch"}, {});
      v = w.op("Gather", {model->lookup_table(n.p<op_params::LookupParams>().lp), in.name});
    } else {
      set_tensor_type(vi, kFloat, {"seq", "batch"}, boundary_dims(n.value.d));
      v = n.value.d.nd <= 1 ? w.unsqueeze(in.name, {-2}) : in.name;
    }
    return seq_input_value[in.steps[0]] = v;
  }

  void write_output(const Output& o) {
    GraphWriter w(main, model);
    const Dim& d = cg.node(o.steps[0]).value.d;
    std::string v = o.sequence ? template_value(o.steps[0]) : plain_value(o.steps[0]);
    if (d.nd <= 1) v = w.squeeze(v, {-2});
    NodeIr* id = main->add_node();
    id->set_op_type("Identity");
    id->add_input(v);
    id->add_output(o.name);
    ValueInfoIr* vi = main->add_output();
    vi->set_name(o.name);
    std::vector<std::string> sym{"batch"};
    if (o.sequence) sym.insert(sym.begin(), "seq");
    set_tensor_type(vi, kFloat, sym, boundary_dims(d));
  }

  // ---------------------------------------------------------------- recurrences

  // A node's signature inside a traced step: the boundary nodes (the step's
  // inputs) named by their role, nodes outside the steps by what they compute.
  using Boundary = std::unordered_map<VariableIndex, uint64_t>;
  uint64_t bounded_sig(VariableIndex i, const Boundary& b, std::unordered_map<VariableIndex, uint64_t>& memo,
                       const std::string& what) {
    auto it = memo.find(i);
    if (it != memo.end()) return it->second;
    uint64_t h;
    if (b.count(i)) {
      h = mix(11, b.at(i));
    } else if (!depends[i]) {
      h = mix(13, plain_hash(i));
    } else {
      const Node& n = cg.node(i);
      if (n.num_args == 0) fail(what + " reads " + node_text(cg, i) + " other than through its inputs");
      h = params_hash(n);
      for (unsigned a = 0; a < n.num_args; ++a) h = mix(h, bounded_sig(n.args[a], b, memo, what));
    }
    return memo[i] = h;
  }

  // The signature of computing `outs` from the boundary `b`.
  uint64_t outputs_sig(const std::vector<VariableIndex>& outs, const Boundary& b, const std::string& what) {
    std::unordered_map<VariableIndex, uint64_t> memo;
    uint64_t h = 0;
    for (VariableIndex o : outs) h = mix(h, bounded_sig(o, b, memo, what));
    return h;
  }

  uint64_t step_sig(const Recurrence& r, int k) {
    Boundary b{{r.x[k], 0}};
    for (size_t j = 0; j < r.s[k - 1].size(); ++j) b[r.s[k - 1][j]] = 1 + j;
    std::vector<VariableIndex> outs = r.s[k];
    outs.push_back(r.out[k]);
    return outputs_sig(outs, b, r.name + ": step " + std::to_string(k));
  }

  // Writes the nodes computing `outs` into `w` (a body), the boundary nodes
  // being already named in `names`; nodes outside the steps come from the main
  // graph (outer scope).  Returns the outputs' names.
  std::vector<std::string> write_bounded(GraphWriter& w, const std::vector<VariableIndex>& outs,
                                         std::unordered_map<VariableIndex, std::string>& names) {
    std::function<std::string(VariableIndex)> value = [&](VariableIndex i) -> std::string {
      auto it = names.find(i);
      if (it != names.end()) return it->second;
      if (!depends[i]) return plain_value(i);
      return names[i] = emit(w, i, args_of(i, value), 0);
    };
    std::vector<std::string> r;
    for (VariableIndex o : outs) r.push_back(value(o));
    return r;
  }

  void check_recurrence(int ri) {
    Recurrence& r = recs[ri];
    const int T = static_cast<int>(r.x.size());
    std::vector<Sig> xs;
    for (int k = 0; k < T; ++k) xs.push_back(sig(r.x[k]));
    r.reverse = T > 1 && xs[0].pos == T - 1;
    for (int k = 0; k < T; ++k) {
      const int want = r.reverse ? T - 1 - k : k;
      if (xs[k].pos != want)
        fail(r.name + ": step " + std::to_string(k) + " reads position " + std::to_string(xs[k].pos) +
             " of the sequence; a recurrence must read the positions in order or in reverse");
      if (xs[k].hash != xs[0].hash)
        fail(r.name + ": the input of step " + std::to_string(k) + " (" + node_text(cg, r.x[k]) +
             ") is not computed the way step 0's is");
    }
    const uint64_t body = step_sig(r, 1);
    for (int k = 2; k < T; ++k)
      if (step_sig(r, k) != body) fail(r.name + ": step " + std::to_string(k) + " is not computed the way step 1 is");
  }

  // Writes the recurrence (once): as ONNX LSTM nodes when native_lstm() can,
  // else as a Scan whose body is step 1 of the sample.
  void scan(int ri) {
    Recurrence& r = recs[ri];
    if (!r.seq_out.empty()) return;
    if (use_native_lstm && native_lstm(r)) return;
    GraphWriter w(main, model);
    const std::string x = template_value(r.x[0]);
    // Initial state: zeros of [batch, dims] with the batch of the input.
    const std::string batch = w.slice(w.op("Shape", {x}), 0, 1, 2);
    std::vector<std::string> init;
    for (VariableIndex s : r.s[0]) {
      NodeIr* shape = w.add("Concat", {batch, w.ints(canon_dims(cg.node(s).value.d))});
      GraphWriter::set_int(shape, "axis", 0);
      init.push_back(w.op("ConstantOfShape", {GraphWriter::out(shape)}));
    }
    GraphIr body;
    body.set_name(model->unique(r.name + "_step"));
    write_body(r, body);
    std::vector<std::string> scan_in = init;
    scan_in.push_back(x);
    NodeIr* n = main->add_node();
    n->set_op_type("Scan");
    n->set_name(model->unique(r.name));
    for (const auto& i : scan_in) n->add_input(i);
    for (size_t j = 0; j < init.size(); ++j) {
      r.final_state.push_back(model->unique(r.name + "_last"));
      n->add_output(r.final_state.back());
    }
    r.seq_out = model->unique(r.name + "_out");
    n->add_output(r.seq_out);
    GraphWriter::set_int(n, "num_scan_inputs", 1);
    GraphWriter::set_ints(n, "scan_input_directions", {r.reverse ? 1 : 0});
    GraphWriter::set_ints(n, "scan_output_directions", {r.reverse ? 1 : 0});
    GraphWriter::set_graph(n, "body", std::move(body));
  }

  // ---------------------------------------------------------------- native LSTMs

  // One layer of a step made of the fused vanilla LSTM ops (VanillaLSTMBuilder
  // without layer norm, CompactVanillaLSTMBuilder).
  struct LstmLayer {
    VariableIndex x = 0, gates = 0;
    size_t h_slot = 0, c_slot = 0;  // in the builder's state vector
    unsigned hid = 0;
  };

  static int slot_of(const std::vector<VariableIndex>& v, VariableIndex i) {
    for (size_t j = 0; j < v.size(); ++j)
      if (v[j] == i) return static_cast<int>(j);
    return -1;
  }

  // The layer of step 1 whose output is state slot j, if it is the fused ops
  // over the previous step's cell and output and weights read from no position.
  bool lstm_layer(const Recurrence& r, size_t j, LstmLayer& l) {
    const std::vector<VariableIndex>&s0 = r.s[0], &s1 = r.s[1];
    const Node& h = cg.node(s1[j]);
    if (h.op != OpKind::VanillaLSTMH || h.value.d.nd != 1) return false;
    const int c_slot = slot_of(s1, h.args[0]);
    const Node& c = cg.node(h.args[0]);
    const Node& g = cg.node(h.args[1]);
    if (c_slot < 0 || c.op != OpKind::VanillaLSTMC || c.args[1] != h.args[1] || c.args[0] != s0[c_slot]) return false;
    if (g.op != OpKind::VanillaLSTMGates || g.p<op_params::GatesParams>().weightnoise_std != 0.f || g.args[1] != s0[j])
      return false;
    for (unsigned k = 2; k < 5; ++k)
      if (depends[g.args[k]] || cg.node(g.args[k]).value.d.bd != 1 || cg.node(g.args[k]).value.d.nd != (k < 4 ? 2 : 1))
        return false;
    l = {g.args[0], h.args[1], j, static_cast<size_t>(c_slot), h.value.d[0]};
    return true;
  }

  // The layers of step 1, bottom first, when the whole step is a stack of fused
  // vanilla LSTM layers (the state their cells and outputs, the step's output
  // the top layer's); else empty.
  std::vector<LstmLayer> lstm_layers(const Recurrence& r) {
    std::vector<LstmLayer> found;
    for (size_t j = 0; j < r.s[1].size(); ++j) {
      LstmLayer l;
      if (lstm_layer(r, j, l)) found.push_back(l);
    }
    if (found.empty() || found.size() * 2 != r.s[1].size() || cg.node(r.x[1]).value.d.nd != 1) return {};
    std::vector<LstmLayer> chain;
    VariableIndex in = r.x[1];
    while (chain.size() < found.size()) {
      auto it = std::find_if(found.begin(), found.end(), [&](const LstmLayer& l) { return l.x == in; });
      if (it == found.end()) return {};
      chain.push_back(*it);
      in = r.s[1][it->h_slot];
    }
    if (in != r.out[1]) return {};
    return chain;
  }

  // A block of gate rows along `axis` in ONNX's order i, o, f, c (dynet_lite's
  // is i, f, o, g).
  std::string onnx_gate_order(GraphWriter& w, const std::string& v, unsigned hid, int64_t axis) {
    std::vector<std::string> parts;
    for (int64_t k : {0, 2, 1, 3}) parts.push_back(w.slice(v, axis, k * hid, (k + 1) * hid));
    NodeIr* n = w.add("Concat", parts);
    GraphWriter::set_int(n, "axis", axis);
    return GraphWriter::out(n);
  }

  // An LSTM weight from a matrix {4 hid, n} (canonical [1, n, 4 hid]): [1, 4 hid, n].
  std::string lstm_matrix(GraphWriter& w, VariableIndex m, unsigned hid) {
    NodeIr* t = w.add("Transpose", {plain_value(m)});
    GraphWriter::set_ints(t, "perm", {0, 2, 1});
    return onnx_gate_order(w, GraphWriter::out(t), hid, 1);
  }

  // The LSTM biases [1, 8 hid]: b, then the fused op's forget bias as the
  // recurrent bias.
  std::string lstm_bias(GraphWriter& w, VariableIndex b, unsigned hid) {
    std::vector<float> forget(4 * hid, 0.f);  // ONNX order: the forget rows are the third block
    std::fill(forget.begin() + 2 * hid, forget.begin() + 3 * hid, lstm_gates::kForgetGateBias);
    NodeIr* n = w.add("Concat", {onnx_gate_order(w, w.squeeze(plain_value(b), {1}), hid, 1),
                                 w.floats(forget, {1, static_cast<int64_t>(4 * hid)})});
    GraphWriter::set_int(n, "axis", 1);
    return GraphWriter::out(n);
  }

  // A recurrence that is a stack of fused vanilla LSTM layers becomes one ONNX
  // LSTM node per layer, which runtimes run as one kernel over the sequence.
  bool native_lstm(Recurrence& r) {
    const std::vector<LstmLayer> layers = lstm_layers(r);
    if (layers.empty()) return false;
    GraphWriter w(main, model);
    std::string y = w.squeeze(template_value(r.x[0]), {-2});  // [seq, batch, in]
    r.final_state.assign(r.s[1].size(), "");
    auto canonical = [&](const std::string& last) {  // [1 direction, batch, hid] -> [batch, 1, hid]
      NodeIr* t = w.add("Transpose", {last});
      GraphWriter::set_ints(t, "perm", {1, 0, 2});
      return GraphWriter::out(t);
    };
    for (const LstmLayer& l : layers) {
      const Node& g = cg.node(l.gates);
      NodeIr* n = w.add("LSTM", {y, lstm_matrix(w, g.args[2], l.hid), lstm_matrix(w, g.args[3], l.hid),
                                 lstm_bias(w, g.args[4], l.hid)});
      n->set_name(model->unique(r.name));
      n->add_output(model->unique(r.name + "_h"));
      n->add_output(model->unique(r.name + "_c"));
      GraphWriter::set_int(n, "hidden_size", l.hid);
      if (r.reverse) GraphWriter::set_string(n, "direction", "reverse");
      y = w.squeeze(n->output(0), {1});  // [seq, 1 direction, batch, hid] -> [seq, batch, hid]
      r.final_state[l.h_slot] = canonical(n->output(1));
      r.final_state[l.c_slot] = canonical(n->output(2));
    }
    r.seq_out = w.unsqueeze(y, {-2});
    return true;
  }

  void write_body(const Recurrence& r, GraphIr& body) {
    GraphWriter w(&body, model);
    std::unordered_map<VariableIndex, std::string> names;
    for (size_t j = 0; j < r.s[0].size(); ++j)
      names[r.s[0][j]] = body_input(body, cg.node(r.s[0][j]).value.d, r.name + "_s" + std::to_string(j));
    names[r.x[1]] = body_input(body, cg.node(r.x[1]).value.d, r.name + "_x");
    std::vector<VariableIndex> outs = r.s[1];
    outs.push_back(r.out[1]);
    const std::vector<std::string> v = write_bounded(w, outs, names);
    for (size_t j = 0; j < outs.size(); ++j)
      body_output(body, v[j], cg.node(outs[j]).value.d,
                  r.name + (j < r.s[1].size() ? "_s" + std::to_string(j) + "_next" : "_h"));
  }

  std::string body_input(GraphIr& body, const Dim& d, const std::string& base) {
    ValueInfoIr* vi = body.add_input();
    vi->set_name(model->unique(base));
    set_tensor_type(vi, kFloat, {"batch"}, canon_dims(d));
    return vi->name();
  }

  void body_output(GraphIr& body, const std::string& v, const Dim& d, const std::string& base) {
    ValueInfoIr* vi = body.add_output();
    vi->set_name(model->unique(base));
    set_tensor_type(vi, kFloat, {"batch"}, canon_dims(d));
    NodeIr* id = body.add_node();
    id->set_op_type("Identity");
    id->add_input(v);
    id->add_output(vi->name());
  }

  // ---------------------------------------------------------------- trees

  bool is_leaf(const TreeDecl& t, int k) { return t.x[k] != kNoInput && t.children[k].empty(); }

  // A leaf's state from its input; an inner node's from its children's states.
  uint64_t tree_node_sig(const TreeDecl& t, int k) {
    Boundary b;
    if (is_leaf(t, k)) {
      b[t.x[k]] = 0;
    } else {
      const size_t S = t.s[k].size();
      for (size_t l = 0; l < t.children[k].size(); ++l)
        for (size_t j = 0; j < S; ++j) b[t.s[t.children[k][l]][j]] = 1 + l * S + j;
    }
    return outputs_sig(t.s[k], b, t.name + ": node " + std::to_string(k));
  }

  // Every leaf is computed as the first leaf is, every inner node as the first.
  void check_tree(TreeDecl& t) {
    for (int k = 0; k < static_cast<int>(t.x.size()); ++k) {
      if (is_leaf(t, k)) {
        if (t.leaf < 0) t.leaf = k;
      } else if (t.x[k] == kNoInput && t.children[k].size() == t.N) {
        if (t.inner < 0) t.inner = k;
      } else {
        fail(t.name + ": node " + std::to_string(k) + " has " + std::to_string(t.children[k].size()) +
             " children and " + (t.x[k] == kNoInput ? "no input" : "an input") +
             "; the export takes leaves with an input and inner nodes of N = " + std::to_string(t.N) +
             " children without");
      }
    }
    if (t.leaf < 0 || t.inner < 0) fail(t.name + ": export from a sample tree with leaves and inner nodes");
    const uint64_t leaf = tree_node_sig(t, t.leaf), inner = tree_node_sig(t, t.inner);
    for (int k = 0; k < static_cast<int>(t.x.size()); ++k)
      if (tree_node_sig(t, k) != (is_leaf(t, k) ? leaf : inner))
        fail(t.name + ": node " + std::to_string(k) + " is not computed the way node " +
             std::to_string(is_leaf(t, k) ? t.leaf : t.inner) + " is");
  }

  // Writes the tree as a Loop over its nodes (once): the state of every node is
  // carried as one tensor [nodes, 1, dims] per state expression; iteration i
  // computes node i as a leaf and as an inner node and keeps the one it is.
  void loop(int ti) {
    TreeDecl& t = trees[ti];
    if (!t.root_state.empty()) return;
    GraphWriter w(main, model);
    const std::string words = t.name + "_words", children = t.name + "_children";
    set_tensor_type(add_main_input(words), kInt64, {"nodes"}, {});
    set_tensor_type(add_main_input(children), kInt64, {"nodes"}, {static_cast<int64_t>(t.N)});
    const std::string n = w.op("Shape", {words});
    std::vector<std::string> init;
    for (VariableIndex s : t.s[t.leaf]) {
      std::vector<int64_t> dims{1};
      for (int64_t d : canon_dims(cg.node(s).value.d)) dims.push_back(d);
      NodeIr* shape = w.add("Concat", {n, w.ints(dims)});
      GraphWriter::set_int(shape, "axis", 0);
      init.push_back(w.op("ConstantOfShape", {GraphWriter::out(shape)}));
    }
    GraphIr body;
    body.set_name(model->unique(t.name + "_node"));
    write_tree_body(t, words, children, body);
    const std::string trips = w.squeeze(n, {0});
    NodeIr* l = main->add_node();
    l->set_op_type("Loop");
    l->set_name(model->unique(t.name));
    l->add_input(trips);
    l->add_input("");
    std::vector<std::string> final_state;
    for (const auto& i : init) {
      l->add_input(i);
      final_state.push_back(model->unique(t.name + "_states"));
      l->add_output(final_state.back());
    }
    GraphWriter::set_graph(l, "body", std::move(body));
    // The root is the last node (post-order).
    const std::string root = w.op("Sub", {trips, w.ints({1}, false)});
    for (const auto& f : final_state) t.root_state.push_back(w.op("Gather", {f, root}));
  }

  ValueInfoIr* add_main_input(const std::string& name) {
    ValueInfoIr* vi = main->add_input();
    vi->set_name(name);
    return vi;
  }

  void write_tree_body(const TreeDecl& t, const std::string& words, const std::string& children, GraphIr& body) {
    GraphWriter w(&body, model);
    auto scalar_input = [&](const std::string& base, ElemType type) {
      ValueInfoIr* vi = body.add_input();
      vi->set_name(model->unique(base));
      set_tensor_type(vi, type, {}, {});
      return vi->name();
    };
    const std::string i = scalar_input(t.name + "_i", kInt64);
    const std::string cond = scalar_input(t.name + "_cond", kBool);
    std::vector<std::string> states;
    for (size_t j = 0; j < t.s[t.leaf].size(); ++j) {
      ValueInfoIr* vi = body.add_input();
      vi->set_name(model->unique(t.name + "_states_in"));
      std::vector<int64_t> dims{1};
      for (int64_t d : canon_dims(cg.node(t.s[t.leaf][j]).value.d)) dims.push_back(d);
      set_tensor_type(vi, kFloat, {"nodes"}, dims);
      states.push_back(vi->name());
    }
    const std::string zero = w.ints({0}, false);
    // As a leaf: its input is row words[i] of the table.
    const std::string word = w.op("Gather", {words, i});
    const std::string leaf = w.op("GreaterOrEqual", {word, zero});
    std::unordered_map<VariableIndex, std::string> leaf_names{
        {t.x[t.leaf], w.op("Gather", {model->lookup_table(t.table), w.unsqueeze(w.op("Max", {word, zero}), {0})})}};
    const std::vector<std::string> as_leaf = write_bounded(w, t.s[t.leaf], leaf_names);
    // As an inner node: its children's states are rows children[i, l] of the states.
    const std::string ch = w.op("Gather", {children, i});
    std::unordered_map<VariableIndex, std::string> inner_names;
    for (unsigned l = 0; l < t.N; ++l) {
      const std::string c = w.op("Max", {w.op("Gather", {ch, w.ints({l}, false)}), zero});
      const std::vector<VariableIndex>& cs = t.s[t.children[t.inner][l]];
      for (size_t j = 0; j < cs.size(); ++j) inner_names[cs[j]] = w.op("Gather", {states[j], c});
    }
    const std::vector<std::string> as_inner = write_bounded(w, t.s[t.inner], inner_names);
    const std::string at = w.op("Reshape", {i, w.ints({1, 1})});
    ValueInfoIr* co = body.add_output();
    co->set_name(model->unique(t.name + "_cond_out"));
    set_tensor_type(co, kBool, {}, {});
    NodeIr* cn = body.add_node();
    cn->set_op_type("Identity");
    cn->add_input(cond);
    cn->add_output(co->name());
    for (size_t j = 0; j < states.size(); ++j) {
      const std::string v = w.op("Where", {leaf, as_leaf[j], as_inner[j]});
      const std::string next = w.op("ScatterND", {states[j], at, w.unsqueeze(v, {0})});
      ValueInfoIr* vi = body.add_output();
      vi->set_name(model->unique(t.name + "_states_out"));
      std::vector<int64_t> dims{1};
      for (int64_t d : canon_dims(cg.node(t.s[t.leaf][j]).value.d)) dims.push_back(d);
      set_tensor_type(vi, kFloat, {"nodes"}, dims);
      NodeIr* id = body.add_node();
      id->set_op_type("Identity");
      id->add_input(next);
      id->add_output(vi->name());
    }
  }

  // ---------------------------------------------------------------- the model

  // The model as data; the serialising module checks it with ONNX's checker.
  ModelIr build() {
    if (cg.get_id() != graph_id) fail("the graph was cleared since the exporter was made");
    for (const auto& p : params)
      if (p.expired())
        throw std::runtime_error("ONNX export: a parameter the graph reads was destroyed with its model");
    if (outputs.empty()) fail("no outputs declared (add_output / add_sequence_output)");
    ModelIr m;
    m.ir_version = kIrVersion;
    m.producer_name = "dynet_lite";
    m.opsets.emplace_back("", kOpset);
    ModelState state;
    state.main = &m.graph;
    state.main->set_name("dynet_lite");
    model = &state;
    main = state.main;
    plain.clear();
    templ.clear();
    seq_input_value.clear();
    for (auto& r : recs) {
      r.seq_out.clear();
      r.final_state.clear();
    }
    for (auto& t : trees) t.root_state.clear();
    for (const Output& o : outputs) write_output(o);
    model = nullptr;
    main = nullptr;
    return m;
  }

  // Structure checks of everything declared (run when the model is built).
  void prepare() {
    mark_dependents();
    sigs.clear();
    plain_hashes.clear();
    for (int r = 0; r < static_cast<int>(recs.size()); ++r) check_recurrence(r);
    for (TreeDecl& t : trees) check_tree(t);
    for (const Output& o : outputs)
      if (o.sequence) check_positions(o.steps, "sequence output '" + o.name + "'");
  }
};

OnnxExporter::OnnxExporter(ComputationGraph& cg) : impl_(new Impl(cg)) {}
OnnxExporter::~OnnxExporter() = default;

void OnnxExporter::add_input(const Expression& leaf, const std::string& name) {
  impl_->check_leaf(leaf, "add_input");
  impl_->check_name(name, "add_input");
  impl_->inputs[leaf.i] = name;
}

void OnnxExporter::add_sequence_input(const std::vector<Expression>& steps, const std::string& name) {
  Impl& m = *impl_;
  m.check_name(name, "add_sequence_input");
  if (steps.empty()) fail("add_sequence_input '" + name + "': no steps");
  if (m.seq_len >= 0 && static_cast<int>(steps.size()) != m.seq_len)
    fail("add_sequence_input '" + name + "': " + std::to_string(steps.size()) +
         " steps, but the other sequence inputs have " + std::to_string(m.seq_len));
  const int s = static_cast<int>(m.seq_inputs.size());
  Impl::SeqInput in{name, {}};
  for (size_t t = 0; t < steps.size(); ++t) {
    m.check_leaf(steps[t], "add_sequence_input");
    const Node& a = m.cg.node(steps[0].i);
    const Node& b = m.cg.node(steps[t].i);
    const bool same =
        a.op == b.op && a.value.d == b.value.d &&
        (a.op != OpKind::Lookup || a.p<op_params::LookupParams>().lp == b.p<op_params::LookupParams>().lp);
    if (!same)
      fail("add_sequence_input '" + name + "': step " + std::to_string(t) + " (" + node_text(m.cg, steps[t].i) +
           ") is not the same kind of leaf as step 0 (" + node_text(m.cg, steps[0].i) + ")");
    in.steps.push_back(steps[t].i);
    m.seq_step[steps[t].i] = {s, static_cast<int>(t)};
  }
  m.seq_inputs.push_back(in);
  m.seq_len = static_cast<int>(steps.size());
}

void OnnxExporter::add_recurrence(const RNNBuilder& b) {
  Impl& m = *impl_;
  const std::string name = "recurrence" + std::to_string(m.recs.size());
  const unsigned T = b.num_steps();
  if (T < 2)
    fail(name + ": the builder's sequence has " + std::to_string(T) +
         " steps; export from a sample of at least 2 (one step is traced as the Scan body)");
  if (b.has_initial_state()) fail(name + ": the sequence started from a given h_0; only the zero state exports");
  Impl::Recurrence r;
  r.name = name;
  for (unsigned k = 0; k < T; ++k) {
    if (b.step_head(k) != static_cast<int>(k) - 1)
      fail(name + ": step " + std::to_string(k) + " does not continue step " + std::to_string(k - 1) +
           " (branching histories do not export)");
    const Expression x = b.step_input(k);
    if (x.pg == nullptr) fail(name + ": step " + std::to_string(k) + " is a set_h / set_s step");
    m.check_expr(x, "add_recurrence");
    r.x.push_back(x.i);
    std::vector<VariableIndex> s;
    for (const Expression& e : b.get_s(k)) {
      m.check_expr(e, "add_recurrence");
      s.push_back(e.i);
    }
    r.s.push_back(s);
    const std::vector<Expression> h = b.get_h(k);
    r.out.push_back(h.back().i);
  }
  const int ri = static_cast<int>(m.recs.size());
  for (unsigned k = 0; k < T; ++k) m.rec_out[r.out[k]] = {ri, static_cast<int>(k)};
  for (size_t j = 0; j < r.s[T - 1].size(); ++j) m.rec_final[r.s[T - 1][j]] = {ri, static_cast<int>(j)};
  m.recs.push_back(r);
}

void OnnxExporter::add_tree(const TreeLSTMBuilder& b, const std::string& name) {
  Impl& m = *impl_;
  m.check_name(name, "add_tree");
  const auto* nary = dynamic_cast<const NaryTreeLSTMBuilder*>(&b);
  if (!nary) fail("add_tree '" + name + "': only NaryTreeLSTMBuilder exports");
  if (b.has_initial_state())
    fail("add_tree '" + name + "': the tree started from a given h_0; only the zero state exports");
  const std::vector<int>& order = b.added_order();
  Impl::TreeDecl t;
  t.name = name;
  t.N = nary->arity();
  for (size_t k = 0; k < order.size(); ++k) {
    if (order[k] != static_cast<int>(k))
      fail("add_tree '" + name + "': node " + std::to_string(order[k]) + " was added as the " + std::to_string(k + 1) +
           "th; export from a tree whose ids are its post-order 0, 1, ... (root last)");
    const Expression x = b.node_input(order[k]);
    if (x.pg) {
      m.check_expr(x, "add_tree");
      const Node& n = m.cg.node(x.i);
      if (n.op != OpKind::Lookup || n.value.d.bd != 1)
        fail("add_tree '" + name + "': the input of node " + std::to_string(k) + " is " + node_text(m.cg, x.i) +
             ", not the lookup of one row");
      const LookupParameterStorage* table = n.p<op_params::LookupParams>().lp;
      if (t.table && t.table != table) fail("add_tree '" + name + "': the node inputs are lookups of two tables");
      t.table = table;
      m.tree_input[x.i] = static_cast<int>(m.trees.size());
    }
    t.x.push_back(x.pg ? x.i : Impl::kNoInput);
    t.children.push_back(b.node_children(order[k]));
    std::vector<VariableIndex> s;
    for (const Expression& e : b.get_s(order[k])) s.push_back(e.i);
    t.s.push_back(s);
  }
  if (order.empty()) fail("add_tree '" + name + "': the builder holds no tree");
  for (size_t j = 0; j < t.s.back().size(); ++j)
    m.tree_root[t.s.back()[j]] = {static_cast<int>(m.trees.size()), static_cast<int>(j)};
  m.trees.push_back(t);
}

void OnnxExporter::set_native_lstm(bool on) { impl_->use_native_lstm = on; }

void OnnxExporter::add_output(const Expression& e, const std::string& name) {
  impl_->check_expr(e, "add_output");
  impl_->check_name(name, "add_output");
  impl_->outputs.push_back({name, {e.i}, false});
}

void OnnxExporter::add_sequence_output(const std::vector<Expression>& steps, const std::string& name) {
  impl_->check_name(name, "add_sequence_output");
  if (steps.empty()) fail("add_sequence_output '" + name + "': no steps");
  Impl::Output o{name, {}, true};
  for (const Expression& e : steps) {
    impl_->check_expr(e, "add_sequence_output");
    o.steps.push_back(e.i);
  }
  impl_->outputs.push_back(o);
}

std::string OnnxExporter::serialize() const {
  impl_->prepare();
  return serialize_model(impl_->build());
}

void OnnxExporter::save(const std::string& path) const {
  const std::string bytes = serialize();
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("OnnxExporter::save: cannot write " + tmp + " (for " + path + ")");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      throw std::runtime_error("OnnxExporter::save: writing " + tmp + " failed (for " + path + ")");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("OnnxExporter::save: cannot rename " + tmp + " to " + path);
  }
}

}  // namespace dynet_lite
