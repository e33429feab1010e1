#pragma once
// An ONNX model as plain C++ data: what the exporter writes (onnx_writer.h) and
// what the serialising module (onnx_serialize.cc, a shared library of its own,
// loaded by onnx_module.h at the first export) turns into ONNX's protobuf
// messages, checks and serialises.  So the library itself links neither
// protobuf nor ONNX, and a program maps them only when it exports.
//
// The setters are named after those of the protobuf messages the data stands
// for (onnx.proto: ModelProto, GraphProto, NodeProto, AttributeProto,
// TensorProto, ValueInfoProto); the fields, with a trailing underscore, are
// read by the module.  Containers are deques: what add_*() returns stays valid
// while more is added, as a protobuf repeated field's elements do.
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dynet_lite {
namespace onnx_export {

/// Element types (the codes of onnx.proto's TensorProto.DataType).
enum ElemType : int32_t { kFloat = 1, kInt64 = 7, kBool = 9 };

struct GraphIr;

struct AttributeIr {
  /// The codes of onnx.proto's AttributeProto.AttributeType.
  enum Type : int32_t { kFloatAttr = 1, kIntAttr = 2, kStringAttr = 3, kGraphAttr = 5, kIntsAttr = 7 };

  std::string name_;
  Type type_ = kIntAttr;
  int64_t i_ = 0;
  float f_ = 0.f;
  std::string s_;
  std::vector<int64_t> ints_;
  std::unique_ptr<GraphIr> g_;

  void set_name(const std::string& v) { name_ = v; }
  void set_type(Type t) { type_ = t; }
  void set_i(int64_t v) { i_ = v; }
  void set_f(float v) { f_ = v; }
  void set_s(const std::string& v) { s_ = v; }
  void add_ints(int64_t v) { ints_.push_back(v); }
  GraphIr* mutable_g();
};

struct NodeIr {
  std::string op_type_, name_;
  std::vector<std::string> inputs_, outputs_;
  std::deque<AttributeIr> attributes_;

  void set_op_type(const std::string& v) { op_type_ = v; }
  void set_name(const std::string& v) { name_ = v; }
  void add_input(const std::string& v) { inputs_.push_back(v); }
  void add_output(const std::string& v) { outputs_.push_back(v); }
  const std::string& output(size_t k) const { return outputs_.at(k); }
  AttributeIr* add_attribute() { return &attributes_.emplace_back(); }
};

/// A constant (an initializer): int64 or float data, or raw little-endian bytes.
struct InitializerIr {
  std::string name_;
  ElemType data_type_ = kFloat;
  std::vector<int64_t> dims_;
  std::vector<int64_t> int64_data_;
  std::vector<float> float_data_;
  std::string raw_data_;

  void set_name(const std::string& v) { name_ = v; }
  const std::string& name() const { return name_; }
  void set_data_type(ElemType t) { data_type_ = t; }
  void add_dims(int64_t v) { dims_.push_back(v); }
  void add_int64_data(int64_t v) { int64_data_.push_back(v); }
  void add_float_data(float v) { float_data_.push_back(v); }
  void set_raw_data(std::string bytes) { raw_data_ = std::move(bytes); }
};

/// A graph input or output: a tensor of `elem_type_`, each dimension named
/// (symbolic, `param` set) or fixed.
struct ValueInfoIr {
  struct Dimension {
    std::string param;
    int64_t value = 0;
  };
  std::string name_;
  ElemType elem_type_ = kFloat;
  std::vector<Dimension> dims_;

  void set_name(const std::string& v) { name_ = v; }
  const std::string& name() const { return name_; }
};

struct GraphIr {
  std::string name_;
  std::deque<NodeIr> nodes_;
  std::deque<InitializerIr> initializers_;
  std::deque<ValueInfoIr> inputs_, outputs_;

  void set_name(const std::string& v) { name_ = v; }
  NodeIr* add_node() { return &nodes_.emplace_back(); }
  InitializerIr* add_initializer() { return &initializers_.emplace_back(); }
  ValueInfoIr* add_input() { return &inputs_.emplace_back(); }
  ValueInfoIr* add_output() { return &outputs_.emplace_back(); }
};

inline GraphIr* AttributeIr::mutable_g() {
  if (!g_) g_ = std::make_unique<GraphIr>();
  return g_.get();
}

struct ModelIr {
  int64_t ir_version = 0;
  std::string producer_name;
  std::vector<std::pair<std::string, int64_t>> opsets;  // (domain, version)
  GraphIr graph;
};

}  // namespace onnx_export
}  // namespace dynet_lite
