// The C dialects the C-style renderer writes (CUDA C, OpenCL C, HIP): a table each of what
// differs between them, as tinygrad's cstyle.py keeps its languages. The renderer reads nothing
// else about a language.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "tinycore/dtype.h"
#include "tinycore/runtime/device.h"

namespace tc::renderer {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// How a language holds float16 values.
enum class HalfSupport {
  Intrinsics,  // cuda_fp16.h's `half`, converted by its intrinsics (CUDA)
  Native,      // a C type that C casts convert, rounding once (HIP's _Float16)
  Storage,     // buffers only (OpenCL without cl_khr_fp16): values are floats rounded to half
               // precision, moved by vload_half/vstore_half
};

// What differs between the C dialects; the renderer reads nothing else about a language.
struct Dialect {
  std::string kernel_prefix;  // before the kernel's `void`
  bool launch_bounds;         // `__launch_bounds__(threads)` after the kernel's `void`
  std::string buffer_prefix;  // before a buffer argument's element type
  std::string restrict_;      // after a buffer argument's `*`
  std::string helper_prefix;  // before a helper function's return type
  std::array<std::string, 3> group_id, local_id;  // a thread's work-group and its place in it
  std::string shared_prefix;                      // before a work-group's shared array
  std::string barrier;                            // waits for the work-group's shared writes
  std::array<int64_t, 3> max_groups;              // work-groups a launch may have, per dimension
  // type names by Scalar: void, bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
  // float16 (in memory), bfloat16 (its bits), float32, float64; index takes int32's or int64's
  std::array<std::string, 14> types;
  std::string int64_suffix, uint64_suffix;  // of 64-bit integer literals
  bool overloaded_math;                     // sqrt(float) is float (else sqrtf)
  HalfSupport half;
  std::string half_include;  // what declares the float16 type, when it is used
  bool fp64_pragma;          // double needs `#pragma OPENCL EXTENSION cl_khr_fp64`
  bool convert_sat;          // convert_<type>_sat(x): float -> int rounding to 0, saturating
  std::string (*bitcast)(const std::string& type, const std::string& x);
};

// The dialect of a GPU language; throws tc::Error for LLVM.
const Dialect& dialect(runtime::Language language);

}  // namespace tc::renderer
