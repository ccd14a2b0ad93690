// The symbolic simplifier: constant folding, algebraic identities and div/mod folding with
// interval bounds (vmin/vmax), as one rule table. It gives index arithmetic a normal form.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tinycore/uop/pattern_matcher.h"

namespace tc {

const PatternMatcher& symbolic();

// graph_rewrite(u, symbolic()).
UOpRef simplify(const UOpRef& u);

// `sum` - `term` in normal form when `term` is one of the sum's terms with coefficient 1, else
// nullptr. The renderer uses it to see that an index is `base + lane` (a contiguous access).
// With `coefficient`, a term of any positive coefficient a: sum - a·term, a written there.
UOpRef subtract_term(const UOpRef& sum, const UOpRef& term, int64_t* coefficient = nullptr);

// An index as `base + offsets[lane]`: the terms that use `lane` use nothing else, so each lane's
// offset is a number. nullopt when a lane's offset is not one, or when by those terms' bounds the
// offsets may lie more than `max_span` apart.
struct LaneOffsets {
  UOpRef base;
  std::vector<int64_t> offsets;  // one per lane
};
std::optional<LaneOffsets> lane_offsets(const UOpRef& idx, const UOpRef& lane, int width,
                                        int64_t max_span = INT64_MAX);

// The value of `f` at each lane 0 .. width-1, when it depends on nothing else; else nullopt.
std::optional<std::vector<int64_t>> per_lane(const UOpRef& f, const UOpRef& lane, int width);

// Folds an ALU op over constant sources into a CONST; nullptr when it can't (division by 0 ...).
UOpRef fold_constants(Ops op, DType dtype, const std::vector<UOpRef>& src);

}  // namespace tc
