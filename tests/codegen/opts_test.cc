// Kernel optimizations preserve results: every kernel run with lanes, register tiles, cache
// tiles, loop orders and thread splits must match the unoptimized kernel.
#include "tinycore/codegen/opts.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tinycore/codegen/apply_opts.h"
#include "tinycore/codegen/kernel.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/prefetch.h"
#include "tinycore/codegen/program.h"
#include "tinycore/codegen/stash.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"
#include "tinycore/uop/pattern_matcher.h"
#include "tinycore/uop/symbolic.h"

namespace tc::codegen {
namespace {

Tensor random_tensor(const Shape& shape, std::mt19937& rng, DType dtype = dtypes::float32) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  std::uniform_real_distribution<float> dist(-2, 2);
  for (float& x : v) x = dtypes::is_float(dtype) ? dist(rng) : std::round(dist(rng) * 10);
  return Tensor(v, shape).cast(dtype).realize();
}

// Runs the single kernel of `t` with `opts` split into `shares`, returning the output bytes.
std::vector<uint8_t> run(const schedule::ScheduleItem& item, const KernelOpts& opts, int shares) {
  runtime::Device& dev = item.bufs[0]->buffer->device();
  auto k = build_kernel(lower(item.ast), dev, opts);
  std::vector<void*> ptrs;
  for (const UOpRef& b : item.bufs) ptrs.push_back(b->buffer->ensure_allocated());
  std::memset(ptrs[0], 0xAB, item.bufs[0]->buffer->nbytes());  // stale data must be overwritten
  k->binary->run(ptrs.data(), shares);
  std::vector<uint8_t> out(item.bufs[0]->buffer->nbytes());
  item.bufs[0]->buffer->copyout(out.data(), out.size());
  return out;
}

void expect_same(const std::vector<uint8_t>& want, const std::vector<uint8_t>& got, DType dtype,
                 const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  size_t n = want.size() / dtype.itemsize();
  for (size_t i = 0; i < n; i++) {
    double a = detail::element<double>(want.data(), dtype, i),
           b = detail::element<double>(got.data(), dtype, i);
    if (dtypes::is_float(dtype))
      ASSERT_NEAR(a, b, 1e-4 * std::max(1.0, std::abs(a))) << what << " at " << i;
    else
      ASSERT_EQ(a, b) << what << " at " << i;
  }
}

// Every option set that fits the output shape of `t`.
std::vector<KernelOpts> candidates(const Shape& shape) {
  std::vector<KernelOpts> out;
  int nd = static_cast<int>(shape.size());
  for (int lane = -1; lane < nd; lane++)
    for (int lanes : {4, 16, 32}) {
      if (lane >= 0 && shape[lane] % lanes != 0) continue;
      for (int unroll_axis = -1; unroll_axis < nd; unroll_axis++)
        for (int unroll : {2, 4}) {
          if (unroll_axis >= 0 && (unroll_axis == lane || shape[unroll_axis] % unroll != 0))
            continue;
          KernelOpts o;
          if (lane >= 0) o.lane_axis = lane, o.lanes = lanes;
          if (unroll_axis >= 0) o.unroll_axis = unroll_axis, o.unroll = unroll;
          o.parallel = true;
          if (nd >= 2) {  // also the reversed loop order
            KernelOpts r = o;
            for (int i = nd - 1; i >= 0; i--) r.order.push_back(i);
            out.push_back(r);
          }
          out.push_back(o);
          KernelOpts unrolled = o;  // each reduce's innermost loop unrolled (where it divides)
          unrolled.reduce_unroll = 2;
          out.push_back(unrolled);
          // cache tiles: 2 blocks along each axis that allows them (of whole lanes or rows)
          for (int axis = 0; axis < nd; axis++) {
            int64_t split = axis == lane ? lanes : axis == unroll_axis ? unroll : 1;
            if (shape[axis] % (2 * split) != 0) continue;
            KernelOpts t = o;
            t.tile_axis = axis, t.tile = static_cast<int>(shape[axis] / 2);
            out.push_back(t);
          }
          if (lane < 0)  // lanes on each reduce's innermost axis (where it divides) instead
            for (int rl : {4, 8}) {
              KernelOpts r = o;
              r.reduce_lanes = rl;
              out.push_back(r);
              r.reduce_unroll = 4;  // runs of lanes, unrolled
              out.push_back(r);
            }
          if (unroll_axis < 0) break;
        }
      if (lane < 0) break;
    }
  return out;
}

void check_all_opts(const Tensor& t) {
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({t.uop()});
  ASSERT_EQ(items.size(), 1u);
  const schedule::ScheduleItem& item = items[0];
  std::vector<uint8_t> want = run(item, KernelOpts{}, 1);
  int pool = item.bufs[0]->buffer->device().parallelism();
  for (const KernelOpts& o : candidates(t.shape())) {
    std::vector<uint8_t> one = run(item, o, 1);
    expect_same(want, one, t.dtype(), o.key());
    // split across threads, each output is computed by the same code: bit for bit the same
    EXPECT_EQ(one, run(item, o, pool)) << o.key() << ": 1 and " << pool << " shares differ";
  }
}

// The single kernel of `t` with 16 lanes on `axis`: its LLVM IR and its output, run on one core.
struct LanedKernel {
  schedule::ScheduleItem item;
  KernelOpts opts;
  std::string ir;
  std::vector<float> out;
};
LanedKernel laned_kernel(const Tensor& t, int axis) {
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({t.uop()});
  EXPECT_EQ(items.size(), 1u);
  LanedKernel k{items[0], KernelOpts{}, "", {}};
  k.opts.lane_axis = axis, k.opts.lanes = 16;
  k.ir = build_kernel(lower(k.item.ast), k.item.bufs[0]->buffer->device(), k.opts)->source;
  std::vector<uint8_t> bytes = run(k.item, k.opts, 1);
  k.out.resize(bytes.size() / sizeof(float));
  std::memcpy(k.out.data(), bytes.data(), bytes.size());
  return k;
}

TEST(Opts, Elementwise) {
  std::mt19937 rng(1);
  Tensor a = random_tensor({8, 32}, rng), b = random_tensor({32}, rng);
  check_all_opts((a * b + 1).exp2());
}

TEST(Opts, Matmul) {
  std::mt19937 rng(2);
  Tensor a = random_tensor({16, 24}, rng), b = random_tensor({24, 32}, rng);
  check_all_opts((a.reshape({16, 1, 24}) * b.permute({1, 0}).reshape({1, 32, 24})).sum(2));
}

TEST(Opts, ReduceAlongContiguousAxis) {
  std::mt19937 rng(3);
  Tensor a = random_tensor({32, 20}, rng);
  check_all_opts(a.max(1));
}

TEST(Opts, PaddedFlippedViews) {
  std::mt19937 rng(4);
  Tensor a = random_tensor({6, 14}, rng);
  check_all_opts(a.pad({{1, 1}, {1, 1}}).flip({0}).permute({1, 0}) * 2);  // (16, 8)
}

TEST(Opts, IntegerAndBoolKernels) {
  std::mt19937 rng(5);
  Tensor a = random_tensor({4, 16}, rng, dtypes::int32),
         b = random_tensor({4, 16}, rng, dtypes::int32);
  check_all_opts((a * 3 + b).maximum(b));
  check_all_opts(a.lt(b));
  check_all_opts((a.cast(dtypes::int8) + b.cast(dtypes::int8)).sum(0, true));
}

TEST(Opts, HalfAndBfloat) {
  std::mt19937 rng(6);
  Tensor a = random_tensor({4, 32}, rng, dtypes::float16),
         b = random_tensor({4, 32}, rng, dtypes::bfloat16);
  check_all_opts(a * 2 + 1);
  check_all_opts(b * 2 + 1);
  check_all_opts(a.cast(dtypes::float32).sum(0, true));
}

TEST(Opts, RandomKernels) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 6; trial++) {
    Tensor a = random_tensor({8, 16}, rng), b = random_tensor({8, 16}, rng);
    Tensor x = trial % 2 ? a.flip({1}) : a.permute({1, 0}).reshape({8, 16});
    Tensor y = (x * b + a.shrink({{0, 8}, {0, 1}})).relu();
    check_all_opts(trial % 3 == 0 ? y.sum(1, true) : trial % 3 == 1 ? y.max(0, true) : y);
  }
}

