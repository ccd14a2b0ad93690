// bench's own processes: this program run again in a child (a cold cache, another device), and
// the scratch folders those runs use.
#pragma once

#include <string>
#include <vector>

namespace bench {

// A fresh folder under the system's temporary one, removed with everything in it at the end of
// its scope (also when a suite throws).
struct TempFolder {
  std::string path;
  explicit TempFolder(const std::string& name);
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
};

// A folder for files a suite makes once and keeps (models): $`env` when set, else `name` in the
// user's cache ($XDG_CACHE_HOME, else ~/.cache), else in /tmp. Not created here.
std::string cache_folder(const std::string& name, const char* env);

// Runs this program again with `args` (argv[0] first) and this process's environment with `env`
// ("NAME=value") set, and waits for it: true when it exits with 0.
bool run_again(const std::vector<std::string>& args, const std::vector<std::string>& env);

}  // namespace bench
