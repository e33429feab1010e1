#pragma once
/// \file model.h
/// Trainable parameters and the collections that own them.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dynet_lite/param-init.h"
#include "dynet_lite/tensor.h"

namespace dynet_lite {

class ParameterCollection;
struct ParameterCollectionStorage;

/// A dense parameter: its values and accumulated gradient.
struct ParameterStorage : std::enable_shared_from_this<ParameterStorage> {
  ParameterStorage(const Dim& d, const ParameterInit& init, const std::string& name, Device* device);
  ~ParameterStorage();
  ParameterStorage(const ParameterStorage&) = delete;
  ParameterStorage& operator=(const ParameterStorage&) = delete;

  size_t size() const { return dim.size(); }
  void zero();
  void clear_gradient();
  void clear() { clear_gradient(); }  ///< DyNet's name for clear_gradient()
  bool is_updated() const { return updated; }
  bool has_grad() const { return nonzero_grad; }
  void scale_parameters(float a);
  void scale_gradient(float a);
  /// values += ... under the lock, so graphs in several threads can back-propagate
  /// into the same parameter.
  void accumulate_grad(const float* d);
  float gradient_squared_l2_norm() const;

  Dim dim;
  Tensor values;
  Tensor g;
  std::string name;
  Device* device;
  bool updated = true;  ///< false freezes it (trainers skip it)
  /// Some gradient arrived since the last update; while false, g is zero (the
  /// trainers' and clear_gradient() leave it so, and accumulate_grad() then
  /// copies instead of adding).
  bool nonzero_grad = false;
  /// Counts the writes to g while nonzero_grad holds (accumulations, scaling,
  /// loading), so that a graph whose parameter node passed its gradient straight
  /// into g can tell whether g is still that gradient (get_gradient).
  uint64_t gradient_writes = 0;
  std::mutex mutex;
};

/// A set of row indices (the rows of a lookup table touched since the last
/// update): insert and count in O(1) without hashing or allocating once warm,
/// iteration in the order the rows were first inserted.  It reads like the
/// std::unordered_set<unsigned> DyNet uses for non_zero_grads.
class RowSet {
 public:
  /// Inserts r; returns its position in insertion order (its slot).  `added`:
  /// whether r was not there before.
  unsigned insert(unsigned r, bool* added = nullptr) {
    if (r >= slot_.size()) slot_.resize(static_cast<size_t>(r) + 1, 0);
    const bool fresh = slot_[r] == 0;
    if (added) *added = fresh;
    if (!fresh) return slot_[r] - 1;
    rows_.push_back(r);
    slot_[r] = static_cast<unsigned>(rows_.size());
    return slot_[r] - 1;
  }
  size_t count(unsigned r) const { return r < slot_.size() && slot_[r] ? 1 : 0; }
  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }
  void clear() {
    for (unsigned r : rows_) slot_[r] = 0;
    rows_.clear();
  }
  /// The rows in insertion order, contiguous (for a device kernel's index list).
  const unsigned* data() const { return rows_.data(); }
  std::vector<unsigned>::const_iterator begin() const { return rows_.begin(); }
  std::vector<unsigned>::const_iterator end() const { return rows_.end(); }

 private:
  std::vector<unsigned> rows_;
  std::vector<unsigned> slot_;  // slot_[r]: 1 + position of r in rows_, 0: absent
};

/// A table of rows (embeddings).  Only the rows that received gradient are updated.
///
/// On the CPU the gradient is kept for those rows alone: row_grads holds the
/// gradient of non_zero_grads' k-th row at row k, and a table of 100,000 words
/// whose minibatch touches 2,000 holds 2,000 rows of gradient, not 100,000.
/// The whole table's gradient (all_grads, grads) exists once something needs it
/// as one tensor: dense_grads() makes it (a use of the whole table as a
/// parameter, a gradient check, loading a gradient, gradients()), and the table
/// keeps it from then on.  On other devices the gradient is always whole.
struct LookupParameterStorage : std::enable_shared_from_this<LookupParameterStorage> {
  LookupParameterStorage(unsigned n, const Dim& d, const ParameterInit& init, const std::string& name,
                         Device* device);
  ~LookupParameterStorage();
  LookupParameterStorage(const LookupParameterStorage&) = delete;
  LookupParameterStorage& operator=(const LookupParameterStorage&) = delete;