TEST(Lower, ReduceUnrollReadsRunsOfElementsPerIteration) {
  // a row sum of 64: unrolled by 4, the loop runs 16 times with 4 loads each; with 8 reduce lanes
  // too, 2 times with 4 vector loads; where 64 does not divide, it is not unrolled
  Tensor a = Tensor::empty({4, 64});
  UOpRef ast = schedule::create_schedule({a.sum(1).uop()})[0].ast;
  auto count = [&](const KernelOpts& o) {
    LoweredKernel k = apply_opts(lower(ast), o);
    int loads = 0;
    int64_t trips = 0;
    for (const UOp* u : k.sink->toposort()) {
      loads += u->op == Ops::LOAD;
      if (u->op == Ops::REDUCE)
        for (size_t i = 1; i < u->src.size(); i++) trips = u->src[i]->vmax() + 1;
    }
    return std::make_pair(loads, trips);
  };
  KernelOpts o;
  EXPECT_EQ(count(o), std::make_pair(1, int64_t{64}));
  o.reduce_unroll = 4;
  EXPECT_EQ(count(o), std::make_pair(4, int64_t{16}));
  o.reduce_lanes = 8;
  EXPECT_EQ(count(o), std::make_pair(4, int64_t{2}));
  o.reduce_lanes = 1, o.reduce_unroll = 128;
  EXPECT_EQ(count(o), std::make_pair(1, int64_t{64}));
}

// The disk caches' line of opts reads back as every field, and a damaged one as nothing.
TEST(Opts, LineReadsBackEveryField) {
  KernelOpts o;
  o.lane_axis = 2, o.lanes = 16, o.unroll_axis = 0, o.unroll = 8, o.order = {2, 0, 1, 3};
  o.parallel = true, o.tile_axis = 1, o.tile = 64, o.reduce_unroll = 4, o.stash = true;
  std::optional<KernelOpts> back = parse_opts(opts_line(o), 4);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->key(), o.key());
  EXPECT_EQ(back->key(), "lanes2x16,unroll0x8,order2.0.1.3,par,runroll4,tile1x64,stash");
  EXPECT_FALSE(parse_opts(opts_line(o), 1));  // axes beyond a 1-d kernel's
  std::string line = opts_line(o);
  EXPECT_FALSE(parse_opts(line.substr(0, line.rfind(' ')), 4));  // the last field cut off
  o.tile_axis = -1;                                              // a tile on no axis
  EXPECT_FALSE(parse_opts(opts_line(o), 4));
  o.tile = 1, o.reduce_lanes = 0;  // no lanes at all
  EXPECT_FALSE(parse_opts(opts_line(o), 4));
}

