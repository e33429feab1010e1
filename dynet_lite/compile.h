#pragma once
/// \file compile.h
/// Compiled programs: a graph built once and run again with new inputs.
///
/// A structure that repeats (a sentence length, a bucket of lengths, a tree
/// shape, a server's fixed batch) need not be built, hashed, scheduled and laid
/// out again each time.  A Program owns a graph that is built once, with its
/// inputs declared as named slots; the first forward() captures it (its nodes,
/// shapes, memory and, with automatic batching, its batched groups), and every
/// later forward() computes the same nodes again from the slots' current
/// values and the parameters' current values, giving the values (and, after
/// backward(), the gradients) a graph built afresh would give.  Trainers update
/// as usual between runs.
///
/// \code
///   ProgramCache programs(64);                      // at most 64 programs
///   for (const auto& sentence : corpus) {
///     Program& p = programs.get(sentence.size(), [&](Program& p) {
///       ComputationGraph& cg = p.graph();           // built once per length
///       std::vector<Expression> losses;
///       for (unsigned t = 0; t < sentence.size(); ++t) {
///         Expression x = p.lookup("w" + std::to_string(t), embeddings);
///         losses.push_back(pickneglogsoftmax(W * x + b, p.index("y" + std::to_string(t))));
///       }
///       p.set_output(sum(losses));
///     });
///     for (unsigned t = 0; t < sentence.size(); ++t) {
///       p.set("w" + std::to_string(t), sentence[t].word);
///       p.set("y" + std::to_string(t), sentence[t].tag);
///     }
///     float loss = as_scalar(p.forward());
///     p.backward();
///     trainer.update();
///   }
/// \endcode
///
/// Each run draws its random numbers (dropout, noise) as a graph built afresh
/// at that point would: the program's graph takes its seed of --dynet-seed's
/// sequence when it is made, and each later run takes the next one, as
/// constructing a ComputationGraph does.  A loop that replays programs so draws
/// the masks of the loop that rebuilds its graphs, and leaves the same seeds to
/// the graphs after it.
///
/// Slots hold their values between runs; each must be set before the first
/// run.  Everything else in the graph (constants, parameters, the wiring, batch
/// sizes) is fixed by the capture.  A slot given values of the wrong size, a
/// slot never set, an index out of range, a program whose default device
/// changed or whose parameters were destroyed with their model: each throws,
/// naming what is wrong.
///
/// The programs of one ProgramCache on the CPU take turns with one set of
/// memory for their values and gradients (a cache of programs per length then
/// needs about the memory of its largest program, not of all of them together):
/// a program's node values and gradients hold until another program of its
/// cache runs, as those of a ComputationGraph hold until the next graph is
/// built in DyNet; running the program again computes them again.  A batched
/// program computes its values where its capture put them: while that memory
/// grows (a larger program of the cache came), it is captured again at its
/// next run.  A cache and its programs are used by one thread at a time.
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dynet_lite/dynet.h"
#include "dynet_lite/expr.h"
#include "dynet_lite/model.h"

namespace dynet_lite {

struct GraphStructure;  // exec/structure.h

/// A graph built once and run many times (see the file comment).
class Program {
  struct Slot;  // a slot's storage (exec/program.cc)

 public:
  struct SharedMemory;  // the memory the programs of a cache take turns with (exec/program.cc)

  Program();
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  /// The graph to build the program in; no node may be added after the first run.
  ComputationGraph& graph() { return *cg_; }

  /// An input of shape `d` read from slot `name` at every run.
  Expression input(const std::string& name, const Dim& d);
  /// A row of `p` chosen by the index in slot `name` at every run.
  Expression lookup(const std::string& name, LookupParameter p);
  /// `count` rows of `p` (a batch of `count`) chosen by slot `name`.
  Expression lookup(const std::string& name, LookupParameter p, unsigned count);
  /// Slot `name` of one index, for pick(), pickneglogsoftmax(), lookup() ...
  const unsigned* index(const std::string& name);
  /// Slot `name` of `count` indices (a batch of `count`).
  const std::vector<unsigned>* indices(const std::string& name, unsigned count);

  /// A slot found once by name (slot()): setting through it looks nothing up
  /// and allocates nothing.  Valid while its program lives.
  class SlotRef {
   public:
    SlotRef() = default;

   private:
    friend class Program;
    explicit SlotRef(Slot* s) : s_(s) {}
    Slot* s_ = nullptr;
  };
  /// The slot `name`; throws when there is none.
  SlotRef slot(const std::string& name);

  /// Sets an input slot: exactly as many values as its shape holds.
  void set(const std::string& name, const std::vector<float>& values);
  /// Sets a slot of one index.
  void set(const std::string& name, unsigned index);
  /// Sets a slot of indices: exactly as many as it was declared with.
  void set(const std::string& name, const std::vector<unsigned>& indices);
  /// The same through a slot's handle.
  void set(SlotRef slot, const std::vector<float>& values);
  void set(SlotRef slot, unsigned index);
  void set(SlotRef slot, const std::vector<unsigned>& indices);

