// dtype and misc methods (tensor/dtype.cc, tensor.cc, hash.cc): cast shortcuts, bitcast against
// memcpy on the host, sizes, devices, clone/replace, in-place operators, and keccak / hash against
// hashlib's SHA-3 and SHAKE-128 (tests/fixtures/gen_nn.py). Integer, bool and byte results are
// compared exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tests/tensor/fixture.h"
#include "tests/tensor/reference.h"
#include "tinycore/runtime/device.h"
#include "tinycore/tensor.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;
namespace dt = tc::dtypes;

template <typename F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected a tc::Error containing \"" << parts[0] << "\"";
  } catch (const tc::Error& e) {
    for (const std::string& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

// The bytes of `from` reinterpreted as To (host-side reference of bitcast).
template <typename To, typename From>
std::vector<To> reinterpret(const std::vector<From>& from) {
  std::vector<To> out(from.size() * sizeof(From) / sizeof(To));
  std::memcpy(out.data(), from.data(), out.size() * sizeof(To));
  return out;
}

// ---------------------------------------------------------------- casts

TEST(CastShortcuts, DtypesAndValues) {
  Tensor f = Tensor::from_vector<float>({-1.75f, 0.0f, 2.5f, 300.25f});
  struct Want {
    Tensor t;
    tc::DType d;
  };
  for (const Want& w :
       {Want{f.float_(), dt::float32}, Want{f.double_(), dt::float64}, Want{f.half(), dt::float16},
        Want{f.bfloat16(), dt::bfloat16}, Want{f.int_(), dt::int32}, Want{f.long_(), dt::int64},
        Want{f.short_(), dt::int16}, Want{f.char_(), dt::int8}, Want{f.byte(), dt::uint8},
        Want{f.bool_(), dt::bool_}}) {
    SCOPED_TRACE(w.d.name());
    EXPECT_EQ(w.t.dtype(), w.d);
    EXPECT_EQ(w.t.shape(), f.shape());
  }
  tcref::expect_exact(f.int_(), tcref::NDArray({4}, {-1, 0, 2, 300}));
  tcref::expect_exact(f.long_(), tcref::NDArray({4}, {-1, 0, 2, 300}));
  tcref::expect_exact(f.bool_(), tcref::NDArray({4}, {1, 0, 1, 1}));
  tcref::expect_exact(f.char_().shrink({{0, 3}}), tcref::NDArray({3}, {-1, 0, 2}));
  tcref::NDArray ref({4}, {-1.75, 0.0, 2.5, 300.25});
  tcref::expect_close(f.half(), tcref::represent(ref, dt::float16), 0, 0);
  tcref::expect_close(f.bfloat16(), tcref::represent(ref, dt::bfloat16), 0, 0);
  tcref::expect_close(f.double_(), ref, 0, 0);
  tcref::expect_close(Tensor::from_vector<int32_t>({3, -4}).float_(), tcref::NDArray({2}, {3, -4}),
                      0, 0);
  // a cast to the same dtype is the tensor itself
  EXPECT_EQ(f.float_().uop(), f.uop());
}

// ---------------------------------------------------------------- bitcast

// Float to integer casts saturate (NaN to 0, past either end to that end, else toward zero), in
// SIMD kernels (64 values: every lane count) as in scalar ones, for float32 and float64 sources,
// against the same rule computed on the host.
template <typename I, typename F>
void expect_saturating_cast(tc::DType to, tc::DType from) {
  std::vector<F> xs;
  for (double x : std::initializer_list<double>{NAN, INFINITY, -INFINITY, 3e9, -3e9, 2147483520.0,
                                                -2147483648.0, 1.5, -1.5, -0.7, 255.9, 256.0,
                                                -129.0, 127.5, 65535.5, 4294967040.0, 1e19, -1e19})
    xs.push_back(static_cast<F>(x));
  for (int i = 0; xs.size() < 64; i++) xs.push_back(static_cast<F>((i * 37 % 41 - 20) * 0.75));
  std::vector<I> want;
  for (F x : xs) {
    double lo = static_cast<double>(std::numeric_limits<I>::min()),
           hi = static_cast<double>(std::numeric_limits<I>::max());
    want.push_back(std::isnan(x) ? I{0}
                   : x <= lo     ? std::numeric_limits<I>::min()
                   : x >= hi + 1 ? std::numeric_limits<I>::max()
                                 : static_cast<I>(std::trunc(static_cast<double>(x))));
  }
  Tensor t = Tensor::from_vector<F>(xs);
  EXPECT_EQ((t * 1).cast(to).template data<I>(), want) << from.name() << " -> " << to.name();
}

TEST(CastShortcuts, FloatToIntegerSaturates) {
  expect_saturating_cast<int32_t, float>(dt::int32, dt::float32);
  expect_saturating_cast<int32_t, double>(dt::int32, dt::float64);
  expect_saturating_cast<int64_t, float>(dt::int64, dt::float32);
  expect_saturating_cast<int8_t, float>(dt::int8, dt::float32);
  expect_saturating_cast<uint8_t, float>(dt::uint8, dt::float32);
  expect_saturating_cast<uint16_t, double>(dt::uint16, dt::float64);
  expect_saturating_cast<uint32_t, float>(dt::uint32, dt::float32);
}

// An integer past float16's range is inf in float16, against the host's _Float16, also where
// the compiler knows the int has few bits set: LLVM 19 folded fpext(sitofp i32 to half) into
// sitofp to float for INT_MIN * x (the max of no element times a number), giving -2^31.
TEST(CastShortcuts, IntegersPastFloat16sRangeAreInf) {
  std::vector<int32_t> v = {std::numeric_limits<int32_t>::min(),
                            std::numeric_limits<int32_t>::max(),
                            65504,
                            65519,
                            65520,
                            -65520,
                            2049,
                            2051,
                            12345,
                            -7,
                            0};
  std::vector<float> want;
  for (int32_t x : v)
    want.push_back(static_cast<float>(static_cast<_Float16>(static_cast<double>(x))));
  EXPECT_EQ(Tensor::from_vector<int32_t>(v, tc::Shape{11}).half().cast(dt::float32).data<float>(),
            want);
  Tensor one = Tensor::from_vector<int32_t>({1}, tc::Shape{1}).realize();
  Tensor int_min = Tensor::from_vector<int32_t>({}, tc::Shape{0}).max();  // the identity of max
  std::vector<float> got = (int_min * one).half().cast(dt::float32).data<float>();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], -std::numeric_limits<float>::infinity());
}