TEST(Heuristic, VectorizesMatmulAndAvoidsGathers) {
  Target avx512{64, 32, true};
  Tensor a = Tensor::empty({64, 64}), b = Tensor::empty({64, 64});
  UOpRef mm =
      schedule::create_schedule(
          {(a.reshape({64, 1, 64}) * b.permute({1, 0}).reshape({1, 64, 64})).sum(2).uop()})[0]
          .ast;
  KernelOpts o = choose_opts(lower(mm), avx512);
  EXPECT_EQ(o.lane_axis, 1);  // the output's contiguous axis
  EXPECT_EQ(o.lanes, 32);
  EXPECT_EQ(o.unroll_axis, 0);  // a register tile over rows
  EXPECT_EQ(o.unroll, 8);
  // a batched matmul (its last kernel; b's blocked copy is first): the tile goes on the rows,
  // whose loads of b it shares, not on the longer batch axis, along which every load changes
  Tensor ba = Tensor::empty({128, 64, 64}), bb = Tensor::empty({128, 64, 64});
  UOpRef bmm = schedule::create_schedule({ba.matmul(bb).uop()}).back().ast;
  KernelOpts bo = choose_opts(lower(bmm), avx512);
  EXPECT_EQ(bo.lanes, 32);
  EXPECT_EQ(bo.unroll_axis, 1);
  EXPECT_EQ(bo.unroll, 8);
  // two products combined at the store (a SwiGLU's gate and up; its last kernel, after the
  // weights' blocked copies): both sets of accumulators stay live, so the tile takes 4 rows, not
  // 8 (16 vectors, not 32, which spilled); values against a loop
  std::mt19937 rng(12);
  Tensor x = random_tensor({64, 64}, rng), g = random_tensor({64, 64}, rng),
         u = random_tensor({64, 64}, rng);
  auto swiglu = [&] { return x.matmul(g).silu() * x.matmul(u); };
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({swiglu().uop()});
  KernelOpts so = choose_opts(lower(items.back().ast), avx512);
  EXPECT_EQ(so.lanes, 32);
  EXPECT_EQ(so.unroll, 4);
  std::vector<float> got = swiglu().data<float>(), xv = x.data<float>(), gv = g.data<float>(),
                     uv = u.data<float>();
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) {
      double a = 0, c = 0;
      for (int k = 0; k < 64; k++)
        a += xv[i * 64 + k] * gv[k * 64 + j], c += xv[i * 64 + k] * uv[k * 64 + j];
      ASSERT_NEAR(got[i * 64 + j], a / (1 + std::exp(-a)) * c, 1e-4 * (1 + std::abs(a * c)))
          << i << " " << j;
    }
  // summing rows of a row-major matrix: lanes over rows would gather, so none there; they go on
  // the reduce, each row summed as 32-wide partials combined after the loop
  UOpRef rows = schedule::create_schedule({a.sum(1).uop()})[0].ast;
  EXPECT_EQ(choose_opts(lower(rows), avx512).lane_axis, -1);
  EXPECT_EQ(choose_opts(lower(rows), avx512).reduce_lanes, 32);
}

// A kernel of rows (a softmax, fused whole) plus a gather along the row: with lanes on the row
// and the same lanes on the reduces, only the row's max and sum take them (the gather's reduce
// reads the row's lane axis itself), and every width gives the unoptimized kernel's values.
TEST(Opts, RowReducesShareTheRowsLanes) {
  std::mt19937 rng(5);
  Tensor x = random_tensor({8, 64}, rng);
  std::vector<float> picks(8 * 64);
  for (float& p : picks) p = static_cast<float>(rng() % 64);
  Tensor idx = Tensor(picks, Shape{8, 64}).cast(dtypes::int32).realize();
  Tensor e = (x - x.max(1, true)).exp();
  Tensor t = e / e.sum(1, true) + x.gather(1, idx);
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({t.uop()});
  ASSERT_EQ(items.size(), 1u);
  std::vector<uint8_t> want = run(items[0], KernelOpts{}, 1);
  for (int lanes : {4, 16, 32})
    for (int unroll : {1, 4}) {
      KernelOpts o;
      o.lane_axis = 1, o.lanes = lanes, o.reduce_lanes = lanes, o.reduce_unroll = unroll;
      o.parallel = true;
      expect_same(want, run(items[0], o, 2), dtypes::float32, o.key());
    }
  KernelOpts chosen = choose_opts(lower(items[0].ast), Target{64, 32, true});
  EXPECT_EQ(chosen.lane_axis, 1);
  EXPECT_EQ(chosen.lanes, 32);
  EXPECT_EQ(chosen.reduce_lanes, 32);
  EXPECT_TRUE(chosen.order.empty());  // the row's loop inside the loops its reduces run in
  EXPECT_TRUE(chosen.stash);          // a CPU's; a GPU's threads each run the reduce whole
  EXPECT_FALSE(choose_opts(lower(items[0].ast), Target{64, 32, false, 1 << 20, false}).stash);
}

// A softmax's sum stores each exp into the output as it goes and the row's loop loads it back
// (stash.h): exp once an element. Every option set and split gives a double loop's softmax; the
// stash is made only where the row's loop opens after the loops the reduces read, is not the loop
// cores share (there the output would be the stash of a row another core still reads) and stays
// a loop (a row of one vector would load it before the sum stored it).
TEST(Opts, RowLoopLoadsTheExpItsSumStashed) {
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> dist(-8, 8);
  for (Shape shape : {Shape{3, 5, 128}, Shape{128}, Shape{1, 128}, Shape{4, 32}}) {
    std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
    for (float& f : v) f = dist(rng);
    const int axis = static_cast<int>(shape.size()) - 1;
    const size_t n = static_cast<size_t>(shape.back());
    Tensor x = Tensor(v, shape).realize();
    Tensor e = (x - x.max(axis, true)).exp();
    std::vector<schedule::ScheduleItem> items =
        schedule::create_schedule({(e / e.sum(axis, true)).uop()});
    ASSERT_EQ(items.size(), 1u);
    std::vector<double> want(v.size());
    for (size_t row = 0; row < v.size(); row += n) {
      double m = -INFINITY, sum = 0;
      for (size_t i = row; i < row + n; i++) m = std::max(m, double{v[i]});
      for (size_t i = row; i < row + n; i++) sum += std::exp(v[i] - m);
      for (size_t i = row; i < row + n; i++) want[i] = std::exp(v[i] - m) / sum;
    }
    std::vector<std::vector<int>> orders = {{}};
    if (axis == 2) orders = {{}, {1, 0, 2}, {0, 2, 1}};
    for (const std::vector<int>& order : orders)
      for (int lanes : {1, 16, 32})
        for (int unroll : {1, 4}) {
          KernelOpts o;
          o.lane_axis = lanes > 1 ? axis : -1, o.lanes = lanes, o.reduce_lanes = lanes;
          o.reduce_unroll = unroll, o.order = order, o.parallel = true, o.stash = true;
          bool stashed = false;
          for (const UOpRef& u : linearize_kernel(lower(items[0].ast), o).program)
            stashed = stashed || u->op == Ops::STASH;
          bool rows = axis > 0 && shape[0] > 1 && (order.empty() || order[axis] == axis);
          EXPECT_EQ(stashed, rows && static_cast<int64_t>(n) > lanes) << o.key();
          std::vector<uint8_t> got = run(items[0], o, 2);
          for (size_t i = 0; i < want.size(); i++)
            ASSERT_NEAR(detail::element<double>(got.data(), dtypes::float32, i), want[i],
                        1e-6 + 1e-5 * want[i])
                << o.key() << " at " << i;
        }
  }
}

