// Tensor::einsum against PyTorch fixtures (tests/fixtures/gen_conv.py, values and gradients of
// sum(out * g)), naive loops and central differences; bad formulas throw.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tensor/fixture.h"
#include "tests/tensor/gradcheck.h"
#include "tests/tensor/reference.h"
#include "tinycore/engine/realize.h"
#include "tinycore/tensor.h"

namespace {

using tc::Tensor;
using tcref::NDArray;
using ::testing::HasSubstr;

// The fixture case einsum_<name>: operands x0, x1, ... in float32; tolerance rtol 1e-5 (sums of
// at most 15 float32 products), atol 1e-5.
void check_einsum(const std::string& name, const std::string& formula) {
  SCOPED_TRACE(name + ": " + formula);
  const tcfix::Case& c = tcfix::fixture("conv", "einsum_" + name);
  std::vector<Tensor> xs;
  for (int k = 0; c.has("x" + std::to_string(k)); k++)
    xs.push_back(c["x" + std::to_string(k)].tensor());
  Tensor out = Tensor::einsum(formula, xs);
  EXPECT_EQ(out.dtype(), tc::dtypes::float32);
  tcfix::expect_matches(out, c["out"], 1e-5, 1e-5);
  std::vector<Tensor> grads = out.mul(c["g"].tensor()).sum().gradient(xs);
  for (size_t k = 0; k < xs.size(); k++)
    tcfix::expect_matches(grads[k], c["grad_x" + std::to_string(k)], 1e-5, 1e-5);
}

TEST(Einsum, MatchesTorch) {
  check_einsum("matmul", "ij,jk->ik");
  check_einsum("matmul_implicit", "ij,jk");
  check_einsum("batched", "bij,bjk->bik");
  check_einsum("transpose", "ij->ji");
  check_einsum("outer", "i,j->ij");
  check_einsum("sum_all", "ijk->");
  check_einsum("three", "bn,anm,bm->ba");
  check_einsum("upper", "Ab,bC->CA");
  check_einsum("spaces", "i j , j k -> k i");
}

TEST(Einsum, RepeatedLettersTakeTheDiagonal) {
  check_einsum("diagonal", "ii->i");
  check_einsum("trace", "ii");
  check_einsum("repeat_mixed", "iij,jk->ik");
}

TEST(Einsum, EllipsisBroadcasts) {
  check_einsum("ellipsis", "...ij,...jk->...ik");
  check_einsum("ellipsis_implicit", "...ij,...jk");
  check_einsum("ellipsis_mid", "i...j,j->i...");
}

TEST(Einsum, NonContiguousIntegersAgainstLoops) {
  // a transposed int32 operand and an expanded one: "bij,jk->bki", exact
  NDArray a = tcref::random_int({2, 4, 3}, 1, -5, 5), b = tcref::random_int({1, 2}, 2, -5, 5);
  Tensor x = tcref::tensor(a, tc::dtypes::int32).transpose(1, 2);  // (2, 3, 4)
  Tensor y = tcref::tensor(b, tc::dtypes::int32).expand({4, 2});   // (4, 2)
  Tensor out = Tensor::einsum("bij,jk->bki", {x, y});
  EXPECT_EQ(out.dtype(), tc::dtypes::int32);
  NDArray want({2, 2, 3}, std::vector<double>(12, 0.0));
  for (int64_t bb = 0; bb < 2; bb++)
    for (int64_t k = 0; k < 2; k++)
      for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 4; j++)
          want.v[tcref::ravel({bb, k, i}, want.shape)] += a.at({bb, j, i}) * b.at({0, k});
  tcref::expect_exact(out, want);
  // the accumulation dtype: float64 sums of float32 products
  Tensor f = Tensor::einsum(
      "ij,jk->ik", {x.cast(tc::dtypes::float32).reshape({6, 4}), y.cast(tc::dtypes::float32)},
      tc::dtypes::float64);
  EXPECT_EQ(f.dtype(), tc::dtypes::float64);
}

TEST(Einsum, IsOneKernel) {
  Tensor a = tcref::tensor(tcref::random({3, 4, 5}, 3)),
         b = tcref::tensor(tcref::random({3, 5, 2}, 4));
  Tensor out = Tensor::einsum("bij,bjk->bik", {a, b});
  tc::engine::GlobalCounters::reset();
  out.realize();
  EXPECT_EQ(tc::engine::GlobalCounters::kernel_count, 1);
}

TEST(Einsum, GradientsByCentralDifferences) {
  tcgrad::check_grad(
      [](const std::vector<Tensor>& v) {
        return Tensor::einsum("iij,jk->ki", {v[0], v[1]});
      },
      {{{2, 2, 3}, tcgrad::mixed(12)}, {{3, 2}, tcgrad::ramp(6, -0.8, 0.3)}});
  tcgrad::check_grad(
      [](const std::vector<Tensor>& v) {
        return Tensor::einsum("...i,i->...", {v[0], v[1]});
      },
      {{{2, 1, 3}, tcgrad::mixed(6)}, {{3}, {0.5, -1.5, 2.0}}});
}

TEST(Einsum, BadFormulasThrow) {
  Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({3, 4});
  auto expect_error = [](auto f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "expected a tc::Error containing \"" << what << "\"";
    } catch (const tc::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  expect_error([&] { Tensor::einsum("ij,jk->ik", {a}); }, "has 2 inputs, got 1 operands");
  expect_error(
      [&] {
        Tensor::einsum("ijk,jk->ik", {a, b});
      },
      "subscripts \"ijk\" of \"ijk,jk->ik\" do not match operand 0 of shape (2, 3)");
  expect_error(
      [&] {
        Tensor::einsum("ij,ik->jk", {a, b});
      },
      "letter 'i' of \"ij,ik->jk\" has sizes 2 and 3");
  expect_error([&] { Tensor::einsum("ij,jk->iz", {a, b}); }, "output letter 'z'");
  expect_error([&] { Tensor::einsum("ij,jk->ii", {a, b}); }, "appears twice");
  expect_error([&] { Tensor::einsum("i1,jk", {a, b}); }, "invalid character '1'");
  expect_error(
      [&] {
        Tensor::einsum("...i,...i", {Tensor::zeros({2, 3}), Tensor::zeros({4, 3})});
      },
      "do not broadcast");
  expect_error([&] { Tensor::einsum("ii", {a}); }, "letter 'i' of \"ii\" has sizes 2 and 3");
}

}  // namespace
