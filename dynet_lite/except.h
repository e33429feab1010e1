#pragma once
/// \file except.h
/// Exceptions thrown by dynet_lite and the one checking macro used for user errors.
#include <sstream>
#include <stdexcept>
#include <string>

namespace dynet_lite {

/// A user mistake about shapes or dimensions (DyNet's name is kept).
class dim_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A user mistake about an index (lookup row, pick position, batch element).
class index_error : public std::out_of_range {
 public:
  using std::out_of_range::out_of_range;
};

/// Not available in this build or on this device.
class unsupported_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A value went NaN or infinite while set_check_validity(true) was on.
class numeric_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reading or writing a model file failed.
class io_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bug inside dynet_lite itself (never a user mistake).
class internal_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace dynet_lite

/// Throws `ExceptionType` whose message is built from the stream expression `msg`,
/// only when `cond` is false.  Used for every user error.
#define DYNET_LITE_CHECK(cond, ExceptionType, msg)            \
  do {                                                        \
    if (__builtin_expect(!(cond), 0)) {                       \
      std::ostringstream dynet_lite_check_oss_;               \
      dynet_lite_check_oss_ << msg;                           \
      throw ExceptionType(dynet_lite_check_oss_.str());       \
    }                                                         \
  } while (0)

/// Shorthand for shape errors: `DYNET_LITE_DIM_CHECK(a == b, "op: ...")`.
#define DYNET_LITE_DIM_CHECK(cond, msg) DYNET_LITE_CHECK(cond, ::dynet_lite::dim_error, msg)
#define DYNET_LITE_INDEX_CHECK(cond, msg) DYNET_LITE_CHECK(cond, ::dynet_lite::index_error, msg)
#define DYNET_LITE_ARG_CHECK(cond, msg) DYNET_LITE_CHECK(cond, std::invalid_argument, msg)

/// Internal invariant; failure means a dynet_lite bug.  Throws, never aborts.
#define DYNET_LITE_ASSERT(cond, msg)                                                \
  DYNET_LITE_CHECK(cond, ::dynet_lite::internal_error,                              \
                   "internal error at " << __FILE__ << ":" << __LINE__ << ": " << msg)

// DyNet compatibility spellings.
#define DYNET_INVALID_ARG(msg) DYNET_LITE_CHECK(false, std::invalid_argument, msg)
#define DYNET_RUNTIME_ERR(msg) DYNET_LITE_CHECK(false, std::runtime_error, msg)
#define DYNET_ARG_CHECK(cond, msg) DYNET_LITE_CHECK(cond, std::invalid_argument, msg)
