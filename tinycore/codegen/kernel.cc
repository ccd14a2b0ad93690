#include "tinycore/codegen/kernel.h"

#include <cstdio>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "tinycore/codegen/beam.h"
#include "tinycore/codegen/decompose.h"
#include "tinycore/codegen/linearize.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/render_check.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/renderer/cstyle.h"
#include "tinycore/renderer/llvmir.h"
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
      trips *= static_cast<double>(u->src[0]->arg_int());
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
  k->flops = count_flops(k->program);
  for (const UOpRef& u : k->program)
    if (u->op == Ops::DEFINE_GLOBAL)
      k->bytes += static_cast<double>(u->arg_ints()[1]) * u->dtype.itemsize();
  k->binary = device.compile(k->name, k->source, k->launch);
  return k;
}

}  // namespace

LinearKernel linearize_kernel(const UOpRef& ast, const KernelOpts& opts) {
  LoweredKernel lowered = lower(ast, opts);
  UOpRef sink = simplify_kernel(lowered.sink);
  return {lowered.name, linearize(sink), sink,
          static_cast<int>(ast->src[0]->src[1]->shape().size())};
}

int launch_shares(const Kernel& k, const runtime::Device& device) {
  return k.parallel && k.flops + k.bytes > 1e6 ? device.parallelism() : 1;
}

std::shared_ptr<const Kernel> get_kernel(const UOpRef& ast, runtime::Device& device,
                                         const KernelOpts& opts) {
  static std::mutex mu;
  using Key = std::tuple<UOpRef, std::string, std::string>;
  static auto* cache = new absl::flat_hash_map<Key, std::shared_ptr<Kernel>>();
  std::lock_guard<std::mutex> lock(mu);
  Key key{ast, device.name(), opts.key()};
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  auto k = build(ast, device, opts);
  (*cache)[key] = k;
  return k;
}

std::shared_ptr<const Kernel> get_kernel(const UOpRef& ast, runtime::Device& device) {
  // the heuristic lowers trial kernels: remember its choice, keyed by all it depends on
  static std::mutex mu;
  using Key = std::tuple<UOpRef, std::string, int, int>;
  static auto* chosen = new absl::flat_hash_map<Key, KernelOpts>();
  // GPU kernels take no opts yet: the heuristic and BEAM's actions are the CPU's (SIMD lanes,
  // register tiles, core splits); their output loops become the launch grid instead
  if (device.renderer() != "llvm") return get_kernel(ast, device, KernelOpts{});
  int noopt = getenv_int("NOOPT"), beam = noopt ? 0 : getenv_int("BEAM");
  Key key{ast, device.name(), noopt, beam};
  KernelOpts opts;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = chosen->find(key);
    if (it == chosen->end()) {
      Target target{device.simd_bytes(), device.simd_registers(), device.parallelism() > 1};
      it =
          chosen->emplace(key, beam > 0 ? beam_search(ast, device, beam) : choose_opts(ast, target))
              .first;
    }
    opts = it->second;
  }
  return get_kernel(ast, device, opts);
}

}  // namespace tc::codegen
