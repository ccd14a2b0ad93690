// The UOp spec (uop/spec.h): each rule of its table refuses the node it is about and passes a
// valid one; UOp::make refuses a node that breaks it (the suites run with SPEC=1).
#include "tinycore/uop/spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/error_message.h"
#include "tinycore/error.h"

namespace tc {
namespace {

using ::testing::HasSubstr;

UOpRef buffer(DType d, Shape shape) {
  UOpRef b = UOp::make(Ops::BUFFER, d, {}, std::vector<int64_t>{0, shape_numel(shape)});
  return UOp::make(Ops::RESHAPE, d, {b}, shape);
}

std::string why(Ops op, DType d, std::vector<UOpRef> src, Arg arg = {}) {
  return spec_violation(op, d, src, arg);
}

TEST(Spec, ValidNodesPass) {
  UOpRef x = buffer(dtypes::float32, {2, 3});
  EXPECT_EQ(why(Ops::CONST, dtypes::float32, {}, 1.5), "");
  EXPECT_EQ(why(Ops::CONST, dtypes::int32, {}, int64_t{4}), "");
  EXPECT_EQ(why(Ops::ADD, dtypes::float32, {x, x}), "");
  EXPECT_EQ(why(Ops::CMPLT, dtypes::bool_, {x, x}), "");
  EXPECT_EQ(why(Ops::PERMUTE, dtypes::float32, {x}, std::vector<int64_t>{1, 0}), "");
  EXPECT_EQ(why(Ops::RESHAPE, dtypes::float32, {x}, std::vector<int64_t>{3, 2}), "");
  EXPECT_EQ(why(Ops::EXPAND, dtypes::float32, {buffer(dtypes::float32, {1, 3})},
                std::vector<int64_t>{4, 3}),
            "");
  EXPECT_EQ(why(Ops::SHRINK, dtypes::float32, {x}, std::vector<int64_t>{0, 2, 1, 3}), "");
  EXPECT_EQ(why(Ops::REDUCE_AXIS, dtypes::float32, {x},
                std::vector<int64_t>{static_cast<int64_t>(Ops::MAX), 1}),
            "");
  EXPECT_EQ(why(Ops::CAST, dtypes::int8, {x}), "");
  EXPECT_EQ(why(Ops::SINK, dtypes::void_, {x}), "");
}

TEST(Spec, EachRuleRefusesItsCase) {
  UOpRef x = buffer(dtypes::float32, {2, 3});
  UOpRef i = buffer(dtypes::int32, {2, 3});
  auto ints = [](std::vector<int64_t> v) { return Arg(std::move(v)); };
  EXPECT_EQ(why(Ops::NEG, dtypes::float32, {x, x}), "it takes 1 sources, not 2");
  EXPECT_EQ(why(Ops::RANGE, dtypes::index, {}, int64_t{0}), "it takes 1 or more sources, not 0");
  EXPECT_EQ(why(Ops::CONST, dtypes::float32, {}, ints({1})), "its argument is of the wrong kind");
  EXPECT_EQ(why(Ops::PERMUTE, dtypes::float32, {x}, int64_t{1}),
            "its argument is of the wrong kind");
  EXPECT_EQ(why(Ops::SINK, dtypes::float32, {x}), "its dtype must be void");
  EXPECT_EQ(why(Ops::SQRT, dtypes::float64, {x}), "its dtype must be its source's");
  EXPECT_EQ(why(Ops::ADD, dtypes::float32, {x, i}), "its dtype must be each source's");
  EXPECT_EQ(why(Ops::CMPLT, dtypes::float32, {x, x}), "a comparison's dtype must be bool");
  EXPECT_EQ(why(Ops::CMPNE, dtypes::bool_, {x, i}), "its sources must be of one dtype");
  EXPECT_EQ(why(Ops::WHERE, dtypes::float32, {x, x, x}), "its condition must be bool");
  EXPECT_EQ(why(Ops::RESHAPE, dtypes::float32, {x}, ints({4, 2})),
            "the number of elements changes");
  EXPECT_EQ(why(Ops::RESHAPE, dtypes::float32, {x}, ints({-2, -3})), "a dimension is negative");
  EXPECT_EQ(why(Ops::EXPAND, dtypes::float32, {x}, ints({4, 3})),
            "a dimension other than 1 changes");
  EXPECT_EQ(why(Ops::EXPAND, dtypes::float32, {x}, ints({1, 2, 3})), "the rank changes");
  EXPECT_EQ(why(Ops::PERMUTE, dtypes::float32, {x}, ints({0, 0})),
            "the order is not a permutation");
  EXPECT_EQ(why(Ops::PERMUTE, dtypes::float32, {x}, ints({1, 2})),
            "the order is not a permutation");
  EXPECT_EQ(why(Ops::PERMUTE, dtypes::float32, {x}, ints({0})),
            "the order's length is not the rank");
  EXPECT_EQ(why(Ops::PAD, dtypes::float32, {x}, ints({0, 1})), "it needs two numbers a dimension");
  EXPECT_EQ(why(Ops::PAD, dtypes::float32, {x}, ints({0, 0, -1, 0})),
            "dimension 1 (3) cannot take (-1, 0)");
  EXPECT_EQ(why(Ops::SHRINK, dtypes::float32, {x}, ints({0, 2, 2, 4})),
            "dimension 1 (3) cannot take (2, 4)");
  EXPECT_EQ(why(Ops::FLIP, dtypes::float32, {x}, ints({2})), "an axis is out of range");
  EXPECT_EQ(why(Ops::REDUCE_AXIS, dtypes::float32, {x}, ints({static_cast<int64_t>(Ops::SUB), 0})),
            "the reduce op is not ADD/MUL/MAX");
  EXPECT_EQ(why(Ops::REDUCE_AXIS, dtypes::float32, {x}, ints({static_cast<int64_t>(Ops::ADD), -1})),
            "an axis is out of range");
}

// UOp::make checks every new node (the suites run with SPEC=1): a node that breaks the spec is a
// failed internal check naming it, before UOp::infer could read a malformed argument.
TEST(Spec, MakeRefusesABrokenNode) {
  ASSERT_TRUE(spec_enabled());
  bool was = throw_on_internal_check.exchange(true);
  UOpRef x = buffer(dtypes::float32, {2, 3});
  std::string message = error_message([&] {
    UOp::make(Ops::PERMUTE, dtypes::float32, {x}, std::vector<int64_t>{0, 5});
  });
  throw_on_internal_check = was;
  EXPECT_THAT(message, HasSubstr("UOp spec: PERMUTE float of (RESHAPE float) arg [0,5]"));
  EXPECT_THAT(message, HasSubstr("the order is not a permutation"));
}

}  // namespace
}  // namespace tc
