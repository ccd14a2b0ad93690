// TinyJit: capture on call 2, replay from call 3 with new inputs, fresh outputs, validation
// errors, in-place assign (so optimizer-style updates persist across replays), the memory
// planner, JIT=0, and host reads inside a jitted function. Expected values come from plain host
// loops.
#include "tinycore/jit/jit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <vector>

#include "tests/error_message.h"
#include "tinycore/engine/realize.h"
#include "tinycore/error.h"
#include "tinycore/runtime/device.h"
#include "tinycore/tensor.h"
#include "tinycore/variable.h"

namespace {

using tc::Tensor;
using tc::TinyJit;
using ::testing::HasSubstr;
using V = std::vector<float>;

Tensor vec(const V& v, tc::Shape shape) { return Tensor(v, shape).realize(); }

V ramp(int n, float start, float step = 1) {
  V v;
  for (int i = 0; i < n; i++) v.push_back(start + step * static_cast<float>(i));
  return v;
}

void expect_vec(const Tensor& t, const V& want) {
  std::vector<float> got = t.data<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_FLOAT_EQ(got[i], want[i]) << "element " << i;
}

TEST(TinyJit, ReplaysWithNewInputsAndWithoutCallingTheFunction) {
  Tensor w = vec(ramp(6, 0.5f, 0.25f), {2, 3});
  int traced = 0;
  TinyJit step([&](const std::vector<Tensor>& in) {
    traced++;
    Tensor h = (in[0].reshape({1, 3}) * w + in[1]).relu();  // (2, 3)
    return std::vector<Tensor>{h.sum(1), h.max()};
  });
  for (int call = 0; call < 5; call++) {
    V x = ramp(3, -1.0f + static_cast<float>(call), 0.7f), b = ramp(6, -2.0f, 0.5f + call);
    std::vector<Tensor> out = step({vec(x, {3}), vec(b, {2, 3})});
    V sums(2, 0.0f);
    float mx = -1e30f;
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) {
        float h =
            std::max(0.0f, x[j] * (0.5f + 0.25f * static_cast<float>(i * 3 + j)) + b[i * 3 + j]);
        sums[i] += h;
        mx = std::max(mx, h);
      }
    expect_vec(out[0], sums);
    EXPECT_FLOAT_EQ(out[1].item<float>(), mx) << "call " << call;
  }
  EXPECT_EQ(traced, 2);  // call 1 runs it, call 2 captures it, the rest replay
  EXPECT_TRUE(step.captured());
  EXPECT_GE(step.kernel_count(), 2u);
}

TEST(TinyJit, OutputsOfEarlierCallsAreNotOverwritten) {
  TinyJit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 3 + 1}; });
  std::vector<Tensor> kept;
  for (int call = 0; call < 4; call++)
    kept.push_back(f({vec(ramp(4, static_cast<float>(call)), {4})})[0]);
  for (int call = 0; call < 4; call++) {
    V want;
    for (float v : ramp(4, static_cast<float>(call))) want.push_back(v * 3 + 1);
    expect_vec(kept[call], want);
  }
}

TEST(TinyJit, NonContiguousInputsAreRealizedFirst) {
  TinyJit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1}; });
  for (int call = 0; call < 3; call++) {
    Tensor x = vec(ramp(6, static_cast<float>(call)), {2, 3});
    std::vector<Tensor> out = f({x.permute({1, 0})});
    V xv = ramp(6, static_cast<float>(call)), want;
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < 2; i++) want.push_back(xv[i * 3 + j] + 1);
    expect_vec(out[0], want);
  }
}

TEST(TinyJit, ReplayWithChangedInputsSaysWhichAndHow) {
  TinyJit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + in[1]}; });
  for (int i = 0; i < 2; i++) f({vec(ramp(4, 0), {4}), vec(ramp(4, 1), {4})});
  EXPECT_THAT(error_message([&] {
                f({vec(ramp(4, 0), {4}), vec(ramp(6, 1), {6})});
              }),
              HasSubstr("input 1 has shape (6,), captured with (4,)"));
  EXPECT_THAT(
      error_message([&] {
        f({Tensor::from_vector<int>({1, 2, 3, 4}, tc::Shape{4}).realize(), vec(ramp(4, 1), {4})});
      }),
      HasSubstr("input 0 has dtype int, captured with float"));
  EXPECT_THAT(error_message([&] { f({vec(ramp(4, 0), {4})}); }),
              HasSubstr("called with 1 inputs, captured with 2"));
  Tensor same = vec(ramp(4, 0), {4});
  EXPECT_THAT(error_message([&] {
                f({same, same});
              }),
              HasSubstr("inputs 0 and 1 are the same tensor"));
  // still usable after the errors
  expect_vec(f({vec(ramp(4, 0), {4}), vec(ramp(4, 1), {4})})[0], {1, 3, 5, 7});
}

TEST(TinyJit, HostReadsInsideTheFunctionAreRejectedWhenCaptured) {
  TinyJit f([](const std::vector<Tensor>& in) {
    float s = in[0].sum().item<float>();
    return std::vector<Tensor>{in[0] * s};
  });
  f({vec(ramp(3, 1), {3})});  // call 1 runs plainly
  EXPECT_THAT(error_message([&] { f({vec(ramp(3, 1), {3})}); }),
              HasSubstr("inside a TinyJit function"));
}

