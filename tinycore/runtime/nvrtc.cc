#include "tinycore/runtime/nvrtc.h"

#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tinycore/error.h"
#include "tinycore/runtime/disk_cache.h"
#include "tinycore/runtime/dynamic_library.h"

#ifndef TC_CUDA_ROOT
#define TC_CUDA_ROOT "/usr/local/cuda"
#endif

namespace tc::runtime {
namespace {

// The NVRTC entry points tinycore uses, each named as in nvrtc.h.
struct Nvrtc {
  DynamicLibrary lib{{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                      TC_CUDA_ROOT "/lib64/libnvrtc.so.13", TC_CUDA_ROOT "/lib64/libnvrtc.so"}};
  std::string unavailable;  // why NVRTC cannot be used; empty when it can
  std::string version;

#define TC_NVRTC_FUNCTIONS(X)  \
  X(nvrtcVersion)              \
  X(nvrtcGetNumSupportedArchs) \
  X(nvrtcGetSupportedArchs)    \
  X(nvrtcGetErrorString)       \
  X(nvrtcCreateProgram)        \
  X(nvrtcDestroyProgram)       \
  X(nvrtcCompileProgram)       \
  X(nvrtcGetProgramLogSize)    \
  X(nvrtcGetProgramLog)        \
  X(nvrtcGetPTXSize)           \
  X(nvrtcGetPTX)               \
  X(nvrtcGetCUBINSize)         \
  X(nvrtcGetCUBIN)
#define TC_DECLARE(fn) decltype(&::fn) fn = nullptr;
  TC_NVRTC_FUNCTIONS(TC_DECLARE)
#undef TC_DECLARE

  Nvrtc() {
    if (!lib.loaded()) {
      unavailable = "libnvrtc cannot be loaded (" + lib.error() + ")";
      return;
    }
    try {
#define TC_LOAD(fn) fn = lib.get<decltype(&::fn)>(#fn);
      TC_NVRTC_FUNCTIONS(TC_LOAD)
#undef TC_LOAD
    } catch (const Error& e) {
      unavailable = e.what();
      return;
    }
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    version = absl::StrCat(major, ".", minor);
  }

