// Autograd's Tensor API: backward() filling and accumulating .grad, detach, NoGrad, gradient() of
// unrelated targets, errors, parameters realized before (or after) the forward graph was built, and
// compute_gradient directly. (Each op's gradient rule: gradient_test.cc.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/tensor/gradcheck.h"
#include "tinycore/error.h"
#include "tinycore/gradient.h"
#include "tinycore/tensor.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;
namespace dt = tc::dtypes;
using S = std::vector<int64_t>;
using V = std::vector<double>;
using tcgrad::expect_near_all;
using tcgrad::f64;
using tcgrad::matmul_by_sum;

// ================================================================== Tensor API

TEST(GradApi, RequiresGradFlag) {
  Tensor x = f64({1, 2}, {2});
  EXPECT_FALSE(x.requires_grad());
  EXPECT_FALSE(x.grad().has_value());
  Tensor copy = x;
  x.requires_grad_();
  EXPECT_TRUE(copy.requires_grad());         // a handle: copies share the flag
  EXPECT_FALSE(x.mul(2.0).requires_grad());  // not propagated to results
  x.requires_grad_(false);
  x.mul(x).sum().backward();
  EXPECT_FALSE(x.grad().has_value());
}

TEST(GradApi, OnlyRequiresGradTensorsGetGrad) {
  Tensor a = f64({1, 2}, {2}).requires_grad_();
  Tensor b = f64({3, 4}, {2});
  Tensor h = a.mul(b);
  h.sum().backward();
  EXPECT_EQ(a.grad()->data<double>(), (V{3, 4}));
  EXPECT_FALSE(b.grad().has_value());
  EXPECT_FALSE(h.grad().has_value());
}

TEST(GradApi, BackwardAccumulates) {
  Tensor x = f64({1, -2, 3}, {3}).requires_grad_();
  x.square().sum().backward();
  Tensor first = *x.grad();
  EXPECT_EQ(first.data<double>(), (V{2, -4, 6}));
  x.square().sum().backward();
  EXPECT_EQ(x.grad()->data<double>(), (V{4, -8, 12}));
  EXPECT_EQ(first.data<double>(), (V{4, -8, 12}));  // the grad handle is updated in place
  x.mul(10.0).sum().backward();
  EXPECT_EQ(x.grad()->data<double>(), (V{14, 2, 22}));
  x.set_grad({});  // zero_grad
  EXPECT_FALSE(x.grad().has_value());
  x.sum().backward();
  EXPECT_EQ(x.grad()->data<double>(), (V{1, 1, 1}));
}

TEST(GradApi, AccumulatesOntoARealizedGrad) {
  Tensor x = f64({1, 2}, {2}).requires_grad_();
  x.mul(3.0).sum().backward();
  x.grad()->realize();
  x.mul(3.0).sum().backward();
  EXPECT_EQ(x.grad()->data<double>(), (V{6, 6}));
}

TEST(GradApi, GradIsLazyAndRealizable) {
  Tensor x = f64({1, 2, 3}, {3}).requires_grad_();
  x.exp().sum().backward();
  Tensor g = *x.grad();
  EXPECT_NE(g.uop()->op, tc::Ops::BUFFER);
  EXPECT_NE(g.uop()->op, tc::Ops::RESHAPE);  // a graph, not a buffer view
  g.realize();
  EXPECT_TRUE(x.grad()->uop()->op == tc::Ops::BUFFER || x.grad()->uop()->op == tc::Ops::RESHAPE);
  expect_near_all(x.grad()->data<double>(), {std::exp(1.0), std::exp(2.0), std::exp(3.0)}, "exp");
}

TEST(GradApi, DetachStopsTheGradient) {
  Tensor x = f64({1, 2, 3}, {3}).requires_grad_();
  Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.data<double>(), (V{1, 2, 3}));
  EXPECT_EQ(d.dtype(), dt::float64);
  x.mul(d).sum().backward();  // d/dx (x * const) = const
  EXPECT_EQ(x.grad()->data<double>(), (V{1, 2, 3}));
  // only through detach: zeros (a graph that holds y gives y a grad, as tinygrad)
  Tensor y = f64({1, 2}, {2}).requires_grad_();
  Tensor loss = y.detach().square().sum();
  EXPECT_EQ(loss.gradient({y})[0].data<double>(), (V{0, 0}));
  loss.backward();
  ASSERT_TRUE(y.grad().has_value());
  EXPECT_EQ(y.grad()->data<double>(), (V{0, 0}));
  // a detached tensor can itself be a leaf
  Tensor z = x.mul(2.0).detach().requires_grad_();
  z.square().sum().backward();
  EXPECT_EQ(z.grad()->data<double>(), (V{4, 8, 12}));
  EXPECT_EQ(x.grad()->data<double>(), (V{1, 2, 3}));  // unchanged
}

