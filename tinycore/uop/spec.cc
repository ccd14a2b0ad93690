#include "tinycore/uop/spec.h"

#include <array>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "tinycore/helpers.h"

namespace tc {
namespace {

enum class ArgKind { kAny, kNone, kInt, kInts, kNumber, kName };
// What a node's dtype must be, against its sources' (scalar types: vector widths and pointers
// are codegen's business).
enum class Result {
  kAny,
  kVoid,
  kLikeSource,   // the first source's (unary ALU, movement, reductions)
  kLikeSources,  // every source's (binary and ternary ALU)
  kInt32,        // int32, as every source (DOT4's words)
  kBool,         // bool, from sources of one type (comparisons)
  kWhere,        // a bool condition, then two values of the node's type
};
struct OpSpec {
  int min_src = 0, max_src = -1;  // -1: any number
  ArgKind arg = ArgKind::kAny;
  Result dtype = Result::kAny;
};

// The table: ops not named here may take any sources and argument.
const std::array<OpSpec, kNumOps>& spec_table() {
  static const std::array<OpSpec, kNumOps> table = [] {
    std::array<OpSpec, kNumOps> t{};
    auto set = [&](std::initializer_list<Ops> ops, OpSpec s) {
      for (Ops op : ops) t[static_cast<int>(op)] = s;
    };
    set({Ops::SINK}, {0, -1, ArgKind::kAny, Result::kVoid});
    set({Ops::CONST}, {0, 0, ArgKind::kNumber, Result::kAny});
    set({Ops::IOTA}, {0, 0, ArgKind::kInts, Result::kAny});
    set({Ops::BUFFER, Ops::DEFINE_GLOBAL}, {0, -1, ArgKind::kInts, Result::kAny});
    set({Ops::CONTIGUOUS, Ops::DETACH}, {1, 1, ArgKind::kAny, Result::kLikeSource});
    set({Ops::CUSTOM_GRAD}, {1, -1, ArgKind::kAny, Result::kLikeSource});
    set({Ops::CUSTOM, Ops::MULTI}, {1, -1, ArgKind::kName, Result::kLikeSource});
    set({Ops::COPY}, {1, 1, ArgKind::kName, Result::kLikeSource});
    set({Ops::RESHAPE, Ops::PERMUTE, Ops::EXPAND, Ops::PAD, Ops::SHRINK, Ops::FLIP},
        {1, 1, ArgKind::kInts, Result::kLikeSource});
    set({Ops::REDUCE_AXIS}, {1, 1, ArgKind::kInts, Result::kLikeSource});
    set({Ops::REDUCE}, {1, -1, ArgKind::kInt, Result::kLikeSource});
    set({Ops::EXP2, Ops::EXP, Ops::LOG2, Ops::SIN, Ops::SQRT, Ops::RECIP, Ops::NEG, Ops::TRUNC},
        {1, 1, ArgKind::kNone, Result::kLikeSource});
    set({Ops::CAST, Ops::BITCAST}, {1, 1, ArgKind::kNone, Result::kAny});
    set({Ops::ADD, Ops::SUB, Ops::MUL, Ops::FDIV, Ops::IDIV, Ops::MOD, Ops::MAX, Ops::AND, Ops::OR,
         Ops::XOR},
        {2, 2, ArgKind::kNone, Result::kLikeSources});
    set({Ops::SHL, Ops::SHR}, {2, 2, ArgKind::kNone, Result::kLikeSource});
    set({Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ}, {2, 2, ArgKind::kNone, Result::kBool});
    set({Ops::WHERE}, {3, 3, ArgKind::kNone, Result::kWhere});
    set({Ops::MULACC}, {3, 3, ArgKind::kNone, Result::kLikeSources});
    set({Ops::DOT4}, {3, 3, ArgKind::kNone, Result::kInt32});
    set({Ops::RANGE}, {1, -1, ArgKind::kInt, Result::kAny});
    set({Ops::DEFINE_ACC}, {1, -1, ArgKind::kInt, Result::kAny});
    return t;
  }();
  return table;
}

bool arg_is(const Arg& arg, ArgKind kind) {
  switch (kind) {
    case ArgKind::kAny:
      return true;
    case ArgKind::kNone:
      return std::holds_alternative<std::monostate>(arg);
    case ArgKind::kInt:
      return std::holds_alternative<int64_t>(arg);
    case ArgKind::kInts:
      return std::holds_alternative<std::vector<int64_t>>(arg);
    case ArgKind::kNumber:
      return std::holds_alternative<int64_t>(arg) || std::holds_alternative<double>(arg);
    case ArgKind::kName:
      return std::holds_alternative<std::string>(arg);
  }
  return false;
}

std::string dtype_violation(Result rule, DType dtype, const std::vector<UOpRef>& src) {
  auto same = [](DType a, DType b) { return a.scalar == b.scalar; };
  switch (rule) {
    case Result::kAny:
      return "";
    case Result::kVoid:
      return dtype == dtypes::void_ ? "" : "its dtype must be void";
    case Result::kLikeSource:
      return same(dtype, src[0]->dtype) ? "" : "its dtype must be its source's";
    case Result::kLikeSources:
      for (const UOpRef& s : src)
        if (!same(dtype, s->dtype)) return "its dtype must be each source's";
      return "";
    case Result::kInt32:
      for (const UOpRef& s : src)
        if (s->dtype.scalar != Scalar::Int32) return "it and its sources must be int32";
      return dtype.scalar == Scalar::Int32 ? "" : "it and its sources must be int32";
    case Result::kBool:
      if (!dtypes::is_bool(dtype)) return "a comparison's dtype must be bool";
      return same(src[0]->dtype, src[1]->dtype) ? "" : "its sources must be of one dtype";
    case Result::kWhere:
      if (!dtypes::is_bool(src[0]->dtype)) return "its condition must be bool";
      return same(dtype, src[1]->dtype) && same(dtype, src[2]->dtype)
                 ? ""
                 : "its values' dtype must be its own";
  }
  return "";
}

// Movement and REDUCE_AXIS arguments against the source's shape (UOp::infer reads them).
std::string shape_violation(Ops op, const Shape& in, const std::vector<int64_t>& a) {
  const auto rank = static_cast<int64_t>(in.size());
  auto axis_ok = [&](int64_t x) { return x >= 0 && x < rank; };
  switch (op) {
    case Ops::RESHAPE:
      for (int64_t d : a)
        if (d < 0) return "a dimension is negative";
      return shape_numel(a) == shape_numel(in) ? "" : "the number of elements changes";
    case Ops::EXPAND:
      if (static_cast<int64_t>(a.size()) != rank) return "the rank changes";
      for (int64_t i = 0; i < rank; i++)
        if (a[i] != in[i] && in[i] != 1) return "a dimension other than 1 changes";
      return "";
    case Ops::PERMUTE: {
      if (static_cast<int64_t>(a.size()) != rank) return "the order's length is not the rank";
      std::vector<bool> seen(in.size());
      for (int64_t x : a) {
        if (!axis_ok(x) || seen[x]) return "the order is not a permutation";
        seen[x] = true;
      }
      return "";
    }
    case Ops::PAD:
    case Ops::SHRINK:
      if (static_cast<int64_t>(a.size()) != 2 * rank) return "it needs two numbers a dimension";
      for (int64_t i = 0; i < rank; i++) {
        int64_t b = a[2 * i], e = a[2 * i + 1];
        if (op == Ops::PAD ? b < 0 || e < 0 : b < 0 || b > e || e > in[i])
          return absl::StrCat("dimension ", i, " (", in[i], ") cannot take (", b, ", ", e, ")");
      }
      return "";
    case Ops::FLIP:
      for (int64_t x : a)
        if (!axis_ok(x)) return "an axis is out of range";
      return "";
    case Ops::REDUCE_AXIS: {
      if (a.empty()) return "no reduce op";
      auto r = static_cast<Ops>(a[0]);
      if (r != Ops::ADD && r != Ops::MUL && r != Ops::MAX)
        return "the reduce op is not ADD/MUL/MAX";
      for (size_t i = 1; i < a.size(); i++)
        if (!axis_ok(a[i])) return "an axis is out of range";
      return "";
    }
    default:
      return "";
  }
}

}  // namespace

bool spec_enabled() {
#ifdef NDEBUG
  static const bool on = getenv_int("SPEC", 0) != 0;
#else
  static const bool on = getenv_int("SPEC", 1) != 0;
#endif
  return on;
}

std::string spec_violation(Ops op, DType dtype, const std::vector<UOpRef>& src, const Arg& arg) {
  const OpSpec& s = spec_table()[static_cast<int>(op)];
  const auto n = static_cast<int>(src.size());
  if (n < s.min_src || (s.max_src >= 0 && n > s.max_src))
    return absl::StrCat("it takes ", s.min_src, s.max_src < 0 ? " or more" : "", " sources, not ",
                        n);
  if (!arg_is(arg, s.arg)) return "its argument is of the wrong kind";
  if (std::string why = dtype_violation(s.dtype, dtype, src); !why.empty()) return why;
  if (s.arg == ArgKind::kInts && !src.empty())  // a movement or reduce: checked against its source
    return shape_violation(op, src[0]->shape(), std::get<std::vector<int64_t>>(arg));
  return "";
}

}  // namespace tc
