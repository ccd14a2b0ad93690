#include "tinycore/uop/printer.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tc {

std::string print_arg(const Arg& arg) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "";
        else if constexpr (std::is_same_v<T, int64_t>) return absl::StrCat(v);
        else if constexpr (std::is_same_v<T, double>) return absl::StrFormat("%.9g", v);
        else if constexpr (std::is_same_v<T, std::string>) return "\"" + v + "\"";
        else return "[" + absl::StrJoin(v, ",") + "]";
      },
      arg);
}

std::string print_graph(const UOpRef& root) {
  std::string out;
  absl::flat_hash_map<const UOp*, int> num;
  for (const UOp* u : root->toposort()) {
    int n = static_cast<int>(num.size());
    num[u] = n;
    std::vector<int> src;
    for (const UOpRef& s : u->src) src.push_back(num.at(s.get()));
    absl::StrAppend(&out, n, " ", op_name(u->op), " ", u->dtype.name());
    if (!src.empty()) absl::StrAppend(&out, " (", absl::StrJoin(src, ","), ")");
    std::string a = print_arg(u->arg);
    if (!a.empty()) absl::StrAppend(&out, " ", a);
    out += "\n";
  }
  return out;
}

}  // namespace tc
