// A shared library opened at run time (dlopen), for vendor runtimes a binary must not link
// against: linking libcuda makes a program fail to start where no driver is installed, so the
// CUDA, OpenCL and HIP devices load their runtimes here and report "no device" when that fails.
#pragma once

#include <string>
#include <vector>

namespace tc::runtime {

class DynamicLibrary {
 public:
  // Opens the first of `names` (file names or paths) that loads; loaded() says whether one did,
  // and error() why none did.
  explicit DynamicLibrary(const std::vector<std::string>& names);
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  // Whether the library `name` is already loaded in this process (by anyone).
  static bool is_loaded(const char* name);
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }

  // The address of `symbol`, or nullptr when the library lacks it.
  void* find(const char* symbol) const;
  // The symbol as a function pointer of type F; throws tc::Error naming the library and the
  // symbol when it is missing (an older runtime than tinycore needs).
  template <typename F>
  F get(const char* symbol) const {
    return reinterpret_cast<F>(require(symbol));
  }

 private:
  void* require(const char* symbol) const;
  void* handle_ = nullptr;
  std::string path_, error_;
};

}  // namespace tc::runtime