// While a stashing sum computes a row's exps, it prefetches the next row: the line of x that each
// load reads and the line of the output that each stash writes, with the innermost loop of rows
// one step on (in a 3x5 grid of rows, row (i, j)'s next is (i, j + 1), and (i, 4)'s is (i + 1, 0),
// the next in memory). A row loop that is unrolled or in lanes has no single next row: no prefetch.
TEST(Opts, StashingSumPrefetchesTheNextRow) {
  Tensor x = Tensor::empty({3, 5, 128});
  Tensor e = (x - x.max(2, true)).exp();
  LoweredKernel plain = lower(schedule::create_schedule({(e / e.sum(2, true)).uop()})[0].ast);
  KernelOpts o;
  o.lane_axis = 2, o.lanes = 16, o.reduce_lanes = 16, o.parallel = true, o.stash = true;
  std::vector<const UOp*> prefetches;
  const UOpRef stashed = stash_reduce_operand(plain, o).sink;  // (the nodes' owner)
  for (const UOp* u : stashed->toposort())
    if (u->op == Ops::PREFETCH) prefetches.push_back(u);
  ASSERT_EQ(prefetches.size(), 2u);
  for (const UOp* p : prefetches) {
    const UOpRef& index = p->src[0];
    EXPECT_EQ(index->src[0]->arg_ints()[0], p->arg_int() == 1 ? 0 : 1);  // write: the output
    // its element at rows (i, j) and position k of the sum's loop
    auto at = [&](int64_t i, int64_t j, int64_t k) {
      absl::flat_hash_map<const UOp*, UOpRef> to;
      for (const UOp* u : index->toposort())
        if (u->op == Ops::RANGE)
          to[u] = UOp::const_int(u->dtype, u->arg_int() == 0 ? i : u->arg_int() == 1 ? j : k);
      UOpRef offset = simplify(substitute(index->src[1], to));
      EXPECT_EQ(offset->op, Ops::CONST);
      return offset->arg_int();
    };
    EXPECT_EQ(at(0, 0, 0), 128);
    EXPECT_EQ(at(1, 2, 7), (1 * 5 + 3) * 128 + 7);
    EXPECT_EQ(at(1, 4, 100), (2 * 5 + 0) * 128 + 100);
  }
  o.unroll_axis = 1, o.unroll = 5;
  const UOpRef unrolled = stash_reduce_operand(plain, o).sink;
  for (const UOp* u : unrolled->toposort()) EXPECT_NE(u->op, Ops::PREFETCH);
}

// A sum split into several loops prefetches where its load reads one run along them (a repacked
// matvec's weight row: groups, words, blocks side by side; or its words, each loaded on its own),
// not where it jumps between runs (a batch's statistics over each image's plane, where 4 KB ahead
// is the next channel's plane).
TEST(Opts, PrefetchFollowsOneRunAlongTheSumsLoops) {
  std::mt19937 rng(13);
  auto prefetches = [](const Tensor& y) {
    LoweredKernel plain = lower(schedule::create_schedule({y.uop()})[0].ast);
    KernelOpts o;
    o.prefetch = true;
    const UOpRef sink = prefetch_streams(plain, o).sink;  // alive while its nodes are read
    int n = 0;
    for (const UOp* u : sink->toposort()) n += u->op == Ops::PREFETCH;
    return n;
  };
  Tensor w = random_tensor({64, 4, 4, 16}, rng), x = random_tensor({1, 4, 4, 16}, rng);
  EXPECT_EQ(prefetches((w * x).sum({1, 2, 3})), 1);  // w's rows; x is every row's
  EXPECT_EQ(prefetches(random_tensor({8, 64, 1024}, rng).sum({0, 2})), 0);
  // a block's words, each loaded on its own (nn::QuantizedWeight's chain of DOT4s): the 4 runs
  // of 16 side by side are one run; 2 of them leave gaps
  auto words = [&](int n) {
    std::vector<Tensor> ws = w.split(1, 2), xs = x.split(1, 2);
    Tensor s = ws[0] * xs[0];
    for (int m = 1; m < n; m++) s = s + ws[m] * xs[m];
    return s.sum({1, 2, 3});
  };
  EXPECT_EQ(prefetches(words(4)), 4);
  EXPECT_EQ(prefetches(words(2)), 0);
}

// A matvec's weight rows stream from memory, each output's its own (prefetch.h): the weight's
// load, not that of the vector every row shares, prefetches kPrefetchBytes ahead along the sum,
// one line per 64 bytes of a vector it loads, or one (a Q8_0 block's 32 bytes). The heuristic asks
// for it on a CPU's matvec of one row only (a register tile of 8 decode rows over the weight ran
// slower with it: the prefetches took registers it needs); the values are the plain kernel's.
TEST(Opts, MatvecPrefetchesItsWeightRowsAhead) {
  std::mt19937 rng(12);
  for (DType dt : {dtypes::float16, dtypes::int8}) {
    Tensor w = random_tensor({64, 512}, rng, dt), x = random_tensor({1, 512}, rng);
    schedule::ScheduleItem item =
        schedule::create_schedule({x.matmul(w.cast(dtypes::float32).T()).uop()})[0];
    LoweredKernel plain = lower(item.ast);
    KernelOpts o = choose_opts(plain, Target{64, 32, true});
    EXPECT_TRUE(o.prefetch);
    EXPECT_FALSE(choose_opts(plain, Target{64, 32, true, 1 << 20, false}).prefetch);  // a GPU
    Tensor rows = random_tensor({8, 512}, rng);
    KernelOpts tile = choose_opts(
        lower(schedule::create_schedule({rows.matmul(w.cast(dtypes::float32).T()).uop()})[0].ast),
        Target{64, 32, true});
    EXPECT_GT(tile.unroll, 1);
    EXPECT_FALSE(tile.prefetch);
    const UOpRef sink = prefetch_streams(plain, o).sink;
    std::vector<const UOp*> prefetches;
    for (const UOp* u : sink->toposort())
      if (u->op == Ops::PREFETCH) prefetches.push_back(u);
    ASSERT_EQ(prefetches.size(), 1u);
    const UOp& load = *prefetches[0]->src[1];
    ASSERT_EQ(load.op, Ops::LOAD);
    EXPECT_EQ(load.dtype, dt);  // the weight's
    UOpRef ahead = simplify(prefetches[0]->src[0]->src[1] - load.src[0]->src[1]);
    ASSERT_EQ(ahead->op, Ops::CONST);
    EXPECT_EQ(ahead->arg_int(), kPrefetchBytes / dt.itemsize());
    std::string ir = build_kernel(plain, item.bufs[0]->buffer->device(), o)->source;
    int calls = 0;
    for (size_t at = ir.find("call void @llvm.prefetch"); at != std::string::npos;
         at = ir.find("call void @llvm.prefetch", at + 1))
      calls++;
    const int64_t vector_bytes = o.reduce_lanes * dt.itemsize();
    EXPECT_EQ(calls, o.reduce_unroll * std::max<int64_t>(1, vector_bytes / 64)) << ir;
    KernelOpts none = o;
    none.prefetch = false;
    expect_same(run(item, none, 1), run(item, o, 2), dtypes::float32, o.key());
  }
}