// A capture that threw leaves nothing to replay: the next call captures again (it crashed once).
TEST(TinyJit, CallAfterAFailedCaptureCapturesAgain) {
  int calls = 0;
  TinyJit f([&](const std::vector<Tensor>& in) {
    if (++calls == 2) tc::fail("fails while capturing");
    return std::vector<Tensor>{in[0] * 2};
  });
  expect_vec(f({vec(ramp(3, 1), {3})})[0], {2, 4, 6});
  EXPECT_THAT(error_message([&] { f({vec(ramp(3, 1), {3})}); }),
              HasSubstr("fails while capturing"));
  EXPECT_FALSE(f.captured());
  expect_vec(f({vec(ramp(3, 2), {3})})[0], {4, 6, 8});  // captures
  EXPECT_TRUE(f.captured());
  expect_vec(f({vec(ramp(3, 3), {3})})[0], {6, 8, 10});  // replays
  EXPECT_EQ(calls, 3);
}

TEST(TinyJit, NestedJitIsAnError) {
  TinyJit inner([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1}; });
  TinyJit outer([&](const std::vector<Tensor>& in) { return inner({in[0] * 2}); });
  outer({vec(ramp(3, 1), {3})});
  EXPECT_THAT(error_message([&] { outer({vec(ramp(3, 1), {3})}); }), HasSubstr("nested TinyJit"));
}

TEST(TinyJit, DisabledByJitZero) {
  setenv("JIT", "0", 1);
  int traced = 0;
  TinyJit f([&](const std::vector<Tensor>& in) {
    traced++;
    return std::vector<Tensor>{in[0] - 1};
  });
  for (int call = 0; call < 4; call++) expect_vec(f({vec({2, 3}, {2})})[0], {1, 2});
  unsetenv("JIT");
  EXPECT_EQ(traced, 4);
  EXPECT_FALSE(f.captured());
}

// ----------------------------------------------------------------- in-place assign

TEST(Assign, RealizedTensorIsUpdatedInItsOwnBuffer) {
  Tensor a = vec({1, 2, 3}, {3});
  a.assign(a * 2 + 1).realize();  // the first assign moves it to a buffer of its own
  expect_vec(a, {3, 5, 7});
  const tc::runtime::Buffer* own = a.uop()->buffer.get();
  a.assign(a * 2 + 1).realize();  // then writes it in place
  EXPECT_EQ(a.uop()->buffer.get(), own);
  expect_vec(a, {7, 11, 15});
}

TEST(Assign, TensorsRealizedFromTheSameGraphDoNotShareUpdates) {
  // zeros(3).contiguous() is one interned graph: both realize to its one cached buffer
  Tensor a = Tensor::zeros({3}).contiguous().realize(),
         b = Tensor::zeros({3}).contiguous().realize();
  a.assign(a + 1).realize();
  b.assign(b + 2).realize();
  expect_vec(a, {1, 1, 1});
  expect_vec(b, {2, 2, 2});
  expect_vec(Tensor::zeros({3}).contiguous(), {0, 0, 0});  // and the cached value is not stale
}

TEST(Assign, WritesToRealizedConstantsAndJitResultsReachNoOtherTensor) {
  // a realized constant is not a buffer other constants start from
  Tensor ones = Tensor::ones({4}).realize();
  ones.assign(Tensor::full({4}, 5.0f)).realize();
  ones.assign(ones + 1).realize();
  expect_vec(Tensor::ones({4}).realize(), {1, 1, 1, 1});
  expect_vec(ones, {6, 6, 6, 6});
  // a replay's outputs, and an intermediate it also returns, are buffers of their own: writing
  // one kept from an earlier call changes neither later calls nor the other outputs
  tc::TinyJit step([](const std::vector<Tensor>& in) {
    Tensor y = (in[0] * 3).contiguous();
    Tensor r = y + 1;
    tc::realize_all({y, r});
    return std::vector<Tensor>{r, y};
  });
  std::vector<std::vector<Tensor>> kept;
  for (int i = 0; i < 5; i++) {
    kept.push_back(step({vec({static_cast<float>(i)}, {1})}));
    kept.back()[1].assign(Tensor::full({1}, -50.0f)).realize();
    kept.back()[1].assign(kept.back()[1] - 1).realize();  // in place, from the second write
  }
  for (int i = 0; i < 5; i++) {
    expect_vec(kept[i][0], {3.0f * static_cast<float>(i) + 1});
    expect_vec(kept[i][1], {-51});
  }
}

TEST(Assign, ValuesCachedFromTheOldContentsAreComputedAgain) {
  // w's transposed copy is one interned graph node: realized once (and kept alive by `held`),
  // it must not be reused after w is written in place, by an assign or by a replayed step that
  // assigns it (an optimizer step in a TinyJit, then an evaluation outside it)
  Tensor w = vec({1, 2, 3, 4}, {2, 2});
  w.assign(w + 0).realize();  // w now owns its buffer
  Tensor held = w.permute({1, 0}).contiguous();
  expect_vec(held * 2, {2, 6, 4, 8});
  w.assign(w + 10).realize();
  expect_vec(w.permute({1, 0}).contiguous() * 2, {22, 26, 24, 28});
  tc::TinyJit step([&](const std::vector<Tensor>& in) {
    w.assign(w + in[0]).realize();
    return std::vector<Tensor>{};
  });
  float total = 10;
  for (float add : {1.0f, 2.0f, 3.0f, 4.0f}) {  // plain run, capture, then replays
    step({vec({add, add, add, add}, {2, 2})});
    total += add;
    expect_vec(w.permute({1, 0}).contiguous() * 2,
               {2 * (1 + total), 2 * (3 + total), 2 * (2 + total), 2 * (4 + total)});
  }
}

