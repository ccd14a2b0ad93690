#include "tinycore/renderer/dialects.h"

#include "absl/strings/str_cat.h"
#include "tinycore/error.h"

namespace tc::renderer {
namespace {

std::string builtin_bit_cast(const std::string& type, const std::string& x) {
  return absl::StrCat("__builtin_bit_cast(", type, ", ", x, ")");
}
std::string opencl_as_type(const std::string& type, const std::string& x) {
  return absl::StrCat("as_", type, "(", x, ")");
}

const Dialect& cuda() {
  static const Dialect l{
      .kernel_prefix = "extern \"C\" __global__",
      .launch_bounds = true,
      .buffer_prefix = "",
      .restrict_ = "__restrict__",
      .helper_prefix = "__device__ inline",
      .group_id = {"blockIdx.x", "blockIdx.y", "blockIdx.z"},
      .local_id = {"threadIdx.x", "threadIdx.y", "threadIdx.z"},
      .shared_prefix = "__shared__",
      .barrier = "__syncthreads();",
      .max_groups = {kInt32Max, 65535, 65535},
      .types = {"void", "bool", "signed char", "short", "int", "long long", "unsigned char",
                "unsigned short", "unsigned int", "unsigned long long", "half", "unsigned short",
                "float", "double"},
      .int64_suffix = "LL",
      .uint64_suffix = "ULL",
      .overloaded_math = false,
      .half = HalfSupport::Intrinsics,
      .half_include = "#include <cuda_fp16.h>",
      .fp64_pragma = false,
      .convert_sat = false,
      .bitcast = builtin_bit_cast,
  };
  return l;
}

const Dialect& hip() {
  static const Dialect l = [] {
    Dialect h = cuda();
    h.types[static_cast<int>(Scalar::Float16)] = "_Float16";
    h.half = HalfSupport::Native;
    h.half_include = "";
    return h;
  }();
  return l;
}

const Dialect& opencl() {
  static const Dialect l{
      .kernel_prefix = "__kernel",
      .launch_bounds = false,
      .buffer_prefix = "__global ",
      .restrict_ = "restrict",
      .helper_prefix = "static inline",
      .group_id = {"get_group_id(0)", "get_group_id(1)", "get_group_id(2)"},
      .local_id = {"get_local_id(0)", "get_local_id(1)", "get_local_id(2)"},
      .shared_prefix = "__local",
      .barrier = "barrier(CLK_LOCAL_MEM_FENCE);",
      .max_groups = {kInt32Max, kInt32Max, kInt32Max},
      .types = {"void", "bool", "char", "short", "int", "long", "uchar", "ushort", "uint", "ulong",
                "half", "ushort", "float", "double"},
      .int64_suffix = "L",
      .uint64_suffix = "UL",
      .overloaded_math = true,
      .half = HalfSupport::Storage,
      .half_include = "",
      .fp64_pragma = true,
      .convert_sat = true,
      .bitcast = opencl_as_type,
  };
  return l;
}

}  // namespace

const Dialect& dialect(runtime::Language language) {
  switch (language) {
    case runtime::Language::kCuda:
      return cuda();
    case runtime::Language::kOpenCl:
      return opencl();
    case runtime::Language::kHip:
      return hip();
    default:
      fail("C-style renderer: %s is not a C dialect", runtime::language_name(language));
  }
}

}  // namespace tc::renderer
