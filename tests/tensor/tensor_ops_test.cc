// Every Tensor op against a naive double-precision reference (tests/tensor/reference.h): creation,
// unary ops, where with broadcasting and scalars, movement ops, edge cases across op families,
// the small floats and zero-size tensors. Binary ops are in binary_test.cc, reductions in
// reduce_axes_test.cc, dtype promotion in promotion_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
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

constexpr double kF32 = 1e-5;    // float32 arithmetic
constexpr double kTrans = 1e-4;  // float32 transcendental functions
constexpr double kHalf = 1e-3;
constexpr double kBF16 = 1e-2;
const double kInf = std::numeric_limits<double>::infinity();

NDArray vals(S shape, std::vector<double> v) { return NDArray(std::move(shape), std::move(v)); }

// ================================================================== creation

TEST(Creation, EmptyHasOnlyShapeAndDtype) {
  Tensor t = Tensor::empty({2, 3}, dt::int16);
  EXPECT_EQ(t.shape(), (S{2, 3}));
  EXPECT_EQ(t.dtype(), dt::int16);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.ndim(), 2);
  Tensor f = Tensor::empty({4});
  EXPECT_EQ(f.shape(), (S{4}));
  EXPECT_EQ(f.dtype(), dt::float32);
  Tensor s = Tensor::empty({});
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.numel(), 1);
  Tensor z = Tensor::empty({0, 5}, dt::float64);
  EXPECT_EQ(z.numel(), 0);
  EXPECT_EQ(z.shape(), (S{0, 5}));
  EXPECT_EQ(z.data<double>().size(), 0u);
}

TEST(Creation, ZerosOnesFull) {
  Tensor z = Tensor::zeros({2, 3});
  EXPECT_EQ(z.dtype(), dt::float32);
  ref::expect_exact(z, ref::generate({2, 3}, [](int64_t) { return 0.0; }), "zeros");

  Tensor o = Tensor::ones({3}, dt::int32);
  EXPECT_EQ(o.dtype(), dt::int32);
  ref::expect_exact(o, vals({3}, {1, 1, 1}), "ones int32");

  Tensor o16 = Tensor::ones({2, 2}, dt::float16);
  EXPECT_EQ(o16.dtype(), dt::float16);
  ref::expect_exact(o16, vals({2, 2}, {1, 1, 1, 1}), "ones float16");

  Tensor fi = Tensor::full({2, 2}, 7);
  EXPECT_EQ(fi.dtype(), dt::int32);
  ref::expect_exact(fi, vals({2, 2}, {7, 7, 7, 7}), "full int");

  Tensor ff = Tensor::full({2}, 2.5);
  EXPECT_EQ(ff.dtype(), dt::float32);
  ref::expect_exact(ff, vals({2}, {2.5, 2.5}), "full float");

  Tensor fb = Tensor::full({3}, true);
  EXPECT_EQ(fb.dtype(), dt::bool_);
  ref::expect_exact(fb, vals({3}, {1, 1, 1}), "full bool");

  Tensor fd = Tensor::full({2, 3}, 3, dt::float64);
  EXPECT_EQ(fd.dtype(), dt::float64);
  ref::expect_exact(fd, ref::generate({2, 3}, [](int64_t) { return 3.0; }), "full with dtype");

  Tensor fu = Tensor::full({4}, -1, dt::int64);
  EXPECT_EQ(fu.data<int64_t>(), (std::vector<int64_t>{-1, -1, -1, -1}));

  Tensor sc = Tensor::full({}, -4);
  EXPECT_EQ(sc.ndim(), 0);
  EXPECT_EQ(sc.item<int>(), -4);

  Tensor e = Tensor::zeros({0, 3});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.shape(), (S{0, 3}));
  EXPECT_TRUE(e.data<float>().empty());
}

struct ArangeCase {
  double start, stop, step;
};

TEST(Creation, Arange) {
  std::vector<ArangeCase> cases = {{0, 5, 1},     {2, 10, 3}, {0, 1, 0.25},    {10, 0, -3},
                                   {5, -5, -2.5}, {-3, 4, 1}, {0.5, 3.2, 0.7}, {1, 2, 5},
                                   {3, 3, 1},     {4, 1, 1},  {-1, -7, -2}};
  for (const ArangeCase& c : cases) {
    std::string what = "arange(" + std::to_string(c.start) + ", " + std::to_string(c.stop) + ", " +
                       std::to_string(c.step) + ")";
    Tensor t = Tensor::arange(c.start, c.stop, c.step);
    bool all_int = c.start == std::trunc(c.start) && c.stop == std::trunc(c.stop) &&
                   c.step == std::trunc(c.step);
    EXPECT_EQ(t.dtype(), all_int ? dt::int32 : dt::float32) << what;
    int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((c.stop - c.start) / c.step)));
    NDArray want =
        ref::generate({n}, [&](int64_t i) { return c.start + static_cast<double>(i) * c.step; });
    if (all_int)
      ref::expect_exact(t, want, what);
    else
      ref::expect_close(t, want, kF32, kF32, what);
  }
  Tensor t = Tensor::arange(6);
  EXPECT_EQ(t.dtype(), dt::int32);
  ref::expect_exact(t, vals({6}, {0, 1, 2, 3, 4, 5}), "arange(6)");
  Tensor f = Tensor::arange(0, 6, 2, dt::float32);
  EXPECT_EQ(f.dtype(), dt::float32);
  ref::expect_exact(f, vals({3}, {0, 2, 4}), "arange float dtype");
  Tensor l = Tensor::arange(-2, 3, 1, dt::int64);
  EXPECT_EQ(l.dtype(), dt::int64);
  EXPECT_EQ(l.data<int64_t>(), (std::vector<int64_t>{-2, -1, 0, 1, 2}));
}

TEST(Creation, Eye) {
  struct Case {
    int64_t n, m;
  };
  for (Case c : std::vector<Case>{{3, 3}, {2, 4}, {4, 2}, {1, 1}, {1, 5}, {5, 1}}) {
    Tensor e = Tensor::eye(c.n, c.m);
    EXPECT_EQ(e.dtype(), dt::float32);
    NDArray want =
        ref::generate({c.n, c.m}, [&](int64_t i) { return i / c.m == i % c.m ? 1.0 : 0.0; });
    ref::expect_exact(e, want, "eye(" + std::to_string(c.n) + ", " + std::to_string(c.m) + ")");
  }
  Tensor sq = Tensor::eye(4);
  ref::expect_exact(sq, ref::generate({4, 4}, [](int64_t i) { return i / 4 == i % 4 ? 1.0 : 0.0; }),
                    "eye(4)");
  Tensor ie = Tensor::eye(3, {}, dt::int32);
  EXPECT_EQ(ie.dtype(), dt::int32);
  ref::expect_exact(ie, ref::generate({3, 3}, [](int64_t i) { return i / 3 == i % 3 ? 1.0 : 0.0; }),
                    "eye int");
}

