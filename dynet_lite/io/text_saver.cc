// TextFileSaver: DyNet's text format, written atomically (temp file, fsync, rename).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "dynet_lite/except.h"
#include "dynet_lite/io.h"
#include "dynet_lite/io/temp_files.h"
#include "dynet_lite/io/text_format.h"

namespace dynet_lite {

using io_detail::append_values;
using io_detail::format_dim;

struct TextFileSaver::Entry {
  bool lookup;
  std::string key;
  Dim dim;  // all_dim for a table
  Device* device;
  const float* values;
  const float* grads;  // null: ZERO_GRAD (unless table_grads)
  size_t size;
  const LookupParameterStorage* table_grads = nullptr;  // a table's gradient, written whole
};

namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw io_error(what + ": " + std::strerror(errno));
}

void write_all(int fd, const char* p, size_t n, const std::string& tmp) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw_errno("TextFileSaver: writing '" + tmp + "' failed");
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// Removes the temporary file unless the save completed.
struct TempFile {
  std::string path;
  int fd = -1;
  bool done = false;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!done) ::unlink(path.c_str());
  }
};

void check_key(const std::string& key, const std::string& filename) {
  DYNET_LITE_ARG_CHECK(!key.empty(), "TextFileSaver: empty key for a parameter saved to '" << filename << "'");
  DYNET_LITE_ARG_CHECK(key.find_first_of(" \t\r\n") == std::string::npos,
                       "TextFileSaver: key '" << key << "' for '" << filename << "' contains white space");
}

std::vector<float> to_host(Device* device, const float* p, size_t n) {
  std::vector<float> h(n);
  device->copy_to_host(h.data(), p, n);
  return h;
}

}  // namespace

TextFileSaver::TextFileSaver(const std::string& filename, bool append) : filename_(filename), keep_existing_(append) {
  DYNET_LITE_ARG_CHECK(!filename.empty(), "TextFileSaver: empty file name");
  std::string dir = io_detail::directory_of(filename);
  struct stat st;
  DYNET_LITE_CHECK(::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode), io_error,
                   "TextFileSaver: cannot write '" << filename << "': directory '" << dir << "' does not exist");
  struct stat target;
  DYNET_LITE_CHECK(::stat(filename.c_str(), &target) != 0 || S_ISREG(target.st_mode), io_error,
                   "TextFileSaver: cannot write '" << filename << "': it exists and is not a regular file");
}

TextFileSaver::~TextFileSaver() = default;

void TextFileSaver::save(const ParameterCollection& model, const std::string& key) {
  std::string prefix = key;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  const std::string own = model.get_fullname();
  auto key_for = [&](const std::string& name) {
    if (key.empty()) return name;
    // Parameters of a collection carry its name as their prefix.
    DYNET_LITE_ASSERT(name.compare(0, own.size(), own) == 0, "parameter '" << name << "' outside '" << own << "'");
    return prefix + name.substr(own.size());
  };
  std::vector<Entry> entries;
  for (const auto& p : model.parameters_list())
    entries.push_back({false, key_for(p->name), p->dim, p->device, p->values.v, p->nonzero_grad ? p->g.v : nullptr,
                       p->size()});
  for (const auto& p : model.lookup_parameters_list()) {
    entries.push_back({true, key_for(p->name), p->all_dim, p->device, p->all_values.v, nullptr, p->size(),
                       p->has_grad() ? p.get() : nullptr});
  }
  write_entries(entries);
}

void TextFileSaver::save(const Parameter& param, const std::string& key) {
  const ParameterStorage& p = param.get_storage();
  write_entries({{false, key.empty() ? p.name : key, p.dim, p.device, p.values.v, p.nonzero_grad ? p.g.v : nullptr,
                  p.size()}});
}

void TextFileSaver::save(const LookupParameter& param, const std::string& key) {
  const LookupParameterStorage& p = param.get_storage();
  write_entries({{true, key.empty() ? p.name : key, p.all_dim, p.device, p.all_values.v, nullptr, p.size(),
                  p.has_grad() ? &p : nullptr}});
}

void TextFileSaver::write_entries(const std::vector<Entry>& entries) {
  for (const Entry& e : entries) check_key(e.key, filename_);

  io_detail::remove_dead_temporaries(filename_);
  TempFile tmp;
  tmp.path = io_detail::temporary_path(filename_);
  tmp.fd = ::open(tmp.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (tmp.fd < 0) throw_errno("TextFileSaver: cannot create '" + tmp.path + "' to save '" + filename_ + "'");

  // The old content first: append mode, or this saver's earlier saves.
  if (keep_existing_) {
    int old = ::open(filename_.c_str(), O_RDONLY | O_CLOEXEC);
    if (old >= 0) {
      std::vector<char> buf(1 << 20);
      for (;;) {
        ssize_t r = ::read(old, buf.data(), buf.size());
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
          int err = errno;
          ::close(old);
          errno = err;
          throw_errno("TextFileSaver: reading the existing '" + filename_ + "' failed");
        }
        if (r == 0) break;
        write_all(tmp.fd, buf.data(), static_cast<size_t>(r), tmp.path);
      }
      ::close(old);
    } else if (errno != ENOENT) {
      throw_errno("TextFileSaver: cannot read the existing '" + filename_ + "' to append to it");
    }
  }

  std::string data, header;
  for (const Entry& e : entries) {
    data.clear();
    std::vector<float> v = to_host(e.device, e.values, e.size);
    append_values(data, v.data(), v.size());
    const bool with_grads = e.grads || e.table_grads;
    if (with_grads) {
      std::vector<float> g(e.size);
      if (e.table_grads)
        e.table_grads->copy_gradient_to_host(g.data());
      else
        e.device->copy_to_host(g.data(), e.grads, e.size);
      append_values(data, g.data(), g.size());
    }
    header = std::string(e.lookup ? io_detail::kLookupTag : io_detail::kParameterTag) + " " + e.key + " " +
             format_dim(e.dim) + " " + std::to_string(data.size()) + " " +
             (with_grads ? io_detail::kFullGrad : io_detail::kZeroGrad) + "\n";
    write_all(tmp.fd, header.data(), header.size(), tmp.path);
    write_all(tmp.fd, data.data(), data.size(), tmp.path);
  }

  if (::fsync(tmp.fd) != 0) throw_errno("TextFileSaver: flushing '" + tmp.path + "' to disk failed");
  int fd = tmp.fd;
  tmp.fd = -1;
  if (::close(fd) != 0) throw_errno("TextFileSaver: closing '" + tmp.path + "' failed");
  if (::rename(tmp.path.c_str(), filename_.c_str()) != 0)
    throw_errno("TextFileSaver: cannot replace '" + filename_ + "' with '" + tmp.path + "'");
  tmp.done = true;
  io_detail::sync_directory_of(filename_);  // the rename itself made durable
  keep_existing_ = true;
}

}  // namespace dynet_lite
