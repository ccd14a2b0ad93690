// Multi-device tensors (Tensor::shard, schedule/multi.h) on the CPU's virtual devices, and on
// the CPU beside CL (copies between them), in the spirit of tinygrad's test_multitensor.py: each
// result equals the same ops on one device, and the naive double loop where one is short; the
// refused ops say what and where.
#include "tinycore/schedule/multi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/layers.h"
#include "nn/models.h"
#include "tests/error_message.h"
#include "tinycore/jit/jit.h"
#include "tinycore/runtime/device.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace tc {
namespace {

using ::testing::HasSubstr;
const std::vector<std::string> kTwo = {"CPU:0", "CPU:1"}, kThree = {"CPU:0", "CPU:1", "CPU:2"};

Tensor ramp(Shape shape, float scale = 0.25f) {
  return (Tensor::arange(static_cast<double>(shape_numel(shape))) * scale - 3)
      .reshape(shape)
      .cast(dtypes::float32)
      .contiguous()
      .realize();
}

void expect_same(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<float> g = got.data<float>(), w = want.data<float>();
  for (size_t i = 0; i < w.size(); i++)
    ASSERT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << "element " << i;
}

TEST(Shard, PiecesAreCeilSplitsAndReadBackWhole) {
  Tensor x = ramp({5, 3});
  for (std::optional<int> axis : {std::optional<int>{}, std::optional<int>{0}, {1}, {-1}}) {
    Tensor s = x.shard(kThree, axis);
    EXPECT_EQ(s.shape(), (Shape{5, 3}));
    EXPECT_EQ(s.devices(), kThree);
    expect_same(s, x);
  }
  Tensor s = x.shard(kThree, 0).realize();  // rows 2, 2, 1
  std::vector<int64_t> rows;
  for (const UOpRef& p : s.uop()->src) rows.push_back(p->shape()[0]);
  EXPECT_EQ(rows, (std::vector<int64_t>{2, 2, 1}));
  Tensor four = ramp({5}).shard({"CPU:0", "CPU:1", "CPU:2", "CPU:3"}, 0);  // 2, 2, 1, 0
  expect_same(four * 2, ramp({5}) * 2);
  Tensor one = x.shard({"CPU:0"}, 0).to("CPU");  // gathered: on one device
  EXPECT_EQ(one.devices(), std::vector<std::string>{"CPU"});
  expect_same(one, x);
}

TEST(Shard, ElementwiseOnEveryMixOfShardings) {
  Tensor a = ramp({4, 6}), b = ramp({4, 6}, -0.5f);
  Tensor want = (a * b + a.exp()).relu();
  std::vector<std::optional<int>> ways = {{}, 0, 1};
  for (auto sa : ways)
    for (auto sb : ways) {
      Tensor x = a.shard(kTwo, sa), y = b.shard(kTwo, sb);
      expect_same((x * y + x.exp()).relu(), want);
      expect_same((x * b + a.exp()).relu(), want);  // one on a single device
    }
}

TEST(Shard, ReducesOverEveryAxisAllReduceTheSplitOne) {
  Tensor a = ramp({6, 5});
  for (std::optional<int> axis : {std::optional<int>{}, std::optional<int>{0}, {1}}) {
    Tensor s = a.shard(kThree, axis);
    expect_same(s.sum(), a.sum());
    expect_same(s.sum(0), a.sum(0));
    expect_same(s.max(1), a.max(1));
    expect_same(s.min(0), a.min(0));
    expect_same(s.mean(1, true), a.mean(1, true));
    expect_same(s.softmax(0), a.softmax(0));
  }
  // the naive double loop
  std::vector<float> v = a.data<float>();
  double total = 0;
  for (float f : v) total += f;
  EXPECT_NEAR(a.shard(kTwo, 0).sum().item<float>(), total, 1e-4);
}

TEST(Shard, MatmulInEverySharding) {
  Tensor a = ramp({6, 4}, 0.1f), b = ramp({4, 5}, -0.2f);
  std::vector<double> want(30, 0);
  std::vector<float> av = a.data<float>(), bv = b.data<float>();
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 5; j++)
      for (int k = 0; k < 4; k++) want[i * 5 + j] += double{av[i * 4 + k]} * bv[k * 5 + j];
  std::vector<std::optional<int>> ways = {{}, 0, 1};
  for (auto sa : ways)
    for (auto sb : ways) {
      std::vector<float> got = a.shard(kTwo, sa).matmul(b.shard(kTwo, sb)).data<float>();
      for (int i = 0; i < 30; i++)
        ASSERT_NEAR(got[i], want[i], 1e-4)
            << "a on " << (sa ? *sa : -1) << ", b on " << (sb ? *sb : -1) << ", element " << i;
    }
}

