#include "tinycore/runtime/disk_cache.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace tc::runtime {

std::string cache_dir() {
  if (const char* d = std::getenv("TC_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/tinycore";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/tinycore";
  return "/tmp/tinycore-cache";
}

uint64_t stable_hash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string cache_path(std::string_view kind, std::string_view key, std::string_view suffix) {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(stable_hash(key)));
  return cache_dir() + "/" + std::string(kind) + "/" + name + std::string(suffix);
}

std::optional<std::string> read_cache_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

void write_cache_file(const std::string& path, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  bool ok = false;
  if (std::ofstream out(tmp, std::ios::binary); out) {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ok = static_cast<bool>(out.flush());
  }
  if (ok)
    std::filesystem::rename(tmp, path, ec);
  else
    std::filesystem::remove(tmp, ec);
}

}  // namespace tc::runtime
