// GGUF, llama.cpp's model file (versions 2 and 3, little-endian): a header, typed metadata
// key/values, tensor infos (name, dims with ne[0] the fastest-varying first, ggml type, offset),
// padding to `general.alignment`, then the data section. parse() validates a file completely
// before anything is read through it (truncation, lengths and counts against the bytes left, value
// types, nesting, dims, block sizes, offsets, ranges, overlaps), so a corrupt or hostile file gives
// a FormatError naming what is wrong and is never read out of bounds nor allocates unboundedly.
// open() maps a file read-only and merges a split set (<prefix>-00001-of-0000N.gguf ...).
// No tinycore types here: the parser is fuzzed on its own (tests/fuzz/gguf_fuzz.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nn/mapped_file.h"

namespace tc::gguf {

struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The ggml tensor types this reads (ggml.h's numbers).
enum GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30,
};

struct TypeInfo {
  const char* name;     // ggml's name: "q4_0"
  int64_t block_elems;  // elements per block (1 for the float types)
  int64_t block_bytes;  // bytes per block
};
// Throws FormatError naming the type number when it is unknown or unsupported.
const TypeInfo& type_info(uint32_t type);

// Metadata value types (the format's numbers).
enum ValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};
const char* value_type_name(uint32_t type);  // "uint8" ... ("unknown" past the list)

// One metadata value; which fields hold it depends on `type`.
struct Value {
  uint32_t type = UINT8;
  uint64_t u = 0;            // unsigned integers
  int64_t i = 0;             // signed integers, and bool (0 or 1)
  double f = 0;              // FLOAT32, FLOAT64
  std::string s;             // STRING
  uint32_t elem_type = 0;    // ARRAY: its elements' type
  std::vector<Value> items;  // ARRAY: its elements
};

// Metadata with typed accessors; each throws FormatError naming the key when it is missing or of
// another type (an integer out of int64's range, a float asked as an integer...). The *_or forms
// give `fallback` when the key is missing (and still throw on a wrong type).
class Metadata {
 public:
  std::map<std::string, Value> values;

  bool has(const std::string& key) const { return values.count(key) != 0; }
  const Value& get(const std::string& key) const;
  std::string get_string(const std::string& key) const;
  int64_t get_int(const std::string& key) const;   // any integer type
  double get_float(const std::string& key) const;  // a float or an integer
  bool get_bool(const std::string& key) const;
  std::vector<std::string> get_strings(const std::string& key) const;
  std::vector<int64_t> get_ints(const std::string& key) const;
  std::vector<double> get_floats(const std::string& key) const;
  std::string get_string_or(const std::string& key, const std::string& fallback) const;
  int64_t get_int_or(const std::string& key, int64_t fallback) const;
  double get_float_or(const std::string& key, double fallback) const;
  bool get_bool_or(const std::string& key, bool fallback) const;
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // GGUF order: dims[0] (ne[0]) varies fastest
  uint32_t type = F32;        // a GgmlType
  uint64_t offset = 0;        // absolute, in its file
  uint64_t bytes = 0;
  int file = 0;  // which file of a split set holds it
  int64_t numel() const;
};

struct File {
  uint32_t version = 3;
  uint64_t alignment = 32;
  uint64_t data_offset = 0;  // where the data section starts
  Metadata metadata;
  std::vector<TensorInfo> tensors;  // in file order
};

// Validates all `size` bytes of a GGUF file and returns what it holds.
File parse(const uint8_t* data, size_t size);

// A model's GGUF file, or all files of its split set, mapped and parsed.
struct Model {
  std::vector<std::shared_ptr<nn::MappedFile>> files;  // by split number; tensors share them
  Metadata metadata;                                   // the first file's
  std::vector<TensorInfo> tensors;                     // every file's, in order

  const TensorInfo* find(const std::string& name) const;    // null when there is none
  const TensorInfo& tensor(const std::string& name) const;  // throws naming it
  // The tensor's bytes inside its file's mapping (t.bytes of them; no copy).
  const uint8_t* data(const TensorInfo& t) const;
};

// Maps and parses `path`; when it is the first of a split set (split.count > 1, split.no 0,
// named <prefix>-00001-of-0000N.gguf) the other files are opened and their tensors merged.
Model open(const std::string& path);

}  // namespace tc::gguf
