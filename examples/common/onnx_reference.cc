#include "common/onnx_reference.h"

#include <stdexcept>

#include "common/util.h"

namespace examples {

namespace {

template <class T>
std::string list(const std::vector<T>& v) {
  std::ostringstream os;
  os.precision(9);
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  os << "]";
  return os.str();
}

void append(std::ostringstream& os, const std::string& item) {
  if (os.tellp() > 0) os << ",";
  os << item;
}

}  // namespace

void add_export_options(CLI::App& app, std::string& export_path, std::string& reference_path,
                        const std::string& more) {
  const char* group = "ONNX export (with --load MODEL, or after training)";
  app.add_option("--export", export_path,
                 "write the trained network as an ONNX model (opset 17) to FILE,\nto run in ONNX Runtime" + more)
      ->type_name("FILE")
      ->group(group);
  app.add_option("--export-reference", reference_path,
                 "with --export: write the test set's inputs and dynet_lite's\noutputs to FILE (JSON) for "
                 "tests/onnx_check.py")
      ->type_name("FILE")
      ->group(group);
}

void check_export_available(const std::string& export_path) {
#ifndef DYNET_LITE_ONNX
  if (!export_path.empty())
    throw std::invalid_argument("--export: dynet_lite was built without the ONNX exporter (DYNET_LITE_ONNX=OFF)");
#else
  (void)export_path;
#endif
}

void ReferenceWriter::begin_run() {
  if (open_) end_run();
  inputs_.str("");
  outputs_.str("");
  open_ = true;
}

void ReferenceWriter::end_run() {
  if (runs_) out_ << ",\n";
  out_ << "{\"inputs\":{" << inputs_.str() << "},\"outputs\":{" << outputs_.str() << "}}";
  ++runs_;
  open_ = false;
}

void ReferenceWriter::ids(const std::string& name, const std::vector<long>& shape, const std::vector<long>& data) {
  append(inputs_, "\"" + name + "\":{\"dtype\":\"int64\",\"shape\":" + list(shape) + ",\"data\":" + list(data) + "}");
}

void ReferenceWriter::floats(const std::string& name, const std::vector<long>& shape, const std::vector<float>& data) {
  append(inputs_, "\"" + name + "\":{\"dtype\":\"float32\",\"shape\":" + list(shape) + ",\"data\":" + list(data) + "}");
}

void ReferenceWriter::output(const std::string& name, const std::vector<long>& shape, const std::vector<float>& data,
                             const std::string& compare) {
  append(outputs_, "\"" + name + "\":{\"dtype\":\"float32\",\"shape\":" + list(shape) + ",\"data\":" + list(data) +
                       ",\"compare\":\"" + compare + "\"}");
}

void ReferenceWriter::picked_sum(const std::string& name, const std::vector<long>& picks, float value,
                                 const std::string& compare) {
  append(outputs_, "\"" + name + "\":{\"dtype\":\"float32\",\"shape\":[],\"data\":" + list(std::vector<float>{value}) +
                       ",\"pick_sum\":" + list(picks) + ",\"compare\":\"" + compare + "\"}");
}

void ReferenceWriter::save(const std::string& path) {
  if (open_) end_run();
  write_file_atomically(path, "[" + out_.str() + "]\n");
}

}  // namespace examples