// from_vector for one C++ type: the values come back unchanged, also through a kernel (flip).
template <typename T>
void check_from_vector(const std::vector<T>& v, DType want) {
  SCOPED_TRACE(want.name());
  int64_t n = static_cast<int64_t>(v.size());
  Tensor t = Tensor::from_vector(v, S{2, n / 2});
  EXPECT_EQ(t.dtype(), want);
  EXPECT_EQ(t.shape(), (S{2, n / 2}));
  EXPECT_EQ(t.data<T>(), v);
  EXPECT_EQ(t.tolist<T>(), v);
  std::vector<T> flipped = t.flip({1}).data<T>();
  ASSERT_EQ(flipped.size(), v.size());
  for (int64_t r = 0; r < 2; r++)
    for (int64_t c = 0; c < n / 2; c++)
      EXPECT_EQ(flipped[static_cast<size_t>(r * (n / 2) + c)],
                v[static_cast<size_t>(r * (n / 2) + n / 2 - 1 - c)])
          << "at " << r << ", " << c;
  Tensor one = Tensor::from_vector(v);  // no shape: 1-D
  EXPECT_EQ(one.shape(), (S{n}));
}

TEST(Creation, FromVectorEveryDtype) {
  check_from_vector<bool>({true, false, false, true, true, false}, dt::bool_);
  check_from_vector<int8_t>({-128, -1, 0, 1, 100, 127}, dt::int8);
  check_from_vector<int16_t>({-32768, -300, 0, 7, 1000, 32767}, dt::int16);
  check_from_vector<int32_t>({-2147483647 - 1, -5, 0, 9, 65536, 2147483647}, dt::int32);
  check_from_vector<int64_t>(
      {-(int64_t{1} << 62), -3, 0, (int64_t{1} << 53) + 1, int64_t{1} << 40, 42}, dt::int64);
  check_from_vector<uint8_t>({0, 1, 127, 128, 200, 255}, dt::uint8);
  check_from_vector<uint16_t>({0, 1, 255, 256, 40000, 65535}, dt::uint16);
  check_from_vector<uint32_t>({0, 1, 65536, 2147483648u, 4000000000u, 4294967295u}, dt::uint32);
  check_from_vector<uint64_t>(
      {0, 1, uint64_t{1} << 63, (uint64_t{1} << 63) + 5, 12345, ~uint64_t{0}}, dt::uint64);
  check_from_vector<float>({-1.5f, 0.0f, 3.25f, 1e-30f, 1e30f, -7.0f}, dt::float32);
  check_from_vector<double>({-1.5, 0.0, 3.25, 1e-300, 1e300, 0.1}, dt::float64);

  Tensor t(std::vector<float>{1, 2, 3, 4, 5, 6}, S{3, 2});
  EXPECT_EQ(t.dtype(), dt::float32);
  EXPECT_EQ(t.shape(), (S{3, 2}));
  EXPECT_EQ(t.data<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  Tensor s(std::vector<float>{2.5f}, S{});
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.item<float>(), 2.5f);
}

// With an owner, from_blob reads aligned host memory in place (a mapped file's weights): a later
// change of the memory shows in the next computation, the owner lives as long as the tensor, and
// an in-place write lands in the memory. Unaligned memory, or no owner, is copied.
TEST(Creation, FromBlobWithAnOwnerReadsTheMemoryInPlace) {
  constexpr size_t kAlign = 64;
  std::weak_ptr<float> watch;
  float* mem = nullptr;
  {
    std::shared_ptr<float> owner(new (std::align_val_t(kAlign)) float[17], [](float* p) {
      ::operator delete[](p, std::align_val_t(kAlign));
    });
    watch = owner;
    mem = owner.get();
    for (int i = 0; i < 17; i++) mem[i] = static_cast<float>(i);
    Tensor in_place = Tensor::from_blob(mem, {2, 8}, dt::float32, "CPU", owner);
    Tensor copied = Tensor::from_blob(mem + 1, {2, 8}, dt::float32, "CPU", owner);  // unaligned
    Tensor no_owner = Tensor::from_blob(mem, {2, 8}, dt::float32, "CPU");
    owner.reset();
    EXPECT_FALSE(watch.expired());  // the tensors keep it
    mem[3] = 100;
    EXPECT_EQ((in_place * 2).data<float>()[3], 200.0f);
    EXPECT_EQ((copied * 2).data<float>()[2], 6.0f);
    EXPECT_EQ((no_owner * 2).data<float>()[3], 6.0f);
    in_place.assign(Tensor::full({2, 8}, -1.0, dt::float32)).realize();
    EXPECT_EQ(mem[15], -1.0f);
    EXPECT_EQ(mem[16], 16.0f);  // past the tensor: untouched
  }
  EXPECT_TRUE(watch.expired());  // the last tensor gone, the memory is let go
}

// ================================================================== unary

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  double lo, hi, rtol, atol;
};

TEST(Unary, Float32AgainstReference) {
  std::vector<UnaryCase> cases = {
      {"neg", [](const Tensor& x) { return x.neg(); }, [](double x) { return -x; }, -3, 3, 0, 0},
      {"operator-", [](const Tensor& x) { return -x; }, [](double x) { return -x; }, -3, 3, 0, 0},
      {"reciprocal", [](const Tensor& x) { return x.reciprocal(); }, [](double x) { return 1 / x; },
       0.25, 4, kF32, 0},
      {"reciprocal-", [](const Tensor& x) { return x.neg().reciprocal(); },
       [](double x) { return -1 / x; }, 0.25, 4, kF32, 0},
      {"sqrt", [](const Tensor& x) { return x.sqrt(); }, [](double x) { return std::sqrt(x); }, 0,
       9, kF32, 1e-7},
      {"rsqrt", [](const Tensor& x) { return x.rsqrt(); },
       [](double x) { return 1 / std::sqrt(x); }, 0.05, 9, kF32, 0},
      {"exp", [](const Tensor& x) { return x.exp(); }, [](double x) { return std::exp(x); }, -5, 5,
       kTrans, 0},
      {"exp2", [](const Tensor& x) { return x.exp2(); }, [](double x) { return std::exp2(x); }, -5,
       5, kTrans, 0},
      {"log", [](const Tensor& x) { return x.log(); }, [](double x) { return std::log(x); }, 0.05,
       20, kTrans, kF32},
      {"log2", [](const Tensor& x) { return x.log2(); }, [](double x) { return std::log2(x); },
       0.05, 20, kTrans, kF32},
      {"sin", [](const Tensor& x) { return x.sin(); }, [](double x) { return std::sin(x); }, -7, 7,
       kTrans, kF32},
      {"cos", [](const Tensor& x) { return x.cos(); }, [](double x) { return std::cos(x); }, -7, 7,
       kTrans, kF32},
      {"trunc", [](const Tensor& x) { return x.trunc(); }, [](double x) { return std::trunc(x); },
       -4, 4, 0, 0},
      {"relu", [](const Tensor& x) { return x.relu(); }, [](double x) { return x > 0 ? x : 0.0; },
       -3, 3, 0, 0},
      {"abs", [](const Tensor& x) { return x.abs(); }, [](double x) { return std::fabs(x); }, -3, 3,
       0, 0},
      {"sigmoid", [](const Tensor& x) { return x.sigmoid(); },
       [](double x) { return 1 / (1 + std::exp(-x)); }, -8, 8, kTrans, kF32},
      {"square", [](const Tensor& x) { return x.square(); }, [](double x) { return x * x; }, -3, 3,
       kF32, 0},
  };
  uint64_t seed = 1;
  for (const UnaryCase& c : cases) {
    NDArray a = ref::random({3, 5}, seed++, c.lo, c.hi);
    Tensor out = c.op(ref::tensor(a));
    EXPECT_EQ(out.dtype(), dt::float32) << c.name;
    ref::expect_close(out, ref::map(a, c.ref), c.rtol, c.atol, c.name);
  }
}

