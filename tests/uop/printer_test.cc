// The golden printer: one numbered node per line, stable across runs.
#include <gtest/gtest.h>

#include "tinycore/uop/printer.h"
#include "tinycore/uop/symbolic.h"

namespace tc {
namespace {

TEST(Printer, GoldenText) {
  UOpRef r = UOp::make(Ops::RANGE, dtypes::index, {index_const(4)}, int64_t{0});
  UOpRef g = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.as_ptr(), {}, std::vector<int64_t>{1, 16});
  UOpRef ld = UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, g->dtype, {g, r * 4 + 1})});
  std::string want =
      "0 DEFINE_GLOBAL float* [1,16]\n"
      "1 CONST index 4\n"
      "2 RANGE index (1) 0\n"
      "3 MUL index (2,1)\n"
      "4 CONST index 1\n"
      "5 ADD index (3,4)\n"
      "6 INDEX float* (0,5)\n"
      "7 LOAD float (6)\n";
  EXPECT_EQ(print_graph(ld), want);
}

TEST(Printer, RewriteGolden) {
  // ((r*4 + 3) // 4) simplifies to r: compared through the printer, as rewrite tests do
  UOpRef r = UOp::make(Ops::RANGE, dtypes::index, {index_const(8)}, int64_t{0});
  EXPECT_EQ(print_graph(simplify((r * 4 + 3) / 4)), "0 CONST index 8\n1 RANGE index (0) 0\n");
}

}  // namespace
}  // namespace tc