TEST(Shard, MovementRunsPerPieceOrSaysWhyNot) {
  Tensor a = ramp({4, 6});
  Tensor s = a.shard(kTwo, 0);
  expect_same(s.reshape({4, 2, 3}), a.reshape({4, 2, 3}));
  expect_same(s.reshape({24}), a.reshape({24}));
  expect_same(s.permute({1, 0}) * 2, a.permute({1, 0}) * 2);
  expect_same(s.pad({{0, 0}, {1, 2}}), a.pad({{0, 0}, {1, 2}}));
  expect_same(s.flip({1}), a.flip({1}));
  expect_same(s.reshape({4, 1, 6}).expand({4, 3, 6}), a.reshape({4, 1, 6}).expand({4, 3, 6}));
  expect_same(s.shrink({{2, 4}, {0, 6}}), a.shrink({{2, 4}, {0, 6}}));  // exactly one piece
  EXPECT_THAT(error_message([&] {
                s.pad({{1, 0}, {0, 0}}).realize();
              }),
              HasSubstr("PAD of a tensor split along axis 0 over (CPU:0, CPU:1): the split axis "
                        "cannot be padded"));
  EXPECT_THAT(error_message([&] { s.flip({0}).realize(); }),
              HasSubstr("FLIP of a tensor split along axis 0 over (CPU:0, CPU:1)"));
  EXPECT_THAT(error_message([&] {
                s.shrink({{1, 3}, {0, 6}}).realize();
              }),
              HasSubstr("exactly one piece"));
  EXPECT_THAT(error_message([&] {
                a.shard(kTwo, 1).reshape({6, 4}).realize();
              }),
              HasSubstr("RESHAPE (4, 6) -> (6, 4) of a tensor split along axis 1 over (CPU:0, "
                        "CPU:1): it would move elements between the devices' pieces"));
  EXPECT_THAT(error_message([&] {
                a.shard({"CPU:0", "NPU"}, 0);
              }),
              HasSubstr("Tensor.shard: device 'NPU': unknown device 'NPU'"));
  EXPECT_THAT(error_message([&] {
                a.shard({"CPU:0", "CPU:one"}, 0);
              }),
              HasSubstr("device 'CPU:one': a device is a name with an optional :N"));
  EXPECT_THAT(error_message([&] { s.shard(kTwo, 1); }), HasSubstr("on several devices already"));
  EXPECT_THAT(error_message([&] { (s * 2).shard(kTwo, 1); }),
              HasSubstr("on several devices already (CPU:0, CPU:1)"));
  EXPECT_THAT(error_message([&] { (s + a.shard(kThree, 0)).realize(); }),
              HasSubstr("different devices (CPU:0, CPU:1) and (CPU:0, CPU:1, CPU:2)"));
}

