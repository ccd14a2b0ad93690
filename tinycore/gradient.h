// Reverse-mode differentiation as a rewrite of the UOp graph, modelled on tinygrad's gradient.py:
// a table gives, for each op, the gradients of a node's sources from the gradient flowing into
// the node (all built from UOps, so they stay lazy and run through the ordinary scheduler), and
// compute_gradient walks the graph from the root in reverse topological order, summing the
// gradients that reach each node.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tinycore/uop/uop.h"

namespace tc {

// The gradient of every node on a path from a target to the root, keyed by node (the targets
// among them). A target that the root does not depend on (or only through a node without a
// gradient: comparisons, TRUNC, IDIV, MOD, bitwise ops, detach) has no entry. `root_grad` must
// have the root's shape and dtype. Throws tc::Error for an op on the path that has no rule.
using GradientMap = absl::flat_hash_map<const UOp*, UOpRef>;
GradientMap compute_gradient(const UOpRef& root, const UOpRef& root_grad,
                             const std::vector<UOpRef>& targets);

// The gradients of `ret`'s sources (one entry per source, nullptr where none flows) when `grad`
// flows into `ret`. Throws tc::Error when the op has no gradient rule.
std::vector<UOpRef> source_gradients(const UOpRef& ret, const UOpRef& grad);

// A node with `value`'s value whose gradient reaches `inputs` through `rule` (returning one
// gradient per input, nullptr for none) instead of through value's own graph, which should be
// detached from them: for ops whose derived gradient makes slow kernels (conv2d's input gradient
// is a transposed convolution, not the sum over overlapping windows autograd would give). Rules
// are registered once and live for the program (register them per kind of op, not per call).
using GradientRule = std::function<std::vector<UOpRef>(const UOpRef& ret, const UOpRef& grad)>;
int64_t register_gradient_rule(GradientRule rule);
// The rule registered under `key`, made by make() the first time: one per set of an op's
// arguments that its rule depends on (a conv's stride, a pool's window).
int64_t gradient_rule_for(const std::string& key, const std::function<GradientRule()>& make);
UOpRef with_gradient_rule(const UOpRef& value, const std::vector<UOpRef>& inputs, int64_t rule);

// The same value as `x`, but a wall for gradients: a DETACH node, which kernels read through.
UOpRef detach(const UOpRef& x);
bool is_detach(const UOp& u);

}  // namespace tc