TEST(Unary, LogicalNot) {
  NDArray a = vals({5}, {0, 1, -2, 0.5, 0});
  Tensor f = ref::tensor(a).logical_not();
  EXPECT_EQ(f.dtype(), dt::bool_);
  ref::expect_exact(f, vals({5}, {1, 0, 0, 0, 1}), "logical_not float");
  Tensor b = ref::tensor(vals({3}, {1, 0, 1}), dt::bool_).logical_not();
  EXPECT_EQ(b.dtype(), dt::bool_);
  ref::expect_exact(b, vals({3}, {0, 1, 0}), "logical_not bool");
  Tensor n = ref::tensor(vals({3}, {1, 0, 1}), dt::bool_).neg();  // neg of bool is logical not
  EXPECT_EQ(n.dtype(), dt::bool_);
  ref::expect_exact(n, vals({3}, {0, 1, 0}), "neg bool");
  Tensor i = ref::tensor(vals({4}, {0, 3, -1, 0}), dt::int32).logical_not();
  ref::expect_exact(i, vals({4}, {1, 0, 0, 1}), "logical_not int");
}

TEST(Unary, SpecialValues) {
  Tensor z = ref::tensor(vals({1}, {0}));
  EXPECT_EQ(z.log().item<double>(), -kInf);
  EXPECT_EQ(z.log2().item<double>(), -kInf);
  EXPECT_EQ(z.reciprocal().item<double>(), kInf);
  EXPECT_TRUE(std::isnan(ref::tensor(vals({1}, {-1})).sqrt().item<double>()));
  EXPECT_TRUE(std::isnan(ref::tensor(vals({1}, {-1})).log().item<double>()));
  EXPECT_EQ(ref::tensor(vals({1}, {200})).exp().item<double>(), kInf);
  EXPECT_EQ(ref::tensor(vals({1}, {-200})).exp().item<double>(), 0.0);
  EXPECT_EQ(ref::tensor(vals({2}, {-1000, 1000})).sigmoid().data<double>(),
            (std::vector<double>{0, 1}));
}

TEST(Unary, IntegerInputs) {
  NDArray a = vals({2, 3}, {-3, -1, 0, 2, 5, 9});
  Tensor x = ref::tensor(a, dt::int32);
  Tensor n = x.neg();
  EXPECT_EQ(n.dtype(), dt::int32);
  ref::expect_exact(n, ref::map(a, [](double v) { return -v; }), "neg int");
  ref::expect_exact(x.abs(), ref::map(a, [](double v) { return std::fabs(v); }), "abs int");
  ref::expect_exact(x.relu(), ref::map(a, [](double v) { return v > 0 ? v : 0; }), "relu int");
  ref::expect_exact(x.square(), ref::map(a, [](double v) { return v * v; }), "square int");
  EXPECT_EQ(x.abs().dtype(), dt::int32);
  EXPECT_EQ(x.trunc().dtype(), dt::int32);
  ref::expect_exact(x.trunc(), a, "trunc int");

  NDArray p = vals({5}, {0, 1, 4, 9, 16});
  Tensor sq = ref::tensor(p, dt::int32).sqrt();
  EXPECT_EQ(sq.dtype(), dt::float32);
  ref::expect_close(sq, ref::map(p, [](double v) { return std::sqrt(v); }), kF32, 1e-7, "sqrt int");
  Tensor ex = ref::tensor(p, dt::uint8).exp2();
  EXPECT_EQ(ex.dtype(), dt::float32);
  ref::expect_close(ex, ref::map(p, [](double v) { return std::exp2(v); }), kTrans, 0,
                    "exp2 uint8");
  Tensor sg = ref::tensor(a, dt::int64).sigmoid();
  EXPECT_EQ(sg.dtype(), dt::float32);
  ref::expect_close(sg, ref::map(a, [](double v) { return 1 / (1 + std::exp(-v)); }), kTrans, kF32,
                    "sigmoid int64");
  Tensor rc = ref::tensor(vals({3}, {1, 2, 4}), dt::int16).reciprocal();
  EXPECT_EQ(rc.dtype(), dt::float32);
  ref::expect_close(rc, vals({3}, {1, 0.5, 0.25}), kF32, 0, "reciprocal int16");
}

struct CastCase {
  DType from, to;
  std::vector<double> in, want;
};

