// Loading the serialising module (onnx_module.h) at the first export.
#include "dynet_lite/export/onnx_module.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace dynet_lite {
namespace onnx_export {

namespace {

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

struct Module {
  SerializeFn serialize = nullptr;
  std::string failure;  // where it was looked for and why it was not taken
};

constexpr const char* kModuleFile = "libdynet_lite_onnx.so";

// The folder of the file this code was linked into: the program (the library
// is static) or a shared object that links it.
std::string own_folder() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&serialize_model), &info) || !info.dli_fname) return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// Where the module is looked for, in this order: the file DYNET_LITE_ONNX_MODULE
// names; the one this build wrote (a program run from the build tree); the one
// its installation puts under the library folder; beside the program, or in
// ../lib from it (an installation moved to another prefix); the dynamic
// loader's own search (LD_LIBRARY_PATH, the program's run path).
std::vector<std::string> candidates() {
  std::vector<std::string> c;
  if (const char* env = std::getenv("DYNET_LITE_ONNX_MODULE"); env && *env) {
    c.emplace_back(env);
    return c;
  }
#ifdef DYNET_LITE_ONNX_MODULE_BUILT
  c.emplace_back(DYNET_LITE_ONNX_MODULE_BUILT);
#endif
#ifdef DYNET_LITE_ONNX_MODULE_INSTALLED
  c.emplace_back(DYNET_LITE_ONNX_MODULE_INSTALLED);
#endif
  const std::string folder = own_folder();
  if (!folder.empty()) {
    c.push_back(folder + "/" + kModuleFile);
    c.push_back(folder + "/../lib/" + kModuleFile);
  }
  c.emplace_back(kModuleFile);
  return c;
}

Module load() {
  Module m;
  for (const std::string& path : candidates()) {
    if (path.find('/') != std::string::npos && !file_exists(path)) {  // a path, not a name to search
      m.failure += "\n  " + path + ": no such file";
      continue;
    }
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      m.failure += "\n  " + path + ": " + (why ? why : "not loaded");
      continue;
    }
    auto version = reinterpret_cast<VersionFn>(dlsym(lib, kVersionSymbol));
    auto serialize = reinterpret_cast<SerializeFn>(dlsym(lib, kSerializeSymbol));
    if (!version || !serialize) {
      m.failure += "\n  " + path + ": not a dynet_lite ONNX module (no " + kSerializeSymbol + ")";
      dlclose(lib);
      continue;
    }
    if (version() != kModelIrVersion) {
      m.failure += "\n  " + path + ": built from another version of dynet_lite (model layout " +
                   std::to_string(version()) + ", this library writes " + std::to_string(kModelIrVersion) + ")";
      dlclose(lib);
      continue;
    }
    m.serialize = serialize;  // stays loaded for the program's life
    return m;
  }
  return m;
}

const Module& module() {
  static const Module loaded = load();  // thread-safe initialisation
  return loaded;
}

}  // namespace

std::string serialize_model(const ModelIr& model) {
  const Module& m = module();
  if (!m.serialize)
    throw std::runtime_error(std::string("ONNX export: cannot load the serialising module ") + kModuleFile +
                             " (set DYNET_LITE_ONNX_MODULE to its path); looked in:" + m.failure);
  std::string bytes, error;
  if (!m.serialize(&model, &bytes, &error)) throw std::runtime_error("ONNX export: " + error);
  return bytes;
}

}  // namespace onnx_export
}  // namespace dynet_lite
