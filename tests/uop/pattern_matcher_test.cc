// UPat matching (captures, commutative, any-of, dtypes) and graph_rewrite (fixed point, memo).
#include "tinycore/uop/pattern_matcher.h"

#include <gtest/gtest.h>

namespace tc {
namespace {

UOpRef range(int64_t id, int64_t end) {
  return UOp::make(Ops::RANGE, dtypes::index, {index_const(end)}, id);
}

TEST(UPat, NamedCaptures) {
  UOpRef x = range(0, 8);
  Captures c;
  ASSERT_TRUE(match(UPat::var("x") + UPat::cvar("c"), x + 3, c));
  EXPECT_EQ(c["x"].get(), x.get());
  EXPECT_EQ(c["c"]->arg_int(), 3);
}

TEST(UPat, CommutativeMatchesEitherOrder) {
  UOpRef x = range(0, 8);
  UOpRef swapped = UOp::make(Ops::ADD, dtypes::index, {index_const(3), x});
  Captures c;
  ASSERT_TRUE(match(UPat::var("x") + UPat::cvar("c"), swapped, c));
  EXPECT_EQ(c["x"].get(), x.get());
  // IDIV is not commutative
  Captures d;
  UOpRef div_swapped = UOp::make(Ops::IDIV, dtypes::index, {index_const(3), x});
  EXPECT_FALSE(match(UPat::var("x") / UPat::cvar("c"), div_swapped, d));
  EXPECT_EQ(d.size(), 0u);  // a failed match binds nothing
}

TEST(UPat, SameNameMustBeSameNode) {
  UOpRef x = range(0, 8), y = range(1, 8);
  Captures c;
  EXPECT_TRUE(match(UPat::var("x") + UPat::var("x"), x + x, c));
  Captures d;
  EXPECT_FALSE(match(UPat::var("x") + UPat::var("x"), x + y, d));
}

TEST(UPat, AnyOf) {
  UOpRef x = range(0, 8);
  UPat p = UPat::any({UPat::var("x") * 1, UPat::var("x") + 0});
  Captures a, b, c;
  EXPECT_TRUE(match(p, x * 1, a));
  EXPECT_TRUE(match(p, x + 0, b));
  EXPECT_FALSE(match(p, x + 1, c));
  EXPECT_EQ(a["x"].get(), x.get());
}

TEST(UPat, DtypeAndValueFilters) {
  UOpRef f = UOp::const_(dtypes::float32, 2.0), i = UOp::const_(dtypes::int32, 2);
  Captures c;
  EXPECT_TRUE(match(UPat::cvar("c").dtype({dtypes::float32}), f, c));
  Captures d;
  EXPECT_FALSE(match(UPat::cvar("c").dtype({dtypes::float32}), i, d));
  Captures e;
  EXPECT_TRUE(match(UPat::cnst(2), i, e));
  Captures g;
  EXPECT_FALSE(match(UPat::cnst(3), i, g));
}

TEST(PatternMatcher, RulesAreIndexedByOp) {
  int mul_calls = 0;
  PatternMatcher pm({{UPat::op(Ops::MUL).no_src_check().named("m"), [&](const Captures&) -> UOpRef {
                        mul_calls++;
                        return nullptr;
                      }}});
  UOpRef x = range(0, 8);
  graph_rewrite((x + 1) + 2, pm, "test");
  EXPECT_EQ(mul_calls, 0);
  graph_rewrite(x * 2, pm, "test");
  EXPECT_EQ(mul_calls, 1);
}

TEST(PatternMatcher, RewritesToAFixedPoint) {
  // a chain of rules: x+1 -> x*2 -> x*3 ... stops at x*3
  PatternMatcher pm({
      {UPat::var("x") + 1, [](const Captures& c) { return c["x"] * 2; }},
      {UPat::var("x") * 2, [](const Captures& c) { return c["x"] * 3; }},
  });
  UOpRef x = range(0, 8);
  EXPECT_EQ(graph_rewrite(x + 1, pm, "test").get(), (x * 3).get());
  // rewriting applies below too, and to what a rule creates: (x+1)+1 -> (x*3)+1 -> (x*3)*3
  EXPECT_EQ(graph_rewrite((x + 1) + 1, pm, "test").get(), ((x * 3) * 3).get());
}

TEST(PatternMatcher, SharedNodesAreRewrittenOnce) {
  int calls = 0;
  PatternMatcher pm({{UPat::var("x") + 1, [&](const Captures& c) {
                        calls++;
                        return c["x"] * 5;
                      }}});
  UOpRef x = range(0, 8);
  UOpRef shared = x + 1;
  UOpRef out = graph_rewrite(shared * shared + shared, pm, "test");
  EXPECT_EQ(calls, 1);
  UOpRef want = (x * 5) * (x * 5) + (x * 5);
  EXPECT_EQ(out.get(), want.get());
}

TEST(PatternMatcher, CombinedTablesKeepOrder) {
  PatternMatcher a({{UPat::var("x") + 1, [](const Captures& c) { return c["x"] * 7; }}});
  PatternMatcher b({{UPat::var("x") + 1, [](const Captures& c) { return c["x"] * 9; }}});
  UOpRef x = range(0, 8);
  EXPECT_EQ((a + b).rewrite(x + 1).get(), (x * 7).get());
  EXPECT_EQ((b + a).rewrite(x + 1).get(), (x * 9).get());
  EXPECT_EQ((a + b).size(), 2u);
}

}  // namespace
}  // namespace tc