TEST(Shard, BackwardGivesTheOneDeviceGradients) {
  Tensor w0 = ramp({4, 3}, 0.3f), x0 = ramp({5, 4}, -0.1f);
  auto grads = [&](std::optional<int> wa, std::optional<int> xa) {
    Tensor w = (wa ? w0.shard(kTwo, *wa) : w0).requires_grad_();
    Tensor x = (xa ? x0.shard(kTwo, *xa) : x0).requires_grad_();
    (x.matmul(w).tanh().square().sum()).backward();
    return std::vector<Tensor>{*w.grad(), *x.grad()};
  };
  std::vector<Tensor> want = grads({}, {});
  for (auto wa : {std::optional<int>{}, std::optional<int>{0}, {1}})
    for (auto xa : {std::optional<int>{}, std::optional<int>{0}, {1}}) {
      std::vector<Tensor> got = grads(wa, xa);
      expect_same(got[0], want[0]);
      expect_same(got[1], want[1]);
    }
}

// Batchnorm's statistics over the whole of a batch split over devices, while it lives.
struct SyncedShards {
  SyncedShards() { nn::BatchNorm::sync_statistics({.mean = {}, .replicas = 1, .shards = true}); }
  ~SyncedShards() { nn::BatchNorm::sync_statistics({}); }
};

// A batch split over devices is normalized per device by default (tinygrad's UnsyncedBatchNorm):
// each piece's output and input gradient are a BatchNorm's of that piece alone, on one device, and
// the running statistics take the pieces' mean statistics (against a double loop). With
// sync_statistics({.shards = true}), the whole batch's, as one device.
TEST(Shard, BatchNormNormalizesEachDevicesPieceUnlessSynced) {
  Tensor::manual_seed(7);
  Tensor x = (Tensor::randn({8, 3, 2, 2}) + Tensor::arange(8).reshape({8, 1, 1, 1}) * 0.5f);
  x = x.cast(dtypes::float32).contiguous().realize();
  Tensor g = Tensor::randn({8, 3, 2, 2}).realize();
  EXPECT_EQ(x.shard(kTwo, 0).shard_axis(), std::optional<int>(0));
  EXPECT_EQ((x.shard(kTwo, 1) * 2).sum(0).shard_axis(), std::optional<int>(0));  // computed
  EXPECT_EQ(x.shard(kTwo).shard_axis(), std::nullopt);                           // replicated
  EXPECT_EQ(x.shard_axis(), std::nullopt);
  Tensor::Train train;
  // BatchNorm's output and x's gradient, for x split over `devices` (none: one device)
  auto run = [&](const Tensor& in, const Tensor& dy, const std::vector<std::string>& devices) {
    nn::BatchNorm bn(3);
    Tensor xi = devices.empty() ? in.clone() : in.shard(devices, 0);
    xi.requires_grad_();
    Tensor y = bn(xi);
    (y * (devices.empty() ? dy : dy.shard(devices, 0))).sum().backward();
    realize_all({y, *xi.grad(), bn.running_mean, bn.running_var});
    return std::vector<Tensor>{y, *xi.grad(), bn.running_mean, bn.running_var};
  };
  std::vector<Tensor> got = run(x, g, kTwo), a = run(x.chunk(2)[0], g.chunk(2)[0], {}),
                      b = run(x.chunk(2)[1], g.chunk(2)[1], {});
  expect_same(got[0], a[0].cat({b[0]}));
  expect_same(got[1], a[1].cat({b[1]}));
  std::vector<float> xv = x.data<float>(), mean = got[2].data<float>(), var = got[3].data<float>();
  for (int c = 0; c < 3; c++) {
    double m = 0, v = 0;  // the pieces' mean mean and mean unbiased variance (16 elements each)
    for (int piece = 0; piece < 2; piece++) {
      double s = 0, ss = 0;
      for (int i = 0; i < 16; i++) s += xv[((piece * 4 + i / 4) * 3 + c) * 4 + i % 4];
      for (int i = 0; i < 16; i++)
        ss += std::pow(xv[((piece * 4 + i / 4) * 3 + c) * 4 + i % 4] - s / 16, 2);
      m += s / 16 / 2, v += ss / 15 / 2;
    }
    EXPECT_NEAR(mean[c], 0.1 * m, 1e-5) << "running_mean " << c;
    EXPECT_NEAR(var[c], 0.9 + 0.1 * v, 1e-5) << "running_var " << c;
  }
  std::vector<Tensor> synced, whole;
  {
    SyncedShards sync;
    synced = run(x, g, kTwo), whole = run(x, g, {});
  }
  for (size_t k = 0; k < whole.size(); k++) expect_same(synced[k], whole[k]);
}