TEST(Heuristic, TransposingCopyGathersRowsAndSharesTheBatchAcrossCores) {
  // NCHW -> NHWC: lanes on C gather 16 channel planes, walked along H and W inside; the batch,
  // laid out outside them, is the outermost loop (the one cores share), not the 2 lane blocks;
  // W, the planes' innermost axis, unrolled by the most of 8, 4, 2 dividing it (each lane's
  // gather then reads a run of its plane)
  Target avx512{64, 32, true};
  Tensor x = Tensor::empty({64, 32, 6, 6});
  UOpRef copy = schedule::create_schedule({x.permute({0, 2, 3, 1}).contiguous().uop()})[0].ast;
  KernelOpts o = choose_opts(lower(copy), avx512);
  EXPECT_EQ(o.lane_axis, 3);  // (N, H, W, C)
  EXPECT_EQ(o.lanes, 16);
  EXPECT_EQ(o.order, (std::vector<int>{0, 3, 1, 2}));
  EXPECT_EQ(o.unroll_axis, 2);
  EXPECT_EQ(o.unroll, 2);
  EXPECT_TRUE(o.parallel);
  // a plain 2-D transpose: the lanes' blocks outermost, as the source's rows are
  Tensor m = Tensor::empty({48, 64});
  KernelOpts t = choose_opts(
      lower(schedule::create_schedule({m.permute({1, 0}).contiguous().uop()})[0].ast), avx512);
  EXPECT_EQ(t.lane_axis, 1);
  EXPECT_EQ(t.order, (std::vector<int>{1, 0}));
  EXPECT_EQ(t.unroll_axis, 0);
  EXPECT_EQ(t.unroll, 8);
}

// A matvec over a few rows (8 decode streams through one weight): lanes on the sum, and a
// register tile over the rows, whose loads of the weight (here float16, decoded in the kernel)
// every row of the tile shares; one row has nothing to tile. Values as the plain kernel's.
TEST(Heuristic, AFewRowsMatvecTilesItsRowsToShareTheWeight) {
  Target avx512{64, 32, true};
  std::mt19937 rng(8);
  Tensor w = random_tensor({64, 256}, rng, dtypes::float16);
  for (int64_t rows : {8, 1}) {
    Tensor x = random_tensor({rows, 256}, rng);
    schedule::ScheduleItem item =
        schedule::create_schedule({x.matmul(w.cast(dtypes::float32).T()).uop()}).back();
    KernelOpts o = choose_opts(lower(item.ast), avx512);
    EXPECT_EQ(o.lane_axis, -1) << rows;
    EXPECT_EQ(o.reduce_lanes, 32) << rows;
    EXPECT_EQ(o.unroll, rows) << rows;
    if (rows > 1) {
      EXPECT_EQ(o.unroll_axis, 0);
    }
    expect_same(run(item, KernelOpts{}, 1), run(item, o, 2), dtypes::float32, "rows");
  }
}

TEST(Heuristic, PutsConvLanesOnOutputChannels) {
  // a 7x7 output (too short for lanes) and a strided one (its positions gather): with the
  // weight laid out cout-last, lanes go on cout, where every load is contiguous, and the
  // register tile takes the 7 rows of a position axis, though not a power of two
  Target avx512{64, 32, true};
  for (int64_t stride : {1, 2}) {
    Tensor x = Tensor::empty({1, 64, 7 * stride, 7 * stride}), w = Tensor::empty({128, 64, 3, 3});
    UOpRef conv =
        schedule::create_schedule({x.conv2d(w, {.stride = stride, .padding = 1}).uop()}).back().ast;
    KernelOpts o = choose_opts(lower(conv), avx512);
    EXPECT_EQ(o.lane_axis, 1) << "stride " << stride;  // (bs, cout, oy, ox)
    EXPECT_EQ(o.lanes, 32) << "stride " << stride;
    EXPECT_EQ(o.unroll, 7) << "stride " << stride;
  }
}

TEST(Heuristic, ConvLoopsOverItsLaneBlocksInsideWhereItsWeightsFitTheCache) {
  // a 1x1 conv, lanes on cout (its weight blocked by 32 channels, 128 KB in all): with a cache
  // that holds the weights, each output row of positions meets every block of channels while the
  // row is in cache, (bs, oy, cout, ox); with one that does not, the block's weights stay while
  // every row streams past, (cout, bs, oy, ox)
  Tensor x = Tensor::empty({8, 256, 28, 28}), w = Tensor::empty({128, 256, 1, 1});
  LoweredKernel conv = lower(schedule::create_schedule({x.conv2d(w).uop()}).back().ast);
  for (int64_t cache : {int64_t{1} << 20, int64_t{64} << 10}) {
    KernelOpts o = choose_opts(conv, Target{64, 32, true, cache});
    EXPECT_EQ(o.lane_axis, 1);
    EXPECT_EQ(o.unroll_axis, 3);
    EXPECT_EQ(o.order,
              cache > (128 << 10) ? std::vector<int>({0, 2, 1, 3}) : std::vector<int>({1, 0, 2, 3}))
        << cache;
  }
}

