// A whole file mapped into memory, copy-on-write (RAII): readers take its bytes in place (a
// checkpoint's tensors adopt them: Buffer::adopt), and a write to them (an in-place update of an
// adopted weight) changes this process's copy of the page, never the file. An empty file maps to
// no bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tc::nn {

class MappedFile {
 public:
  // Throws tc::Error naming the path when it cannot be opened, is not a regular file or cannot
  // be mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Lets go of this process's pages that lie wholly within [bytes, bytes + n) (bytes read once
  // into memory of their own: a repacked weight), which a later read maps from the file again.
  // Bytes written in place there are lost: release only what nothing writes.
  void release(const uint8_t* bytes, size_t n) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tc::nn
