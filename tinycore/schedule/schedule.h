// Scheduling: split a tensor graph into kernels. Elementwise ops fuse into each other and into
// the reduce that consumes them; a kernel boundary exists only at realized buffers, explicit
// contiguous(), and a reduce whose result would be recomputed (expanded, or inside another
// reduce).
#pragma once

#include <memory>
#include <vector>

#include "tinycore/schedule/buffers.h"
#include "tinycore/uop/uop.h"

namespace tc::schedule {

// One kernel to run. `ast` is SINK(STORE(DEFINE_GLOBAL 0, value)) whose leaves are
// DEFINE_GLOBAL {i, size}; bufs[i] is the BUFFER node bound to DEFINE_GLOBAL i (0 = output).
struct ScheduleItem {
  UOpRef ast;
  std::vector<UOpRef> bufs;
};

// Kernels (in order) that compute `roots`; afterwards each root's `realized` view is valid.
// Buffers are created, not allocated: running the items allocates them.
// `targets` (empty, or one per root, null for none) are contiguous buffer views of a root's shape
// and dtype that the root's value is written into instead of a new buffer (in-place assign). A
// root that reads its own target other than elementwise is computed first, then copied; roots are
// written in write_order's order. Roots with a target are not marked `realized`: the target's
// memory changes with later assigns.
// `marked`, when given, gets every node marked `realized` (whose `realized` holds a buffer).
std::vector<ScheduleItem> create_schedule(const std::vector<UOpRef>& roots,
                                          const std::vector<UOpRef>& targets = {},
                                          std::vector<UOpRef>* marked = nullptr);

}  // namespace tc::schedule
