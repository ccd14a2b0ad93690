// The HIP device (AMD GPUs through ROCm). ROCm's runtime, libamdhip64, is loaded at run time
// (dlopen) like CUDA's driver, so binaries run anywhere; where it or an AMD GPU is missing the
// device is simply not available, with the reason. HIP kernels are rendered and compiled
// (hiprtc, see hiprtc.h) on any machine; launching them on an AMD GPU is not built yet, so a
// machine with one also reports the device unavailable, saying so.
#pragma once

#include <memory>
#include <string>

#include "tinycore/runtime/device.h"

namespace tc::runtime {

// nullptr, with hip_unavailable_reason() saying why.
std::unique_ptr<Device> make_hip_device();
std::string hip_unavailable_reason();

}  // namespace tc::runtime