// A data-parallel step of the MNIST convnet: the batch split over CPU:0 and CPU:1, the weights
// copied to both; with batchnorm synced over the devices, its gradients are the one-device
// step's (batchnorm over the whole batch, as the all-reduce of its statistics gives).
TEST(Shard, DataParallelConvnetGradientsEqualOneDevices) {
  Tensor::manual_seed(3);
  Tensor x = Tensor::randn({8, 1, 28, 28}).realize();
  Tensor y = (Tensor::rand({8}) * 10).cast(dtypes::int32).realize();
  auto grads = [&](bool sharded) {
    Tensor::manual_seed(5);
    std::unique_ptr<nn::Module> model = nn::mnist_convnet(10);
    std::vector<Tensor> params = model->parameters();
    if (sharded)
      for (Tensor& p : params) p.shard_(kTwo);
    for (Tensor& p : params) p.requires_grad_();
    Tensor::Train train;
    Tensor xs = sharded ? x.shard(kTwo, 0) : x, ys = sharded ? y.shard(kTwo, 0) : y;
    Tensor logits = (*model)(xs);
    EXPECT_EQ(logits.devices(), sharded ? kTwo : std::vector<std::string>{"CPU"});
    logits.sparse_categorical_crossentropy(ys).backward();
    std::vector<Tensor> out;
    for (const Tensor& p : params) out.push_back(*p.grad());
    return out;
  };
  SyncedShards sync;
  std::vector<Tensor> want = grads(false), got = grads(true);
  for (size_t k = 0; k < want.size(); k++) expect_same(got[k], want[k]);
}

// A step on inputs split over `devices` (a matmul, and a sum over the split axis), called 4 times
// with new values: each call's result against one device's. Returns the step, captured.
std::unique_ptr<TinyJit> check_jit_on_sharded_inputs(const std::vector<std::string>& devices) {
  Tensor w = ramp({4, 3}, 0.2f);
  auto step = std::make_unique<TinyJit>([w](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[0].matmul(w) * in[1]).sum(0).to("CPU")};
  });
  for (int call = 0; call < 4; call++) {
    Tensor x = ramp({6, 4}, 0.1f * (call + 1)), c = ramp({6, 3}, 0.05f * (call + 1));
    expect_same((*step)({x.shard(devices, 0), c.shard(devices, 0)})[0], (x.matmul(w) * c).sum(0));
  }
  EXPECT_TRUE(step->captured());
  return step;
}

TEST(Shard, TinyJitReplaysStepsOnShardedInputs) {
  std::unique_ptr<TinyJit> jit = check_jit_on_sharded_inputs(kTwo);
  TinyJit& step = *jit;
  Tensor x = ramp({6, 4});
  EXPECT_THAT(error_message([&] {
                step({x.shard(kTwo, 1), x.shard(kTwo, 0)});
              }),
              HasSubstr("input 0 is sharded as '1;CPU:0,CPU:1', captured as '0;CPU:0,CPU:1'"));
  EXPECT_THAT(error_message([&] {
                step({x, x});
              }),
              HasSubstr("input 0 is sharded as on one device, captured as '0;CPU:0,CPU:1'"));
}

