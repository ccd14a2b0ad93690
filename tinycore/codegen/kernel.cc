#include "tinycore/codegen/kernel.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "tinycore/codegen/beam.h"
#include "tinycore/codegen/decompose.h"
#include "tinycore/codegen/linearize.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/merge_axes.h"
#include "tinycore/codegen/narrow.h"
#include "tinycore/codegen/render_check.h"
#include "tinycore/codegen/saved_kernel.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/renderer/cstyle.h"
#include "tinycore/renderer/llvmir.h"
#include "tinycore/runtime/disk_cache.h"
#include "tinycore/uop/printer.h"

namespace tc::codegen {
namespace {

// ALU work of a linear program: each op counts once per iteration of the loops around it, and
// once per lane when it is a vector.
double count_flops(const std::vector<UOpRef>& program) {
  Lanes lanes = find_lanes(program);
  double trips = 1, flops = 0;
  std::vector<double> stack;
  for (const UOpRef& u : program) {
    if (u->op == Ops::RANGE) {
      stack.push_back(trips);
      trips *= mean_trips(*u);
    } else if (u->op == Ops::END) {
      trips = stack.back();
      stack.pop_back();
    } else if ((group::is_alu(u->op) || u->op == Ops::ASSIGN) && u->dtype != dtypes::index &&
               u->op != Ops::CAST && !dtypes::is_bool(u->dtype)) {
      flops +=
          trips * (u->op == Ops::MULACC ? 2 : 1) * (lanes.is_vector(u.get()) ? lanes.width : 1);
    }
  }
  return flops;
}

// The outermost output loop, which cores share; -1 when there is none.
int64_t parallel_range(const std::vector<UOpRef>& program, int output_dims) {
  int64_t best = -1;
  for (const UOpRef& u : program)
    if (u->op == Ops::RANGE && u->arg_int() < output_dims && (best < 0 || u->arg_int() < best))
      best = u->arg_int();
  return best;
}

// KERNEL_LOG=FILE appends every kernel built to FILE: a hash of its AST, the device, its name and
// its source, for tools/replay.sh to compare the kernels two commits make of the same ASTs.
void log_kernel(const UOpRef& ast, const runtime::Device& device, const Kernel& k) {
  static const char* path = std::getenv("KERNEL_LOG");
  if (!path || !*path) return;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::ofstream(path, std::ios::app) << "@@ kernel " << runtime::stable_hash(print_graph(ast))
                                     << ' ' << device.name() << ' ' << k.name << '\n'
                                     << k.source << "\n@@ end\n";
}

std::shared_ptr<Kernel> build(const UOpRef& ast, runtime::Device& device, const KernelOpts& opts) {
  check_render(ast);
  auto k = std::make_shared<Kernel>();
  k->opts = opts;
  LinearKernel linear = linearize_kernel(ast, opts);
  k->name = linear.name;
  k->program = std::move(linear.program);
  if (debug_level() >= 3) std::printf("kernel %s: %s\n", k->name.c_str(), opts.key().c_str());
  if (debug_level() >= 5) std::printf("%s\n", print_graph(linear.sink).c_str());
  int output_dims = linear.output_dims;
  if (device.renderer() == "llvm") {
    int64_t split = opts.parallel ? parallel_range(k->program, output_dims) : -1;
    k->parallel = split >= 0;
    k->source = renderer::render_llvm(k->name, k->program, split);
  } else {
    renderer::RenderedKernel r =
        renderer::render_cstyle(device.renderer(), k->name, k->program, output_dims);
    k->source = std::move(r.source);
    k->launch = r.launch;
  }
  if (debug_level() >= 4) std::printf("%s\n", k->source.c_str());
  log_kernel(ast, device, *k);
  k->flops = count_flops(k->program);
  for (const UOpRef& u : k->program)
    if (u->op == Ops::DEFINE_GLOBAL)
      k->bytes += static_cast<double>(u->arg_ints()[1]) * u->dtype.itemsize();
  auto start = std::chrono::steady_clock::now();
  compile_kernel(*k, device);
  if (debug_level() >= 3)
    std::printf(
        "kernel %s: compiled in %.1f ms (%s)\n", k->name.c_str(),
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
        runtime::effort_name(k->launch.effort));
  return k;
}

}  // namespace

LinearKernel linearize_kernel(const UOpRef& ast, const KernelOpts& opts) {
  LoweredKernel lowered = lower(ast, opts);
  UOpRef sink = simplify_kernel(lowered.sink);
  if (UOpRef narrowed = narrow_reduce_loops(sink); narrowed != sink)
    sink = simplify_kernel(narrowed);
  return {lowered.name, linearize(sink), sink,
          static_cast<int>(ast->src[0]->src[1]->shape().size()) + (opts.tiled() ? 1 : 0)};
}

bool small_kernel(const Kernel& k) { return k.flops + k.bytes <= 1e6; }

int launch_shares(const Kernel& k, const runtime::Device& device) {
  return k.parallel && !small_kernel(k) ? device.parallelism() : 1;
}

runtime::CompileEffort compile_effort(const Kernel& k) {
  if (small_kernel(k)) return runtime::CompileEffort::kQuick;
  if (k.name.rfind("E_", 0) == 0) return runtime::CompileEffort::kLight;
  if (k.opts.lanes > 1 || k.opts.reduce_lanes > 1) return runtime::CompileEffort::kTiled;
  return runtime::CompileEffort::kFull;
}

void compile_kernel(Kernel& k, runtime::Device& device) {
  k.launch.effort = compile_effort(k);
  k.binary = device.compile(k.name, k.source, k.launch);
}

namespace {

// The compiled kernels, and the heuristic's (or BEAM's) choice of opts for each AST. Kernels are
// built outside the locks, so that several threads build at once; two threads building the same
// kernel both finish and the first to store it wins.
struct KernelCache {
  using OptsKey = std::tuple<UOpRef, std::string, int, int>;
  using KernelKey = std::tuple<UOpRef, std::string, std::string>;
  std::mutex mu;
  absl::flat_hash_map<OptsKey, KernelOpts> chosen;
  absl::flat_hash_map<KernelKey, std::shared_ptr<Kernel>> kernels;
  absl::flat_hash_map<OptsKey, std::shared_ptr<const Kernel>> of_scheduled;  // get_kernel's answers

