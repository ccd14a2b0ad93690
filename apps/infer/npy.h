// NumPy's .npy files (format versions 1, 2 and 3): little-endian bool, int8..int64, uint8..uint64,
// float16, float32 and float64 arrays in C order. Anything else (Fortran order, big-endian data,
// structured or object dtypes, a truncated file) is a tc::Error saying what is wrong.
#pragma once

#include <string>
#include <string_view>

#include "apps/infer/host_array.h"

namespace tc::infer {

// The array in a .npy file's bytes; errors say what is wrong (the caller names the file).
HostArray parse_npy(std::string_view bytes);
// The array in the file at `path`; errors name the path.
HostArray read_npy(const std::string& path);

// The .npy bytes of `a` (version 1, or 2 for a header over 64 KiB); its dtype must have a NumPy
// equivalent (not bfloat16).
std::string npy_bytes(const HostArray& a);
void write_npy(const std::string& path, const HostArray& a);

}  // namespace tc::infer
