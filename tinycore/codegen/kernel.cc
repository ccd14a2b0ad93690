#include "tinycore/codegen/kernel.h"

#include <cstdio>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "tinycore/codegen/decompose.h"
#include "tinycore/codegen/linearize.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/renderer/llvmir.h"
#include "tinycore/uop/printer.h"

namespace tc::codegen {
namespace {

// ALU work of a linear program: each op counts once per iteration of the loops around it.
double count_flops(const std::vector<UOpRef>& program) {
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
      flops += trips * (u->op == Ops::MULACC ? 2 : 1);
    }
  }
  return flops;
}

std::shared_ptr<Kernel> build(const UOpRef& ast, runtime::Device& device) {
  auto k = std::make_shared<Kernel>();
  LoweredKernel lowered = lower(ast);
  UOpRef sink = simplify_kernel(lowered.sink);
  k->name = lowered.name;
  k->program = linearize(sink);
  if (debug_level() >= 5) std::printf("%s\n", print_graph(sink).c_str());
  TC_CHECK(device.renderer() == "llvm", "no renderer for device ", device.name());
  k->source = renderer::render_llvm(k->name, k->program);
  if (debug_level() >= 4) std::printf("%s\n", k->source.c_str());
  k->flops = count_flops(k->program);
  for (const UOpRef& u : k->program)
    if (u->op == Ops::DEFINE_GLOBAL) k->bytes += static_cast<double>(u->arg_ints()[1]) * u->dtype.itemsize();
  k->binary = device.compile(k->name, k->source);
  return k;
}

}  // namespace

std::shared_ptr<const Kernel> get_kernel(const UOpRef& ast, runtime::Device& device) {
  static std::mutex mu;
  static auto* cache = new absl::flat_hash_map<std::pair<UOpRef, std::string>, std::shared_ptr<Kernel>>();
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(ast, device.name());
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  auto k = build(ast, device);
  (*cache)[key] = k;
  return k;
}

}  // namespace tc::codegen