TEST(Unary, Cast) {
  std::vector<CastCase> cases = {
      // float -> int truncates toward zero
      {dt::float32, dt::int32, {-2.7, -0.5, 0.5, 2.7, 100.9, -100.9}, {-2, 0, 0, 2, 100, -100}},
      {dt::float32, dt::uint8, {0, 1.9, 200.5, 255, 7.2, 128}, {0, 1, 200, 255, 7, 128}},
      {dt::float32, dt::int64, {3e9, -3e9, 0.5, -7.5, 1, 2}, {3e9, -3e9, 0, -7, 1, 2}},
      {dt::float64, dt::int16, {-1234.9, 1234.9, 0, 3, -3, 32000}, {-1234, 1234, 0, 3, -3, 32000}},
      // -> bool is != 0
      {dt::float32, dt::bool_, {0, -0.0, 0.5, -3, 1e-20, 2}, {0, 0, 1, 1, 1, 1}},
      {dt::int32, dt::bool_, {0, 1, -1, 7, 0, 256}, {0, 1, 1, 1, 0, 1}},
      // int -> int wraps (two's complement), and extends by the source's signedness
      {dt::int32, dt::int8, {200, -129, 127, -128, 256, 5}, {-56, 127, 127, -128, 0, 5}},
      {dt::int32, dt::uint8, {-1, 256, 255, 300, 0, 7}, {255, 0, 255, 44, 0, 7}},
      {dt::uint8, dt::int32, {200, 255, 0, 128, 1, 127}, {200, 255, 0, 128, 1, 127}},
      {dt::int8, dt::int64, {-5, -128, 127, 0, 1, -1}, {-5, -128, 127, 0, 1, -1}},
      {dt::int8, dt::uint16, {-5, -1, 3, 0, 127, -128}, {65531, 65535, 3, 0, 127, 65408}},
      {dt::uint32, dt::int64, {4e9, 0, 1, 2147483648.0, 7, 3}, {4e9, 0, 1, 2147483648.0, 7, 3}},
      {dt::uint16,
       dt::int16,
       {65535, 40000, 1, 0, 32767, 32768},
       {-1, -25536, 1, 0, 32767, -32768}},
      // int / bool -> float
      {dt::int32, dt::float32, {-3, 0, 16777216, 5, -7, 1}, {-3, 0, 16777216, 5, -7, 1}},
      {dt::bool_, dt::float32, {1, 0, 1, 0, 0, 1}, {1, 0, 1, 0, 0, 1}},
      {dt::bool_, dt::int32, {1, 0, 1, 0, 0, 1}, {1, 0, 1, 0, 0, 1}},
      {dt::int64, dt::float64, {-5e15, 3, 0, 1, -1, 2}, {-5e15, 3, 0, 1, -1, 2}},
      {dt::uint64, dt::float64, {1e19, 3, 0, 1, 4, 2}, {1e19, 3, 0, 1, 4, 2}},
      // float -> float rounds
      {dt::float64, dt::float32, {0.1, 1.0 / 3, -2.5, 1e-3, 3, 7}, {}},
      {dt::float32, dt::float16, {0.1, 1.0 / 3, -2.5, 1e-3, 1000.7, 7}, {}},
      {dt::float32, dt::bfloat16, {0.1, 1.0 / 3, -2.5, 1e-3, 1000.7, 7}, {}},
      {dt::float16, dt::float32, {0.1, 1.0 / 3, -2.5, 1e-3, 1000.7, 7}, {}},
      {dt::bfloat16, dt::float32, {0.1, 1.0 / 3, -2.5, 1e-3, 1000.7, 7}, {}},
      {dt::float16, dt::int32, {-2.7, 2.7, 100.5, -0.5, 3, 7}, {-2, 2, 100, 0, 3, 7}},
  };
  for (const CastCase& c : cases) {
    std::string what = "cast " + c.from.name() + " -> " + c.to.name();
    NDArray in = vals({2, 3}, c.in);
    Tensor src = ref::tensor(in, c.from);
    Tensor out = src.cast(c.to);
    EXPECT_EQ(out.dtype(), c.to) << what;
    NDArray want =
        c.want.empty() ? ref::represent(ref::represent(in, c.from), c.to) : vals({2, 3}, c.want);
    ref::expect_exact(out, want, what);
  }
  Tensor x = ref::tensor(vals({2}, {1, 2}));
  EXPECT_EQ(x.cast(dt::float32).uop(), x.uop());  // same dtype: no-op
}

// ================================================================== where

TEST(Where, BroadcastingAndScalars) {
  NDArray c = vals({3, 1}, {1, 0, 1});
  NDArray x = ref::random({1, 4}, 81), y = ref::random({3, 4}, 82);
  Tensor tc_ = ref::tensor(c, dt::bool_);
  Tensor w = tc_.where(ref::tensor(x), ref::tensor(y));
  EXPECT_EQ(w.dtype(), dt::float32);
  ref::expect_exact(w, ref::where(c, x, y), "where (3,1) (1,4) (3,4)");

  // a scalar-shaped y tensor and a (4,) x
  NDArray x4 = ref::random({4}, 83), ys = vals({}, {-9.5});
  ref::expect_exact(tc_.where(ref::tensor(x4), ref::tensor(ys)), ref::where(c, x4, ys),
                    "where with () tensor");

  // condition from a comparison, ConstValue operands
  NDArray a = ref::random({3, 4}, 84);
  Tensor ta = ref::tensor(a);
  Tensor r = ta.gt(0).where(ta, -1.0);
  EXPECT_EQ(r.dtype(), dt::float32);
  ref::expect_exact(r, ref::map(a, [](double v) { return v > 0 ? v : -1.0; }),
                    "where(x>0, x, -1.0)");
  Tensor l = ta.lt(0).where(2.5, ta);
  EXPECT_EQ(l.dtype(), dt::float32);
  ref::expect_exact(l, ref::map(a, [](double v) { return v < 0 ? 2.5 : v; }), "where(x<0, 2.5, x)");
  Tensor ii = ta.lt(0).where(1, 2);
  EXPECT_EQ(ii.dtype(), dt::int32);
  ref::expect_exact(ii, ref::map(a, [](double v) { return v < 0 ? 1.0 : 2.0; }), "where(c, 1, 2)");
  Tensor fi = ta.lt(0).where(1.5, 2);
  EXPECT_EQ(fi.dtype(), dt::float32);
  ref::expect_exact(fi, ref::map(a, [](double v) { return v < 0 ? 1.5 : 2.0; }),
                    "where(c, 1.5, 2)");
  Tensor bb = ta.lt(0).where(true, false);
  EXPECT_EQ(bb.dtype(), dt::bool_);
  ref::expect_exact(bb, ref::map(a, [](double v) { return v < 0 ? 1.0 : 0.0; }),
                    "where(c, true, false)");

  // non-bool condition: non-zero is true
  NDArray fc = vals({4}, {0, 0.5, -1, 0});
  ref::expect_exact(ref::tensor(fc).where(ref::tensor(vals({4}, {1, 2, 3, 4})),
                                          ref::tensor(vals({4}, {5, 6, 7, 8}))),
                    vals({4}, {5, 2, 3, 8}), "float condition");

  // dtype promotion of the branches (tinygrad: least_upper_dtype, scalars as in binary ops)
  Tensor i32 = ref::tensor(vals({4}, {1, 2, 3, 4}), dt::int32);
  Tensor cond = ref::tensor(vals({4}, {1, 0, 0, 1}), dt::bool_);
  Tensor wf = cond.where(i32, 2.5);
  EXPECT_EQ(wf.dtype(), dt::float32);
  ref::expect_exact(wf, vals({4}, {1, 2.5, 2.5, 4}), "where(c, int, 2.5)");
  Tensor wi = cond.where(7, i32);
  EXPECT_EQ(wi.dtype(), dt::int32);
  ref::expect_exact(wi, vals({4}, {7, 2, 3, 7}), "where(c, 7, int)");
  Tensor h = ref::tensor(vals({4}, {0.5, 1, 2, 3}), dt::float16);
  Tensor wh = cond.where(h, i32);
  EXPECT_EQ(wh.dtype(), dt::float16);
  ref::expect_exact(wh, vals({4}, {0.5, 2, 3, 3}), "where(c, half, int)");
}

// ================================================================== movement