TEST(Assign, ValuesCachedBeforeACaptureAreComputedInIt) {
  // the first call caches w's transposed copy (one interned node, kept alive by `held`); the
  // capture must compute it again, or replays would read that first copy after w changed
  Tensor w = vec({1, 2, 3, 4}, {2, 2});
  w.assign(w + 0).realize();
  Tensor held = w.permute({1, 0}).contiguous();
  tc::TinyJit f([&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[0] * w.permute({1, 0}).contiguous()).realize()};
  });
  Tensor x = vec({1, 1, 1, 1}, {2, 2});
  for (float add : {0.0f, 0.0f, 10.0f, 20.0f}) {  // plain run, capture, then replays
    if (add != 0) w.assign(w + add).realize();    // none between the first call and the capture
    float base = add == 20 ? 30 : add;
    expect_vec(f({x})[0], {1 + base, 3 + base, 2 + base, 4 + base});
  }
}

TEST(Assign, ReplaysSkipWorkOnUnchangedOutsideBuffers) {
  // w's transposed copy reads only w, which the step never writes: a replay runs it only when w
  // was written since (here by an assign between calls), and the product always
  Tensor w = vec({1, 2, 3, 4}, {2, 2});
  w.assign(w + 0).realize();
  tc::TinyJit f([&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[0] * w.permute({1, 0}).contiguous()).realize()};
  });
  Tensor x = vec({1, 1, 1, 1}, {2, 2});
  f({x});
  f({x});  // plain run, capture
  auto kernels = [&] {
    tc::engine::GlobalCounters::reset();
    std::vector<float> v = f({x})[0].data<float>();
    return std::make_pair(tc::engine::GlobalCounters::kernel_count, v);
  };
  EXPECT_EQ(kernels(), std::make_pair(int64_t{1}, V{1, 3, 2, 4}));
  w.assign(w * 2).realize();
  EXPECT_EQ(kernels(), std::make_pair(int64_t{2}, V{2, 6, 4, 8}));
  EXPECT_EQ(kernels(), std::make_pair(int64_t{1}, V{2, 6, 4, 8}));
}

TEST(Assign, ValueReadingOtherPositionsOfItselfIsComputedFirst) {
  Tensor a = vec({1, 2, 3, 4}, {4});
  a.assign(a.flip({0}) + a).realize();  // an in-place kernel would read overwritten elements
  expect_vec(a, {5, 5, 5, 5});
  Tensor b = vec({1, 2, 3, 4}, {2, 2});
  b.assign(b.permute({1, 0}) * 10 + b.sum(1, true)).realize();
  expect_vec(b, {13, 33, 27, 47});
}

TEST(Assign, ReadersRealizedTogetherSeeTheOldValue) {
  Tensor a = vec({1, 2}, {2}), b = vec({10, 20}, {2});
  Tensor sum = a + b;
  a.assign(a * 2);
  tc::realize_all({a, sum});  // sum is listed after a, but reads a before the update
  expect_vec(sum, {11, 22});
  expect_vec(a, {2, 4});
}

TEST(Assign, TargetsReadingEachOthersOldBuffersRealizedTogether) {
  Tensor c = vec({1, 2}, {2}), d = vec({10, 20}, {2});
  Tensor c_before(c.uop());  // a second tensor on c's buffer: its old value
  c.assign(c * 3);
  d.assign(d + c_before);
  tc::realize_all({c, d});
  expect_vec(c, {3, 6});
  expect_vec(d, {11, 22});
}

TEST(Assign, TargetsHoldingEachOthersNewValuesAreWrittenInPlaceInOrder) {
  // SGD with momentum and weight decay: the momentum's new value reads the weight's old one, the
  // weight's new value holds the momentum's new one. The momentum is written first, then the
  // weight from it: two kernels, each writing its own buffer, in either listed order.
  for (bool weight_first : {true, false}) {
    std::vector<float> w0 = {1, 2, 3, 4}, m0 = {0.5f, -1, 2, 0},
                       g0 = {0.125f, 0.25f, -0.375f, 0.5f};
    Tensor w = vec(w0, {4}), m = vec(m0, {4}), g = vec(g0, {4});
    w.assign(w + 0).realize();  // each owns its buffer from here on
    m.assign(m + 0).realize();
    const tc::runtime::Buffer *wb = w.uop()->buffer.get(), *mb = m.uop()->buffer.get();
    m.assign(m * 0.9f + g + w.detach() * 0.01f);
    w.assign(w.detach() - m * 0.1f);
    tc::engine::GlobalCounters::reset();
    tc::realize_all(weight_first ? std::vector<Tensor>{w, m} : std::vector<Tensor>{m, w});
    EXPECT_EQ(tc::engine::GlobalCounters::kernel_count, 2);
    std::vector<float> w1 = w.data<float>(), m1 = m.data<float>();
    for (size_t i = 0; i < 4; i++) {
      double mn = m0[i] * 0.9 + g0[i] + static_cast<double>(w0[i]) * 0.01;
      EXPECT_NEAR(m1[i], mn, 1e-6) << "momentum " << i;
      EXPECT_NEAR(w1[i], w0[i] - mn * 0.1, 1e-6) << "weight " << i;
    }
    EXPECT_EQ(w.uop()->buffer.get(), wb);
    EXPECT_EQ(m.uop()->buffer.get(), mb);
  }
  // each reading the other's old value: a cycle, so both are computed first and copied after
  Tensor a = vec({1, 2}, {2}), b = vec({10, 20}, {2});
  a.assign(a + 0).realize();
  b.assign(b + 0).realize();
  Tensor a_before(a.uop()), b_before(b.uop());
  a.assign(b_before + 1);
  b.assign(a_before + 1);
  tc::realize_all({a, b});
  expect_vec(a, {11, 21});
  expect_vec(b, {2, 3});
  // a swap: each value is the other's buffer itself, copied aside before either is written
  Tensor a_now(a.uop()), b_now(b.uop());
  a.assign(b_now);
  b.assign(a_now);
  tc::realize_all({a, b});
  expect_vec(a, {2, 3});
  expect_vec(b, {11, 21});
}