TEST(GradApi, NonScalarBackwardNeedsAGradient) {
  Tensor x = f64({1, 2, 3}, {3}).requires_grad_();
  Tensor y = x.mul(2.0);
  try {
    y.backward();
    FAIL() << "no tc::Error";
  } catch (const tc::Error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("backward must be called on a scalar tensor"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("(3,)"));
  }
  EXPECT_THROW(y.gradient({x}), tc::Error);
  // with an explicit gradient it works
  y.backward(f64({1, 2, 3}, {3}));
  EXPECT_EQ(x.grad()->data<double>(), (V{2, 4, 6}));
  // a gradient of the wrong shape is an error
  try {
    y.backward(f64({1, 2}, {2}));
    FAIL() << "no tc::Error";
  } catch (const tc::Error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("does not match"));
  }
}

TEST(GradApi, OnlyFloatTensorsHaveGradient) {
  Tensor i = Tensor::from_vector<int32_t>({1, 2}, S{2});
  Tensor x = f64({1, 2}, {2});
  EXPECT_THROW(i.sum().backward(), tc::Error);
  EXPECT_THROW(x.sum().gradient({i}), tc::Error);
  // an int requires_grad tensor in the graph is skipped by backward
  i.requires_grad_();
  x.requires_grad_();
  x.mul(i).sum().backward();
  EXPECT_FALSE(i.grad().has_value());
  EXPECT_EQ(x.grad()->data<double>(), (V{1, 2}));
}

TEST(GradApi, GradientOfUnrelatedTargetIsZeros) {
  Tensor x = f64({1, 2}, {2});
  Tensor other = f64({5, 6, 7, 8}, {2, 2});
  std::vector<Tensor> g = x.square().sum().gradient({x, other});
  EXPECT_EQ(g[0].data<double>(), (V{2, 4}));
  EXPECT_EQ(g[1].shape(), (S{2, 2}));
  EXPECT_EQ(g[1].dtype(), dt::float64);
  EXPECT_EQ(g[1].data<double>(), (V{0, 0, 0, 0}));
  // backward leaves an unrelated parameter's grad unset
  other.requires_grad_();
  x.requires_grad_();
  x.sum().backward();
  EXPECT_FALSE(other.grad().has_value());
}

TEST(GradApi, GradientOfIntermediateAndSelf) {
  Tensor x = f64({1, 2}, {2});
  Tensor h = x.mul(3.0);
  Tensor loss = h.square().sum();
  std::vector<Tensor> g = loss.gradient({h, x, loss});
  EXPECT_EQ(g[0].data<double>(), (V{6, 12}));
  EXPECT_EQ(g[1].data<double>(), (V{18, 36}));
  EXPECT_EQ(g[2].data<double>(), (V{1}));
}

TEST(GradApi, SecondOrderGradient) {
  Tensor x = f64({1, -2, 0.5}, {3});
  Tensor dx = x.mul(x).mul(x).sum().gradient({x})[0];  // 3x^2
  expect_near_all(dx.data<double>(), {3, 12, 0.75}, "first");
  Tensor ddx = dx.sum().gradient({x})[0];  // 6x
  expect_near_all(ddx.data<double>(), {6, -12, 3}, "second");
}

TEST(GradApi, NoGradLeavesGradsAlone) {
  Tensor x = f64({1, 2}, {2}).requires_grad_();
  EXPECT_FALSE(Tensor::no_grad());
  {
    tc::NoGrad guard;
    EXPECT_TRUE(Tensor::no_grad());
    {
      tc::NoGrad nested;
      EXPECT_TRUE(Tensor::no_grad());
    }
    EXPECT_TRUE(Tensor::no_grad());
    x.square().sum().backward();
    EXPECT_FALSE(x.grad().has_value());
    // gradient() is a pure function of the graph and still works
    EXPECT_EQ(x.square().sum().gradient({x})[0].data<double>(), (V{2, 4}));
  }
  EXPECT_FALSE(Tensor::no_grad());
  x.square().sum().backward();
  EXPECT_EQ(x.grad()->data<double>(), (V{2, 4}));
}

TEST(GradApi, DeadParametersAreForgotten) {
  Tensor keep = f64({1, 2}, {2}).requires_grad_();
  for (int i = 0; i < 200; i++) {
    Tensor tmp = f64({1, 2}, {2}).requires_grad_();
    tmp.sum().backward();
  }
  keep.mul(keep).sum().backward();
  EXPECT_EQ(keep.grad()->data<double>(), (V{2, 4}));
}