TEST(Movement, Reshape) {
  NDArray a = ref::random({2, 3, 4}, 91);
  Tensor x = ref::tensor(a);
  for (const S& s :
       std::vector<S>{{6, 4}, {4, -1}, {-1}, {24}, {2, 12}, {1, 2, 1, 12}, {-1, 3, 1}, {3, 2, 4}}) {
    Tensor r = x.reshape(s);
    NDArray want = ref::reshape(a, s);
    EXPECT_EQ(r.shape(), want.shape);
    ref::expect_exact(r, want, "reshape " + ref::shape_str(s));
  }
  ref::expect_exact(x.reshape({4, 6}).reshape({3, 8}), ref::reshape(a, {3, 8}),
                    "reshape of reshape");
  Tensor one = ref::tensor(vals({1}, {3.5}));
  EXPECT_EQ(one.reshape({}).ndim(), 0);
  EXPECT_EQ(one.reshape({}).item<float>(), 3.5f);
  EXPECT_EQ(one.reshape({}).reshape({1, 1}).shape(), (S{1, 1}));
}

TEST(Movement, Permute) {
  NDArray a = ref::random({2, 3, 4}, 92);
  Tensor x = ref::tensor(a);
  for (const std::vector<int>& o :
       std::vector<std::vector<int>>{{2, 0, 1}, {1, 2, 0}, {0, 2, 1}, {2, 1, 0}, {0, 1, 2}}) {
    ref::expect_exact(x.permute(o), ref::permute(a, o), "permute");
  }
  ref::expect_exact(x.permute({-1, 0, -2}), ref::permute(a, {2, 0, 1}), "permute negative axes");
  ref::expect_exact(x.permute({2, 0, 1}).permute({2, 0, 1}),
                    ref::permute(ref::permute(a, {2, 0, 1}), {2, 0, 1}), "permute twice");
}

TEST(Movement, Expand) {
  NDArray a = ref::random({3, 1}, 93);
  Tensor x = ref::tensor(a);
  ref::expect_exact(x.expand({3, 4}), ref::expand(a, {3, 4}), "expand (3,1)->(3,4)");
  ref::expect_exact(x.expand({2, 3, 5}), ref::expand(a, {2, 3, 5}), "expand new leading dim");
  ref::expect_exact(x.expand({2, -1, 5}), ref::expand(a, {2, 3, 5}), "expand with -1");
  NDArray b = ref::random({1, 4}, 94);
  ref::expect_exact(ref::tensor(b).expand({2, 3, 4}), ref::expand(b, {2, 3, 4}),
                    "expand (1,4)->(2,3,4)");
  NDArray s = vals({}, {1.25});
  ref::expect_exact(ref::tensor(s).expand({2, 2}), ref::expand(s, {2, 2}), "expand scalar");
}

TEST(Movement, Pad) {
  NDArray a = ref::random({2, 3}, 95);
  Tensor x = ref::tensor(a);
  std::vector<ref::Pairs> pads = {{{1, 2}, {0, 1}},   {{0, 0}, {2, 2}},  {{-1, 0}, {1, -1}},
                                  {{-1, -1}, {0, 0}}, {{0, 3}, {-2, 1}}, {{2, -1}, {-3, 0}}};
  for (const ref::Pairs& p : pads) {
    ref::expect_exact(x.pad(p), ref::pad(a, p, 0), "pad zero");
    ref::expect_exact(x.pad(p, 7.5), ref::pad(a, p, 7.5), "pad 7.5");
    ref::expect_exact(x.pad(p, -2), ref::pad(a, p, -2), "pad -2");
  }
  NDArray ia = ref::random_int({2, 2}, 96, -5, 5);
  Tensor xi = ref::tensor(ia, dt::int32).pad({{1, 0}, {0, 2}}, 9);
  EXPECT_EQ(xi.dtype(), dt::int32);
  ref::expect_exact(xi, ref::pad(ia, {{1, 0}, {0, 2}}, 9), "pad int with 9");
  ref::expect_exact(x.pad({{1, 1}, {1, 1}}).pad({{1, 0}, {0, 1}}, 3.0),
                    ref::pad(ref::pad(a, {{1, 1}, {1, 1}}, 0), {{1, 0}, {0, 1}}, 3.0),
                    "pad of pad");
}

TEST(Movement, Shrink) {
  NDArray a = ref::random({4, 5}, 97);
  Tensor x = ref::tensor(a);
  std::vector<ref::Pairs> rs = {
      {{0, 1}, {1, 3}}, {{1, 4}, {0, 5}}, {{2, 2}, {0, 5}}, {{0, 4}, {4, 5}}, {{3, 4}, {2, 3}}};
  for (const ref::Pairs& r : rs) ref::expect_exact(x.shrink(r), ref::shrink(a, r), "shrink");
  ref::expect_exact(x.shrink({{1, 4}, {1, 4}}).shrink({{1, 2}, {0, 2}}),
                    ref::shrink(ref::shrink(a, {{1, 4}, {1, 4}}), {{1, 2}, {0, 2}}),
                    "shrink of shrink");
}

TEST(Movement, Flip) {
  NDArray a = ref::random({2, 3, 4}, 98);
  Tensor x = ref::tensor(a);
  for (const std::vector<int>& f :
       std::vector<std::vector<int>>{{0}, {1}, {2}, {-1}, {0, 2}, {0, 1, 2}, {}})
    ref::expect_exact(x.flip(f), ref::flip(a, f), "flip");
  ref::expect_exact(x.flip({1}).flip({1}), a, "flip twice");
}

TEST(Movement, TransposeFlattenContiguous) {
  NDArray m = ref::random({3, 5}, 99);
  ref::expect_exact(ref::tensor(m).transpose(), ref::transpose(m, 1, 0), "transpose()");
  NDArray a = ref::random({2, 3, 4}, 100);
  Tensor x = ref::tensor(a);
  ref::expect_exact(x.transpose(0, 2), ref::transpose(a, 0, 2), "transpose(0, 2)");
  ref::expect_exact(x.transpose(-1, -2), ref::transpose(a, 2, 1), "transpose(-1, -2)");
  EXPECT_EQ(x.flatten().shape(), (S{24}));
  ref::expect_exact(x.flatten(), ref::reshape(a, {24}), "flatten()");
  ref::expect_exact(x.flatten(1), ref::reshape(a, {2, 12}), "flatten(1)");
  ref::expect_exact(x.flatten(0, 1), ref::reshape(a, {6, 4}), "flatten(0, 1)");
  ref::expect_exact(x.flatten(-2, -1), ref::reshape(a, {2, 12}), "flatten(-2, -1)");
  Tensor c = x.permute({2, 0, 1}).contiguous();
  ref::expect_exact(c, ref::permute(a, {2, 0, 1}), "contiguous of permute");
  // flatten of a non-contiguous view
  ref::expect_exact(x.permute({2, 0, 1}).flatten(), ref::reshape(ref::permute(a, {2, 0, 1}), {24}),
                    "flatten of permute");
}

