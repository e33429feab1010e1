// TextFileLoader: reads DyNet's text format.  Every load reads and checks all
// it needs before changing any parameter, so a bad file changes nothing.
#include <sstream>

#include "dynet_lite/except.h"
#include "dynet_lite/io.h"
#include "dynet_lite/io/text_format.h"

namespace dynet_lite {

using io_detail::EntryInfo;
using io_detail::format_dim;
using io_detail::TextModelReader;

namespace {

struct LoadedData {
  std::vector<float> values, grads;  // grads empty: ZERO_GRAD
};

[[noreturn]] void fail(const std::string& filename, size_t line, const std::string& what) {
  std::ostringstream os;
  os << "model file '" << filename << "'";
  if (line) os << ", line " << line;
  os << ": " << what;
  throw io_error(os.str());
}

const char* kind(bool lookup) { return lookup ? "LookupParameter" : "Parameter"; }

// Finds the first entry named `key` and reads it; throws when it is missing or of the other kind.
EntryInfo find_entry(TextModelReader& r, const std::string& key, bool lookup, LoadedData& out) {
  EntryInfo e;
  std::vector<std::string> seen;
  while (r.next(e)) {
    if (e.name != key) {
      if (seen.size() < 5) seen.push_back(e.name);
      continue;
    }
    if (e.lookup != lookup)
      fail(r.filename(), e.header_line,
           "entry '" + key + "' is a " + kind(e.lookup) + ", not a " + kind(lookup));
    r.read_data(e, out.values, &out.grads);
    return e;
  }
  std::ostringstream os;
  os << "no entry named '" << key << "'";
  if (!seen.empty()) {
    os << " (it has";
    for (const auto& s : seen) os << " '" << s << "'";
    os << (seen.size() == 5 ? " ...)" : ")");
  } else {
    os << " (it has no entries)";
  }
  fail(r.filename(), 0, os.str());
}

void store(ParameterStorage& p, const LoadedData& d) {
  p.device->copy_from_host(p.values.v, d.values.data(), d.values.size());
  if (d.grads.empty()) {
    p.clear_gradient();
  } else {
    p.device->copy_from_host(p.g.v, d.grads.data(), d.grads.size());
    p.nonzero_grad = true;
    ++p.gradient_writes;
  }
}

void store(LookupParameterStorage& p, const LoadedData& d) {
  p.device->copy_from_host(p.all_values.v, d.values.data(), d.values.size());
  p.all_updated = true;  // so that clear_gradient() clears every row
  p.clear_gradient();
  if (!d.grads.empty()) {
    p.device->copy_from_host(p.dense_grads().v, d.grads.data(), d.grads.size());
    p.all_updated = true;  // a dense gradient: the next update touches every row
    p.nonzero_grad = true;
  }
}

void check_dim(const std::string& filename, const EntryInfo& e, const Dim& want, const std::string& target) {
  if (e.dim == want) return;
  fail(filename, e.header_line,
       "dimension mismatch: '" + e.name + "' is " + format_dim(e.dim) + " in the file but " + target + " is " +
           format_dim(want));
}

// Reads the entry `key` (the storage's own name when empty) of a LookupParameter
// (`lookup`) or a Parameter into `p` of dimension `dim`; `what` names its kind in
// a dimension error ("the parameter").
template <class Storage>
void populate_storage(const std::string& filename, Storage& p, const Dim& dim, const std::string& key, bool lookup,
                      const char* what) {
  std::string k = key.empty() ? p.name : key;
  TextModelReader r(filename);
  LoadedData d;
  EntryInfo e = find_entry(r, k, lookup, d);
  check_dim(filename, e, dim, std::string(what) + " '" + p.name + "'");
  store(p, d);
}

// The last path component of a key, usable as a parameter name ("" when not).
std::string name_from_key(const std::string& key) {
  size_t slash = key.find_last_of('/');
  std::string last = slash == std::string::npos ? key : key.substr(slash + 1);
  if (last.find_first_of(" #/\n\t") != std::string::npos) return "";
  return last;
}

}  // namespace

TextFileLoader::TextFileLoader(const std::string& filename) : filename_(filename) {
  TextModelReader probe(filename);  // throws when missing
}

TextFileLoader::~TextFileLoader() = default;

std::vector<std::string> TextFileLoader::keys() const {
  TextModelReader r(filename_);
  std::vector<std::string> out;
  EntryInfo e;
  while (r.next(e)) out.push_back(e.name);
  return out;
}

void TextFileLoader::populate(ParameterCollection& model, const std::string& key) {
  std::string prefix = key;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  const auto& params = model.parameters_list();
  const auto& lookups = model.lookup_parameters_list();
  std::vector<LoadedData> pdata(params.size()), ldata(lookups.size());
  size_t np = 0, nl = 0;

  TextModelReader r(filename_);
  EntryInfo e;
  while (r.next(e)) {
    if (!prefix.empty() && e.name.compare(0, prefix.size(), prefix) != 0) continue;
    size_t& n = e.lookup ? nl : np;
    size_t have = e.lookup ? lookups.size() : params.size();
    if (n >= have) {
      std::ostringstream os;
      os << "too many " << kind(e.lookup) << " entries" << (key.empty() ? "" : " under key '" + key + "'")
         << ": '" << e.name << "' would be number " << n + 1 << " but the collection '" << model.get_fullname()
         << "' has " << have;
      fail(filename_, e.header_line, os.str());
    }
    if (e.lookup) {
      check_dim(filename_, e, lookups[n]->all_dim, "the lookup parameter '" + lookups[n]->name + "'");
      r.read_data(e, ldata[n].values, &ldata[n].grads);
    } else {
      check_dim(filename_, e, params[n]->dim, "the parameter '" + params[n]->name + "'");
      r.read_data(e, pdata[n].values, &pdata[n].grads);
    }
    ++n;
  }
  if (np != params.size() || nl != lookups.size()) {
    std::ostringstream os;
    os << "too few entries" << (key.empty() ? "" : " under key '" + key + "'") << ": the file has " << np
       << " Parameter and " << nl << " LookupParameter entries, the collection '" << model.get_fullname()
       << "' has " << params.size() << " and " << lookups.size();
    fail(filename_, 0, os.str());
  }
  for (size_t i = 0; i < params.size(); ++i) store(*params[i], pdata[i]);
  for (size_t i = 0; i < lookups.size(); ++i) store(*lookups[i], ldata[i]);
}

void TextFileLoader::populate(Parameter& param, const std::string& key) {
  ParameterStorage& p = param.get_storage();
  populate_storage(filename_, p, p.dim, key, false, "the parameter");
}

void TextFileLoader::populate(LookupParameter& param, const std::string& key) {
  LookupParameterStorage& p = param.get_storage();
  populate_storage(filename_, p, p.all_dim, key, true, "the lookup parameter");
}

Parameter TextFileLoader::load_param(ParameterCollection& model, const std::string& key) {
  DYNET_LITE_ARG_CHECK(!key.empty(), "TextFileLoader::load_param: empty key for '" << filename_ << "'");
  TextModelReader r(filename_);
  LoadedData d;
  EntryInfo e = find_entry(r, key, false, d);
  Parameter p = model.add_parameters(e.dim, name_from_key(key));
  store(p.get_storage(), d);
  return p;
}

LookupParameter TextFileLoader::load_lookup_param(ParameterCollection& model, const std::string& key) {
  DYNET_LITE_ARG_CHECK(!key.empty(), "TextFileLoader::load_lookup_param: empty key for '" << filename_ << "'");
  TextModelReader r(filename_);
  LoadedData d;
  EntryInfo e = find_entry(r, key, true, d);
  Dim row = e.dim;
  unsigned rows = row.d[row.nd - 1];
  --row.nd;
  LookupParameter lp = model.add_lookup_parameters(rows, row, name_from_key(key));
  store(lp.get_storage(), d);
  return lp;
}

}  // namespace dynet_lite