TEST(GradApi, LossReadBeforeBackward) {
  // item()/data() compute the loss without discarding its graph
  Tensor x = f64({1, 2}, {2}).requires_grad_();
  Tensor loss = x.square().sum();
  EXPECT_EQ(loss.item<double>(), 5.0);
  loss.backward();
  EXPECT_EQ(x.grad()->data<double>(), (V{2, 4}));
}

// ================================================================== realized parameters

TEST(GradRealized, WeightsRealizedBeforeForward) {
  // parameters computed lazily, then realized (their uop becomes a buffer), then used
  Tensor w = Tensor::arange(6).cast(dt::float64).mul(0.5).reshape({2, 3}).requires_grad_();
  Tensor b = Tensor::full({3}, 0.25, dt::float64).requires_grad_();
  tc::realize_all({w, b});
  Tensor x = f64({1, 2}, {1, 2});
  Tensor loss = matmul_by_sum(x, w).add(b).square().sum();
  loss.backward();
  // y = x @ w + b = [1*0 + 2*1.5, 1*0.5 + 2*2, 1*1 + 2*2.5] + 0.25 = [3.25, 4.75, 6.25]
  V y = {3.25, 4.75, 6.25};
  V dw, db;
  for (double xi : {1.0, 2.0})
    for (double yi : y) dw.push_back(2 * yi * xi);
  for (double yi : y) db.push_back(2 * yi);
  expect_near_all(w.grad()->data<double>(), dw, "dw");
  expect_near_all(b.grad()->data<double>(), db, "db");
}

TEST(GradRealized, WeightRealizedAfterForwardWasBuilt) {
  Tensor w = Tensor::full({3}, 2.0, dt::float64).add(f64({0, 1, 2}, {3})).requires_grad_();
  Tensor before = w.mul(f64({1, 2, 3}, {3})).sum();  // built from w's lazy graph
  w.realize();                                       // now w holds a buffer view
  Tensor after = w.square().sum();                   // built from the buffer
  before.add(after).backward();
  // d/dw = [1, 2, 3] + 2w, w = [2, 3, 4]
  EXPECT_EQ(w.grad()->data<double>(), (V{5, 8, 11}));
  std::vector<Tensor> g = before.gradient({w});
  EXPECT_EQ(g[0].data<double>(), (V{1, 2, 3}));
}

TEST(GradRealized, AWeightAssignedAConstantIsNotEveryEqualConstant) {
  // how nn makes its state tensors: a buffer assigned zeros, realized. The loss also holds zeros
  // of that shape (interned: the node the weight's value was before realize) on another path.
  Tensor w = Tensor::empty({3}, dt::float64);
  w.assign(Tensor::zeros({3}, dt::float64)).realize();
  w.requires_grad_();
  Tensor x = f64({1, 2, 3}, {3});
  (w * x).sum().add(Tensor::zeros({3}, dt::float64).maximum(x - 2).sum()).backward();
  EXPECT_EQ(w.grad()->data<double>(), (V{1, 2, 3}));
}

TEST(GradRealized, ReshapedWeightRealizedAfterForwardWasBuilt) {
  // the forward uses a reshape of w, which Tensor folds into one RESHAPE of w's source
  Tensor w = Tensor::arange(6).cast(dt::float64).add(1.0).reshape({2, 3}).requires_grad_();
  Tensor loss = w.reshape({6}).mul(f64({1, 2, 3, 4, 5, 6}, {6})).sum().add(w.square().sum());
  w.realize();
  EXPECT_TRUE(w.uop()->op == tc::Ops::RESHAPE && w.uop()->src[0]->op == tc::Ops::BUFFER);
  loss.backward();
  ASSERT_TRUE(w.grad().has_value());
  EXPECT_EQ(w.grad()->shape(), (S{2, 3}));
  EXPECT_EQ(w.grad()->data<double>(), (V{3, 6, 9, 12, 15, 18}));  // i + 2 * (i)
}

