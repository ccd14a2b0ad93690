#include "tinycore/codegen/beam.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "tinycore/codegen/apply_opts.h"
#include "tinycore/codegen/decompose.h"
#include "tinycore/codegen/program.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/disk_cache.h"
#include "tinycore/runtime/thread_pool.h"
#include "tinycore/uop/printer.h"

namespace tc::codegen {
namespace {

// Whether `o` fits the lowered kernel: split axes divide, lanes and register tile on different
// axes.
bool valid(const LoweredKernel& plain, const KernelOpts& o) {
  const Shape& s = plain.shape;
  if (o.lanes > 1 && (o.lane_axis < 0 || s[o.lane_axis] % o.lanes != 0)) return false;
  if (o.unroll > 1 && (o.unroll_axis < 0 || s[o.unroll_axis] % o.unroll != 0)) return false;
  if (o.lanes > 1 && o.unroll > 1 && o.lane_axis == o.unroll_axis) return false;
  if (o.lanes > 1 && o.reduce_lanes > 1 && o.lanes != o.reduce_lanes)
    return false;             // one LANE: outputs and reduces (a row's) share its width
  if (o.reduce_unroll > 1) {  // some reduce's innermost loop is unrolled
    bool unrolls = false;
    for (const UOpRef& r : plain.innermost)
      unrolls = unrolls || reduce_split(r->src[0]->arg_int(), o).unroll > 1;
    if (!unrolls) return false;
  }
  if (o.tiled()) {  // at least two blocks, each of whole lanes or rows
    if (o.tile_axis < 0 || s[o.tile_axis] % o.tile != 0 || s[o.tile_axis] / o.tile < 2)
      return false;
    int split = o.tile_axis == o.lane_axis ? o.lanes : o.tile_axis == o.unroll_axis ? o.unroll : 1;
    if (o.tile % split != 0) return false;
  }
  return true;
}

std::string cache_file(const UOpRef& ast, runtime::Device& device, int width) {
  std::string key =
      absl::StrCat("tinycore beam v5|", device.name(), "|simd ", device.simd_bytes(), "x",
                   device.simd_registers(), "|cache ", device.cache_bytes(), "|threads ",
                   device.parallelism(), "|width ", width, "|\n", print_graph(ast));
  return runtime::cache_path("beam", key, ".txt");
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::vector<KernelOpts> neighbours(const LoweredKernel& plain, const KernelOpts& base,
                                   const Target& target) {
  const Shape& s = plain.shape;
  int nd = static_cast<int>(s.size());
  int itemsize = register_itemsize(plain.ast->src[0]->src[1]->dtype);
  std::vector<KernelOpts> out;
  auto add = [&](KernelOpts o) {
    if (valid(plain, o)) out.push_back(std::move(o));
  };
  for (int axis = 0; axis < nd; axis++) {
    if (s[axis] == 1) continue;
    // UPCAST into lanes: contiguous loads only (gathers lose), except once per output of a
    // reduce, after its loop, where gathers and scatters may pay off (the timing tells)
    for (int w : {2, 4, 8, 16, 32}) {
      if (w * itemsize > 2 * target.simd_bytes) continue;  // at most two registers
      KernelOpts o = base;
      o.lane_axis = axis, o.lanes = w, o.reduce_lanes = 1;
      if (valid(plain, o) && lanes_are_contiguous(plain, o, /*epilogue_may_gather=*/true))
        out.push_back(o);
    }
    for (int u : {2, 4, 8, 16}) {  // UPCAST into a register tile
      KernelOpts o = base;
      o.unroll_axis = axis, o.unroll = u;
      add(o);
    }
    for (int t : {16, 64, 256, 1024}) {  // TILE: blocks of this loop outermost
      KernelOpts o = base;
      o.tile_axis = axis, o.tile = t;
      add(o);
    }
    if (nd > 1) {  // ORDER: this loop outermost
      KernelOpts o = base;
      std::vector<int> order = o.order;
      if (order.empty())
        for (int i = 0; i < nd; i++) order.push_back(i);
      if (order[0] != axis) {
        order.erase(std::find(order.begin(), order.end(), axis));
        order.insert(order.begin(), axis);
        o.order = order;
        add(o);
      }
    }
  }
  if (base.lanes > 1) {  // no lanes
    KernelOpts o = base;
    o.lane_axis = -1, o.lanes = 1;
    add(o);
  }
  if (base.lanes == 1)  // lanes on each reduce's innermost axis instead, of another width, or none
    for (int w : {1, 4, 8, 16, 32}) {
      if (w == base.reduce_lanes || w * itemsize > 2 * target.simd_bytes) continue;
      KernelOpts o = base;
      o.reduce_lanes = w;
      add(o);
    }
  for (int u : {1, 2, 4, 8}) {  // UNROLL each reduce's innermost loop, or not
    KernelOpts o = base;
    o.reduce_unroll = u;
    if (u != base.reduce_unroll) add(o);
  }
  if (base.unroll > 1) {  // no register tile
    KernelOpts o = base;
    o.unroll_axis = -1, o.unroll = 1;
    add(o);
  }
  if (base.tiled()) {  // no cache tile
    KernelOpts o = base;
    o.tile_axis = -1, o.tile = 1;
    add(o);
  }
  if (target.threads) {  // THREAD
    KernelOpts o = base;
    o.parallel = !o.parallel;
    add(o);
  }
  return out;
}

namespace {

// Zero-filled scratch buffers, one per kernel argument of `ast` (no kernel indexes by data).
struct Scratch {
  std::vector<std::unique_ptr<runtime::Buffer>> bufs;
  std::vector<void*> ptrs;
  Scratch(const UOpRef& ast, runtime::Device& device) {
    for (const UOp* u : ast->toposort()) {
      if (u->op != Ops::DEFINE_GLOBAL) continue;
      size_t i = static_cast<size_t>(u->arg_ints()[0]);
      if (bufs.size() <= i) bufs.resize(i + 1), ptrs.resize(i + 1);
      if (bufs[i]) continue;
      bufs[i] = std::make_unique<runtime::Buffer>(device, u->dtype.base(),
                                                  static_cast<size_t>(u->arg_ints()[1]));
      std::vector<uint8_t> zeros(bufs[i]->nbytes());
      bufs[i]->copyin(zeros.data(), zeros.size());
      ptrs[i] = bufs[i]->ensure_allocated();
    }
  }
};

// Seconds one whole run of `kernel` takes, waited for on the device.
double run_once(const Kernel& kernel, runtime::Device& device, const Scratch& s) {
  double t0 = now();
  kernel.binary->run(s.ptrs.data(), launch_shares(kernel, device));
  device.synchronize();
  return now() - t0;
}

// The heuristic's choice (finalists[0]) against the search's best, timed again in turns on the
// same buffers: a round runs each once, so a busy moment of a shared machine falls on all of
// them alike, not on whichever was being timed. Another wins only by beating the heuristic's
// choice by 2% in these rounds: a noisy machine's luck does not make the search's choice slower
// than no search.
KernelOpts confirm(const LoweredKernel& plain, runtime::Device& device,
                   const std::vector<KernelOpts>& finalists) {
  Scratch s(plain.ast, device);
  std::vector<std::shared_ptr<const Kernel>> kernels;
  for (const KernelOpts& o : finalists) {
    kernels.push_back(build_kernel(plain, device, o));
    run_once(*kernels.back(), device, s);  // warm caches and pages
  }
  std::vector<double> best(finalists.size(), 1e30);
  for (int round = 0; round < 5; round++)
    for (size_t i = 0; i < kernels.size(); i++)
      best[i] = std::min(best[i], run_once(*kernels[i], device, s));
  size_t win = std::min_element(best.begin(), best.end()) - best.begin();
  return best[win] < 0.98 * best[0] ? finalists[win] : finalists[0];
}

}  // namespace

double time_opts(const LoweredKernel& plain, runtime::Device& device, const KernelOpts& opts,
                 double cutoff_ms) {
  Scratch s(plain.ast, device);
  auto kernel = build_kernel(plain, device, opts);
  int shares = launch_shares(*kernel, device);
  if (cutoff_ms > 0 && shares > 1) {
    constexpr int kParts = 16;
    double t0 = now();
    kernel->binary->run_part(s.ptrs.data(), 0, kParts);
    device.synchronize();
    double predicted = (now() - t0) * 1e3 * kParts / shares;
    if (predicted > cutoff_ms) {
      BeamStats::timed++;
      return predicted;
    }
  }
  run_once(*kernel, device, s);  // warm caches and pages
  double best = 1e30, spent = 0;
  for (int run = 0; run < 5 && spent < 0.2; run++) {
    double t = run_once(*kernel, device, s);
    best = std::min(best, t), spent += t;
    if (t > 3 * best) break;
  }
  BeamStats::timed++;
  return best * 1e3;
}

KernelOpts beam_search(const LoweredKernel& plain, runtime::Device& device, int width) {
  int nd = static_cast<int>(plain.shape.size());
  std::string file = cache_file(plain.ast, device, width);
  if (std::optional<std::string> text = runtime::read_cache_file(file)) {
    std::string line = text->substr(0, text->find('\n'));
    if (std::optional<KernelOpts> o = parse_opts(line, nd); o && valid(plain, *o)) {
      BeamStats::disk_hits++;
      return *o;
    }
  }
  BeamStats::searches++;
  Target target = target_of(device);
  std::string name = build_kernel(plain, device, KernelOpts{})->name;
  bool tty = isatty(STDERR_FILENO);
  double t_start = now();

  struct Timed {
    double ms;
    KernelOpts opts;
  };
  absl::flat_hash_set<std::string> seen;
  std::vector<Timed> beam;
  auto try_all = [&](const std::vector<KernelOpts>& candidates, int round) {
    std::vector<KernelOpts> fresh;
    for (const KernelOpts& o : candidates)
      if (seen.insert(o.key()).second) fresh.push_back(o);
    // compiled on every core first, then timed one at a time on a quiet machine
    runtime::parallel_for(static_cast<int>(fresh.size()), device.compile_threads(),
                          [&](int i) { build_kernel(plain, device, fresh[i]); });
    std::vector<Timed> timed;
    int done = 0;
    double best = beam.empty() ? 0 : beam[0].ms;
    for (const KernelOpts& o : fresh) {
      // a candidate predicted at twice the best so far is not timed whole
      timed.push_back({time_opts(plain, device, o, 2 * best), o});
      best = best > 0 ? std::min(best, timed.back().ms) : timed.back().ms;
      done++;
      if (tty)
        std::fprintf(stderr, "\rBEAM %s: round %d, %d candidates timed, best %.3f ms   ",
                     name.c_str(), round, done,
                     std::min(timed.back().ms, beam.empty() ? 1e30 : beam[0].ms));
    }
    return timed;
  };
  // from the heuristic's choice (the unoptimized kernel, one thread and no lanes, is far slower
  // and would only fill the beam with slow neighbours to time)
  std::vector<KernelOpts> start = {choose_opts(plain, target)};
  beam = try_all(start, 0);
  for (int round = 1; round <= 8; round++) {
    std::vector<KernelOpts> candidates;
    for (const Timed& t : beam)
      for (KernelOpts& o : neighbours(plain, t.opts, target)) candidates.push_back(std::move(o));
    std::vector<Timed> found = try_all(candidates, round);
    double best_before = beam[0].ms;
    beam.insert(beam.end(), found.begin(), found.end());
    std::sort(beam.begin(), beam.end(), [](const Timed& a, const Timed& b) { return a.ms < b.ms; });
    if (static_cast<int>(beam.size()) > width) beam.resize(width);
    if (!tty && debug_level() >= 1)
      std::fprintf(stderr, "BEAM %s: round %d, %zu candidates, best %.3f ms\n", name.c_str(), round,
                   found.size(), beam[0].ms);
    if (beam[0].ms > best_before * 0.98) break;  // this round found nothing clearly faster
  }
  std::vector<KernelOpts> finalists = start;
  for (const Timed& t : beam)
    if (t.opts.key() != start[0].key()) finalists.push_back(t.opts);
  KernelOpts chosen = confirm(plain, device, finalists);
  // always: in a log (no terminal) this line per kernel is the search's progress
  std::fprintf(stderr,
               "%sBEAM %s: %s%s (%zu candidates, %.1f s; fastest in the search %s, %.3f ms)\n",
               tty ? "\r" : "", name.c_str(), chosen.key().c_str(),
               chosen.key() == start[0].key() ? ", the heuristic's choice" : "", seen.size(),
               now() - t_start, beam[0].opts.key().c_str(), beam[0].ms);

  runtime::write_cache_file(file, opts_line(chosen) + "\n");
  return chosen;
}

}  // namespace tc::codegen
