#include "tinycore/runtime/hip_device.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "tinycore/runtime/dynamic_library.h"

namespace tc::runtime {
namespace {

// hipGetDeviceCount's result codes that mean "no GPU here" rather than a broken install.
constexpr int kHipSuccess = 0, kHipErrorNoDevice = 100;

std::string probe() {
  // without AMD's kernel driver there is no GPU to find: skip loading ROCm (and its LLVM)
  if (access("/dev/kfd", F_OK) != 0)
    return "no AMD GPU (no /dev/kfd: the amdgpu driver is not loaded)";
  static const DynamicLibrary lib({"libamdhip64.so.5", "libamdhip64.so"});
  if (!lib.loaded()) return "ROCm's HIP runtime is not installed: " + lib.error();
  auto* count_fn = reinterpret_cast<int (*)(int*)>(lib.find("hipGetDeviceCount"));
  if (!count_fn) return lib.path() + " has no hipGetDeviceCount";
  int count = 0;
  int r = count_fn(&count);
  if (r == kHipErrorNoDevice || (r == kHipSuccess && count == 0)) return "no AMD GPU";
  if (r != kHipSuccess) return absl::StrCat("hipGetDeviceCount failed (HIP error ", r, ")");
  return absl::StrCat(count, " AMD GPU(s) found, but tinycore launches HIP kernels only as a ",
                      "compile check so far (CHECK_RENDER=hip)");
}

}  // namespace

std::string hip_unavailable_reason() {
  static const std::string why = probe();
  return why;
}

std::unique_ptr<Device> make_hip_device() {
  hip_unavailable_reason();
  return nullptr;
}

}  // namespace tc::runtime
