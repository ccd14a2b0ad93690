// Dtype promotion against tinygrad's lattice written out independently: every dtype pair by
// dtype and by value, scalar operands, where, sum and division result dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "tests/tensor/reference.h"
#include "tinycore/dtype.h"
#include "tinycore/tensor.h"

namespace {

namespace ref = tcref;
namespace dt = tc::dtypes;
using ref::NDArray;
using tc::DType;
using tc::Tensor;
using S = std::vector<int64_t>;

NDArray vals(S shape, std::vector<double> v) { return NDArray(std::move(shape), std::move(v)); }

// ================================================================== dtype promotion

// tinygrad's promo_lattice (dtype.py), written out independently of tinycore/dtype.cc.
DType independent_least_upper(DType a, DType b) {
  static const std::map<tc::Scalar, std::vector<DType>> parents = {
      {tc::Scalar::Bool, {dt::int8, dt::uint8}},
      {tc::Scalar::Int8, {dt::int16}},
      {tc::Scalar::Int16, {dt::int32}},
      {tc::Scalar::Int32, {dt::int64}},
      {tc::Scalar::Int64, {dt::float16, dt::bfloat16}},
      {tc::Scalar::UInt8, {dt::int16, dt::uint16}},
      {tc::Scalar::UInt16, {dt::int32, dt::uint32}},
      {tc::Scalar::UInt32, {dt::int64, dt::uint64}},
      {tc::Scalar::UInt64, {dt::float16, dt::bfloat16}},
      {tc::Scalar::Float16, {dt::float32}},
      {tc::Scalar::BFloat16, {dt::float32}},
      {tc::Scalar::Float32, {dt::float64}},
      {tc::Scalar::Float64, {}},
  };
  // tinygrad's DType priorities decide among common ancestors
  static const std::map<tc::Scalar, int> priority = {
      {tc::Scalar::Bool, 0},     {tc::Scalar::Int8, 1},      {tc::Scalar::UInt8, 2},
      {tc::Scalar::Int16, 3},    {tc::Scalar::UInt16, 4},    {tc::Scalar::Int32, 5},
      {tc::Scalar::UInt32, 6},   {tc::Scalar::Int64, 7},     {tc::Scalar::UInt64, 8},
      {tc::Scalar::Float16, 11}, {tc::Scalar::BFloat16, 12}, {tc::Scalar::Float32, 13},
      {tc::Scalar::Float64, 14},
  };
  auto up = [&](DType d) {
    std::set<tc::Scalar> seen = {d.scalar};
    std::vector<DType> frontier = {d};
    while (!frontier.empty()) {
      DType x = frontier.back();
      frontier.pop_back();
      for (DType p : parents.at(x.scalar))
        if (seen.insert(p.scalar).second) frontier.push_back(p);
    }
    return seen;
  };
  std::set<tc::Scalar> sa = up(a), sb = up(b);
  tc::Scalar best = tc::Scalar::Void;
  for (tc::Scalar s : sa)
    if (sb.count(s) && (best == tc::Scalar::Void || priority.at(s) < priority.at(best))) best = s;
  return DType{best};
}

TEST(Promotion, TinygradLatticeFacts) {
  struct P {
    DType a, b, want;
  };
  std::vector<P> facts = {
      {dt::bool_, dt::int8, dt::int8},         {dt::int8, dt::uint8, dt::int16},
      {dt::uint8, dt::int16, dt::int16},       {dt::int16, dt::uint16, dt::int32},
      {dt::uint16, dt::int32, dt::int32},      {dt::int32, dt::uint32, dt::int64},
      {dt::uint32, dt::int64, dt::int64},      {dt::int64, dt::uint64, dt::float16},
      {dt::int32, dt::float16, dt::float16},   {dt::float16, dt::bfloat16, dt::float32},
      {dt::float16, dt::float32, dt::float32}, {dt::float32, dt::float64, dt::float64},
      {dt::bool_, dt::float32, dt::float32},   {dt::bool_, dt::float64, dt::float64},
      {dt::float16, dt::int64, dt::float16},   {dt::float16, dt::uint64, dt::float16},
      {dt::bool_, dt::bool_, dt::bool_},       {dt::bfloat16, dt::int64, dt::bfloat16},
  };
  for (const P& p : facts) {
    EXPECT_EQ(independent_least_upper(p.a, p.b), p.want) << p.a.name() << " + " << p.b.name();
    EXPECT_EQ(tc::least_upper_dtype({p.a, p.b}), p.want) << p.a.name() << " + " << p.b.name();
    EXPECT_EQ(tc::least_upper_dtype({p.b, p.a}), p.want) << p.b.name() << " + " << p.a.name();
  }
}

TEST(Promotion, EveryDtypePairAdds) {
  NDArray va = vals({2, 3}, {0, 1, 2, 3, 4, 5}), vb = vals({2, 3}, {5, 4, 3, 2, 1, 0});
  NDArray ba = vals({2, 3}, {0, 1, 0, 1, 1, 0}), bb = vals({2, 3}, {1, 1, 0, 0, 1, 0});
  for (DType a : dt::all())
    for (DType b : dt::all()) {
      std::string what = a.name() + " + " + b.name();
      NDArray xa = dt::is_bool(a) ? ba : va, xb = dt::is_bool(b) ? bb : vb;
      Tensor out = ref::tensor(xa, a) + ref::tensor(xb, b);
      DType want = independent_least_upper(a, b);
      EXPECT_EQ(out.dtype(), want) << what;
      EXPECT_EQ(out.dtype(), tc::least_upper_dtype({a, b})) << what;
      NDArray sum = ref::zip(xa, xb, [](double p, double q) { return p + q; });
      if (dt::is_bool(want))
        sum = ref::map(sum, [](double v) { return v != 0 ? 1.0 : 0.0; });  // logical or
      ref::expect_exact(out, sum, what);
    }
}

TEST(Promotion, ScalarOperands) {
  // tinygrad test_broadcast_scalar: a float scalar keeps float dtypes else default_float, an int
  // scalar keeps float and int dtypes else default_int, a bool scalar keeps the dtype
  for (DType d : dt::all()) {
    Tensor o = Tensor::ones({2, 2}, d);
    std::string n = d.name();
    DType f = dt::is_float(d) ? d : dt::float32;
    DType i = dt::is_float(d) || dt::is_int(d) ? d : dt::int32;
    EXPECT_EQ((o + 2.5).dtype(), f) << n;
    EXPECT_EQ((o + 2).dtype(), i) << n;
    EXPECT_EQ((o + true).dtype(), d) << n;
    ref::expect_exact(o + 2.5, ref::represent(vals({2, 2}, {3.5, 3.5, 3.5, 3.5}), f), n + " + 2.5");
    ref::expect_exact(o + 2, vals({2, 2}, {3, 3, 3, 3}), n + " + 2");
    double with_true = dt::is_bool(d) ? 1 : 2;  // bool + true is logical or
    ref::expect_exact(o + true, vals({2, 2}, {with_true, with_true, with_true, with_true}),
                      n + " + true");
    EXPECT_EQ(o.maximum(3.1).dtype(), f) << n;
    EXPECT_EQ(o.maximum(3).dtype(), i) << n;
    EXPECT_EQ(o.maximum(true).dtype(), d) << n;
  }
  // the cases named in the spec
  Tensor i32 = ref::tensor(vals({3}, {1, 2, 3}), dt::int32);
  EXPECT_EQ((i32 + 2).dtype(), dt::int32);
  ref::expect_exact(i32 + 2, vals({3}, {3, 4, 5}), "int32 + 2");
  EXPECT_EQ((i32 + 2.5).dtype(), dt::float32);
  ref::expect_exact(i32 + 2.5, vals({3}, {3.5, 4.5, 5.5}), "int32 + 2.5");
  Tensor h = ref::tensor(vals({3}, {1, 2, 3}), dt::float16);
  EXPECT_EQ((h + 2.5).dtype(), dt::float16);
  ref::expect_exact(h + 2.5, vals({3}, {3.5, 4.5, 5.5}), "float16 + 2.5");
  Tensor b = ref::tensor(vals({3}, {1, 0, 1}), dt::bool_);
  EXPECT_EQ((b + 1).dtype(), dt::int32);
  ref::expect_exact(b + 1, vals({3}, {2, 1, 2}), "bool + 1");
  EXPECT_EQ((1 + b).dtype(), dt::int32);
  EXPECT_EQ((b * 2.5).dtype(), dt::float32);
  ref::expect_exact(b * 2.5, vals({3}, {2.5, 0, 2.5}), "bool * 2.5");
  Tensor u8 = ref::tensor(vals({3}, {1, 2, 250}), dt::uint8);
  EXPECT_EQ((u8 + 3).dtype(), dt::uint8);
  ref::expect_exact(u8 + 3, vals({3}, {4, 5, 253}), "uint8 + 3");
}

TEST(Promotion, WhereScalars) {
  // tinygrad test_where_one_scalar / test_where_two_scalars
  Tensor c = ref::tensor(vals({2}, {1, 0}), dt::bool_);
  for (DType d : dt::all()) {
    Tensor t = Tensor::full({}, 2, d);
    DType f = dt::is_float(d) ? d : dt::float32;
    DType i = dt::is_float(d) || dt::is_int(d) ? d : dt::int32;
    EXPECT_EQ(c.where(t, 3.2).dtype(), f) << d.name();
    EXPECT_EQ(c.where(3.2, t).dtype(), f) << d.name();
    EXPECT_EQ(c.where(t, 3).dtype(), i) << d.name();
    EXPECT_EQ(c.where(3, t).dtype(), i) << d.name();
    EXPECT_EQ(c.where(t, true).dtype(), d) << d.name();
    EXPECT_EQ(c.where(true, t).dtype(), d) << d.name();
  }
  EXPECT_EQ(c.where(3.1, 3.2).dtype(), dt::float32);
  EXPECT_EQ(c.where(3.1, 3).dtype(), dt::float32);
  EXPECT_EQ(c.where(3, 3.1).dtype(), dt::float32);
  EXPECT_EQ(c.where(3.1, true).dtype(), dt::float32);
  EXPECT_EQ(c.where(3, 2).dtype(), dt::int32);
  EXPECT_EQ(c.where(3, true).dtype(), dt::int32);
  EXPECT_EQ(c.where(false, true).dtype(), dt::bool_);
  ref::expect_exact(c.where(3.5, 2), vals({2}, {3.5, 2}), "where(c, 3.5, 2)");
  ref::expect_exact(c.where(3, true), vals({2}, {3, 1}), "where(c, 3, true)");
}

TEST(Promotion, SumDtypes) {
  struct Case {
    DType in, out;
  };
  std::vector<Case> cases = {
      {dt::bool_, dt::int32},     {dt::int8, dt::int32},        {dt::int16, dt::int32},
      {dt::int32, dt::int32},     {dt::int64, dt::int64},       {dt::uint8, dt::uint32},
      {dt::uint16, dt::uint32},   {dt::uint32, dt::uint32},     {dt::uint64, dt::uint64},
      {dt::float16, dt::float16}, {dt::bfloat16, dt::bfloat16}, {dt::float32, dt::float32},
      {dt::float64, dt::float64}};
  NDArray v = vals({2, 3}, {0, 1, 1, 1, 0, 1});
  for (const Case& c : cases) {
    Tensor s = ref::tensor(v, c.in).sum(1);
    EXPECT_EQ(s.dtype(), c.out) << c.in.name();
    ref::expect_exact(s, vals({2}, {2, 2}), "sum " + c.in.name());
    EXPECT_EQ(ref::tensor(v, c.in).max(1).dtype(), c.in) << c.in.name();
  }
}

TEST(Promotion, DivisionIsFloat) {
  // tinygrad test_div / test_div_const
  Tensor i32 = ref::tensor(vals({2}, {1, 2}), dt::int32),
         two32 = ref::tensor(vals({2}, {2, 2}), dt::int32);
  Tensor i16 = ref::tensor(vals({2}, {1, 2}), dt::int16);
  Tensor f32 = ref::tensor(vals({2}, {1, 2}), dt::float32),
         two16 = ref::tensor(vals({2}, {2, 2}), dt::float16);
  EXPECT_EQ((i32 / two32).dtype(), dt::float32);
  ref::expect_exact(i32 / two32, vals({2}, {0.5, 1}), "int32 / int32");
  EXPECT_EQ((i16 / two32).dtype(), dt::float32);
  EXPECT_EQ((f32 / two16).dtype(), dt::float32);
  EXPECT_EQ((i32 / 2).dtype(), dt::float32);
  EXPECT_EQ((i32 / 2.0).dtype(), dt::float32);
  Tensor h = ref::tensor(vals({2}, {1, 2}), dt::float16);
  EXPECT_EQ((h / 2).dtype(), dt::float16);
  EXPECT_EQ((h / 2.0).dtype(), dt::float16);
  ref::expect_exact(h / 2, vals({2}, {0.5, 1}), "half / 2");
  Tensor u = ref::tensor(vals({3}, {7, 9, 200}), dt::uint8);
  EXPECT_EQ((u / ref::tensor(vals({3}, {2, 4, 8}), dt::uint8)).dtype(), dt::float32);
  ref::expect_exact(u / ref::tensor(vals({3}, {2, 4, 8}), dt::uint8), vals({3}, {3.5, 2.25, 25}),
                    "uint8 / uint8");
}

TEST(Promotion, IntDividedByHalfIsHalf) {
  // tinygrad: Tensor([1, 2], int32) / Tensor([2, 2], float16) has dtype float16 (operands are
  // promoted together first, then to a float)
  Tensor i32 = ref::tensor(vals({2}, {1, 2}), dt::int32),
         two16 = ref::tensor(vals({2}, {2, 2}), dt::float16);
  EXPECT_EQ((i32 / two16).dtype(), dt::float16);
  ref::expect_exact(i32 / two16, vals({2}, {0.5, 1}), "int32 / float16");
}

}  // namespace