TEST(Assign, ShapeMismatchIsAnError) {
  Tensor a = vec({1, 2, 3}, {3});
  EXPECT_THAT(error_message([&] {
                a.assign(vec({1, 2}, {2}));
              }),
              HasSubstr("the value has shape (2,), the tensor (3,)"));
}

TEST(TinyJit, SetitemIntoAnInputNeverWritesABufferEqualGraphsShare) {
  // zeros(6, 6).contiguous() is one interned graph whose realized buffer every such tensor starts
  // from: a replay writing the input in place must not write that buffer (issue: later fresh
  // tensors read the 5.0 the last replay wrote)
  TinyJit f([](const std::vector<Tensor>& in) {
    Tensor t = in[0];
    t.setitem({tc::Slice(2, 4), tc::Slice(3, 5)}, in[1]);
    return std::vector<Tensor>{t};
  });
  for (int i = 1; i <= 5; i++) {
    Tensor t = Tensor::zeros({6, 6}).contiguous().realize();
    Tensor a = Tensor::full({2, 2}, static_cast<double>(i)).contiguous();
    Tensor out = f({t, a})[0];
    V want(36, 0.0f);
    for (int r = 2; r < 4; r++)
      for (int c = 3; c < 5; c++) want[r * 6 + c] = static_cast<float>(i);
    expect_vec(t, want);    // the caller's tensor holds the write, every call
    expect_vec(out, want);  // and the output is that tensor's value
  }
  EXPECT_TRUE(f.captured());
  Tensor fresh = Tensor::zeros({6, 6}).contiguous();
  fresh.setitem({tc::IndexItem(3), tc::IndexItem(4)}, 1.0);
  V want(36, 0.0f);
  want[3 * 6 + 4] = 1;
  expect_vec(fresh, want);
  expect_vec(Tensor::zeros({6, 6}).contiguous(), V(36, 0.0f));
}

// An input written in place at the capture (it owned its buffer) and replayed with one that does
// not (the buffer of an interned graph, full(...).contiguous()): the replay writes a buffer of the
// input's own, starting from the input's value, which the in-place kernel reads where it writes.
TEST(TinyJit, AnInPlaceWriteReplayedOnAnInputWithoutItsOwnBufferStartsFromItsValue) {
  TinyJit f([](const std::vector<Tensor>& in) {
    Tensor t = in[0];
    t.assign(t + in[1]);
    return std::vector<Tensor>{t};
  });
  for (int i = 1; i <= 4; i++) {
    float x = static_cast<float>(i);
    Tensor t = Tensor::full({3}, x).contiguous().realize();  // an interned graph's buffer
    if (i <= 2) t.assign(t * 1).realize();  // its own buffer: the capture writes it in place
    Tensor out = f({t, vec({10, 20, 30}, {3})})[0];
    expect_vec(t, {10 + x, 20 + x, 30 + x});
    expect_vec(out, {10 + x, 20 + x, 30 + x});
  }
  EXPECT_TRUE(f.captured());
  expect_vec(Tensor::full({3}, 4.0).contiguous(), {4, 4, 4});
  expect_vec(Tensor::full({3}, 3.0).contiguous(), {3, 3, 3});
}

TEST(TinyJit, AssignUpdatesPersistAcrossReplays) {
  // an SGD-like step: w -= 0.1 * (x * w), with a loss returned
  Tensor w = vec({1, 2, 3}, {3});
  TinyJit step([&](const std::vector<Tensor>& in) {
    Tensor loss = (in[0] * w).sum();
    w.assign(w - in[0] * w * 0.1f);
    tc::realize_all({loss, w});  // together: the loss reads w before the update
    return std::vector<Tensor>{loss};
  });
  V wh = {1, 2, 3};
  for (int call = 0; call < 6; call++) {
    V x = ramp(3, 0.5f + static_cast<float>(call), 0.5f);
    float loss = 0;
    for (int i = 0; i < 3; i++) loss += x[i] * wh[i];
    for (int i = 0; i < 3; i++) wh[i] = wh[i] - x[i] * wh[i] * 0.1f;
    EXPECT_NEAR(step({vec(x, {3})})[0].item<float>(), loss, 1e-4) << "call " << call;
    std::vector<float> got = w.data<float>();
    for (int i = 0; i < 3; i++) EXPECT_NEAR(got[i], wh[i], 1e-5) << "call " << call;
  }
}

// An assign the step leaves unrealized is written with the outputs, in every call and replay
// (the outputs here read the new value).
TEST(TinyJit, UnrealizedAssignInsideTheStepPersists) {
  Tensor w = vec({0, 0}, {2});
  TinyJit step([&](const std::vector<Tensor>& in) {
    w.assign(w + in[0]);
    return std::vector<Tensor>{w * 1};
  });
  V total = {0, 0};
  for (int call = 0; call < 5; call++) {
    V x = {1, static_cast<float>(call)};
    for (int i = 0; i < 2; i++) total[i] += x[i];
    expect_vec(step({vec(x, {2})})[0], total);
    expect_vec(w, total);
  }
}