TEST(GradRealized, SgdTrainingLoop) {
  // fit y = 3x - 1 with a realized weight and bias, updating them each step
  Tensor x = f64({-1, 0, 1, 2}, {4, 1});
  Tensor y = f64({-4, -1, 2, 5}, {4, 1});
  Tensor w = f64({0}, {1, 1}).requires_grad_();
  Tensor b = f64({0}, {1}).requires_grad_();
  double first = 0, last = 0;
  for (int step = 0; step < 60; step++) {
    Tensor loss = matmul_by_sum(x, w).add(b).sub(y).square().sum().div(4.0);
    loss.backward();
    ASSERT_TRUE(w.grad().has_value() && b.grad().has_value());
    double l = loss.item<double>();
    if (step == 0) first = l;
    last = l;
    Tensor nw = w.sub(w.grad()->mul(0.2)).detach(), nb = b.sub(b.grad()->mul(0.2)).detach();
    tc::realize_all({nw, nb});
    w = nw.requires_grad_();
    b = nb.requires_grad_();
  }
  EXPECT_GT(first, 10.0);
  EXPECT_LT(last, 1e-4);
  EXPECT_NEAR(w.item<double>(), 3.0, 1e-2);
  EXPECT_NEAR(b.item<double>(), -1.0, 1e-2);
}

TEST(GradRealized, InPlaceStyleUpdateOfOneHandle) {
  // the same Tensor object reused across steps: realize() after each update
  Tensor w = f64({1, 1}, {2}).requires_grad_();
  for (int step = 0; step < 3; step++) {
    w.square().sum().backward();
    Tensor g = *w.grad();
    w = w.sub(g.mul(0.25)).detach().realize().requires_grad_();
  }
  // w <- w - 0.25 * 2w = w / 2 each step
  EXPECT_EQ(w.data<double>(), (V{0.125, 0.125}));
}

// ================================================================== compute_gradient directly

TEST(ComputeGradient, OnlyNodesOnTargetPathsAreVisited) {
  Tensor x = f64({1, 2}, {2}), y = f64({3, 4}, {2});
  Tensor loss = x.mul(2.0).add(y.exp()).sum();
  tc::GradientMap g =
      tc::compute_gradient(loss.uop(), tc::UOp::const_(dt::float64, 1.0), {x.uop()});
  EXPECT_TRUE(g.contains(x.uop().get()));
  EXPECT_FALSE(g.contains(y.uop().get()));
  // the ADD hands a gradient to its exp source, but the walk does not enter it
  const tc::UOp* exp = nullptr;
  for (const tc::UOp* u : loss.uop()->toposort())
    if (u->op == tc::Ops::EXP) exp = u;
  ASSERT_NE(exp, nullptr);
  EXPECT_TRUE(g.contains(exp));
  for (const tc::UOp* u : exp->toposort())
    if (u != exp) {
      EXPECT_FALSE(g.contains(u)) << "walked off the path into " << tc::op_name(u->op);
    }
}

// zeros(2) made twice is one interned graph; as parameters the two get gradients of their own.
TEST(Backward, EqualConstantParametersGetTheirOwnGradients) {
  Tensor a = Tensor::zeros({2}), b = Tensor::zeros({2});
  a.requires_grad_();
  b.requires_grad_();
  (a * 2 + b * 3).sum().backward();
  EXPECT_EQ(a.grad()->data<float>(), (std::vector<float>{2, 2}));
  EXPECT_EQ(b.grad()->data<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(a.data<float>(), (std::vector<float>{0, 0}));
}

// exp(x) / (1 + exp(x)) written out: the simplifier's logistic rules keep the value and the
// gradient finite where exp(x) overflows (inf/inf), and exact elsewhere (double reference).
TEST(Backward, LogisticWrittenOutStaysFiniteAtOverflow) {
  // a realized constant 1 stays a constant in later kernels (it once became a load there, which
  // the simplifier cannot fold)
  Tensor::full({}, 1.0).realize();
  std::vector<float> xs = {-300, -3, -0.5f, 0, 0.5f, 3, 300};
  for (float v : xs) {
    Tensor x = Tensor::from_vector<float>({v});
    Tensor y = x.exp() / (x.exp() + 1);
    Tensor g = y.sum().gradient({x})[0];
    double s = 1 / (1 + std::exp(-static_cast<double>(v)));
    EXPECT_NEAR(y.item<float>(), s, 1e-6) << "x=" << v;
    EXPECT_NEAR(g.item<float>(), s * (1 - s), 1e-6) << "x=" << v;
  }
}

TEST(ComputeGradient, DetachIsAValueNoop) {
  tc::UOpRef c = tc::UOp::const_(dt::float32, 2.0);
  tc::UOpRef d = tc::detach(c);
  EXPECT_TRUE(tc::is_detach(*d));
  EXPECT_FALSE(tc::is_detach(*tc::UOp::make(tc::Ops::CAST, dt::float64, {c})));
  EXPECT_EQ(Tensor(d).item<float>(), 2.0f);
}

}  // namespace
