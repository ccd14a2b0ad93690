#include "tinycore/codegen/program.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "tinycore/codegen/apply_opts.h"
#include "tinycore/codegen/decompose.h"
#include "tinycore/codegen/gpudims.h"
#include "tinycore/codegen/linearize.h"
#include "tinycore/codegen/narrow.h"
#include "tinycore/codegen/render_check.h"
#include "tinycore/helpers.h"
#include "tinycore/renderer/lanes.h"
#include "tinycore/renderer/llvmir.h"
#include "tinycore/runtime/disk_cache.h"
#include "tinycore/uop/printer.h"

namespace tc::codegen {
namespace {

// ALU work of a linear program: each op counts once per iteration of the loops around it, and
// once per lane when it is a vector.
double count_flops(const std::vector<UOpRef>& program) {
  renderer::Lanes lanes = renderer::find_lanes(program);
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
      flops += trips *
               (u->op == Ops::MULACC ? 2
                : u->op == Ops::DOT4 ? 8
                                     : 1) *
               (lanes.is_vector(u.get()) ? lanes.width : 1);
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

std::shared_ptr<Kernel> build(const LoweredKernel& plain, runtime::Device& device,
                              const KernelOpts& opts) {
  check_render(plain);
  auto k = std::make_shared<Kernel>();
  k->opts = opts;
  LinearKernel linear =
      linearize_kernel(plain, opts, device.language() == runtime::Language::kLlvm);
  k->name = linear.name;
  k->reduces = linear.reduces;
  k->program = std::move(linear.program);
  if (debug_level() >= 3) std::printf("kernel %s: %s\n", k->name.c_str(), opts.key().c_str());
  if (debug_level() >= 5) std::printf("%s\n", print_graph(linear.sink).c_str());
  int output_dims = linear.output_dims;
  if (device.language() == runtime::Language::kLlvm) {
    int64_t split = opts.parallel ? parallel_range(k->program, output_dims) : -1;
    k->parallel = split >= 0;
    k->source = renderer::render_llvm(k->name, k->program, split, device.byte_dot());
  } else {
    renderer::RenderedKernel r = render_gpu(device.language(), k->name, k->program, output_dims);
    k->source = std::move(r.source);
    k->launch = r.launch;
  }
  if (debug_level() >= 4) std::printf("%s\n", k->source.c_str());
  log_kernel(plain.ast, device, *k);
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

LinearKernel linearize_kernel(const LoweredKernel& plain, const KernelOpts& opts, bool cpu) {
  LoweredKernel lowered = apply_opts(plain, opts);
  UOpRef sink = simplify_kernel(lowered.sink);
  if (UOpRef narrowed = narrow_reduce_loops(cpu ? narrow_output_loops(sink) : sink);
      narrowed != sink)
    sink = simplify_kernel(narrowed);
  sink = safe_divisions(sink);
  return {lowered.name, linearize(sink), sink, lowered.output_loops, lowered.reduces};
}

bool small_kernel(const Kernel& k) { return k.flops + k.bytes <= 1e6; }

int launch_shares(const Kernel& k, const runtime::Device& device) {
  // a share costs the pool about a microsecond (its threads spin between a step's kernels): a
  // kernel is worth splitting from a quarter of small_kernel's work (a decode step's matvecs)
  return k.parallel && k.flops + k.bytes > 2.5e5 ? device.parallelism() : 1;
}

runtime::CompileEffort compile_effort(const Kernel& k) {
  if (small_kernel(k)) return runtime::CompileEffort::kQuick;
  if (!k.reduces) return runtime::CompileEffort::kLight;
  if (k.opts.lanes > 1 || k.opts.reduce_lanes > 1) return runtime::CompileEffort::kTiled;
  return runtime::CompileEffort::kFull;
}

void compile_kernel(Kernel& k, runtime::Device& device) {
  k.launch.effort = compile_effort(k);
  k.binary = device.compile(k.name, k.source, k.launch);
}

namespace {

// The kernels built, per (ast, device, opts). Kernels are built outside the lock, so that several
// threads build at once; two threads building the same kernel both finish and the first to store
// it wins. Bounded, as the devices' program caches: past runtime::kernel_cache_limit() it starts
// again, so that a long process building ever new kernels keeps neither their ASTs nor their code
// (kernels in use live on).
struct BuiltKernels {
  using Key = std::tuple<UOpRef, std::string, std::string>;
  std::mutex mu;
  absl::flat_hash_map<Key, std::shared_ptr<Kernel>> kernels;

  static BuiltKernels& get() {
    static auto* c = new BuiltKernels();
    return *c;
  }
};

}  // namespace

std::shared_ptr<const Kernel> build_kernel(const LoweredKernel& plain, runtime::Device& device,
                                           const KernelOpts& opts) {
  BuiltKernels& c = BuiltKernels::get();
  BuiltKernels::Key key{plain.ast, device.name(), opts.key()};
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.kernels.find(key); it != c.kernels.end()) return it->second;
  }
  auto k = build(plain, device, opts);
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.kernels.size() >= static_cast<size_t>(runtime::kernel_cache_limit())) c.kernels.clear();
  return c.kernels.try_emplace(key, k).first->second;
}

void drop_build_cache() {
  BuiltKernels& c = BuiltKernels::get();
  std::lock_guard<std::mutex> lock(c.mu);
  c.kernels.clear();
}

}  // namespace tc::codegen
