#include "tinycore/runtime/disk_cache.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

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

uint64_t prune_cache(uint64_t max_bytes) {
  namespace fs = std::filesystem;
  struct File {
    fs::path path;
    fs::file_time_type time;
    uint64_t bytes;
  };
  std::vector<File> files;
  uint64_t total = 0, removed = 0;
  const fs::file_time_type stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  std::error_code ec;
  for (fs::recursive_directory_iterator it(cache_dir(), ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code fe;  // a file another process removes meanwhile is skipped
    if (!it->is_regular_file(fe)) continue;
    File f{it->path(), it->last_write_time(fe), it->file_size(fe)};
    if (fe) continue;
    if (f.path.filename().string().find(".tmp") != std::string::npos && f.time < stale) {
      if (fs::remove(f.path, fe)) removed += f.bytes;
      continue;
    }
    total += f.bytes;
    files.push_back(std::move(f));
  }
  if (total <= max_bytes) return removed;
  std::sort(files.begin(), files.end(),
            [](const File& a, const File& b) { return a.time < b.time; });
  for (const File& f : files) {
    if (total <= max_bytes / 4 * 3) break;
    std::error_code fe;
    if (fs::remove(f.path, fe)) removed += f.bytes;
    total -= f.bytes;
  }
  return removed;
}

uint64_t cache_limit_bytes() {
  return static_cast<uint64_t>(std::max(0, getenv_int("TC_CACHE_MAX_MB", 2048))) << 20;
}

std::optional<std::string> cache_lookup(std::string_view kind, const std::string& key) {
  if (getenv_int("DISABLE_COMPILER_CACHE")) return std::nullopt;
  std::string path = cache_path(kind, key, ".bin");
  std::optional<std::string> output = read_entry(path, key);
  std::error_code ec;  // a hit is recently used: pruning keeps it longest
  if (output)
    std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), ec);
  return output;
}

void cache_store(std::string_view kind, const std::string& key, const std::string& output) {
  if (getenv_int("DISABLE_COMPILER_CACHE")) return;
  static std::once_flag pruned;
  std::call_once(pruned, [] {
    if (uint64_t limit = cache_limit_bytes()) prune_cache(limit);
  });
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
