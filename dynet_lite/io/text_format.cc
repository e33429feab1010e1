// DyNet's text model format: writing values and dims, reading entries back.
#include "dynet_lite/io/text_format.h"

#include <cmath>
#include <charconv>
#include <cstring>
#include <sstream>

#include "dynet_lite/except.h"

namespace dynet_lite {
namespace io_detail {

std::string format_dim(const Dim& d) {
  std::string s = "{";
  for (unsigned i = 0; i < d.nd; ++i) {
    if (i) s += ',';
    s += std::to_string(d.d[i]);
  }
  return s + "}";
}

void append_values(std::string& out, const float* v, size_t n) {
  char buf[32];
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ' ';
    // 9 significant digits: enough for every float32 to read back unchanged.
    auto res = std::to_chars(buf, buf + sizeof(buf), v[i], std::chars_format::scientific, 8);
    out.append(buf, res.ptr);
  }
  out += '\n';
}

namespace {

bool parse_unsigned(const std::string& s, size_t& out) {
  if (s.empty()) return false;
  auto res = std::from_chars(s.data(), s.data() + s.size(), out);
  return res.ec == std::errc() && res.ptr == s.data() + s.size();
}

// "{10,5}" -> Dim; false when malformed.
bool parse_dim(const std::string& s, Dim& d) {
  if (s.size() < 3 || s.front() != '{' || s.back() != '}') return false;
  d = Dim();
  size_t pos = 1;
  while (pos < s.size() - 1) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos || comma > s.size() - 1) comma = s.size() - 1;
    size_t v = 0;
    if (!parse_unsigned(s.substr(pos, comma - pos), v) || v == 0 || v > 0xffffffffu) return false;
    if (d.nd >= DYNET_MAX_TENSOR_DIM) return false;
    d.d[d.nd++] = static_cast<unsigned>(v);
    pos = comma + 1;
    if (comma == s.size() - 1) break;
    if (pos >= s.size() - 1) return false;  // trailing comma
  }
  if (d.nd == 0) return false;
  size_t elements = 1;  // at most Dim::kMaxElements, without overflow
  for (unsigned i = 0; i < d.nd; ++i)
    if (__builtin_mul_overflow(elements, size_t(d.d[i]), &elements) || elements > Dim::kMaxElements) return false;
  return true;
}

}  // namespace

TextModelReader::TextModelReader(const std::string& filename) : filename_(filename) {
  in_.open(filename, std::ios::binary);
  DYNET_LITE_CHECK(in_.is_open(), io_error,
                   "cannot open model file '" << filename << "': " << std::strerror(errno));
  in_.seekg(0, std::ios::end);
  file_size_ = in_.tellg();
  in_.seekg(0, std::ios::beg);
}

void TextModelReader::fail(size_t line, const std::string& what) const {
  std::ostringstream os;
  os << "model file '" << filename_ << "'";
  if (line) os << ", line " << line;
  os << ": " << what;
  throw io_error(os.str());
}

