// The symbolic simplifier: each rule against the expected graph, and a fuzz test that checks
// simplified index expressions evaluate exactly like the originals on every point.
#include "tinycore/uop/symbolic.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <random>

#include "tinycore/uop/printer.h"

namespace tc {
namespace {

UOpRef var(int64_t id, int64_t end) {
  return UOp::make(Ops::RANGE, dtypes::index, {index_const(end)}, id);
}
UOpRef c(int64_t v) { return index_const(v); }
UOpRef b(bool v) { return UOp::const_int(dtypes::bool_, v); }

void expect_simplifies(const UOpRef& in, const UOpRef& want) {
  UOpRef got = simplify(in);
  EXPECT_EQ(got.get(), want.get()) << "input:\n"
                                   << print_graph(in) << "got:\n"
                                   << print_graph(got) << "want:\n"
                                   << print_graph(want);
}

class Symbolic : public ::testing::Test {
 protected:
  UOpRef x = var(0, 8), y = var(1, 8), z = var(2, 16), w = var(3, 100);
};

// constant folding
TEST_F(Symbolic, LoopThatMayHaveNoTripKeepsItsIndex) {
  // a loop of 0 or 1 trips (a tile's rest): its index is 0 whenever its body runs, but folded to
  // 0 it would leave the body outside the loop, run once when the loop has no trip
  UOpRef r = UOp::make(Ops::RANGE, dtypes::index, {var(5, 2)}, 6);
  EXPECT_EQ(r->vmax(), 1);
  EXPECT_NE(simplify(r + 3)->op, Ops::CONST);
  expect_simplifies(var(7, 1) + 3, c(3));  // one trip always: its index is 0
}
TEST_F(Symbolic, FoldAdd) { expect_simplifies(c(2) + c(3), c(5)); }
TEST_F(Symbolic, FoldNested) { expect_simplifies((c(2) + c(3)) * c(4) / 3, c(6)); }
TEST_F(Symbolic, FoldFloat) {
  UOpRef f = alu(Ops::MUL, UOp::const_(dtypes::float32, 2.5), UOp::const_(dtypes::float32, 2));
  expect_simplifies(f, UOp::const_(dtypes::float32, 5));
}
TEST_F(Symbolic, FoldWrapsInt8) {
  UOpRef s = alu(Ops::ADD, UOp::const_int(dtypes::int8, 100), UOp::const_int(dtypes::int8, 100));
  expect_simplifies(s, UOp::const_int(dtypes::int8, -56));
}
TEST_F(Symbolic, FoldUnsignedWraps) {
  UOpRef s = alu(Ops::SUB, UOp::const_int(dtypes::uint32, 3), UOp::const_int(dtypes::uint32, 5));
  expect_simplifies(s, UOp::const_int(dtypes::uint32, 4294967294LL));
}
TEST_F(Symbolic, FoldTruncatingDivision) { expect_simplifies(c(-7) / 2, c(-3)); }
TEST_F(Symbolic, FoldCModulo) { expect_simplifies(c(-7) % 3, c(-1)); }
TEST_F(Symbolic, NoFoldDivisionByZero) {
  UOpRef e = alu(Ops::IDIV, c(4), c(0));
  expect_simplifies(e, e);
}
TEST_F(Symbolic, FoldComparison) { expect_simplifies(lt(c(3), 4), b(true)); }
TEST_F(Symbolic, FoldCast) {
  expect_simplifies(UOp::make(Ops::CAST, dtypes::int32, {UOp::const_(dtypes::float32, -2.7)}),
                    UOp::const_int(dtypes::int32, -2));
}

// identities
TEST_F(Symbolic, AddZero) { expect_simplifies(x + 0, x); }
TEST_F(Symbolic, ZeroAdd) { expect_simplifies(UOp::make(Ops::ADD, dtypes::index, {c(0), x}), x); }
TEST_F(Symbolic, MulOne) { expect_simplifies(x * 1, x); }
TEST_F(Symbolic, MulZero) { expect_simplifies(x * 0, c(0)); }
TEST_F(Symbolic, DivOne) { expect_simplifies(x / 1, x); }
TEST_F(Symbolic, ModOne) { expect_simplifies(x % 1, c(0)); }
TEST_F(Symbolic, ConstantGoesRight) {
  expect_simplifies(UOp::make(Ops::ADD, dtypes::index, {c(3), x}), x + 3);
}
TEST_F(Symbolic, FloatMulZeroKept) {  // NaN * 0 is NaN: no folding for floats
  UOpRef f = UOp::make(Ops::LOAD, dtypes::float32, {x});
  UOpRef e = alu(Ops::MUL, f, UOp::const_(dtypes::float32, 0));
  expect_simplifies(e, e);
}

// sums in normal form
TEST_F(Symbolic, AddConstants) { expect_simplifies((x + 2) + 3, x + 5); }
TEST_F(Symbolic, MulConstants) { expect_simplifies((x * 2) * 3, x * 6); }
TEST_F(Symbolic, LikeTerms) { expect_simplifies(x + x, x * 2); }
TEST_F(Symbolic, Cancel) { expect_simplifies(x - x, c(0)); }
TEST_F(Symbolic, MergeCoefficients) { expect_simplifies(x * 2 + y + x * 3, x * 5 + y); }
TEST_F(Symbolic, Distribute) { expect_simplifies((x + 2) * 3, x * 3 + 6); }
TEST_F(Symbolic, CancelAcrossChain) { expect_simplifies((x + y + 4) - (y + 1), x + 3); }

// division and modulo
TEST_F(Symbolic, MulDivSame) { expect_simplifies((x * 4) / 4, x); }
TEST_F(Symbolic, MulModSame) { expect_simplifies((x * 4) % 4, c(0)); }
TEST_F(Symbolic, DivDiv) { expect_simplifies((w / 2) / 3, w / 6); }
TEST_F(Symbolic, DivSmall) { expect_simplifies(x / 8, c(0)); }
TEST_F(Symbolic, ModSmall) { expect_simplifies(x % 8, x); }
TEST_F(Symbolic, ModLargeKept) { expect_simplifies(z % 8, z % 8); }
TEST_F(Symbolic, DivOfSum) { expect_simplifies((x * 8 + y) / 8, x); }
TEST_F(Symbolic, ModOfSum) { expect_simplifies((x * 8 + y) % 8, y); }
TEST_F(Symbolic, DivOfSumKeepsRemainder) { expect_simplifies((x * 16 + z) / 8, x * 2 + z / 8); }
TEST_F(Symbolic, ModOfSumDropsMultiples) { expect_simplifies((x * 16 + z) % 8, z % 8); }
TEST_F(Symbolic, DivOfSumWithConstant) { expect_simplifies((x * 8 + 13) / 8, x + 1); }
TEST_F(Symbolic, ModOfSumWithConstant) { expect_simplifies((x * 8 + 13) % 8, c(5)); }
TEST_F(Symbolic, ModMod) { expect_simplifies((w % 12) % 4, w % 4); }
TEST_F(Symbolic, ModDiv) { expect_simplifies((w % 12) / 4, (w / 4) % 3); }
TEST_F(Symbolic, DivModRecombine) { expect_simplifies((w / 4) * 4 + w % 4, w); }
TEST_F(Symbolic, DivModRecombineScaled) { expect_simplifies((w / 4) * 12 + (w % 4) * 3, w * 3); }
// a flatten of (.., 3, 3) splits w into w//9, w//3%3, w%3: (w//9)*9 + (w//3%3)*3 is (w//3)*3
TEST_F(Symbolic, DivModRecombineNested) {
  expect_simplifies((w / 9) * 9 + ((w / 3) % 3) * 3 + w % 3, w);
  expect_simplifies((w / 8) * 16 + ((w / 2) % 4) * 4, (w / 2) * 4);
}
// a row of 20 split into halves of 10 (a 2x2 pool's window): (20*y + r) // 40 with r < 20 is y //
// 2, and then the split index recombines: (y//2)*40 + (y%2)*20 + r is 20*y + r
TEST_F(Symbolic, DivByACommonFactor) {
  UOpRef row = var(4, 20), col = var(5, 5), lane = var(6, 4);
  UOpRef r = col * 4 + lane, flat = row * 20 + r;
  expect_simplifies(flat / 40, row / 2);
  expect_simplifies(flat % 40, (row % 2) * 20 + col * 4 + lane);
  expect_simplifies((flat / 40) * 40 + (row % 2) * 20 + r, row * 20 + col * 4 + lane);
  // every coefficient shares 5 with 40: the division by 5 is exact
  expect_simplifies((row * 20 + col * 5) / 40, (row * 4 + col) / 8);
  UOpRef e = (row * 20 + col * 7) / 40;  // the rest 7*col reaches 20: no common factor applies
  expect_simplifies(e, e);
}
TEST_F(Symbolic, NegativeNotFolded) {  // x - 4 may be negative: // does not distribute
  UOpRef e = (x + -4) / 3;
  expect_simplifies(e, e);
}
TEST_F(Symbolic, ReshapeRoundTrip) {
  // (i0, i1) of shape (2, 12) viewed as (4, 6) and back: the index is i0*12 + i1 again
  UOpRef i0 = var(0, 2), i1 = var(1, 12);
  UOpRef lin = i0 * 12 + i1;
  UOpRef a = lin / 6, bb = lin % 6;
  expect_simplifies(a * 6 + bb, i0 * 12 + i1);
}

// comparisons and bounds
TEST_F(Symbolic, AlwaysTrue) { expect_simplifies(lt(x, 10), b(true)); }
TEST_F(Symbolic, AlwaysFalse) { expect_simplifies(lt(x, 0), b(false)); }
TEST_F(Symbolic, GeFolded) { expect_simplifies(ge(x, 0), b(true)); }
TEST_F(Symbolic, LtMovesConstant) { expect_simplifies(lt(x + 3, 5), lt(x, 2)); }
TEST_F(Symbolic, LtDividesCoefficient) { expect_simplifies(lt(x * 4, 10), lt(x, 3)); }
TEST_F(Symbolic, LtOfDivision) { expect_simplifies(lt(w / 4, 3), lt(w, 12)); }
TEST_F(Symbolic, MaxByBounds) {
  expect_simplifies(alu(Ops::MAX, x, c(0)), x);
  expect_simplifies(alu(Ops::MAX, x, c(10)), c(10));
}

// select and logic
TEST_F(Symbolic, WhereTrue) { expect_simplifies(where(b(true), x, y), x); }
TEST_F(Symbolic, WhereFalse) { expect_simplifies(where(b(false), x, y), y); }
TEST_F(Symbolic, WhereSame) { expect_simplifies(where(lt(x, 3), y, y), y); }
TEST_F(Symbolic, ComplementaryWheresOfZeroAreOneWhere) {  // a cat's two padded halves
  UOpRef on = lt(x, 3), off = UOp::make(Ops::CMPNE, dtypes::bool_, {on, b(true)});
  expect_simplifies(where(on, y, c(0)) + where(off, z, c(0)), where(on, y, z));
  expect_simplifies(where(off, z, c(0)) + where(on, y, c(0)), where(on, y, z));
  expect_simplifies(where(on, y, c(0)) + where(lt(x, 4), z, c(0)),  // overlapping: kept
                    where(on, y, c(0)) + where(lt(x, 4), z, c(0)));
}
TEST_F(Symbolic, AndTrue) { expect_simplifies(logical_and(lt(x, 3), b(true)), lt(x, 3)); }
TEST_F(Symbolic, AndFalse) { expect_simplifies(logical_and(lt(x, 3), b(false)), b(false)); }
TEST_F(Symbolic, OrFalse) { expect_simplifies(alu(Ops::OR, lt(x, 3), b(false)), lt(x, 3)); }
TEST_F(Symbolic, DoubleNot) {
  UOpRef p = lt(x, 3);
  expect_simplifies(alu(Ops::CMPNE, alu(Ops::CMPNE, p, b(true)), b(true)), p);
}
TEST_F(Symbolic, CastToSameType) { expect_simplifies(UOp::make(Ops::CAST, dtypes::index, {x}), x); }
TEST_F(Symbolic, PadGateFolds) {
  // the gate of a pad of 1 on each side, read at x+1 for x in [0, 8): always inside
  UOpRef i = x + 1;
  expect_simplifies(logical_and(ge(i, 1), lt(i, 9)), b(true));
}

// ---- fuzz: random index expressions keep their value under simplification

int64_t eval(const UOp* u, const std::map<const UOp*, int64_t>& env) {
  auto s = [&](int i) { return eval(u->src[i].get(), env); };
  switch (u->op) {
    case Ops::CONST:
      return u->arg_int();
    case Ops::RANGE:
      return env.at(u);
    case Ops::ADD:
      return s(0) + s(1);
    case Ops::MUL:
      return s(0) * s(1);
    case Ops::IDIV:
      return s(0) / s(1);
    case Ops::MOD:
      return s(0) % s(1);
    case Ops::MAX:
      return std::max(s(0), s(1));
    case Ops::CMPLT:
      return s(0) < s(1);
    case Ops::CMPNE:
      return s(0) != s(1);
    case Ops::AND:
      return s(0) & s(1);
    case Ops::WHERE:
      return s(0) ? s(1) : s(2);
    default:
      ADD_FAILURE() << "unexpected op " << op_name(u->op);
      return 0;
  }
}

TEST(SymbolicFuzz, SimplifiedExpressionsEvaluateTheSame) {
  std::mt19937 rng(1234);
  std::vector<UOpRef> vars = {var(0, 5), var(1, 7), var(2, 12)};
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  std::function<UOpRef(int)> gen = [&](int depth) -> UOpRef {
    if (depth == 0 || pick(4) == 0) return pick(3) ? vars[pick(3)] : c(pick(9));
    switch (pick(6)) {
      case 0:
        return gen(depth - 1) + gen(depth - 1);
      case 1:
        return gen(depth - 1) * (pick(5) + 1);
      case 2:
        return gen(depth - 1) / (pick(6) + 1);
      case 3:
        return gen(depth - 1) % (pick(6) + 1);
      case 4:
        return gen(depth - 1) + (pick(7) - 3);
      default:
        return where(lt(gen(depth - 1), pick(10)), gen(depth - 1), gen(depth - 1));
    }
  };
  int simplified = 0;
  for (int trial = 0; trial < 400; trial++) {
    UOpRef e = gen(4);
    UOpRef s = simplify(e);
    if (s != e) simplified++;
    for (int a = 0; a < 5; a++)
      for (int bb = 0; bb < 7; bb++)
        for (int cc = 0; cc < 12; cc++) {
          std::map<const UOp*, int64_t> env = {
              {vars[0].get(), a}, {vars[1].get(), bb}, {vars[2].get(), cc}};
          ASSERT_EQ(eval(e.get(), env), eval(s.get(), env))
              << "at (" << a << "," << bb << "," << cc << ")\n"
              << print_graph(e) << "simplified to\n"
              << print_graph(s);
        }
  }
  EXPECT_GT(simplified, 200);  // the simplifier did real work
}

// A number summed from its bits, where(x//2^b % 2 >= 1, 2^b, 0) in uint32 (Tensor.rand's counter
// made by binary_iota), simplifies to the index cast: the bits are x//2^b % 2, the casts move out
// of the sum where no value wraps, and the index sum recombines. A where whose x may reach 2c is
// kept (x//c could be 2 there).
TEST_F(Symbolic, SumOfBitsIsTheIndex) {
  auto bit = [&](const UOpRef& v, int64_t k) {
    UOpRef ge = UOp::make(Ops::CMPNE, dtypes::bool_, {lt(v / (int64_t{1} << k) % 2, 1), b(true)});
    return UOp::make(
        Ops::WHERE, dtypes::uint32,
        {ge, UOp::const_int(dtypes::uint32, int64_t{1} << k), UOp::const_int(dtypes::uint32, 0)});
  };
  UOpRef sum = bit(w, 0);
  for (int64_t k = 1; k < 7; k++) sum = UOp::make(Ops::ADD, dtypes::uint32, {sum, bit(w, k)});
  expect_simplifies(sum, UOp::make(Ops::CAST, dtypes::uint32, {w}));
  UOpRef ge4 = UOp::make(Ops::CMPNE, dtypes::bool_, {lt(x, 4), b(true)});  // x in [0, 8)
  UOpRef kept =
      UOp::make(Ops::WHERE, dtypes::int32,
                {ge4, UOp::const_int(dtypes::int32, 3), UOp::const_int(dtypes::int32, 0)});
  UOpRef ge3 = UOp::make(Ops::CMPNE, dtypes::bool_, {lt(x, 3), b(true)});  // x may be 6 >= 2*3
  UOpRef wide =
      UOp::make(Ops::WHERE, dtypes::int32,
                {ge3, UOp::const_int(dtypes::int32, 3), UOp::const_int(dtypes::int32, 0)});
  expect_simplifies(kept, UOp::make(Ops::CAST, dtypes::int32, {x / 4 * 3}));
  EXPECT_EQ(simplify(wide)->op, Ops::WHERE) << print_graph(simplify(wide));
}

// lane_offsets splits an index into the part that does not depend on the lanes and one number
// per lane: an upsample (x*4 + lane) // 2 reads 0,0,1,1 past 2x; a transpose's lanes are a row
// apart; a lane term that also uses a loop has no per-lane number.
TEST_F(Symbolic, LaneOffsets) {
  UOpRef lane = UOp::make(Ops::LANE, dtypes::index, {c(4)});
  std::optional<LaneOffsets> up = lane_offsets(simplify((x * 4 + lane) / 2 + y * 16), lane, 4);
  ASSERT_TRUE(up);
  EXPECT_EQ(up->base.get(), simplify(x * 2 + y * 16).get()) << print_graph(up->base);
  EXPECT_EQ(up->offsets, (std::vector<int64_t>{0, 0, 1, 1}));
  std::optional<LaneOffsets> rows = lane_offsets(simplify(lane * 576 + x + 3), lane, 4);
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->base.get(), simplify(x + 3).get());
  EXPECT_EQ(rows->offsets, (std::vector<int64_t>{0, 576, 1152, 1728}));
  EXPECT_FALSE(lane_offsets(simplify(lane * 576 + x + 3), lane, 4, 7));  // farther apart than 7
  EXPECT_TRUE(lane_offsets(simplify((x * 4 + lane) / 2 + y * 16), lane, 4, 7));
  std::optional<LaneOffsets> flip = lane_offsets(simplify(c(3) - lane + x * 4), lane, 4);
  ASSERT_TRUE(flip);
  EXPECT_EQ(flip->offsets, (std::vector<int64_t>{0, -1, -2, -3}));  // from 3 + 4x
  EXPECT_FALSE(lane_offsets(simplify((lane + z) % 8), lane, 4));
}

}  // namespace
}  // namespace tc
