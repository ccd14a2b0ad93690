// Small shared helpers: environment knobs and shape formatting.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"

namespace tc {

// An integer environment variable (DEBUG, NOOPT, ...), `fallback` when unset or not a number.
inline int getenv_int(const char* name, int fallback = 0) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  return *end ? fallback : static_cast<int>(x);
}

inline int debug_level() { return getenv_int("DEBUG"); }

// "(2, 3)" like Python's tuple repr; "()" for a scalar.
inline std::string fmt_shape(const std::vector<int64_t>& s) {
  if (s.size() == 1) return "(" + std::to_string(s[0]) + ",)";
  return "(" + absl::StrJoin(s, ", ") + ")";
}

// Appends `p` to a list of weak pointers that is never walked to clean it: the expired ones are
// dropped whenever the list has doubled since the last time (amortized O(1), bounded by the live).
template <typename T, typename U>
void push_weak(std::vector<std::weak_ptr<T>>& list, size_t& prune_at, const std::shared_ptr<U>& p,
               size_t floor) {
  if (list.size() >= prune_at) {
    std::erase_if(list, [](const std::weak_ptr<T>& w) { return w.expired(); });
    prune_at = std::max(floor, 2 * list.size());
  }
  list.push_back(p);
}

}  // namespace tc
