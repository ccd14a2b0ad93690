#include "tinycore/renderer/llvmir.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tinycore/error.h"
#include "tinycore/renderer/lanes.h"
#include "tinycore/renderer/llvm_dot4.h"
#include "tinycore/renderer/llvm_types.h"
#include "tinycore/renderer/walk.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/uop/symbolic.h"

namespace tc::renderer {
namespace {

// The instruction of each binary op for floats, signed and unsigned integers (bools are unsigned);
// a MAX but of bools is an intrinsic. Float adds, subs and muls may reassociate and contract into
// FMA so reductions vectorize; a divisor that may be 0 or -1 was made safe
// (codegen::safe_divisions).
struct Instruction {
  Ops op;
  const char *fp, *sint, *uint;
};
constexpr Instruction kBinary[] = {
    {Ops::ADD, "fadd reassoc contract", "add", "add"},
    {Ops::SUB, "fsub reassoc contract", "sub", "sub"},
    {Ops::MUL, "fmul reassoc contract", "mul", "mul"},
    {Ops::FDIV, "fdiv", nullptr, nullptr},
    {Ops::IDIV, nullptr, "sdiv", "udiv"},
    {Ops::MOD, nullptr, "srem", "urem"},
    {Ops::MAX, nullptr, nullptr, "or"},
    {Ops::CMPLT, "fcmp olt", "icmp slt", "icmp ult"},
    {Ops::CMPNE, "fcmp une", "icmp ne", "icmp ne"},
    {Ops::CMPEQ, "fcmp oeq", "icmp eq", "icmp eq"},
    {Ops::AND, nullptr, "and", "and"},
    {Ops::OR, nullptr, "or", "or"},
    {Ops::XOR, nullptr, "xor", "xor"},
    {Ops::SHL, nullptr, "shl", "shl"},
    {Ops::SHR, nullptr, "ashr", "lshr"},
};

class LlvmIr : public Walk {
 public:
  LlvmIr(const std::vector<UOpRef>& program, int64_t parallel_range, bool byte_dot)
      : Walk("LLVM renderer"),
        program_(program),
        lanes_(find_lanes(program)),
        parallel_range_(parallel_range),
        byte_dot_(byte_dot) {
    add_rules();
  }

  std::string kernel(const std::string& name) {
    int nglobals = 0;
    std::vector<std::string> allocas;
    for (const UOpRef& u : program_) {
      if (u->op == Ops::DEFINE_GLOBAL) nglobals = std::max<int>(nglobals, u->arg_ints()[0] + 1);
      if (u->op == Ops::RANGE)
        allocas.push_back(absl::StrFormat("  %%ridx%d = alloca i64", u->arg_int()));
      if (u->op == Ops::DEFINE_ACC)
        allocas.push_back(absl::StrFormat("  %%acc%d = alloca %s", u->arg_int(), type(*u)));
    }
    for (const UOpRef& u : program_)
      if (u->op == Ops::ASSIGN)  // an accumulator's update: its sources from 2 on are its loops
        for (size_t i = 2; i < u->src.size(); i++) reduce_loops_.insert(u->src[i].get());
    for (const UOpRef& u : program_) render(*u);
    line_("ret void");

    std::vector<std::string> params, args, loads;
    for (int i = 0; i < nglobals; i++) {
      params.push_back(
          absl::StrFormat("ptr noalias align %d %%data%d", runtime::kBufferAlignment, i));
      args.push_back(absl::StrFormat("ptr %%b%d", i));
      loads.push_back(absl::StrFormat(
          "  %%a%d = getelementptr inbounds ptr, ptr %%bufs, i64 %d\n  %%b%d = load ptr, ptr %%a%d",
          i, i, i, i));
    }
    params.push_back("i64 %core");
    params.push_back("i64 %ncores");
    args.push_back("i64 %core");
    args.push_back("i64 %ncores");
    std::string out;
    for (const std::string& d : declares_) absl::StrAppend(&out, d, "\n");
    absl::StrAppend(&out, "\ndefine internal void @", name, "_body(", absl::StrJoin(params, ", "),
                    ") #0 {\nentry:\n", absl::StrJoin(allocas, "\n"), allocas.empty() ? "" : "\n",
                    body_, "}\n\n");
    absl::StrAppend(&out, "define void @", name, "(ptr %bufs, i64 %core, i64 %ncores) #1 {\n",
                    absl::StrJoin(loads, "\n"), loads.empty() ? "" : "\n", "  call void @", name,
                    "_body(", absl::StrJoin(args, ", "), ")\n  ret void\n}\n\n");
    absl::StrAppend(&out,
                    "attributes #0 = { alwaysinline nounwind }\nattributes #1 = { nounwind }\n");
    absl::StrAppend(&out, metadata_);
    return out;
  }