TEST(Bitcast, SameSizeReinterpretsBits) {
  std::vector<float> v = {1.0f, -2.5f, 0.0f, -0.0f, 3.1415926f, 1e-38f};
  Tensor t = Tensor::from_vector<float>(v, tc::Shape{2, 3});
  Tensor i = t.bitcast(dt::int32);
  EXPECT_EQ(i.dtype(), dt::int32);
  EXPECT_EQ(i.shape(), (tc::Shape{2, 3}));
  EXPECT_EQ(i.data<int32_t>(), reinterpret<int32_t>(v));
  EXPECT_EQ(t.bitcast(dt::uint32).data<uint32_t>(), reinterpret<uint32_t>(v));
  // and back
  EXPECT_EQ(i.bitcast(dt::float32).data<float>(), v);
  // int32 -> uint32: -1 is 0xffffffff
  EXPECT_EQ(Tensor::from_vector<int32_t>({-1, 2, 3}).bitcast(dt::uint32).data<uint32_t>(),
            (std::vector<uint32_t>{0xffffffffu, 2, 3}));
  // float64 <-> int64
  std::vector<double> d = {1.5, -1e300};
  EXPECT_EQ(Tensor::from_vector<double>(d).bitcast(dt::int64).data<int64_t>(),
            reinterpret<int64_t>(d));
}

TEST(Bitcast, SixteenBitFloats) {
  // 1.0 is 0x3c00 in float16 and 0x3f80 in bfloat16; -2 is 0xc000 / 0xc000
  Tensor one = Tensor::from_vector<float>({1.0f, -2.0f, 0.5f});
  tcref::expect_exact(one.half().bitcast(dt::uint16),
                      tcref::NDArray({3}, {0x3c00, 0xc000, 0x3800}));
  tcref::expect_exact(one.bfloat16().bitcast(dt::int16),
                      tcref::NDArray({3}, {0x3f80, static_cast<int16_t>(0xc000), 0x3f00}));
  Tensor bits = Tensor::from_vector<uint16_t>({0x3c00, 0x4000});
  tcref::expect_close(bits.bitcast(dt::float16), tcref::NDArray({2}, {1.0, 2.0}), 0, 0);
  tcref::expect_close(bits.bitcast(dt::bfloat16), tcref::NDArray({2}, {0.0078125, 2.0}), 0, 0);
  // half <-> bfloat16 directly: the same 16 bits
  tcref::expect_close(one.half().bitcast(dt::bfloat16).float_(),
                      tcref::NDArray({3}, {0.0078125, -2.0, 3.0517578125e-05}), 0, 0);
}

