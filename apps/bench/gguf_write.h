// A GGUF writer (version 3, little-endian, alignment 32), for the files the llm suite makes: the
// header, metadata and tensor infos are written at once, then each tensor's bytes in the order
// they were declared, as llama.cpp's gguf-py writes them. The reader is frontends/llm/gguf.h.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "frontends/llm/gguf.h"

namespace bench {

struct GgufTensor {
  std::string name;
  std::vector<int64_t> dims;  // GGUF order: dims[0] varies fastest
  uint32_t type = tc::gguf::F32;
  int64_t bytes() const;  // as stored, from the type's blocks
};

class GgufWriter {
 public:
  // Creates `path` and writes everything but the tensors' data; throws tc::Error naming the file.
  GgufWriter(const std::string& path, const tc::gguf::Metadata& metadata,
             std::vector<GgufTensor> tensors);
  // The next tensor's data: exactly its bytes(), in the order the tensors were given.
  void write(const std::vector<uint8_t>& data);
  // Checks that every tensor was written and flushes the file.
  void close();

 private:
  void put(const void* p, size_t n);
  void pad();
  std::string path_;
  std::ofstream out_;
  std::vector<GgufTensor> tensors_;
  size_t next_ = 0;
  uint64_t written_ = 0;
};

}  // namespace bench
