// Renders a linearized kernel as LLVM IR text. Loops use stack slots that LLVM's mem2reg turns
// into SSA; float adds/muls may reassociate so reductions vectorize.
#pragma once

#include <string>
#include <vector>

#include "tinycore/uop/uop.h"

namespace tc::renderer {

// Defines `void name(void** bufs)`; bufs[i] is the buffer of DEFINE_GLOBAL i.
std::string render_llvm(const std::string& name, const std::vector<UOpRef>& program);

}  // namespace tc::renderer
