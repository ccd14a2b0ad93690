#pragma once
// A test fixture whose disk cache (TC_CACHE_DIR) is a fresh folder, removed afterwards; the
// caller's TC_CACHE_DIR is restored.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tc {

class TempCacheDir : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* d = std::getenv("TC_CACHE_DIR")) saved_ = d;
    dir_ = std::filesystem::temp_directory_path() /
           ("tinycore-cache-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    setenv("TC_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (saved_)
      setenv("TC_CACHE_DIR", saved_->c_str(), 1);
    else
      unsetenv("TC_CACHE_DIR");
    std::filesystem::remove_all(dir_);
  }
  // The files of one kind (cpu, beam): its packs (runtime::cache_entries lists the entries in
  // them), or BEAM's searches, a file each; in no particular order.
  std::vector<std::filesystem::path> cache_files(const std::string& kind) {
    std::vector<std::filesystem::path> out;
    if (std::filesystem::exists(dir_ / kind))
      for (const auto& e : std::filesystem::directory_iterator(dir_ / kind)) out.push_back(e);
    return out;
  }
  std::filesystem::path dir_;
  std::optional<std::string> saved_;
};

}  // namespace tc
