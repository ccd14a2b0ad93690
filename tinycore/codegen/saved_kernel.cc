#include "tinycore/codegen/saved_kernel.h"

#include <elf.h>
#include <link.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <variant>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/disk_cache.h"
#include "tinycore/uop/printer.h"

namespace tc::codegen {
namespace {

// The GNU build ID (the linker's hash of the file's contents) of the loaded object holding this
// code: the program, or the Python module. Empty when it has none: then nothing is saved.
std::string find_build_id() {
  struct Search {
    uintptr_t code = reinterpret_cast<uintptr_t>(&find_build_id);
    std::string id;
  } search;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        bool holds_code = false;
        for (int i = 0; i < info->dlpi_phnum; i++) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          uintptr_t start = info->dlpi_addr + p.p_vaddr;
          holds_code |= p.p_type == PT_LOAD && s->code >= start && s->code < start + p.p_memsz;
        }
        if (!holds_code) return 0;
        for (int i = 0; i < info->dlpi_phnum; i++) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          if (p.p_type != PT_NOTE) continue;
          const char* at = reinterpret_cast<const char*>(info->dlpi_addr + p.p_vaddr);
          const char* end = at + p.p_memsz;
          while (at + sizeof(ElfW(Nhdr)) <= end) {  // notes: header, name, description, aligned
            ElfW(Nhdr) n;
            std::memcpy(&n, at, sizeof n);
            const char* name = at + sizeof n;
            const char* desc = name + ((n.n_namesz + 3) & ~3u);
            if (desc + n.n_descsz > end) break;
            if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
              for (uint32_t b = 0; b < n.n_descsz; b++)
                s->id += absl::StrFormat("%02x", static_cast<unsigned char>(desc[b]));
            at = desc + ((n.n_descsz + 3) & ~3u);
          }
        }
        return 1;
      },
      &search);
  return search.id;
}

const std::string& build_id() {
  static const std::string id = find_build_id();
  return id;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// An entry: the name, a line of counts, the opts, then the source.
struct Counts {
  double flops = 0, bytes = 0;
  int64_t parallel = 0, reduces = 0, nargs = 0, nd = 0;
  std::array<int64_t, 3> global{}, local{};
};

std::string counts_line(const Kernel& k, int64_t nd) {
  const runtime::LaunchSpec& l = k.launch;
  return absl::StrCat(absl::StrFormat("%.17g %.17g ", k.flops, k.bytes), k.parallel ? 1 : 0, " ",
                      k.reduces ? 1 : 0, " ", absl::StrJoin(l.global, " "), " ",
                      absl::StrJoin(l.local, " "), " ", l.nargs, " ", nd);
}

std::optional<Counts> parse_counts(absl::string_view line) {
  std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
  Counts c;
  std::vector<int64_t*> ints = {&c.parallel, &c.reduces,  &c.global[0], &c.global[1], &c.global[2],
                                &c.local[0], &c.local[1], &c.local[2],  &c.nargs,     &c.nd};
  if (f.size() != 2 + ints.size() || !absl::SimpleAtod(f[0], &c.flops) ||
      !absl::SimpleAtod(f[1], &c.bytes))
    return std::nullopt;
  for (size_t i = 0; i < ints.size(); i++)
    if (!absl::SimpleAtoi(f[2 + i], ints[i]) || *ints[i] < 0) return std::nullopt;
  for (int d = 0; d < 3; d++)
    if (c.global[d] < 1 || c.local[d] < 1) return std::nullopt;
  return c;
}

}  // namespace

std::string saved_kernel_key(const UOpRef& scheduled, const runtime::Device& device) {
  if (build_id().empty()) return "";
  // the graph as printed, then its float constants exactly (printed, they are rounded)
  std::string consts;
  for (const UOp* u : scheduled->toposort())
    if (const double* v = std::get_if<double>(&u->arg))
      absl::StrAppend(&consts, absl::StrFormat("%a ", *v));
  return absl::StrCat(
      "tinycore kernel v2|build ", build_id(), "|", device.name(), "|simd ", device.simd_bytes(),
      "x", device.simd_registers(), "|cache ", device.cache_bytes(), "|cores ",
      device.parallelism(), "|NOOPT=", env("NOOPT"), "|BEAM=", env("BEAM"),
      "|TRANSCENDENTAL=", env("TRANSCENDENTAL"), "|CHECK_RENDER=", env("CHECK_RENDER"), "|\n",
      print_graph(scheduled), "\n", consts);
}

std::shared_ptr<Kernel> load_kernel(const std::string& key, runtime::Device& device) {
  if (key.empty()) return nullptr;
  std::optional<std::string> entry = runtime::cache_lookup("kernel", key);
  if (!entry) return nullptr;
  std::vector<absl::string_view> part = absl::StrSplit(*entry, absl::MaxSplits('\n', 3));
  if (part.size() != 4) return nullptr;
  std::optional<Counts> c = parse_counts(part[1]);
  std::optional<KernelOpts> o =
      c ? parse_opts(std::string(part[2]), static_cast<int>(c->nd)) : std::nullopt;
  if (!o || part[0].empty() || part[3].empty()) return nullptr;
  auto k = std::make_shared<Kernel>();
  k->name = std::string(part[0]);
  k->source = std::string(part[3]);
  k->opts = *o;
  k->flops = c->flops, k->bytes = c->bytes, k->parallel = c->parallel != 0;
  k->reduces = c->reduces != 0;
  k->launch = {c->global, c->local, static_cast<int>(c->nargs)};
  if (debug_level() >= 3) std::printf("kernel %s: %s (saved)\n", k->name.c_str(), o->key().c_str());
  if (debug_level() >= 4) std::printf("%s\n", k->source.c_str());
  try {
    compile_kernel(*k, device);
  } catch (const Error&) {
    return nullptr;  // a source that does not compile was not written by save_kernel: build anew
  }
  return k;
}

void save_kernel(const std::string& key, const Kernel& k) {
  if (key.empty()) return;
  int nd = 0;  // the output axes the opts may name: every axis they name is below this
  for (int axis : {k.opts.lane_axis, k.opts.unroll_axis}) nd = std::max(nd, axis + 1);
  nd = std::max(nd, static_cast<int>(k.opts.order.size()));
  runtime::cache_store(
      "kernel", key,
      absl::StrCat(k.name, "\n", counts_line(k, nd), "\n", opts_line(k.opts), "\n", k.source));
}

}  // namespace tc::codegen
