#pragma once
// The temporary files of atomic saves: "<target>.tmp.<pid>", written, flushed,
// then renamed over the target.  A save killed before its rename leaves its
// temporary behind; the next save to the same target removes those whose
// process is gone.
#include <string>

namespace dynet_lite {
namespace io_detail {

/// "<target>.tmp.<this process's id>".
std::string temporary_path(const std::string& target);
/// Removes the files "<target>.tmp.<pid>" whose process `pid` no longer exists
/// (a live process's, this one's included, are kept).  Errors are ignored: a
/// leftover that cannot be removed does not stop a save.
void remove_dead_temporaries(const std::string& target);
/// The folder of `path` ("." when it names none).
std::string directory_of(const std::string& path);
/// Flushes the folder of `path` to disk, so that a rename in it is durable;
/// failure is ignored (the data renamed is not lost by it).
void sync_directory_of(const std::string& path);

}  // namespace io_detail
}  // namespace dynet_lite
