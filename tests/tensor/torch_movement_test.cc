// Movement, joins, splits, padding modes, triangles and creation against PyTorch
// (tests/fixtures/gen_movement.py): values, shapes, dtypes and the gradients of sum(out * w),
// on (2, 3, 4) inputs and on permuted views of them (non-contiguous), with negative dims.
//
// Tolerances: movement moves values, so forward and gradients are exact (kExact) except where a
// gradient sums copies (expand, repeat, the padding modes: kSum, 1e-6 relative); arange and
// linspace compute in float32 and may differ from torch's by an ulp (kUlp, 1e-6, 1e-7).
// Deviations: torch.arange of ints is int64, tinygrad's int32 (values only); torch's F.pad
// lists pads from the last dim backwards, tinycore's pad takes (before, after) per dim in order.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/tensor/fixture.h"
#include "tinycore/tensor.h"

namespace {

using tc::Tensor;
using tcfix::bin;
using tcfix::check_op;
using tcfix::Tol;
using tcfix::un;
namespace dt = tc::dtypes;
using T = const Tensor&;
using Ts = std::vector<Tensor>;

constexpr Tol kExact{0, 0};
constexpr Tol kUlp{1e-6, 1e-7};
constexpr Tol kSum{1e-6, 1e-7};

const char* kFile = "movement";

// The fixture's permuted inputs are stored as (4, 2, 3): this is the (2, 3, 4) view torch used.
Tensor P(T x) { return x.permute({1, 2, 0}); }

struct MoveCase {
  const char* name;
  std::function<Tensor(T)> op;
  Tol grad;
};

class TorchMove : public ::testing::TestWithParam<MoveCase> {};

TEST_P(TorchMove, ValuesAndGradient) {
  check_op(kFile, GetParam().name, un(GetParam().op), kExact, GetParam().grad);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, TorchMove,
    ::testing::
        Values(
            MoveCase{"reshape",
                     [](T x) {
                       return x.reshape({6, 4});
                     },
                     kExact},
            MoveCase{"reshape_infer",
                     [](T x) {
                       return x.reshape({4, -1, 2});
                     },
                     kExact},
            MoveCase{"reshape_flat", [](T x) { return x.reshape({-1}); }, kExact},
            MoveCase{"reshape_noncontig",
                     [](T x) {
                       return P(x).reshape({3, 8});
                     },
                     kExact},
            MoveCase{"reshape_scalar",
                     [](T x) {
                       return x.shrink({{0, 1}, {0, 1}, {0, 1}}).reshape({});
                     },
                     kExact},
            MoveCase{"permute",
                     [](T x) {
                       return x.permute({2, 0, 1});
                     },
                     kExact},
            MoveCase{"permute_neg",
                     [](T x) {
                       return x.permute({-1, -3, -2});
                     },
                     kExact},
            MoveCase{"permute_noncontig",
                     [](T x) {
                       return P(x).permute({1, 0, 2});
                     },
                     kExact},
            MoveCase{"expand",
                     [](T x) {
                       return x.shrink({{0, 2}, {0, 1}, {0, 4}}).expand({2, 3, 4}).mul(x);
                     },
                     kSum},
            MoveCase{
                "expand_new_dims",
                [](T x) {
                  return x.shrink({{0, 1}, {0, 3}, {0, 1}}).reshape({3, 1}).expand({2, 2, 3, 5});
                },
                kSum},
            MoveCase{"expand_keep",
                     [](T x) {
                       return x.shrink({{0, 2}, {0, 1}, {0, 4}}).expand({-1, 5, -1});
                     },
                     kSum},
            MoveCase{"pad",
                     [](T x) {
                       return x.pad({{0, 0}, {0, 1}, {1, 2}});
                     },
                     kExact},
            MoveCase{"pad_value",
                     [](T x) {
                       return x.pad({{1, 0}, {2, 1}, {0, 0}}, 1.5);
                     },
                     kExact},
            MoveCase{"pad_negative",
                     [](T x) {
                       return x.pad({{0, 0}, {1, -2}, {-1, 1}});
                     },
                     kExact},
            MoveCase{"pad_noncontig",
                     [](T x) {
                       return P(x).pad({{0, 0}, {1, 1}, {1, 1}});
                     },
                     kExact},
            MoveCase{"pad_reflect",
                     [](T x) {
                       return x.pad({{0, 0}, {1, 2}, {2, 1}}, "reflect");
                     },
                     kSum},
            MoveCase{"pad_reflect_1d",
                     [](T x) {
                       return x.pad({{0, 0}, {0, 0}, {3, 1}}, "reflect");
                     },
                     kSum},
            MoveCase{"pad_replicate",
                     [](T x) {
                       return x.pad({{0, 0}, {1, 0}, {2, 3}}, "replicate");
                     },
                     kSum},
            MoveCase{"pad_replicate_1d",
                     [](T x) {
                       return x.pad({{0, 0}, {0, 0}, {0, 4}}, "replicate");
                     },
                     kSum},
            MoveCase{"pad_circular",
                     [](T x) {
                       return x.pad({{0, 0}, {1, 2}, {2, 1}}, "circular");
                     },
                     kSum},
            MoveCase{"pad_circular_1d",
                     [](T x) {
                       return x.pad({{0, 0}, {0, 0}, {4, 3}}, "circular");
                     },
                     kSum},
            MoveCase{"pad_reflect_noncontig",
                     [](T x) {
                       return P(x).pad({{0, 0}, {2, 0}, {1, 1}}, "reflect");
                     },
                     kSum},
            MoveCase{"shrink",
                     [](T x) {
                       return x.shrink({{0, 2}, {1, 3}, {0, 2}});
                     },
                     kExact},
            MoveCase{"shrink_noncontig",
                     [](T x) {
                       return P(x).shrink({{1, 2}, {0, 2}, {1, 3}});
                     },
                     kExact},
            MoveCase{"flip", [](T x) { return x.flip({0}); }, kExact},
            MoveCase{"flip_many",
                     [](T x) {
                       return x.flip({-1, 1});
                     },
                     kExact},
            MoveCase{"flip_noncontig", [](T x) { return P(x).flip({2}); }, kExact},
            MoveCase{"transpose", [](T x) { return x.transpose(-1, 0); }, kExact},
            MoveCase{"transpose_noncontig", [](T x) { return P(x).transpose(0, 1); }, kExact},
            MoveCase{"flatten", [](T x) { return x.flatten(); }, kExact},
            MoveCase{"flatten_1", [](T x) { return x.flatten(1); }, kExact},
            MoveCase{"flatten_01", [](T x) { return x.flatten(0, 1); }, kExact},
            MoveCase{"flatten_neg", [](T x) { return x.flatten(-2, -1); }, kExact},
            MoveCase{"flatten_noncontig", [](T x) { return P(x).flatten(); }, kExact},
            MoveCase{"unflatten",
                     [](T x) {
                       return x.unflatten(-1, {2, 2});
                     },
                     kExact},
            MoveCase{"unflatten_infer",
                     [](T x) {
                       return x.unflatten(1, {-1, 1});
                     },
                     kExact},
            MoveCase{"unflatten_noncontig",
                     [](T x) {
                       return P(x).unflatten(0, {1, 2, 1});
                     },
                     kExact},
            MoveCase{"squeeze_all",
                     [](T x) {
                       return x.shrink({{0, 2}, {0, 1}, {0, 4}}).unsqueeze(-1).squeeze();
                     },
                     kExact},
            MoveCase{"squeeze_1",
                     [](T x) {
                       return x.shrink({{0, 2}, {0, 1}, {0, 4}}).unsqueeze(-1).squeeze(1);
                     },
                     kExact},
            MoveCase{"squeeze_neg",
                     [](T x) {
                       return x.shrink({{0, 2}, {0, 1}, {0, 4}}).unsqueeze(-1).squeeze(-1);
                     },
                     kExact},
            MoveCase{"squeeze_noop",
                     [](T x) {
                       return x.shrink({{0, 2}, {0, 1}, {0, 4}}).unsqueeze(-1).squeeze(0);
                     },
                     kExact},
            MoveCase{"unsqueeze_0", [](T x) { return x.unsqueeze(0); }, kExact},
            MoveCase{"unsqueeze_neg", [](T x) { return x.unsqueeze(-1); }, kExact},
            MoveCase{"unsqueeze_2", [](T x) { return x.unsqueeze(2); }, kExact},
            MoveCase{"repeat", [](T x) { return x.repeat({2, 1, 2}); }, kSum},
            MoveCase{"repeat_new_dims", [](T x) { return x.repeat({2, 1, 1, 3}); }, kSum},
            MoveCase{"repeat_noncontig", [](T x) { return P(x).repeat({1, 2, 1}); }, kSum},
            MoveCase{
                "roll",
                [](T x) {
                  return x.roll({1, -2}, {0, -1});
                },
                kExact},
            MoveCase{"roll_wrap", [](T x) { return x.roll(5, 1); }, kExact},
            MoveCase{"roll_noncontig", [](T x) { return P(x).roll(3, 2); }, kExact},
            MoveCase{"triu", [](T x) { return x.triu(); }, kExact},
            MoveCase{"triu_1", [](T x) { return x.triu(1); }, kExact},
            MoveCase{"triu_neg", [](T x) { return x.triu(-1); }, kExact},
            MoveCase{"tril", [](T x) { return x.tril(); }, kExact},
            MoveCase{"tril_2", [](T x) { return x.tril(2); }, kExact},
            MoveCase{"tril_neg", [](T x) { return x.tril(-2); }, kExact},
            MoveCase{"triu_noncontig", [](T x) { return P(x).triu(); }, kExact},
            MoveCase{"pad_to", [](T x) { return x.pad_to({3, 3, 6}); }, kExact}),
    [](const ::testing::TestParamInfo<MoveCase>& i) { return std::string(i.param.name); });

TEST(TorchSplit, SplitAndChunk) {
  auto pieces = [](std::function<Ts(T)> f) { return [f](const Ts& x) { return f(x[0]); }; };
  check_op(kFile, "split_size", pieces([](T x) { return x.split(2, -1); }), kExact, kExact);
  check_op(kFile, "split_uneven", pieces([](T x) { return x.split(2, 1); }), kExact, kExact);
  check_op(kFile, "split_sizes", pieces([](T x) {
             return x.split(std::vector<int64_t>{1, 2}, 1);
           }),
           kExact, kExact);
  check_op(kFile, "split_noncontig", pieces([](T x) { return P(x).split(3, 2); }), kExact, kExact);
  check_op(kFile, "chunk", pieces([](T x) { return x.chunk(2, 1); }), kExact, kExact);
  check_op(kFile, "chunk_more", pieces([](T x) { return x.chunk(3, -1); }), kExact, kExact);
  check_op(kFile, "chunk_noncontig", pieces([](T x) { return P(x).chunk(2, 0); }), kExact, kExact);
}

TEST(TorchJoin, Cat) {
  auto cat = [](int dim) { return [dim](const Ts& x) { return Ts{Tensor::cat(x, dim)}; }; };
  check_op(kFile, "cat_1", cat(1), kExact, kExact);
  check_op(kFile, "cat_neg", cat(-1), kExact, kExact);
  check_op(kFile, "cat_0", cat(0), kExact, kExact);
  check_op(kFile, "cat_noncontig", bin([](T a, T b) { return a.transpose().cat({b.flip({0})}); }),
           kExact, kExact);
  check_op(kFile, "cat_promote", cat(1), kExact);
}

TEST(TorchJoin, Stack) {
  auto stack = [](int dim) { return [dim](const Ts& x) { return Ts{Tensor::stack(x, dim)}; }; };
  check_op(kFile, "stack_0", stack(0), kExact, kExact);
  check_op(kFile, "stack_1", stack(1), kExact, kExact);
  check_op(kFile, "stack_neg", stack(-1), kExact, kExact);
  check_op(kFile, "stack_noncontig",
           bin([](T a, T b) { return a.transpose().stack({b.flip({1})}, 0); }), kExact, kExact);
}

TEST(TorchJoin, Meshgrid) {
  check_op(
      kFile, "meshgrid_ij", [](const Ts& x) { return Tensor::meshgrid(x, "ij"); }, kExact, kSum);
  check_op(
      kFile, "meshgrid_xy", [](const Ts& x) { return Tensor::meshgrid(x, "xy"); }, kExact, kSum);
  check_op(
      kFile, "meshgrid_xy_2", [](const Ts& x) { return Tensor::meshgrid(x, "xy"); }, kExact, kSum);
}

TEST(TorchCreation, ArangeLinspace) {
  auto make = [](std::function<Tensor()> f) { return [f](const Ts&) { return Ts{f()}; }; };
  // int aranges are int32 in tinygrad (torch: int64)
  check_op(kFile, "arange_5", make([] { return Tensor::arange(5); }), kExact, {}, false);
  EXPECT_EQ(Tensor::arange(5).dtype(), dt::int32);
  check_op(kFile, "arange_1_7_2", make([] { return Tensor::arange(1, 7, 2); }), kExact, {}, false);
  check_op(kFile, "arange_neg_step", make([] { return Tensor::arange(5, 0, -1.5); }), kUlp);
  check_op(kFile, "arange_float", make([] { return Tensor::arange(0, 1, 0.1); }), kUlp);
  check_op(kFile, "arange_float_dtype",
           make([] { return Tensor::arange(-1, 2, 0.25, dt::float32); }), kUlp);
  check_op(kFile, "linspace_0_1_5", make([] { return Tensor::linspace(0, 1, 5); }), kUlp);
  check_op(kFile, "linspace_neg", make([] { return Tensor::linspace(-1, 2, 7); }), kUlp);
  check_op(kFile, "linspace_1", make([] { return Tensor::linspace(3, 9, 1); }), kUlp);
  check_op(kFile, "linspace_int", make([] { return Tensor::linspace(0, 10, 4, dt::int32); }),
           kExact);
}

TEST(TorchCreation, EyeFullLike) {
  auto make = [](std::function<Tensor()> f) { return [f](const Ts&) { return Ts{f()}; }; };
  check_op(kFile, "eye_3", make([] { return Tensor::eye(3); }), kExact);
  check_op(kFile, "eye_2_4", make([] { return Tensor::eye(2, 4); }), kExact);
  check_op(kFile, "eye_4_2_int", make([] { return Tensor::eye(4, 2, dt::int32); }), kExact);
  check_op(kFile, "full_float", make([] { return Tensor::full({2, 3}, 1.5); }), kExact);
  check_op(kFile, "full_int", make([] { return Tensor::full({2}, 7, dt::int32); }), kExact);
  check_op(kFile, "full_bool", make([] { return Tensor::full({3}, true); }), kExact);
  check_op(kFile, "zeros_like", un([](T x) { return Tensor::zeros_like(x); }), kExact);
  check_op(kFile, "ones_like_int", un([](T x) { return Tensor::ones_like(x); }), kExact);
  check_op(kFile, "full_like_dtype", un([](T x) { return Tensor::full_like(x, 2.5, dt::float32); }),
           kExact);
  check_op(kFile, "zeros_like_dtype", un([](T x) { return Tensor::zeros_like(x, dt::int32); }),
           kExact);
  Tensor e = Tensor::empty_like(tcfix::fixture(kFile, "zeros_like")["in0"].tensor(), dt::int64);
  EXPECT_EQ(e.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(e.dtype(), dt::int64);
}

}  // namespace
