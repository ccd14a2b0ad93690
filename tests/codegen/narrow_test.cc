// Narrowed reduce loops (codegen/narrow.h): a conv over a widely padded input, read in place,
// runs its window's loops only where the input is, with no gated loads left, for the
// heuristic's options; every other option set (register tiles across the window's rows, lanes)
// gives the same values. Values against double-precision loops.
#include "tinycore/codegen/narrow.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "absl/strings/str_format.h"
#include "tinycore/codegen/kernel.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/opts.h"
#include "tinycore/engine/realize.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace tc::codegen {
namespace {

std::vector<float> random_values(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// y[b][o][i][j] = sum over c, ky, kx of x[b][c][i + ky - p][j + kx - p] * w[o][c][ky][kx], zero
// outside x: a stride-1 conv over x padded by p on every side.
std::vector<double> padded_conv(const std::vector<float>& x, const std::vector<float>& w, int B,
                                int C, int H, int O, int K, int p) {
  int out = H + 2 * p - K + 1;
  std::vector<double> y(static_cast<size_t>(B) * O * out * out);
  for (int b = 0; b < B; b++)
    for (int o = 0; o < O; o++)
      for (int i = 0; i < out; i++)
        for (int j = 0; j < out; j++) {
          double s = 0;
          for (int c = 0; c < C; c++)
            for (int ky = 0; ky < K; ky++)
              for (int kx = 0; kx < K; kx++) {
                int yy = i + ky - p, xx = j + kx - p;
                if (yy < 0 || yy >= H || xx < 0 || xx >= H) continue;
                s +=
                    double(x[((b * C + c) * H + yy) * H + xx]) * w[((o * C + c) * K + ky) * K + kx];
              }
          y[((b * O + o) * out + i) * out + j] = s;
        }
  return y;
}

// Runs the schedule's items in order with plain options, the last with `opts`; its output.
std::vector<float> run_last(const std::vector<schedule::ScheduleItem>& items,
                            const KernelOpts& opts) {
  std::vector<float> out;
  for (size_t i = 0; i < items.size(); i++) {
    const schedule::ScheduleItem& item = items[i];
    runtime::Device& dev = item.bufs[0]->buffer->device();
    auto k = build_kernel(lower(item.ast), dev, i + 1 == items.size() ? opts : KernelOpts{});
    std::vector<void*> ptrs;
    for (const UOpRef& b : item.bufs) ptrs.push_back(b->buffer->ensure_allocated());
    k->binary->run(ptrs.data(), 1);
    if (i + 1 == items.size()) {
      out.resize(item.bufs[0]->buffer->nbytes() / sizeof(float));
      item.bufs[0]->buffer->copyout(out.data(), item.bufs[0]->buffer->nbytes());
    }
  }
  return out;
}

TEST(Narrow, AWidelyPaddedConvLoopsOnlyWhereItsInputIs) {
  constexpr int B = 16, C = 8, H = 6, O = 16, K = 3, P = 2;  // a transposed 3x3 conv's padding
  std::mt19937 rng(3);
  std::vector<float> xv = random_values(B * C * H * H, rng), wv = random_values(O * C * K * K, rng);
  Tensor x = Tensor(xv, Shape{B, C, H, H}).realize(), w = Tensor(wv, Shape{O, C, K, K}).realize();
  Tensor y = x.pad({{0, 0}, {0, 0}, {P, P}, {P, P}}).conv2d(w);
  std::vector<double> want = padded_conv(xv, wv, B, C, H, O, K, P);

  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({y.uop()});
  const UOpRef& conv = items.back().ast;
  Target avx512{64, 32, true};
  KernelOpts chosen = choose_opts(lower(conv), avx512);
  EXPECT_EQ(chosen.unroll_axis, 0) << chosen.key();  // the batch: no gate depends on it
  // the window's rows and columns loop over where the input is, and no load is gated
  LinearKernel k = linearize_kernel(lower(conv), chosen);
  std::vector<int64_t> narrowed;
  int gated = 0;
  for (const UOp* u : k.sink->toposort()) {
    if (u->op == Ops::RANGE && u->src[0]->op != Ops::CONST) narrowed.push_back(u->arg_int());
    gated += u->op == Ops::LOAD && u->src.size() == 2;
  }
  EXPECT_EQ(narrowed.size(), 2u);
  EXPECT_EQ(gated, 0);
  // its flops count what it computes (each input row and column meets the window K times), and
  // LLVM is told not to unroll the narrowed loops (their length varies)
  auto built = build_kernel(lower(conv), items.back().bufs[0]->buffer->device(), chosen);
  EXPECT_DOUBLE_EQ(built->flops, 2.0 * B * O * C * (H * K) * (H * K));
  for (int64_t n : narrowed)
    EXPECT_NE(built->source.find(absl::StrFormat("br label %%loop%d, !llvm.loop", n)),
              std::string::npos)
        << built->source;

  // the heuristic's options, a register tile across the output's columns (the window's columns
  // stay gated there), lanes on them, and none
  KernelOpts columns = chosen, lanes, plain;
  columns.unroll_axis = 3, columns.unroll = 2;
  lanes.lane_axis = 3, lanes.lanes = 4;
  for (const KernelOpts& o : {chosen, columns, lanes, plain}) {
    std::vector<float> got = run_last(items, o);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); i++)
      ASSERT_NEAR(got[i], want[i], 1e-4) << o.key() << " at " << i;
  }
}

