#include "tinycore/renderer/llvm_dot4.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tc::renderer {

std::string dot4_ir(int width, bool byte_dot, const std::string& a, const std::string& b,
                    const std::string& c,
                    const std::function<std::string(const std::string&)>& emit,
                    std::set<std::string>& declares) {
  std::string words = width ? absl::StrFormat("<%d x i32>", width) : "i32";
  if (byte_dot && (width == 4 || width == 8 || width == 16)) {
    std::string fn = absl::StrFormat("llvm.x86.avx512.vpdpbusd.%d", width * 32);
    declares.insert(absl::StrFormat("declare %s @%s(%s, %s, %s)", words, fn, words, words, words));
    return emit(absl::StrFormat("call %s @%s(%s %s, %s %s, %s %s)", words, fn, words, c, words, a,
                                words, b));
  }
  const int n = std::max(width, 1);
  std::string bytes = absl::StrFormat("<%d x i8>", 4 * n),
              wide = absl::StrFormat("<%d x i32>", 4 * n);
  auto widen = [&](const std::string& x, const char* ext) {
    std::string v = emit(absl::StrCat("bitcast ", words, " ", x, " to ", bytes));
    return emit(absl::StrCat(ext, " ", bytes, " ", v, " to ", wide));
  };
  std::string products =
      emit(absl::StrCat("mul ", wide, " ", widen(a, "zext"), ", ", widen(b, "sext")));
  std::string sum = c;
  for (int k = 0; k < 4; k++) {  // byte k of every word
    std::vector<std::string> picks;
    for (int i = 0; i < n; i++) picks.push_back(absl::StrCat("i32 ", 4 * i + k));
    std::string part =
        width ? emit(absl::StrFormat("shufflevector %s %s, %s poison, <%d x i32> <%s>", wide,
                                     products, wide, n, absl::StrJoin(picks, ", ")))
              : emit(absl::StrFormat("extractelement %s %s, i32 %d", wide, products, k));
    sum = emit(absl::StrCat("add ", words, " ", sum, ", ", part));
  }
  return sum;
}

}  // namespace tc::renderer