TEST(Movement, ChainsOfViews) {
  NDArray a = ref::random({3, 4, 5}, 101);
  Tensor x = ref::tensor(a);
  // permute -> shrink -> flip -> pad
  ref::expect_exact(
      x.permute({1, 2, 0})
          .shrink({{1, 3}, {0, 4}, {1, 3}})
          .flip({0, 2})
          .pad({{1, 0}, {0, 1}, {2, 0}}, 1.5),
      ref::pad(ref::flip(ref::shrink(ref::permute(a, {1, 2, 0}), {{1, 3}, {0, 4}, {1, 3}}), {0, 2}),
               {{1, 0}, {0, 1}, {2, 0}}, 1.5),
      "permute shrink flip pad");
  // reshape of a permuted view merges strided dimensions
  ref::expect_exact(x.permute({2, 0, 1}).reshape({10, 6}),
                    ref::reshape(ref::permute(a, {2, 0, 1}), {10, 6}), "permute then reshape");
  // reshape splitting a flipped, padded view
  ref::expect_exact(
      x.flip({1}).pad({{0, 1}, {0, 0}, {0, 0}}).reshape({2, 2, 4, 5}),
      ref::reshape(ref::pad(ref::flip(a, {1}), {{0, 1}, {0, 0}, {0, 0}}), {2, 2, 4, 5}),
      "flip pad reshape");
  // expand of a shrunk view, then permute and flip
  NDArray b = ref::random({4, 1}, 102);
  ref::expect_exact(
      ref::tensor(b).shrink({{1, 3}, {0, 1}}).expand({3, 2, 4}).permute({2, 0, 1}).flip({1}),
      ref::flip(ref::permute(ref::expand(ref::shrink(b, {{1, 3}, {0, 1}}), {3, 2, 4}), {2, 0, 1}),
                {1}),
      "shrink expand permute flip");
  // padded then shrunk back into the padding
  ref::expect_exact(
      x.pad({{2, 2}, {0, 0}, {0, 0}}, -1.0).shrink({{1, 6}, {1, 3}, {0, 5}}),
      ref::shrink(ref::pad(a, {{2, 2}, {0, 0}, {0, 0}}, -1.0), {{1, 6}, {1, 3}, {0, 5}}),
      "pad then shrink");
  // elementwise ops between different views of the same buffer
  ref::expect_close(
      x.permute({0, 2, 1}).flip({0}).reshape({3, 20}) + x.reshape({3, 20}) * 2,
      ref::zip(ref::reshape(ref::flip(ref::permute(a, {0, 2, 1}), {0}), {3, 20}),
               ref::reshape(a, {3, 20}), [](double p, double q) { return p + q * 2; }),
      kF32, kF32, "views combined");
}

// ================================================================== more edge cases

TEST(Unsigned, LargeValuesUseUnsignedOps) {
  NDArray a = vals({4}, {4000000000.0, 1, 3000000000.0, 2147483648.0});
  NDArray b = vals({4}, {1, 4000000000.0, 7, 2147483647.0});
  Tensor x = ref::tensor(a, dt::uint32), y = ref::tensor(b, dt::uint32);
  ref::expect_exact(x.lt(y), ref::zip(a, b, [](double p, double q) { return p < q ? 1.0 : 0.0; }),
                    "uint32 lt");
  ref::expect_exact(x.gt(y), ref::zip(a, b, [](double p, double q) { return p > q ? 1.0 : 0.0; }),
                    "uint32 gt");
  ref::expect_exact(x.maximum(y), ref::zip(a, b, [](double p, double q) { return std::max(p, q); }),
                    "uint32 maximum");
  ref::expect_exact(x.minimum(y), ref::zip(a, b, [](double p, double q) { return std::min(p, q); }),
                    "uint32 minimum");
  NDArray d = vals({4}, {3, 7, 1000, 2});
  Tensor z = ref::tensor(d, dt::uint32);
  ref::expect_exact(x.idiv(z), ref::zip(a, d, [](double p, double q) { return std::trunc(p / q); }),
                    "uint32 idiv");
  ref::expect_exact(x.mod(z), ref::zip(a, d, ref::py_mod), "uint32 mod");
  ref::expect_exact(x.cast(dt::float32), ref::represent(a, dt::float32), "uint32 -> float32");
  ref::expect_exact(x.cast(dt::int64), a, "uint32 -> int64");
  NDArray big = vals({3}, {9223372036854775808.0, 1, 9223372036854777856.0});
  NDArray small = vals({3}, {1, 9223372036854775808.0, 9223372036854775808.0});
  ref::expect_exact(ref::tensor(big, dt::uint64).gt(ref::tensor(small, dt::uint64)),
                    vals({3}, {1, 0, 1}), "uint64 gt");
  ref::expect_exact(ref::tensor(big, dt::uint64).max(), vals({}, {9223372036854777856.0}),
                    "uint64 max");
  // float -> large unsigned, and int64 -> int32 wrap-around
  ref::expect_exact(ref::tensor(vals({2}, {3e9, 4.1e9})).cast(dt::uint32), vals({2}, {3e9, 4.1e9}),
                    "float32 -> uint32");
  ref::expect_exact(ref::tensor(vals({2}, {1.5e19, 1e19}), dt::float64).cast(dt::uint64),
                    vals({2}, {1.5e19, 1e19}), "float64 -> uint64");
  ref::expect_exact(
      ref::tensor(vals({2}, {4294967301.0, -2147483649.0}), dt::int64).cast(dt::int32),
      vals({2}, {5, 2147483647.0}), "int64 -> int32 wraps");
}

TEST(SmallFloats, HalfSumOverflowsInHalf) {
  // tinygrad: a float16 sum accumulates wider but returns float16, so 40000 + 40000 is inf
  Tensor t = ref::tensor(vals({2}, {40000, 40000}), dt::float16);
  Tensor s = t.sum();
  EXPECT_EQ(s.dtype(), dt::float16);
  EXPECT_EQ(s.item<double>(), ref::represent(80000, dt::float16));
  EXPECT_TRUE(std::isinf(s.item<double>()));
  // but the accumulation itself is not in float16: 2048 + 1 + 1 + ... keeps the ones
  NDArray ones = ref::generate({9}, [](int64_t i) { return i == 0 ? 2048.0 : 1.0; });
  EXPECT_EQ(ref::tensor(ones, dt::float16).sum().item<double>(), ref::represent(2056, dt::float16));
}