 private:
  bool vec(const UOp& u) const { return lanes_.is_vector(&u); }
  // The LLVM type of `d`, as a vector of the lane width when `v`.
  std::string type_of(DType d, bool v, bool memory = false) const {
    std::string t = memory ? memory_type(d) : scalar_type(d);
    return v ? absl::StrFormat("<%d x %s>", lanes_.width, t) : t;
  }
  std::string type(const UOp& u) const { return type_of(u.dtype, vec(u)); }
  std::string suffix(DType d, bool v) const {
    return v ? absl::StrFormat("v%d%s", lanes_.width, type_suffix(d)) : type_suffix(d);
  }
  // A constant, splatted across lanes when `v`.
  std::string literal(const UOp& c, bool v) const {
    std::string s = scalar_literal(c);
    return v ? absl::StrCat("splat (", scalar_type(c.dtype), " ", s, ")") : s;
  }
  std::string literal(DType d, double value, bool v) const {
    return literal(*UOp::const_(d, value), v);
  }

  void line_(const std::string& s) { absl::StrAppend(&body_, "  ", s, "\n"); }
  std::string emit(const std::string& instr) {
    std::string t = absl::StrCat("%t", ntmp_++);
    line_(absl::StrCat(t, " = ", instr));
    return t;
  }
  std::string intrinsic(const std::string& name, DType d, bool v,
                        const std::vector<std::string>& args) {
    std::string fn = absl::StrCat("llvm.", name, ".", suffix(d, v)), t = type_of(d, v);
    std::vector<std::string> types(args.size(), t), typed;
    declares_.insert(absl::StrCat("declare ", t, " @", fn, "(", absl::StrJoin(types, ", "), ")"));
    for (const std::string& a : args) typed.push_back(absl::StrCat(t, " ", a));
    return emit(absl::StrCat("call ", t, " @", fn, "(", absl::StrJoin(typed, ", "), ")"));
  }

  // The operand for a source, as a vector when `as_vec` (scalars are broadcast): a register,
  // a literal, or the final value of an accumulator.
  std::string val(const UOpRef& u, bool as_vec) {
    if (u->op == Ops::CONST) return literal(*u, as_vec);
    std::string r;
    if (u->op == Ops::ASSIGN) {
      r = emit(absl::StrFormat("load %s, ptr %%acc%d", type(*u), u->src[0]->arg_int()));
    } else {
      r = value(*u);
    }
    if (!as_vec || vec(*u)) return r;
    std::string t = scalar_type(u->dtype), vt = type_of(u->dtype, true);
    std::string one = emit(absl::StrCat("insertelement ", vt, " poison, ", t, " ", r, ", i64 0"));
    return emit(absl::StrCat("shufflevector ", vt, " ", one, ", ", vt, " poison, <", lanes_.width,
                             " x i32> zeroinitializer"));
  }

  std::string operand(const UOp& user, const UOpRef& x) override { return val(x, vec(user)); }

  std::string lane_ids() const {
    std::vector<std::string> ids;
    for (int i = 0; i < lanes_.width; i++) ids.push_back(absl::StrCat("i64 ", i));
    return "<" + absl::StrJoin(ids, ", ") + ">";
  }

