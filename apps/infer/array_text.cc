#include "apps/infer/array_text.h"

#include <type_traits>

#include "absl/strings/str_format.h"
#include "tinycore/error.h"

namespace tc::infer {
namespace {

constexpr int64_t kThreshold = 20, kEdge = 3;

std::string element(const HostArray& a, int64_t i) {
  return visit_element(a, i, []<typename T>(T v) -> std::string {
    if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
    if constexpr (std::is_floating_point_v<T>) return absl::StrFormat("%.8g", v);
    if constexpr (std::is_integral_v<T>) return std::to_string(v);
  });
}

// The sub-array from axis `dim` on, starting at element `offset`.
std::string text(const HostArray& a, const std::vector<int64_t>& strides, size_t dim,
                 int64_t offset, bool summarize) {
  if (dim == a.shape.size()) return element(a, offset);
  const int64_t n = a.shape[dim];
  // Between rows a line break, between blocks of higher axes as many as the axes below them.
  std::string sep = dim + 1 == a.shape.size() ? ", "
                                              : "," + std::string(a.shape.size() - dim - 1, '\n') +
                                                    std::string(dim + 1, ' ');
  std::string out = "[";
  for (int64_t i = 0; i < n; i++) {
    if (summarize && n > 2 * kEdge && i == kEdge) {
      out += "..." + sep;
      i = n - kEdge;
    }
    out += text(a, strides, dim + 1, offset + i * strides[dim], summarize);
    if (i + 1 < n) out += sep;
  }
  return out + "]";
}

}  // namespace

std::string array_text(const HostArray& a) {
  std::vector<int64_t> strides(a.shape.size(), 1);
  for (size_t d = a.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * a.shape[d];
  return text(a, strides, 0, 0, a.numel() > kThreshold);
}

}  // namespace tc::infer