TEST(Heuristic, ConvLoopsOverItsLaneBlocksInsideWhereThatMovesFewerBytes) {
  // weights past the cache: a 1x1 conv of 2 MB of weights reads its 51 MB input (8x512x56x56)
  // once per block of 32 channels (1.6 GB) or its weights once per output row (0.9 GB): the lane
  // loop goes inside; a 3x3 conv of 512 channels on 7x7 (9.4 MB of weights, 1.3 MB of input: 21
  // MB against 528) keeps it outermost. (A strided 1x1 conv reads a compact copy of its input:
  // schedule/layout.cc.)
  Target avx512{64, 32, true, int64_t{1} << 20};
  for (int64_t k : {1, 3}) {
    Tensor x = Tensor::empty({8, 512, k == 1 ? 56 : 7, k == 1 ? 56 : 7});
    Tensor w = Tensor::empty({k == 1 ? 1024 : 512, 512, k, k});
    ConvOpts c = k == 1 ? ConvOpts{} : ConvOpts{.padding = 1};
    KernelOpts o =
        choose_opts(lower(schedule::create_schedule({x.conv2d(w, c).uop()}).back().ast), avx512);
    EXPECT_EQ(o.lane_axis, 1);
    EXPECT_EQ(o.order, k == 1 ? std::vector<int>({0, 2, 1, 3}) : std::vector<int>({1, 0, 2, 3}))
        << k;
  }
  // a kernel of one axis, the lanes': its loop is the order
  KernelOpts sum = choose_opts(
      lower(schedule::create_schedule({Tensor::empty({512, 256}).sum(0).uop()}).back().ast),
      avx512);
  EXPECT_EQ(sum.lane_axis, 0);
  EXPECT_EQ(sum.order, std::vector<int>{0});
}

TEST(Heuristic, OutputLanesAreNotTradedForGatheringReduceLanes) {
  // a matmul viewed as (8, 128, 28, 28): 4 lanes along the row of 28 read the input in runs; 32
  // lanes on the sum over its 512 rows would gather the input, 784 elements apart (10x slower)
  Tensor w = Tensor::empty({128, 512}), x = Tensor::empty({8, 512, 784});
  KernelOpts o = choose_opts(
      lower(schedule::create_schedule({w.matmul(x).reshape({8, 128, 28, 28}).uop()}).back().ast),
      Target{64, 32, true});
  EXPECT_EQ(o.reduce_lanes, 1);
  EXPECT_EQ(o.lane_axis, 3);
  EXPECT_EQ(o.lanes, 4);
}

TEST(Heuristic, ConvRowsAreNeighbouringPositions) {
  // the register tile of a conv goes along its output positions, whose rows read nearby inputs
  // (the same cache lines), rather than along the batch, whose rows read a whole feature map
  // apart, though the batch would allow more rows
  Target avx512{64, 32, true};
  Tensor x = Tensor::empty({64, 32, 22, 22}), w = Tensor::empty({32, 32, 5, 5});
  KernelOpts o =
      choose_opts(lower(schedule::create_schedule({x.conv2d(w).uop()}).back().ast), avx512);
  EXPECT_EQ(o.lane_axis, 1);  // (bs, cout, oy, ox)
  EXPECT_EQ(o.unroll_axis, 3);
  EXPECT_EQ(o.unroll, 6);  // a divisor of 18 within half the registers
  // strided by 2, 7 positions still read within two cache lines: they beat 8 images
  Tensor xs = Tensor::empty({8, 64, 14, 14}), ws = Tensor::empty({128, 64, 3, 3});
  KernelOpts so = choose_opts(
      lower(
          schedule::create_schedule({xs.conv2d(ws, {.stride = 2, .padding = 1}).uop()}).back().ast),
      avx512);
  EXPECT_EQ(so.lane_axis, 1);
  EXPECT_EQ(so.unroll_axis, 3);
  EXPECT_EQ(so.unroll, 7);
}

TEST(Heuristic, AShortReduceKeepsItsStoresContiguous) {
  // a conv over one input channel sums 25 products per output: lanes on cout would scatter every
  // store, so they stay on the output's last axis, and the tile takes the output channels
  Target avx512{64, 32, true};
  Tensor x = Tensor::empty({8, 1, 28, 28}), w = Tensor::empty({32, 1, 5, 5});
  KernelOpts o =
      choose_opts(lower(schedule::create_schedule({x.conv2d(w).uop()}).back().ast), avx512);
  EXPECT_EQ(o.lane_axis, 3);
  EXPECT_EQ(o.lanes, 8);
  EXPECT_EQ(o.unroll_axis, 1);
  // with 32 input channels (800 products per output) the lanes go on cout as before
  Tensor x32 = Tensor::empty({8, 32, 28, 28}), w32 = Tensor::empty({32, 32, 5, 5});
  EXPECT_EQ(
      choose_opts(lower(schedule::create_schedule({x32.conv2d(w32).uop()}).back().ast), avx512)
          .lane_axis,
      1);
}