// A real training loop (a 2-layer MLP, softmax cross-entropy, SGD with momentum-free updates)
// run with and without the JIT from the same start: bit-identical losses and weights every step,
// also with the planned memory poisoned before each replay.
TEST(TinyJit, TrainingLoopIsBitIdenticalToThePlainLoop) {
  auto run = [](bool jit) {
    Tensor w1 = vec(ramp(12, -0.3f, 0.05f), {4, 3}), w2 = vec(ramp(6, 0.2f, -0.07f), {3, 2});
    w1.requires_grad_(), w2.requires_grad_();
    auto step = [&](const std::vector<Tensor>& in) {
      Tensor logits = in[0].matmul(w1).relu().matmul(w2);
      Tensor loss = (logits.log_softmax(1) * in[1]).sum(1).mean().neg();
      loss.backward();
      w1.assign(w1.detach() - *w1.grad() * 0.5f);
      w2.assign(w2.detach() - *w2.grad() * 0.5f);
      w1.set_grad({}), w2.set_grad({});
      tc::realize_all({loss, w1, w2});
      return std::vector<Tensor>{loss};
    };
    TinyJit jitted(step);
    std::vector<float> trace;
    for (int s = 0; s < 6; s++) {
      V x = ramp(20, -1.0f + 0.1f * static_cast<float>(s), 0.13f), y(10, 0.0f);
      for (int r = 0; r < 5; r++) y[r * 2 + (r + s) % 2] = 1;
      std::vector<Tensor> in = {vec(x, {5, 4}), vec(y, {5, 2})};
      trace.push_back((jit ? jitted(in) : step(in))[0].item<float>());
      for (float v : w1.data<float>()) trace.push_back(v);
      for (float v : w2.data<float>()) trace.push_back(v);
    }
    return trace;
  };
  V plain = run(false), jitted = run(true);
  setenv("JIT_POISON", "1", 1);
  V poisoned = run(true);
  unsetenv("JIT_POISON");
  ASSERT_EQ(plain.size(), jitted.size());
  for (size_t i = 0; i < plain.size(); i++) {
    EXPECT_EQ(plain[i], jitted[i]) << "value " << i;  // bit-identical: the same kernels ran
    EXPECT_EQ(plain[i], poisoned[i]) << "value " << i;
  }
  EXPECT_NE(plain[0], plain[plain.size() / 6]);  // it trained: the loss moved
}

TEST(TinyJit, MemoryPlannerSharesBuffersWithDisjointLifetimes) {
  TinyJit chain([](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    for (int i = 0; i < 6; i++) x = (x * 2 + 1).contiguous();  // one kernel and buffer each
    return std::vector<Tensor>{x};
  });
  for (int call = 0; call < 4; call++) {
    V in = ramp(1024, static_cast<float>(call)), want;
    for (float v : in) {
      for (int i = 0; i < 6; i++) v = v * 2 + 1;
      want.push_back(v);
    }
    expect_vec(chain({vec(in, {1024})})[0], want);
  }
  EXPECT_EQ(chain.kernel_count(), 6u);
  EXPECT_EQ(chain.unplanned_bytes(), 5 * 1024 * 4);  // the 5 intermediates
  EXPECT_EQ(chain.planned_bytes(), 2 * 1024 * 4);    // two alternating blocks serve them
}

TEST(TinyJit, MemoryPlannerSharesBuffersAGraphKeptOutsideReads) {
  std::optional<Tensor> kept;  // held across calls, as a gradient's graph is until zero_grad
  V captured_input;
  TinyJit chain([&](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    for (int i = 0; i < 6; i++) x = (x * 2 + 1).contiguous();
    kept = x * 3;  // never realized: its graph holds every intermediate
    return std::vector<Tensor>{x};
  });
  auto chained = [](float v) {
    for (int i = 0; i < 6; i++) v = v * 2 + 1;
    return v;
  };
  for (int call = 0; call < 4; call++) {
    V in = ramp(1024, static_cast<float>(call)), want;
    if (call == 1) captured_input = in;
    for (float v : in) want.push_back(chained(v));
    expect_vec(chain({vec(in, {1024})})[0], want);
  }
  // the intermediates are the step's own all the same
  EXPECT_EQ(chain.unplanned_bytes(), 5 * 1024 * 4);
  EXPECT_EQ(chain.planned_bytes(), 2 * 1024 * 4);
  // the kept graph (from the capture) computes what it says, from the capture's input
  V want;
  for (float v : captured_input) want.push_back(chained(v) * 3);
  expect_vec(*kept, want);
}

// Call 1 runs plainly but, as the capture plans, an intermediate's memory serves later kernels once
// its last reader ran; the graph forgets the freed value, so reading it afterwards computes it
// again (a stale read would see what later kernels wrote there).
TEST(TinyJit, PlainCallFreesIntermediatesAfterTheirLastRead) {
  std::optional<Tensor> third;
  TinyJit chain([&](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    for (int i = 0; i < 6; i++) {
      x = (x * 2 + 1).contiguous();  // one kernel and buffer each
      if (i == 2) third = x;
    }
    return std::vector<Tensor>{x};
  });
  const int n = 777;  // a size no other test's blocks have
  V in = ramp(n, 1), want, want_third;
  for (float v : in) {
    for (int i = 0; i < 6; i++) {
      v = v * 2 + 1;
      if (i == 2) want_third.push_back(v);
    }
    want.push_back(v);
  }
  Tensor input = vec(in, {n});
  tc::runtime::Allocator& memory = tc::runtime::get_device(input.device()).allocator();
  memory.clear_cache();
  size_t hits = memory.cache_hits();
  expect_vec(chain({input})[0], want);
  // values 3..6 each took the block of the value two before it, read by then
  EXPECT_EQ(memory.cache_hits(), hits + 4);
  expect_vec(*third, want_third);
}

