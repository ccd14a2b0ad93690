// Buffers and their devices: the BUFFER nodes a schedule creates, the buffer behind a realized
// view, and the device a value reads from.
#pragma once

#include <optional>
#include <string>

#include "tinycore/uop/uop.h"

namespace tc::schedule {

// A fresh BUFFER node with its (unallocated) memory on `device`.
UOpRef new_buffer(const std::string& device, DType dtype, int64_t size);

// The device of the first buffer `value` reads, or of the first COPY (whose arg names its
// device), sources in order; nullopt when it reads neither (a constant).
std::optional<std::string> device_read(const UOpRef& value);
// The device `value` computes on: device_read's, else the default device.
std::string device_of(const UOpRef& value);

// True when `u` is a BUFFER, or a RESHAPE of one, whose elements are laid out row-major.
bool is_contiguous_buffer(const UOpRef& u);

// The BUFFER behind a view of one (a realized tensor's, perhaps permuted).
const UOpRef& base_buffer(const UOpRef& view);

}  // namespace tc::schedule
