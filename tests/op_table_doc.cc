// Writes docs/ops.md, the table of operations, from the op table itself:
//   op_table_doc                 prints the Markdown to stdout
//   op_table_doc --check FILE    fails (exit 1) when FILE differs from it
// so the table in the docs can never disagree with the code (ctest op_table_doc).
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "dynet_lite/ops/op_table.h"
#ifdef DYNET_LITE_ONNX
#include "dynet_lite/export/onnx_forms.h"
#endif

namespace {

using namespace dynet_lite;

const char* batching(const OpInfo& r) {
  switch (r.batch) {
    case BatchKind::Never:
      return "alone";
    case BatchKind::Elementwise:
      return "stacked";
    case BatchKind::Custom:
      return "stacked, own rule";
  }
  return "?";
}

const char* onnx_form(OpKind op) {
#ifdef DYNET_LITE_ONNX
  const char* f = onnx_export::onnx_form_name(op);
  return f ? f : "-";
#else
  (void)op;
  return "(not built)";
#endif
}

std::string markdown() {
  std::ostringstream os;
  os << "# Operations\n\n"
     << "Generated from the op table (`dynet_lite/ops/*.cc`, each family file's `register_*_ops`) by\n"
     << "`build/tests/op_table_doc > docs/ops.md`; the test `op_table_doc` fails when this file is stale.\n\n"
     << "- **batches**: how automatic batching runs nodes of the op from different instances: *stacked*\n"
     << "  (arguments stacked along the batch, shared parameters passed once, one kernel call), *stacked,\n"
     << "  own rule* (the same, with the members' parameters merged by the op), or *alone*.\n"
     << "- **pure**: equal expressions of the op are computed once (`--dynet-cse`); *per node* where it\n"
     << "  depends on the node (a lookup of `&index` reads the index when the graph runs).\n"
     << "- **ONNX**: what the op becomes in an exported ONNX model (`dynet_lite/onnx.h`, opset 17); *-*: it\n"
     << "  has no ONNX form, and exporting a graph that holds it is an error naming the op and the node.\n\n"
     << "| op | family | CPU | CUDA | batches | pure | ONNX |\n"
     << "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (unsigned i = 0; i < kNumOps; ++i) {
    const OpInfo& r = op_info(static_cast<OpKind>(i));
    os << "| `" << r.name << "` | " << r.family << " | yes | " << (r.devices == Devices::CpuAndCuda ? "yes" : "-")
       << " | " << batching(r) << " | "
       << (r.pure_node ? "per node"
           : r.pure    ? "yes"
                       : "-")
       << " | " << onnx_form(static_cast<OpKind>(i)) << " |\n";
  }
  return os.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string table = markdown();
  if (argc == 3 && std::strcmp(argv[1], "--check") == 0) {
    std::ifstream in(argv[2], std::ios::binary);
    std::ostringstream file;
    file << in.rdbuf();
    if (!in || file.str() != table) {
      std::cerr << argv[2] << " is stale or missing: regenerate it with\n  build/tests/op_table_doc > docs/ops.md\n";
      return 1;
    }
    std::cout << argv[2] << " matches the op table\n";
    return 0;
  }
  if (argc != 1) {
    std::cerr << "usage: op_table_doc [--check FILE]\n";
    return 2;
  }
  std::cout << table;
  return 0;
}
