#include "tinycore/renderer/cstyle.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tinycore/error.h"
#include "tinycore/renderer/dialects.h"
#include "tinycore/renderer/walk.h"

namespace tc::renderer {
namespace {

bool is_fp(DType d) { return d == dtypes::float32 || d == dtypes::float64; }
bool is_half(DType d) { return d.scalar == Scalar::Float16; }
bool is_bf16(DType d) { return d.scalar == Scalar::BFloat16; }

// C's operator of each binary op (a MAX but of bools is a function or a conditional), the one
// for bools where it differs (one bit: + and - are ^, * is &), and which operands are cast to the
// unsigned type for the op to wrap (C's signed overflow is undefined).
enum class Wrap { kNone, kLeft, kBoth };
struct Operator {
  Ops op;
  const char* c;
  const char* on_bool = nullptr;
  Wrap wrap = Wrap::kNone;
};
constexpr Operator kOperators[] = {
    {Ops::ADD, "+", "^", Wrap::kBoth},
    {Ops::SUB, "-", "^", Wrap::kBoth},
    {Ops::MUL, "*", "&", Wrap::kBoth},
    {Ops::FDIV, "/"},
    {Ops::IDIV, "/"},
    {Ops::MOD, "%"},
    {Ops::MAX, nullptr, "|"},
    {Ops::CMPLT, "<"},
    {Ops::CMPNE, "!="},
    {Ops::CMPEQ, "=="},
    {Ops::AND, "&"},
    {Ops::OR, "|"},
    {Ops::XOR, "^"},
    {Ops::SHL, "<<", nullptr, Wrap::kLeft},
    {Ops::SHR, ">>"},
};

class CStyle : public Walk {
 public:
  CStyle(const Dialect& lang, const std::vector<UOpRef>& program, const GpuLaunch& plan)
      : Walk("C-style renderer"), lang_(lang), program_(program), plan_(plan) {
    add_rules();
    for (const UOpRef& u : program_) {
      if (u->op == Ops::LANE || u->op == Ops::HREDUCE || u->dtype.count > 1)
        fail("C-style renderer: SIMD lanes are not supported");
    }
    for (const UOpRef& u : program_)
      if (u->dtype == dtypes::index &&
          (u->vmin() < std::numeric_limits<int32_t>::min() || u->vmax() > kInt32Max))
        wide_index_ = true;
    for (const GridDim& d : plan_.grid)
      if (d.groups * d.local > kInt32Max) wide_index_ = true;
  }

