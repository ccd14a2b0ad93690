#include "tinycore/codegen/kernel.h"

#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "tinycore/codegen/beam.h"
#include "tinycore/codegen/merge_axes.h"
#include "tinycore/codegen/saved_kernel.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/host_function.h"
#include "tinycore/runtime/thread_pool.h"

namespace tc::codegen {
namespace {

// The heuristic's (or BEAM's) choice of opts for each AST, and get_kernel's answers. Bounded as
// build_kernel's cache is (runtime::kernel_cache_limit).
struct KernelCache {
  using OptsKey = std::tuple<UOpRef, std::string, int, int>;
  std::mutex mu;
  absl::flat_hash_map<OptsKey, KernelOpts> chosen;
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
    if (device.language() != runtime::Language::kLlvm) return KernelOpts{};
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = chosen.find(key); it != chosen.end()) return it->second;
    return std::nullopt;
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
    if (of_scheduled.size() >= static_cast<size_t>(runtime::kernel_cache_limit()))
      chosen.clear(), of_scheduled.clear();
    return of_scheduled.try_emplace(opts_key(scheduled, device), std::move(k)).first->second;
  }
};

// get_kernel's kernel, built here (once per scheduled AST: get_kernel keeps its answers): the AST
// lowered, its loops merged, with the heuristic's (or BEAM's) opts.
std::shared_ptr<const Kernel> build_scheduled(const UOpRef& scheduled, runtime::Device& device) {
  KernelCache& c = KernelCache::get();
  // lowered once: the opts tried and chosen are rewrites of it
  LoweredKernel plain = merge_axes(lower(scheduled));
  KernelCache::OptsKey key = KernelCache::opts_key(scheduled, device);
  std::optional<KernelOpts> opts = c.find_opts(key, device);
  if (!opts) {  // the heuristic's choice is remembered
    Target target = target_of(device);
    int beam = std::get<3>(key);
    KernelOpts o = beam > 0 ? beam_search(plain, device, beam) : choose_opts(plain, target);
    std::lock_guard<std::mutex> lock(c.mu);
    opts = c.chosen.try_emplace(key, o).first->second;
  }
  return build_kernel(plain, device, *opts);
}

// A scheduled host function, SINK(STORE(out, CUSTOM(sources))), or copy, SINK(STORE(out,
// COPY(source))), as a kernel running it.
std::shared_ptr<const Kernel> host_kernel(const UOp& call, runtime::Device& device) {
  auto k = std::make_shared<Kernel>();
  const std::string& name = std::get<std::string>(call.arg);
  int64_t numel = shape_numel(call.shape());
  k->bytes = static_cast<double>(numel * call.dtype.itemsize() * (call.src.size() + 1));
  k->host = true;
  if (call.op == Ops::COPY) {
    runtime::Device& from = runtime::get_device(name);
    k->name = "copy_" + from.name() + "_" + device.name();
    k->binary = runtime::copy_program(from, device, numel * call.dtype.itemsize());
  } else {
    k->name = "host_" + name;
    k->binary = runtime::host_program(name, numel, call.dtype, device);
  }
  return k;
}

}  // namespace

void forget_built_kernels() {
  KernelCache& c = KernelCache::get();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    c.chosen.clear(), c.of_scheduled.clear();
  }
  drop_build_cache();
}

std::shared_ptr<const Kernel> get_kernel(const UOpRef& scheduled, runtime::Device& device) {
  if (const UOpRef& value = scheduled->src[0]->src[1];
      value->op == Ops::CUSTOM || value->op == Ops::COPY)
    return host_kernel(*value, device);
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

std::vector<std::shared_ptr<const Kernel>> get_kernels(const std::vector<UOpRef>& asts,
                                                       runtime::Device& device) {
  std::vector<std::shared_ptr<const Kernel>> kernels(asts.size());
  std::vector<size_t> missing;
  for (size_t i = 0; i < asts.size(); i++)
    if (!(kernels[i] = KernelCache::get().find(asts[i], device))) missing.push_back(i);
  // BEAM times its candidates on the device: one search at a time
  int threads = getenv_int("BEAM") > 0 ? 1 : device.compile_threads();
  runtime::parallel_for(static_cast<int>(missing.size()), threads,
                        [&](int j) { kernels[missing[j]] = get_kernel(asts[missing[j]], device); });
  return kernels;
}

}  // namespace tc::codegen