// Every device's copy of the all-reduced sum and max of fuzzed sizes (`cases` of them, the last on
// 4 devices), on `kinds` devices taken in turn (CPU:0, CL:0, CPU:1, ...), against a double loop;
// returns how many COPY nodes the last sum's lowered graph holds.
int64_t check_allreduce_of_fuzzed_sizes(const std::vector<std::string>& kinds, int max_rows,
                                        int cases = 8) {
  std::srand(7);
  int64_t copies = 0;
  for (int c = 0; c < cases; c++) {
    int64_t n = 1 + std::rand() % max_rows, m = 4 + std::rand() % 5;
    int k = 4 - (cases - 1 - c) % 3;
    std::vector<std::string> devices;
    for (int d = 0; d < k; d++)
      devices.push_back(kinds[d % kinds.size()] + ":" + std::to_string(d / kinds.size()));
    Tensor a = ramp({n, m}, 0.01f);
    std::vector<float> v = a.data<float>();
    std::vector<double> sum(m, 0), mx(m, -1e30);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < m; j++)
        sum[j] += v[i * m + j], mx[j] = std::max(mx[j], double{v[i * m + j]});
    Tensor s = a.shard(devices, 0), total = s.sum(0), top = s.max(0);
    auto copies_in = [](const Tensor& t) {
      UOpRef lowered = schedule::lower_multi(t.uop());
      int64_t n = 0;
      for (const UOp* u : lowered->toposort()) n += u->op == Ops::COPY;
      return n;
    };
    copies = copies_in(total) - copies_in(s);  // the all-reduce's, not the shard's own
    realize_all({total, top});
    const std::vector<float> first = Tensor(total.uop()->src[0]).data<float>();
    for (int d = 0; d < k; d++) {  // each device's result: the first's, bit for bit
      std::vector<float> got = Tensor(total.uop()->src[d]).data<float>(),
                         got_max = Tensor(top.uop()->src[d]).data<float>();
      EXPECT_EQ(got, first) << n << "x" << m << " on " << devices[d] << " of " << k;
      for (int64_t j = 0; j < m; j++) {
        EXPECT_NEAR(got[j], sum[j], 1e-3 * (1 + std::abs(sum[j])))
            << n << "x" << m << " on " << devices[d] << " of " << k;
        EXPECT_EQ(got_max[j], static_cast<float>(mx[j])) << n << "x" << m << " on " << devices[d];
      }
    }
  }
  return copies;
}

TEST(Shard, AllReduceOfFuzzedSizesIsTheSumOfTheWhole) {
  EXPECT_EQ(check_allreduce_of_fuzzed_sizes({"CPU"}, 300), 0);  // the pieces share memory
}

// Devices that copy: the CPU and CL (PoCL in CI) in turn. A skip where CL is not available.
class ShardOverCopyingDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = runtime::unavailable_reason("CL"); !why.empty())
      GTEST_SKIP() << "no CL device: " << why;
  }
  const std::vector<std::string> two_ = {"CPU", "CL"};
};

TEST_F(ShardOverCopyingDevices, PiecesLiveOnTheirDevicesAndComputeThere) {
  Tensor a = ramp({6, 5}), b = ramp({6, 5}, -0.5f);
  Tensor s = a.shard(two_, 0).realize();
  EXPECT_EQ(schedule::device_of(s.uop()->src[0]), "CPU");
  EXPECT_EQ(schedule::device_of(s.uop()->src[1]), "CL");
  Tensor y = (s * b + s.exp()).relu().realize();
  EXPECT_EQ(schedule::device_of(y.uop()->src[1]), "CL");
  expect_same(y, (a * b + a.exp()).relu());
  expect_same(s.to("CL"), a);
  EXPECT_EQ(s.to("CL").device(), "CL");
  std::vector<std::optional<int>> ways = {{}, 0, 1};
  for (auto sa : ways)
    for (auto sb : ways) {
      Tensor x = a.shard(two_, sa), z = b.shard(two_, sb);
      expect_same(x * z - z.exp(), a * b - b.exp());
      expect_same(x.sum(0), a.sum(0));
      expect_same(x.max(1), a.max(1));
      expect_same(x.softmax(0), a.softmax(0));
      expect_same(x.matmul(z.permute({1, 0})), a.matmul(b.permute({1, 0})), 1e-4);
    }
  // backward: w0's gradient comes back through the copies, and equals the one-device gradient
  Tensor w0 = ramp({5, 3}, 0.3f), w1 = ramp({5, 3}, 0.3f);
  w0.requires_grad_(), w1.requires_grad_();
  a.shard(two_, 0).matmul(w0.shard(two_, 1)).relu().sum().backward();
  a.matmul(w1).relu().sum().backward();
  expect_same(*w0.grad(), *w1.grad());
  // a gradient arriving on one device (through .to) reaches each piece on its own device
  for (std::optional<int> axis : {std::optional<int>{}, std::optional<int>{0}}) {
    Tensor x0 = ramp({6, 5}, 0.1f), scale = ramp({6, 5}, 0.2f).to("CL");
    x0.requires_grad_();
    (x0.shard(two_, axis).to("CL") * scale).sum().backward();
    EXPECT_EQ(x0.grad()->device(), "CPU");
    expect_same(*x0.grad(), ramp({6, 5}, 0.2f));
  }
}

