// libdynet_lite_onnx.so: an exported model (export/onnx_model.h) as ONNX's
// protobuf messages, checked by ONNX's checker and serialised.  The only code
// of the project that links protobuf and ONNX; the exporter loads it at its
// first export (export/onnx_module.cc).
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <exception>
#include <string>

#include "dynet_lite/export/onnx_model.h"
#include "dynet_lite/export/onnx_module.h"

namespace {

using namespace dynet_lite::onnx_export;

void write_graph(const GraphIr& g, onnx::GraphProto* out);

void write_value_info(const ValueInfoIr& v, onnx::ValueInfoProto* out) {
  out->set_name(v.name_);
  onnx::TypeProto_Tensor* t = out->mutable_type()->mutable_tensor_type();
  t->set_elem_type(v.elem_type_);
  onnx::TensorShapeProto* s = t->mutable_shape();
  for (const ValueInfoIr::Dimension& d : v.dims_) {
    if (!d.param.empty())
      s->add_dim()->set_dim_param(d.param);
    else
      s->add_dim()->set_dim_value(d.value);
  }
}

void write_attribute(const AttributeIr& a, onnx::AttributeProto* out) {
  out->set_name(a.name_);
  out->set_type(static_cast<onnx::AttributeProto::AttributeType>(a.type_));
  switch (a.type_) {
    case AttributeIr::kIntAttr:
      out->set_i(a.i_);
      break;
    case AttributeIr::kFloatAttr:
      out->set_f(a.f_);
      break;
    case AttributeIr::kStringAttr:
      out->set_s(a.s_);
      break;
    case AttributeIr::kIntsAttr:
      for (int64_t v : a.ints_) out->add_ints(v);
      break;
    case AttributeIr::kGraphAttr:
      if (a.g_) write_graph(*a.g_, out->mutable_g());
      break;
  }
}

void write_initializer(const InitializerIr& t, onnx::TensorProto* out) {
  out->set_name(t.name_);
  out->set_data_type(t.data_type_);
  for (int64_t d : t.dims_) out->add_dims(d);
  for (int64_t v : t.int64_data_) out->add_int64_data(v);
  for (float v : t.float_data_) out->add_float_data(v);
  if (!t.raw_data_.empty()) out->set_raw_data(t.raw_data_);
}

void write_graph(const GraphIr& g, onnx::GraphProto* out) {
  out->set_name(g.name_);
  for (const NodeIr& n : g.nodes_) {
    onnx::NodeProto* p = out->add_node();
    p->set_op_type(n.op_type_);
    if (!n.name_.empty()) p->set_name(n.name_);
    for (const std::string& i : n.inputs_) p->add_input(i);
    for (const std::string& o : n.outputs_) p->add_output(o);
    for (const AttributeIr& a : n.attributes_) write_attribute(a, p->add_attribute());
  }
  for (const InitializerIr& t : g.initializers_) write_initializer(t, out->add_initializer());
  for (const ValueInfoIr& v : g.inputs_) write_value_info(v, out->add_input());
  for (const ValueInfoIr& v : g.outputs_) write_value_info(v, out->add_output());
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t dynet_lite_onnx_ir_version() { return kModelIrVersion; }

extern "C" __attribute__((visibility("default"))) bool dynet_lite_onnx_serialize(const ModelIr* model,
                                                                                 std::string* bytes,
                                                                                 std::string* error) {
  try {
    onnx::ModelProto m;
    m.set_ir_version(model->ir_version);
    m.set_producer_name(model->producer_name);
    for (const auto& [domain, version] : model->opsets) {
      onnx::OperatorSetIdProto* op = m.add_opset_import();
      op->set_domain(domain);
      op->set_version(version);
    }
    write_graph(model->graph, m.mutable_graph());
    try {
      onnx::checker::check_model(m);
    } catch (const std::exception& e) {
      *error = std::string("the written model fails ONNX's checker: ") + e.what();
      return false;
    }
    if (!m.SerializeToString(bytes)) {
      *error = "serialising the model failed";
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}
