// A host array as text, the way NumPy prints one: nested brackets, one row of the last axis a line;
// past 20 values only the first and last 3 of each axis, "..." between.
#pragma once

#include <string>

#include "apps/infer/host_array.h"

namespace tc::infer {

std::string array_text(const HostArray& a);

}  // namespace tc::infer