// An axis no power of two of at least 4 divides (a pooled row of 10, a 6x6 map's row) takes lanes
// as wide as the whole axis: a 2x2 max pool's 10 outputs a row are one vector, each row of its
// window one short run loaded whole; a sum over rows of 6 takes 6 lanes on its reduce. Values
// against loops over the input.
TEST(Heuristic, AxesOfTenOrSixTakeLanesAsWideAsTheAxis) {
  Target avx512{64, 32, true};
  std::mt19937 rng(11);
  Tensor x = random_tensor({4, 3, 20, 20}, rng);
  std::vector<schedule::ScheduleItem> pool = schedule::create_schedule({x.max_pool2d().uop()});
  ASSERT_EQ(pool.size(), 1u);
  KernelOpts o = choose_opts(lower(pool[0].ast), avx512);
  EXPECT_EQ(o.lane_axis, 3);  // (bs, c, oy, ox)
  EXPECT_EQ(o.lanes, 10);
  LaneAccesses a = lane_accesses(lower(pool[0].ast), o);
  EXPECT_GT(a.short_runs, 0);
  EXPECT_EQ(a.gathered, 0);
  std::vector<uint8_t> bytes = run(pool[0], o, 1);
  const float* got = reinterpret_cast<const float*>(bytes.data());
  std::vector<float> v = x.data<float>();
  for (int p = 0; p < 12; p++)
    for (int oy = 0; oy < 10; oy++)
      for (int ox = 0; ox < 10; ox++) {
        const float* in = &v[p * 400 + oy * 40 + ox * 2];
        float want = std::max(std::max(in[0], in[1]), std::max(in[20], in[21]));
        ASSERT_EQ(got[p * 100 + oy * 10 + ox], want) << p << " " << oy << " " << ox;
      }

  // a row of 30 (a transposed 3x3 conv's output over a 28x28 map) would take two registers of
  // lanes, each load split in four: its lanes stay a power of two, and the register tile's
  // accumulators fit in half the registers
  Tensor g = Tensor::empty({8, 16, 28, 28}), w = Tensor::empty({16, 16, 3, 3});
  UOpRef transposed = schedule::create_schedule({g.conv_transpose2d(w).uop()}).back().ast;
  KernelOpts to = choose_opts(lower(transposed), avx512);
  EXPECT_NE(to.lanes, 30) << to.key();
  EXPECT_LE((to.lanes * 4 + 63) / 64 * to.unroll, 16) << to.key();

  Tensor m = random_tensor({64, 6}, rng);
  std::vector<schedule::ScheduleItem> sum = schedule::create_schedule({m.sum(1).uop()});
  KernelOpts so = choose_opts(lower(sum[0].ast), avx512);
  EXPECT_EQ(so.lane_axis, -1);  // lanes over rows would gather
  EXPECT_EQ(so.reduce_lanes, 6);
  bytes = run(sum[0], so, 1);
  got = reinterpret_cast<const float*>(bytes.data());
  std::vector<float> mv = m.data<float>();
  for (int r = 0; r < 64; r++) {
    double want = 0;
    for (int j = 0; j < 6; j++) want += mv[r * 6 + j];
    ASSERT_NEAR(got[r], want, 1e-5) << r;
  }
}

// A pad of a reshaped computed value: the pad's index, clamped to the source's range where it is
// read, folds through the reshape's division, so the kernel indexes with no division or modulo
// (a padded conv output used to cost ~20 of them per multiply-add), and reads the right values.
TEST(Lower, PadOfAReshapeIndexesWithoutDivision) {
  std::vector<float> v(64);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i);
  Tensor x = Tensor(v, Shape{4, 16}).realize();
  auto padded = [&] { return (x + 1).reshape({4, 2, 8}).pad({{0, 0}, {1, 1}, {1, 1}}); };
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({padded().uop()});
  ASSERT_EQ(items.size(), 1u);
  std::string ir =
      build_kernel(lower(items[0].ast), items[0].bufs[0]->buffer->device(), KernelOpts{})->source;
  EXPECT_EQ(ir.find("sdiv"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("srem"), std::string::npos) << ir;
  std::vector<float> got = padded().data<float>();
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++)
      for (int c = 0; c < 10; c++) {
        bool inside = b >= 1 && b <= 2 && c >= 1 && c <= 8;
        ASSERT_EQ(got[(a * 4 + b) * 10 + c], inside ? v[a * 16 + (b - 1) * 8 + c - 1] + 1 : 0.0f)
            << a << " " << b << " " << c;
      }
}

// A flatten of a realized (8, 64, 3, 3) value (here a reduce's output, a buffer viewed through a
// reshape), summed along the flattened axis with 32 lanes on it (a linear layer after a conv):
// the two reshapes are lowered as one, so the buffer is indexed linearly (contiguous lanes, no
// division), and the sums are right.
TEST(Lower, ReshapeOfAReshapeIndexesLinearly) {
  std::vector<float> v(8 * 576 * 2);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i % 7) - 3;
  Tensor x = Tensor(v, Shape{8, 64, 3, 3, 2}).realize();
  auto flat_sum = [&] { return x.sum(4).reshape({8, 576}).sum(1); };
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({flat_sum().uop()});
  ASSERT_EQ(items.size(), 2u);
  KernelOpts o;
  o.reduce_lanes = 32;
  EXPECT_TRUE(lanes_are_contiguous(lower(items[1].ast), o));
  std::string ir = build_kernel(lower(items[1].ast), items[1].bufs[0]->buffer->device(), o)->source;
  EXPECT_EQ(ir.find("sdiv"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("srem"), std::string::npos) << ir;
  x = Tensor(v, Shape{8, 64, 3, 3, 2}).realize();  // create_schedule marked the graph computed
  std::vector<float> got = flat_sum().data<float>();
  for (int r = 0; r < 8; r++) {
    float want = 0;
    for (int k = 0; k < 576 * 2; k++) want += v[r * 576 * 2 + k];
    EXPECT_EQ(got[r], want) << "row " << r;
  }
}

TEST(Render, LlvmUnrollsReduceLoopsNotOutputLoops) {
  // a matmul without opts: two output loops marked not to unroll, its sum's loop left to LLVM;
  // a row sum's 32 lanes combine as halves (32 -> 16 -> 8 -> 4) before the last four in order
  Tensor a = Tensor::empty({16, 32}), b = Tensor::empty({32, 64});
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({a.matmul(b).uop()});
  runtime::Device& dev = items.back().bufs[0]->buffer->device();
  std::string ir = build_kernel(lower(items.back().ast), dev, KernelOpts{})->source;
  auto count = [](const std::string& s, const std::string& what) {
    int n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) n++;
    return n;
  };
  EXPECT_EQ(count(ir, ", !llvm.loop !"), 2) << ir;
  EXPECT_EQ(count(ir, "!{!\"llvm.loop.unroll.disable\"}"), 2) << ir;
  KernelOpts lanes;
  lanes.reduce_lanes = 32;
  UOpRef rows = schedule::create_schedule({Tensor::empty({4, 64}).sum(1).uop()})[0].ast;
  ir = build_kernel(lower(rows), dev, lanes)->source;
  EXPECT_EQ(count(ir, "shufflevector <32 x float>"), 2) << ir;
  EXPECT_EQ(count(ir, "shufflevector <8 x float>"), 2) << ir;
  EXPECT_EQ(count(ir, "extractelement <4 x float>"), 4) << ir;
}