// A one-hot matmul (an embedding's lookup, a gather) is one kernel whose reduce loop narrows to
// the one row its index names: no register tile across the rows (each narrows differently), and
// the looked-up rows are the table's, an index out of range giving zeros.
TEST(Narrow, AOneHotMatmulReadsOnlyTheRowsItsIndicesName) {
  constexpr int V = 5000, D = 32;
  std::mt19937 rng(5);
  std::vector<float> wv = random_values(V * D, rng);
  Tensor w = Tensor(wv, Shape{V, D}).realize();
  std::vector<int32_t> ids = {3, 4999, 0, 17, 17, 2500, -1, 5000};
  Tensor tokens = Tensor::from_vector(ids, Shape{8}).realize();
  auto make_y = [&] { return tokens.one_hot(V).cast(dtypes::float32).matmul(w); };
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({make_y().uop()});
  ASSERT_EQ(items.size(), 1u);
  Target avx512{64, 32, true};
  KernelOpts chosen = choose_opts(lower(items[0].ast), avx512);
  EXPECT_EQ(chosen.unroll, 1) << chosen.key();
  LinearKernel k = linearize_kernel(lower(items[0].ast), chosen);
  int narrowed = 0;
  for (const UOp* u : k.sink->toposort())
    narrowed += u->op == Ops::RANGE && u->src[0]->op != Ops::CONST;
  EXPECT_EQ(narrowed, 1);
  std::vector<float> got = make_y().data<float>();
  for (size_t t = 0; t < ids.size(); t++)
    for (int d = 0; d < D; d++) {
      bool inside = ids[t] >= 0 && ids[t] < V;
      ASSERT_EQ(got[t * D + d], inside ? wv[ids[t] * D + d] : 0.0f) << "token " << ids[t];
    }
  // a table read across its rows (transposed: lanes along D would gather) takes no lanes on the
  // tokens either, which the test depends on: each lane would read its own row, and the loop
  // would run whole (8 decode streams' embeddings of a repacked Q8_0 table took 550 ms a step)
  Tensor wt = Tensor(wv, Shape{D, V}).realize();
  auto make_t = [&] { return tokens.one_hot(V).cast(dtypes::float32).matmul(wt.T()); };
  items = schedule::create_schedule({make_t().uop()});
  ASSERT_EQ(items.size(), 1u);
  chosen = choose_opts(lower(items[0].ast), avx512);
  EXPECT_NE(chosen.lane_axis, 0) << chosen.key();
  narrowed = 0;
  k = linearize_kernel(lower(items[0].ast), chosen);
  for (const UOp* u : k.sink->toposort())
    narrowed += u->op == Ops::RANGE && u->src[0]->op != Ops::CONST;
  EXPECT_EQ(narrowed, 1) << chosen.key();
  got = make_t().data<float>();
  for (size_t t = 0; t < ids.size(); t++)
    for (int d = 0; d < D; d++) {
      bool inside = ids[t] >= 0 && ids[t] < V;
      ASSERT_EQ(got[t * D + d], inside ? wv[d * V + ids[t]] : 0.0f) << "token " << ids[t];
    }
}

