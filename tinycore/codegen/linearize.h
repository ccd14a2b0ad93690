// Linearize: a lowered kernel graph becomes a flat program in execution order. RANGE opens a
// loop and END closes it; every node is placed in the outermost loop it depends on; a REDUCE
// becomes DEFINE_ACC (before its loops) and ASSIGN (the update inside them).
#pragma once

#include <vector>

#include "tinycore/uop/symbolic.h"
#include "tinycore/uop/uop.h"

namespace tc::codegen {

// Program nodes: DEFINE_GLOBAL, CONST, RANGE, END, INDEX, LOAD, STORE, DEFINE_ACC, ASSIGN, ALU.
// An ASSIGN used as a source after its loops means the accumulator's final value.
std::vector<UOpRef> linearize(const UOpRef& sink);

}  // namespace tc::codegen