  void check(nvrtcResult r, const char* call) const {
    if (r != NVRTC_SUCCESS) fail("CUDA: %s failed: %s", call, nvrtcGetErrorString(r));
  }
};

const Nvrtc& nvrtc() {
  static const Nvrtc api;
  if (!api.unavailable.empty()) fail("CUDA: NVRTC is not available: %s", api.unavailable);
  return api;
}

// "sm_" then the compute capability times ten, and an optional feature suffix ("sm_90a").
bool valid_arch(const std::string& arch) {
  if (arch.compare(0, 3, "sm_") != 0) return false;
  std::string_view cc = std::string_view(arch).substr(3);
  if (!cc.empty() && (cc.back() == 'a' || cc.back() == 'f')) cc.remove_suffix(1);
  return cc.size() >= 2 &&
         std::all_of(cc.begin(), cc.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Where NVRTC finds cuda_fp16.h and cuda_bf16.h: $CUDA_PATH/include, then the toolkit tinycore
// was built with.
std::vector<std::string> include_options() {
  std::vector<std::string> out;
  if (const char* p = std::getenv("CUDA_PATH"); p && *p)
    out.push_back(absl::StrCat("-I", p, "/include"));
  out.push_back("-I" TC_CUDA_ROOT "/include");
  return out;
}

std::string compile_now(const Nvrtc& api, const std::string& name, const std::string& source,
                        const std::vector<std::string>& options, bool cubin) {
  nvrtcProgram prog = nullptr;
  api.check(
      api.nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr),
      "nvrtcCreateProgram");
  struct Destroy {
    const Nvrtc& api;
    nvrtcProgram* prog;
    ~Destroy() { api.nvrtcDestroyProgram(prog); }
  } destroy{api, &prog};

  std::vector<const char*> opts;
  for (const std::string& o : options) opts.push_back(o.c_str());
  nvrtcResult r = api.nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  if (r != NVRTC_SUCCESS) {
    size_t size = 0;
    api.check(api.nvrtcGetProgramLogSize(prog, &size), "nvrtcGetProgramLogSize");
    std::string log(size, '\0');
    api.check(api.nvrtcGetProgramLog(prog, log.data()), "nvrtcGetProgramLog");
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    if (r == NVRTC_ERROR_COMPILATION) fail("CUDA: kernel %s failed to compile: %s", name, log);
    fail("CUDA: kernel %s failed to compile (%s): %s", name, api.nvrtcGetErrorString(r), log);
  }
  size_t size = 0;
  std::string out;
  if (cubin) {
    api.check(api.nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
    out.resize(size);
    api.check(api.nvrtcGetCUBIN(prog, out.data()), "nvrtcGetCUBIN");
  } else {
    api.check(api.nvrtcGetPTXSize(prog, &size), "nvrtcGetPTXSize");
    out.resize(size);
    api.check(api.nvrtcGetPTX(prog, out.data()), "nvrtcGetPTX");
    while (!out.empty() && out.back() == '\0') out.pop_back();  // c_str() terminates it
  }
  return out;
}

}  // namespace

bool nvrtc_available(std::string* why) {
  try {
    nvrtc();
    return true;
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
}

std::string nvrtc_version() { return nvrtc().version; }

std::vector<int> nvrtc_supported_archs() {
  const Nvrtc& api = nvrtc();
  int n = 0;
  api.check(api.nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(n);
  api.check(api.nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

namespace {

// NVRTC's options for `arch`, and the cache key of kernel `name` compiled with them.
// PTX for the virtual architecture skips ptxas; CUBIN needs the real one.
std::vector<std::string> compile_options(const std::string& name, const std::string& arch,
                                         bool cubin) {
  if (!valid_arch(arch))
    fail(
        "CUDA: kernel %s: '%s' is not a GPU architecture (expected sm_ and a compute "
        "capability, e.g. sm_90)",
        name, arch);
  std::vector<std::string> options = {"--gpu-architecture=" +
                                      (cubin ? arch : "compute_" + arch.substr(3))};
  for (std::string& o : include_options()) options.push_back(std::move(o));
  return options;
}
std::string cache_key(const Nvrtc& api, const std::vector<std::string>& options, bool cubin,
                      const NamedSource& k) {
  return absl::StrCat("tinycore nvrtc v1|NVRTC ", api.version, "|", cubin ? "cubin" : "ptx", "|",
                      absl::StrJoin(options, " "), "|", k.name, "\n", k.source);
}

// The kernels as one program: their #include lines first, once each, then each kernel in a
// namespace of its own with C++ names, so equal kernel and helper names do not clash.
std::string one_program(const std::vector<const NamedSource*>& kernels) {
  std::string includes, body;
  absl::flat_hash_set<absl::string_view> seen;
  for (size_t i = 0; i < kernels.size(); i++) {
    absl::StrAppend(&body, "namespace k", i, " {\n");
    for (absl::string_view line : absl::StrSplit(kernels[i]->source, '\n')) {
      if (absl::StartsWith(line, "#include")) {
        if (seen.insert(line).second) absl::StrAppend(&includes, line, "\n");
        continue;
      }
      absl::StrAppend(&body, absl::StripPrefix(line, "extern \"C\" "), "\n");
    }
    absl::StrAppend(&body, "}  // namespace k", i, "\n");
  }
  return includes + body;
}

}  // namespace

std::string nvrtc_compile(const std::string& name, const std::string& source,
                          const std::string& arch, bool cubin) {
  const Nvrtc& api = nvrtc();
  std::vector<std::string> options = compile_options(name, arch, cubin);
  return cached_compile("nvrtc", cache_key(api, options, cubin, {name, source}),
                        [&] { return compile_now(api, name, source, options, cubin); });
}

void nvrtc_check(const std::vector<NamedSource>& kernels, const std::string& arch) {
  const Nvrtc& api = nvrtc();
  std::vector<std::string> options = compile_options("check", arch, /*cubin=*/false);
  std::vector<const NamedSource*> unchecked;
  std::vector<std::string> keys;
  for (const NamedSource& k : kernels) {
    std::string key = cache_key(api, options, false, k);
    if (!cache_lookup("nvrtc-check", key)) unchecked.push_back(&k), keys.push_back(std::move(key));
  }
  if (unchecked.empty()) return;
  try {
    compile_now(api, "check", one_program(unchecked), options, /*cubin=*/false);
  } catch (const Error&) {  // which kernel: each alone, the first to fail says so
    for (const NamedSource* k : unchecked) compile_now(api, k->name, k->source, options, false);
    throw;
  }
  for (const std::string& key : keys) cache_store("nvrtc-check", key, "compiles");
}

}  // namespace tc::runtime
