// Layouts of the products' operands: which operand of a product its kernel reads from a contiguous
// copy in another layout. A code generation choice, so it is made here and not by the Tensor ops,
// which only say what a product computes (a broadcast multiply and a sum). The rules, with the
// measurements behind them, are the table in layout.cc.
#pragma once

#include <vector>

#include "tinycore/uop/pattern_matcher.h"

namespace tc::schedule {

// Rules on a REDUCE_AXIS: the same product with an operand read from its copy, or null. The
// scheduler applies them once to each reduce it computes, before splitting it (a rewritten product
// still matches its rule: not a table for graph_rewrite).
const PatternMatcher& choose_layouts();

// A contraction's two operands, each under its views and casts: REDUCE_AXIS(ADD) of MUL(a, b)
// (through a cast); none for other reduces.
std::vector<const UOp*> contraction_operands(const UOp& r);

}  // namespace tc::schedule