// DEBUG=2 times and prints each replayed launch as a plain realize prints its kernels, and counts
// the same work (GlobalCounters) for the same step.
TEST(TinyJit, ReplayedLaunchesArePrintedAndCountedUnderDebug2) {
  TinyJit chain([](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    for (int i = 0; i < 3; i++) x = (x * 2 + 1).contiguous();
    return std::vector<Tensor>{x};
  });
  using tc::engine::GlobalCounters;
  setenv("DEBUG", "2", 1);
  std::vector<std::string> printed;
  std::vector<double> ops;
  for (int call = 0; call < 3; call++) {
    Tensor in = vec(ramp(256, static_cast<float>(call)), {256});  // realized before counting
    GlobalCounters::reset();
    ::testing::internal::CaptureStdout();
    chain({in})[0].realize();
    printed.push_back(::testing::internal::GetCapturedStdout());
    ops.push_back(GlobalCounters::global_ops);
    EXPECT_EQ(GlobalCounters::kernel_count, 3) << "call " << call;
  }
  unsetenv("DEBUG");
  EXPECT_EQ(ops[2], ops[0]);  // the replay did the plain call's work
  EXPECT_GT(ops[2], 0);
  std::string replay = printed[2];
  int lines = 0;
  for (size_t at = 0; (at = replay.find("*** ", at)) != std::string::npos; at++) lines++;
  EXPECT_EQ(lines, 3) << replay;
  EXPECT_THAT(replay, HasSubstr("GFLOPS"));
}

TEST(TinyJit, VariableBoundPerCallServesOneCapture) {
  // a KV-cache-like step: write x at position `pos`, return the sum of the first pos+1 entries
  tc::Variable pos("start_pos", 0, 7);
  Tensor cache = Tensor::zeros({8}).contiguous().realize();
  int traced = 0;
  TinyJit step([&](const std::vector<Tensor>& in) {
    traced++;
    Tensor idx = Tensor::arange(8).cast(tc::dtypes::int32);
    cache.assign(idx.eq(pos.tensor()).where(in[0], cache));
    Tensor upto = idx.le(pos.tensor()).where(cache, 0.0f).sum();
    tc::realize_all({cache, upto});
    return std::vector<Tensor>{upto};
  });
  V host(8, 0.0f);
  for (int p = 0; p < 7; p++) {
    pos.bind(p);
    float x = 1.5f * static_cast<float>(p + 1);
    host[p] = x;
    float want = 0;
    for (int i = 0; i <= p; i++) want += host[i];
    EXPECT_FLOAT_EQ(step({vec({x}, {1})})[0].item<float>(), want) << "pos " << p;
    expect_vec(cache, host);
  }
  EXPECT_EQ(traced, 2);
  EXPECT_THAT(error_message([&] { pos.bind(8); }),
              HasSubstr("Variable start_pos: value 8 is outside its range [0, 7]"));
  EXPECT_THAT(error_message([] { tc::Variable("n", 5, 1); }),
              HasSubstr("min 5 is greater than max 1"));
}

// Found by tests/fuzz/tensor_fuzz.cc: a step that only reshapes its input returns the input's
// buffer, in the output's shape, on every replay.
TEST(TinyJit, AnInputReturnedReshapedKeepsTheOutputShape) {
  TinyJit step([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0].reshape({6}).contiguous().realize()};
  });
  for (int i = 0; i < 4; i++) {
    V x = {1, 2, 3, 4, 5, static_cast<float>(i)};
    Tensor out = step({vec(x, {2, 3})})[0];
    EXPECT_EQ(out.shape(), (tc::Shape{6})) << "call " << i;
    expect_vec(out, x);
  }
}

TEST(TinyJit, WindowAtAVariableStartWritesTheRowThePerCallValueNames) {
  // tinygrad's t.shrink(((v, v+1), None)).assign(a): one capture writes row v of every call,
  // read back through the same window; checked against a host copy
  tc::Variable v("v", 0, 5);
  Tensor t = Tensor::zeros({6, 4}).contiguous().realize();
  TinyJit step([&](const std::vector<Tensor>& in) {
    Tensor row = t.shrink_from(0, v.tensor(), 1);
    row.assign(in[0]);
    Tensor next = t.shrink_from(0, v.tensor().add(1), 1).sum();  // past the end reads 0
    tc::realize_all({t, next});
    return std::vector<Tensor>{next};
  });
  V host(24, 0.0f);
  for (int i = 0; i < 6; i++) {
    v.bind(5 - i);  // rows from the last up, so each call's next row is the one written before
    V row(4);
    for (int c = 0; c < 4; c++) row[c] = static_cast<float>(10 * i + c);
    for (int c = 0; c < 4; c++) host[(5 - i) * 4 + c] = row[c];
    float want = 0;
    for (int c = 0; c < 4 && i > 0; c++) want += host[(6 - i) * 4 + c];
    EXPECT_FLOAT_EQ(step({vec(row, {1, 4})})[0].item<float>(), want) << "call " << i;
    expect_vec(t, host);
  }
  EXPECT_TRUE(step.captured());
  EXPECT_THAT(error_message([&] { (void)t.shrink_from(0, v.tensor(), 7); }),
              HasSubstr("length 7 is out of bounds for dimension 0 of shape (6, 4)"));
  EXPECT_THAT(error_message([&] { (void)t.shrink_from(1, Tensor::full({}, 1.5), 1); }),
              HasSubstr("the start must be a 0-d integer tensor, got float"));
}

