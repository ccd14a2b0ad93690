#include "tinycore/codegen/opts.h"

#include <optional>
#include <sstream>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tinycore/codegen/apply_opts.h"
#include "tinycore/codegen/decompose.h"
#include "tinycore/codegen/linearize.h"
#include "tinycore/helpers.h"
#include "tinycore/renderer/lanes.h"
#include "tinycore/runtime/device.h"

namespace tc::codegen {

Target target_of(const runtime::Device& device) {
  return {device.simd_bytes(), device.simd_registers(), device.parallelism() > 1,
          device.cache_bytes(), device.language() == runtime::Language::kLlvm};
}

std::string KernelOpts::key() const {
  return absl::StrCat("lanes", lane_axis, "x", lanes, ",unroll", unroll_axis, "x", unroll, ",order",
                      absl::StrJoin(order, "."), parallel ? ",par" : "",
                      reduce_lanes > 1 ? absl::StrCat(",rlanes", reduce_lanes) : "",
                      reduce_unroll > 1 ? absl::StrCat(",runroll", reduce_unroll) : "",
                      tiled() ? absl::StrCat(",tile", tile_axis, "x", tile) : "",
                      stash ? ",stash" : "", prefetch ? ",prefetch" : "");
}

std::string opts_line(const KernelOpts& o) {
  return absl::StrCat(o.lane_axis, " ", o.lanes, " ", o.unroll_axis, " ", o.unroll, " ",
                      o.parallel ? 1 : 0, " ", o.order.empty() ? "-" : absl::StrJoin(o.order, ","),
                      " ", o.reduce_lanes, " ", o.tile_axis, " ", o.tile, " ", o.reduce_unroll, " ",
                      o.stash ? 1 : 0, " ", o.prefetch ? 1 : 0);
}

std::optional<KernelOpts> parse_opts(const std::string& line, int nd) {
  std::istringstream in(line);
  KernelOpts o;
  int par = 0, stash = 0, prefetch = 0;
  std::string order;
  if (!(in >> o.lane_axis >> o.lanes >> o.unroll_axis >> o.unroll >> par >> order >>
        o.reduce_lanes >> o.tile_axis >> o.tile >> o.reduce_unroll >> stash >> prefetch))
    return {};
  o.parallel = par != 0, o.stash = stash != 0, o.prefetch = prefetch != 0;
  if (order != "-")
    for (absl::string_view p : absl::StrSplit(order, ',')) {
      int v = 0;
      if (!absl::SimpleAtoi(p, &v) || v < 0 || v >= nd) return {};
      o.order.push_back(v);
    }
  if (!o.order.empty() && static_cast<int>(o.order.size()) != nd) return {};
  if (o.lane_axis < -1 || o.lane_axis >= nd || o.unroll_axis < -1 || o.unroll_axis >= nd ||
      o.tile_axis < -1 || o.tile_axis >= nd || o.lanes < 1 || o.unroll < 1 || o.reduce_lanes < 1 ||
      o.reduce_unroll < 1 || o.tile < 1 || (o.tiled() && o.tile_axis < 0) ||
      (o.lanes > 1 && o.reduce_lanes > 1 && o.lanes != o.reduce_lanes))
    return {};
  return o;
}

std::optional<int64_t> coefficient(const UOpRef& idx, const UOp* v) {
  if (idx.get() == v) return 1;
  if (idx->op == Ops::ADD) {
    auto a = coefficient(idx->src[0], v), b = coefficient(idx->src[1], v);
    if (a && b) return *a + *b;
    return std::nullopt;
  }
  if (idx->op == Ops::MUL && idx->src[1]->op == Ops::CONST) {
    auto a = coefficient(idx->src[0], v);
    if (a) return *a * idx->src[1]->arg_int();
    return std::nullopt;
  }
  for (const UOp* n : idx->toposort())
    if (n == v) return std::nullopt;
  return 0;
}

namespace {

// The kernel as lowered, simplified, and the loop of each output axis (nullptr for size 1).
struct PlainKernel {
  UOpRef sink;
  std::vector<const UOp*> ranges;
};
PlainKernel plain_kernel(const LoweredKernel& plain) {
  const int nd = static_cast<int>(plain.shape.size());
  PlainKernel k{simplify_kernel(plain.sink), std::vector<const UOp*>(nd)};
  for (const UOp* u : k.sink->toposort())
    if (u->op == Ops::RANGE && u->arg_int() < nd) k.ranges[u->arg_int()] = u;
  return k;
}

// The output axes ordered as the kernel's largest input is laid out (largest stride outermost),
// or empty when its index is not a plain sum of strided terms.
std::vector<int> source_order(const PlainKernel& plain, int nd) {
  const auto& [sink, ranges] = plain;
  const UOp* biggest = nullptr;
  for (const UOp* u : sink->toposort()) {
    if (u->op == Ops::LOAD &&
        (!biggest || u->src[0]->src[0]->arg_ints()[1] > biggest->src[0]->src[0]->arg_ints()[1]))
      biggest = u;
  }
  if (!biggest) return {};
  std::vector<std::pair<int64_t, int>> strides;
  for (int i = 0; i < nd; i++) {
    std::optional<int64_t> c =
        ranges[i] ? coefficient(biggest->src[0]->src[1], ranges[i]) : std::optional<int64_t>(0);
    if (!c) return {};
    strides.push_back({-std::abs(*c), i});
  }
  std::stable_sort(strides.begin(), strides.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int> order;
  for (auto [stride, axis] : strides) order.push_back(axis);
  return order;
}

// The loops of each reduce in a lowered kernel: how many elements each output sums, how many
// its innermost loop walks (1 where its innermost axis has none), and its whole work (the
// iterations of every loop its value depends on).
struct ReduceLoops {
  int64_t length = 1, inner = 1, work = 1;
};
std::vector<ReduceLoops> reduce_loops(const LoweredKernel& plain) {
  std::vector<ReduceLoops> out;
  for (const UOp* u : plain.sink->toposort()) {
    if (u->op != Ops::REDUCE) continue;
    ReduceLoops r;
    for (size_t i = 1; i < u->src.size(); i++) r.length *= u->src[i]->src[0]->arg_int();
    if (std::find(plain.innermost.begin(), plain.innermost.end(), u->src.back()) !=
        plain.innermost.end())
      r.inner = u->src.back()->src[0]->arg_int();
    for (const UOp* n : u->toposort())
      if (n->op == Ops::RANGE) r.work *= n->src[0]->arg_int();
    out.push_back(r);
  }
  return out;
}

// Per output axis, for a register tile of rows along it: how many loads in a reduce's loop do
// not depend on it (each shared by every row), and the largest step in elements from row to row
// of the loads that do (none: not a plain stride). And the bytes of the buffers those loads read,
// of the ones that depend on it (for the lane axis, the operand whose blocks the lanes read: a
// matmul's columns, a conv's weights) and of the others.
struct RowLoads {
  int shared = 0;
  std::optional<int64_t> step = 0;
  int64_t bytes_along = 0, bytes_shared = 0;
  bool gated = false;    // a load's gate depends on it (a padded window's rows or columns)
  bool gathers = false;  // an equality test in a reduce depends on it (a one-hot's row: a gather)
  bool indexes = false;  // an integer one with the reduce's loop does (its loop narrows to one)
};
std::vector<RowLoads> loads_along(const PlainKernel& plain, int nd) {
  const auto& [sink, ranges] = plain;
  absl::flat_hash_set<const UOp*> loads;
  std::vector<RowLoads> out(nd);
  for (const UOp* u : sink->toposort()) {
    if (u->op == Ops::REDUCE)
      for (const UOp* n : u->src[0]->toposort()) {
        if (n->op == Ops::LOAD) loads.insert(n);
        if (n->op != Ops::CMPEQ) continue;
        // narrowable: the reduce's loop in the index arithmetic itself, not read through a load
        // (an embedding's gradient, tokens[t] == v over t, keeps its loop)
        std::vector<const UOp*> test = n->toposort(), stack = {n};
        bool indexes = false, ints = dtypes::is_int(n->src[0]->dtype);
        for (absl::flat_hash_set<const UOp*> seen; ints && !stack.empty();) {
          const UOp* m = stack.back();
          stack.pop_back();
          indexes |= std::find(u->src.begin() + 1, u->src.end(), m->ref()) != u->src.end();
          if (m->op != Ops::LOAD && seen.insert(m).second)
            for (const UOpRef& s : m->src) stack.push_back(s.get());
        }
        for (const UOp* m : test)
          for (int i = 0; i < nd; i++)
            out[i].gathers |= m == ranges[i], out[i].indexes |= indexes && m == ranges[i];
      }
  }
  absl::flat_hash_set<const UOp*> buffers;  // counted in bytes
  for (const UOp* load : loads) {
    const UOp& buffer = *load->src[0]->src[0];
    const UOpRef& idx = load->src[0]->src[1];
    std::vector<const UOp*> index = idx->toposort();
    const int64_t bytes =
        buffers.insert(&buffer).second ? buffer.arg_ints()[1] * load->dtype.itemsize() : 0;
    if (load->src.size() == 2)
      for (const UOp* n : load->src[1]->toposort())
        for (int i = 0; i < nd; i++) out[i].gated |= n == ranges[i];
    for (int i = 0; i < nd; i++) {
      if (!ranges[i] || std::find(index.begin(), index.end(), ranges[i]) == index.end()) {
        out[i].shared++;
        out[i].bytes_shared += bytes;
        continue;
      }
      out[i].bytes_along += bytes;
      std::optional<int64_t> c = coefficient(idx, ranges[i]);
      if (!c || !out[i].step)
        out[i].step = std::nullopt;
      else
        out[i].step = std::max(*out[i].step, std::abs(*c));
    }
  }
  return out;
}

// The lanes for an axis of `size`: the widest power of two up to `widest` that divides it, or,
// where that is under 4 (a pooled feature map's row of 10 or 6), the whole axis when it fits in
// one register of `register_lanes`: a vector of 10 lanes, which LLVM pads to 16, still does the
// work of ten scalar iterations. (A row of 30 would be split into loads of 16, 8, 4 and 2.)
int lane_width(int64_t size, int widest, int register_lanes) {
  int w = widest;
  while (w >= 2 && size % w != 0) w /= 2;
  if (w < 4 && size >= 3 && size <= std::min(widest, register_lanes)) return static_cast<int>(size);
  return w;
}

// The output axes that some reduce does not depend on: a row that reduces run over once each
// before its own loop (a softmax fused whole: schedule.cc's reads_rows).
std::vector<int> row_axes(const LoweredKernel& plain, int nd) {
  std::vector<bool> row(nd, false);
  for (const UOp* u : plain.sink->toposort()) {
    if (u->op != Ops::REDUCE) continue;
    std::vector<bool> read(nd, false);
    for (const UOp* n : u->toposort())
      if (n->op == Ops::RANGE && n->arg_int() < nd) read[n->arg_int()] = true;
    for (int i = 0; i < nd; i++) row[i] = row[i] || (!read[i] && plain.shape[i] != 1);
  }
  std::vector<int> out;
  for (int i = 0; i < nd; i++)
    if (row[i]) out.push_back(i);
  return out;
}

// Lanes for a kernel of rows (its row axes trailing, their loops innermost): along the row, on
// the output and on each row reduce's innermost loop alike (one LANE, so the row's reduces and its
// own loop are vectors of one width), 4 vectors an iteration of a reduce, no register tile (rows
// share no loads). nullopt where the row's loads or stores would gather.
std::optional<KernelOpts> row_opts(const LoweredKernel& plain, const Target& target, int axis) {
  int itemsize = register_itemsize(plain.ast->src[0]->src[1]->dtype);
  KernelOpts o;
  o.lane_axis = axis, o.reduce_unroll = 4, o.parallel = target.threads;
  o.stash = target.cpu;  // a row is one core's there
  o.lanes =
      lane_width(plain.shape[axis], 2 * target.simd_bytes / itemsize, target.simd_bytes / itemsize);
  o.reduce_lanes = o.lanes;
  return o.lanes > 1 && lanes_are_contiguous(plain, o) ? std::optional(o) : std::nullopt;
}

}  // namespace

LaneAccesses lane_accesses(const LoweredKernel& plain, const KernelOpts& opts,
                           bool epilogue_may_gather) {
  UOpRef sink = simplify_kernel(apply_opts(plain, opts).sink);
  UOpRef lane;
  absl::flat_hash_set<const UOp*> in_loop;  // what a reduce computes per step
  for (const UOp* u : sink->toposort()) {
    if (u->op == Ops::LANE) lane = u->ref();
    if (u->op == Ops::REDUCE)
      for (const UOp* n : u->src[0]->toposort()) in_loop.insert(n);
  }
  LaneAccesses out;
  if (!lane) return out;
  for (const UOp* u : sink->toposort()) {
    if (u->op != Ops::LOAD && u->op != Ops::STORE && u->op != Ops::STASH) continue;
    const UOp* index = u->src[0].get();
    if (epilogue_may_gather && !in_loop.empty() && !in_loop.contains(index)) continue;
    const UOpRef& idx = index->src[1];
    bool uses_lane = false;
    for (const UOp* n : idx->toposort()) uses_lane |= n == lane.get();
    if (!uses_lane) continue;
    bool plain_load = u->op == Ops::LOAD && u->src.size() == 1;  // a short run is loaded whole
    if (renderer::contiguous_base(idx, lane))
      out.contiguous++;
    else if (plain_load &&
             renderer::short_run(idx, lane, static_cast<int>(lane->src[0]->arg_int())))
      out.short_runs++;
    else
      out.gathered++;
  }
  return out;
}

bool lanes_are_contiguous(const LoweredKernel& plain, const KernelOpts& opts,
                          bool epilogue_may_gather) {
  return lane_accesses(plain, opts, epilogue_may_gather).gathered == 0;
}

KernelOpts choose_opts(const LoweredKernel& plain, const Target& target) {
  KernelOpts o;
  if (getenv_int("NOOPT")) return o;
  const UOpRef& ast = plain.ast;
  const UOpRef& store = ast->src[0];
  const Shape& shape = plain.shape;
  int nd = static_cast<int>(shape.size());
  int itemsize = register_itemsize(store->src[1]->dtype);
  bool reduce = has_reduce(ast);
  std::vector<int> rows = row_axes(plain, nd);
  if (!rows.empty())
    if (std::optional<KernelOpts> r = row_opts(plain, target, rows.back())) return *r;

  // vector lanes: two registers wide for reduces, whose accumulators stay in registers; one for
  // elementwise kernels. Those put them on the innermost output axis, where stores are
  // contiguous too. A reduce stores each output once after many loads, so it takes the axis with
  // the widest lanes along which every load in its loop is contiguous (a conv's output channels
  // when its positions are few or strided); its epilogue (a residual add, the store) may gather
  // and scatter.
  int last = nd - 1;
  while (last >= 0 && shape[last] == 1) last--;
  int widest = (reduce ? 2 : 1) * target.simd_bytes / itemsize;
  // a short reduce (a conv over one input channel: 25 products per output) costs little next to
  // its stores, which lanes on any but the last axis scatter: it keeps full lanes on the last
  // axis when they are contiguous
  std::vector<ReduceLoops> reduces = reduce_loops(plain);
  int64_t longest = 0;
  for (const ReduceLoops& r : reduces) longest = std::max(longest, r.length);
  bool short_reduce = reduce && longest <= 32;
  // (an axis a gather's index test depends on takes no lanes, nor does its sum: each lane would
  // read its own row, and the loop would not narrow to one: codegen/narrow.h; 8 decode streams'
  // embedding rows)
  std::vector<RowLoads> along;  // (also read by the register tile and the lane loop's order)
  if (reduce) along = loads_along(plain_kernel(plain), nd);
  const bool gather =
      std::any_of(along.begin(), along.end(), [](const RowLoads& r) { return r.indexes; });
  for (int axis = last; axis >= 0 && (reduce || axis == last); axis--) {
    int w = lane_width(shape[axis], widest, target.simd_bytes / itemsize);
    if (w <= o.lanes || (reduce && along[axis].indexes)) continue;
    KernelOpts trial;
    trial.lane_axis = axis, trial.lanes = w;
    // a reduce's loop may load short runs (a max pool's window: one load of 20 elements and a
    // shuffle for 10 lanes) when there are at least 3 lanes; two lanes on a max pool's 10 outputs
    // gained nothing and took a matmul's register tile and loop order
    LaneAccesses a = lane_accesses(plain, trial, /*epilogue_may_gather=*/axis != last);
    if (a.gathered == 0 && (!reduce || a.short_runs == 0 || w >= 3))
      o.lane_axis = axis, o.lanes = w;
    if (short_reduce && axis == last && o.lanes * itemsize >= target.simd_bytes / 2) break;
  }

  // an elementwise kernel without lanes (a transposing copy, its input strided along the output's
  // last axis) is tiled: lanes gather one register of rows of the input, and the loops run in
  // the order of the input's layout, so the loops inside the lanes' own walk each gathered cache
  // line whole while it stays in L1, and every store writes whole lines (in output order each
  // read fetches a line). The axes laid out outside the lanes' (an NCHW batch) stay outermost,
  // so the loop that cores share is long. The input's innermost axis is unrolled by up to 8: the
  // lanes' gathers from each row then read consecutive elements, which LLVM loads as vectors and
  // transposes in registers (as BEAM chose; on the Intel Xeon host 1.2-1.4x as fast as without).
  if (!reduce && o.lane_axis < 0 && last > 0) {
    std::vector<int> order = source_order(plain_kernel(plain), nd);
    int w = target.simd_bytes / itemsize, u = 8;
    if (!order.empty() && order.back() != last && shape[last] % w == 0) {
      o.order = order, o.lane_axis = last, o.lanes = w;
      while (u > 1 && shape[order.back()] % u != 0) u /= 2;
      if (u > 1) o.unroll_axis = order.back(), o.unroll = u;
    }
  }

  // a reduce with no lanes on its outputs (a row sum: lanes over rows would gather), or narrow
  // ones (a linear layer with 10 outputs), takes wider ones on its innermost reduce axis if a
  // load in its loop streams along it (gathers of others, such as a max pool's output read per
  // pair of positions, cost what the scalar loop does, though not what output lanes save: a
  // matmul's 4 lanes along a 28-wide row beat 32 gathering its input 10x): vector partial sums,
  // combined once after the loop
  if (reduce && o.lanes < 8 && !gather) {
    int64_t inner = 0, biggest = 0;  // of the reduce with the most work
    for (const ReduceLoops& r : reduces)
      if (r.work > biggest) biggest = r.work, inner = r.inner;
    int w = lane_width(inner, widest, target.simd_bytes / itemsize);
    KernelOpts trial;
    trial.reduce_lanes = w;
    if (w >= 4 && w > o.lanes) {
      LaneAccesses a = lane_accesses(plain, trial);
      if (a.contiguous > 0 && (a.gathered == 0 || o.lanes == 1))
        o.reduce_lanes = w, o.lane_axis = -1, o.lanes = 1;
    }
    // and takes 4 vectors an iteration (UNROLL): one add into the accumulator per 4 vectors
    // loaded, not a chain of one each, which a streaming sum waits on
    if (o.reduce_lanes > 1 && inner % (4 * o.reduce_lanes) == 0) o.reduce_unroll = 4;
  }

  // reduces: a register tile over a second output axis, so each load that does not depend on it
  // serves every row of the tile. Its accumulators fill at most half the registers (more are
  // spilled inside the loop: a SwiGLU's gate and up products of 8 rows, 32 vectors, ran 14%
  // slower than 4 rows); the axis is one no load's gate depends on (each row of a padded window's
  // tile would narrow its loops differently: codegen/narrow.h), then the one sharing the most
  // loads, then one whose rows read nearby elements (in cache together), then allowing the most
  // rows (a divisor of its size: 7 rows of a 7x7 conv output), then the longest.
  if (reduce && (o.lane_axis >= 0 || o.reduce_lanes > 1)) {
    const int lanes = o.lane_axis >= 0 ? o.lanes : o.reduce_lanes;
    int regs_per_row = (lanes * itemsize + target.simd_bytes - 1) / target.simd_bytes;
    // with lanes on an output axis, every reduce's accumulators are vectors that stay live until
    // the store combines them (a SwiGLU's gate and up products): they share the half
    int sums = o.lane_axis >= 0 ? std::max<int>(1, static_cast<int>(reduces.size())) : 1;
    int most = std::max(1, target.simd_registers / 2 / regs_per_row / sums);
    // rows whose reads all fall within two cache lines (a conv's output positions, also strided,
    // not its images a whole feature map apart)
    auto near = [&](int i, int rows) {
      return along[i].step && *along[i].step * rows * itemsize <= 128;
    };
    auto rank = [&](int i, int rows) {
      return std::make_tuple(!along[i].gated, along[i].shared, near(i, rows), rows, shape[i]);
    };
    for (int i = 0; i < nd; i++) {
      // a gather's rows each narrow its loop to their own element (codegen/narrow.h): not tiled
      if (i == o.lane_axis || along[i].gathers) continue;
      // with lanes on the sum alone (a matvec), only rows that share more bytes of loads than
      // they read apart: a batch of decode rows over one weight (8 streams) then reads, and
      // dequantizes, each block once for all of its rows
      if (o.lane_axis < 0 && along[i].bytes_shared <= along[i].bytes_along) continue;
      int rows = most;
      while (rows > 1 && shape[i] % rows != 0) rows--;
      if (rows > 1 && (o.unroll == 1 || rank(i, rows) > rank(o.unroll_axis, o.unroll)))
        o.unroll_axis = i, o.unroll = rows;
    }
  }

  // a reduce with lanes loops over its lane axis outermost (when that leaves a share for every
  // core): the other operand's panel for one block of lanes (a matmul's columns of b, a conv's
  // weights for 32 output channels) stays in cache while every row streams past it, rather than
  // all of it streaming past each register tile of rows. Where all of that operand fits in a
  // core's cache (a ResNet's 1x1 convs, 3x3 ones to 128 channels), the lane loop goes inside the
  // others instead, just outside the innermost: each group of rows (a conv's output row) is read
  // from memory once and meets every block there, rather than the rows, strided and many times
  // the cache, streaming past once a block (ResNet-50's kernels on an Intel Xeon, 2 MB of L2: 349
  // -> 279 ms at batch 8, 42 -> 38 ms at batch 1); so it does where that moves fewer bytes,
  // the operand once per group of rows against the others once per block (a strided 1x1 conv
  // whose input is many times its weights).
  // (not in a kernel of rows, whose row loops stay inside the loops its reduces run in)
  if (reduce && o.lane_axis >= 0 && o.order.empty() && rows.empty() &&
      shape[o.lane_axis] / o.lanes >= 4) {
    for (int i = 0; i < nd; i++)
      if (i != o.lane_axis) o.order.push_back(i);
    size_t inner = 0;  // the innermost of the other loops (none in a kernel of one axis)
    for (size_t j = 0; j < o.order.size(); j++)
      if (shape[o.order[j]] > 1) inner = j;
    int64_t groups = 1;  // of rows: what the loops outside it run
    for (size_t j = 0; j < inner; j++) groups *= shape[o.order[j]];
    const RowLoads& lane = along[o.lane_axis];
    bool inside = lane.bytes_along <= target.cache_bytes ||
                  groups * lane.bytes_along < shape[o.lane_axis] / o.lanes * lane.bytes_shared;
    o.order.insert(o.order.begin() + static_cast<int64_t>(inside ? inner : 0), o.lane_axis);
  }

  o.parallel = target.threads && nd > 0;
  // a matvec of one row (a register tile of rows spends the prefetches' registers better)
  o.prefetch = target.cpu && o.lane_axis < 0 && o.reduce_lanes > 1 && !o.tiled() && o.unroll == 1;
  return o;
}

}  // namespace tc::codegen
