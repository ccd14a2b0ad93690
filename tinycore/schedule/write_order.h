// The order of a schedule's in-place writes (assigns). A root that reads another target's old
// contents is computed before that target is written; a root that holds another target's new
// value (SGD's weight update holds the momentum's) is computed after it, reading its buffer. Both
// are then written in place, each into its own buffer, with no copy.
#pragma once

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "tinycore/uop/uop.h"

namespace tc::schedule {

struct WriteOrder {
  std::vector<size_t> in_place;  // roots written into their targets, in this order
  std::vector<size_t> copied;    // roots in a cycle: computed first, copied into their targets last
  absl::flat_hash_set<const UOp*> buffers;  // the targets' BUFFERs
};

// `targets` holds one contiguous buffer view per root, or null for none (then the root is in
// neither list).
WriteOrder write_order(const std::vector<UOpRef>& roots, const std::vector<UOpRef>& targets);

// True when every read of the buffer behind the contiguous view `target` in `value` is through
// `target` (or a reshape of the buffer to its shape) at the output's own position, only ALU ops and
// detaches between: a kernel may then write the buffer while it reads it.
bool reads_elementwise(const UOpRef& value, const UOpRef& target);

}  // namespace tc::schedule
