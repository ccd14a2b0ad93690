#include "tinycore/engine/realize.h"

#include <chrono>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tinycore/codegen/kernel.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/schedule/buffers.h"
#include "tinycore/schedule/multi.h"

namespace tc::engine {
namespace {
thread_local std::vector<Launch>* capturing = nullptr;
thread_local std::vector<UOpRef>* capturing_marked = nullptr;
thread_local int freeing_intermediates = 0;
}  // namespace

FreeIntermediates::FreeIntermediates() { freeing_intermediates++; }
FreeIntermediates::~FreeIntermediates() { freeing_intermediates--; }

LaunchCapture::LaunchCapture(std::vector<Launch>* launches, std::vector<UOpRef>* marked) {
  if (capturing) jit_fail("TinyJit: a capture is already running on this thread (nested TinyJit?)");
  capturing = launches;
  capturing_marked = marked;
}
LaunchCapture::~LaunchCapture() { capturing = nullptr, capturing_marked = nullptr; }
bool LaunchCapture::active() { return capturing != nullptr; }
LaunchCapture::Pause::Pause() : launches_(capturing), marked_(capturing_marked) {
  capturing = nullptr, capturing_marked = nullptr;
}
LaunchCapture::Pause::~Pause() { capturing = launches_, capturing_marked = marked_; }

namespace {
// The kernels of `items`, those not built yet built together (on several threads where the
// device allows), per device.
std::vector<std::shared_ptr<const codegen::Kernel>> kernels_of(
    const std::vector<schedule::ScheduleItem>& items) {
  std::vector<std::shared_ptr<const codegen::Kernel>> kernels(items.size());
  absl::flat_hash_map<runtime::Device*, std::vector<size_t>> by_device;
  for (size_t i = 0; i < items.size(); i++)
    by_device[&items[i].bufs[0]->buffer->device()].push_back(i);
  for (const auto& [device, indices] : by_device) {
    std::vector<UOpRef> asts;
    for (size_t i : indices) asts.push_back(items[i].ast);
    auto built = codegen::get_kernels(asts, *device);
    for (size_t j = 0; j < indices.size(); j++) kernels[indices[j]] = std::move(built[j]);
  }
  return kernels;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The buffer a realized value's view reads (null for a constant).
runtime::Buffer* buffer_under(const UOpRef& view) {
  const UOpRef& b = schedule::base_buffer(view);
  return b->op == Ops::BUFFER ? b->buffer.get() : nullptr;
}

// For each item, the buffers to free once it ran: those the schedule's kernels write that are not
// allocated yet and hold none of the realized `views`, after the last kernel that reads them.
std::vector<std::vector<runtime::Buffer*>> frees_after(
    const std::vector<schedule::ScheduleItem>& items, const std::vector<UOpRef>& views) {
  absl::flat_hash_set<const runtime::Buffer*> kept;
  for (const UOpRef& view : views) kept.insert(buffer_under(view));
  absl::flat_hash_map<runtime::Buffer*, size_t> last_use;
  for (size_t i = 0; i < items.size(); i++)
    for (const UOpRef& b : items[i].bufs) last_use[b->buffer.get()] = i;
  std::vector<std::vector<runtime::Buffer*>> frees(items.size());
  for (const schedule::ScheduleItem& item : items) {
    runtime::Buffer* out = item.bufs[0]->buffer.get();
    if (!out->allocated() && !kept.contains(out)) {
      kept.insert(out);  // once: an output written twice (assigns) is freed after its last use
      frees[last_use[out]].push_back(out);
    }
  }
  return frees;
}

// Runs each item with its kernel, in order (and records the launches while capturing), freeing
// after each item the buffers `frees` names for it.
void run_kernels(const std::vector<schedule::ScheduleItem>& items,
                 const std::vector<std::shared_ptr<const codegen::Kernel>>& kernels,
                 const std::vector<std::vector<runtime::Buffer*>>& frees = {}) {
  for (size_t i = 0; i < items.size(); i++) {
    const schedule::ScheduleItem& item = items[i];
    runtime::Device& device = item.bufs[0]->buffer->device();
    const auto& kernel = kernels[i];
    std::vector<void*> ptrs;
    std::vector<bool> fresh;  // recorded for a capture only: no extra work on the plain path
    for (const UOpRef& b : item.bufs) {
      if (capturing) fresh.push_back(!b->buffer->allocated());
      ptrs.push_back(b->buffer->ensure_allocated());
    }

    auto t0 = std::chrono::steady_clock::now();
    int shares = codegen::launch_shares(*kernel, device);
    kernel->binary->run(ptrs.data(), shares);
    if (debug_level() >= 2) device.synchronize();  // a GPU launch only enqueues: time the run
    double s = seconds_since(t0);
    if (capturing) {
      Launch l{kernel, {}, std::move(fresh), shares};
      for (const UOpRef& b : item.bufs) l.bufs.push_back(b->buffer);
      capturing->push_back(std::move(l));
    }

    count_launch(*kernel, device, ptrs.size(), s);
    if (i < frees.size())
      for (runtime::Buffer* b : frees[i]) b->release();
  }
}
}  // namespace

void count_launch(const codegen::Kernel& kernel, runtime::Device& device, size_t args,
                  double seconds) {
  GlobalCounters::kernel_count++;
  GlobalCounters::global_ops += kernel.flops;
  GlobalCounters::global_mem += kernel.bytes;
  GlobalCounters::time_sum_s += seconds;
  if (debug_level() < 2) return;
  std::printf(
      "*** %-6s %4lld %-32s arg %2zu mem %8.2f MB tm %10.2fus/%9.2fms (%8.2f GFLOPS %7.2f GB/s)\n",
      device.name().c_str(), static_cast<long long>(GlobalCounters::kernel_count),
      kernel.name.c_str(), args, kernel.bytes / 1e6, seconds * 1e6,
      GlobalCounters::time_sum_s * 1e3, kernel.flops / seconds / 1e9, kernel.bytes / seconds / 1e9);
}

void run_schedule(const std::vector<schedule::ScheduleItem>& items) {
  run_kernels(items, kernels_of(items));
}

namespace {
// realize() of roots that hold multi-device tensors: each lowered (schedule/multi.h) into its
// devices' pieces, the pieces computed together, each root's answer the MULTI of its pieces'.
std::vector<UOpRef> realize_pieces(const std::vector<UOpRef>& roots,
                                   const std::vector<UOpRef>& targets) {
  std::vector<UOpRef> lowered, flat_roots, flat_targets;
  for (size_t i = 0; i < roots.size(); i++) {
    UOpRef l = schedule::lower_multi(roots[i]), target = targets.empty() ? nullptr : targets[i];
    lowered.push_back(l);
    if (target && (target->op == Ops::MULTI) != (l->op == Ops::MULTI))
      fail("assign: the value is on %s and the tensor on %s",
           l->op == Ops::MULTI ? "several devices" : "one device",
           target->op == Ops::MULTI ? "several" : "one");
    if (l->op != Ops::MULTI) {
      flat_roots.push_back(l), flat_targets.push_back(target);
      continue;
    }
    for (size_t d = 0; d < l->src.size(); d++)
      flat_roots.push_back(l->src[d]), flat_targets.push_back(target ? target->src[d] : nullptr);
  }
  std::vector<UOpRef> views = realize(flat_roots, flat_targets), out;
  size_t at = 0;
  for (const UOpRef& l : lowered) {
    if (l->op != Ops::MULTI) {
      out.push_back(views[at++]);
      continue;
    }
    std::vector<UOpRef> pieces(views.begin() + at, views.begin() + at + l->src.size());
    at += l->src.size();
    out.push_back(schedule::make_multi(std::move(pieces), schedule::sharding_of(*l)));
  }
  return out;
}
}  // namespace

std::vector<UOpRef> realize(const std::vector<UOpRef>& roots, const std::vector<UOpRef>& targets) {
  if (schedule::may_hold_multi(roots) || schedule::may_hold_multi(targets))
    return realize_pieces(roots, targets);
  auto t0 = std::chrono::steady_clock::now();
  const bool freeing = freeing_intermediates > 0 && !capturing;
  std::vector<UOpRef> marked;  // the nodes caching values, whose buffers may be freed
  std::vector<schedule::ScheduleItem> items =
      schedule::create_schedule(roots, targets, freeing ? &marked : capturing_marked);
  double schedule_s = seconds_since(t0);
  std::vector<std::shared_ptr<const codegen::Kernel>> kernels = kernels_of(items);
  double kernels_s = seconds_since(t0) - schedule_s;
  // each root's value: its target, the buffer view the schedule computes it into, or itself
  std::vector<UOpRef> views;
  for (size_t i = 0; i < roots.size(); i++) {
    const UOpRef& r = roots[i];
    views.push_back(!targets.empty() && targets[i] ? targets[i] : r->realized ? r->realized : r);
  }
  std::vector<std::vector<runtime::Buffer*>> frees;
  if (freeing) frees = frees_after(items, views);
  run_kernels(items, kernels, frees);
  for (const UOpRef& n : marked)
    if (runtime::Buffer* b = buffer_under(n->realized); b && !b->allocated()) n->realized = nullptr;
  if (debug_level() >= 1 && !items.empty()) {
    double s = seconds_since(t0);
    std::printf("realize: %zu kernel%s in %.2f ms (schedule %.2f, kernels %.2f, runs %.2f)\n",
                items.size(), items.size() == 1 ? "" : "s", s * 1e3, schedule_s * 1e3,
                kernels_s * 1e3, (s - schedule_s - kernels_s) * 1e3);
  }
  return views;
}

}  // namespace tc::engine
