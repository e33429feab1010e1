// GraphWriter: nodes, constants and the small compositions the op emitters share.
#include "dynet_lite/export/onnx_writer.h"

#include <cstring>
#include <utility>

#include "dynet_lite/devices.h"
#include "dynet_lite/model.h"

namespace dynet_lite {
namespace onnx_export {

std::vector<int64_t> canon_dims(const Dim& d) {
  const unsigned r = canon_rank(d);
  std::vector<int64_t> v(r);
  for (unsigned k = 0; k < r; ++k) v[r - 1 - k] = k < d.nd ? d.d[k] : 1;
  return v;
}

std::string ModelState::unique(const std::string& base) {
  int& n = used[base];
  ++n;
  return n == 1 ? base : base + "_" + std::to_string(n);
}

namespace {

// A float initializer holding a device's memory (copied to the host).
std::string device_initializer(ModelState& m, const std::string& name, const Device* device, const float* values,
                               const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::vector<float> host(n);
  device->copy_to_host(host.data(), values, n);
  GraphWriter w(m.main, &m);
  return w.initializer(name.empty() ? "parameter" : name, host.data(), shape);
}

}  // namespace

std::string ModelState::parameter(const ParameterStorage* p) {
  auto it = params.find(p);
  if (it != params.end()) return it->second;
  std::vector<int64_t> shape{1};
  for (int64_t d : canon_dims(p->dim)) shape.push_back(d);
  return params[p] = device_initializer(*this, p->name, p->device, p->values.v, shape);
}

std::string ModelState::lookup_table(const LookupParameterStorage* lp) {
  auto it = params.find(lp);
  if (it != params.end()) return it->second;
  std::vector<int64_t> shape{static_cast<int64_t>(lp->num_rows())};
  for (int64_t d : canon_dims(lp->dim)) shape.push_back(d);
  return params[lp] = device_initializer(*this, lp->name, lp->device, lp->all_values.v, shape);
}

NodeIr* GraphWriter::add(const std::string& op, const std::vector<std::string>& inputs, const std::string& hint) {
  NodeIr* n = g_->add_node();
  n->set_op_type(op);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(m_->unique(hint.empty() ? op : hint));
  return n;
}

std::string GraphWriter::op(const std::string& op, const std::vector<std::string>& inputs, const std::string& hint) {
  return out(add(op, inputs, hint));
}

std::string GraphWriter::ints(const std::vector<int64_t>& v, bool as_vector) {
  InitializerIr* t = m_->main->add_initializer();
  t->set_name(m_->unique("const_i"));
  t->set_data_type(kInt64);
  if (as_vector) t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
  return t->name();
}

std::string GraphWriter::floats(const std::vector<float>& v, const std::vector<int64_t>& shape) {
  InitializerIr* t = m_->main->add_initializer();
  t->set_name(m_->unique("const_f"));
  t->set_data_type(kFloat);
  for (int64_t d : shape) t->add_dims(d);
  for (float x : v) t->add_float_data(x);
  return t->name();
}

std::string GraphWriter::initializer(const std::string& name, const float* data, const std::vector<int64_t>& shape) {
  InitializerIr* t = m_->main->add_initializer();
  t->set_name(m_->unique(name));
  t->set_data_type(kFloat);
  size_t n = 1;
  for (int64_t d : shape) {
    t->add_dims(d);
    n *= static_cast<size_t>(d);
  }
  // raw_data is little-endian float32, the layout of the values in memory.
  t->set_raw_data(std::string(reinterpret_cast<const char*>(data), n * sizeof(float)));
  return t->name();
}

std::string GraphWriter::slice(const std::string& x, int64_t axis, int64_t start, int64_t end) {
  return op("Slice", {x, ints({start}), ints({end}), ints({axis})});
}

std::string GraphWriter::unsqueeze(const std::string& x, const std::vector<int64_t>& axes) {
  return op("Unsqueeze", {x, ints(axes)});
}

std::string GraphWriter::squeeze(const std::string& x, const std::vector<int64_t>& axes) {
  return op("Squeeze", {x, ints(axes)});
}

std::string GraphWriter::reshape_keep_lead(const std::string& x, unsigned lead_and_batch,
                                           const std::vector<int64_t>& dims) {
  std::vector<int64_t> shape(lead_and_batch, 0);  // 0: copy the input's dim at that index
  shape.insert(shape.end(), dims.begin(), dims.end());
  return op("Reshape", {x, ints(shape)});
}

std::string GraphWriter::align(const std::string& x, unsigned from, unsigned to) {
  if (from >= to) return x;
  std::vector<int64_t> axes;
  for (unsigned k = to; k > from; --k) axes.push_back(-static_cast<int64_t>(k));
  return unsqueeze(x, axes);
}

void GraphWriter::set_int(NodeIr* n, const char* name, int64_t v) {
  AttributeIr* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeIr::kIntAttr);
  a->set_i(v);
}

void GraphWriter::set_float(NodeIr* n, const char* name, float v) {
  AttributeIr* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeIr::kFloatAttr);
  a->set_f(v);
}

void GraphWriter::set_ints(NodeIr* n, const char* name, const std::vector<int64_t>& v) {
  AttributeIr* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeIr::kIntsAttr);
  for (int64_t x : v) a->add_ints(x);
}

void GraphWriter::set_string(NodeIr* n, const char* name, const std::string& v) {
  AttributeIr* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeIr::kStringAttr);
  a->set_s(v);
}

void GraphWriter::set_graph(NodeIr* n, const char* name, GraphIr&& g) {
  AttributeIr* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeIr::kGraphAttr);
  *a->mutable_g() = std::move(g);
}

void set_tensor_type(ValueInfoIr* v, ElemType elem_type, const std::vector<std::string>& symbolic,
                     const std::vector<int64_t>& dims) {
  v->elem_type_ = elem_type;
  v->dims_.clear();
  for (const auto& n : symbolic) v->dims_.push_back({n, 0});
  for (int64_t d : dims) v->dims_.push_back({"", d});
}

}  // namespace onnx_export
}  // namespace dynet_lite