TEST(Movement, PadWithInfinityAndBools) {
  NDArray a = ref::random({3, 4}, 171, -5, -1);
  Tensor x = ref::tensor(a);
  ref::expect_exact(x.pad({{1, 1}, {2, 0}}, -kInf).max(1),
                    ref::reduce(ref::pad(a, {{1, 1}, {2, 0}}, -kInf), ref::Reduce::Max, {1}),
                    "max of -inf pad");
  NDArray b = vals({2, 2}, {1, 0, 0, 1});
  Tensor tb = ref::tensor(b, dt::bool_);
  Tensor pb = tb.pad({{1, 0}, {0, 1}}, true);
  EXPECT_EQ(pb.dtype(), dt::bool_);
  ref::expect_exact(pb, ref::pad(b, {{1, 0}, {0, 1}}, 1), "bool pad with true");
  ref::expect_exact(tb.pad({{0, 1}, {1, 0}}), ref::pad(b, {{0, 1}, {1, 0}}, 0),
                    "bool pad with false");
  NDArray u = ref::random_int({2, 3}, 172, 0, 255);
  Tensor pu = ref::tensor(u, dt::uint8).pad({{0, 1}, {1, 1}}, 255);
  EXPECT_EQ(pu.dtype(), dt::uint8);
  ref::expect_exact(pu, ref::pad(u, {{0, 1}, {1, 1}}, 255), "uint8 pad with 255");
  ref::expect_exact(pu.min(1),
                    ref::reduce(ref::pad(u, {{0, 1}, {1, 1}}, 255), ref::Reduce::Min, {1}),
                    "uint8 min of a 255 pad");
}

TEST(Binary, NaNComparisonsAndPropagation) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  NDArray a = vals({3}, {nan, 1, 2}), b = vals({3}, {1, nan, 2});
  Tensor x = ref::tensor(a), y = ref::tensor(b);
  ref::expect_exact(x.eq(y), vals({3}, {0, 0, 1}), "eq with NaN");
  ref::expect_exact(x.ne(y), vals({3}, {1, 1, 0}), "ne with NaN");
  ref::expect_exact(x.lt(y), vals({3}, {0, 0, 0}), "lt with NaN");
  ref::expect_exact(x.ne(x), vals({3}, {1, 0, 0}), "x != x");
  ref::expect_close(x + y, vals({3}, {nan, nan, 4}), 0, 0, "add with NaN");
}

TEST(Binary, MixedSignPromotionValues) {
  struct Case {
    DType a, b, want;
    std::vector<double> va, vb;
  };
  std::vector<Case> cases = {
      {dt::int8, dt::uint8, dt::int16, {-100, -128, 127}, {200, 255, 255}},
      {dt::int16, dt::uint16, dt::int32, {-30000, -1, 32767}, {65535, 40000, 65535}},
      {dt::int32, dt::uint32, dt::int64, {-1, -2147483648.0, 5}, {4000000000.0, 4294967295.0, 1}},
      {dt::bool_, dt::int8, dt::int8, {1, 0, 1}, {-3, -128, 126}},
      {dt::uint32, dt::int64, dt::int64, {4294967295.0, 0, 7}, {-5000000000.0, -1, 3}},
      {dt::int64, dt::uint64, dt::float16, {-3, 100, 2}, {4, 5, 1000}},
      {dt::uint8, dt::float16, dt::float16, {200, 1, 255}, {0.5, -1.5, 1}},
      {dt::int32, dt::float32, dt::float32, {-7, 16777215, 3}, {0.25, 1, -3.5}},
      {dt::int64, dt::float64, dt::float64, {-9007199254740991.0, 5, 1}, {1, 0.5, -1}},
  };
  for (const Case& c : cases) {
    std::string what = c.a.name() + " + " + c.b.name();
    NDArray a = vals({3}, c.va), b = vals({3}, c.vb);
    Tensor out = ref::tensor(a, c.a) + ref::tensor(b, c.b);
    EXPECT_EQ(out.dtype(), c.want) << what;
    ref::expect_exact(
        out, ref::represent(ref::zip(a, b, [](double p, double q) { return p + q; }), c.want),
        what);
    Tensor lt = ref::tensor(a, c.a).lt(ref::tensor(b, c.b));
    ref::expect_exact(lt,
                      ref::zip(ref::represent(a, c.want), ref::represent(b, c.want),
                               [](double p, double q) { return p < q ? 1.0 : 0.0; }),
                      what + " lt");
  }
}

TEST(Unsigned, NegAndSubWrapAround) {
  // unsigned arithmetic wraps modulo 2^bits (tinygrad: -x is x * -1 in the dtype)
  Tensor u = ref::tensor(vals({3}, {3, 0, 255}), dt::uint8);
  ref::expect_exact(u.neg(), vals({3}, {253, 0, 1}), "uint8 neg wraps");
  ref::expect_exact(u - ref::tensor(vals({3}, {5, 1, 255}), dt::uint8), vals({3}, {254, 255, 0}),
                    "uint8 sub wraps");
  ref::expect_exact(ref::tensor(vals({2}, {3, 0}), dt::uint32).neg(), vals({2}, {4294967293.0, 0}),
                    "uint32 neg");
  ref::expect_exact(ref::tensor(vals({2}, {1, 2}), dt::uint16) - 3, vals({2}, {65534, 65535}),
                    "uint16 - 3");
}

TEST(Binary, Int64ScalarsStayExact) {
  // a Python int operand is exact, also beyond 2^53
  const int64_t big = (int64_t{1} << 53) + 1;
  Tensor x = Tensor::from_vector<int64_t>({0, 1, -1});
  EXPECT_EQ((x + big).data<int64_t>(), (std::vector<int64_t>{big, big + 1, big - 1}));
  EXPECT_EQ(Tensor::full({2}, big, dt::int64).data<int64_t>(), (std::vector<int64_t>{big, big}));
  EXPECT_EQ(x.maximum(big).data<int64_t>(), (std::vector<int64_t>{big, big, big}));
  Tensor y = Tensor::from_vector<int64_t>({big, big + 2});
  EXPECT_EQ(y.eq(big).data<bool>(), (std::vector<bool>{true, false}));
}

TEST(Unary, Float64Precision) {
  NDArray a = ref::random({4, 5}, 181, 0.1, 6);
  // make the values genuinely double (not float32-rounded)
  a = ref::map(a, [](double v) { return v + 1e-9 * v * v; });
  Tensor x = ref::tensor(a, dt::float64);
  const double t = 1e-12;
  ref::expect_close(x.exp(), ref::map(a, [](double v) { return std::exp(v); }), t, 0, "f64 exp");
  ref::expect_close(x.log(), ref::map(a, [](double v) { return std::log(v); }), t, t, "f64 log");
  ref::expect_close(x.sqrt(), ref::map(a, [](double v) { return std::sqrt(v); }), t, 0, "f64 sqrt");
  ref::expect_close(x.sin(), ref::map(a, [](double v) { return std::sin(v); }), t, t, "f64 sin");
  ref::expect_close(x.cos(), ref::map(a, [](double v) { return std::cos(v); }), t, t, "f64 cos");
  ref::expect_close(x.reciprocal(), ref::map(a, [](double v) { return 1 / v; }), t, 0,
                    "f64 reciprocal");
  ref::expect_close(x.sigmoid(), ref::map(a, [](double v) { return 1 / (1 + std::exp(-v)); }), t, t,
                    "f64 sigmoid");
  ref::expect_close(x.sum(1), ref::reduce(a, ref::Reduce::Sum, {1}), t, t, "f64 sum");
  ref::expect_close(x / 3, ref::map(a, [](double v) { return v / 3; }), t, 0, "f64 / 3");
  EXPECT_EQ((x / 3).dtype(), dt::float64);
}

