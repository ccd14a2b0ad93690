#include "datasets/read_file.h"

#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "tinycore/error.h"
#include "tinycore/runtime/disk_cache.h"

namespace tc::datasets {
namespace {

namespace fs = std::filesystem;

// gzip files this large are kept decompressed in the disk cache: inflating Fashion-MNIST's 26 MB
// of training images takes a quarter of a second, every start, where reading them back from the
// cache takes a few milliseconds (torchvision keeps its "processed" copy for the same reason).
constexpr uintmax_t kCachedGzipBytes = 1 << 20;

bool is_gzip(const std::string& path) {
  unsigned char magic[2] = {0, 0};
  std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(magic), 2);
  return magic[0] == 0x1f && magic[1] == 0x8b;
}

std::vector<uint8_t> inflate_file(const std::string& path, std::string_view who) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) fail("%s: cannot open %s", who, path);
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  for (;;) {
    int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int err = 0;
      std::string msg = gzerror(f, &err);
      gzclose(f);
      fail("%s: %s is damaged: %s", who, path, msg);
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  gzclose(f);
  return out;
}

// The disk cache's key for `path`'s inflated bytes, as long as its path, size and modification
// time stay; empty for a file not worth caching (plain, or small) or one that cannot be stat'ed.
std::string inflated_key(const std::string& path) {
  std::error_code size_ec, time_ec, path_ec;
  uintmax_t size = fs::file_size(path, size_ec);
  if (size_ec || size < kCachedGzipBytes || !is_gzip(path)) return "";
  auto mtime = fs::last_write_time(path, time_ec).time_since_epoch();
  std::string absolute = fs::absolute(path, path_ec).string();
  if (time_ec || path_ec) return "";
  return absl::StrCat("gunzip v1|", absolute, "|", size, "|",
                      std::chrono::duration_cast<std::chrono::nanoseconds>(mtime).count());
}

}  // namespace

std::vector<uint8_t> read_file(const std::string& path, std::string_view who) {
  std::error_code ec;
  // zlib would open a directory and fail later with a puzzling read error
  if (!fs::is_regular_file(path, ec)) fail("%s: cannot open %s", who, path);
  std::string key = inflated_key(path);
  if (!key.empty())
    if (std::optional<std::string> hit = runtime::cache_lookup("data", key))
      return std::vector<uint8_t>(hit->begin(), hit->end());
  std::vector<uint8_t> bytes = inflate_file(path, who);
  if (!key.empty()) runtime::cache_store("data", key, std::string(bytes.begin(), bytes.end()));
  return bytes;
}

}  // namespace tc::datasets
