#include "nn/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tinycore/error.h"

namespace tc::nn {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open '%s': %s", path, std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("'%s' is not a regular file", path);
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      fail("cannot map '%s': %s", path, std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping stays valid
}

void MappedFile::release(const uint8_t* bytes, size_t n) const {
  if (bytes < data_ || n > size_ || bytes - data_ > static_cast<ptrdiff_t>(size_ - n))
    fail("'%s': bytes to release lie outside its mapping", path_);
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE)),
                  lo = (reinterpret_cast<uintptr_t>(bytes) + page - 1) / page * page,
                  hi = (reinterpret_cast<uintptr_t>(bytes) + n) / page * page;
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace tc::nn
