#include "tinycore/runtime/hiprtc.h"

#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tinycore/error.h"
#include "tinycore/runtime/disk_cache.h"
#include "tinycore/runtime/dynamic_library.h"

namespace tc::runtime {
namespace {

// hiprtc's C API, as hiprtc.h declares it (its header needs ROCm's platform macros; these five
// calls are all tinycore uses). Results are an enum where 0 is success.
using Program = void*;
struct Hiprtc {
  int (*create)(Program*, const char*, const char*, int, const char**, const char**);
  int (*compile)(Program, int, const char**);
  int (*log_size)(Program, size_t*);
  int (*log)(Program, char*);
  int (*code_size)(Program, size_t*);
  int (*code)(Program, char*);
  int (*destroy)(Program*);
  const char* (*error_string)(int);
};

constexpr const char* kPocl = "libpocl.so.2";

const DynamicLibrary& library() {
  static const DynamicLibrary lib({"libamdhip64.so.5", "libamdhip64.so"});
  return lib;
}

const Hiprtc& api() {
  static const Hiprtc h = [] {
    const DynamicLibrary& lib = library();
    Hiprtc a{};
    a.create = lib.get<decltype(a.create)>("hiprtcCreateProgram");
    a.compile = lib.get<decltype(a.compile)>("hiprtcCompileProgram");
    a.log_size = lib.get<decltype(a.log_size)>("hiprtcGetProgramLogSize");
    a.log = lib.get<decltype(a.log)>("hiprtcGetProgramLog");
    a.code_size = lib.get<decltype(a.code_size)>("hiprtcGetCodeSize");
    a.code = lib.get<decltype(a.code)>("hiprtcGetCode");
    a.destroy = lib.get<decltype(a.destroy)>("hiprtcDestroyProgram");
    a.error_string = lib.get<decltype(a.error_string)>("hiprtcGetErrorString");
    return a;
  }();
  return h;
}

std::string compile(const std::string& name, const std::string& source, const std::string& arch) {
  const Hiprtc& h = api();
  Program prog = nullptr;
  std::string file = name + ".hip";
  if (int r = h.create(&prog, source.c_str(), file.c_str(), 0, nullptr, nullptr))
    fail("HIP: hiprtcCreateProgram for kernel %s failed: %s", name, h.error_string(r));
  std::string option = "--offload-arch=" + arch;
  const char* options[] = {option.c_str()};
  int r = h.compile(prog, 1, options);
  std::string out;
  if (r != 0) {
    size_t n = 0;
    h.log_size(prog, &n);
    std::vector<char> log(n + 1, '\0');
    if (n) h.log(prog, log.data());
    h.destroy(&prog);
    fail("HIP: kernel %s failed to compile for %s: %s\n%s", name, arch, h.error_string(r),
         log.data());
  }
  size_t n = 0;
  h.code_size(prog, &n);
  out.resize(n);
  if (n) h.code(prog, out.data());
  h.destroy(&prog);
  return out;
}

}  // namespace

bool hiprtc_available(std::string* why) {
  const DynamicLibrary& lib = library();
  if (!lib.loaded() && why) *why = "ROCm's libamdhip64 is not installed (" + lib.error() + ")";
  return lib.loaded();
}

std::string hiprtc_compile(const std::string& name, const std::string& source,
                           const std::string& arch) {
  std::string why;
  if (!hiprtc_available(&why)) fail("HIP: cannot compile kernel %s: %s", name, why);
  // ROCm's compiler and PoCL each carry an LLVM 15 whose option registries collide: LLVM
  // aborts the process when both compile. Fail instead, saying how to avoid it.
  if (DynamicLibrary::is_loaded(kPocl))
    fail(
        "HIP: cannot compile kernel %s in a process that has loaded PoCL (the OpenCL device): "
        "both carry LLVM 15; check HIP in another process (DEVICE=CPU)",
        name);
  // hiprtc is not documented as thread-safe: one compile at a time
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::string key = absl::StrCat("tinycore hiprtc v1|", library().path(), "|", arch, "|\n", source);
  return cached_compile("hip", key, [&] { return compile(name, source, arch); });
}

}  // namespace tc::runtime
