// The CPU device: LLVM IR compiled in-process by LLVM's ORC JIT for the host CPU's features,
// optimized with LLVM's O3 pipeline, and cached by source.
#pragma once

#include <memory>

#include "tinycore/runtime/device.h"

namespace tc::runtime {

std::unique_ptr<Device> make_cpu_device();

}  // namespace tc::runtime