  size_t size() const { return all_dim.size(); }
  unsigned num_rows() const { return static_cast<unsigned>(values.size()); }
  void zero();
  void clear_gradient();
  void clear() { clear_gradient(); }  ///< DyNet's name for clear_gradient()
  bool is_updated() const { return updated; }
  /// Whether the table holds a gradient (rows in non_zero_grads, a dense
  /// gradient, or nonzero_grad set).
  bool has_grad() const { return nonzero_grad || all_updated || !non_zero_grads.empty(); }
  void scale_parameters(float a);
  void scale_gradient(float a);
  void accumulate_grad(unsigned index, const float* d);
  /// Adds row k of `d` (n rows, side by side) to the gradient of row index[k], for
  /// k < n, under one lock (a batched group of lookups).
  void accumulate_grads(const unsigned* index, size_t n, const float* d);
  void initialize(unsigned index, const std::vector<float>& val);
  float gradient_squared_l2_norm() const;

  /// Whether the gradient is kept for the touched rows only (row_grads).
  bool sparse_gradient() const { return all_grads.v == nullptr; }
  /// The whole table's gradient, made (from the touched rows') on first use;
  /// grads are its rows.  Takes the lock.
  Tensor& dense_grads();
  /// The gradient of the touched row at position k of non_zero_grads.
  float* row_gradient(size_t k) {
    return sparse_gradient() ? row_grads + k * dim.size() : all_grads.v + size_t(non_zero_grads.data()[k]) * dim.size();
  }
  /// The whole table's gradient, written to host memory `out` (size() floats),
  /// without making it.
  void copy_gradient_to_host(float* out) const;

  Dim all_dim;                   ///< {d..., n}
  Dim dim;                       ///< one row
  Tensor all_values, all_grads;  ///< rows one after the other (all_grads: see dense_grads())
  std::vector<Tensor> values, grads;
  RowSet non_zero_grads;        ///< rows touched since the last update
  float* row_grads = nullptr;   ///< sparse gradient: the touched rows' (see above)
  size_t row_grads_capacity = 0;                ///< rows row_grads has room for
  bool all_updated = false;                     ///< dense gradient (no sparse tracking)
  bool nonzero_grad = false;                    ///< some gradient arrived since the last update
  std::string name;
  Device* device;
  bool updated = true;
  std::mutex mutex;

 private:
  Tensor& dense_grads_locked();
};

/// A handle to a ParameterStorage (cheap to copy).
struct Parameter {
  Parameter() = default;
  explicit Parameter(std::shared_ptr<ParameterStorage> p) : p(std::move(p)) {}
  ParameterStorage& get_storage() const;
  void zero();
  Dim dim() const { return get_storage().dim; }
  Tensor* values() { return &get_storage().values; }
  Tensor* gradients() { return &get_storage().g; }
  std::string get_fullname() const { return get_storage().name; }
  void set_updated(bool b) { get_storage().updated = b; }
  bool is_updated() { return get_storage().updated; }
  void clip_inplace(float left, float right);
  void set_value(const std::vector<float>& val);
  void scale(float s) { get_storage().scale_parameters(s); }
  void scale_gradient(float s) { get_storage().scale_gradient(s); }

  std::shared_ptr<ParameterStorage> p;
};