// tinygrad's test_jit_footguns.py, case by case: each either replays correctly or is a JitError
// before anything runs. Its tests and where each is here:
//   output_buffer_reuse, output_buffer_workaround: TinyJit.OutputsOfEarlierCallsAreNotOverwritten
//   graph_input_output_aliasing, multiple_outputs_same_intermediate: OutputsFedBackAsInputs...
//   intra_kernel_output_input_aliasing: AnOutputFedBackIsReadWholeBeforeTheStepWritesIt
//   slice_assign_works_without_realize: TinyJit.WindowAtAVariableStartWritesTheRow...
//   symbolic_pad_view_frozen: AMaskedVariableLengthFollowsEachReplay
//   duplicate_inputs_fail: OneTensorAsTwoInputsFailsOnTheFirstCall
//   nested_jit_fails_on_second_call: TinyJit.NestedJitIsAnError (on the first call)
//   implicit_inputs_need_realize, random_regenerates: OutsideTensorsAssigned...AndRandomDraws...
//   views_with_different_offsets_fail, unrealized_const_input_error: ConstantsAndViews...
//   shape_change_after_capture_fails, item_*, tolist_*: HostReadsAndShapeChangesAreJitErrors
//   nothing_realized_fails: NothingRealizedFailsWhenCaptured
//   masked_select/nonzero_static_size_jittable: StaticSizeMaskedSelectAndNonzeroReplay
//   python_constants_frozen, conditional_branches_frozen, side_effects_only_during_capture
//   (inherent to a tracing JIT, as tinygrad keeps them): TinyJit.ReplaysWithNewInputsAndWithout...
//   input_mutation_consistent, unrealized_return_auto_realized: TinyJit.AssignUpdatesPersist...
// Argument binding (kwargs order, positional or keyword), tensors in containers, methods per
// instance and non-Tensor return values are the Python wrapper's: tests/python/test_jit.py.
template <typename F>
void expect_jit_error(F f, const char* phrase) {
  EXPECT_THAT(error_message<tc::JitError>(f), HasSubstr(phrase));
}

TEST(TinyJitFootguns, OneTensorAsTwoInputsFailsOnTheFirstCall) {
  TinyJit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + in[1]}; });
  Tensor x = vec(ramp(3, 1), {3});
  expect_jit_error([&] { f({x, x}); }, "inputs 0 and 1 are the same tensor");
  Tensor lazy =
      Tensor(ramp(3, 1), tc::Shape{3}) * 2;  // unrealized: copied to be contiguous, still one
  expect_jit_error([&] { f({lazy, lazy}); }, "inputs 0 and 1 are the same tensor");
  EXPECT_EQ(f.calls(), 0);
}

// Two tensors that realize to one buffer (equal graphs are one node; a reshape of a realized
// tensor is its buffer) are two inputs: each call may give them different buffers after.
TEST(TinyJitFootguns, DistinctTensorsOnOneBufferAreTwoInputs) {
  auto step = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2 + in[1]}; };
  TinyJit equal(step), view(step);
  for (int call = 0; call < 6; call++) {
    float k = static_cast<float>(call);
    if (call % 2 == 0) {
      Tensor a = Tensor::full({3}, k) * 2, b = Tensor::full({3}, k) * 2;  // one graph, two tensors
      expect_vec(equal({a, b})[0], {6 * k, 6 * k, 6 * k});
    } else {
      expect_vec(equal({vec(ramp(3, k), {3}), vec(ramp(3, 1), {3})})[0],
                 {2 * k + 1, 2 * k + 4, 2 * k + 7});
    }
    Tensor base = vec(ramp(3, k), {3});
    expect_vec(view({base, base.reshape({1, 3})})[0], {3 * k, 3 * k + 3, 3 * k + 6});
  }
}

TEST(TinyJitFootguns, NothingRealizedFailsWhenCaptured) {
  TinyJit f([](const std::vector<Tensor>&) { return std::vector<Tensor>{}; });
  f({vec(ramp(1, 1), {1})});
  expect_jit_error([&] { f({vec(ramp(1, 1), {1})}); }, "ran no kernel and returned no tensor");
}

TEST(TinyJitFootguns, HostReadsAndShapeChangesAreJitErrors) {
  TinyJit f([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0] * in[0].sum().item<float>()};
  });
  f({vec(ramp(3, 1), {3})});
  expect_jit_error([&] { f({vec(ramp(3, 1), {3})}); }, "Tensor.data/item/tolist inside a TinyJit");
  TinyJit g([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1}; });
  for (int i = 0; i < 2; i++) g({vec(ramp(4, 0), {2, 2})});
  expect_jit_error(
      [&] {
        g({vec(ramp(16, 0), {4, 4})});
      },
      "input 0 has shape (4, 4), captured with (2, 2)");
}

// tinygrad refuses both (a const has no buffer; a view's offset is frozen): here each input is
// copied into a contiguous buffer first, so every replay reads the value of its call
TEST(TinyJitFootguns, ConstantsAndViewsAtNewOffsetsReplayCorrectly) {
  TinyJit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * in[1]}; });
  for (int call = 0; call < 5; call++) {
    float k = static_cast<float>(call + 2);
    expect_vec(f({vec({1, 2, 3}, {3}), Tensor::full({}, k)})[0], {k, 2 * k, 3 * k});
  }
  TinyJit g([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1}; });
  Tensor base = vec(ramp(100, 0), {10, 10});
  for (int i = 1; i < 6; i++) {
    std::vector<Tensor> out = g({base.shrink({{0, 10}, {i, i + 2}})});
    V want;
    for (int r = 0; r < 10; r++)
      for (int c = i; c < i + 2; c++) want.push_back(static_cast<float>(r * 10 + c) + 1);
    expect_vec(out[0], want);
  }
}