// Terms not zero outside the pad (each window element of a padded input plus one, summed) keep
// every iteration: nothing is narrowed, and the sums count the padding's ones.
TEST(Narrow, TermsThatAreNotZeroOutsideKeepTheirLoops) {
  constexpr int C = 2, H = 5, P = 2, K = 3, out = H + 2 * P - K + 1;
  std::mt19937 rng(4);
  std::vector<float> xv = random_values(C * H * H, rng);
  Tensor x = Tensor(xv, Shape{1, C, H, H}).realize();
  Tensor windows = x.pad({{0, 0}, {0, 0}, {P, P}, {P, P}}).pool({K, K});
  ASSERT_EQ(windows.shape(), (Shape{1, C, out, out, K, K}));
  auto make_y = [&] { return (windows + 1).sum({-2, -1}); };
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({make_y().uop()});
  LinearKernel k = linearize_kernel(lower(items.back().ast), KernelOpts{});
  for (const UOp* u : k.sink->toposort())
    EXPECT_FALSE(u->op == Ops::RANGE && u->src[0]->op != Ops::CONST) << "a narrowed loop";
  std::vector<float> got = make_y().data<float>();
  for (int c = 0; c < C; c++)
    for (int i = 0; i < out; i++)
      for (int j = 0; j < out; j++) {
        double s = 0;
        for (int ky = 0; ky < K; ky++)
          for (int kx = 0; kx < K; kx++) {
            int yy = i + ky - P, xx = j + kx - P;
            bool in = yy >= 0 && yy < H && xx >= 0 && xx < H;
            s += (in ? xv[(c * H + yy) * H + xx] : 0.0) + 1;
          }
        ASSERT_NEAR(got[(c * out + i) * out + j], s, 1e-4) << c << " " << i << " " << j;
      }
}

// A write in place at one position of a loop (each row's new token into its KV cache slot:
// where(slot == pos, new, cache)) runs without that loop, a row per batch entry rather than the
// whole cache; a position out of range writes nothing.
TEST(Narrow, AWriteInPlaceAtOnePositionRunsWithoutThatLoop) {
  constexpr int B = 3, S = 16, D = 8;
  std::mt19937 rng(6);
  std::vector<float> want = random_values(B * S * D, rng);
  Tensor cache = Tensor(want, Shape{B, S, D}).realize();
  Tensor slot = Tensor::arange(S).cast(dtypes::int32).reshape({1, S, 1});
  auto write = [&](std::vector<int32_t> pos) {
    std::vector<float> row = random_values(B * D, rng);
    for (int b = 0; b < B; b++)
      for (int d = 0; pos[b] >= 0 && pos[b] < S && d < D; d++)
        want[(b * S + pos[b]) * D + d] = row[b * D + d];
    Tensor here = slot.eq(Tensor::from_vector(pos, Shape{B, 1, 1}));
    cache.assign(here.where(Tensor(row, Shape{B, 1, D}), cache));
  };
  write({5, 0, 15});
  cache.realize();  // the first write goes to a buffer of the cache's own, the next in place
  write({6, 16, -1});
  std::vector<engine::Launch> launches;
  std::vector<UOpRef> marked;
  {
    engine::LaunchCapture capture(&launches, &marked);
    cache.realize();
  }
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].kernel->name, "E_3_8");
  EXPECT_EQ(cache.data<float>(), want);
}

