#include "dynet_lite/model.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "dynet_lite/except.h"
#include "dynet_lite/init.h"

namespace dynet_lite {

namespace {
Device* pick_device(Device* d) { return d ? d : default_device(); }

Tensor allocate_tensor(const Dim& d, Device* dev, DeviceMempool pool) {
  float* p = static_cast<float*>(dev->allocate(std::max<size_t>(d.size(), 1) * sizeof(float)));
  Tensor t(d, p, dev, pool);
  dev->fill(p, 0.f, d.size());
  return t;
}

float squared_norm_host(const Tensor& t, size_t n) {
  std::vector<float> h(n);
  t.device->copy_to_host(h.data(), t.v, n);
  double s = 0;
  for (float x : h) s += static_cast<double>(x) * x;
  return static_cast<float>(s);
}

void scale_host(const Tensor& t, size_t n, float a) {
  std::vector<float> h(n);
  t.device->copy_to_host(h.data(), t.v, n);
  for (float& x : h) x *= a;
  t.device->copy_from_host(t.v, h.data(), n);
}
}  // namespace

// ------------------------------------------------------------ ParameterStorage

ParameterStorage::ParameterStorage(const Dim& d, const ParameterInit& init, const std::string& name,
                                   Device* dev)
    : dim(d), name(name), device(dev) {
  DYNET_LITE_DIM_CHECK(d.bd == 1, "add_parameters: a parameter cannot have a batch dimension, got " << d);
  DYNET_LITE_DIM_CHECK(d.size() > 0, "add_parameters: parameter '" << name << "' has no elements: " << d);
  values = allocate_tensor(d, dev, DeviceMempool::PS);
  g = allocate_tensor(d, dev, DeviceMempool::PS);
  init.initialize_params(values);
}

ParameterStorage::~ParameterStorage() {
  device->release(values.v);
  device->release(g.v);
}

void ParameterStorage::zero() { device->fill(values.v, 0.f, size()); }
void ParameterStorage::clear_gradient() {
  device->fill(g.v, 0.f, size());
  nonzero_grad = false;
}
void ParameterStorage::scale_parameters(float a) { scale_host(values, size(), a); }
void ParameterStorage::scale_gradient(float a) {
  scale_host(g, size(), a);
  ++gradient_writes;
}

void ParameterStorage::accumulate_grad(const float* d) {
  std::lock_guard<std::mutex> lock(mutex);
  float* dst = g.v;
  size_t n = size();
  if (!nonzero_grad)  // zero since the last update: a copy, without reading it
    std::copy(d, d + n, dst);
  else
    for (size_t i = 0; i < n; ++i) dst[i] += d[i];
  nonzero_grad = true;
  ++gradient_writes;
}

float ParameterStorage::gradient_squared_l2_norm() const { return squared_norm_host(g, size()); }

// ------------------------------------------------------- LookupParameterStorage

LookupParameterStorage::LookupParameterStorage(unsigned n, const Dim& d, const ParameterInit& init,
                                               const std::string& name, Device* dev)
    : dim(d), name(name), device(dev) {
  DYNET_LITE_DIM_CHECK(d.bd == 1, "add_lookup_parameters: rows cannot have a batch dimension, got " << d);
  DYNET_LITE_DIM_CHECK(n > 0 && d.size() > 0,
                       "add_lookup_parameters: '" << name << "' needs rows and elements, got " << n << " x " << d);
  all_dim = d;
  all_dim.add_dim(n);
  all_values = allocate_tensor(all_dim, dev, DeviceMempool::PS);
  size_t row = d.size();
  values.reserve(n);
  for (unsigned i = 0; i < n; ++i) values.emplace_back(d, all_values.v + i * row, dev, DeviceMempool::PS);
  if (dev->type != DeviceType::CPU) dense_grads_locked();  // device kernels add into the whole table's
  init.initialize_params(all_values);
}

LookupParameterStorage::~LookupParameterStorage() {
  device->release(all_values.v);
  if (all_grads.v) device->release(all_grads.v);
  if (row_grads) device->release(row_grads);
}

Tensor& LookupParameterStorage::dense_grads() {
  std::lock_guard<std::mutex> lock(mutex);
  return dense_grads_locked();
}

Tensor& LookupParameterStorage::dense_grads_locked() {
  if (all_grads.v) return all_grads;
  all_grads = allocate_tensor(all_dim, device, DeviceMempool::PS);  // zeroed
  const size_t row = dim.size(), n = num_rows();
  grads.reserve(n);
  for (size_t i = 0; i < n; ++i) grads.emplace_back(dim, all_grads.v + i * row, device, DeviceMempool::PS);
  // The touched rows' gradients move to their places; non_zero_grads stays.
  for (size_t k = 0; k < non_zero_grads.size(); ++k)
    device->copy(all_grads.v + size_t(non_zero_grads.data()[k]) * row, row_grads + k * row, row);
  if (row_grads) device->release(row_grads);
  row_grads = nullptr;
  row_grads_capacity = 0;
  return all_grads;
}

void LookupParameterStorage::copy_gradient_to_host(float* out) const {
  if (!sparse_gradient()) {
    device->copy_to_host(out, all_grads.v, size());
    return;
  }
  const size_t row = dim.size();
  std::fill(out, out + size(), 0.f);
  for (size_t k = 0; k < non_zero_grads.size(); ++k)
    std::copy(row_grads + k * row, row_grads + (k + 1) * row, out + size_t(non_zero_grads.data()[k]) * row);
}

void LookupParameterStorage::zero() { device->fill(all_values.v, 0.f, size()); }

void LookupParameterStorage::clear_gradient() {
  if (sparse_gradient()) {
    // The rows' slots are forgotten; a row's first gradient overwrites its slot.
  } else if (all_updated) {
    device->fill(all_grads.v, 0.f, size());
  } else {  // one kernel for all the rows on a GPU
    device->fill_rows(all_grads.v, non_zero_grads.data(), static_cast<unsigned>(non_zero_grads.size()), dim.size(),
                      0.f);
  }
  non_zero_grads.clear();
  all_updated = false;
  nonzero_grad = false;
}

void LookupParameterStorage::scale_parameters(float a) { scale_host(all_values, size(), a); }
void LookupParameterStorage::scale_gradient(float a) {
  if (!sparse_gradient()) {
    scale_host(all_grads, size(), a);
    return;
  }
  const size_t n = non_zero_grads.size() * dim.size();
  for (size_t i = 0; i < n; ++i) row_grads[i] *= a;
}

void LookupParameterStorage::accumulate_grad(unsigned index, const float* d) { accumulate_grads(&index, 1, d); }

void LookupParameterStorage::accumulate_grads(const unsigned* index, size_t n, const float* d) {
  std::lock_guard<std::mutex> lock(mutex);
  const size_t row = dim.size();
  if (!sparse_gradient()) {
    for (size_t k = 0; k < n; ++k, d += row) {
      float* dst = grads[index[k]].v;
      for (size_t i = 0; i < row; ++i) dst[i] += d[i];
      non_zero_grads.insert(index[k]);
    }
  } else {
    for (size_t k = 0; k < n; ++k, d += row) {
      bool added = false;
      const size_t slot = non_zero_grads.insert(index[k], &added);
      if (slot >= row_grads_capacity) {
        const size_t capacity = std::max<size_t>(64, 2 * row_grads_capacity);
        float* grown = static_cast<float*>(device->allocate(capacity * row * sizeof(float)));
        if (row_grads) {
          std::copy(row_grads, row_grads + slot * row, grown);
          device->release(row_grads);
        }
        row_grads = grown;
        row_grads_capacity = capacity;
      }
      float* dst = row_grads + slot * row;
      if (added)
        std::copy(d, d + row, dst);
      else
        for (size_t i = 0; i < row; ++i) dst[i] += d[i];
    }
  }
  if (n > 0) nonzero_grad = true;
}

void LookupParameterStorage::initialize(unsigned index, const std::vector<float>& val) {
  DYNET_LITE_INDEX_CHECK(index < num_rows(), "LookupParameter::initialize: row " << index << " out of range for '"
                                                                                 << name << "' with " << num_rows()
                                                                                 << " rows");
  DYNET_LITE_DIM_CHECK(val.size() == dim.size(), "LookupParameter::initialize: " << val.size()
                                                     << " values for rows of shape " << dim << " in '" << name << "'");
  device->copy_from_host(values[index].v, val.data(), val.size());
}

float LookupParameterStorage::gradient_squared_l2_norm() const {
  if (sparse_gradient()) {
    double total = 0;
    const size_t n = non_zero_grads.size() * dim.size();
    for (size_t i = 0; i < n; ++i) total += double(row_grads[i]) * row_grads[i];
    return static_cast<float>(total);
  }
  if (all_updated) return squared_norm_host(all_grads, size());
  // one kernel and one copy back for all the rows on a GPU
  return device->rows_squared_norm(all_grads.v, non_zero_grads.data(), static_cast<unsigned>(non_zero_grads.size()),
                                   dim.size());
}

// ------------------------------------------------------------ handles

ParameterStorage& Parameter::get_storage() const {
  DYNET_LITE_ARG_CHECK(p != nullptr, "Parameter: used before being created by ParameterCollection::add_parameters");
  return *p;
}
void Parameter::zero() { get_storage().zero(); }
void Parameter::clip_inplace(float left, float right) {
  Tensor t = get_storage().values;
  TensorTools::clip(t, left, right);
}
void Parameter::set_value(const std::vector<float>& val) {
  ParameterStorage& s = get_storage();
  DYNET_LITE_DIM_CHECK(val.size() == s.size(), "Parameter::set_value: " << val.size() << " values for '" << s.name
                                                                       << "' of shape " << s.dim);
  s.device->copy_from_host(s.values.v, val.data(), val.size());
}

LookupParameterStorage& LookupParameter::get_storage() const {
  DYNET_LITE_ARG_CHECK(p != nullptr,
                       "LookupParameter: used before being created by ParameterCollection::add_lookup_parameters");
  return *p;
}

// ------------------------------------------------------------ collections

struct ParameterCollectionStorage {
  std::string name = "/";
  std::shared_ptr<ParameterCollectionStorage> parent;
  std::vector<std::shared_ptr<ParameterStorage>> params;
  std::vector<std::shared_ptr<LookupParameterStorage>> lookup_params;
  std::map<std::string, unsigned> name_counts;  // for unique names in this namespace
  float weight_decay_lambda = 0.f;