  static KernelCache& get() {
    static auto* c = new KernelCache();
    return *c;
  }
  static OptsKey opts_key(const UOpRef& ast, const runtime::Device& device) {
    int noopt = getenv_int("NOOPT"), beam = noopt ? 0 : getenv_int("BEAM");
    return {ast, device.name(), noopt, beam};
  }
  // GPU kernels take no opts yet: the heuristic and BEAM's actions are the CPU's (SIMD lanes,
  // register tiles, core splits); their output loops become the launch grid instead
  std::optional<KernelOpts> find_opts(const OptsKey& key, const runtime::Device& device) {
    if (device.renderer() != "llvm") return KernelOpts{};
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = chosen.find(key); it != chosen.end()) return it->second;
    return std::nullopt;
  }
  std::shared_ptr<Kernel> find(const KernelKey& key) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = kernels.find(key);
    return it == kernels.end() ? nullptr : it->second;
  }
  // the kernel of a scheduled AST if it was built or loaded before, else nullptr (no building)
  std::shared_ptr<const Kernel> find(const UOpRef& scheduled, const runtime::Device& device) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = of_scheduled.find(opts_key(scheduled, device));
    return it == of_scheduled.end() ? nullptr : it->second;
  }
  std::shared_ptr<const Kernel> remember(const UOpRef& scheduled, const runtime::Device& device,
                                         std::shared_ptr<const Kernel> k) {
    std::lock_guard<std::mutex> lock(mu);
    make_room();
    return of_scheduled.try_emplace(opts_key(scheduled, device), std::move(k)).first->second;
  }
  // Bounded, as the devices' program caches: past the limit (runtime::kernel_cache_limit) the
  // cache starts again, so that a long process building ever new kernels keeps neither their
  // ASTs nor their code (kernels in use live on). Called with `mu` held.
  void make_room() {
    size_t limit = static_cast<size_t>(runtime::kernel_cache_limit());
    if (kernels.size() >= limit || of_scheduled.size() >= limit)
      chosen.clear(), kernels.clear(), of_scheduled.clear();
  }
};

}  // namespace

