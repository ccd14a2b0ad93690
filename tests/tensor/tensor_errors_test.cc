// Bad input throws tc::Error (never crashes), and the message names the operation and the shapes
// or values involved.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tinycore/error.h"
#include "tinycore/tensor.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;
namespace dt = tc::dtypes;
using S = std::vector<int64_t>;

// Runs `f`; it must throw tc::Error whose message contains every one of `parts`. Returns the
// message.
std::string error_message(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const tc::Error& e) {
    std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_THAT(msg, HasSubstr(p));
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a std::exception that is not tc::Error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no tc::Error thrown";
  return "";
}

// EXPECT_THROW plus the message check, with the statement in the failure trace.
#define EXPECT_TC_ERROR(stmt, ...)                                       \
  do {                                                                   \
    SCOPED_TRACE(#stmt);                                                 \
    EXPECT_THROW(stmt, tc::Error);                                       \
    error_message([&] { stmt; }, std::vector<std::string>{__VA_ARGS__}); \
  } while (0)

Tensor f32(S shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i) + 1;
  return Tensor(v, shape);
}

Tensor i32(S shape) { return f32(std::move(shape)).cast(dt::int32); }

TEST(Errors, BroadcastMismatchNamesOpAndShapes) {
  Tensor a = f32({2, 3}), b = f32({4});
  EXPECT_TC_ERROR(a.add(b), "Tensor.add", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a + b, "Tensor.add", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(b + a, "Tensor.add", "(4,)", "(2, 3)");
  EXPECT_TC_ERROR(a.mul(b), "Tensor.mul", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a.div(b), "Tensor.div", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a.maximum(b), "Tensor.maximum", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a.lt(b), "Tensor.lt", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a.gt(b), "Tensor.gt", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a.eq(b), "Tensor.eq", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a.ne(b), "Tensor.ne", "(2, 3)", "(4,)");
  Tensor ia = i32({2, 3}), ib = i32({4});
  EXPECT_TC_ERROR(ia.idiv(ib), "Tensor.idiv", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(ia.mod(ib), "Tensor.mod", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(ia.bitwise_and(ib), "Tensor.bitwise_and", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(ia.bitwise_or(ib), "Tensor.bitwise_or", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(ia.bitwise_xor(ib), "Tensor.bitwise_xor", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(f32({3, 1}).add(f32({2, 4})), "Tensor.add", "(3, 1)", "(2, 4)");
  EXPECT_TC_ERROR(f32({0, 3}).add(f32({2, 3})), "Tensor.add", "(0, 3)", "(2, 3)");
  Tensor c = f32({2, 3}).gt(1);
  EXPECT_TC_ERROR(c.where(f32({2, 3}), f32({5})), "Tensor.where", "(2, 3)", "(5,)");
  EXPECT_TC_ERROR(f32({4}).gt(1).where(a, 0.0), "Tensor.where", "(4,)", "(2, 3)");
}

// Ops built from other ops must still report their own name.
TEST(Errors, ComposedBinaryOpsNameThemselves) {
  Tensor a = f32({2, 3}), b = f32({4});
  EXPECT_TC_ERROR(a.sub(b), "Tensor.sub", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a - b, "Tensor.sub", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a.le(b), "Tensor.le", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a.ge(b), "Tensor.ge", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a.minimum(b), "Tensor.minimum", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(i32({2, 3}).minimum(i32({4})), "Tensor.minimum", "(2, 3)", "(4,)");
  EXPECT_TC_ERROR(a.mod(b), "Tensor.mod", "(2, 3)", "(4,)");
}

TEST(Errors, BitwiseOpsOnFloatsNameTheDtype) {
  EXPECT_TC_ERROR(f32({2}).bitwise_and(i32({2})), "Tensor.bitwise_and", "float");
  EXPECT_TC_ERROR(i32({2}).bitwise_or(f32({2})), "Tensor.bitwise_or", "float");
  EXPECT_TC_ERROR(f32({2}).bitwise_xor(f32({2})), "Tensor.bitwise_xor", "float");
}

TEST(Errors, BatchedMatmulNamesTheOperands) {
  EXPECT_TC_ERROR(f32({2, 3, 4}).matmul(f32({3, 4, 5})), "Tensor.dot", "(2, 3, 4)", "(3, 4, 5)");
}

TEST(Errors, Reshape) {
  Tensor x = f32({6});
  EXPECT_TC_ERROR(x.reshape({4, 2}), "Tensor.reshape", "(6,)", "(4, 2)");
  EXPECT_TC_ERROR(f32({2, 3}).reshape({7}), "Tensor.reshape", "(2, 3)", "(7,)");
  EXPECT_TC_ERROR(x.reshape({-1, -1}), "Tensor.reshape", "-1");
  EXPECT_TC_ERROR(x.reshape({-1, 4}), "Tensor.reshape", "(6,)", "4");
  EXPECT_TC_ERROR(x.reshape({-2, -3}), "Tensor.reshape", "-2");
  EXPECT_TC_ERROR(x.reshape({0, -1}), "Tensor.reshape", "(6,)");
}

TEST(Errors, AxisOutOfRangeNamesAxisAndShape) {
  Tensor x = f32({2, 3});
  EXPECT_TC_ERROR(x.sum(2), "Tensor.sum", "2", "(2, 3)");
  EXPECT_TC_ERROR(x.sum(-3), "Tensor.sum", "-3", "(2, 3)");
  EXPECT_TC_ERROR(x.sum({0, 5}), "Tensor.sum", "5", "(2, 3)");
  EXPECT_TC_ERROR(x.max(2), "Tensor.max", "2", "(2, 3)");
  EXPECT_TC_ERROR(x.max(-4, true), "Tensor.max", "-4", "(2, 3)");
  EXPECT_TC_ERROR(x.permute({0, 2}), "Tensor.permute", "2", "(2, 3)");
  EXPECT_TC_ERROR(x.permute({-3, 0}), "Tensor.permute", "-3", "(2, 3)");
  EXPECT_TC_ERROR(x.flip({2}), "Tensor.flip", "2", "(2, 3)");
  EXPECT_TC_ERROR(x.flip({-3}), "Tensor.flip", "-3", "(2, 3)");
  EXPECT_TC_ERROR(x.transpose(0, 2), "Tensor.transpose", "2", "(2, 3)");
  EXPECT_TC_ERROR(x.transpose(-3, 1), "Tensor.transpose", "-3", "(2, 3)");
  EXPECT_TC_ERROR(x.flatten(3), "Tensor.flatten", "3", "(2, 3)");
  EXPECT_TC_ERROR(f32({}).reshape({}).sum(1), "Tensor.sum", "1", "()");  // 0 and -1 are allowed
  EXPECT_TC_ERROR(i32({2, 3}).sum(7), "Tensor.sum", "7", "(2, 3)");
}

// Every op checks its dim with one function (tinygrad's _resolve_dim), so every message is the
// same sentence: the op, the dim given, the valid range and the shape.
TEST(Errors, DimOutOfRangeIsOneMessage) {
  auto message = [](const std::function<void()>& f) { return error_message(f, {}); };
  Tensor x = f32({2, 3});
  const char* kRange = " is out of range [-2, 1] for a tensor of shape (2, 3)";
  EXPECT_EQ(message([&] { x.sum(2); }), std::string("Tensor.sum: dim 2") + kRange);
  EXPECT_EQ(message([&] { x.transpose(-3, 0); }), std::string("Tensor.transpose: dim -3") + kRange);
  EXPECT_EQ(message([&] { x.cumsum(5); }), std::string("Tensor.cumsum: dim 5") + kRange);
  EXPECT_EQ(message([&] { x.argmax(2); }), std::string("Tensor.argmax: dim 2") + kRange);
  EXPECT_EQ(message([&] { x.softmax(-3); }), std::string("Tensor.softmax: dim -3") + kRange);
  EXPECT_EQ(message([&] {
              x.gather(2, i32({2, 3}));
            }),
            std::string("Tensor.gather: dim 2") + kRange);
  EXPECT_EQ(message([&] { x.chunk(2, 7); }), std::string("Tensor.chunk: dim 7") + kRange);
  // a new dimension may also go last: unsqueeze and stack take one more
  EXPECT_EQ(message([&] { x.unsqueeze(3); }),
            "Tensor.unsqueeze: dim 3 is out of range [-3, 2] for a tensor of shape (2, 3)");
  EXPECT_EQ(x.unsqueeze(2).shape(), (S{2, 3, 1}));
  EXPECT_EQ(x.unsqueeze(-3).shape(), (S{1, 2, 3}));
  // a 0-d tensor takes dim 0 and -1 (tinygrad), unless the op reads a dimension
  Tensor s = f32({}).reshape({});
  EXPECT_EQ(message([&] { s.cumsum(1); }),
            "Tensor.cumsum: dim 1 is out of range [-1, 0] for a tensor of shape ()");
  EXPECT_EQ(s.cumsum(-1).item<float>(), 1.0f);
  EXPECT_EQ(s.sort(-1).first.item<float>(), 1.0f);
  EXPECT_EQ(message([&] { s.argmax(0); }),
            "Tensor.argmax: dim 0 is out of range for a tensor of shape () (it has no dimensions)");
  EXPECT_EQ(
      message([&] { s.gather(-1, i32({}).reshape({})); }),
      "Tensor.gather: dim -1 is out of range for a tensor of shape () (it has no dimensions)");
  // a 0-d tensor's dim -1 is its dim 0 (these read past the shape before)
  EXPECT_EQ(s.repeat_interleave(2, -1).data<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(s.unflatten(-1, {1}).shape(), (S{1}));
}

TEST(Errors, MinAxisOutOfRangeNamesMin) {
  // min is built from max (and neg / xor); the message must still say min
  EXPECT_TC_ERROR(f32({2, 3}).min(2), "Tensor.min", "2", "(2, 3)");
  EXPECT_TC_ERROR(f32({2, 3}).cast(dt::uint8).min(-3), "Tensor.min", "-3", "(2, 3)");
  std::string msg = error_message([] { f32({2, 3}).min(2); }, {});
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("Tensor.max")));
}

TEST(Errors, PermuteOrder) {
  Tensor x = f32({2, 3, 4});
  EXPECT_TC_ERROR(x.permute({0, 1}), "Tensor.permute", "(2, 3, 4)");
  EXPECT_TC_ERROR(x.permute({0, 1, 2, 3}), "Tensor.permute", "(2, 3, 4)");
  EXPECT_TC_ERROR(x.permute({}), "Tensor.permute", "(2, 3, 4)");
  EXPECT_TC_ERROR(x.permute({0, 0, 1}), "Tensor.permute", "0");
  EXPECT_TC_ERROR(x.permute({1, -2, 0}), "Tensor.permute", "-2");
  EXPECT_TC_ERROR(x.flip({0, 0}), "Tensor.flip", "0");
}

TEST(Errors, RepeatedPermuteAxisNamesShape) {
  EXPECT_TC_ERROR(f32({2, 3, 4}).permute({0, 0, 1}), "Tensor.permute", "(2, 3, 4)");
}

TEST(Errors, Expand) {
  Tensor x = f32({2, 3});
  EXPECT_TC_ERROR(x.expand({4, 3}), "Tensor.expand", "(2, 3)", "(4, 3)");
  EXPECT_TC_ERROR(x.expand({2, 6}), "Tensor.expand", "(2, 3)", "(2, 6)");
  EXPECT_TC_ERROR(x.expand({3}), "Tensor.expand", "(2, 3)", "(3,)");
  EXPECT_TC_ERROR(x.expand({-1, 2, 3}), "Tensor.expand", "-1");
  EXPECT_TC_ERROR(f32({3, 1}).expand({5, 2, 1}), "Tensor.expand", "(3, 1)", "(5, 2, 1)");
}

TEST(Errors, Pad) {
  Tensor x = f32({3, 2});
  EXPECT_TC_ERROR(x.pad({{-4, 0}, {0, 0}}), "Tensor.pad", "(3, 2)");
  EXPECT_TC_ERROR(x.pad({{-2, -2}, {0, 0}}), "Tensor.pad", "(3, 2)");
  EXPECT_TC_ERROR(x.pad({{0, 0}, {1, -4}}), "Tensor.pad", "(3, 2)");
  EXPECT_TC_ERROR(x.pad({{1, 1}}), "Tensor.pad", "(3, 2)", "1");
  EXPECT_TC_ERROR(x.pad({{1, 1}, {1, 1}, {1, 1}}), "Tensor.pad", "(3, 2)", "3");
  EXPECT_TC_ERROR(x.pad({}), "Tensor.pad", "(3, 2)");
}

TEST(Errors, Shrink) {
  EXPECT_TC_ERROR(f32({3}).shrink({{0, 5}}), "Tensor.shrink", "(0, 5)", "(3,)");
  EXPECT_TC_ERROR(f32({4}).shrink({{3, 1}}), "Tensor.shrink", "(3, 1)", "(4,)");
  EXPECT_TC_ERROR(f32({4}).shrink({{-1, 2}}), "Tensor.shrink", "(-1, 2)", "(4,)");
  EXPECT_TC_ERROR(f32({2, 3}).shrink({{0, 2}, {1, 4}}), "Tensor.shrink", "(1, 4)", "(2, 3)");
  EXPECT_TC_ERROR(f32({2, 3}).shrink({{0, 1}}), "Tensor.shrink", "(2, 3)");
  EXPECT_TC_ERROR(f32({2, 3}).shrink({{0, 1}, {0, 1}, {0, 1}}), "Tensor.shrink", "(2, 3)");
}

TEST(Errors, DataLength) {
  EXPECT_TC_ERROR(Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5}, S{2, 3}),
                  "Tensor.from_vector", "5", "(2, 3)");
  EXPECT_TC_ERROR(Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7}, S{2, 3}),
                  "Tensor.from_vector", "7", "(2, 3)");
  EXPECT_TC_ERROR(Tensor::from_vector(std::vector<double>{1, 2}, S{}), "Tensor.from_vector", "2",
                  "()");
  EXPECT_TC_ERROR(Tensor(std::vector<float>{1, 2, 3}, S{2, 2}), "3", "(2, 2)");
  EXPECT_TC_ERROR(Tensor::from_vector(std::vector<float>{}, S{-1, 0}), "Tensor.from_vector",
                  "(-1, 0)");
}

TEST(Errors, Item) {
  EXPECT_TC_ERROR(f32({2, 3}).item<float>(), "Tensor.item", "(2, 3)", "6");
  EXPECT_TC_ERROR(f32({2}).sum(0, true).expand({3}).item<float>(), "Tensor.item", "(3,)");
  EXPECT_TC_ERROR(Tensor::zeros({0}).item<float>(), "Tensor.item", "(0,)");
  EXPECT_EQ(f32({1, 1}).item<float>(), 1.0f);  // one element in any shape is fine
}

TEST(Errors, DtypeRestrictions) {
  EXPECT_TC_ERROR(f32({3}).idiv(f32({3})), "Tensor.idiv", "float");
  EXPECT_TC_ERROR(i32({3}).idiv(f32({3})), "Tensor.idiv", "float");
  EXPECT_TC_ERROR(f32({3}).gt(1).idiv(f32({3}).gt(2)), "Tensor.idiv", "bool");
  EXPECT_TC_ERROR(f32({3}).cast(dt::float16).idiv(i32({3})), "Tensor.idiv", "half");
  Tensor b = f32({3}).gt(1);
  EXPECT_TC_ERROR(b.mod(b), "Tensor.mod", "bool");
}

TEST(Errors, Creation) {
  EXPECT_TC_ERROR(Tensor::arange(0, 5, 0), "arange");
  EXPECT_TC_ERROR(Tensor::eye(-1), "Tensor.eye", "-1");
  EXPECT_TC_ERROR(Tensor::eye(2, -3), "Tensor.eye", "-3");
  EXPECT_TC_ERROR(Tensor::full({2, -3}, 1.0), "Tensor.full", "(2, -3)");
  EXPECT_TC_ERROR(Tensor::zeros({-1}), "(-1,)");
  EXPECT_TC_ERROR(Tensor::empty({3, -2}), "Tensor.empty", "(3, -2)");
  EXPECT_TC_ERROR(f32({2, 3, 4}).flatten(2, 1), "Tensor.flatten", "2", "1");
}

TEST(Errors, TensorsStayUsableAfterAnError) {
  Tensor a = f32({2, 3});
  EXPECT_THROW(a.add(f32({4})), tc::Error);
  EXPECT_THROW(a.reshape({5}), tc::Error);
  EXPECT_THROW(a.sum(9), tc::Error);
  std::vector<float> got = (a + 1).sum(1).data<float>();
  EXPECT_EQ(got, (std::vector<float>{9, 18}));  // rows 1..3 and 4..6, plus one each
}

}  // namespace

namespace {

// Integer division by zero (a user's zero, or the zero a pad puts in a divisor lane) and
// INT_MIN / -1 trap on x86: kernels must not crash, and give 0 (x / 0, x % 0) or the wrapped
// -x (x / -1). uint64 values past INT64_MAX keep exact division results (no bounds folding).
TEST(IntegerDivision, ByZeroAndMinusOneDoNotCrash) {
  using tc::Tensor;
  Tensor a = Tensor::from_vector<int>({7, -7, INT32_MIN, 5}).realize();
  Tensor b = Tensor::from_vector<int>({0, 2, -1, 0}).realize();
  EXPECT_EQ(a.idiv(b).data<int>(), (std::vector<int>{0, -3, INT32_MIN, 0}));
  EXPECT_EQ(a.mod(b).data<int>()[0], 0);
  EXPECT_EQ(a.mod(b).data<int>()[2], 0);
  // a padded (gated) divisor: its pad lanes hold 0
  Tensor d = Tensor::from_vector<int>({2, 4}).realize();
  Tensor q = Tensor::from_vector<int>({8, 8, 8, 8}).realize().idiv(d.pad({{1, 1}}));
  EXPECT_EQ(q.data<int>(), (std::vector<int>{0, 4, 2, 0}));
  Tensor u = Tensor::from_vector<uint64_t>({uint64_t{1} << 63}).realize();
  Tensor big = Tensor::full({1}, int64_t{1} << 62, tc::dtypes::uint64);
  EXPECT_EQ(u.idiv(big).idiv(Tensor::full({1}, 2, tc::dtypes::uint64)).data<uint64_t>()[0], 1u);
}

// Found by tests/fuzz/tensor_fuzz.cc (program 966452416): a tensor's int32 wraps, so the index
// algebra may not move a constant across `<` where the sum or product wraps: x + INT_MIN < 0
// became x < 2^31 (always true), and abs(INT_MIN + 4) came out negative.
TEST(IntegerWrap, ComparisonsOfWrappingValuesAreNotRewritten) {
  Tensor x = Tensor::from_vector<int>({4, -4, 0, 100}).realize();
  Tensor low =
      x + Tensor::full({4}, INT32_MIN, dt::int32);  // -2147483644, 2147483644 (wrapped), ...
  EXPECT_EQ(low.abs().data<int>(),
            (std::vector<int>{2147483644, 2147483644, INT32_MIN, 2147483548}));
  EXPECT_EQ(low.lt(0).data<bool>(), (std::vector<bool>{true, false, true, true}));
  Tensor y = Tensor::from_vector<int>({1, 2, 3}).realize() * Tensor::full({3}, 1 << 30, dt::int32);
  EXPECT_EQ(y.lt(0).data<bool>(), (std::vector<bool>{false, true, true}));  // 2^30, -2^31, -2^30
}

// A broken invariant aborts, or throws where tc::throw_on_internal_check is set (the Python
// module sets it: a bug in tinycore raises RuntimeError there instead of killing the interpreter).
TEST(InternalCheck, AbortsOrThrowsNamingWhereAndWhat) {
  auto check = [](int n) { TC_CHECK(n > 0, "n is ", n); };
  EXPECT_DEATH(check(-1), "internal check failed: n > 0: n is -1");
  tc::throw_on_internal_check = true;
  EXPECT_THAT([&] { check(-2); }, ::testing::ThrowsMessage<tc::Error>(::testing::HasSubstr(
                                      "internal check failed: n > 0: n is -2")));
  tc::throw_on_internal_check = false;
  check(3);
}

}  // namespace