  /// The expression forward() computes when given none.
  void set_output(const Expression& e);
  /// Computes `e` (the output if omitted): the first run captures the graph up
  /// to it, later runs replay the capture.  `e` must be a node of the capture.
  const Tensor& forward(const Expression& e);
  const Tensor& forward();
  /// Back-propagates from `e` (the output if omitted), as ComputationGraph::backward.
  void backward(const Expression& e, bool full = false);
  void backward();

  /// Whether the first run has captured the graph.
  bool captured() const { return captured_; }
  /// Runs after the capture (replays).
  uint64_t replays() const { return replays_; }
  /// Whether replays run the forward pass as one recorded device graph: a CUDA
  /// graph, recorded at a replay of a program wholly on one GPU, whose only
  /// host inputs are its slots and which draws no random numbers (otherwise
  /// replays run kernel by kernel).  Recording costs several replays (the
  /// driver instantiates the graph): a program of small nodes, bound by
  /// launching its kernels, earns that back within a few launches and records
  /// at its first replay; one of large nodes (1,024 floats of value a kernel
  /// call on average, or more) records at its second, so that a structure
  /// seen only twice does not pay for it, and a batched one of large groups
  /// at its fourth.  A batched program's graph runs its groups in their
  /// order; before each launch the groups' indices (lookups, losses) are
  /// combined again from the slots.  Each recorded graph holds about 5 KB of
  /// the driver's host memory a node (5-11 MB for the forward pass of a
  /// minibatch of 64 sentences).  backward() after a launched replay is a
  /// second recorded graph: without batching from its second such backward
  /// on, batched from its first (the lookups' gradient rows are listed again
  /// before each launch); an index slot set between forward() and backward()
  /// is then an error (the recorded gradient goes to the rows forward read).
  /// While a graph is recorded no other thread may use that GPU (its work
  /// would be recorded too).
  bool device_graph() const;
  /// Whether the last backward() launched a recorded device graph.
  bool backward_device_graph() const;
  /// A capture run without batching on the CPU: groups of nodes sharing a
  /// weight whose input products (an LSTM's W_x x_t, say) each replay computes
  /// in one call before the first of them, and the nodes in them.  Their
  /// operands' gradients likewise go back through one product per group.  The
  /// values and gradients are the bits of the nodes' own products.
  std::pair<size_t, size_t> column_groups() const;
  /// The same, after a backward: the arguments whose gradient an addition passes
  /// on unchanged (the W x of W x + b, say) and that nothing else writes.  A
  /// replay's backward makes no call for them: their gradient is the sum's own
  /// memory, with the values a rebuilt graph computes (0 + dy; a zero's sign
  /// may differ).
  size_t passed_gradients() const;

  /// Host memory of a slot (for the device graph's inputs).
  struct SlotRange {
    const void* begin;
    size_t bytes;
  };

 private:
  /// A program whose graph takes no seed of --dynet-seed's sequence
  /// (ProgramCache::forward(e): it runs with the random engine of e's graph).
  struct Unseeded {};
  explicit Program(Unseeded);
  Slot& declare(const std::string& name, int kind, const Dim& d, unsigned count);
  static Slot& check_kind(SlotRef ref, int kind, const char* what);
  void capture(VariableIndex last);
  void check_replayable(VariableIndex last) const;
  /// After the capture: whether replays can launch a device graph, and which
  /// nodes' slot indices are range-checked before each launch.
  void plan_device_graph();
  void check_slot_indices() const;
  /// Whether every parameter the capture read still exists.
  bool parameters_alive() const;
  /// Builds this program's (empty) graph as a copy of `src`, whose structure is
  /// `s`, each node that takes data reading a slot of its own instead
  /// (ProgramCache::forward(e)).
  void copy_structure(const ComputationGraph& src, const GraphStructure& s);
  /// Sets those slots to the data of `src`, a graph of the same structure.
  void bind_structure(const ComputationGraph& src, const GraphStructure& s);
  /// Takes the cache's shared memory from the program holding it (shares_ only).
  void take_shared_memory();
  /// Gives it back; the values and gradients computed in it are dropped.
  void return_shared_memory();
  friend class ProgramCache;

  std::unique_ptr<ComputationGraph> cg_;
  std::unordered_map<std::string, std::unique_ptr<Slot>> slots_;
  std::vector<Slot*> order_;  // slots in the order they were declared
  std::vector<Slot*> structure_slots_;  // copy_structure(): the data nodes' slots, in order
  Expression output_;
  bool has_output_ = false;
  bool captured_ = false;
  bool seeded_ = true;  // its graph takes a seed of --dynet-seed's sequence per run
  VariableIndex captured_last_ = 0;
  VariableIndex captured_size_ = 0;
  Device* captured_device_ = nullptr;
  std::vector<std::weak_ptr<const void>> parameters_;  // every parameter it reads
  uint64_t replays_ = 0;
  std::vector<VariableIndex> checked_;  // nodes indexing by slots (device graph)
  const Slot* index_set_after_forward_ = nullptr;  // an index slot set since the last forward()
  SharedMemory* shared_ = nullptr;  // its cache's, or null (a program of its own)
  bool shares_ = false;             // takes turns with shared_ (on the CPU)
};

/// Compiled programs by a key the caller computes from the structure (a length,
/// a sorted tuple of lengths, a tree shape's hash): "compile what repeats" in
/// one line of a training loop.  Holds at most `capacity` programs, dropping
/// the least recently used.
class ProgramCache {
 public:
  explicit ProgramCache(size_t capacity = 64);
  ~ProgramCache();
  ProgramCache(const ProgramCache&) = delete;
  ProgramCache& operator=(const ProgramCache&) = delete;