std::shared_ptr<const Kernel> get_kernel(const UOpRef& ast, runtime::Device& device,
                                         const KernelOpts& opts) {
  KernelCache& c = KernelCache::get();
  KernelCache::KernelKey key{ast, device.name(), opts.key()};
  if (auto k = c.find(key)) return k;
  auto k = build(ast, device, opts);
  std::lock_guard<std::mutex> lock(c.mu);
  c.make_room();
  return c.kernels.try_emplace(key, k).first->second;
}

namespace {

// get_kernel's kernel, built here (once per scheduled AST: get_kernel keeps its answers): the AST
// with its reduce axes merged, lowered with the heuristic's (or BEAM's) opts.
std::shared_ptr<const Kernel> build_scheduled(const UOpRef& scheduled, runtime::Device& device) {
  KernelCache& c = KernelCache::get();
  UOpRef ast = merge_output_axes(merge_reduce_axes(scheduled));
  KernelCache::OptsKey key = KernelCache::opts_key(ast, device);
  std::optional<KernelOpts> opts = c.find_opts(key, device);
  if (!opts) {  // the heuristic lowers trial kernels: its choice is remembered
    Target target{device.simd_bytes(), device.simd_registers(), device.parallelism() > 1};
    int beam = std::get<3>(key);
    KernelOpts o = beam > 0 ? beam_search(ast, device, beam) : choose_opts(ast, target);
    std::lock_guard<std::mutex> lock(c.mu);
    opts = c.chosen.try_emplace(key, o).first->second;
  }
  return get_kernel(ast, device, *opts);
}

}  // namespace

void forget_built_kernels() {
  KernelCache& c = KernelCache::get();
  std::lock_guard<std::mutex> lock(c.mu);
  c.chosen.clear(), c.kernels.clear(), c.of_scheduled.clear();
}

std::shared_ptr<const Kernel> get_kernel(const UOpRef& scheduled, runtime::Device& device) {
  KernelCache& c = KernelCache::get();
  if (auto k = c.find(scheduled, device)) return k;
  std::string key = saved_kernel_key(scheduled, device);
  std::shared_ptr<const Kernel> k = load_kernel(key, device);
  if (!k) {
    k = build_scheduled(scheduled, device);
    save_kernel(key, *k);
  }
  return c.remember(scheduled, device, std::move(k));
}

void parallel_each(size_t n, int threads, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mu;
  auto work = [&] {
    for (size_t i; (i = next++) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
        next = n;  // the others stop early
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < std::min<int64_t>(threads, static_cast<int64_t>(n)); t++)
    helpers.emplace_back(work);
  work();
  for (std::thread& h : helpers) h.join();
  if (error) std::rethrow_exception(error);
}

std::vector<std::shared_ptr<const Kernel>> get_kernels(const std::vector<UOpRef>& asts,
                                                       runtime::Device& device) {
  std::vector<std::shared_ptr<const Kernel>> kernels(asts.size());
  std::vector<size_t> missing;
  for (size_t i = 0; i < asts.size(); i++)
    if (!(kernels[i] = KernelCache::get().find(asts[i], device))) missing.push_back(i);
  // BEAM times its candidates on the device: one search at a time
  int threads = getenv_int("BEAM") > 0 ? 1 : device.compile_threads();
  parallel_each(missing.size(), threads,
                [&](size_t j) { kernels[missing[j]] = get_kernel(asts[missing[j]], device); });
  return kernels;
}

}  // namespace tc::codegen
