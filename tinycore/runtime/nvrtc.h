// NVRTC, CUDA's run-time compiler: CUDA C to PTX or CUBIN for a GPU architecture. It needs no
// GPU and no driver, so kernels are checked to compile on any machine with the toolkit. The
// library is loaded at run time (dlopen), never linked.
#pragma once

#include <string>
#include <vector>

namespace tc::runtime {

// Whether libnvrtc can be loaded; when it cannot, `why` (if given) says why.
bool nvrtc_available(std::string* why = nullptr);

// NVRTC's version, "13.0"; throws tc::Error when NVRTC is not available.
std::string nvrtc_version();

// The architectures NVRTC can emit code for, as compute capabilities times ten (75, 80, 90...).
std::vector<int> nvrtc_supported_archs();

// Compiles the kernel `name` in CUDA C `source` for `arch` ("sm_90", "sm_90a") to CUBIN, or to
// PTX when `cubin` is false. The result is cached on disk (kind "nvrtc") by source, arch,
// options and NVRTC version. cuda_fp16.h and cuda_bf16.h are on the include path. Throws
// tc::Error "CUDA: kernel <name> failed to compile: <NVRTC's log>" when the source is invalid,
// and a tc::Error saying why when NVRTC is not available or `arch` is malformed.
std::string nvrtc_compile(const std::string& name, const std::string& source,
                          const std::string& arch, bool cubin);

// A kernel's name and source.
struct NamedSource {
  std::string name, source;
};

// Checks that each kernel compiles to PTX for `arch`, as one NVRTC program (NVRTC spends ~30 ms
// on any program and ~1 ms more a kernel): the test suites' CHECK_RENDER=cuda. Kernels that
// compiled before are remembered on disk (kind "nvrtc-check") and skipped. Throws nvrtc_compile's
// error for the first kernel that does not compile.
void nvrtc_check(const std::vector<NamedSource>& kernels, const std::string& arch);

}  // namespace tc::runtime