  std::string cast(const std::string& x, DType from, DType to, bool v) {
    std::string lf = type_of(from, v), lt = type_of(to, v);
    auto i32 = [&](int k) { return literal(dtypes::int32, k, v); };
    std::string ti32 = type_of(dtypes::int32, v), ti16 = type_of(dtypes::int16, v);
    if (from.scalar == Scalar::BFloat16) {  // the float32 is bits << 16
      std::string w = emit(absl::StrCat("zext ", ti16, " ", x, " to ", ti32));
      return emit(absl::StrCat("bitcast ", ti32, " ",
                               emit(absl::StrCat("shl ", ti32, " ", w, ", ", i32(16))), " to ",
                               type_of(dtypes::float32, v)));
    }
    if (to.scalar == Scalar::BFloat16) {  // round to nearest even; NaN stays NaN
      std::string b = emit(absl::StrCat("bitcast ", lf, " ", x, " to ", ti32));
      std::string hi = emit(absl::StrCat("lshr ", ti32, " ", b, ", ", i32(16)));
      std::string lsb = emit(absl::StrCat("and ", ti32, " ", hi, ", ", i32(1)));
      std::string bias = emit(absl::StrCat("add ", ti32, " ", lsb, ", ", i32(32767)));
      std::string r = emit(absl::StrCat("add ", ti32, " ", b, ", ", bias));
      std::string nan = emit(absl::StrCat("fcmp uno ", lf, " ", x, ", ", x));
      std::string q = emit(absl::StrCat("or ", ti32, " ", b, ", ", i32(4194304)));
      std::string pick = emit(absl::StrCat("select ", type_of(dtypes::bool_, v), " ", nan, ", ",
                                           ti32, " ", q, ", ", ti32, " ", r));
      return emit(absl::StrCat("trunc ", ti32, " ",
                               emit(absl::StrCat("lshr ", ti32, " ", pick, ", ", i32(16))), " to ",
                               ti16));
    }
    if (dtypes::is_bool(to)) {
      if (is_llvm_float(from))
        return emit(absl::StrCat("fcmp une ", lf, " ", x, ", ", literal(from, 0, v)));
      return dtypes::is_bool(from)
                 ? x
                 : emit(absl::StrCat("icmp ne ", lf, " ", x, ", ", literal(from, 0, v)));
    }
    if (is_llvm_float(from) && is_llvm_float(to)) {
      if (bits(from) == bits(to)) return x;
      return emit(
          absl::StrCat(bits(from) < bits(to) ? "fpext " : "fptrunc ", lf, " ", x, " to ", lt));
    }
    bool is_unsigned = dtypes::is_unsigned(to);
    if (is_llvm_float(from) && v && (from == dtypes::float32 || from == dtypes::float64) &&
        !(is_unsigned && bits(to) == 64)) {
      // llvm.fpto[su]i.sat is scalarized on x86 vectors (a compare and convert per lane): the
      // same saturation as vector ops instead. Clamp below the top (NaN goes to the bottom),
      // convert, then values at or past the top take the maximum and NaN takes 0.
      int b = bits(to);
      double lo = is_unsigned ? 0.0 : -std::ldexp(1.0, b - 1),
             top = std::ldexp(1.0, is_unsigned ? b : b - 1);
      double hi = from == dtypes::float32 ? std::nextafter(static_cast<float>(top), 0.0f)
                                          : std::nextafter(top, 0.0);
      int64_t max = is_unsigned ? static_cast<int64_t>((uint64_t{1} << b) - 1)
                                : static_cast<int64_t>((uint64_t{1} << (b - 1)) - 1);
      std::string c = intrinsic("maxnum", from, v, {x, literal(from, lo, v)});
      c = intrinsic("minnum", from, v, {c, literal(from, hi, v)});
      std::string i =
          emit(absl::StrCat(is_unsigned ? "fptoui " : "fptosi ", lf, " ", c, " to ", lt));
      std::string big = emit(absl::StrCat("fcmp oge ", lf, " ", x, ", ", literal(from, top, v)));
      std::string tb = type_of(dtypes::bool_, v);
      i = emit(absl::StrCat("select ", tb, " ", big, ", ", lt, " ",
                            literal(*UOp::const_int(to, max), v), ", ", lt, " ", i));
      std::string nan = emit(absl::StrCat("fcmp uno ", lf, " ", x, ", ", x));
      return emit(absl::StrCat("select ", tb, " ", nan, ", ", lt, " ", literal(to, 0, v), ", ", lt,
                               " ", i));
    }
    if (is_llvm_float(from)) {
      std::string fn = absl::StrCat(is_unsigned ? "llvm.fptoui.sat." : "llvm.fptosi.sat.",
                                    suffix(to, v), ".", suffix(from, v));
      declares_.insert(absl::StrCat("declare ", lt, " @", fn, "(", lf, ")"));
      return emit(absl::StrCat("call ", lt, " @", fn, "(", lf, " ", x, ")"));
    }
    bool from_unsigned = dtypes::is_unsigned(from) || dtypes::is_bool(from);
    if (is_llvm_float(to))
      return emit(absl::StrCat(from_unsigned ? "uitofp " : "sitofp ", lf, " ", x, " to ", lt));
    if (bits(from) == bits(to)) return x;
    if (bits(from) > bits(to)) return emit(absl::StrCat("trunc ", lf, " ", x, " to ", lt));
    return emit(absl::StrCat(from_unsigned ? "zext " : "sext ", lf, " ", x, " to ", lt));
  }

