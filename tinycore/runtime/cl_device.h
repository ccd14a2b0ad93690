// The CL device: OpenCL 1.2 through the ICD loader (libOpenCL.so.1, opened at run time, so a
// machine without it simply has no CL device). Kernels are OpenCL C, built by the driver and
// cached as program binaries on disk and as built programs in memory. CL_DEVICE=<index> picks a
// device (numbered across platforms in the loader's order); else the first GPU, else the first
// device of any kind (PoCL's CPU device, which is not an accelerator, so the CPU stays the
// default there).
#pragma once

#include <memory>
#include <string>

#include "tinycore/runtime/device.h"

namespace tc::runtime {

// The CL device, or nullptr when no OpenCL library, platform or usable device is present.
std::unique_ptr<Device> make_cl_device();

// Whether the CL device may be a GPU, without loading OpenCL drivers when the answer for the
// installed drivers (the ICD loader's vendor files) is on disk: loading PoCL costs a program's
// start a tenth of a second, only to learn that its CPU device is not an accelerator.
bool cl_may_have_gpu();

// Why the last make_cl_device() returned nullptr ("" when it returned a device).
std::string cl_unavailable_reason();

}  // namespace tc::runtime
