// HIP's run-time compiler (hiprtc, inside ROCm's libamdhip64), loaded with dlopen: compiles a
// rendered HIP kernel to an AMD GPU code object without that GPU present, so HIP kernels are
// checked where no AMD GPU is (Debian's ROCm 5.2 compiles gfx90a; its device libraries lack
// gfx1100).
#pragma once

#include <string>

namespace tc::runtime {

// Whether hiprtc can be loaded; when not, *why says what is missing.
bool hiprtc_available(std::string* why = nullptr);

// The code object of kernel `name` in `source` for `arch`, from the disk cache when compiled
// before; throws tc::Error naming the kernel with hiprtc's log when it does not compile.
std::string hiprtc_compile(const std::string& name, const std::string& source,
                           const std::string& arch = "gfx90a");

}  // namespace tc::runtime