  RenderedKernel kernel(const std::string& name) {
    RenderedKernel out;
    std::vector<const UOp*> globals;
    absl::flat_hash_set<const UOp*> written;
    for (const UOpRef& u : program_) {
      uses(u->dtype);
      if (u->op == Ops::DEFINE_GLOBAL) {
        size_t i = static_cast<size_t>(u->arg_ints()[0]);
        if (globals.size() <= i) globals.resize(i + 1);
        globals[i] = u.get();
        uses(u->dtype.base());
      }
      if (u->op == Ops::STORE) written.insert(u->src[0]->src[0].get());
    }
    for (size_t i = 0; i < 3; i++) {
      out.launch.global[i] = plan_.grid[i].groups;
      out.launch.local[i] = plan_.grid[i].local;
    }
    if (plan_.group > 1)
      out.launch.local[0] = plan_.group;  // the output dimensions have one thread each
    out.launch.nargs = static_cast<int>(globals.size());

    define_grid_indices();
    for (const UOpRef& u : program_) render(*u);

    std::vector<std::string> params;
    for (size_t i = 0; i < globals.size(); i++) {
      if (!globals[i]) {  // a buffer the simplified kernel no longer reads (x * 0): unused
        params.push_back(absl::StrCat(lang_.buffer_prefix, "const ", memory_type(dtypes::uint8),
                                      "* ", lang_.restrict_, " data", i));
        continue;
      }
      params.push_back(
          absl::StrCat(lang_.buffer_prefix, written.contains(globals[i]) ? "" : "const ",
                       memory_type(globals[i]->dtype.base()), "* ", lang_.restrict_, " data", i));
    }
    int64_t threads = out.launch.local[0] * out.launch.local[1] * out.launch.local[2];
    std::string& src = out.source;
    if (lang_.fp64_pragma && uses_fp64_)
      absl::StrAppend(&src, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    if (uses_half_ && !lang_.half_include.empty()) absl::StrAppend(&src, lang_.half_include, "\n");
    for (const auto& [helper, text] : helpers_)
      absl::StrAppend(&src, src.empty() ? "" : "\n", text);
    if (!src.empty()) src += "\n";
    absl::StrAppend(&src, lang_.kernel_prefix, " void ",
                    lang_.launch_bounds ? absl::StrCat("__launch_bounds__(", threads, ") ") : "",
                    name, "(", absl::StrJoin(params, ", "), ") {\n", body_, "}\n");
    return out;
  }

 private:
  // ---- the launch grid

  std::string thread_index(size_t dim) const {
    const GridDim& d = plan_.grid[dim];
    std::string t = index_type();
    std::string group = absl::StrCat("(", t, ")", lang_.group_id[dim]);
    if (d.local == 1) return group;  // (also when grouped: local ids number a reduction's threads)
    if (d.groups == 1) return absl::StrCat("(", t, ")", lang_.local_id[dim]);
    return absl::StrCat(group, " * ", d.local, " + ", lang_.local_id[dim]);
  }
  std::string grid_name(size_t dim) const {
    return plan_.grid[dim].ranges.size() == 1 ? range_name(*plan_.grid[dim].ranges[0])
                                              : absl::StrCat("gidx", dim);
  }

  // Each thread's loop indices, at the top of the kernel; merged loops are split by division.
  void define_grid_indices() {
    if (plan_.group > 1) define_group();
    for (size_t dim = 0; dim < 3; dim++) {
      const GridDim& d = plan_.grid[dim];
      if (d.ranges.empty()) continue;
      emit(absl::StrCat(index_type(), " ", grid_name(dim), " = ", thread_index(dim), ";"));
      if (d.ranges.size() == 1) continue;
      int64_t stride = d.extent;
      for (size_t i = 0; i < d.ranges.size(); i++) {
        int64_t e = d.ranges[i]->src[0]->arg_int();
        stride /= e;
        std::string x = grid_name(dim);
        if (stride != 1) x = absl::StrCat(x, " / ", stride);
        if (i != 0) x = absl::StrCat(x, " % ", e);
        emit(absl::StrCat(index_type(), " ", range_name(*d.ranges[i]), " = ", x, ";"));
      }
    }
  }

  std::string shared_name(const UOp& update) const {
    return absl::StrCat("part", update.src[0]->arg_int());
  }

  // The thread's place in its work-group, and the shared arrays of partial results (at the
  // kernel's top: OpenCL wants __local arrays at function scope).
  void define_group() {
    emit(absl::StrCat(index_type(), " lidx = (", index_type(), ")", lang_.local_id[0], ";"));
    for (const UOp* a : plan_.shared)
      emit(absl::StrCat(lang_.shared_prefix, " ", type(shared_dtype(a->dtype)), " ",
                        shared_name(*a), "[", plan_.group, "];"));
  }

  // After a nest: its threads' partial results combined in a tree with the reduce's own op,
  // every thread reading the total (the loop's bounds are the same in all, so all reach each
  // barrier).
  void combine(const std::vector<const UOp*>& updates) {
    for (const UOp* a : updates)
      emit(absl::StrCat(shared_name(*a), "[lidx] = ", acc_name(*a), ";"));
    emit(lang_.barrier);
    std::string t = index_type();
    emit(absl::StrFormat("for (%s step = %d; step > 0; step >>= 1) {", t, plan_.group / 2));
    depth_++;
    emit("if (lidx < step) {");
    depth_++;
    for (const UOp* a : updates) {
      std::string part = shared_name(*a), mine = part + "[lidx]";
      emit(absl::StrCat(
          mine, " = ",
          binary(static_cast<Ops>(a->arg_int()), a->dtype, mine, part + "[lidx + step]"), ";"));
    }
    depth_--;
    emit("}");
    emit(lang_.barrier);
    depth_--;
    emit("}");
    for (const UOp* a : updates) emit(absl::StrCat(acc_name(*a), " = ", shared_name(*a), "[0];"));
  }

  // ---- types and literals

  std::string index_type() const {
    return lang_.types[static_cast<int>(wide_index_ ? Scalar::Int64 : Scalar::Int32)];
  }
  // The scalar a value of `d` is held in while computing.
  DType register_dtype(DType d) const {
    if (d == dtypes::index) return wide_index_ ? dtypes::int64 : dtypes::int32;
    if (is_half(d) && lang_.half == HalfSupport::Storage) return dtypes::float32;
    return d;
  }
  std::string type(DType d) const {
    return lang_.types[static_cast<int>(register_dtype(d).scalar)];
  }
  // Bool is a byte in memory.
  std::string memory_type(DType d) const {
    return lang_.types[static_cast<int>(dtypes::is_bool(d) ? Scalar::UInt8 : d.scalar)];
  }
  // The unsigned type integer math of `d` wraps in (C's signed overflow is undefined).
  std::string wrap_type(DType d) const {
    DType r = register_dtype(d);
    return lang_.types[static_cast<int>(r.itemsize() > 4 ? Scalar::UInt64 : Scalar::UInt32)];
  }
  void uses(DType d) {
    uses_fp64_ = uses_fp64_ || d == dtypes::float64;
    uses_half_ = uses_half_ || is_half(d);
  }

  std::string int_literal(int64_t v, DType d) const {
    DType r = register_dtype(d);
    if (dtypes::is_unsigned(r)) {
      uint64_t u = static_cast<uint64_t>(v);
      if (r == dtypes::uint32) return absl::StrCat(u, "u");
      if (r == dtypes::uint64) return absl::StrCat(u, lang_.uint64_suffix);
      return absl::StrCat(u);
    }
    std::string suffix = r == dtypes::int64 ? lang_.int64_suffix : "";
    if (r == dtypes::int32 && v == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
    if (r == dtypes::int64 && v == std::numeric_limits<int64_t>::min())
      return absl::StrCat("(-9223372036854775807", suffix, " - 1)");
    return v < 0 ? absl::StrCat("(", v, suffix, ")") : absl::StrCat(v, suffix);
  }
  // The shortest decimal that reads back as exactly `v`; inf and NaN from their bits.
  std::string float_literal(double v, bool f64) const {
    if (!std::isfinite(v)) {
      if (f64) {
        uint64_t b;
        std::memcpy(&b, &v, 8);
        return lang_.bitcast("double", absl::StrFormat("0x%016X%s", b, lang_.uint64_suffix));
      }
      float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return lang_.bitcast("float", absl::StrFormat("0x%08Xu", b));
    }
    std::string s;
    for (int precision = 1; precision <= 17; precision++) {
      s = absl::StrFormat("%.*g", precision, v);
      bool exact = f64 ? std::strtod(s.c_str(), nullptr) == v
                       : std::strtof(s.c_str(), nullptr) == static_cast<float>(v);
      if (exact) break;
    }
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    if (!f64) s += "f";
    return std::signbit(v) ? absl::StrCat("(", s, ")") : s;
  }
  std::string literal(const UOp& c) {
    DType d = c.dtype;
    uses(d);
    if (dtypes::is_bool(d)) return c.arg_int() ? "true" : "false";
    if (is_bf16(d)) {
      float f = static_cast<float>(c.const_value());  // already rounded to bfloat16
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return absl::StrFormat("0x%04X", b >> 16);
    }
    if (is_half(d)) {
      std::string f = float_literal(c.const_value(), false);  // exact: half fits in float
      if (lang_.half == HalfSupport::Intrinsics) return absl::StrCat("__float2half(", f, ")");
      if (lang_.half == HalfSupport::Native) return absl::StrCat("(", type(d), ")", f);
      return f;
    }
    if (is_fp(d)) return float_literal(c.const_value(), d == dtypes::float64);
    return int_literal(c.arg_int(), d);
  }
  std::string zero(DType d) { return literal(*UOp::const_(d, 0)); }

  // ---- helper functions, defined once before the kernel when used

  std::string helper(const std::string& name, const std::string& ret, const std::string& params,
                     const std::vector<std::string>& body) {
    if (!helpers_.contains(name)) {
      std::string text =
          absl::StrCat(lang_.helper_prefix, " ", ret, " ", name, "(", params, ") {\n");
      for (const std::string& l : body) absl::StrAppend(&text, "  ", l, "\n");
      helpers_[name] = text + "}\n";
    }
    return name;
  }
  // IEEE maximum, as LLVM's: NaN if either is, and +0 over -0.
  std::string float_max(DType d) {
    std::string t = type(d);
    return helper(d == dtypes::float64 ? "tc_max_f64" : "tc_max_f32", t,
                  absl::StrCat(t, " a, ", t, " b"),
                  {"return a > b ? a : b > a ? b : a != a ? a : b != b ? b : a == 0 ? a + b : a;"});
  }
  // float32 -> bfloat16 bits, rounding to nearest even; NaN stays NaN.
  std::string to_bf16() {
    std::string u32 = lang_.types[static_cast<int>(Scalar::UInt32)];
    return helper("tc_f32_to_bf16", lang_.types[static_cast<int>(Scalar::BFloat16)], "float x",
                  {absl::StrCat(u32, " b = ", lang_.bitcast(u32, "x"), ";"),
                   absl::StrCat("return (", lang_.types[static_cast<int>(Scalar::UInt16)],
                                ")((x != x ? b | 0x400000u : b + 0x7fffu + ((b >> 16) & 1u)) >> "
                                "16);")});
  }
  // Storage-only float16: a float or double rounded to half precision (as a float), and the
  // bits of a half.
  std::string round_to_half(DType from) {
    std::string t = type(from);
    return helper(from == dtypes::float64 ? "tc_round_half_f64" : "tc_round_half_f32", "float",
                  absl::StrCat(t, " x"),
                  {"ushort h;", "vstore_half_rte(x, 0, (half*)&h);",
                   "return vload_half(0, (const half*)&h);"});
  }
  std::string half_bits() {
    return helper("tc_half_bits", "ushort", "float x",
                  {"ushort h;", "vstore_half_rte(x, 0, (half*)&h);", "return h;"});
  }
  std::string half_from_bits() {
    return helper("tc_half_from_bits", "float", "ushort h",
                  {"return vload_half(0, (const half*)&h);"});
  }

  // ---- the body

  void emit(const std::string& s) {
    absl::StrAppend(&body_, std::string(2 * (depth_ + 1), ' '), s, "\n");
  }
  // A new variable of dtype `d` holding `expr`.
  std::string fresh(DType d, const std::string& expr) {
    std::string name = absl::StrCat("val", nval_++);
    emit(absl::StrCat(type(d), " ", name, " = ", expr, ";"));
    return name;
  }
  static std::string range_name(const UOp& r) { return absl::StrCat("ridx", r.arg_int()); }
  static std::string acc_name(const UOp& a) { return absl::StrCat("acc", a.src[0]->arg_int()); }

  // How a source reads: a literal, or what the walk named it (an accumulator's final value is
  // its variable).
  std::string val(const UOpRef& u) { return u->op == Ops::CONST ? literal(*u) : value(*u); }
  std::string operand(const UOp&, const UOpRef& x) override { return val(x); }
  std::string element(const UOp& index) {
    return absl::StrCat("data", index.src[0]->arg_ints()[0], "[", val(index.src[1]), "]");
  }

  // The table: what each op writes, and what its users read. An ALU op is a new variable
  // holding its expression.
  void add_rules() {
    // literals, and addresses their loads and stores read
    rule({Ops::CONST, Ops::INDEX}, [](const UOp&) {});
    rule({Ops::DEFINE_GLOBAL},
         [](const UOp& u, const Operands&) { return absl::StrCat("data", u.arg_ints()[0]); });
    rule({Ops::RANGE}, [this](const UOp& u, const Operands&) {
      open_range(u);
      return range_name(u);
    });
    rule({Ops::END}, [this](const UOp& u) {
      if (closes_.contains(u.src[0].get())) {
        depth_--;
        emit("}");
      }
      if (auto it = plan_.combine_after.find(u.src[0].get()); it != plan_.combine_after.end())
        combine(it->second);
    });
    rule({Ops::DEFINE_ACC}, [this](const UOp& u) {
      emit(absl::StrCat(type(u.dtype), " acc", u.arg_int(), " = ", val(u.src[0]), ";"));
    });
    rule({Ops::ASSIGN}, [this](const UOp& u, const Operands&) {
      std::string acc = acc_name(u);
      emit(absl::StrCat(acc, " = ",
                        binary(static_cast<Ops>(u.arg_int()), u.dtype, acc, val(u.src[1])), ";"));
      return acc;
    });
    rule({Ops::LOAD}, [this](const UOp& u, const Operands&) { return fresh(u.dtype, load(u)); });
    rule({Ops::STORE}, [this](const UOp& u) { store(u); });
    // A cast that is the same C value (a float16 held as a float, bfloat16 as bits) reads its
    // source.
    rule({Ops::CAST}, [this](const UOp& u, const Operands& s) {
      DType d = u.src[0]->dtype;
      std::string x = s[0];
      if ((is_bf16(d) || (is_half(d) && lang_.half != HalfSupport::Storage)) &&
          u.dtype != dtypes::float32)  // via a float32 variable, read by the cast's checks
        x = cast(fresh(dtypes::float32, cast(x, d, dtypes::float32)), dtypes::float32, u.dtype);
      else
        x = cast(x, d, u.dtype);
      return x == s[0] ? x : fresh(u.dtype, x);
    });
    rule({Ops::BITCAST}, [this](const UOp& u, const Operands& s) {
      std::string x = bitcast(s[0], u.src[0]->dtype, u.dtype);
      return x == s[0] ? x : fresh(u.dtype, x);
    });
    rule({Ops::NEG}, [this](const UOp& u, const Operands& s) {
      DType d = u.src[0]->dtype;
      if (is_fp(d) || d == dtypes::index) return fresh(u.dtype, "-" + s[0]);
      if (dtypes::is_bool(d)) return fresh(u.dtype, s[0]);  // -x wraps to x in one bit
      return fresh(u.dtype, absl::StrCat("-(", wrap_type(d), ")", s[0]));
    });
    rule({Ops::RECIP}, [this](const UOp& u, const Operands& s) {
      return fresh(u.dtype, absl::StrCat(literal(*UOp::const_(u.src[0]->dtype, 1)), " / ", s[0]));
    });
    for (auto [op, fn] : kMathFunctions)
      rule({op}, [this, fn = fn](const UOp& u, const Operands& s) {
        return fresh(u.dtype, math(fn, u.src[0]->dtype, s));
      });
    rule({Ops::WHERE}, [this](const UOp& u, const Operands& s) {
      return fresh(u.dtype, absl::StrCat(s[0], " ? ", s[1], " : ", s[2]));
    });
    rule({Ops::MULACC}, [this](const UOp& u, const Operands& s) {
      if (is_fp(u.dtype)) return fresh(u.dtype, math("fma", u.dtype, s));
      return fresh(u.dtype, absl::StrCat(binary(Ops::MUL, u.dtype, s[0], s[1]), " + ", s[2]));
    });
    rule({Ops::DOT4}, [this](const UOp& u, const Operands& s) {
      std::string w = wrap_type(u.dtype), sum = absl::StrCat("(", w, ")", s[2]);
      for (int k = 0; k < 32; k += 8)  // byte k/8: a's unsigned, b's signed (x ^ 128 - 128)
        absl::StrAppend(&sum, " + (", w, ")((int)((", s[0], " >> ", k, ") & 255) * (((int)((", s[1],
                        " >> ", k, ") & 255) ^ 128) - 128))");
      return fresh(u.dtype, absl::StrCat("(", type(u.dtype), ")(", sum, ")"));
    });
    rule(group::is_binary, [this](const UOp& u, const Operands& s) {
      return fresh(u.dtype, binary(u.op, u.src[0]->dtype, s[0], s[1]));
    });
  }

  void open_range(const UOp& r) {
    auto grid = plan_.grid_range.find(&r);
    std::string i = range_name(r);
    // the work-group's threads take turns, neighbours adjacent
    if (plan_.split_loops.contains(&r)) {
      emit(absl::StrFormat("for (%s %s = lidx; %s < %s; %s += %d) {", index_type(), i, i,
                           val(r.src[0]), i, plan_.group));
    } else if (grid == plan_.grid_range.end()) {
      emit(absl::StrFormat("for (%s %s = 0; %s < %s; %s++) {", index_type(), i, i, val(r.src[0]),
                           i));
    } else {
      const GridDim& d = plan_.grid[grid->second];
      if (!d.guarded() || d.ranges.front() != &r) return;  // in range, or checked by the merged
      emit(absl::StrCat("if (", grid_name(grid->second), " < ",
                        int_literal(d.extent, dtypes::index), ") {"));
    }
    closes_.insert(&r);
    depth_++;
  }

  // A load's expression.
  std::string load(const UOp& u) {
    const UOp& index = *u.src[0];
    std::string x;
    if (is_half(u.dtype) && lang_.half == HalfSupport::Storage)
      x = absl::StrCat("vload_half(", val(index.src[1]), ", data", index.src[0]->arg_ints()[0],
                       ")");
    else
      x = element(index);
    if (dtypes::is_bool(u.dtype)) x += " != 0";
    if (u.src.size() > 1) x = absl::StrCat(val(u.src[1]), " ? ", x, " : ", zero(u.dtype));
    return x;
  }

  void store(const UOp& u) {
    const UOp& index = *u.src[0];
    DType d = u.src[1]->dtype;
    std::string x = val(u.src[1]);
    std::string only_first = plan_.group > 1 ? "if (lidx == 0) " : "";  // all hold the same value
    if (is_half(d) && lang_.half == HalfSupport::Storage)
      emit(absl::StrCat(only_first, "vstore_half_rte(", x, ", ", val(index.src[1]), ", data",
                        index.src[0]->arg_ints()[0], ");"));
    else
      emit(absl::StrCat(only_first, element(index), " = ", x, ";"));
  }

  std::string math(const std::string& fn, DType d, const std::vector<std::string>& args) {
    TC_CHECK(is_fp(d), "C-style renderer: ", fn, " of ", d.name());
    return absl::StrCat(fn, lang_.overloaded_math || d == dtypes::float64 ? "" : "f", "(",
                        absl::StrJoin(args, ", "), ")");
  }

  // a `op` b for operands of dtype `d` by kOperators, with LLVM's semantics (see llvmir.cc):
  // integers wrap, a tensor's integer division by 0 gives 0 and by -1 gives -a (a divisor that
  // may be either was made safe: codegen::safe_divisions), float max propagates NaN.
  std::string binary(Ops op, DType d, const std::string& a, const std::string& b) {
    bool boolean = dtypes::is_bool(d);
    if (op == Ops::MAX && !boolean)
      return is_fp(d) ? absl::StrCat(float_max(d), "(", a, ", ", b, ")")
                      : absl::StrCat(a, " > ", b, " ? ", a, " : ", b);
    auto it = std::find_if(std::begin(kOperators), std::end(kOperators),
                           [&](const Operator& o) { return o.op == op; });
    TC_CHECK(it != std::end(kOperators), "C-style renderer: no binary op ", op_name(op));
    if (boolean && it->on_bool) return absl::StrCat(a, " ", it->on_bool, " ", b);
    Scalar r = register_dtype(d).scalar;
    bool plain = is_fp(d) || d == dtypes::index || r == Scalar::UInt32 || r == Scalar::UInt64;
    std::string u = plain || it->wrap == Wrap::kNone ? "" : absl::StrCat("(", wrap_type(d), ")");
    return absl::StrCat(u, a, " ", it->c, " ", it->wrap == Wrap::kBoth ? u : "", b);
  }

  // `x` of dtype `from` as `to`, as LLVM's casts in llvmir.cc: float -> int rounds toward zero
  // and saturates (NaN gives 0), -> bool is `!= 0`, bfloat16 rounds to nearest even.
  std::string cast(std::string x, DType from, DType to) {
    if (from == to) return x;
    // float16 and bfloat16 convert to float32 exactly; go through it
    if (is_half(from)) {
      if (lang_.half == HalfSupport::Intrinsics) x = absl::StrCat("__half2float(", x, ")");
      if (lang_.half == HalfSupport::Native) x = absl::StrCat("(float)", x);
      from = dtypes::float32;
    } else if (is_bf16(from)) {
      x = lang_.bitcast("float", absl::StrCat("(", type(dtypes::uint32), ")", x, " << 16"));
      from = dtypes::float32;
    }
    if (from == to) return x;
    if (dtypes::is_bool(to)) return absl::StrCat(x, " != 0");
    if (is_half(to)) return to_half(x, from);
    if (is_bf16(to)) return absl::StrCat(to_bf16(), "(", cast(x, from, dtypes::float32), ")");
    if (is_fp(from) && !is_fp(to)) return float_to_int(x, from, to);
    return absl::StrCat("(", type(to), ")", x);
  }

  std::string to_half(const std::string& x, DType from) {
    if (lang_.half == HalfSupport::Native) return absl::StrCat("(", type(dtypes::float16), ")", x);
    if (lang_.half == HalfSupport::Storage) {
      // an integer becomes a float exactly where it is below half's overflow, so one rounding
      if (from == dtypes::float64) return absl::StrCat(round_to_half(from), "(", x, ")");
      return absl::StrCat(round_to_half(dtypes::float32), "(", cast(x, from, dtypes::float32), ")");
    }
    DType r = register_dtype(from);
    const char* fn = r == dtypes::float32   ? "__float2half_rn"
                     : r == dtypes::float64 ? "__double2half"
                     : r == dtypes::int32   ? "__int2half_rn"
                     : r == dtypes::uint32  ? "__uint2half_rn"
                     : r == dtypes::int64   ? "__ll2half_rn"
                     : r == dtypes::uint64  ? "__ull2half_rn"
                     : r == dtypes::uint16  ? "__ushort2half_rn"
                                            : "__short2half_rn";
    if (r.itemsize() == 1) return absl::StrCat(fn, "((short)", x, ")");  // bool, int8, uint8
    return absl::StrCat(fn, "(", x, ")");
  }

  std::string float_to_int(const std::string& x, DType from, DType to) {
    DType r = register_dtype(to);
    if (lang_.convert_sat) return absl::StrCat("convert_", type(r), "_sat(", x, ")");
    bool is_unsigned = dtypes::is_unsigned(r);
    int bits = r.itemsize() * 8;
    double lo = is_unsigned ? 0.0 : -std::ldexp(1.0, bits - 1),
           top = std::ldexp(1.0, is_unsigned ? bits : bits - 1);
    int64_t min = is_unsigned ? 0 : std::numeric_limits<int64_t>::min() >> (64 - bits);
    int64_t max = is_unsigned ? static_cast<int64_t>(~uint64_t{0} >> (64 - bits))
                              : std::numeric_limits<int64_t>::max() >> (64 - bits);
    bool f64 = from == dtypes::float64;
    return absl::StrCat(x, " != ", x, " ? ", int_literal(0, r), " : ", x,
                        " <= ", float_literal(lo, f64), " ? ", int_literal(min, r), " : ", x,
                        " >= ", float_literal(top, f64), " ? ", int_literal(max, r), " : (",
                        type(r), ")", x);
  }

  // The same bits as another type of their size. bfloat16 is held as its bits already.
  std::string bitcast(const std::string& x, DType from, DType to) {
    if (is_bf16(from)) from = dtypes::uint16;
    DType to_bits = is_bf16(to) ? dtypes::uint16 : to;
    if (lang_.half == HalfSupport::Storage && is_half(from))
      return cast(half_bits() + "(" + x + ")", dtypes::uint16, to_bits);
    if (lang_.half == HalfSupport::Storage && is_half(to))
      return absl::StrCat(half_from_bits(), "(", cast(x, from, dtypes::uint16), ")");
    if (from == to_bits) return x;
    if (dtypes::is_int(register_dtype(from)) && dtypes::is_int(register_dtype(to_bits)))
      return absl::StrCat("(", type(to_bits), ")", x);
    return lang_.bitcast(type(to_bits), x);
  }

  const Dialect& lang_;
  const std::vector<UOpRef>& program_;
  const GpuLaunch& plan_;
  bool wide_index_ = false;
  bool uses_fp64_ = false, uses_half_ = false;
  std::map<std::string, std::string> helpers_;
  absl::flat_hash_set<const UOp*> closes_;  // RANGEs whose END closes a brace
  std::string body_;
  int depth_ = 0, nval_ = 0;
};

}  // namespace

RenderedKernel render_cstyle(runtime::Language language, const std::string& name,
                             const std::vector<UOpRef>& program, const GpuLaunch& launch) {
  return CStyle(dialect(language), program, launch).kernel(name);
}

const std::vector<runtime::Language>& cstyle_languages() {
  static const std::vector<runtime::Language> l = {
      runtime::Language::kCuda, runtime::Language::kOpenCl, runtime::Language::kHip};
  return l;
}

}  // namespace tc::renderer