TEST(Bitcast, NonContiguousInput) {
  std::vector<int32_t> v = {1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::from_vector<int32_t>(v, tc::Shape{2, 3}).transpose();  // (3, 2)
  Tensor f = t.bitcast(dt::float32);
  std::vector<int32_t> transposed = {1, 4, 2, 5, 3, 6};
  EXPECT_EQ(f.data<float>(), reinterpret<float>(transposed));
  // different sizes on a transposed tensor: (3, 2) int32 -> (3, 8) uint8
  EXPECT_EQ(t.bitcast(dt::uint8).shape(), (tc::Shape{3, 8}));
  EXPECT_EQ(t.bitcast(dt::uint8).data<uint8_t>(), reinterpret<uint8_t>(transposed));
}

TEST(Bitcast, DifferentSizesChangeTheLastDimension) {
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 16; i++) bytes.push_back(static_cast<uint8_t>(i * 37 + 5));
  Tensor b = Tensor::from_vector<uint8_t>(bytes, tc::Shape{2, 8});
  // wider: (2, 8) uint8 -> (2, 2) uint32 / (2, 1) int64 / (2, 4) float16 bits
  Tensor w = b.bitcast(dt::uint32);
  EXPECT_EQ(w.shape(), (tc::Shape{2, 2}));
  EXPECT_EQ(w.data<uint32_t>(), reinterpret<uint32_t>(bytes));
  EXPECT_EQ(b.bitcast(dt::int64).data<int64_t>(), reinterpret<int64_t>(bytes));
  EXPECT_EQ(b.bitcast(dt::int16).shape(), (tc::Shape{2, 4}));
  EXPECT_EQ(b.bitcast(dt::int16).data<int16_t>(), reinterpret<int16_t>(bytes));
  // narrower: back to bytes, and int64 -> int16
  EXPECT_EQ(w.bitcast(dt::uint8).data<uint8_t>(), bytes);
  std::vector<int64_t> l = {-2, 0x0123456789abcdefLL};
  Tensor s = Tensor::from_vector<int64_t>(l).bitcast(dt::int16);
  EXPECT_EQ(s.shape(), (tc::Shape{8}));
  EXPECT_EQ(s.data<int16_t>(), reinterpret<int16_t>(l));
  // float32 -> uint16 -> float32 round trip
  std::vector<float> f = {1.5f, -7.25f};
  Tensor h = Tensor::from_vector<float>(f).bitcast(dt::uint16);
  EXPECT_EQ(h.data<uint16_t>(), reinterpret<uint16_t>(f));
  EXPECT_EQ(h.bitcast(dt::float32).data<float>(), f);
  // bool is read as its bytes 0 / 1
  Tensor bools = Tensor::from_vector<bool>({true, false, false, true});
  EXPECT_EQ(bools.bitcast(dt::uint8).data<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(bools.bitcast(dt::uint32).item<uint32_t>(), 0x01000001u);
}

TEST(Bitcast, Errors) {
  Tensor b = Tensor::zeros({2, 3}, dt::uint8);
  expect_error([&] { b.bitcast(dt::int32); }, {"Tensor.bitcast", "(2, 3)", "to int", "4"});
  expect_error([&] { Tensor::zeros({3}, dt::int16).bitcast(dt::float32); },
               {"Tensor.bitcast", "(3,)", "6"});
  expect_error([&] { Tensor::full({}, 1, dt::int32).bitcast(dt::int64); },
               {"Tensor.bitcast", "()"});
  expect_error([&] { b.bitcast(dt::bool_); }, {"Tensor.bitcast", "bool"});
}

TEST(Bitcast, NoGradientFlows) {
  Tensor x = Tensor::from_vector<float>({1.0f, 2.0f}).requires_grad_();
  Tensor y = x.bitcast(dt::int32).bitcast(dt::float32).mul(x).sum();
  // only the direct x factor carries a gradient: d/dx (c * x) = c, the bitcast value
  tcref::expect_close(y.gradient({x})[0], tcref::NDArray({2}, {1.0, 2.0}), 0, 0);
}

// ---------------------------------------------------------------- properties

TEST(Properties, SizesAndKinds) {
  Tensor t = Tensor::zeros({2, 3, 4}, dt::int16);
  EXPECT_EQ(t.element_size(), 2);
  EXPECT_EQ(t.nbytes(), 48);
  EXPECT_FALSE(t.is_floating_point());
  EXPECT_EQ(t.size(), (tc::Shape{2, 3, 4}));
  EXPECT_EQ(t.size(1), 3);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_TRUE(Tensor::zeros({1}, dt::bfloat16).is_floating_point());
  EXPECT_TRUE(Tensor::zeros({1}, dt::float64).is_floating_point());
  EXPECT_FALSE(Tensor::zeros({1}, dt::bool_).is_floating_point());
  EXPECT_EQ(Tensor::zeros({5}, dt::float64).nbytes(), 40);
  EXPECT_EQ(Tensor::zeros({0, 3}).nbytes(), 0);
  EXPECT_EQ(Tensor::full({}, 1.0).size(), tc::Shape{});
  expect_error([&] { t.size(3); }, {"Tensor.size", "dim 3", "[-3, 2]", "(2, 3, 4)"});
  expect_error([&] { Tensor::full({}, 1.0).size(0); },
               {"Tensor.size", "dim 0", "shape ()", "no dimensions"});
}

// ---------------------------------------------------------------- devices

TEST(Devices, ToTheSameDeviceIsThisTensor) {
  Tensor t = Tensor::from_vector<float>({1.0f, 2.0f});
  std::string lower = t.device();  // names are case-insensitive
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  EXPECT_EQ(t.to(t.device()).uop(), t.uop());
  EXPECT_EQ(t.to(lower).data<float>(), (std::vector<float>{1.0f, 2.0f}));
  Tensor u = t;
  u.to_(t.device());
  EXPECT_EQ(u.uop(), t.uop());
  expect_error([&] { t.to("NOPE"); }, {"Tensor.to", "NOPE"});
  expect_error([&] { t.to_("TPU"); }, {"Tensor.to", "TPU"});
}

// Between devices (the CL device: PoCL on the CPU in CI) the values are copied into a new
// buffer there, computing there gives the same values, and the grad moves along.
TEST(Devices, CopiesBetweenDevices) {
  auto names = tc::runtime::available_devices();
  if (std::find(names.begin(), names.end(), "CL") == names.end())
    GTEST_SKIP() << "no CL device: " << tc::runtime::unavailable_reason("CL");
  std::string here = Tensor::from_vector<float>({0.0f}).device();
  std::string there = here == "CL" ? "CPU" : "CL";
  Tensor a = Tensor::from_vector<float>({1.5f, -2.0f, 3.25f}).requires_grad_();
  a.set_grad(Tensor::from_vector<float>({1.0f, 2.0f, 3.0f}));
  Tensor b = a.to(there);
  EXPECT_EQ(b.device(), there);
  EXPECT_TRUE(b.requires_grad());
  ASSERT_TRUE(b.grad());
  EXPECT_EQ(b.grad()->device(), there);
  EXPECT_EQ(b.grad()->data<float>(), (std::vector<float>{1.0f, 2.0f, 3.0f}));
  Tensor c = (b * 2 + 1).to(here);
  EXPECT_EQ(c.device(), here);
  EXPECT_EQ(c.data<float>(), (std::vector<float>{4.0f, -3.0f, 7.5f}));
  Tensor i = Tensor::from_vector<int32_t>({7, -8}).to(there);
  EXPECT_EQ(i.dtype(), tc::dtypes::int32);
  EXPECT_EQ((i / 2).data<int32_t>(), (std::vector<int32_t>{3, -4}));
  expect_error([&] { (a + b).realize(); }, {"CPU", "CL"});
}

// ---------------------------------------------------------------- clone / replace

TEST(Clone, OwnBufferValuesAndGrad) {
  Tensor a = Tensor::from_vector<float>({1.0f, 2.0f, 3.0f}).requires_grad_();
  a.sum().mul(2.0).backward();
  Tensor c = a.clone();
  EXPECT_TRUE(c.requires_grad());
  ASSERT_TRUE(c.grad().has_value());
  EXPECT_EQ(c.grad()->data<float>(), (std::vector<float>{2.0f, 2.0f, 2.0f}));
  c.grad()->assign(Tensor::zeros({3})).realize();  // a clone of the grad, not the same tensor
  EXPECT_EQ(a.grad()->data<float>(), (std::vector<float>{2.0f, 2.0f, 2.0f}));
  EXPECT_EQ(c.grad()->data<float>(), (std::vector<float>{0.0f, 0.0f, 0.0f}));
  c.realize();
  EXPECT_EQ(c.data<float>(), (std::vector<float>{1.0f, 2.0f, 3.0f}));
  // later changes of the original do not reach the clone, and the other way round
  a.assign(a.add(Tensor::full({3}, 10.0)));
  EXPECT_EQ(c.data<float>(), (std::vector<float>{1.0f, 2.0f, 3.0f}));
  c.assign(Tensor::zeros({3}));
  EXPECT_EQ(a.data<float>(), (std::vector<float>{11.0f, 12.0f, 13.0f}));
  // gradients flow through a clone
  Tensor x = Tensor::from_vector<double>({1.0, -2.0});
  tcref::expect_close(x.clone().square().sum().gradient({x})[0], tcref::NDArray({2}, {2.0, -4.0}),
                      0, 0);
}

TEST(Replace, SwapsTheGraphForEveryHandle) {
  Tensor a = Tensor::from_vector<float>({1.0f, 2.0f});
  Tensor alias = a;
  Tensor before = a.mul(Tensor::full({2}, 3.0));  // built before: keeps the old value
  a.replace(Tensor::from_vector<int32_t>({7, 8}));
  EXPECT_EQ(alias.dtype(), dt::int32);  // the dtype may change
  EXPECT_EQ(alias.data<int32_t>(), (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(before.data<float>(), (std::vector<float>{3.0f, 6.0f}));
  expect_error([&] { a.replace(Tensor::zeros({3})); }, {"Tensor.replace", "(2,)", "(3,)"});
  // assigns to a tensor that took another's buffer by replace leave that other tensor alone
  Tensor src = Tensor::from_vector<float>({1.0f, 2.0f}).realize();
  Tensor dst = Tensor::zeros({2});
  dst.replace(src);
  for (float v : {5.0f, 6.0f}) {
    dst.assign(Tensor::full({2}, v));
    dst.realize();
  }
  EXPECT_EQ(dst.data<float>(), (std::vector<float>{6.0f, 6.0f}));
  EXPECT_EQ(src.data<float>(), (std::vector<float>{1.0f, 2.0f}));
}

TEST(ConstLike, ShapeDtypeAndValue) {
  Tensor t = Tensor::zeros({2, 3}, dt::int16).transpose();
  Tensor c = t.const_like(7);
  EXPECT_EQ(c.shape(), (tc::Shape{3, 2}));
  EXPECT_EQ(c.dtype(), dt::int16);
  tcref::expect_exact(c, tcref::NDArray({3, 2}, std::vector<double>(6, 7.0)));
  tcref::expect_close(
      Tensor::zeros({2}, dt::float16).const_like(0.1),
      tcref::NDArray({2}, {tcref::represent(0.1, dt::float16), tcref::represent(0.1, dt::float16)}),
      0, 0);
}

// ---------------------------------------------------------------- in-place operators

TEST(InPlace, OperatorsAssignForEveryHandle) {
  Tensor a = Tensor::from_vector<float>({1.0f, 2.0f, 4.0f});
  Tensor alias = a;
  Tensor b = Tensor::from_vector<float>({0.5f, 0.25f, 2.0f});
  a += b;  // 1.5 2.25 6
  EXPECT_EQ(alias.data<float>(), (std::vector<float>{1.5f, 2.25f, 6.0f}));
  a -= 0.5;  // 1 1.75 5.5
  a *= b;    // 0.5 0.4375 11
  a /= 2;    // 0.25 0.21875 5.5
  EXPECT_EQ(alias.data<float>(), (std::vector<float>{0.25f, 0.21875f, 5.5f}));
  Tensor& r = (a += 1);
  EXPECT_EQ(&r, &a);
  // broadcasting into a's shape, and a's dtype kept
  Tensor i = Tensor::from_vector<int32_t>({6, 7, 12}, tc::Shape{3, 1}).expand({3, 2}).contiguous();
  i += Tensor::from_vector<int32_t>({1, 2});
  i *= 2;
  i -= Tensor::full({}, 1, dt::int32);
  EXPECT_EQ(i.dtype(), dt::int32);
  EXPECT_EQ(i.data<int32_t>(), (std::vector<int32_t>{13, 15, 15, 17, 25, 27}));
  Tensor m = Tensor::from_vector<int32_t>({0b1100, 0b1010});
  m &= Tensor::from_vector<int32_t>({0b0110, 0b0110});  // 0100 0010
  m |= Tensor::from_vector<int32_t>({0b0001, 0b1000});  // 0101 1010
  m ^= Tensor::from_vector<int32_t>({0b1111, 0b0011});  // 1010 1001
  EXPECT_EQ(m.data<int32_t>(), (std::vector<int32_t>{0b1010, 0b1001}));
  expect_error([&] { a += Tensor::ones({4}); }, {"add", "(3,)", "(4,)"});
  Tensor u = Tensor::from_vector<uint32_t>({1, 0x80000001u});
  u <<= 4;  // 0x10, 0x00000010 (the top bits fall off)
  EXPECT_EQ(u.data<uint32_t>(), (std::vector<uint32_t>{0x10u, 0x10u}));
  u >>= 3;
  EXPECT_EQ(u.data<uint32_t>(), (std::vector<uint32_t>{2u, 2u}));
}

// ---------------------------------------------------------------- keccak / hash

const tcfix::Case& fx(const std::string& name) { return tcfix::fixture("nn", name); }

TEST(Keccak, Sha3_256KnownVectors) {
  // hashlib: "" -> a7ffc6f8bf1ed766..., "abc" -> 3a985da74fe225b2...; one byte short of a block
  // (the padding bytes merge), exactly a block (an extra block), two blocks
  for (const char* name : {"empty", "abc", "rate_minus_1", "rate", "two_blocks"}) {
    SCOPED_TRACE(name);
    const tcfix::Case& c = fx(std::string("sha3_256_") + name);
    Tensor h = c["msg"].tensor().keccak();
    EXPECT_EQ(h.dtype(), dt::uint8);
    tcfix::expect_matches(h, c["out"], 0, 0);
  }
  EXPECT_EQ(fx("sha3_256_abc")["out"].values[0], 0x3a);
  EXPECT_EQ(fx("sha3_256_empty")["out"].values[0], 0xa7);
}

TEST(Keccak, OtherConfigsBatchesAndDtypes) {
  const tcfix::Case& c224 = fx("sha3_224_abc");
  tcfix::expect_matches(c224["msg"].tensor().keccak("sha3_224"), c224["out"], 0, 0);
  const tcfix::Case& shake = fx("shake_128_abc");
  tcfix::expect_matches(shake["msg"].tensor().keccak("shake_128"), shake["out"], 0, 0);
  tcfix::expect_matches(shake["msg"].tensor().keccak(168, 31), shake["out"], 0, 0);
  // rows hashed independently
  const tcfix::Case& batch = fx("sha3_256_batch");
  tcfix::expect_matches(batch["msg"].tensor().keccak(), batch["out"], 0, 0);
  // an int32 tensor hashes its little-endian bytes, row by row
  const tcfix::Case& ints = fx("sha3_256_int32_rows");
  Tensor h = ints["x"].tensor().keccak();
  EXPECT_EQ(h.shape(), (tc::Shape{2, 32}));
  tcfix::expect_matches(h, ints["out"], 0, 0);
}

TEST(Keccak, Errors) {
  Tensor m = Tensor::zeros({3}, dt::uint8);
  expect_error([&] { m.keccak("md5"); }, {"Tensor.keccak", "md5"});
  expect_error([&] { m.keccak(100, 6); }, {"Tensor.keccak", "rate 100"});
  expect_error([&] { m.keccak(136, 300); }, {"Tensor.keccak", "300"});
}

TEST(Hash, MatchesTinygradsTreeOfShake128) {
  const tcfix::Case& c = fx("hash_int32");
  Tensor h = c["x"].tensor().hash();
  EXPECT_EQ(h.shape(), (tc::Shape{16}));
  tcfix::expect_matches(h, c["out"], 0, 0);
}

}  // namespace
