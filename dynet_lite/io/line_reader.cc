#include "dynet_lite/io/line_reader.h"

#include "dynet_lite/except.h"

namespace dynet_lite {

LineReader::LineReader(const std::string& path, const char* what)
    : file_(std::make_unique<std::ifstream>(path)), in_(file_.get()), name_(path) {
  DYNET_LITE_CHECK(file_->is_open(), io_error, what << ": cannot open '" << path << "'");
}

}  // namespace dynet_lite