// The LLM generate pattern: an output fed back as the next input, then a new input (tinygrad's
// graph runner once kept the output's buffer as the input); and outputs built from one
// intermediate (a window of a buffer and the new frame).
TEST(TinyJitFootguns, OutputsFedBackAsInputsThenANewInput) {
  TinyJit step([](const std::vector<Tensor>& in) {
    Tensor y = (in[0] + 1).realize();
    return std::vector<Tensor>{(y * 2).realize()};
  });
  step({vec({10}, {1})});
  Tensor x = step({vec({20}, {1})})[0];
  for (int i = 0; i < 3; i++) x = step({x})[0];
  expect_vec(x, {350});
  Tensor y = vec({100}, {1});
  for (int i = 0; i < 3; i++) y = step({y})[0];
  expect_vec(y, {814});

  TinyJit shift([](const std::vector<Tensor>& in) {
    Tensor next = in[0].shrink({{1, 3}, {0, 1}}).cat({in[1]}, 0);
    return std::vector<Tensor>{next.contiguous(), next.shrink({{0, 1}, {0, 1}}).contiguous()};
  });
  Tensor buf = vec({0, 1, 2}, {3, 1});
  for (int i = 0; i < 5; i++) {
    float first = buf.data<float>()[1];
    std::vector<Tensor> out = shift({buf, vec({10.0f + static_cast<float>(i)}, {1, 1})});
    expect_vec(out[1], {first});
    buf = out[0];
  }
}

// A tensor the function reads from outside is read from its buffer on each replay: assigned
// (and realized) between calls, the replay sees the new value. Random draws advance each replay.
TEST(TinyJitFootguns, OutsideTensorsAssignedBetweenCallsAndRandomDrawsAreSeen) {
  Tensor outside = vec({0}, {1});
  TinyJit f(
      [&](const std::vector<Tensor>&) { return std::vector<Tensor>{(outside * 2).realize()}; });
  for (int i = 0; i < 5; i++) {
    outside.assign(Tensor(V{static_cast<float>(i)}, tc::Shape{1})).realize();
    expect_vec(f({})[0], {2.0f * static_cast<float>(i)});
  }
  TinyJit r(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + Tensor::rand({3})}; });
  std::vector<std::vector<float>> seen;
  for (int i = 0; i < 6; i++) seen.push_back(r({vec({0, 0, 0}, {3})})[0].data<float>());
  for (int i = 1; i < 6; i++) EXPECT_NE(seen[i], seen[i - 1]) << "call " << i;
}

// An output fed back is read whole by the kernel that writes the next one (the window of the
// old buffer and the new half): the step must not write into the buffer it reads.
TEST(TinyJitFootguns, AnOutputFedBackIsReadWholeBeforeTheStepWritesIt) {
  const int64_t n = 1 << 12;
  TinyJit f([n](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0].shrink({{n / 2, n}}).cat({in[1]}, 0)};
  });
  Tensor buf = Tensor::zeros({n}, tc::dtypes::int32).contiguous().realize();
  for (int i = 0; i < 8; i++) {
    buf = f({buf, Tensor::full({n / 2}, i + 1, tc::dtypes::int32).contiguous().realize()})[0];
    std::vector<int32_t> got = buf.data<int32_t>();
    for (int64_t k = 0; k < n; k++)
      ASSERT_EQ(got[k], k < n / 2 ? i : i + 1) << "call " << i << ", element " << k;
  }
}

// tinygrad's symbolic pad: a length known per call (a[:, :v] padded back to 10) is written at its
// maximum and masked by the Variable, so every replay keeps the bound value's columns (tinygrad
// replays the capture's).
TEST(TinyJitFootguns, AMaskedVariableLengthFollowsEachReplay) {
  tc::Variable len("i", 1, 10);
  V a = ramp(30, 1);
  TinyJit f([&](const std::vector<Tensor>& in) {
    Tensor col = Tensor::arange(10).cast(tc::dtypes::int32).reshape({1, 10});
    return std::vector<Tensor>{col.lt(len.tensor()).where(in[0] + 1, 0.0f).realize()};
  });
  for (int i : {1, 2, 3, 4, 9, 4, 10, 6}) {
    len.bind(i);
    V want(30, 0.0f);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < i; c++) want[r * 10 + c] = a[r * 10 + c] + 1;
    expect_vec(f({vec(a, {3, 10})})[0], want);
  }
}

TEST(TinyJitFootguns, StaticSizeMaskedSelectAndNonzeroReplay) {
  TinyJit select([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0].masked_select(in[1], 4, -1).realize()};
  });
  TinyJit nonzero([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0].nonzero(3, -1).realize()};
  });
  auto mask = [](std::vector<bool> m) {
    std::vector<float> f(m.begin(), m.end());
    return Tensor(f, tc::Shape{4}).cast(tc::dtypes::bool_).realize();
  };
  for (int round = 0; round < 3; round++) {
    expect_vec(select({vec({1, 2, 3, 4}, {4}), mask({true, false, true, false})})[0],
               {1, 3, -1, -1});
    expect_vec(select({vec({5, 6, 7, 8}, {4}), mask({false, true, true, true})})[0], {6, 7, 8, -1});
    expect_vec(select({vec({1, 1, 1, 1}, {4}), mask({false, false, false, false})})[0],
               {-1, -1, -1, -1});
    EXPECT_EQ(nonzero({vec({1, 0, 2, 0, 3}, {5})})[0].data<int32_t>(),
              (std::vector<int32_t>{0, 2, 4}));
    EXPECT_EQ(nonzero({vec({0, 0, 5, 0, 0}, {5})})[0].data<int32_t>(),
              (std::vector<int32_t>{2, -1, -1}));
  }
}

}  // namespace