  /// The program for `key`; on a miss, a new one built by `build`, which builds
  /// its graph, declares its slots and sets its output.  The reference is valid
  /// until this key is dropped (a later get() of capacity other keys, clear()).
  Program& get(uint64_t key, const std::function<void(Program&)>& build);
  /// As get(), once `key` has been asked for `after` times before: until then
  /// null (run those as ordinary graphs).  For structures that mostly come once
  /// (tree shapes), where building a program for each would cost more than it
  /// saves.  The keys seen are counted in a table of at most 64 x capacity.
  Program* get_if_seen(uint64_t key, unsigned after, const std::function<void(Program&)>& build);
  bool contains(uint64_t key) const { return index_.count(key) != 0; }

  size_t size() const { return index_.size(); }
  size_t capacity() const { return capacity_; }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t evictions() const { return evictions_; }
  void clear();

  /// A key for a tuple of sizes (a bucket's lengths, a tree's shape in some
  /// order): equal tuples give equal keys; unequal ones collide with
  /// probability about 2^-64.
  static uint64_t key_of(const std::vector<unsigned>& sizes);

  /// Computes `e`, of a graph built as usual, through the compiled program of
  /// the graph's structure: "compile what repeats" with no slots to declare.
  /// The structure is every node's operation, shape, device, arguments and
  /// constant parameters (and the graph's batching settings); the values of
  /// inputs and the indices of lookups, picks, select_rows / select_cols,
  /// pickneglogsoftmax and hinge are data, which the program takes from the
  /// graph at each run.  A structure is compiled once it has been seen `after`
  /// times before (the first runs cost a description and a copy of the graph);
  /// until then, and for a graph that cannot be compiled (sparse inputs,
  /// restricted_log_softmax, strided_select, sparsemax_loss, poisson_loss,
  /// hinge_dim, one_hot), the graph runs as it is (uncompiled()).  The graph
  /// itself is not computed when its program runs: read the result from the
  /// returned tensor and back-propagate with backward(e).  Values and gradients
  /// are those of the graph run as it is, to the bit on the CPU, random numbers
  /// (dropout) included: they are drawn from the graph's own generator.  A
  /// cache serves either forward(e) or get(), not both.
  ///
  /// \code
  ///   ProgramCache programs(256);
  ///   for (const auto& s : corpus) {
  ///     ComputationGraph cg;
  ///     Expression loss = model.loss(cg, s);   // built as usual
  ///     total += as_scalar(programs.forward(loss));
  ///     programs.backward(loss);
  ///     trainer.update();
  ///   }
  /// \endcode
  const Tensor& forward(const Expression& e, unsigned after = 1);
  /// Back-propagates from `e`: in the program of the last forward(e) when `e`
  /// is that expression's graph, else in e's own graph (ComputationGraph::backward).
  void backward(const Expression& e, bool full = false);
  /// forward(e) calls that ran their graph as it is (not compiled yet, or not compilable).
  uint64_t uncompiled() const { return uncompiled_; }
  /// The program the last forward(e) ran (its replays(), device_graph() ...),
  /// or null where it ran the graph as it is.
  const Program* last_program() const { return last_program_; }

 private:
  using Entry = std::pair<uint64_t, std::unique_ptr<Program>>;
  /// Adds `program` under `key` as the most recently used, dropping the least
  /// recently used one beyond the capacity.
  Program& insert(uint64_t key, std::unique_ptr<Program> program);
  /// Forgets a program: its key, its structure, and the last run if it was its.
  void drop(std::list<Entry>::iterator it);
  /// Counts a sighting of `key`: whether it had been seen `after` times before.
  bool seen_enough(uint64_t key, unsigned after);
  void check_use(bool by_structure);
  size_t capacity_;
  std::unique_ptr<Program::SharedMemory> shared_;  // before programs_: outlives them
  std::list<Entry> programs_;  // most recently used first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> index_;
  std::unordered_map<uint64_t, unsigned> sightings_;  // keys of get_if_seen() not compiled yet
  uint64_t hits_ = 0, misses_ = 0, evictions_ = 0, uncompiled_ = 0;
  // forward(e): the structures of the programs it made (compared word by word
  // on a match), the last graph's description, and what it ran last.
  std::unordered_map<uint64_t, std::vector<uint64_t>> structures_;
  std::unique_ptr<GraphStructure> structure_;
  int use_ = 0;  // 0 unused, 1 get(), 2 forward(e)
  Program* last_program_ = nullptr;  // null where the last forward(e) ran its graph as it is
  const ComputationGraph* last_graph_ = nullptr;
  unsigned last_graph_id_ = 0;
};

}  // namespace dynet_lite