TEST_F(ShardOverCopyingDevices, AssignsWriteEachPieceOnItsDevice) {
  // a constant is the same node in every piece: each piece computes it on its own device (it was
  // once copied from the first piece's buffer, across devices)
  for (std::optional<int> axis : {std::optional<int>{}, std::optional<int>{0}}) {
    Tensor m = ramp({6, 5}).shard(two_, axis).contiguous().realize();
    m.assign(Tensor::full({6, 5}, 2.0f).shard(two_, axis)).realize();
    expect_same(m, Tensor::full({6, 5}, 2.0f));
    Tensor w = ramp({6, 5}, 0.5f).shard(two_, axis).contiguous().realize();
    m.assign(m * 0.5f + w);  // the momentum's new value, then the weight's from it
    w.assign(w - m);
    tc::realize_all({w, m});
    expect_same(m, Tensor::full({6, 5}, 1.0f) + ramp({6, 5}, 0.5f));
    expect_same(w, Tensor::full({6, 5}, -1.0f));
  }
}

TEST_F(ShardOverCopyingDevices, AllReducesNaiveAndRingAreTheSumOfTheWhole) {
  // naive: each device copies in the pieces of the other kind's devices, once a kind (2 each)
  EXPECT_EQ(check_allreduce_of_fuzzed_sizes({"CPU", "CL"}, 300, 4), 4);
  // a ring over 4 devices: 3 steps of 4 chunks for the reduce-scatter, 3 for the all-gather
  setenv("RING_ALLREDUCE_THRESHOLD", "3", 1);
  EXPECT_EQ(check_allreduce_of_fuzzed_sizes({"CPU", "CL"}, 300, 4), 24);
  unsetenv("RING_ALLREDUCE_THRESHOLD");
  setenv("RING", "2", 1);  // forced: on two devices too, and on devices that share memory
  EXPECT_EQ(check_allreduce_of_fuzzed_sizes({"CPU", "CL"}, 40, 3), 24);
  EXPECT_EQ(check_allreduce_of_fuzzed_sizes({"CPU"}, 40), 0);
  unsetenv("RING");
}

TEST_F(ShardOverCopyingDevices, TinyJitReplaysTheCopies) { check_jit_on_sharded_inputs(two_); }

TEST(Shard, TinyJitReplaysAStepOnShardedWeights) {
  Tensor w = ramp({4, 3}, 0.2f).shard(kTwo, 1).realize();
  Tensor w1 = ramp({4, 3}, 0.2f);
  TinyJit step([&](const std::vector<Tensor>& in) {
    Tensor out = in[0].matmul(w).relu().sum(1).to("CPU");
    w.assign(w * 0.5f);  // in place, piece by piece
    return std::vector<Tensor>{out};
  });
  for (int call = 0; call < 4; call++) {
    Tensor x = ramp({5, 4}, 0.1f * (call + 1));
    expect_same(step({x})[0], x.matmul(w1).relu().sum(1));
    w1 = (w1 * 0.5f).realize();
  }
  EXPECT_TRUE(step.captured());
  expect_same(w, w1);
}

}  // namespace
}  // namespace tc
