#include "tinycore/runtime/dynamic_library.h"

#include <dlfcn.h>

#include "absl/strings/str_join.h"
#include "tinycore/error.h"

namespace tc::runtime {

DynamicLibrary::DynamicLibrary(const std::vector<std::string>& names) {
  std::vector<std::string> errors;
  for (const std::string& name : names) {
    handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) {
      path_ = name;
      return;
    }
    const char* e = dlerror();
    errors.push_back(e ? e : name + ": cannot be loaded");
  }
  error_ = absl::StrJoin(errors, "; ");
}

DynamicLibrary::~DynamicLibrary() {
  // Vendor runtimes keep threads and handlers that may outlive a dlclose: keep them loaded.
}

bool DynamicLibrary::is_loaded(const char* name) {
  void* h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != nullptr;
}

void* DynamicLibrary::find(const char* symbol) const {
  return handle_ ? dlsym(handle_, symbol) : nullptr;
}

void* DynamicLibrary::require(const char* symbol) const {
  if (!handle_) fail("%s is not loaded (%s)", symbol, error_);
  void* p = dlsym(handle_, symbol);
  if (!p) fail("%s has no symbol %s (an older version than tinycore needs)", path_, symbol);
  return p;
}

}  // namespace tc::runtime
