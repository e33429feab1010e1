#include "dynet_lite/io/temp_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <vector>

namespace dynet_lite {
namespace io_detail {

std::string temporary_path(const std::string& target) { return target + ".tmp." + std::to_string(::getpid()); }

std::string directory_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

namespace {
// The pid of "<base>.tmp.<pid>", or 0 when `name` is not such a name.
long temporary_pid(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return 0;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::strtol(digits.c_str(), nullptr, 10);
}

bool process_exists(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH; }
}  // namespace

void remove_dead_temporaries(const std::string& target) {
  const size_t slash = target.find_last_of('/');
  const std::string dir = directory_of(target);
  const std::string prefix = (slash == std::string::npos ? target : target.substr(slash + 1)) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> dead;
  while (const dirent* e = ::readdir(d)) {
    const long pid = temporary_pid(e->d_name, prefix);
    if (pid > 0 && pid != ::getpid() && !process_exists(pid)) dead.push_back(e->d_name);
  }
  ::closedir(d);
  for (const std::string& name : dead) ::unlink((dir + "/" + name).c_str());
}

void sync_directory_of(const std::string& path) {
  const int dir = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace io_detail
}  // namespace dynet_lite