  // a `op` b by kBinary, for operands of dtype `d` (vectors when `v`).
  std::string binary(Ops op, DType d, bool v, const std::string& a, const std::string& b) {
    bool fp = is_llvm_float(d), u = dtypes::is_unsigned(d) || dtypes::is_bool(d);
    if (op == Ops::MAX && !dtypes::is_bool(d))
      return intrinsic(fp ? "maximum" : u ? "umax" : "smax", d, v, {a, b});
    auto it = std::find_if(std::begin(kBinary), std::end(kBinary),
                           [&](const Instruction& i) { return i.op == op; });
    const char* instr = it == std::end(kBinary) ? nullptr : fp ? it->fp : u ? it->uint : it->sint;
    TC_CHECK(instr, "LLVM renderer: no binary op ", op_name(op), " of ", d.name());
    return emit(absl::StrCat(instr, " ", type_of(d, v), " ", a, ", ", b));
  }

  // The address of index.src[1] in its buffer: one pointer, or one per lane.
  // `inbounds` unless the index may point outside the buffer (a masked load's lanes that are off).
  std::string pointers(const UOp& index, const std::string& idx, bool v, bool inbounds = true) {
    const UOp& g = *index.src[0];
    return emit(absl::StrFormat("getelementptr %s%s, ptr %%data%d, %s %s",
                                inbounds ? "inbounds " : "", memory_type(g.dtype), g.arg_ints()[0],
                                type_of(dtypes::index, v), idx));
  }
  // A scalar index made while rendering: emits its integer math over open loops that is new.
  // What it emits inside a loop is forgotten at the loop's end: those values do not reach past
  // the loop's blocks (a store after a reduce loop, at a base a load in the loop made first,
  // used it: LLVM's IR no longer verified, and the JIT's code crashed; found by tensor_fuzz).
  UOpRef emit_index(const UOpRef& base) {
    for (const UOp* n : base->toposort())
      if (n->op != Ops::CONST && !values_.contains(n)) {
        render(*n);
        if (!made_in_loop_.empty()) made_in_loop_.back().push_back(n);
      }
    keep_.push_back(base);
    return base;
  }
  // For a per-lane index `base + lane`, the scalar base: the lanes read consecutive elements.
  UOpRef contiguous_base(const UOp& index) {
    if (!lanes_.lane) return nullptr;
    UOpRef base = renderer::contiguous_base(index.src[1], lanes_.lane);
    return base ? emit_index(base) : nullptr;
  }
  // renderer::short_run, its base emitted.
  std::optional<LaneOffsets> short_run(const UOp& index) {
    if (!lanes_.lane) return std::nullopt;
    std::optional<LaneOffsets> run = renderer::short_run(index.src[1], lanes_.lane, lanes_.width);
    if (run) emit_index(run->base);
    return run;
  }

  std::string load(const UOp& u) {
    const UOp& index = *u.src[0];
    bool gated = u.src.size() > 1, v = vec(u);
    DType d = u.dtype;
    std::string mt = type_of(d, v, true), r;
    UOpRef base = v ? contiguous_base(index) : nullptr;
    if (!v || (base && !gated)) {  // one scalar, or one vector of consecutive elements
      std::string idx = val(base ? base : index.src[1], false);
      std::string gate = gated ? val(u.src[1], false) : "";
      if (gated) idx = emit(absl::StrCat("select i1 ", gate, ", i64 ", idx, ", i64 0"));
      r = emit(absl::StrFormat("load %s, ptr %s, align %d", mt, pointers(index, idx, false),
                               d.itemsize()));
      if (dtypes::is_bool(d)) r = emit(absl::StrCat("trunc ", mt, " ", r, " to ", type(u)));
      if (gated)
        r = emit(absl::StrCat("select i1 ", gate, ", ", type(u), " ", r, ", ", type(u), " ",
                              literal(d, 0, false)));
      return r;
    }
    // lanes of the memory type, each way of reading them below
    // A masked load of a width that is not a power of two came back wrong in its last lane on an
    // AVX2 host (LLVM 19; tests/fuzz/tensor_fuzz.cc found it, the IR reads right): those gather
    bool odd = (lanes_.width & (lanes_.width - 1)) != 0;
    if (std::optional<std::string> run = gated && base ? run_of_lanes(u, base) : std::nullopt)
      r = *run;
    else if (gated && base && odd)
      r = masked_gather(u);
    else if (gated && (base || !vec(*index.src[1])))
      r = gated_vector_load(u, base);
    else if (gated)
      r = masked_gather(u);
    else if (std::optional<LaneOffsets> run = short_run(index))
      r = shuffled_run(index, d, *run);
    else
      r = lane_by_lane(index, d);
    if (dtypes::is_bool(d)) r = emit(absl::StrCat("trunc ", mt, " ", r, " to ", type(u)));
    return r;
  }

