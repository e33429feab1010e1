// A stand-in for libdynet_lite_onnx.so built from another version of
// dynet_lite: its model layout version is not the library's, so the exporter
// must refuse it without calling it (examples/CMakeLists.txt,
// example_tagger_export_other_module).
#include <cstdint>
#include <string>

extern "C" __attribute__((visibility("default"))) int32_t dynet_lite_onnx_ir_version() { return -1; }

extern "C" __attribute__((visibility("default"))) bool dynet_lite_onnx_serialize(const void*, std::string*,
                                                                                 std::string* error) {
  *error = "a module of another version was called";
  return false;
}
