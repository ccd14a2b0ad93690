#include "tinycore/dtype.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <type_traits>

#include "tinycore/dtype/visit.h"
#include "tinycore/error.h"

namespace tc {
namespace {

struct Info {
  const char* name;
  int itemsize;
  int priority;
};

Info info(Scalar s) {
  switch (s) {
    case Scalar::Void: return {"void", 0, -1};
    case Scalar::Bool: return {"bool", 1, 0};
    case Scalar::Int8: return {"char", 1, 1};
    case Scalar::UInt8: return {"uchar", 1, 2};
    case Scalar::Int16: return {"short", 2, 3};
    case Scalar::UInt16: return {"ushort", 2, 4};
    case Scalar::Int32: return {"int", 4, 5};
    case Scalar::UInt32: return {"uint", 4, 6};
    case Scalar::Int64: return {"long", 8, 7};
    case Scalar::UInt64: return {"ulong", 8, 8};
    case Scalar::Float16: return {"half", 2, 11};
    case Scalar::BFloat16: return {"bfloat16", 2, 12};
    case Scalar::Float32: return {"float", 4, 13};
    case Scalar::Float64: return {"double", 8, 14};
    case Scalar::Index: return {"index", 8, -1};
  }
  return {"?", 0, -1};
}

// tinygrad's promotion lattice: each dtype and the dtypes it promotes to directly.
const std::map<Scalar, std::vector<Scalar>>& lattice() {
  static const std::map<Scalar, std::vector<Scalar>> l = {
      {Scalar::Bool, {Scalar::Int8, Scalar::UInt8}},
      {Scalar::Int8, {Scalar::Int16}},
      {Scalar::Int16, {Scalar::Int32}},
      {Scalar::Int32, {Scalar::Int64}},
      {Scalar::Int64, {Scalar::Float16, Scalar::BFloat16}},
      {Scalar::UInt8, {Scalar::Int16, Scalar::UInt16}},
      {Scalar::UInt16, {Scalar::Int32, Scalar::UInt32}},
      {Scalar::UInt32, {Scalar::Int64, Scalar::UInt64}},
      {Scalar::UInt64, {Scalar::Float16, Scalar::BFloat16}},
      {Scalar::Float16, {Scalar::Float32}},
      {Scalar::BFloat16, {Scalar::Float32}},
      {Scalar::Float32, {Scalar::Float64}},
      {Scalar::Float64, {}},
  };
  return l;
}

// `s` and every dtype above it in the lattice.
std::vector<Scalar> ancestors(Scalar s) {
  std::vector<Scalar> out = {s};
  for (size_t i = 0; i < out.size(); i++) {
    auto it = lattice().find(out[i]);
    if (it == lattice().end()) continue;
    for (Scalar p : it->second)
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

}  // namespace

int DType::itemsize() const { return info(scalar).itemsize; }
int DType::priority() const { return info(scalar).priority; }
std::string DType::name() const {
  std::string n = info(scalar).name;
  if (count > 1) n += std::to_string(count);
  if (ptr) n += "*";
  return n;
}

namespace dtypes {
const std::vector<DType>& all() {
  static const std::vector<DType> a = {bool_,  int8,    int16,    int32,   int64,
                                       uint8,  uint16,  uint32,   uint64,  float16,
                                       bfloat16, float32, float64};
  return a;
}
bool is_float(DType d) {
  return d.scalar == Scalar::Float16 || d.scalar == Scalar::BFloat16 ||
         d.scalar == Scalar::Float32 || d.scalar == Scalar::Float64;
}
bool is_unsigned(DType d) {
  return d.scalar == Scalar::UInt8 || d.scalar == Scalar::UInt16 || d.scalar == Scalar::UInt32 ||
         d.scalar == Scalar::UInt64;
}
bool is_int(DType d) {
  return is_unsigned(d) || d.scalar == Scalar::Int8 || d.scalar == Scalar::Int16 ||
         d.scalar == Scalar::Int32 || d.scalar == Scalar::Int64 || d.scalar == Scalar::Index;
}
double min(DType d) {
  switch (d.scalar) {
    case Scalar::Bool: return 0;
    case Scalar::Int8: return -128;
    case Scalar::Int16: return -32768;
    case Scalar::Int32: return std::numeric_limits<int32_t>::min();
    case Scalar::Int64:
    case Scalar::Index: return static_cast<double>(std::numeric_limits<int64_t>::min());
    case Scalar::UInt8:
    case Scalar::UInt16:
    case Scalar::UInt32:
    case Scalar::UInt64: return 0;
    case Scalar::Float16: return -65504.0;
    case Scalar::BFloat16: return -3.3895313892515355e38;
    case Scalar::Float32: return -std::numeric_limits<float>::max();
    default: return -std::numeric_limits<double>::max();
  }
}
double max(DType d) {
  switch (d.scalar) {
    case Scalar::Bool: return 1;
    case Scalar::Int8: return 127;
    case Scalar::Int16: return 32767;
    case Scalar::Int32: return std::numeric_limits<int32_t>::max();
    case Scalar::Int64:
    case Scalar::Index: return static_cast<double>(std::numeric_limits<int64_t>::max());
    case Scalar::UInt8: return 255;
    case Scalar::UInt16: return 65535;
    case Scalar::UInt32: return std::numeric_limits<uint32_t>::max();
    case Scalar::UInt64: return static_cast<double>(std::numeric_limits<uint64_t>::max());
    case Scalar::Float16: return 65504.0;
    case Scalar::BFloat16: return 3.3895313892515355e38;
    case Scalar::Float32: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}
DType from_name(const std::string& name) {
  static const std::map<std::string, DType> names = {
      {"bool", bool_},        {"int8", int8},         {"char", int8},       {"int16", int16},
      {"short", int16},       {"int32", int32},       {"int", int32},       {"int64", int64},
      {"long", int64},        {"uint8", uint8},       {"uchar", uint8},     {"uint16", uint16},
      {"ushort", uint16},     {"uint32", uint32},     {"uint", uint32},     {"uint64", uint64},
      {"ulong", uint64},      {"float16", float16},   {"half", float16},    {"bfloat16", bfloat16},
      {"float32", float32},   {"float", float32},     {"float64", float64}, {"double", float64}};
  auto it = names.find(name);
  if (it == names.end()) fail("unknown dtype '%s'", name);
  return it->second;
}
}  // namespace dtypes

DType least_upper_dtype(std::initializer_list<DType> ds) {
  TC_CHECK(ds.size() > 0, "least_upper_dtype of nothing");
  std::vector<Scalar> common = ancestors(ds.begin()->scalar);
  for (const DType& d : ds) {
    std::vector<Scalar> a = ancestors(d.scalar);
    std::erase_if(common, [&](Scalar s) { return std::find(a.begin(), a.end(), s) == a.end(); });
  }
  TC_CHECK(!common.empty(), "no common dtype");
  DType best{common[0]};
  for (Scalar s : common)
    if (DType{s}.priority() < best.priority()) best = DType{s};
  return best;
}

DType least_upper_float(DType d) {
  return dtypes::is_float(d) ? d : least_upper_dtype({d, dtypes::default_float});
}

DType sum_acc_dtype(DType d) {
  if (dtypes::is_unsigned(d)) return least_upper_dtype({d, dtypes::uint32});
  if (dtypes::is_int(d) || dtypes::is_bool(d)) return least_upper_dtype({d, dtypes::int32});
  return least_upper_dtype({d, dtypes::float32});
}

int64_t cast_int(int64_t v, DType to) {
  if (to.scalar == Scalar::Void) return v;
  return visit_dtype(to, [&]<class T>() -> int64_t {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(v);  // bool: v != 0
    return v;                                                       // floats: v as it is
  });
}

namespace {
// Round a float to bfloat16 (round to nearest even), as the generated code does.
float round_bf16(float f) {
  if (std::isnan(f)) return f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, 4);
  return f;
}
}  // namespace

double cast_value(double v, DType to) {
  if (dtypes::is_bool(to)) return v != 0;
  if (dtypes::is_float(to)) {
    if (to.scalar == Scalar::Float64) return v;
    if (to.scalar == Scalar::Float32) return static_cast<float>(v);
    if (to.scalar == Scalar::Float16) return static_cast<double>(static_cast<_Float16>(v));
    return round_bf16(static_cast<float>(v));
  }
  if (std::isnan(v) || std::isinf(v)) return 0;
  if (to.scalar == Scalar::UInt64) return static_cast<double>(static_cast<uint64_t>(std::trunc(v)));
  return static_cast<double>(cast_int(static_cast<int64_t>(std::trunc(v)), to));
}

}  // namespace tc
