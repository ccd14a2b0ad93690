// Renders a linearized kernel as LLVM IR text. Loops use stack slots that LLVM's mem2reg turns
// into SSA; values that differ per SIMD lane (a LANE in their sources) are LLVM vectors;
// float adds/muls may reassociate and contract into FMA so reductions vectorize.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinycore/uop/uop.h"

namespace tc::renderer {

// Defines `void name(void** bufs, i64 core, i64 ncores)`; bufs[i] is the buffer of
// DEFINE_GLOBAL i. The RANGE numbered `parallel_range` (an output loop; -1 for none) runs only
// the share of `core` out of `ncores`, as does the loop after it that finishes it (numbered
// kRestLoop more: codegen/narrow.h). `byte_dot`: the CPU has vpdpbusd (runtime::Device).
inline constexpr int64_t kRestLoop = int64_t{1} << 41;
std::string render_llvm(const std::string& name, const std::vector<UOpRef>& program,
                        int64_t parallel_range, bool byte_dot = false);

}  // namespace tc::renderer
