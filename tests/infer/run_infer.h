// Runs the infer binary (next to the test programs' folder) and collects what it printed.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace infertest {

struct Ran {
  int rc = -1;
  std::string out;  // stdout and stderr
};

// infer with `args`, each single-quoted; `input_file`, when given, is its standard input.
inline Ran infer(const std::vector<std::string>& args, const std::string& input_file = "") {
  std::string cmd =
      (std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "infer")
          .string();
  for (const std::string& a : args) cmd += " '" + a + "'";
  if (!input_file.empty()) cmd += " < '" + input_file + "'";
  Ran r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace infertest
