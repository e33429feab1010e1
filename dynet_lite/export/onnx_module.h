#pragma once
// The serialising module: ONNX's protobuf messages and checker are used by a
// shared library of their own (libdynet_lite_onnx.so, built from
// export/module/onnx_serialize.cc), which the exporter loads at its first
// export.  A program that never exports maps neither protobuf nor ONNX (about
// 3 MB of resident memory and their start-up work).
#include <cstdint>
#include <string>

#include "dynet_lite/export/onnx_model.h"

namespace dynet_lite {
namespace onnx_export {

/// The model checked by ONNX's checker and serialised (a ModelProto's bytes).
/// Throws std::runtime_error naming the places looked in when the module
/// cannot be loaded, or with the checker's message when the model fails it.
std::string serialize_model(const ModelIr& model);

// The module's entry points (extern "C").  The module is built from this
// source tree with the same compiler: it reads ModelIr as the library writes
// it, and refuses a model whose layout version differs (kModelIrVersion).
constexpr int32_t kModelIrVersion = 1;
constexpr const char* kVersionSymbol = "dynet_lite_onnx_ir_version";
constexpr const char* kSerializeSymbol = "dynet_lite_onnx_serialize";
using VersionFn = int32_t (*)();
/// Returns true with the bytes, or false with the reason in `error`.
using SerializeFn = bool (*)(const ModelIr* model, std::string* bytes, std::string* error);

}  // namespace onnx_export
}  // namespace dynet_lite