// Realizes t: the loops narrowed (their ends read at run time) in the kernels that ran. The disk
// cache is off: a kernel read back from it keeps no linearized program to look at.
int narrowed_loops(Tensor t) {
  std::vector<engine::Launch> launches;
  std::vector<UOpRef> marked;
  const char* was = std::getenv("DISABLE_COMPILER_CACHE");
  std::string saved = was ? was : "";
  setenv("DISABLE_COMPILER_CACHE", "1", 1);
  {
    engine::LaunchCapture capture(&launches, &marked);
    t.realize();
  }
  if (was)
    setenv("DISABLE_COMPILER_CACHE", saved.c_str(), 1);
  else
    unsetenv("DISABLE_COMPILER_CACHE");
  int n = 0;
  for (const engine::Launch& l : launches)
    for (const UOpRef& u : l.kernel->program)
      n += u->op == Ops::RANGE && u->src[0]->op != Ops::CONST;
  return n;
}

// A decode step's attention over a KV cache of S slots, each row at its own position, as
// nn/kv_cache.h computes it: the scores' output loop over the slots runs to the position and a
// loop after it stores the zeros of the rest (over what the buffer held: NaN here), and the max
// and the sum over the slots (in lanes and unrolled copies, each term gated by its own lanes)
// stop there too. Values against double loops, at positions at the start, inside, at the end,
// past the end and before the start of the cache.
TEST(Narrow, LoopsOverAKvCacheStopAtEachRowsPosition) {
  constexpr int B = 5, S = 300, D = 64;
  const double inf = std::numeric_limits<double>::infinity();
  std::mt19937 rng(7);
  std::vector<float> qv = random_values(B * D, rng), kv = random_values(S * D, rng);
  std::vector<int32_t> pos = {0, 37, 299, 400, -1};
  Tensor q = Tensor(qv, Shape{B, 1, D}).realize(), keys = Tensor(kv, Shape{S, D}).realize();
  Tensor p = Tensor::from_vector(pos, Shape{B, 1}).realize();
  Tensor seen = Tensor::arange(S).cast(dtypes::int32).reshape({1, S}).lt(p + 1);  // (B, S)
  Tensor scores = Tensor::full({B, S}, std::nan("")).contiguous().realize();
  scores.assign(q.matmul(seen.reshape({B, S, 1}).where(keys, 0.0).transpose(1, 2)).reshape({B, S}));
  EXPECT_EQ(narrowed_loops(scores), 2);  // the slots up to the position, and the rest
  Tensor m = seen.where(scores, -inf).max(-1, true);
  EXPECT_GE(narrowed_loops(m), 1);
  Tensor l = seen.where((scores - m).exp(), 0.0).sum(-1);
  EXPECT_GE(narrowed_loops(l), 1);
  std::vector<float> got_s = scores.data<float>(), got_m = m.data<float>(), got_l = l.data<float>();
  for (int b = 0; b < B; b++) {
    double most = -inf, sum = 0;
    std::vector<double> want(S, 0.0);
    for (int t = 0; t < S && t <= pos[b]; t++) {
      for (int d = 0; d < D; d++) want[t] += double(qv[b * D + d]) * kv[t * D + d];
      most = std::max(most, want[t]);
    }
    for (int t = 0; t < S && t <= pos[b]; t++) sum += std::exp(want[t] - most);
    for (int t = 0; t < S; t++) ASSERT_NEAR(got_s[b * S + t], want[t], 1e-4) << b << " " << t;
    EXPECT_TRUE(got_m[b] == most || std::abs(got_m[b] - most) < 1e-4) << got_m[b] << " " << most;
    EXPECT_NEAR(got_l[b], sum, 1e-3 * sum) << b;
  }
}

}  // namespace
}  // namespace tc::codegen
