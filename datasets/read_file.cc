#include "datasets/read_file.h"

#include <zlib.h>

#include <filesystem>

#include "tinycore/error.h"

namespace tc::datasets {

std::vector<uint8_t> read_file(const std::string& path, std::string_view who) {
  std::error_code ec;
  // zlib would open a directory and fail later with a puzzling read error
  if (!std::filesystem::is_regular_file(path, ec)) fail("%s: cannot open %s", who, path);
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

}  // namespace tc::datasets
