// DOT4 (uop/ops.h) as LLVM IR, for the LLVM renderer (llvmir.h).
#pragma once

#include <functional>
#include <set>
#include <string>

namespace tc::renderer {

// c + the products of a's bytes (unsigned) with b's (signed), four to each int32 lane, over
// `width` lanes (0: scalars): x86's vpdpbusd where `byte_dot` (AVX512-VNNI) and the vector is 4,
// 8 or 16 lanes; else the bytes widened, multiplied and summed in fours. `emit` adds one
// instruction and names its value; `declares` gathers the functions called.
std::string dot4_ir(int width, bool byte_dot, const std::string& a, const std::string& b,
                    const std::string& c,
                    const std::function<std::string(const std::string&)>& emit,
                    std::set<std::string>& declares);

}  // namespace tc::renderer
