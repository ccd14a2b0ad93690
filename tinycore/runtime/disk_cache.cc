#include "tinycore/runtime/disk_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "tinycore/helpers.h"

namespace tc::runtime {

std::string cache_dir() {
  if (const char* d = std::getenv("TC_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/tinycore";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/tinycore";
  return "/tmp/tinycore-cache";
}

namespace {
constexpr uint64_t kFnvOffset = 1469598103934665603ull, kFnvPrime = 1099511628211ull;
}  // namespace

uint64_t stable_hash(std::string_view s) {
  uint64_t h = kFnvOffset;
  for (unsigned char c : s) h = (h ^ c) * kFnvPrime;
  return h;
}

std::string cache_path(std::string_view kind, std::string_view key, std::string_view suffix) {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(stable_hash(key)));
  return cache_dir() + "/" + std::string(kind) + "/" + name + std::string(suffix);
}

std::optional<std::string> read_cache_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);  // one read of the whole file
  if (!in) return std::nullopt;
  std::streamoff size = in.tellg();
  if (size < 0) return std::nullopt;
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) return std::nullopt;
  return bytes;
}

void write_cache_file(const std::string& path, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  // unique per writer: other processes, and other threads of this one building the same kernel
  static std::atomic<uint64_t> writes{0};
  std::string tmp = absl::StrCat(path, ".tmp", getpid(), ".", writes++);
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

namespace {
// An entry is key, NUL, the output's checksum (16 hex digits), the output. The checksum is
// FNV-1a over 8-byte words (then the tail's bytes): each step is a bijection of the running
// hash, so a change to any one word always changes it, and it is 8 times faster than the
// byte-wise hash on entries of tens of megabytes (a data set's bytes).
std::string checksum(const std::string& output) {
  uint64_t h = kFnvOffset;
  size_t i = 0;
  for (; i + 8 <= output.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, output.data() + i, 8);
    h = (h ^ word) * kFnvPrime;
  }
  for (; i < output.size(); i++) h = (h ^ static_cast<unsigned char>(output[i])) * kFnvPrime;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}
std::optional<std::string> read_entry(const std::string& path, const std::string& key) {
  std::optional<std::string> entry = read_cache_file(path);
  size_t start = key.size() + 1 + 16;
  if (!entry || entry->size() <= start || entry->compare(0, key.size(), key) != 0 ||
      (*entry)[key.size()] != '\0')
    return std::nullopt;
  std::string output = entry->substr(start);
  if (entry->compare(key.size() + 1, 16, checksum(output)) != 0) return std::nullopt;
  return output;
}
}  // namespace

std::optional<std::string> cache_lookup(std::string_view kind, const std::string& key) {
  if (getenv_int("DISABLE_COMPILER_CACHE")) return std::nullopt;
  return read_entry(cache_path(kind, key, ".bin"), key);
}

void cache_store(std::string_view kind, const std::string& key, const std::string& output) {
  if (getenv_int("DISABLE_COMPILER_CACHE")) return;
  write_cache_file(cache_path(kind, key, ".bin"), key + '\0' + checksum(output) + output);
}

std::string cached_compile(std::string_view kind, const std::string& key,
                           const std::function<std::string()>& compile) {
  if (std::optional<std::string> output = cache_lookup(kind, key)) return *output;
  std::string output = compile();
  cache_store(kind, key, output);
  return output;
}

}  // namespace tc::runtime
