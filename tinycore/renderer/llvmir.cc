#include "tinycore/renderer/llvmir.h"

#include <cmath>
#include <cstring>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tinycore/error.h"

namespace tc::renderer {
namespace {

// Register types. bfloat16 lives as its i16 bits (all its math was decomposed to float32).
std::string ltype(DType d) {
  switch (d.scalar) {
    case Scalar::Bool: return "i1";
    case Scalar::Int8: case Scalar::UInt8: return "i8";
    case Scalar::Int16: case Scalar::UInt16: case Scalar::BFloat16: return "i16";
    case Scalar::Int32: case Scalar::UInt32: return "i32";
    case Scalar::Int64: case Scalar::UInt64: case Scalar::Index: return "i64";
    case Scalar::Float16: return "half";
    case Scalar::Float32: return "float";
    case Scalar::Float64: return "double";
    case Scalar::Void: return "void";
  }
  return "?";
}
// Memory types: bool is a byte.
std::string mtype(DType d) { return dtypes::is_bool(d) ? "i8" : ltype(d.base()); }
bool is_fp(DType d) {
  return d.scalar == Scalar::Float16 || d.scalar == Scalar::Float32 || d.scalar == Scalar::Float64;
}
int bits(DType d) { return dtypes::is_bool(d) ? 1 : d.itemsize() * 8; }
// Intrinsic suffix.
std::string isuffix(DType d) {
  if (d.scalar == Scalar::Float16) return "f16";
  if (d.scalar == Scalar::Float32) return "f32";
  if (d.scalar == Scalar::Float64) return "f64";
  return absl::StrCat("i", bits(d));
}

uint16_t half_bits(double v) {
  _Float16 h = static_cast<_Float16>(v);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
uint16_t bf16_bits(double v) {
  float f = static_cast<float>(v);  // already rounded to bfloat16 by UOp::const_
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>(b >> 16);
}

std::string literal(const UOp& c) {
  DType d = c.dtype;
  if (dtypes::is_bool(d)) return c.arg_int() ? "true" : "false";
  if (d.scalar == Scalar::BFloat16) return absl::StrCat(bf16_bits(c.const_value()));
  if (d.scalar == Scalar::Float16) return absl::StrFormat("0xH%04X", half_bits(c.const_value()));
  if (is_fp(d)) {
    double v = c.const_value();
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return absl::StrFormat("0x%016X", b);
  }
  return absl::StrCat(c.arg_int());
}

class Renderer {
 public:
  std::string render(const std::string& name, const std::vector<UOpRef>& program) {
    int nglobals = 0;
    for (const UOpRef& u : program) {
      if (u->op == Ops::DEFINE_GLOBAL) nglobals = std::max<int>(nglobals, u->arg_ints()[0] + 1);
      if (u->op == Ops::RANGE) allocas_.push_back(absl::StrFormat("  %%ridx%d = alloca i64", u->arg_int()));
      if (u->op == Ops::DEFINE_ACC)
        allocas_.push_back(absl::StrFormat("  %%acc%d = alloca %s", u->arg_int(), ltype(u->dtype)));
    }
    for (const UOpRef& u : program) line(*u);
    line_("ret void");

    std::vector<std::string> params, args, loads;
    for (int i = 0; i < nglobals; i++) {
      params.push_back(absl::StrFormat("ptr noalias align 64 %%data%d", i));
      args.push_back(absl::StrFormat("ptr %%b%d", i));
      loads.push_back(absl::StrFormat(
          "  %%a%d = getelementptr inbounds ptr, ptr %%bufs, i64 %d\n  %%b%d = load ptr, ptr %%a%d", i, i, i, i));
    }
    std::string out;
    for (const std::string& d : declares_) absl::StrAppend(&out, d, "\n");
    absl::StrAppend(&out, "\ndefine internal void @", name, "_body(", absl::StrJoin(params, ", "),
                    ") #0 {\nentry:\n", absl::StrJoin(allocas_, "\n"), allocas_.empty() ? "" : "\n",
                    body_, "}\n\n");
    absl::StrAppend(&out, "define void @", name, "(ptr %bufs) #1 {\n", absl::StrJoin(loads, "\n"),
                    loads.empty() ? "" : "\n", "  call void @", name, "_body(", absl::StrJoin(args, ", "),
                    ")\n  ret void\n}\n\n");
    absl::StrAppend(&out, "attributes #0 = { alwaysinline nounwind }\nattributes #1 = { nounwind }\n");
    return out;
  }

 private:
  void line_(const std::string& s) { absl::StrAppend(&body_, "  ", s, "\n"); }
  std::string tmp() { return absl::StrCat("%t", ntmp_++); }
  std::string emit(const std::string& instr) {
    std::string t = tmp();
    line_(absl::StrCat(t, " = ", instr));
    return t;
  }
  std::string intrinsic(const std::string& name, DType d, const std::vector<std::string>& args) {
    std::string fn = absl::StrCat("llvm.", name, ".", isuffix(d));
    std::vector<std::string> types(args.size(), ltype(d));
    declares_.insert(absl::StrCat("declare ", ltype(d), " @", fn, "(", absl::StrJoin(types, ", "), ")"));
    std::vector<std::string> typed;
    for (const std::string& a : args) typed.push_back(absl::StrCat(ltype(d), " ", a));
    return emit(absl::StrCat("call ", ltype(d), " @", fn, "(", absl::StrJoin(typed, ", "), ")"));
  }

  // The operand for a source: a register, a literal, or the final value of an accumulator.
  std::string val(const UOpRef& u) {
    if (u->op == Ops::CONST) return literal(*u);
    if (u->op == Ops::ASSIGN)
      return emit(absl::StrFormat("load %s, ptr %%acc%d", ltype(u->dtype), u->src[0]->arg_int()));
    auto it = reg_.find(u.get());
    TC_CHECK(it != reg_.end(), "renderer: ", op_name(u->op), " used before it was defined");
    return it->second;
  }

  std::string address(const UOp& index, const std::string& idx) {
    const UOp& g = *index.src[0];
    return emit(absl::StrFormat("getelementptr inbounds %s, ptr %%data%d, i64 %s", mtype(g.dtype),
                                g.arg_ints()[0], idx));
  }

  std::string cast(const std::string& x, DType from, DType to) {
    std::string lf = ltype(from), lt = ltype(to);
    if (from.scalar == Scalar::BFloat16) {  // bits << 16 are the float32
      std::string w = emit(absl::StrCat("zext i16 ", x, " to i32"));
      return emit(absl::StrCat("bitcast i32 ", emit(absl::StrCat("shl i32 ", w, ", 16")), " to float"));
    }
    if (to.scalar == Scalar::BFloat16) {  // round to nearest even; NaN stays NaN
      std::string b = emit(absl::StrCat("bitcast float ", x, " to i32"));
      std::string lsb = emit(absl::StrCat("and i32 ", emit(absl::StrCat("lshr i32 ", b, ", 16")), ", 1"));
      std::string r = emit(absl::StrCat("add i32 ", b, ", ", emit(absl::StrCat("add i32 ", lsb, ", 32767"))));
      std::string nan = emit(absl::StrCat("fcmp uno float ", x, ", ", x));
      std::string q = emit(absl::StrCat("or i32 ", b, ", 4194304"));
      std::string pick = emit(absl::StrCat("select i1 ", nan, ", i32 ", q, ", i32 ", r));
      return emit(absl::StrCat("trunc i32 ", emit(absl::StrCat("lshr i32 ", pick, ", 16")), " to i16"));
    }
    if (dtypes::is_bool(to)) {
      if (is_fp(from)) return emit(absl::StrCat("fcmp une ", lf, " ", x, ", 0.0"));
      return dtypes::is_bool(from) ? x : emit(absl::StrCat("icmp ne ", lf, " ", x, ", 0"));
    }
    if (is_fp(from) && is_fp(to)) {
      if (bits(from) == bits(to)) return x;
      return emit(absl::StrCat(bits(from) < bits(to) ? "fpext " : "fptrunc ", lf, " ", x, " to ", lt));
    }
    if (is_fp(from)) {
      std::string fn = absl::StrCat(dtypes::is_unsigned(to) ? "llvm.fptoui.sat." : "llvm.fptosi.sat.",
                                    isuffix(to), ".", isuffix(from));
      declares_.insert(absl::StrCat("declare ", lt, " @", fn, "(", lf, ")"));
      return emit(absl::StrCat("call ", lt, " @", fn, "(", lf, " ", x, ")"));
    }
    bool from_unsigned = dtypes::is_unsigned(from) || dtypes::is_bool(from);
    if (is_fp(to)) return emit(absl::StrCat(from_unsigned ? "uitofp " : "sitofp ", lf, " ", x, " to ", lt));
    if (bits(from) == bits(to)) return x;
    if (bits(from) > bits(to)) return emit(absl::StrCat("trunc ", lf, " ", x, " to ", lt));
    return emit(absl::StrCat(from_unsigned ? "zext " : "sext ", lf, " ", x, " to ", lt));
  }

  std::string binary(Ops op, DType d, const std::string& a, const std::string& b) {
    std::string t = ltype(d), fm = "reassoc contract ";
    bool fp = is_fp(d), u = dtypes::is_unsigned(d) || dtypes::is_bool(d);
    auto bin = [&](const char* f, const char* i) {
      return fp ? emit(absl::StrCat(f, " ", fm, t, " ", a, ", ", b)) : emit(absl::StrCat(i, " ", t, " ", a, ", ", b));
    };
    switch (op) {
      case Ops::ADD: return bin("fadd", "add");
      case Ops::SUB: return bin("fsub", "sub");
      case Ops::MUL: return bin("fmul", "mul");
      case Ops::FDIV: return emit(absl::StrCat("fdiv ", t, " ", a, ", ", b));
      case Ops::IDIV: return emit(absl::StrCat(u ? "udiv " : "sdiv ", t, " ", a, ", ", b));
      case Ops::MOD: return emit(absl::StrCat(u ? "urem " : "srem ", t, " ", a, ", ", b));
      case Ops::MAX:
        if (dtypes::is_bool(d)) return emit(absl::StrCat("or i1 ", a, ", ", b));
        return intrinsic(fp ? "maximum" : u ? "umax" : "smax", d, {a, b});
      case Ops::CMPLT:
        return emit(fp ? absl::StrCat("fcmp olt ", t, " ", a, ", ", b)
                       : absl::StrCat(u ? "icmp ult " : "icmp slt ", t, " ", a, ", ", b));
      case Ops::CMPNE: return emit(absl::StrCat(fp ? "fcmp une " : "icmp ne ", t, " ", a, ", ", b));
      case Ops::CMPEQ: return emit(absl::StrCat(fp ? "fcmp oeq " : "icmp eq ", t, " ", a, ", ", b));
      case Ops::AND: return emit(absl::StrCat("and ", t, " ", a, ", ", b));
      case Ops::OR: return emit(absl::StrCat("or ", t, " ", a, ", ", b));
      case Ops::XOR: return emit(absl::StrCat("xor ", t, " ", a, ", ", b));
      case Ops::SHL: return emit(absl::StrCat("shl ", t, " ", a, ", ", b));
      case Ops::SHR: return emit(absl::StrCat(u ? "lshr " : "ashr ", t, " ", a, ", ", b));
      default: TC_CHECK(false, "renderer: no binary op ", op_name(op));
    }
    return "";
  }

  void line(const UOp& u) {
    switch (u.op) {
      case Ops::CONST:
      case Ops::DEFINE_GLOBAL:
      case Ops::INDEX: return;  // literals, and addresses computed by their loads/stores
      case Ops::RANGE: {
        int64_t n = u.arg_int();
        line_(absl::StrFormat("store i64 0, ptr %%ridx%d", n));
        line_(absl::StrFormat("br label %%loop%d", n));
        absl::StrAppendFormat(&body_, "loop%d:\n", n);
        std::string r = emit(absl::StrFormat("load i64, ptr %%ridx%d", n));
        std::string c = emit(absl::StrFormat("icmp slt i64 %s, %s", r, val(u.src[0])));
        line_(absl::StrFormat("br i1 %s, label %%body%d, label %%exit%d", c, n, n));
        absl::StrAppendFormat(&body_, "body%d:\n", n);
        reg_[&u] = r;
        return;
      }
      case Ops::END: {
        int64_t n = u.src[0]->arg_int();
        std::string next = emit(absl::StrCat("add i64 ", reg_.at(u.src[0].get()), ", 1"));
        line_(absl::StrFormat("store i64 %s, ptr %%ridx%d", next, n));
        line_(absl::StrFormat("br label %%loop%d", n));
        absl::StrAppendFormat(&body_, "exit%d:\n", n);
        return;
      }
      case Ops::DEFINE_ACC:
        line_(absl::StrFormat("store %s %s, ptr %%acc%d", ltype(u.dtype), val(u.src[0]), u.arg_int()));
        return;
      case Ops::ASSIGN: {
        int64_t n = u.src[0]->arg_int();
        std::string cur = emit(absl::StrFormat("load %s, ptr %%acc%d", ltype(u.dtype), n));
        std::string next = binary(static_cast<Ops>(u.arg_int()), u.dtype, cur, val(u.src[1]));
        line_(absl::StrFormat("store %s %s, ptr %%acc%d", ltype(u.dtype), next, n));
        return;
      }
      case Ops::LOAD: {
        const UOp& index = *u.src[0];
        std::string idx = val(index.src[1]);
        std::string gate = u.src.size() > 1 ? val(u.src[1]) : "";
        if (!gate.empty()) idx = emit(absl::StrCat("select i1 ", gate, ", i64 ", idx, ", i64 0"));
        std::string p = address(index, idx);
        std::string v = emit(absl::StrFormat("load %s, ptr %s, align %d", mtype(u.dtype), p, u.dtype.itemsize()));
        if (dtypes::is_bool(u.dtype)) v = emit(absl::StrCat("trunc i8 ", v, " to i1"));
        if (!gate.empty())
          v = emit(absl::StrCat("select i1 ", gate, ", ", ltype(u.dtype), " ", v, ", ", ltype(u.dtype), " ",
                                literal(*UOp::const_(u.dtype, 0))));
        reg_[&u] = v;
        return;
      }
      case Ops::STORE: {
        const UOp& index = *u.src[0];
        std::string p = address(index, val(index.src[1]));
        DType d = u.src[1]->dtype;
        std::string v = val(u.src[1]);
        if (dtypes::is_bool(d)) v = emit(absl::StrCat("zext i1 ", v, " to i8"));
        line_(absl::StrFormat("store %s %s, ptr %s, align %d", mtype(d), v, p, d.itemsize()));
        return;
      }
      default: break;
    }
    TC_CHECK(group::is_alu(u.op), "renderer: cannot render ", op_name(u.op));
    std::vector<std::string> s;
    for (const UOpRef& x : u.src) s.push_back(val(x));
    DType d = u.src[0]->dtype;
    std::string t = ltype(u.dtype);
    std::string r;
    switch (u.op) {
      case Ops::CAST: r = cast(s[0], d, u.dtype); break;
      case Ops::BITCAST: r = emit(absl::StrCat("bitcast ", ltype(d), " ", s[0], " to ", t)); break;
      case Ops::NEG:
        r = is_fp(d) ? emit(absl::StrCat("fneg ", t, " ", s[0])) : emit(absl::StrCat("sub ", t, " 0, ", s[0]));
        break;
      case Ops::RECIP: r = emit(absl::StrCat("fdiv ", t, " ", literal(*UOp::const_(u.dtype, 1)), ", ", s[0])); break;
      case Ops::EXP2: r = intrinsic("exp2", u.dtype, s); break;
      case Ops::LOG2: r = intrinsic("log2", u.dtype, s); break;
      case Ops::SIN: r = intrinsic("sin", u.dtype, s); break;
      case Ops::SQRT: r = intrinsic("sqrt", u.dtype, s); break;
      case Ops::TRUNC: r = intrinsic("trunc", u.dtype, s); break;
      case Ops::WHERE: r = emit(absl::StrCat("select i1 ", s[0], ", ", t, " ", s[1], ", ", t, " ", s[2])); break;
      case Ops::MULACC:
        r = is_fp(u.dtype) ? intrinsic("fmuladd", u.dtype, s)
                           : binary(Ops::ADD, u.dtype, binary(Ops::MUL, u.dtype, s[0], s[1]), s[2]);
        break;
      default: r = binary(u.op, d, s[0], s[1]);
    }
    reg_[&u] = r;
  }

  std::string body_;
  std::vector<std::string> allocas_;
  std::set<std::string> declares_;
  absl::flat_hash_map<const UOp*, std::string> reg_;
  int ntmp_ = 0;
};

}  // namespace

std::string render_llvm(const std::string& name, const std::vector<UOpRef>& program) {
  return Renderer().render(name, program);
}

}  // namespace tc::renderer
