// dtypes: sizes, names, tinygrad's promotion lattice, and host-side casting rules.
#include "tinycore/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "tinycore/dtype/visit.h"
#include "tinycore/error.h"

namespace tc {
namespace {

TEST(DType, SizesAndNames) {
  EXPECT_EQ(dtypes::bool_.itemsize(), 1);
  EXPECT_EQ(dtypes::bfloat16.itemsize(), 2);
  EXPECT_EQ(dtypes::uint64.itemsize(), 8);
  EXPECT_EQ(dtypes::float32.name(), "float");
  EXPECT_EQ(dtypes::float32.as_ptr().name(), "float*");
  EXPECT_EQ(dtypes::float32.vec(4).name(), "float4");
  EXPECT_EQ(dtypes::all().size(), 13u);
  EXPECT_EQ(dtypes::from_name("half"), dtypes::float16);
  EXPECT_THROW(dtypes::from_name("float128"), Error);
}

TEST(DType, Kinds) {
  EXPECT_TRUE(dtypes::is_float(dtypes::bfloat16));
  EXPECT_FALSE(dtypes::is_float(dtypes::int8));
  EXPECT_TRUE(dtypes::is_int(dtypes::uint16));
  EXPECT_FALSE(dtypes::is_int(dtypes::bool_));
  EXPECT_TRUE(dtypes::is_unsigned(dtypes::uint64));
  EXPECT_FALSE(dtypes::is_unsigned(dtypes::int64));
}

struct Promo {
  DType a, b, want;
};

TEST(DType, LeastUpperDtype) {
  // tinygrad's lattice (dtype.py promo_lattice)
  std::vector<Promo> cases = {
      {dtypes::bool_, dtypes::int8, dtypes::int8},        {dtypes::bool_, dtypes::uint8, dtypes::uint8},
      {dtypes::int8, dtypes::uint8, dtypes::int16},       {dtypes::uint8, dtypes::int16, dtypes::int16},
      {dtypes::uint16, dtypes::int16, dtypes::int32},     {dtypes::uint32, dtypes::int32, dtypes::int64},
      {dtypes::uint64, dtypes::int64, dtypes::float16},   {dtypes::int32, dtypes::float16, dtypes::float16},
      {dtypes::float16, dtypes::bfloat16, dtypes::float32}, {dtypes::bfloat16, dtypes::int64, dtypes::bfloat16},
      {dtypes::float32, dtypes::float64, dtypes::float64}, {dtypes::bool_, dtypes::bool_, dtypes::bool_},
      {dtypes::uint8, dtypes::uint32, dtypes::uint32},    {dtypes::int8, dtypes::float32, dtypes::float32},
  };
  for (const Promo& p : cases) {
    EXPECT_EQ(least_upper_dtype({p.a, p.b}), p.want) << p.a.name() << " + " << p.b.name();
    EXPECT_EQ(least_upper_dtype({p.b, p.a}), p.want) << p.b.name() << " + " << p.a.name();
  }
  EXPECT_EQ(least_upper_dtype({dtypes::int8, dtypes::uint8, dtypes::float16}), dtypes::float16);
}

TEST(DType, LatticeIsAJoin) {
  // for every pair: the result is an upper bound of both, and promoting it again changes nothing
  for (DType a : dtypes::all())
    for (DType b : dtypes::all()) {
      DType u = least_upper_dtype({a, b});
      EXPECT_EQ(least_upper_dtype({u, a}), u);
      EXPECT_EQ(least_upper_dtype({u, b}), u);
    }
}

TEST(DType, FloatAndSumDtypes) {
  EXPECT_EQ(least_upper_float(dtypes::int32), dtypes::float32);
  EXPECT_EQ(least_upper_float(dtypes::float16), dtypes::float16);
  EXPECT_EQ(least_upper_float(dtypes::bool_), dtypes::float32);
  EXPECT_EQ(sum_acc_dtype(dtypes::int8), dtypes::int32);
  EXPECT_EQ(sum_acc_dtype(dtypes::uint8), dtypes::uint32);
  EXPECT_EQ(sum_acc_dtype(dtypes::bool_), dtypes::int32);
  EXPECT_EQ(sum_acc_dtype(dtypes::float16), dtypes::float32);
  EXPECT_EQ(sum_acc_dtype(dtypes::int64), dtypes::int64);
  EXPECT_EQ(sum_acc_dtype(dtypes::float64), dtypes::float64);
}

// Whether visit_dtype calls f with Want for `d`, its vector form and its pointer form.
template <class Want>
bool visits_as(DType d) {
  auto is_want = []<class T>() { return std::is_same_v<T, Want>; };
  return visit_dtype(d, is_want) && visit_dtype(d.vec(4), is_want) &&
         visit_dtype(d.as_ptr(), is_want);
}

// visit_dtype calls the template with each dtype's host type: every dtype a tensor holds, index
// as int64; void throws.
TEST(DType, VisitCallsWithTheHostTypeOfEveryDtype) {
  ASSERT_EQ(dtypes::all().size(), 13u);  // each of them below
  EXPECT_TRUE(visits_as<bool>(dtypes::bool_));
  EXPECT_TRUE(visits_as<int8_t>(dtypes::int8));
  EXPECT_TRUE(visits_as<int16_t>(dtypes::int16));
  EXPECT_TRUE(visits_as<int32_t>(dtypes::int32));
  EXPECT_TRUE(visits_as<int64_t>(dtypes::int64));
  EXPECT_TRUE(visits_as<uint8_t>(dtypes::uint8));
  EXPECT_TRUE(visits_as<uint16_t>(dtypes::uint16));
  EXPECT_TRUE(visits_as<uint32_t>(dtypes::uint32));
  EXPECT_TRUE(visits_as<uint64_t>(dtypes::uint64));
  EXPECT_TRUE(visits_as<_Float16>(dtypes::float16));
  EXPECT_TRUE(visits_as<BFloat16Bits>(dtypes::bfloat16));
  EXPECT_TRUE(visits_as<float>(dtypes::float32));
  EXPECT_TRUE(visits_as<double>(dtypes::float64));
  EXPECT_TRUE(visits_as<int64_t>(dtypes::index));
  EXPECT_FALSE(visits_as<int32_t>(dtypes::uint32));
  // the host type is as wide as the dtype's element
  for (DType d : dtypes::all())
    EXPECT_EQ(visit_dtype(d, []<class T>() { return static_cast<int>(sizeof(T)); }), d.itemsize())
        << d.name();
  // f's result comes back: the integer types' signedness and largest value, from the type
  for (DType d : dtypes::all()) {
    if (!dtypes::is_int(d)) continue;
    EXPECT_EQ(visit_dtype(d, []<class T>() { return std::is_signed_v<T>; }),
              !dtypes::is_unsigned(d))
        << d.name();
    EXPECT_EQ(visit_dtype(d,
                          []<class T>() -> double {
                            if constexpr (std::is_integral_v<T>)
                              return std::numeric_limits<T>::max();
                            return 0;
                          }),
              dtypes::max(d))
        << d.name();
  }
  EXPECT_THROW(visit_dtype(dtypes::void_, []<class T>() { return 0; }), Error);
}

TEST(DType, CastValue) {
  EXPECT_EQ(cast_value(-2.7, dtypes::int32), -2);
  EXPECT_EQ(cast_value(300, dtypes::uint8), 44);
  EXPECT_EQ(cast_value(-1, dtypes::uint8), 255);
  EXPECT_EQ(cast_value(128, dtypes::int8), -128);
  EXPECT_EQ(cast_value(0.5, dtypes::bool_), 1);
  EXPECT_EQ(cast_value(0.0, dtypes::bool_), 0);
  EXPECT_EQ(cast_value(1.0 / 3, dtypes::float32), static_cast<double>(1.0f / 3));
  EXPECT_EQ(cast_value(1.0 / 3, dtypes::float16), 0.333251953125);
  EXPECT_EQ(cast_value(1.0 / 3, dtypes::bfloat16), 0.333984375);
  EXPECT_TRUE(std::isnan(cast_value(NAN, dtypes::bfloat16)));
  EXPECT_EQ(cast_int(70000, dtypes::int16), 70000 - 65536);
}

}  // namespace
}  // namespace tc