struct LookupParameter {
  LookupParameter() = default;
  explicit LookupParameter(std::shared_ptr<LookupParameterStorage> p) : p(std::move(p)) {}
  LookupParameterStorage& get_storage() const;
  void initialize(unsigned index, const std::vector<float>& val) { get_storage().initialize(index, val); }
  void zero() { get_storage().zero(); }
  Dim dim() const { return get_storage().dim; }
  std::vector<Tensor>* values() { return &get_storage().values; }
  /// The rows of the table's gradient (made whole: LookupParameterStorage::dense_grads()).
  std::vector<Tensor>* gradients() {
    get_storage().dense_grads();
    return &get_storage().grads;
  }
  std::string get_fullname() const { return get_storage().name; }
  void set_updated(bool b) { get_storage().updated = b; }
  bool is_updated() { return get_storage().updated; }
  void scale(float s) { get_storage().scale_parameters(s); }
  void scale_gradient(float s) { get_storage().scale_gradient(s); }

  std::shared_ptr<LookupParameterStorage> p;
};

/// Owns parameters.  A handle: copies refer to the same collection.  A
/// subcollection's parameters belong to its ancestors too, so a trainer on the
/// root updates everything.
class ParameterCollection {
 public:
  ParameterCollection();
  ~ParameterCollection();

  /// Glorot-uniform when scale == 0, else uniform in [-scale, scale].
  Parameter add_parameters(const Dim& d, float scale = 0.0f, const std::string& name = "",
                           Device* device = nullptr);
  Parameter add_parameters(const Dim& d, Device* device);
  Parameter add_parameters(const Dim& d, const std::string& name, Device* device = nullptr);
  Parameter add_parameters(const Dim& d, const ParameterInit& init, const std::string& name = "",
                           Device* device = nullptr);
  /// n rows of shape d, Glorot-initialised.
  LookupParameter add_lookup_parameters(unsigned n, const Dim& d, const std::string& name = "",
                                        Device* device = nullptr);
  LookupParameter add_lookup_parameters(unsigned n, const Dim& d, const ParameterInit& init,
                                        const std::string& name = "", Device* device = nullptr);
  ParameterCollection add_subcollection(const std::string& name = "", float weight_decay_lambda = -1.f);

  /// Number of scalars in all parameters and lookup tables.
  size_t parameter_count() const;
  float gradient_l2_norm() const;
  void reset_gradient();
  /// L2 weight decay: each update multiplies the weights by (1 - lambda).
  void set_weight_decay_lambda(float lambda);
  float get_weight_decay_lambda() const;
  /// "/" for a root collection, "/name/" for a subcollection.
  std::string get_fullname() const;
  std::string get_namespace() const { return get_fullname(); }

  const std::vector<std::shared_ptr<ParameterStorage>>& parameters_list() const;
  const std::vector<std::shared_ptr<LookupParameterStorage>>& lookup_parameters_list() const;
  /// The dense parameters of this collection and its subcollections, in the
  /// order they were added (DyNet's name; a copy of parameters_list()).
  std::vector<std::shared_ptr<ParameterStorage>> get_parameter_storages() const;
  std::vector<std::shared_ptr<LookupParameterStorage>> get_lookup_parameter_storages() const;
  /// The parameter whose full name is `name` ("/affine/_1"); throws
  /// std::runtime_error naming it and the collection when there is none.
  std::shared_ptr<ParameterStorage> get_parameter_storage(const std::string& name) const;
  std::shared_ptr<LookupParameterStorage> get_lookup_parameter_storage(const std::string& name) const;
  /// The number of dense parameters (as DyNet, lookup tables are not counted).
  size_t size() const { return parameters_list().size(); }
  std::vector<Parameter> get_parameters() const;
  std::vector<LookupParameter> get_lookup_parameters() const;

 private:
  explicit ParameterCollection(std::shared_ptr<ParameterCollectionStorage> s) : storage_(std::move(s)) {}
  std::shared_ptr<ParameterCollectionStorage> storage_;
};

/// DyNet 1's name for ParameterCollection.
using Model = ParameterCollection;

}  // namespace dynet_lite