  // Consecutive elements under a gate that depends on the lane alone and is on for one run of
  // lanes (a pad's or a cat's edge): that run loads as a shorter vector and the other lanes are 0
  // (one plain load, where a masked one cost a masked move, and a cat of two halves a blend of
  // two); nullopt for any other gate.
  std::optional<std::string> run_of_lanes(const UOp& u, const UOpRef& base) {
    std::optional<std::vector<int64_t>> on = per_lane(u.src[1], lanes_.lane, lanes_.width);
    if (!on) return std::nullopt;
    auto first = std::find(on->begin(), on->end(), 1), last = std::find(first, on->end(), 0);
    if (first == on->end() || std::find(last, on->end(), 1) != on->end()) return std::nullopt;
    int64_t at = first - on->begin(), n = last - first;
    std::string st = absl::StrFormat("<%d x %s>", n, memory_type(u.dtype)), mask;
    std::string idx = emit(absl::StrFormat("add i64 %s, %d", val(base, false), at));
    std::string w = emit(absl::StrFormat("load %s, ptr %s, align %d", st,
                                         pointers(*u.src[0], idx, false), u.dtype.itemsize()));
    for (int64_t i = 0; i < lanes_.width; i++)
      absl::StrAppend(&mask, i ? ", " : "", "i32 ", (*on)[i] ? i - at : n);
    return emit(absl::StrFormat("shufflevector %s %s, %s zeroinitializer, <%d x i32> <%s>", st, w,
                                st, lanes_.width, mask));
  }

  // A short run (renderer::short_run) loaded as one vector and shuffled into the lanes.
  std::string shuffled_run(const UOp& index, DType d, const LaneOffsets& run) {
    int64_t span = *std::max_element(run.offsets.begin(), run.offsets.end()) + 1;
    std::string st = absl::StrFormat("<%d x %s>", span, memory_type(d)), mask;
    std::string p = pointers(index, val(run.base, false), false);
    std::string w = emit(absl::StrFormat("load %s, ptr %s, align %d", st, p, d.itemsize()));
    for (int64_t o : run.offsets) absl::StrAppend(&mask, mask.empty() ? "" : ", ", "i32 ", o);
    return emit(absl::StrFormat("shufflevector %s %s, %s poison, <%d x i32> <%s>", st, w, st,
                                lanes_.width, mask));
  }

  // Per-lane addresses under a per-lane gate: a gather whose masked-off lanes read address 0.
  std::string masked_gather(const UOp& u) {
    const UOp& index = *u.src[0];
    DType d = u.dtype;
    std::string mt = type_of(d, true, true), bt = type_of(dtypes::bool_, true);
    std::string it = type_of(dtypes::index, true), mask = val(u.src[1], true);
    std::string idx = emit(absl::StrCat("select ", bt, " ", mask, ", ", it, " ",
                                        val(index.src[1], true), ", ", it, " zeroinitializer"));
    std::string fn =
        absl::StrFormat("llvm.masked.gather.%s.v%dp0",
                        suffix(dtypes::is_bool(d) ? dtypes::int8 : d, true), lanes_.width);
    std::string pt = absl::StrFormat("<%d x ptr>", lanes_.width);
    declares_.insert(absl::StrCat("declare ", mt, " @", fn, "(", pt, ", i32, ", bt, ", ", mt, ")"));
    return emit(absl::StrFormat("call %s @%s(%s %s, i32 %d, %s %s, %s zeroinitializer)", mt, fn, pt,
                                pointers(index, idx, true), d.itemsize(), bt, mask, mt));
  }

  // A load whose gate differs per lane (a pad's or a cat's edge inside the lanes): consecutive
  // elements load under the gate as a mask (masked-off lanes are not read, so their addresses
  // may lie outside the buffer); one element for all lanes loads once if any lane is on, and
  // the lanes that are off read 0. Scalarized, a gather under a mask is a branch a lane.
  std::string gated_vector_load(const UOp& u, const UOpRef& base) {
    const UOp& index = *u.src[0];
    DType d = u.dtype;
    std::string mt = type_of(d, true, true), bt = type_of(dtypes::bool_, true);
    std::string mask = val(u.src[1], true), r;
    if (base) {
      std::string fn = absl::StrFormat("llvm.masked.load.%s.p0",
                                       suffix(dtypes::is_bool(d) ? dtypes::int8 : d, true));
      declares_.insert(absl::StrCat("declare ", mt, " @", fn, "(ptr, i32, ", bt, ", ", mt, ")"));
      std::string p = pointers(index, val(base, false), false, /*inbounds=*/false);
      r = emit(absl::StrFormat("call %s @%s(ptr %s, i32 %d, %s %s, %s zeroinitializer)", mt, fn, p,
                               d.itemsize(), bt, mask, mt));
    } else {
      std::string fn = absl::StrFormat("llvm.vector.reduce.or.v%di1", lanes_.width);
      declares_.insert(absl::StrCat("declare i1 @", fn, "(", bt, ")"));
      std::string any = emit(absl::StrFormat("call i1 @%s(%s %s)", fn, bt, mask));
      std::string idx =
          emit(absl::StrCat("select i1 ", any, ", i64 ", val(index.src[1], false), ", i64 0"));
      std::string st = memory_type(d);
      std::string one = emit(absl::StrFormat("load %s, ptr %s, align %d", st,
                                             pointers(index, idx, false), d.itemsize()));
      std::string vt = type_of(d, true, true);
      std::string ins =
          emit(absl::StrCat("insertelement ", vt, " poison, ", st, " ", one, ", i64 0"));
      std::string all = emit(absl::StrCat("shufflevector ", vt, " ", ins, ", ", vt, " poison, <",
                                          lanes_.width, " x i32> zeroinitializer"));
      r = emit(
          absl::StrCat("select ", bt, " ", mask, ", ", vt, " ", all, ", ", vt, " zeroinitializer"));
    }
    return r;
  }

