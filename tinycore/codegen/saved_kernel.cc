#include "tinycore/codegen/saved_kernel.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/disk_cache.h"
#include "tinycore/uop/printer.h"

namespace tc::codegen {
namespace {

// The file this code was loaded from (the program, or the Python module), by path, size and
// modification time.
const std::string& this_build() {
  static const std::string stamp = [] {
    Dl_info info{};
    struct stat st {};
    if (!dladdr(reinterpret_cast<void*>(&saved_kernel_key), &info) || !info.dli_fname ||
        stat(info.dli_fname, &st) != 0)
      return std::string("unknown build");
    return absl::StrCat(info.dli_fname, " ", st.st_size, " ", st.st_mtim.tv_sec, ".",
                        st.st_mtim.tv_nsec);
  }();
  return stamp;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::string saved_kernel_key(const UOpRef& scheduled, const runtime::Device& device) {
  return absl::StrCat("tinycore kernel v1|", this_build(), "|", device.name(), "|simd ",
                      device.simd_bytes(), "x", device.simd_registers(), "|cores ",
                      device.parallelism(), "|NOOPT=", env("NOOPT"), "|BEAM=", env("BEAM"),
                      "|TRANSCENDENTAL=", env("TRANSCENDENTAL"),
                      "|CHECK_RENDER=", env("CHECK_RENDER"), "|\n", print_graph(scheduled));
}

std::shared_ptr<Kernel> load_kernel(const std::string& key, runtime::Device& device) {
  std::optional<std::string> entry = runtime::cache_lookup("kernel", key);
  if (!entry) return nullptr;
  std::istringstream in(*entry);
  auto k = std::make_shared<Kernel>();
  std::string opts;
  int parallel = 0, nd = 0;
  runtime::LaunchSpec& l = k->launch;
  if (!std::getline(in, k->name) ||
      !(in >> k->flops >> k->bytes >> parallel >> l.global[0] >> l.global[1] >> l.global[2] >>
        l.local[0] >> l.local[1] >> l.local[2] >> l.nargs >> nd) ||
      !in.ignore() || !std::getline(in, opts))
    return nullptr;
  std::optional<KernelOpts> o = parse_opts(opts, nd);
  if (!o) return nullptr;
  k->opts = *o;
  k->parallel = parallel != 0;
  k->source = entry->substr(static_cast<size_t>(in.tellg()));
  if (debug_level() >= 3) std::printf("kernel %s: %s (saved)\n", k->name.c_str(), o->key().c_str());
  if (debug_level() >= 4) std::printf("%s\n", k->source.c_str());
  k->binary = device.compile(k->name, k->source, k->launch);
  return k;
}

void save_kernel(const std::string& key, const Kernel& k) {
  const runtime::LaunchSpec& l = k.launch;
  int nd = 0;  // the output axes the opts may name: every axis they name is below this
  for (int axis : {k.opts.lane_axis, k.opts.unroll_axis}) nd = std::max(nd, axis + 1);
  nd = std::max(nd, static_cast<int>(k.opts.order.size()));
  char counts[160];
  std::snprintf(counts, sizeof counts, "%.17g %.17g %d %lld %lld %lld %lld %lld %lld %d %d",
                k.flops, k.bytes, k.parallel ? 1 : 0, static_cast<long long>(l.global[0]),
                static_cast<long long>(l.global[1]), static_cast<long long>(l.global[2]),
                static_cast<long long>(l.local[0]), static_cast<long long>(l.local[1]),
                static_cast<long long>(l.local[2]), l.nargs, nd);
  runtime::cache_store("kernel", key,
                       absl::StrCat(k.name, "\n", counts, "\n", opts_line(k.opts), "\n", k.source));
}

}  // namespace tc::codegen