// ================================================================== float16 / bfloat16

TEST(SmallFloats, ArithmeticAndCasts) {
  for (DType d : {dt::float16, dt::bfloat16}) {
    double tol = d == dt::float16 ? kHalf : kBF16;
    std::string n = d.name();
    NDArray a = ref::represent(ref::random({4, 8}, 151, -2, 2), d);
    NDArray b = ref::represent(ref::random({4, 8}, 152, -2, 2), d);
    Tensor x = ref::tensor(a, d), y = ref::tensor(b, d);
    EXPECT_EQ((x + y).dtype(), d);
    ref::expect_close(x + y, ref::zip(a, b, [](double p, double q) { return p + q; }), tol, tol,
                      n + " add");
    EXPECT_EQ((x * y).dtype(), d);
    ref::expect_close(x * y, ref::zip(a, b, [](double p, double q) { return p * q; }), tol, tol,
                      n + " mul");
    ref::expect_close(x * 1.5 - y, ref::zip(a, b, [](double p, double q) { return p * 1.5 - q; }),
                      tol, tol, n + " mul sub scalar");
    Tensor s = x.sum(1);
    EXPECT_EQ(s.dtype(), d);
    ref::expect_close(s, ref::reduce(a, ref::Reduce::Sum, {1}), tol, 4 * tol, n + " sum");
    ref::expect_close(x.max(0), ref::reduce(a, ref::Reduce::Max, {0}), 0, 0, n + " max");
    ref::expect_close(x.exp(), ref::map(a, [](double v) { return std::exp(v); }), tol, tol,
                      n + " exp");
    // casts to / from float32
    Tensor f = x.cast(dt::float32);
    EXPECT_EQ(f.dtype(), dt::float32);
    ref::expect_exact(f, a, n + " -> float32");
    NDArray c = ref::random({4, 8}, 153, -100, 100);
    ref::expect_exact(ref::tensor(c).cast(d), ref::represent(c, d), "float32 -> " + n);
    ref::expect_exact(ref::tensor(c).cast(d).cast(dt::float32), ref::represent(c, d),
                      "float32 -> " + n + " -> float32");
    // mixed with float32 promotes to float32
    Tensor m = x + ref::tensor(c);
    EXPECT_EQ(m.dtype(), dt::float32);
    ref::expect_close(m, ref::zip(a, c, [](double p, double q) { return p + q; }), kF32, kF32,
                      n + " + float32");
  }
  // float16 + bfloat16 -> float32
  NDArray a = vals({3}, {1.5, -2.25, 3}), b = vals({3}, {0.5, 0.25, -1});
  Tensor hb = ref::tensor(a, dt::float16) + ref::tensor(b, dt::bfloat16);
  EXPECT_EQ(hb.dtype(), dt::float32);
  ref::expect_exact(hb, vals({3}, {2, -2, 2}), "half + bfloat16");
}

// ================================================================== zero-size tensors

TEST(ZeroSize, ElementwiseAndReductions) {
  Tensor a = Tensor::zeros({0, 3}), b = Tensor::ones({0, 3});
  Tensor c = a + b;
  EXPECT_EQ(c.shape(), (S{0, 3}));
  EXPECT_TRUE(c.data<float>().empty());
  Tensor d = a + ref::tensor(vals({3}, {1, 2, 3}));
  EXPECT_EQ(d.shape(), (S{0, 3}));
  EXPECT_TRUE(d.data<float>().empty());
  Tensor e = ref::tensor(NDArray({0, 3}, {})) * 2;
  EXPECT_EQ(e.shape(), (S{0, 3}));
  EXPECT_TRUE(e.data<double>().empty());

  NDArray empty({0, 3}, {});
  Tensor x = ref::tensor(empty);
  ref::expect_exact(x.sum(0), ref::reduce(empty, ref::Reduce::Sum, {0}), "sum over empty axis");
  ref::expect_exact(x.sum(0), vals({3}, {0, 0, 0}), "sum over empty axis is 0");
  ref::expect_exact(x.sum(), vals({}, {0}), "sum of empty");
  ref::expect_exact(x.max(0), vals({3}, {-kInf, -kInf, -kInf}), "max over empty axis");
  ref::expect_exact(x.min(0), vals({3}, {kInf, kInf, kInf}), "min over empty axis");
  ref::expect_exact(x.sum(1), NDArray({0}, {}), "sum over the non-empty axis");
  ref::expect_exact(x.sum(0, true), vals({1, 3}, {0, 0, 0}), "sum keepdim");

  NDArray e2({3, 0}, {});
  Tensor y = ref::tensor(e2);
  ref::expect_exact(y.sum(1), vals({3}, {0, 0, 0}), "(3,0).sum(1)");
  ref::expect_exact(y.max(1), vals({3}, {-kInf, -kInf, -kInf}), "(3,0).max(1)");
  ref::expect_exact(ref::tensor(e2, dt::int32).sum(1), vals({3}, {0, 0, 0}), "int (3,0).sum(1)");
  EXPECT_EQ(Tensor::arange(0).numel(), 0);
}

// ================================================================== realize_all

TEST(Realize, RealizeAllComputesEach) {
  NDArray a = ref::random({3, 4}, 161);
  Tensor x = ref::tensor(a);
  Tensor s = x.sum(1), m = x * 2;
  tc::realize_all({s, m});
  ref::expect_close(s, ref::reduce(a, ref::Reduce::Sum, {1}), kF32, kF32, "realize_all sum");
  ref::expect_close(m, ref::map(a, [](double v) { return v * 2; }), kF32, kF32, "realize_all mul");
}

// host_data: the realized contents in place on the CPU (no copy), valid while the handle lives;
// nullptr on a device whose memory the host cannot read (a GPU's, or the CL device's).
TEST(TensorOps, HostDataViewsTheRealizedBufferAndKeepsItAlive) {
  std::shared_ptr<const void> p;
  {
    Tensor t = Tensor::arange(0, 6, 1, dt::int32) * 3;
    if (t.device() != "CPU") {
      EXPECT_EQ(t.host_data(), nullptr);
      EXPECT_NE(t.to("CPU").host_data(), nullptr);
      return;
    }
    p = t.host_data();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p.get(), t.host_data().get());  // the same buffer again, not a copy
  }
  Tensor::zeros({6}, dt::int32).contiguous().realize();  // would reuse freed memory
  const int32_t* v = static_cast<const int32_t*>(p.get());
  EXPECT_EQ(std::vector<int32_t>(v, v + 6), (std::vector<int32_t>{0, 3, 6, 9, 12, 15}));
}

}  // namespace
