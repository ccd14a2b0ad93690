// The UOp spec: what a valid node of each op looks like (its source count, argument kind, dtype
// against its sources', and for movement ops an argument that fits the source's shape), as
// tinygrad's spec.py. UOp::make checks every new node against it where it is on: by default in
// the debug and sanitizer builds, and in any build with SPEC=1 (SPEC=0 turns it off). A node
// that breaks it is a bug in tinycore: a failed internal check naming the rule and the node.
#pragma once

#include <string>
#include <vector>

#include "tinycore/uop/uop.h"

namespace tc {

// Whether UOp::make checks the spec (SPEC, else on where NDEBUG is not defined).
bool spec_enabled();

// The rule a node made of these parts breaks, or "" when it is valid.
std::string spec_violation(Ops op, DType dtype, const std::vector<UOpRef>& src, const Arg& arg);

}  // namespace tc