// Lanes that read a short run of elements (an upsample's 0,0,1,1, a flip's 15..0) load it as one
// vector and shuffle it into place, for every option set; lanes a row apart (a transpose) load
// lane by lane. Each value against a loop over the input or against the plain kernel.
TEST(Render, ShortRunsOfLanesLoadOnceAndShuffle) {
  std::mt19937 rng(9);
  Tensor x = random_tensor({8, 16}, rng);
  auto upsample = [](const Tensor& t) {
    return t.reshape({8, 16, 1}).expand({8, 16, 2}).reshape({8, 32});
  };
  auto make_y = [&] { return upsample(x) * 2 + upsample(x.flip({1})); };
  check_all_opts(make_y());
  LanedKernel k = laned_kernel(make_y(), 1);
  LaneAccesses a = lane_accesses(lower(k.item.ast), k.opts);
  EXPECT_EQ(a.short_runs, 2);
  EXPECT_EQ(a.gathered, 0);
  EXPECT_EQ(k.ir.find("masked.gather"), std::string::npos) << k.ir;
  EXPECT_NE(k.ir.find("load <8 x float>"), std::string::npos) << k.ir;
  EXPECT_NE(k.ir.find("shufflevector <8 x float>"), std::string::npos) << k.ir;
  std::vector<float> v = x.data<float>();
  for (int r = 0; r < 8; r++)
    for (int j = 0; j < 32; j++)
      ASSERT_EQ(k.out[r * 32 + j], v[r * 16 + j / 2] * 2 + v[r * 16 + 15 - j / 2]) << r << " " << j;
  // a transpose: lanes on its last axis read elements a row apart, lane by lane (no vgather);
  // right for every option set
  Tensor src = random_tensor({16, 64}, rng);
  auto make_t = [&] { return src.permute({1, 0}) + 1; };
  check_all_opts(make_t());
  LanedKernel t = laned_kernel(make_t(), 1);
  EXPECT_EQ(lane_accesses(lower(t.item.ast), t.opts).gathered, 1);
  EXPECT_EQ(t.ir.find("@llvm.masked."), std::string::npos) << t.ir;
  size_t lanes = 0;
  for (size_t at = t.ir.find("extractelement <16 x i64>"); at != std::string::npos;
       at = t.ir.find("extractelement <16 x i64>", at + 1))
    lanes++;
  EXPECT_EQ(lanes, 16u) << t.ir;
  std::vector<float> sv = src.data<float>();
  for (int r = 0; r < 64; r++)
    for (int j = 0; j < 16; j++) ASSERT_EQ(t.out[r * 16 + j], sv[j * 64 + r] + 1) << r << " " << j;
}

// Lanes whose gate differs per lane and per loop (a pad's edge, a cat's seam inside a row of
// two vectors) load under the gate as a mask: consecutive elements as one masked vector load, a
// broadcast element once; no gathers. Where the gate depends on the lane alone (a row of one
// vector), the lanes that are on load as one shorter vector. Values against a loop, and every
// option set against the plain kernel.
TEST(Render, GatedLanesLoadUnderAMask) {
  std::mt19937 rng(10);
  for (int64_t width : {32, 16}) {
    Tensor x = random_tensor({8, width - 4}, rng), s = random_tensor({1}, rng);
    auto make_y = [&] {
      return x.pad({{0, 0}, {3, 1}}) + s.reshape({1, 1}).expand({8, 4}).cat({x}, 1);
    };
    check_all_opts(make_y());
    LanedKernel k = laned_kernel(make_y(), 1);
    EXPECT_EQ(k.ir.find("masked.gather"), std::string::npos) << k.ir;
    bool masked = k.ir.find("@llvm.masked.load.v16f32") != std::string::npos;
    EXPECT_EQ(masked, width == 32) << k.ir;
    EXPECT_EQ(k.ir.find("load <12 x float>") != std::string::npos, width == 16) << k.ir;
    EXPECT_NE(k.ir.find("@llvm.vector.reduce.or.v16i1"), std::string::npos) << k.ir;
    std::vector<float> v = x.data<float>();
    float sv = s.data<float>()[0];
    for (int r = 0; r < 8; r++)
      for (int j = 0; j < width; j++) {
        float padded = j >= 3 && j < width - 1 ? v[r * (width - 4) + j - 3] : 0.0f;
        float cat = j < 4 ? sv : v[r * (width - 4) + j - 4];
        ASSERT_EQ(k.out[r * width + j], padded + cat) << width << " " << r << " " << j;
      }
  }
}

// A cat of heads read transposed (attention's q, k and v gradients into one of qkv): a block of
// lanes along the cat's axis lies in one piece, so each piece's load is gated per block and reads
// consecutive elements (narrow_gated_loads), where the pad's clamps and the heads' divisions had
// every lane load alone. The heuristic takes the lanes; every option set gives the plain values.
TEST(Render, ACatOfTransposedHeadsLoadsWholeVectors) {
  std::mt19937 rng(11);
  std::vector<Tensor> parts;
  for (int i = 0; i < 3; i++) parts.push_back(random_tensor({2, 4, 8, 64}, rng));
  auto heads = [](const Tensor& t) { return t.permute({0, 2, 1, 3}).reshape({2, 8, 256}); };
  auto make = [&] { return heads(parts[0]).cat({heads(parts[1]), heads(parts[2])}, 2); };
  check_all_opts(make());
  LanedKernel k = laned_kernel(make(), 2);
  EXPECT_EQ(lane_accesses(lower(k.item.ast), k.opts).gathered, 0);
  EXPECT_EQ(k.ir.find("masked.gather"), std::string::npos) << k.ir;
  EXPECT_NE(k.ir.find("@llvm.masked.load.v16f32"), std::string::npos) << k.ir;
  EXPECT_GT(choose_opts(lower(k.item.ast), Target{64, 32, true}).lanes, 1);
  std::vector<std::vector<float>> v;
  for (const Tensor& p : parts) v.push_back(p.data<float>());
  for (int b = 0; b < 2; b++)
    for (int t = 0; t < 8; t++)
      for (int j = 0; j < 768; j++) {
        int h = j % 256 / 64, d = j % 64;
        ASSERT_EQ(k.out[(b * 8 + t) * 768 + j], v[j / 256][((b * 4 + h) * 8 + t) * 64 + d])
            << b << " " << t << " " << j;
      }
}

}  // namespace
}  // namespace tc::codegen
