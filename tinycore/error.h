// Two kinds of failure: user mistakes throw tc::Error; broken internal invariants abort via
// TC_CHECK.
#pragma once

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tc {

// A mistake by the caller (bad shape, axis, dtype, data length ...). The message names the
// operation and the values involved.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename... Args>
[[noreturn]] void fail(const absl::FormatSpec<Args...>& fmt, const Args&... args) {
  throw Error(absl::StrFormat(fmt, args...));
}

// A step TinyJit cannot capture or replay as written (Python: JitError, a RuntimeError): the
// message names the argument or output and what changed.
class JitError : public Error {
 public:
  using Error::Error;
};

template <typename... Args>
[[noreturn]] void jit_fail(const absl::FormatSpec<Args...>& fmt, const Args&... args) {
  throw JitError(absl::StrFormat(fmt, args...));
}

// Whether a failed TC_CHECK throws tc::Error instead of aborting: the Python module sets it, so
// that a bug in tinycore raises in the interpreter instead of killing it.
inline std::atomic<bool> throw_on_internal_check{false};

}  // namespace tc

// Internal invariant: a failure is a bug in tinycore, so abort loudly with where and why (or
// throw, under tc::throw_on_internal_check).
#define TC_CHECK(cond, ...)                                                                  \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::string tc_check_msg_ =                                                            \
          absl::StrFormat("%s:%d: internal check failed: %s: %s", __FILE__, __LINE__, #cond, \
                          absl::StrCat(__VA_ARGS__));                                        \
      if (tc::throw_on_internal_check) throw tc::Error(tc_check_msg_);                       \
      std::fprintf(stderr, "%s\n", tc_check_msg_.c_str());                                   \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)
