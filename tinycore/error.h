// Two kinds of failure: user mistakes throw tc::Error; broken internal invariants abort via TC_CHECK.
#pragma once

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

}  // namespace tc

// Internal invariant: a failure is a bug in tinycore, so abort loudly with where and why.
#define TC_CHECK(cond, ...)                                                            \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "%s:%d: internal check failed: %s: %s\n", __FILE__, __LINE__, \
                   #cond, absl::StrCat(__VA_ARGS__).c_str());                          \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)
