#include "apps/train/replace_file.h"

#include <filesystem>
#include <fstream>

#include "tinycore/error.h"

namespace tc::train {

void replace_file(const std::string& path, const std::function<void(const std::string&)>& write) {
  const std::string tmp = path + ".tmp";
  write(tmp);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail("train: cannot write %s: %s", path, ec.message());
}

void replace_file(const std::string& path, const std::string& text) {
  replace_file(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out.flush()) fail("train: cannot write %s", tmp);
  });
}

}  // namespace tc::train