  void store(const UOp& u) {
    const UOp& index = *u.src[0];
    DType d = u.src[1]->dtype;
    bool v = vec(u);
    std::string mt = type_of(d, v, true);
    std::string x = val(u.src[1], v);
    if (dtypes::is_bool(d)) x = emit(absl::StrCat("zext ", type_of(d, v), " ", x, " to ", mt));
    UOpRef base = v ? contiguous_base(index) : nullptr;
    if (!v || base) {
      std::string p = pointers(index, val(base ? base : index.src[1], false), false);
      line_(absl::StrFormat("store %s %s, ptr %s, align %d", mt, x, p, d.itemsize()));
      return;
    }
    std::string ps = pointers(index, val(index.src[1], true), true);
    std::string fn =
        absl::StrFormat("llvm.masked.scatter.%s.v%dp0",
                        suffix(dtypes::is_bool(d) ? dtypes::int8 : d, true), lanes_.width);
    std::string pt = absl::StrFormat("<%d x ptr>", lanes_.width), bt = type_of(dtypes::bool_, true);
    declares_.insert(absl::StrCat("declare void @", fn, "(", mt, ", ", pt, ", i32, ", bt, ")"));
    line_(absl::StrFormat("call void @%s(%s %s, %s %s, i32 %d, %s %s)", fn, mt, x, pt, ps,
                          d.itemsize(), bt, literal(dtypes::bool_, 1, true)));
  }

  // A hint: each 64-byte line of its lanes' consecutive elements fetched into the cache (to
  // write when u's arg is 1); a scalar or scattered lanes get none. A prefetch never faults: the
  // address may lie past the buffer.
  void prefetch(const UOp& u) {
    const UOp& index = *u.src[0];
    const int64_t size = index.src[0]->dtype.itemsize(), bytes = size * lanes_.width;
    UOpRef base = lanes_.is_vector(index.src[1].get()) ? contiguous_base(index) : nullptr;
    if (!base) return;
    declares_.insert("declare void @llvm.prefetch.p0(ptr, i32, i32, i32)");
    for (int64_t at = 0; at < bytes; at += 64) {
      std::string idx = emit(absl::StrFormat("add i64 %s, %d", val(base, false), at / size));
      line_(absl::StrFormat("call void @llvm.prefetch.p0(ptr %s, i32 %d, i32 3, i32 1)",
                            pointers(index, idx, false, /*inbounds=*/false), u.arg_int()));
    }
  }

  // Lanes at scattered addresses loaded one element each: on the Zen 4 we measure that beats
  // vgather (the MNIST step's NCHW to NHWC copies and pool gradients ran 10-20% faster). A load
  // under a per-lane gate stays a masked gather (lane by lane it would be a branch a lane), and a
  // scattered store a vscatter (lane by lane, a conv's register tile of them made ResNet's
  // kernels several times slower to compile).
  std::string lane_by_lane(const UOp& index, DType d) {
    std::string idx = val(index.src[1], true), st = memory_type(d), vt = type_of(d, true, true);
    std::string it = type_of(dtypes::index, true), r = "poison";
    for (int i = 0; i < lanes_.width; i++) {
      std::string at = emit(absl::StrFormat("extractelement %s %s, i64 %d", it, idx, i));
      std::string e = emit(absl::StrFormat("load %s, ptr %s, align %d", st,
                                           pointers(index, at, false), d.itemsize()));
      r = emit(absl::StrFormat("insertelement %s %s, %s %s, i64 %d", vt, r, st, e, i));
    }
    return r;
  }