bool TextModelReader::next(EntryInfo& e) {
  in_.clear();
  in_.seekg(next_header_pos_);
  std::string line;
  // Blank lines between entries are tolerated.
  for (;;) {
    if (next_header_pos_ >= file_size_) return false;
    if (!std::getline(in_, line)) return false;
    size_t line_no = next_line_++;
    next_header_pos_ = in_.tellg();
    if (in_.eof()) next_header_pos_ = file_size_;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;

    std::istringstream iss(line);
    std::string tag, name, dim, bytes, grad, extra;
    iss >> tag >> name >> dim >> bytes >> grad;
    if (tag != kParameterTag && tag != kLookupTag) {
      std::string shown = line.size() > 40 ? line.substr(0, 40) + "..." : line;
      fail(line_no, "bad header: expected '#Parameter#' or '#LookupParameter#', found '" + shown + "'");
    }
    if (grad.empty() || (iss >> extra))
      fail(line_no, "bad header '" + line + "': expected '" + tag + " <name> <dim> <byte count> ZERO_GRAD|FULL_GRAD'");
    e = EntryInfo();
    e.lookup = tag == kLookupTag;
    e.name = name;
    e.header_line = line_no;
    if (!parse_dim(dim, e.dim)) fail(line_no, "bad dimension '" + dim + "' for '" + name + "'");
    if (e.lookup && e.dim.nd < 2)
      fail(line_no, "bad dimension '" + dim + "' for lookup parameter '" + name +
                        "': expected the row shape followed by the number of rows");
    if (!parse_unsigned(bytes, e.bytes)) fail(line_no, "bad byte count '" + bytes + "' for '" + name + "'");
    if (grad == kFullGrad)
      e.full_grad = true;
    else if (grad != kZeroGrad)
      fail(line_no, "bad gradient flag '" + grad + "' for '" + name + "': expected ZERO_GRAD or FULL_GRAD");
    if (!in_.eof() && in_.tellg() >= 0) e.data_pos = in_.tellg();
    else e.data_pos = file_size_;
    // Compared as sizes: a byte count near 2^64 must not wrap around to an
    // earlier position of the file (and read the same headers forever).
    if (e.bytes > static_cast<size_t>(file_size_ - e.data_pos)) {
      std::ostringstream os;
      os << "truncated file: '" << name << "' needs " << e.bytes << " bytes of data after its header, only "
         << (file_size_ - e.data_pos) << " remain";
      fail(line_no, os.str());
    }
    // Each value takes at least two bytes (a digit and a space or newline):
    // checked before anything is allocated for the shape.
    const size_t values = e.dim.size() * (e.full_grad ? 2 : 1);
    if (values > e.bytes / 2 + 1) {
      std::ostringstream os;
      os << "'" << name << "' " << dim << " needs " << values << " values, more than its " << e.bytes
         << " bytes of data can hold";
      fail(line_no, os.str());
    }
    next_header_pos_ = e.data_pos + static_cast<std::streamoff>(e.bytes);
    next_line_ = line_no + 1 + (e.full_grad ? 2 : 1);
    return true;
  }
}

void TextModelReader::parse_values(const EntryInfo& e, const char* b, const char* end, size_t line, float* out) {
  const size_t want = e.dim.size();
  size_t count = 0;
  const char* p = b;
  while (true) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
    if (p >= end) break;
    const char* tok = p;
    while (p < end && *p != ' ' && *p != '\t' && *p != '\r') ++p;
    const char* num = tok;
    if (*num == '+') ++num;  // DyNet writes with showpos; from_chars rejects '+'
    float v = 0;
    auto res = std::from_chars(num, p, v);
    if (res.ec != std::errc() || res.ptr != p || num == p)
      fail(line, "bad number '" + std::string(tok, std::min<size_t>(p - tok, 40)) + "' in the data of '" +
                     e.name + "'");
    if (!std::isfinite(v))
      fail(line, "value '" + std::string(tok, std::min<size_t>(p - tok, 40)) + "' in the data of '" + e.name +
                     "': a model file holds finite numbers only");
    if (count < want) out[count] = v;
    ++count;
  }
  if (count != want) {
    std::ostringstream os;
    os << "wrong number of values for '" << e.name << "' " << format_dim(e.dim) << ": expected " << want
       << ", found " << count;
    fail(line, os.str());
  }
}

void TextModelReader::read_data(const EntryInfo& e, std::vector<float>& values, std::vector<float>* grads) {
  std::string data(e.bytes, '\0');
  in_.clear();
  in_.seekg(e.data_pos);
  in_.read(&data[0], static_cast<std::streamsize>(e.bytes));
  if (static_cast<size_t>(in_.gcount()) != e.bytes)
    fail(e.header_line, "truncated file: could not read the " + std::to_string(e.bytes) + " bytes of data of '" +
                            e.name + "'");
  const size_t nlines = e.full_grad ? 2 : 1;
  // The data must be exactly nlines lines, each ending in '\n'.
  size_t first_nl = data.find('\n');
  size_t second_nl = first_nl == std::string::npos ? std::string::npos : data.find('\n', first_nl + 1);
  size_t last_nl = nlines == 1 ? first_nl : second_nl;
  if (last_nl == std::string::npos || last_nl + 1 != data.size()) {
    std::ostringstream os;
    os << "the data of '" << e.name << "' does not match the byte count " << e.bytes << " in its header (line "
       << e.header_line << "): expected " << nlines << (nlines == 1 ? " line" : " lines") << " of exactly "
       << e.bytes << " bytes";
    fail(e.header_line + 1, os.str());
  }
  values.resize(e.dim.size());
  parse_values(e, data.data(), data.data() + first_nl, e.header_line + 1, values.data());
  if (grads) {
    if (e.full_grad) {
      grads->resize(e.dim.size());
      parse_values(e, data.data() + first_nl + 1, data.data() + second_nl, e.header_line + 2, grads->data());
    } else {
      grads->clear();
    }
  }
}

}  // namespace io_detail
}  // namespace dynet_lite