  std::string unique_name(const std::string& requested) {
    DYNET_LITE_ARG_CHECK(requested.find_first_of(" #/\n\t") == std::string::npos,
                         "ParameterCollection: name '" << requested << "' may not contain spaces, '#' or '/'");
    std::string base = requested.empty() ? "_" : requested;
    unsigned& count = name_counts[base];
    std::string out = requested.empty() ? base + std::to_string(count) : (count ? base + "_" + std::to_string(count) : base);
    ++count;
    return out;
  }
};

ParameterCollection::ParameterCollection() : storage_(std::make_shared<ParameterCollectionStorage>()) {
  storage_->weight_decay_lambda = current_params().weight_decay;
}
ParameterCollection::~ParameterCollection() = default;

Parameter ParameterCollection::add_parameters(const Dim& d, float scale, const std::string& name, Device* device) {
  if (scale == 0.0f) return add_parameters(d, ParameterInitGlorot(), name, device);
  return add_parameters(d, ParameterInitUniform(scale), name, device);
}
Parameter ParameterCollection::add_parameters(const Dim& d, Device* device) {
  return add_parameters(d, 0.0f, "", device);
}
Parameter ParameterCollection::add_parameters(const Dim& d, const std::string& name, Device* device) {
  return add_parameters(d, 0.0f, name, device);
}
Parameter ParameterCollection::add_parameters(const Dim& d, const ParameterInit& init, const std::string& name,
                                              Device* device) {
  std::string full = storage_->name + storage_->unique_name(name);
  auto p = std::make_shared<ParameterStorage>(d, init, full, pick_device(device));
  for (ParameterCollectionStorage* s = storage_.get(); s; s = s->parent.get()) s->params.push_back(p);
  return Parameter(p);
}

LookupParameter ParameterCollection::add_lookup_parameters(unsigned n, const Dim& d, const std::string& name,
                                                           Device* device) {
  return add_lookup_parameters(n, d, ParameterInitGlorot(true), name, device);
}
LookupParameter ParameterCollection::add_lookup_parameters(unsigned n, const Dim& d, const ParameterInit& init,
                                                           const std::string& name, Device* device) {
  std::string full = storage_->name + storage_->unique_name(name);
  auto p = std::make_shared<LookupParameterStorage>(n, d, init, full, pick_device(device));
  for (ParameterCollectionStorage* s = storage_.get(); s; s = s->parent.get()) s->lookup_params.push_back(p);
  return LookupParameter(p);
}

ParameterCollection ParameterCollection::add_subcollection(const std::string& name, float weight_decay_lambda) {
  auto child = std::make_shared<ParameterCollectionStorage>();
  child->name = storage_->name + storage_->unique_name(name) + "/";
  child->parent = storage_;
  child->weight_decay_lambda = weight_decay_lambda >= 0 ? weight_decay_lambda : storage_->weight_decay_lambda;
  return ParameterCollection(child);
}

size_t ParameterCollection::parameter_count() const {
  size_t n = 0;
  for (auto& p : storage_->params) n += p->size();
  for (auto& p : storage_->lookup_params) n += p->size();
  return n;
}

float ParameterCollection::gradient_l2_norm() const {
  double s = 0;
  for (auto& p : storage_->params) s += p->gradient_squared_l2_norm();
  for (auto& p : storage_->lookup_params) s += p->gradient_squared_l2_norm();
  return static_cast<float>(std::sqrt(s));
}

void ParameterCollection::reset_gradient() {
  for (auto& p : storage_->params) p->clear_gradient();
  for (auto& p : storage_->lookup_params) p->clear_gradient();
}

void ParameterCollection::set_weight_decay_lambda(float lambda) {
  DYNET_LITE_ARG_CHECK(lambda >= 0.f && lambda < 1.f,
                       "set_weight_decay_lambda: lambda must be in [0, 1), got " << lambda);
  storage_->weight_decay_lambda = lambda;
}
float ParameterCollection::get_weight_decay_lambda() const { return storage_->weight_decay_lambda; }
std::string ParameterCollection::get_fullname() const { return storage_->name; }

const std::vector<std::shared_ptr<ParameterStorage>>& ParameterCollection::parameters_list() const {
  return storage_->params;
}
const std::vector<std::shared_ptr<LookupParameterStorage>>& ParameterCollection::lookup_parameters_list() const {
  return storage_->lookup_params;
}
std::vector<std::shared_ptr<ParameterStorage>> ParameterCollection::get_parameter_storages() const {
  return storage_->params;
}
std::vector<std::shared_ptr<LookupParameterStorage>> ParameterCollection::get_lookup_parameter_storages() const {
  return storage_->lookup_params;
}

namespace {
template <class List>
typename List::value_type find_by_name(const List& list, const std::string& name, const char* what,
                                       const std::string& collection) {
  for (const auto& p : list)
    if (p->name == name) return p;
  DYNET_LITE_CHECK(false, std::runtime_error,
                   what << ": no parameter named '" << name << "' in collection '" << collection << "'");
  return nullptr;
}
}  // namespace

std::shared_ptr<ParameterStorage> ParameterCollection::get_parameter_storage(const std::string& name) const {
  return find_by_name(storage_->params, name, "get_parameter_storage", storage_->name);
}
std::shared_ptr<LookupParameterStorage> ParameterCollection::get_lookup_parameter_storage(
    const std::string& name) const {
  return find_by_name(storage_->lookup_params, name, "get_lookup_parameter_storage", storage_->name);
}

std::vector<Parameter> ParameterCollection::get_parameters() const {
  std::vector<Parameter> r;
  for (auto& p : storage_->params) r.emplace_back(p);
  return r;
}
std::vector<LookupParameter> ParameterCollection::get_lookup_parameters() const {
  std::vector<LookupParameter> r;
  for (auto& p : storage_->lookup_params) r.emplace_back(p);
  return r;
}

}  // namespace dynet_lite
