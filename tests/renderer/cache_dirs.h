// For test binaries that compile GPU kernels: compiled kernels are cached in a fresh
// TC_CACHE_DIR, and PoCL's in POCL_CACHE_DIR (else the home folder; read at the first OpenCL
// call), both removed afterwards. Register it once per binary:
//   const auto* const cache_dirs = ::testing::AddGlobalTestEnvironment(new tc::CacheDirs);
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace tc {

class CacheDirs : public ::testing::Environment {
 public:
  void SetUp() override {
    for (const char* var : {"TC_CACHE_DIR", "POCL_CACHE_DIR"}) {
      dirs_.push_back(std::filesystem::temp_directory_path() /
                      (std::string("tinycore-gpu-") + var + "-" + std::to_string(::getpid())));
      setenv(var, dirs_.back().c_str(), 1);
    }
  }
  void TearDown() override {
    for (const auto& d : dirs_) std::filesystem::remove_all(d);
  }

 private:
  std::vector<std::filesystem::path> dirs_;
};

}  // namespace tc
