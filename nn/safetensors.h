// The safetensors file format, as bytes: an 8-byte little-endian header length, a JSON header
// naming each tensor's dtype, shape and byte range, then the data. parse_header() validates a
// header completely before anything is read through it (lengths, JSON, dtypes, shapes that
// overflow, ranges out of bounds, overlapping or leaving holes), so a truncated, corrupt or
// hostile file gives an error naming what is wrong and is never read out of bounds.
// write_header() lays tensors out the way the reference implementation does (by alignment, then
// name; the header padded with spaces to 8 bytes), so files match it byte for byte.
// No tinycore types here: the parser is fuzzed on its own (tests/fuzz/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tc::safetensors {

struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TensorInfo {
  std::string name;
  std::string dtype;  // the format's name: F32, BF16, I64, BOOL ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte range within the data section
};

struct Header {
  std::vector<TensorInfo> tensors;  // in file order (by begin)
  std::map<std::string, std::string> metadata;
  uint64_t data_offset = 0;  // where the data section starts in the file
};

// Bytes per element of a format dtype name; throws FormatError for an unknown one.
size_t dtype_size(const std::string& dtype);

// Validates the first `size` bytes of a file (all of it: the data section is checked against its
// length) and returns its header.
Header parse_header(const uint8_t* file, size_t size);

// The bytes before the data section for these tensors (their begin/end are assigned here), and
// the data section's layout: tensors[i].begin/end.
std::string write_header(std::vector<TensorInfo>& tensors,
                         const std::map<std::string, std::string>& metadata);

}  // namespace tc::safetensors