  // A loop's head; its users read its index.
  std::string loop(const UOp& r) {
    int64_t n = r.arg_int();
    std::string end = val(r.src[0], false), start = "0";
    if (n == parallel_range_ || n == parallel_range_ + kRestLoop) {  // this core's share
      start = emit(
          absl::StrCat("sdiv i64 ", emit(absl::StrCat("mul i64 ", end, ", %core")), ", %ncores"));
      std::string next = emit("add i64 %core, 1");
      end = emit(absl::StrCat("sdiv i64 ",
                              emit(absl::StrCat("mul i64 ", val(r.src[0], false), ", ", next)),
                              ", %ncores"));
    }
    line_(absl::StrFormat("store i64 %s, ptr %%ridx%d", start, n));
    line_(absl::StrFormat("br label %%loop%d", n));
    absl::StrAppendFormat(&body_, "loop%d:\n", n);
    std::string i = emit(absl::StrFormat("load i64, ptr %%ridx%d", n));
    std::string c = emit(absl::StrFormat("icmp slt i64 %s, %s", i, end));
    line_(absl::StrFormat("br i1 %s, label %%body%d, label %%exit%d", c, n, n));
    absl::StrAppendFormat(&body_, "body%d:\n", n);
    made_in_loop_.emplace_back();
    return i;
  }

  void end_loop(const UOp& u) {
    int64_t n = u.src[0]->arg_int();
    std::string next = emit(absl::StrCat("add i64 ", value(*u.src[0]), ", 1"));
    line_(absl::StrFormat("store i64 %s, ptr %%ridx%d", next, n));
    if (reduce_loops_.contains(u.src[0].get()) && u.src[0]->src[0]->op == Ops::CONST) {
      line_(absl::StrFormat("br label %%loop%d", n));
    } else {
      // LLVM unrolls a reduce's loop (a short sum runs straight through), not the output
      // loops: their lanes and register tiles are unrolled already, and unrolling them again
      // was a quarter of a cold start's compile time for no speed. Nor a narrowed reduce
      // loop (codegen/narrow.h), whose length varies: unrolled with a remainder loop, a
      // conv's took 3x the compile time
      int md = nmetadata_;
      nmetadata_ += 2;
      line_(absl::StrFormat("br label %%loop%d, !llvm.loop !%d", n, md));
      absl::StrAppendFormat(&metadata_,
                            "!%d = distinct !{!%d, !%d}\n!%d = !{!\"llvm.loop.unroll.disable\"}\n",
                            md, md, md + 1, md + 1);
    }
    absl::StrAppendFormat(&body_, "exit%d:\n", n);
    for (const UOp* made : made_in_loop_.back()) values_.erase(made);
    made_in_loop_.pop_back();
  }

  // The lanes combined as a tree, halves with halves, down to four combined in order (as a plain
  // loop would: a sum of four lanes is exactly the sequential one): a chain of one op per lane
  // after every reduce loop (LLVM leaves it a chain) is what a short reduce with many outputs
  // waits on.
  std::string hreduce(const UOp& u) {
    const Ops op = static_cast<Ops>(u.arg_int());
    const int width = lanes_.width;
    const std::string s = type_of(u.dtype, false);
    std::string x = val(u.src[0], true), r;
    int w = width;
    for (; w > 4 && w % 2 == 0; w /= 2) {
      const std::string t = absl::StrFormat("<%d x %s>", w, s);
      auto half = [&](int from) {
        std::vector<std::string> lanes;
        for (int i = 0; i < w / 2; i++) lanes.push_back(absl::StrCat("i32 ", from + i));
        return emit(absl::StrFormat("shufflevector %s %s, %s poison, <%d x i32> <%s>", t, x, t,
                                    w / 2, absl::StrJoin(lanes, ", ")));
      };
      std::string lo = half(0), hi = half(w / 2);
      lanes_.width = w / 2;  // binary() types its vectors by the lanes' width
      x = binary(op, u.dtype, true, lo, hi);
      lanes_.width = width;
    }
    for (int i = 0; i < w; i++) {
      std::string e = emit(absl::StrFormat("extractelement <%d x %s> %s, i64 %d", w, s, x, i));
      r = i == 0 ? e : binary(op, u.dtype, false, r, e);
    }
    return r;
  }

