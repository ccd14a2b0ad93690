#include "tinycore/runtime/nvrtc.h"

#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "absl/strings/str_join.h"
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

std::string nvrtc_compile(const std::string& name, const std::string& source,
                          const std::string& arch, bool cubin) {
  const Nvrtc& api = nvrtc();
  if (!valid_arch(arch))
    fail(
        "CUDA: kernel %s: '%s' is not a GPU architecture (expected sm_ and a compute "
        "capability, e.g. sm_90)",
        name, arch);
  // PTX for the virtual architecture skips ptxas; CUBIN needs the real one.
  std::vector<std::string> options = {"--gpu-architecture=" +
                                      (cubin ? arch : "compute_" + arch.substr(3))};
  for (std::string& o : include_options()) options.push_back(std::move(o));
  std::string key =
      absl::StrCat("tinycore nvrtc v1|NVRTC ", api.version, "|", cubin ? "cubin" : "ptx", "|",
                   absl::StrJoin(options, " "), "|", name, "\n", source);
  return cached_compile("nvrtc", key,
                        [&] { return compile_now(api, name, source, options, cubin); });
}

}  // namespace tc::runtime
