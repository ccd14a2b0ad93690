// A stable, diff-friendly text form of a UOp graph: one node per line, numbered in topological
// order, sources by number. Golden tests compare rewrites through it.
//
//   0 CONST index 4
//   1 RANGE index (0) 0
#pragma once

#include <string>

#include "tinycore/uop/uop.h"

namespace tc {

std::string print_graph(const UOpRef& root);
std::string print_arg(const Arg& arg);

}  // namespace tc