  // The table: what each op emits, and the register (or literal) its users read.
  void add_rules() {
    // literals, and addresses computed by their loads and stores
    rule({Ops::CONST, Ops::DEFINE_GLOBAL, Ops::INDEX}, [](const UOp&) {});
    rule({Ops::LANE}, [this](const UOp&, const Operands&) { return lane_ids(); });
    rule({Ops::RANGE}, [this](const UOp& u, const Operands&) { return loop(u); });
    rule({Ops::END}, [this](const UOp& u) { end_loop(u); });
    rule({Ops::DEFINE_ACC}, [this](const UOp& u) {
      line_(
          absl::StrFormat("store %s %s, ptr %%acc%d", type(u), val(u.src[0], vec(u)), u.arg_int()));
    });
    rule({Ops::ASSIGN}, [this](const UOp& u) {  // its users load its final value
      int64_t n = u.src[0]->arg_int();
      bool v = vec(u);
      std::string cur = emit(absl::StrFormat("load %s, ptr %%acc%d", type(u), n));
      std::string next = binary(static_cast<Ops>(u.arg_int()), u.dtype, v, cur, val(u.src[1], v));
      line_(absl::StrFormat("store %s %s, ptr %%acc%d", type(u), next, n));
    });
    rule({Ops::HREDUCE}, [this](const UOp& u, const Operands&) { return hreduce(u); });
    rule({Ops::LOAD}, [this](const UOp& u, const Operands&) { return load(u); });
    rule({Ops::STORE}, [this](const UOp& u) { store(u); });
    rule({Ops::STASH}, [this](const UOp& u, const Operands&) {
      store(u);
      return val(u.src[1], vec(u));
    });
    rule({Ops::PREFETCH}, [this](const UOp& u, const Operands&) {
      prefetch(u);
      return val(u.src[1], vec(u));
    });
    rule({Ops::CAST}, [this](const UOp& u, const Operands& s) {
      return cast(s[0], u.src[0]->dtype, u.dtype, vec(u));
    });
    rule({Ops::BITCAST}, [this](const UOp& u, const Operands& s) {
      return emit(
          absl::StrCat("bitcast ", type_of(u.src[0]->dtype, vec(u)), " ", s[0], " to ", type(u)));
    });
    rule({Ops::NEG}, [this](const UOp& u, const Operands& s) {
      DType d = u.src[0]->dtype;
      return is_llvm_float(d)
                 ? emit(absl::StrCat("fneg ", type(u), " ", s[0]))
                 : emit(absl::StrCat("sub ", type(u), " ", literal(d, 0, vec(u)), ", ", s[0]));
    });
    rule({Ops::RECIP}, [this](const UOp& u, const Operands& s) {
      return emit(absl::StrCat("fdiv ", type(u), " ", literal(u.dtype, 1, vec(u)), ", ", s[0]));
    });
    for (auto [op, fn] : kMathFunctions)
      rule({op}, [this, fn = fn](const UOp& u, const Operands& s) {
        return intrinsic(fn, u.dtype, vec(u), s);
      });
    rule({Ops::WHERE}, [this](const UOp& u, const Operands& s) {
      return emit(absl::StrCat("select ", type_of(dtypes::bool_, vec(u)), " ", s[0], ", ", type(u),
                               " ", s[1], ", ", type(u), " ", s[2]));
    });
    rule({Ops::MULACC}, [this](const UOp& u, const Operands& s) {
      bool v = vec(u);
      if (is_llvm_float(u.dtype)) return intrinsic("fmuladd", u.dtype, v, s);
      return binary(Ops::ADD, u.dtype, v, binary(Ops::MUL, u.dtype, v, s[0], s[1]), s[2]);
    });
    rule({Ops::DOT4}, [this](const UOp& u, const Operands& s) {
      auto add = [this](const std::string& instr) { return emit(instr); };
      return dot4_ir(vec(u) ? lanes_.width : 0, byte_dot_, s[0], s[1], s[2], add, declares_);
    });
    rule(group::is_binary, [this](const UOp& u, const Operands& s) {
      return binary(u.op, u.src[0]->dtype, vec(u), s[0], s[1]);
    });
  }

  const std::vector<UOpRef>& program_;
  Lanes lanes_;
  int64_t parallel_range_;
  bool byte_dot_;
  std::string body_, metadata_;  // metadata_: the loops' !llvm.loop nodes, after the functions
  std::set<std::string> declares_;
  absl::flat_hash_set<const UOp*> reduce_loops_;  // RANGEs an accumulator is updated in
  int nmetadata_ = 0;
  std::vector<UOpRef> keep_;  // nodes made while rendering, alive while values_ holds their address
  std::vector<std::vector<const UOp*>> made_in_loop_;  // by emit_index, per open loop
  int ntmp_ = 0;
};

}  // namespace

std::string render_llvm(const std::string& name, const std::vector<UOpRef>& program,
                        int64_t parallel_range, bool byte_dot) {
  return LlvmIr(program, parallel_range, byte_dot).kernel(name);
}

}  // namespace tc::renderer
